// RUN: tessel-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(tessel-sink-transposes))" | FileCheck %s

// A squeeze-and-excitation block in NCHW between two NHWC convolutions:
// the transpose sinks through the elementwise ops, the broadcast multiply
// (its small operand is transposed back instead) and the reduction, then
// cancels against the trailing inverse transpose. Only the reduced value,
// returned in NCHW, keeps a (small) transpose.
// CHECK-LABEL: func @se_block
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x4x8xf32>, %[[G:.*]]: tensor<1x8x1x1xf32>)
// CHECK: %[[SIG:.*]] = tosa.sigmoid %[[X]] : (tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
// CHECK: %[[SUM:.*]] = tosa.reduce_sum %[[SIG]] {axis = 1 : i32} : (tensor<1x4x4x8xf32>) -> tensor<1x1x4x8xf32>
// CHECK: %[[R:.*]] = tosa.transpose %[[SUM]] {perms = array<i32: 0, 3, 1, 2>}
// CHECK: %[[GT:.*]] = tosa.reshape %[[G]]
// CHECK: %[[M:.*]] = tosa.mul %[[SIG]], %[[GT]], %{{.*}} : (tensor<1x4x4x8xf32>, tensor<1x1x1x8xf32>, tensor<1xi8>) -> tensor<1x4x4x8xf32>
// CHECK-NOT: tosa.transpose
// CHECK: return %[[M]], %[[R]]
func.func @se_block(%x: tensor<1x4x4x8xf32>, %g: tensor<1x8x1x1xf32>) -> (tensor<1x4x4x8xf32>, tensor<1x8x1x4xf32>) {
  %shift = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %t = tosa.transpose %x {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x4x4x8xf32>) -> tensor<1x8x4x4xf32>
  %s = tosa.sigmoid %t : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %r = tosa.reduce_sum %s {axis = 2 : i32} : (tensor<1x8x4x4xf32>) -> tensor<1x8x1x4xf32>
  %m = tosa.mul %s, %g, %shift : (tensor<1x8x4x4xf32>, tensor<1x8x1x1xf32>, tensor<1xi8>) -> tensor<1x8x4x4xf32>
  %back = tosa.transpose %m {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x8x4x4xf32>) -> tensor<1x4x4x8xf32>
  return %back, %r : tensor<1x4x4x8xf32>, tensor<1x8x1x4xf32>
}

// -----

