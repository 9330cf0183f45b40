// RUN: tessel-opt %s -split-input-file -verify-diagnostics --pass-pipeline="builtin.module(func.func(tessel-decompose-graph-ops))" | FileCheck %s

// Softmax is the numerically stable form: subtract the max before exp.
// CHECK-LABEL: func @softmax
// CHECK-SAME: %[[X:.*]]: tensor<2x8xf32>
// CHECK: %[[MAX:.*]] = tosa.reduce_max %[[X]] {axis = 1 : i32} : (tensor<2x8xf32>) -> tensor<2x1xf32>
// CHECK: %[[SH:.*]] = tosa.sub %[[X]], %[[MAX]] : (tensor<2x8xf32>, tensor<2x1xf32>) -> tensor<2x8xf32>
// CHECK: %[[E:.*]] = tosa.exp %[[SH]]
// CHECK: %[[SUM:.*]] = tosa.reduce_sum %[[E]] {axis = 1 : i32}
// CHECK: %[[R:.*]] = tosa.reciprocal %[[SUM]]
// CHECK: %[[Y:.*]] = tosa.mul %[[E]], %[[R]], %{{.*}} : (tensor<2x8xf32>, tensor<2x1xf32>, tensor<1xi8>) -> tensor<2x8xf32>
// CHECK: return %[[Y]]
func.func @softmax(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0 = tessel.softmax %x {axis = -1 : i64} : tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// CHECK-LABEL: func @log_softmax
// CHECK: %[[MAX:.*]] = tosa.reduce_max %{{.*}} {axis = 0 : i32}
// CHECK: %[[SH:.*]] = tosa.sub %{{.*}}, %[[MAX]]
// CHECK: %[[SUM:.*]] = tosa.reduce_sum
// CHECK: %[[LOG:.*]] = tosa.log %[[SUM]]
// CHECK: tosa.sub %[[SH]], %[[LOG]]
// CHECK-NOT: tessel.
func.func @log_softmax(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0 = tessel.log_softmax %x {axis = 0 : i64} : tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// Layer norm over the last two dims: two reduce_sums per moment, biased
// variance, rsqrt(var + eps), then scale/bias lifted to full rank.
// CHECK-LABEL: func @layer_norm
// CHECK-DAG: "tosa.const"() <{values = dense<0.0833333358> : tensor<1x1x1xf32>}>
// CHECK-DAG: "tosa.const"() <{values = dense<9.99999974E-6> : tensor<1x1x1xf32>}>
// CHECK: tosa.reduce_sum %{{.*}} {axis = 1 : i32} : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32>
// CHECK: tosa.reduce_sum %{{.*}} {axis = 2 : i32} : (tensor<2x1x4xf32>) -> tensor<2x1x1xf32>
// CHECK: tosa.rsqrt
// CHECK: tosa.reshape %{{.*}}, %{{.*}} : (tensor<3x4xf32>, !tosa.shape<3>) -> tensor<1x3x4xf32>
// CHECK: tosa.mul
// CHECK: tosa.add
// CHECK-NOT: tessel.
func.func @layer_norm(%x: tensor<2x3x4xf32>, %g: tensor<3x4xf32>, %b: tensor<3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = tessel.layer_norm %x scale %g bias %b {axis = 1 : i64} : tensor<2x3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32> -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// CHECK-LABEL: func @batch_norm_nchw
// CHECK: tosa.rsqrt %{{.*}} : (tensor<3xf32>) -> tensor<3xf32>
// CHECK: tosa.reshape %{{.*}}, %{{.*}} : (tensor<3xf32>, !tosa.shape<4>) -> tensor<1x3x1x1xf32>
// CHECK: tosa.sub %{{.*}}, %{{.*}} : (tensor<1x3x4x4xf32>, tensor<1x3x1x1xf32>) -> tensor<1x3x4x4xf32>
// CHECK-NOT: tessel.
func.func @batch_norm_nchw(%x: tensor<1x3x4x4xf32>, %p: tensor<3xf32>) -> tensor<1x3x4x4xf32> {
  %0 = tessel.batch_norm %x, %p, %p, %p, %p {channel_axis = 1 : i64, epsilon = 1.0e-3 : f32} : tensor<1x3x4x4xf32>, tensor<3xf32> -> tensor<1x3x4x4xf32>
  return %0 : tensor<1x3x4x4xf32>
}

// -----

// CHECK-LABEL: func @gelu_erf
// CHECK: "tosa.const"() <{values = dense<0.707106769> : tensor<1x1xf32>}>
// CHECK: tosa.erf
// CHECK-NOT: tosa.tanh
func.func @gelu_erf(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %0 = tessel.gelu %x : tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// CHECK-LABEL: func @gelu_tanh
// CHECK-DAG: "tosa.const"() <{values = dense<4.471500e-02> : tensor<1xf32>}>
// CHECK-DAG: "tosa.const"() <{values = dense<0.797884583> : tensor<1xf32>}>
// CHECK: tosa.tanh
// CHECK-NOT: tosa.erf
func.func @gelu_tanh(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tessel.gelu %x {approximate = #tessel.gelu_approximation<tanh>} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// groups == 1 is a plain tosa.conv2d.
// CHECK-LABEL: func @conv_dense
// CHECK: tosa.conv2d %{{.*}} {acc_type = f32, dilation = array<i64: 2, 2>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x8x8x4xf32>, tensor<6x3x3x4xf32>, tensor<6xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x6x6x6xf32>
func.func @conv_dense(%x: tensor<1x8x8x4xf32>, %w: tensor<6x3x3x4xf32>, %b: tensor<6xf32>) -> tensor<1x6x6x6xf32> {
  %0 = tessel.conv2d %x, %w, %b {groups = 1 : i64, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>, dilation = array<i64: 2, 2>} : (tensor<1x8x8x4xf32>, tensor<6x3x3x4xf32>, tensor<6xf32>) -> tensor<1x6x6x6xf32>
  return %0 : tensor<1x6x6x6xf32>
}

// -----

// groups == C with channel multiplier 2: weights [C*M,KH,KW,1] become
// depthwise [KH,KW,C,M].
// CHECK-LABEL: func @conv_depthwise
// CHECK: tosa.reshape %{{.*}} : (tensor<8x3x3x1xf32>, !tosa.shape<4>) -> tensor<4x2x3x3xf32>
// CHECK: tosa.transpose %{{.*}} {perms = array<i32: 2, 3, 0, 1>} : (tensor<4x2x3x3xf32>) -> tensor<3x3x4x2xf32>
// (8 + 1 + 1 - 3) % 2 = 1: the bottom/right padding shrinks to 0.
// CHECK: tosa.depthwise_conv2d {{.*}}pad = array<i64: 1, 0, 1, 0>{{.*}} -> tensor<1x4x4x8xf32>
func.func @conv_depthwise(%x: tensor<1x8x8x4xf32>, %w: tensor<8x3x3x1xf32>, %b: tensor<8xf32>) -> tensor<1x4x4x8xf32> {
  %0 = tessel.conv2d %x, %w, %b {groups = 4 : i64, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>} : (tensor<1x8x8x4xf32>, tensor<8x3x3x1xf32>, tensor<8xf32>) -> tensor<1x4x4x8xf32>
  return %0 : tensor<1x4x4x8xf32>
}

// -----

// 1 < groups < C: per-group slices, convs and a channel concat.
// CHECK-LABEL: func @conv_grouped
// CHECK-COUNT-2: tosa.conv2d {{.*}} -> tensor<1x8x8x3xf32>
// CHECK: tosa.concat %{{.*}}, %{{.*}} {axis = 3 : i32} : (tensor<1x8x8x3xf32>, tensor<1x8x8x3xf32>) -> tensor<1x8x8x6xf32>
func.func @conv_grouped(%x: tensor<1x8x8x4xf32>, %w: tensor<6x3x3x2xf32>, %b: tensor<6xf32>) -> tensor<1x8x8x6xf32> {
  %0 = tessel.conv2d %x, %w, %b {groups = 2 : i64, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>} : (tensor<1x8x8x4xf32>, tensor<6x3x3x2xf32>, tensor<6xf32>) -> tensor<1x8x8x6xf32>
  return %0 : tensor<1x8x8x6xf32>
}

// -----

// Stride 3 with no padding: (7 - 3) % 3 = 1 extra row/col is cropped.
// CHECK-LABEL: func @conv_crop
// CHECK: tosa.slice %{{.*}} : (tensor<1x7x7x2xf32>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x6x6x2xf32>
// CHECK: tosa.conv2d {{.*}}pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 3, 3>{{.*}} -> tensor<1x2x2x4xf32>
func.func @conv_crop(%x: tensor<1x7x7x2xf32>, %w: tensor<4x3x3x2xf32>, %b: tensor<4xf32>) -> tensor<1x2x2x4xf32> {
  %0 = tessel.conv2d %x, %w, %b {groups = 1 : i64, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 3, 3>, dilation = array<i64: 1, 1>} : (tensor<1x7x7x2xf32>, tensor<4x3x3x2xf32>, tensor<4xf32>) -> tensor<1x2x2x4xf32>
  return %0 : tensor<1x2x2x4xf32>
}

// -----

// CHECK-LABEL: func @reduce_mean
// CHECK-DAG: %[[C:.*]] = "tosa.const"() <{values = dense<2.000000e-01> : tensor<1x1xf32>}>
// CHECK-DAG: %[[S:.*]] = tosa.reduce_sum %{{.*}} {axis = 0 : i32} : (tensor<5x3xf32>) -> tensor<1x3xf32>
// CHECK: tosa.mul %[[S]], %[[C]]
func.func @reduce_mean(%x: tensor<5x3xf32>) -> tensor<1x3xf32> {
  %0 = tessel.reduce_mean %x {axis = 0 : i64} : (tensor<5x3xf32>) -> tensor<1x3xf32>
  return %0 : tensor<1x3xf32>
}

// -----

// A reduced dim known only at run time: the scale is 1 / its size, read
// with tensor.dim.
// CHECK-LABEL: func @reduce_mean_dynamic
// CHECK: %[[S:.*]] = tosa.reduce_sum %{{.*}} {axis = 0 : i32} : (tensor<?x3xf32>) -> tensor<1x3xf32>
// CHECK: %[[D:.*]] = tensor.dim %{{.*}}, %c0
// CHECK: %[[I:.*]] = arith.index_castui %[[D]] : index to i64
// CHECK: %[[N:.*]] = arith.uitofp %[[I]] : i64 to f32
// CHECK: %[[R:.*]] = arith.divf %{{.*}}, %[[N]] : f32
// CHECK: %[[T:.*]] = tensor.from_elements %[[R]] : tensor<1x1xf32>
// CHECK: tosa.mul %[[S]], %[[T]]
func.func @reduce_mean_dynamic(%x: tensor<?x3xf32>) -> tensor<1x3xf32> {
  %0 = tessel.reduce_mean %x {axis = 0 : i64} : (tensor<?x3xf32>) -> tensor<1x3xf32>
  return %0 : tensor<1x3xf32>
}

// -----

// f16/bf16 reductions accumulate in f32 and cast back, as PyTorch and ONNX
// Runtime do.
// CHECK-LABEL: func @layer_norm_f16
// CHECK: %[[W:.*]] = tosa.cast %{{.*}} : (tensor<2x4096xf16>) -> tensor<2x4096xf32>
// CHECK: tosa.reduce_sum %[[W]] {axis = 1 : i32} : (tensor<2x4096xf32>) -> tensor<2x1xf32>
// CHECK: %[[Y:.*]] = tosa.cast %{{.*}} : (tensor<2x4096xf32>) -> tensor<2x4096xf16>
// CHECK: return %[[Y]]
func.func @layer_norm_f16(%x: tensor<2x4096xf16>) -> tensor<2x4096xf16> {
  %0 = tessel.layer_norm %x {axis = -1 : i64} : tensor<2x4096xf16> -> tensor<2x4096xf16>
  return %0 : tensor<2x4096xf16>
}

// -----

// CHECK-LABEL: func @softmax_bf16
// CHECK: tosa.cast %{{.*}} : (tensor<8xbf16>) -> tensor<8xf32>
// CHECK: tosa.reduce_sum %{{.*}} : (tensor<8xf32>) -> tensor<1xf32>
// CHECK: tosa.cast %{{.*}} : (tensor<8xf32>) -> tensor<8xbf16>
func.func @softmax_bf16(%x: tensor<8xbf16>) -> tensor<8xbf16> {
  %0 = tessel.softmax %x {axis = 0 : i64} : tensor<8xbf16>
  return %0 : tensor<8xbf16>
}

// -----

// CHECK-LABEL: func @reduce_mean_f16
// CHECK: tosa.cast %{{.*}} : (tensor<4x8xf16>) -> tensor<4x8xf32>
// CHECK: tosa.cast %{{.*}} : (tensor<4x1xf32>) -> tensor<4x1xf16>
func.func @reduce_mean_f16(%x: tensor<4x8xf16>) -> tensor<4x1xf16> {
  %0 = tessel.reduce_mean %x {axis = 1 : i64} : (tensor<4x8xf16>) -> tensor<4x1xf16>
  return %0 : tensor<4x1xf16>
}

// -----

// A convolution whose windows only ever see padding is reported, not
// mis-compiled.
func.func @conv_padding_only(%x: tensor<1x1x1x1xf32>, %w: tensor<1x1x1x1xf32>, %b: tensor<1xf32>) -> tensor<1x2x1x1xf32> {
  // expected-error @+1 {{cannot decompose 'tessel.conv2d': dynamic shapes, and convolutions whose windows see only padding, are not supported yet}}
  %0 = tessel.conv2d %x, %w, %b {groups = 1 : i64, pad = array<i64: 5, 0, 0, 0>, stride = array<i64: 4, 1>, dilation = array<i64: 1, 1>} : (tensor<1x1x1x1xf32>, tensor<1x1x1x1xf32>, tensor<1xf32>) -> tensor<1x2x1x1xf32>
  return %0 : tensor<1x2x1x1xf32>
}

// -----

// top_k: k rounds of (reduce_max, argmax), each choice masked with the
// lowest value before the next; indices widened to i64.
// CHECK-LABEL: func @top_k
// CHECK-SAME: %[[X:.*]]: tensor<6x4xf32>
// CHECK: %[[IOTA:.*]] = "tosa.const"() <{values = dense<{{\[\[}}0, 1, 2, 3]]> : tensor<1x4xi32>}>
// CHECK: %[[FLOOR:.*]] = "tosa.const"() <{values = dense<0xFF800000> : tensor<1x1xf32>}>
// CHECK: %[[V0:.*]] = tosa.reduce_max %[[X]] {axis = 1 : i32}
// CHECK: %[[A0:.*]] = tosa.argmax %[[X]] {axis = 1 : i32}
// CHECK: %[[I0:.*]] = tosa.reshape %[[A0]]
// CHECK: %[[HIT:.*]] = tosa.equal %[[I0]], %[[IOTA]]
// CHECK: %[[Y:.*]] = tosa.select %[[HIT]], %[[FLOOR]], %[[X]]
// CHECK: %[[V1:.*]] = tosa.reduce_max %[[Y]] {axis = 1 : i32}
// CHECK: %[[A1:.*]] = tosa.argmax %[[Y]] {axis = 1 : i32}
// CHECK: %[[V:.*]] = tosa.concat %[[V0]], %[[V1]] {axis = 1 : i32}
// CHECK: %[[I:.*]] = tosa.concat
// CHECK: %[[I64:.*]] = arith.extsi %[[I]] : tensor<6x2xi32> to tensor<6x2xi64>
// CHECK: return %[[V]], %[[I64]]
func.func @top_k(%x: tensor<6x4xf32>) -> (tensor<6x2xf32>, tensor<6x2xi64>) {
  %v, %i = tessel.top_k %x {axis = 1 : i64, k = 2 : i64} : tensor<6x4xf32> -> tensor<6x2xf32>, tensor<6x2xi64>
  return %v, %i : tensor<6x2xf32>, tensor<6x2xi64>
}

// -----

// The smallest k of integers: the largest of -1 - x (exact at the minimum),
// mapped back; the mask value is the type's minimum.
// CHECK-LABEL: func @top_k_smallest_int
// CHECK-SAME: %[[X:.*]]: tensor<3x5xi32>
// CHECK-DAG: %[[M1:.*]] = "tosa.const"() <{values = dense<-1> : tensor<1x1xi32>}>
// CHECK-DAG: %[[R:.*]] = tosa.sub %[[M1]], %[[X]]
// CHECK-DAG: "tosa.const"() <{values = dense<-2147483648> : tensor<1x1xi32>}>
// CHECK: tosa.argmax %[[R]] {axis = 1 : i32}
// CHECK: %[[V:.*]] = tosa.concat
// CHECK: tosa.sub %{{.*}}, %[[V]]
func.func @top_k_smallest_int(%x: tensor<3x5xi32>) -> (tensor<3x2xi32>, tensor<3x2xi64>) {
  %v, %i = tessel.top_k %x {axis = -1 : i64, k = 2 : i64, largest = false} : tensor<3x5xi32> -> tensor<3x2xi32>, tensor<3x2xi64>
  return %v, %i : tensor<3x2xi32>, tensor<3x2xi64>
}

// -----

// nonzero: one loop counts the nonzero elements, one writes their
// row-major positions into a tensor of that count, and a tensor.generate
// unravels each position into one coordinate per dimension.
// CHECK-LABEL: func @nonzero
// CHECK-SAME: %[[X:.*]]: tensor<3x4xf32>
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1]] : tensor<3x4xf32> into tensor<12xf32>
// CHECK: %[[N:.*]] = scf.for {{.*}} iter_args({{.*}}) -> (index)
// CHECK:   arith.cmpf une
// CHECK: %[[INIT:.*]] = tensor.empty(%[[N]]) : tensor<?xindex>
// CHECK: %[[POS:.*]]:2 = scf.for {{.*}} iter_args(%{{.*}} = %[[INIT]], {{.*}}) -> (tensor<?xindex>, index)
// CHECK:   scf.if
// CHECK:     tensor.insert
// CHECK: %[[C:.*]] = tensor.generate %[[N]]
// CHECK:   tensor.extract %[[POS]]#0
// CHECK:   arith.divui
// CHECK:   arith.remui
// CHECK: } : tensor<2x?xi64>
// CHECK-NOT: tessel.nonzero
// CHECK: return %[[C]]
func.func @nonzero(%x: tensor<3x4xf32>) -> tensor<2x?xi64> {
  %c = tessel.nonzero %x : tensor<3x4xf32> -> tensor<2x?xi64>
  return %c : tensor<2x?xi64>
}

// -----

// A run-time input size is not expanded (the pass then reports the op).
func.func @nonzero_run_time_size(%x: tensor<?xf32>) -> tensor<1x?xi64> {
  // expected-error @+1 {{cannot decompose 'tessel.nonzero'}}
  %c = tessel.nonzero %x : tensor<?xf32> -> tensor<1x?xi64>
  return %c : tensor<1x?xi64>
}

// -----

// gather: a loop checks every index (negative ones wrapped) and the call
// fails where one is out of range; the rows themselves are a
// tensor.generate of extracts at the wrapped index (element 0 of the axis
// where it is out of range). Run-time sizes are fine.
// CHECK-LABEL: func @gather
// CHECK-SAME: %[[X:.*]]: tensor<6x8xf32>, %[[I:.*]]: tensor<?xi64>
// CHECK-DAG: %[[C6:.*]] = arith.constant 6 : index
// CHECK: %[[OK:.*]] = scf.for {{.*}} iter_args({{.*}}) -> (i1)
// CHECK:   arith.addi %{{.*}}, %[[C6]] : index
// CHECK:   arith.cmpi slt, %{{.*}}, %[[C6]] : index
// CHECK: %[[N:.*]] = tensor.dim %[[I]]
// CHECK: %[[ROWS:.*]] = tensor.generate %[[N]]
// CHECK: ^bb0(%[[R:.*]]: index, %[[COL:.*]]: index):
// CHECK:   tensor.extract %[[I]][%[[R]]] : tensor<?xi64>
// CHECK:   arith.select
// CHECK:   %[[AT:.*]] = arith.select
// CHECK:   tensor.extract %[[X]][%[[AT]], %[[COL]]] : tensor<6x8xf32>
// CHECK: } : tensor<?x8xf32>
// CHECK: %[[HOLDS:.*]] = tensor.from_elements %[[OK]] : tensor<i1>
// CHECK: %[[Y:.*]] = tessel.require %[[HOLDS]], %[[ROWS]] else %[[ROWS]] {status = -4 : i32}
// CHECK-NOT: tessel.gather
// CHECK: return %[[Y]]
func.func @gather(%x: tensor<6x8xf32>, %i: tensor<?xi64>) -> tensor<?x8xf32> {
  %0 = tessel.gather %x, %i {axis = 0 : i64} : tensor<6x8xf32>, tensor<?xi64> -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

// A scalar index along the last axis: the check reads it through a
// one-element tensor.
// CHECK-LABEL: func @gather_scalar_index
// CHECK: tensor.from_elements %{{.*}} : tensor<1xi32>
// CHECK: tensor.generate
// CHECK: } : tensor<6xf32>
// CHECK-NOT: tessel.gather
func.func @gather_scalar_index(%x: tensor<6x8xf32>, %j: tensor<i32>) -> tensor<6xf32> {
  %0 = tessel.gather %x, %j {axis = 1 : i64} : tensor<6x8xf32>, tensor<i32> -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

// scatter_elements: one loop over the updates in row-major order, carrying
// the result and whether every index was in range (and the sizes equal);
// each step in range combines the update with the element it lands on
// (here: add); out of range it reads and writes nothing.
// CHECK-LABEL: func @scatter_elements
// CHECK-SAME: %[[D:.*]]: tensor<6x8xf32>, %[[I:.*]]: tensor<?x8xi64>, %[[U:.*]]: tensor<?x8xf32>
// CHECK: %[[SAME:.*]] = arith.cmpi eq
// CHECK: %[[LOOP:.*]]:2 = scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[D]], %{{.*}} = %[[SAME]]) -> (tensor<6x8xf32>, i1)
// CHECK:   tensor.extract %[[I]]
// CHECK:   %[[IN:.*]] = arith.andi
// CHECK:   scf.if %[[IN]] -> (tensor<6x8xf32>)
// CHECK:     %[[UPD:.*]] = tensor.extract %[[U]]
// CHECK:     %[[CUR:.*]] = tensor.extract %[[ACC]]
// CHECK:     %[[SUM:.*]] = arith.addf %[[CUR]], %[[UPD]] : f32
// CHECK:     tensor.insert %[[SUM]] into %[[ACC]]
// CHECK:   } else {
// CHECK:     scf.yield %[[ACC]]
// CHECK: %[[HOLDS:.*]] = tensor.from_elements %[[LOOP]]#1 : tensor<i1>
// CHECK: %[[Y:.*]] = tessel.require %[[HOLDS]], %[[LOOP]]#0 else %[[LOOP]]#0 {status = -4 : i32}
// CHECK-NOT: tessel.scatter_elements
// CHECK: return %[[Y]]
func.func @scatter_elements(%d: tensor<6x8xf32>, %i: tensor<?x8xi64>, %u: tensor<?x8xf32>) -> tensor<6x8xf32> {
  %0 = tessel.scatter_elements %d, %i, %u {axis = 0 : i64, reduction = #tessel.scatter_reduction<add>} : tensor<6x8xf32>, tensor<?x8xi64>, tensor<?x8xf32> -> tensor<6x8xf32>
  return %0 : tensor<6x8xf32>
}

// -----

// Without a reduction the update replaces the element; max and min of
// integers compare signed. Indices with a dim (other than the axis) that
// may exceed the input's are checked first: such a call runs no step.
// CHECK-LABEL: func @scatter_replace_and_max
// CHECK-SAME: %[[D:[^:]*]]: tensor<6x8xf32>, %[[I:[^:]*]]: tensor<2x?xi64>
// CHECK: %[[W:.*]] = tensor.dim %[[I]], %c1
// CHECK: arith.cmpi sle, %[[W]], %c8
// CHECK: scf.for
// CHECK:   scf.if
// CHECK-NOT: arith.addf
// CHECK:     %[[UPD:.*]] = tensor.extract %arg2
// CHECK:     tensor.insert %[[UPD]] into
// CHECK: scf.for
// CHECK: arith.maxsi %{{.*}}, %{{.*}} : i32
// CHECK-NOT: tessel.scatter_elements
func.func @scatter_replace_and_max(%d: tensor<6x8xf32>, %i: tensor<2x?xi64>, %u: tensor<2x?xf32>,
                                   %e: tensor<6x8xi32>, %j: tensor<2x8xi64>, %v: tensor<2x8xi32>) -> (tensor<6x8xf32>, tensor<6x8xi32>) {
  %0 = tessel.scatter_elements %d, %i, %u {axis = 0 : i64} : tensor<6x8xf32>, tensor<2x?xi64>, tensor<2x?xf32> -> tensor<6x8xf32>
  %1 = tessel.scatter_elements %e, %j, %v {axis = 0 : i64, reduction = #tessel.scatter_reduction<max>} : tensor<6x8xi32>, tensor<2x8xi64>, tensor<2x8xi32> -> tensor<6x8xi32>
  return %0, %1 : tensor<6x8xf32>, tensor<6x8xi32>
}

// -----

// An axis that may be empty has no element 0 to read for an index out of
// range: the gather yields zero there instead (the call fails).
// CHECK-LABEL: func @gather_maybe_empty_axis
// CHECK: tensor.generate
// CHECK:   %[[IN:.*]] = arith.andi
// CHECK:   %[[V:.*]] = scf.if %[[IN]] -> (f32) {
// CHECK:     tensor.extract
// CHECK:   } else {
// CHECK:     scf.yield %cst
// CHECK:   tensor.yield %[[V]]
func.func @gather_maybe_empty_axis(%x: tensor<?x8xf32>, %i: tensor<?xi64>) -> tensor<?x8xf32> {
  %0 = tessel.gather %x, %i {axis = 0 : i64} : tensor<?x8xf32>, tensor<?xi64> -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}
