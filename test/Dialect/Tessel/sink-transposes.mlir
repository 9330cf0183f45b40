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