// Two full-size operands transposed differently: nothing moves.
// CHECK-LABEL: func @mixed_perms
// CHECK: tosa.transpose
// CHECK: tosa.transpose
// CHECK: tosa.add
func.func @mixed_perms(%a: tensor<2x3x4xf32>, %b: tensor<4x2x3xf32>) -> tensor<2x4x3xf32> {
  %ta = tosa.transpose %a {perms = array<i32: 0, 2, 1>} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
  %tb = tosa.transpose %b {perms = array<i32: 1, 0, 2>} : (tensor<4x2x3xf32>) -> tensor<2x4x3xf32>
  %s = tosa.add %ta, %tb : (tensor<2x4x3xf32>, tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
  return %s : tensor<2x4x3xf32>
}

// -----

// A transpose moving only unit dims is a reshape; one moving data is not.
// CHECK-LABEL: func @unit_dims
// CHECK: tosa.reshape %arg0
// CHECK: tosa.transpose %arg1
func.func @unit_dims(%a: tensor<1x1x1x8xf32>, %b: tensor<1x2x1x8xf32>) -> (tensor<1x8x1x1xf32>, tensor<1x8x2x1xf32>) {
  %ta = tosa.transpose %a {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x1x1x8xf32>) -> tensor<1x8x1x1xf32>
  %tb = tosa.transpose %b {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x2x1x8xf32>) -> tensor<1x8x2x1xf32>
  return %ta, %tb : tensor<1x8x1x1xf32>, tensor<1x8x2x1xf32>
}

// -----

// A QuantizeLinear/DequantizeLinear chain as tessel-lower-quant writes it
// (arith/math ops on tensors, a splat scale of the full shape) between two
// convolutions' layout transposes: the transpose sinks through every op,
// the splat is transposed instead, and the pair cancels.
// CHECK-LABEL: func @qdq_chain
// CHECK-NOT: tosa.transpose %arg0
// CHECK: arith.divf %arg0, %{{.*}} : tensor<1x4x4x8xf32>
// CHECK: math.roundeven %{{.*}} : tensor<1x4x4x8xf32>
// CHECK: arith.fptosi %{{.*}} : tensor<1x4x4x8xf32> to tensor<1x4x4x8xi32>
// CHECK: arith.sitofp %{{.*}} : tensor<1x4x4x8xi32> to tensor<1x4x4x8xf32>
// CHECK-NOT: tosa.transpose
// CHECK: return
func.func @qdq_chain(%x: tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32> {
  %t = tosa.transpose %x {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x4x4x8xf32>) -> tensor<1x8x4x4xf32>
  %s = arith.constant dense<0.5> : tensor<1x8x4x4xf32>
  %d = arith.divf %t, %s : tensor<1x8x4x4xf32>
  %r = math.roundeven %d : tensor<1x8x4x4xf32>
  %i = arith.fptosi %r : tensor<1x8x4x4xf32> to tensor<1x8x4x4xi32>
  %f = arith.sitofp %i : tensor<1x8x4x4xi32> to tensor<1x8x4x4xf32>
  %b = tosa.transpose %f {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x8x4x4xf32>) -> tensor<1x4x4x8xf32>
  return %b : tensor<1x4x4x8xf32>
}

// -----

// The same block over a batch known only at run time: the transposes move
// the batch like any size and still cancel.
// CHECK-LABEL: func @se_block_run_time_batch
// CHECK: %[[SIG:.*]] = tosa.sigmoid %arg0 : (tensor<?x4x4x8xf32>) -> tensor<?x4x4x8xf32>
// CHECK: %[[GT:.*]] = tosa.reshape %arg1
// CHECK-SAME: -> tensor<?x1x1x8xf32>
// CHECK: %[[M:.*]] = tosa.mul %[[SIG]], %[[GT]], %{{.*}} : (tensor<?x4x4x8xf32>, tensor<?x1x1x8xf32>, tensor<1xi8>) -> tensor<?x4x4x8xf32>
// CHECK-NOT: tosa.transpose
// CHECK: return %[[M]]
func.func @se_block_run_time_batch(%x: tensor<?x4x4x8xf32>, %g: tensor<?x8x1x1xf32>) -> tensor<?x4x4x8xf32> {
  %shift = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %t = tosa.transpose %x {perms = array<i32: 0, 3, 1, 2>} : (tensor<?x4x4x8xf32>) -> tensor<?x8x4x4xf32>
  %s = tosa.sigmoid %t : (tensor<?x8x4x4xf32>) -> tensor<?x8x4x4xf32>
  %m = tosa.mul %s, %g, %shift : (tensor<?x8x4x4xf32>, tensor<?x8x1x1xf32>, tensor<1xi8>) -> tensor<?x8x4x4xf32>
  %back = tosa.transpose %m {perms = array<i32: 0, 2, 3, 1>} : (tensor<?x8x4x4xf32>) -> tensor<?x4x4x8xf32>
  return %back : tensor<?x4x4x8xf32>
}

// -----

// ShuffleNet's unit between NHWC convolutions: concat of the two branches
// along NCHW's channels, the channel shuffle (reshape to 2 x C/2, swap,
// reshape back) and the split into halves. Everything moves to NHWC: the
// shuffle becomes a transpose of the last two dims of [1, H, W, 2, C/2],
// the split slices the last dim, and no NCHW transpose is left.
// CHECK-LABEL: func @channel_shuffle
// CHECK: %[[CAT:.*]] = tosa.concat %arg0, %arg1 {axis = 3 : i32} : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x16xf32>
// CHECK: %[[E:.*]] = tosa.reshape %[[CAT]], %{{.*}} : (tensor<1x4x4x16xf32>, !tosa.shape<5>) -> tensor<1x4x4x2x8xf32>
// CHECK: %[[SH:.*]] = tosa.transpose %[[E]] {perms = array<i32: 0, 1, 2, 4, 3>} : (tensor<1x4x4x2x8xf32>) -> tensor<1x4x4x8x2xf32>
// CHECK: %[[C:.*]] = tosa.reshape %[[SH]], %{{.*}} : (tensor<1x4x4x8x2xf32>, !tosa.shape<4>) -> tensor<1x4x4x16xf32>
// CHECK-DAG: tosa.slice %[[C]], %{{.*}}, %{{.*}} : (tensor<1x4x4x16xf32>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x4x4x8xf32>
// CHECK-DAG: tosa.slice %[[C]], %{{.*}}, %{{.*}} : (tensor<1x4x4x16xf32>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x4x4x8xf32>
// CHECK-NOT: tosa.transpose
// CHECK: return
func.func @channel_shuffle(%a: tensor<1x4x4x8xf32>, %b: tensor<1x4x4x8xf32>) -> (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) {
  %ta = tosa.transpose %a {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x4x4x8xf32>) -> tensor<1x8x4x4xf32>
  %tb = tosa.transpose %b {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x4x4x8xf32>) -> tensor<1x8x4x4xf32>
  %cat = tosa.concat %ta, %tb {axis = 1 : i32} : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x16x4x4xf32>
  %s5 = tosa.const_shape {values = dense<[1, 2, 8, 4, 4]> : tensor<5xindex>} : () -> !tosa.shape<5>
  %e = tosa.reshape %cat, %s5 : (tensor<1x16x4x4xf32>, !tosa.shape<5>) -> tensor<1x2x8x4x4xf32>
  %sh = tosa.transpose %e {perms = array<i32: 0, 2, 1, 3, 4>} : (tensor<1x2x8x4x4xf32>) -> tensor<1x8x2x4x4xf32>
  %s4 = tosa.const_shape {values = dense<[1, 16, 4, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %c = tosa.reshape %sh, %s4 : (tensor<1x8x2x4x4xf32>, !tosa.shape<4>) -> tensor<1x16x4x4xf32>
  %z = tosa.const_shape {values = dense<0> : tensor<4xindex>} : () -> !tosa.shape<4>
  %h = tosa.const_shape {values = dense<[0, 8, 0, 0]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %n = tosa.const_shape {values = dense<[1, 8, 4, 4]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %lo = tosa.slice %c, %z, %n : (tensor<1x16x4x4xf32>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x8x4x4xf32>
  %hi = tosa.slice %c, %h, %n : (tensor<1x16x4x4xf32>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x8x4x4xf32>
  %blo = tosa.transpose %lo {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x8x4x4xf32>) -> tensor<1x4x4x8xf32>
  %bhi = tosa.transpose %hi {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x8x4x4xf32>) -> tensor<1x4x4x8xf32>
  return %blo, %bhi : tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>
}

// -----

// A merge of dims that are not adjacent in the transpose's input cannot
// move: the transpose stays where it is.
// CHECK-LABEL: func @merge_not_adjacent
// CHECK: %[[T:.*]] = tosa.transpose %arg0 {perms = array<i32: 1, 0, 2>}
// CHECK: tosa.reshape %[[T]]
func.func @merge_not_adjacent(%x: tensor<2x3x4xf32>) -> tensor<3x8xf32> {
  %t = tosa.transpose %x {perms = array<i32: 1, 0, 2>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
  %s = tosa.const_shape {values = dense<[3, 8]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %r = tosa.reshape %t, %s : (tensor<3x2x4xf32>, !tosa.shape<2>) -> tensor<3x8xf32>
  return %r : tensor<3x8xf32>
}

// -----

// ONNX's AveragePool with count_include_pad: the importer pads in NCHW and
// pools NHWC. The pad moves to the NHWC tensor (padding permuted: H and W
// are dims 1 and 2 there), and its transposes cancel, although the NCHW
// transpose has another user (a branch of an Inception block).
// CHECK-LABEL: func @pad_for_average
// CHECK-DAG: %[[P:.*]] = tosa.const_shape {values = dense<[0, 0, 1, 2, 3, 4, 0, 0]> : tensor<8xindex>}
// CHECK: %[[PAD:.*]] = tosa.pad %arg0, %[[P]], %{{.*}} : (tensor<1x5x6x8xf32>, !tosa.shape<8>, tensor<1xf32>) -> tensor<1x8x13x8xf32>
// CHECK: return %[[PAD]], %arg0
func.func @pad_for_average(%x: tensor<1x5x6x8xf32>) -> (tensor<1x8x13x8xf32>, tensor<1x5x6x8xf32>) {
  %t = tosa.transpose %x {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x5x6x8xf32>) -> tensor<1x8x5x6xf32>
  %p = tosa.const_shape {values = dense<[0, 0, 0, 0, 1, 2, 3, 4]> : tensor<8xindex>} : () -> !tosa.shape<8>
  %z = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %pad = tosa.pad %t, %p, %z : (tensor<1x8x5x6xf32>, !tosa.shape<8>, tensor<1xf32>) -> tensor<1x8x8x13xf32>
  %back = tosa.transpose %pad {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x8x8x13xf32>) -> tensor<1x8x13x8xf32>
  %other = tosa.transpose %t {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x8x5x6xf32>) -> tensor<1x5x6x8xf32>
  return %back, %other : tensor<1x8x13x8xf32>, tensor<1x5x6x8xf32>
}

// -----

// A pad whose result stays NCHW while the transpose has another user: it
// stays where it is (moving it would add a transpose of the padded tensor).
// CHECK-LABEL: func @pad_stays
// CHECK: %[[T:.*]] = tosa.transpose %arg0 {perms = array<i32: 0, 3, 1, 2>}
// CHECK: tosa.pad %[[T]]
func.func @pad_stays(%x: tensor<1x5x6x8xf32>) -> (tensor<1x8x7x8xf32>, tensor<1x8x5x6xf32>) {
  %t = tosa.transpose %x {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x5x6x8xf32>) -> tensor<1x8x5x6xf32>
  %p = tosa.const_shape {values = dense<[0, 0, 0, 0, 1, 1, 1, 1]> : tensor<8xindex>} : () -> !tosa.shape<8>
  %z = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %pad = tosa.pad %t, %p, %z : (tensor<1x8x5x6xf32>, !tosa.shape<8>, tensor<1xf32>) -> tensor<1x8x7x8xf32>
  return %pad, %t : tensor<1x8x7x8xf32>, tensor<1x8x5x6xf32>
}
