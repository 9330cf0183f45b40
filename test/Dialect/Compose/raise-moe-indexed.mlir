// RUN: tessel-opt %s -split-input-file -tessel-raise-moe | FileCheck %s

// Mixtures that run each expert on just its tokens (torch.where(i == e),
// index_select, index_add, as torch.onnx.export writes them: NonZero,
// column slices, Gather, a Gather of the flattened weights at tok * k + slot
// and a ScatterElements into zeros) are densified term by term and raised to
// compose.route; look-alikes are left exactly as they are. T = 4 tokens,
// D = 2, 3 experts y_e = clamp(x * w_e), top-2, renormalized weights. The
// forms were written out by a small script.

// CHECK: compose.component @moe0_expert0(%arg0: tensor<?x2xf32>) -> tensor<?x2xf32>
// CHECK: tosa.mul %arg0
// CHECK: tosa.clamp
// CHECK: compose.component @moe0_expert2
// CHECK-LABEL: func.func @indexed
// CHECK-NEXT: %[[Y:.*]] = compose.route %arg0, %arg1 {experts = [@moe0_expert0, @moe0_expert1, @moe0_expert2], k = 2 : i64, renormalize}
// CHECK-NEXT: return %[[Y]]
func.func @indexed(%x: tensor<4x2xf32>, %s: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %v, %idx = tessel.top_k %s {axis = 1 : i64, k = 2 : i64} : tensor<4x3xf32> -> tensor<4x2xf32>, tensor<4x2xi64>
  %sh = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %i0 = arith.constant 0 : index
  %idx1 = tosa.cast %idx : (tensor<4x2xi64>) -> tensor<4x2xi1>
  %two = "tosa.const"() <{values = dense<2> : tensor<1xi64>}> : () -> tensor<1xi64>
  %zeros = "tosa.const"() <{values = dense<0.0> : tensor<4x2xf32>}> : () -> tensor<4x2xf32>
  %ones = "tosa.const"() <{values = dense<1.0> : tensor<4x2xf32>}> : () -> tensor<4x2xf32>
  %sum = tosa.reduce_sum %v {axis = 1 : i32} : (tensor<4x2xf32>) -> tensor<4x1xf32>
  %rcp = tosa.reciprocal %sum : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %wts = tosa.mul %v, %rcp, %sh : (tensor<4x2xf32>, tensor<4x1xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %wshape = tosa.const_shape {values = dense<[8, 1]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %wflat = tosa.reshape %wts, %wshape : (tensor<4x2xf32>, !tosa.shape<2>) -> tensor<8x1xf32>
  %c0 = "tosa.const"() <{values = dense<0> : tensor<1x1xi64>}> : () -> tensor<1x1xi64>
  %m0 = tosa.equal %idx, %c0 : (tensor<4x2xi64>, tensor<1x1xi64>) -> tensor<4x2xi1>
  %nz0 = tessel.nonzero %m0 : tensor<4x2xi1> -> tensor<2x?xi64>
  %tr0 = tosa.transpose %nz0 {perms = array<i32: 1, 0>} : (tensor<2x?xi64>) -> tensor<?x2xi64>
  %n0 = tensor.dim %tr0, %i0 : tensor<?x2xi64>
  %tokc0 = tensor.extract_slice %tr0[0, 0] [%n0, 1] [1, 1] : tensor<?x2xi64> to tensor<?x1xi64>
  %slotc0 = tensor.extract_slice %tr0[0, 1] [%n0, 1] [1, 1] : tensor<?x2xi64> to tensor<?x1xi64>
  %tok0 = tensor.collapse_shape %tokc0 [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
  %slot0 = tensor.collapse_shape %slotc0 [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
  %xg0 = tessel.gather %x, %tok0 {axis = 0 : i64} : tensor<4x2xf32>, tensor<?xi64> -> tensor<?x2xf32>
  %w0 = "tosa.const"() <{values = dense<[[1.0, 0.5]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %ym0 = tosa.mul %xg0, %w0, %sh : (tensor<?x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<?x2xf32>
  %y0 = tosa.clamp %ym0 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<?x2xf32>) -> tensor<?x2xf32>
  %tk0 = tosa.mul %tok0, %two, %sh : (tensor<?xi64>, tensor<1xi64>, tensor<1xi8>) -> tensor<?xi64>
  %fi0 = tosa.add %slot0, %tk0 : (tensor<?xi64>, tensor<?xi64>) -> tensor<?xi64>
  %wg0 = tessel.gather %wflat, %fi0 {axis = 0 : i64} : tensor<8x1xf32>, tensor<?xi64> -> tensor<?x1xf32>
  %u0 = tosa.mul %y0, %wg0, %sh : (tensor<?x2xf32>, tensor<?x1xf32>, tensor<1xi8>) -> tensor<?x2xf32>
  %ie0 = tensor.empty(%n0) : tensor<?x2xi64>
  %ib0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%tokc0 : tensor<?x1xi64>) outs(%ie0 : tensor<?x2xi64>) {
  ^bb0(%in: i64, %o: i64):
    linalg.yield %in : i64
  } -> tensor<?x2xi64>
  %s0 = tessel.scatter_elements %zeros, %ib0, %u0 {axis = 0 : i64} : tensor<4x2xf32>, tensor<?x2xi64>, tensor<?x2xf32> -> tensor<4x2xf32>
  %c1 = "tosa.const"() <{values = dense<1> : tensor<1x1xi64>}> : () -> tensor<1x1xi64>
  %m1 = tosa.equal %idx, %c1 : (tensor<4x2xi64>, tensor<1x1xi64>) -> tensor<4x2xi1>
  %nz1 = tessel.nonzero %m1 : tensor<4x2xi1> -> tensor<2x?xi64>
  %tr1 = tosa.transpose %nz1 {perms = array<i32: 1, 0>} : (tensor<2x?xi64>) -> tensor<?x2xi64>
  %n1 = tensor.dim %tr1, %i0 : tensor<?x2xi64>
  %tokc1 = tensor.extract_slice %tr1[0, 0] [%n1, 1] [1, 1] : tensor<?x2xi64> to tensor<?x1xi64>
  %slotc1 = tensor.extract_slice %tr1[0, 1] [%n1, 1] [1, 1] : tensor<?x2xi64> to tensor<?x1xi64>
  %tok1 = tensor.collapse_shape %tokc1 [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
  %slot1 = tensor.collapse_shape %slotc1 [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
  %xg1 = tessel.gather %x, %tok1 {axis = 0 : i64} : tensor<4x2xf32>, tensor<?xi64> -> tensor<?x2xf32>
  %w1 = "tosa.const"() <{values = dense<[[2.0, 0.5]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %ym1 = tosa.mul %xg1, %w1, %sh : (tensor<?x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<?x2xf32>
  %y1 = tosa.clamp %ym1 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<?x2xf32>) -> tensor<?x2xf32>
  %tk1 = tosa.mul %tok1, %two, %sh : (tensor<?xi64>, tensor<1xi64>, tensor<1xi8>) -> tensor<?xi64>
  %fi1 = tosa.add %slot1, %tk1 : (tensor<?xi64>, tensor<?xi64>) -> tensor<?xi64>
  %wg1 = tessel.gather %wflat, %fi1 {axis = 0 : i64} : tensor<8x1xf32>, tensor<?xi64> -> tensor<?x1xf32>
  %u1 = tosa.mul %y1, %wg1, %sh : (tensor<?x2xf32>, tensor<?x1xf32>, tensor<1xi8>) -> tensor<?x2xf32>
  %ie1 = tensor.empty(%n1) : tensor<?x2xi64>
  %ib1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%tokc1 : tensor<?x1xi64>) outs(%ie1 : tensor<?x2xi64>) {
  ^bb0(%in: i64, %o: i64):
    linalg.yield %in : i64
  } -> tensor<?x2xi64>
  %s1 = tessel.scatter_elements %zeros, %ib1, %u1 {axis = 0 : i64} : tensor<4x2xf32>, tensor<?x2xi64>, tensor<?x2xf32> -> tensor<4x2xf32>
  %acc1 = tosa.add %s0, %s1 : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %c2 = "tosa.const"() <{values = dense<2> : tensor<1x1xi64>}> : () -> tensor<1x1xi64>
  %m2 = tosa.equal %idx, %c2 : (tensor<4x2xi64>, tensor<1x1xi64>) -> tensor<4x2xi1>
  %nz2 = tessel.nonzero %m2 : tensor<4x2xi1> -> tensor<2x?xi64>
  %tr2 = tosa.transpose %nz2 {perms = array<i32: 1, 0>} : (tensor<2x?xi64>) -> tensor<?x2xi64>
  %n2 = tensor.dim %tr2, %i0 : tensor<?x2xi64>
  %tokc2 = tensor.extract_slice %tr2[0, 0] [%n2, 1] [1, 1] : tensor<?x2xi64> to tensor<?x1xi64>
  %slotc2 = tensor.extract_slice %tr2[0, 1] [%n2, 1] [1, 1] : tensor<?x2xi64> to tensor<?x1xi64>
  %tok2 = tensor.collapse_shape %tokc2 [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
  %slot2 = tensor.collapse_shape %slotc2 [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
  %xg2 = tessel.gather %x, %tok2 {axis = 0 : i64} : tensor<4x2xf32>, tensor<?xi64> -> tensor<?x2xf32>
  %w2 = "tosa.const"() <{values = dense<[[3.0, 0.5]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %ym2 = tosa.mul %xg2, %w2, %sh : (tensor<?x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<?x2xf32>
  %y2 = tosa.clamp %ym2 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<?x2xf32>) -> tensor<?x2xf32>
  %tk2 = tosa.mul %tok2, %two, %sh : (tensor<?xi64>, tensor<1xi64>, tensor<1xi8>) -> tensor<?xi64>
  %fi2 = tosa.add %slot2, %tk2 : (tensor<?xi64>, tensor<?xi64>) -> tensor<?xi64>
  %wg2 = tessel.gather %wflat, %fi2 {axis = 0 : i64} : tensor<8x1xf32>, tensor<?xi64> -> tensor<?x1xf32>
  %u2 = tosa.mul %y2, %wg2, %sh : (tensor<?x2xf32>, tensor<?x1xf32>, tensor<1xi8>) -> tensor<?x2xf32>
  %ie2 = tensor.empty(%n2) : tensor<?x2xi64>
  %ib2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%tokc2 : tensor<?x1xi64>) outs(%ie2 : tensor<?x2xi64>) {
  ^bb0(%in: i64, %o: i64):
    linalg.yield %in : i64
  } -> tensor<?x2xi64>
  %s2 = tessel.scatter_elements %zeros, %ib2, %u2 {axis = 0 : i64} : tensor<4x2xf32>, tensor<?x2xi64>, tensor<?x2xf32> -> tensor<4x2xf32>
  %acc2 = tosa.add %acc1, %s2 : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  return %acc2 : tensor<4x2xf32>
}

// -----

// The scatters add (index_add with reduction): the same, raised.
// CHECK-LABEL: func.func @indexed_add
// CHECK-NEXT: compose.route %arg0, %arg1 {experts = [@moe0_expert0, @moe0_expert1, @moe0_expert2], k = 2 : i64, renormalize}
func.func @indexed_add(%x: tensor<4x2xf32>, %s: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %v, %idx = tessel.top_k %s {axis = 1 : i64, k = 2 : i64} : tensor<4x3xf32> -> tensor<4x2xf32>, tensor<4x2xi64>
  %sh = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %i0 = arith.constant 0 : index
  %idx1 = tosa.cast %idx : (tensor<4x2xi64>) -> tensor<4x2xi1>
  %two = "tosa.const"() <{values = dense<2> : tensor<1xi64>}> : () -> tensor<1xi64>
  %zeros = "tosa.const"() <{values = dense<0.0> : tensor<4x2xf32>}> : () -> tensor<4x2xf32>
  %ones = "tosa.const"() <{values = dense<1.0> : tensor<4x2xf32>}> : () -> tensor<4x2xf32>
  %sum = tosa.reduce_sum %v {axis = 1 : i32} : (tensor<4x2xf32>) -> tensor<4x1xf32>
  %rcp = tosa.reciprocal %sum : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %wts = tosa.mul %v, %rcp, %sh : (tensor<4x2xf32>, tensor<4x1xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %wshape = tosa.const_shape {values = dense<[8, 1]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %wflat = tosa.reshape %wts, %wshape : (tensor<4x2xf32>, !tosa.shape<2>) -> tensor<8x1xf32>
  %c0 = "tosa.const"() <{values = dense<0> : tensor<1x1xi64>}> : () -> tensor<1x1xi64>
  %m0 = tosa.equal %idx, %c0 : (tensor<4x2xi64>, tensor<1x1xi64>) -> tensor<4x2xi1>
  %nz0 = tessel.nonzero %m0 : tensor<4x2xi1> -> tensor<2x?xi64>
  %tr0 = tosa.transpose %nz0 {perms = array<i32: 1, 0>} : (tensor<2x?xi64>) -> tensor<?x2xi64>
  %n0 = tensor.dim %tr0, %i0 : tensor<?x2xi64>
  %tokc0 = tensor.extract_slice %tr0[0, 0] [%n0, 1] [1, 1] : tensor<?x2xi64> to tensor<?x1xi64>
  %slotc0 = tensor.extract_slice %tr0[0, 1] [%n0, 1] [1, 1] : tensor<?x2xi64> to tensor<?x1xi64>
  %tok0 = tensor.collapse_shape %tokc0 [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
  %slot0 = tensor.collapse_shape %slotc0 [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
  %xg0 = tessel.gather %x, %tok0 {axis = 0 : i64} : tensor<4x2xf32>, tensor<?xi64> -> tensor<?x2xf32>
  %w0 = "tosa.const"() <{values = dense<[[1.0, 0.5]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %ym0 = tosa.mul %xg0, %w0, %sh : (tensor<?x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<?x2xf32>
  %y0 = tosa.clamp %ym0 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<?x2xf32>) -> tensor<?x2xf32>
  %tk0 = tosa.mul %tok0, %two, %sh : (tensor<?xi64>, tensor<1xi64>, tensor<1xi8>) -> tensor<?xi64>
  %fi0 = tosa.add %slot0, %tk0 : (tensor<?xi64>, tensor<?xi64>) -> tensor<?xi64>
  %wg0 = tessel.gather %wflat, %fi0 {axis = 0 : i64} : tensor<8x1xf32>, tensor<?xi64> -> tensor<?x1xf32>
  %u0 = tosa.mul %y0, %wg0, %sh : (tensor<?x2xf32>, tensor<?x1xf32>, tensor<1xi8>) -> tensor<?x2xf32>
  %ie0 = tensor.empty(%n0) : tensor<?x2xi64>
  %ib0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%tokc0 : tensor<?x1xi64>) outs(%ie0 : tensor<?x2xi64>) {
  ^bb0(%in: i64, %o: i64):
    linalg.yield %in : i64
  } -> tensor<?x2xi64>
  %s0 = tessel.scatter_elements %zeros, %ib0, %u0 {axis = 0 : i64, reduction = #tessel.scatter_reduction<add>} : tensor<4x2xf32>, tensor<?x2xi64>, tensor<?x2xf32> -> tensor<4x2xf32>
  %c1 = "tosa.const"() <{values = dense<1> : tensor<1x1xi64>}> : () -> tensor<1x1xi64>
  %m1 = tosa.equal %idx, %c1 : (tensor<4x2xi64>, tensor<1x1xi64>) -> tensor<4x2xi1>
  %nz1 = tessel.nonzero %m1 : tensor<4x2xi1> -> tensor<2x?xi64>
  %tr1 = tosa.transpose %nz1 {perms = array<i32: 1, 0>} : (tensor<2x?xi64>) -> tensor<?x2xi64>
  %n1 = tensor.dim %tr1, %i0 : tensor<?x2xi64>
  %tokc1 = tensor.extract_slice %tr1[0, 0] [%n1, 1] [1, 1] : tensor<?x2xi64> to tensor<?x1xi64>
  %slotc1 = tensor.extract_slice %tr1[0, 1] [%n1, 1] [1, 1] : tensor<?x2xi64> to tensor<?x1xi64>
  %tok1 = tensor.collapse_shape %tokc1 [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
  %slot1 = tensor.collapse_shape %slotc1 [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
  %xg1 = tessel.gather %x, %tok1 {axis = 0 : i64} : tensor<4x2xf32>, tensor<?xi64> -> tensor<?x2xf32>
  %w1 = "tosa.const"() <{values = dense<[[2.0, 0.5]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %ym1 = tosa.mul %xg1, %w1, %sh : (tensor<?x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<?x2xf32>
  %y1 = tosa.clamp %ym1 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<?x2xf32>) -> tensor<?x2xf32>
  %tk1 = tosa.mul %tok1, %two, %sh : (tensor<?xi64>, tensor<1xi64>, tensor<1xi8>) -> tensor<?xi64>
  %fi1 = tosa.add %slot1, %tk1 : (tensor<?xi64>, tensor<?xi64>) -> tensor<?xi64>
  %wg1 = tessel.gather %wflat, %fi1 {axis = 0 : i64} : tensor<8x1xf32>, tensor<?xi64> -> tensor<?x1xf32>
  %u1 = tosa.mul %y1, %wg1, %sh : (tensor<?x2xf32>, tensor<?x1xf32>, tensor<1xi8>) -> tensor<?x2xf32>
  %ie1 = tensor.empty(%n1) : tensor<?x2xi64>
  %ib1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%tokc1 : tensor<?x1xi64>) outs(%ie1 : tensor<?x2xi64>) {
  ^bb0(%in: i64, %o: i64):
    linalg.yield %in : i64
  } -> tensor<?x2xi64>
  %s1 = tessel.scatter_elements %zeros, %ib1, %u1 {axis = 0 : i64, reduction = #tessel.scatter_reduction<add>} : tensor<4x2xf32>, tensor<?x2xi64>, tensor<?x2xf32> -> tensor<4x2xf32>
  %acc1 = tosa.add %s0, %s1 : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %c2 = "tosa.const"() <{values = dense<2> : tensor<1x1xi64>}> : () -> tensor<1x1xi64>
  %m2 = tosa.equal %idx, %c2 : (tensor<4x2xi64>, tensor<1x1xi64>) -> tensor<4x2xi1>
  %nz2 = tessel.nonzero %m2 : tensor<4x2xi1> -> tensor<2x?xi64>
  %tr2 = tosa.transpose %nz2 {perms = array<i32: 1, 0>} : (tensor<2x?xi64>) -> tensor<?x2xi64>
  %n2 = tensor.dim %tr2, %i0 : tensor<?x2xi64>
  %tokc2 = tensor.extract_slice %tr2[0, 0] [%n2, 1] [1, 1] : tensor<?x2xi64> to tensor<?x1xi64>
  %slotc2 = tensor.extract_slice %tr2[0, 1] [%n2, 1] [1, 1] : tensor<?x2xi64> to tensor<?x1xi64>
  %tok2 = tensor.collapse_shape %tokc2 [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
  %slot2 = tensor.collapse_shape %slotc2 [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
  %xg2 = tessel.gather %x, %tok2 {axis = 0 : i64} : tensor<4x2xf32>, tensor<?xi64> -> tensor<?x2xf32>
  %w2 = "tosa.const"() <{values = dense<[[3.0, 0.5]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %ym2 = tosa.mul %xg2, %w2, %sh : (tensor<?x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<?x2xf32>
  %y2 = tosa.clamp %ym2 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<?x2xf32>) -> tensor<?x2xf32>
  %tk2 = tosa.mul %tok2, %two, %sh : (tensor<?xi64>, tensor<1xi64>, tensor<1xi8>) -> tensor<?xi64>
  %fi2 = tosa.add %slot2, %tk2 : (tensor<?xi64>, tensor<?xi64>) -> tensor<?xi64>
  %wg2 = tessel.gather %wflat, %fi2 {axis = 0 : i64} : tensor<8x1xf32>, tensor<?xi64> -> tensor<?x1xf32>
  %u2 = tosa.mul %y2, %wg2, %sh : (tensor<?x2xf32>, tensor<?x1xf32>, tensor<1xi8>) -> tensor<?x2xf32>
  %ie2 = tensor.empty(%n2) : tensor<?x2xi64>
  %ib2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%tokc2 : tensor<?x1xi64>) outs(%ie2 : tensor<?x2xi64>) {
  ^bb0(%in: i64, %o: i64):
    linalg.yield %in : i64
  } -> tensor<?x2xi64>
  %s2 = tessel.scatter_elements %zeros, %ib2, %u2 {axis = 0 : i64, reduction = #tessel.scatter_reduction<add>} : tensor<4x2xf32>, tensor<?x2xi64>, tensor<?x2xf32> -> tensor<4x2xf32>
  %acc2 = tosa.add %acc1, %s2 : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  return %acc2 : tensor<4x2xf32>
}

// -----

// Expert 1 centres its rows over its own tokens (a sum over dim 0): not
// token-wise, so densified it would mix every token. Nothing is rewritten,
// not even the token-wise experts 0 and 2 (a mixture densified in part would
// run them on every token and still not be raised).
// CHECK-LABEL: func.func @mixing
// CHECK-NOT: compose.route
// CHECK-COUNT-3: tessel.scatter_elements
// CHECK-NOT: tosa.select
func.func @mixing(%x: tensor<4x2xf32>, %s: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %v, %idx = tessel.top_k %s {axis = 1 : i64, k = 2 : i64} : tensor<4x3xf32> -> tensor<4x2xf32>, tensor<4x2xi64>
  %sh = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %i0 = arith.constant 0 : index
  %idx1 = tosa.cast %idx : (tensor<4x2xi64>) -> tensor<4x2xi1>
  %two = "tosa.const"() <{values = dense<2> : tensor<1xi64>}> : () -> tensor<1xi64>
  %zeros = "tosa.const"() <{values = dense<0.0> : tensor<4x2xf32>}> : () -> tensor<4x2xf32>
  %ones = "tosa.const"() <{values = dense<1.0> : tensor<4x2xf32>}> : () -> tensor<4x2xf32>
  %sum = tosa.reduce_sum %v {axis = 1 : i32} : (tensor<4x2xf32>) -> tensor<4x1xf32>
  %rcp = tosa.reciprocal %sum : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %wts = tosa.mul %v, %rcp, %sh : (tensor<4x2xf32>, tensor<4x1xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %wshape = tosa.const_shape {values = dense<[8, 1]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %wflat = tosa.reshape %wts, %wshape : (tensor<4x2xf32>, !tosa.shape<2>) -> tensor<8x1xf32>
  %c0 = "tosa.const"() <{values = dense<0> : tensor<1x1xi64>}> : () -> tensor<1x1xi64>
  %m0 = tosa.equal %idx, %c0 : (tensor<4x2xi64>, tensor<1x1xi64>) -> tensor<4x2xi1>
  %nz0 = tessel.nonzero %m0 : tensor<4x2xi1> -> tensor<2x?xi64>
  %tr0 = tosa.transpose %nz0 {perms = array<i32: 1, 0>} : (tensor<2x?xi64>) -> tensor<?x2xi64>
  %n0 = tensor.dim %tr0, %i0 : tensor<?x2xi64>
  %tokc0 = tensor.extract_slice %tr0[0, 0] [%n0, 1] [1, 1] : tensor<?x2xi64> to tensor<?x1xi64>
  %slotc0 = tensor.extract_slice %tr0[0, 1] [%n0, 1] [1, 1] : tensor<?x2xi64> to tensor<?x1xi64>
  %tok0 = tensor.collapse_shape %tokc0 [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
  %slot0 = tensor.collapse_shape %slotc0 [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
  %xg0 = tessel.gather %x, %tok0 {axis = 0 : i64} : tensor<4x2xf32>, tensor<?xi64> -> tensor<?x2xf32>
  %w0 = "tosa.const"() <{values = dense<[[1.0, 0.5]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %ym0 = tosa.mul %xg0, %w0, %sh : (tensor<?x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<?x2xf32>
  %y0 = tosa.clamp %ym0 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<?x2xf32>) -> tensor<?x2xf32>
  %tk0 = tosa.mul %tok0, %two, %sh : (tensor<?xi64>, tensor<1xi64>, tensor<1xi8>) -> tensor<?xi64>
  %fi0 = tosa.add %slot0, %tk0 : (tensor<?xi64>, tensor<?xi64>) -> tensor<?xi64>
  %wg0 = tessel.gather %wflat, %fi0 {axis = 0 : i64} : tensor<8x1xf32>, tensor<?xi64> -> tensor<?x1xf32>
  %u0 = tosa.mul %y0, %wg0, %sh : (tensor<?x2xf32>, tensor<?x1xf32>, tensor<1xi8>) -> tensor<?x2xf32>
  %ie0 = tensor.empty(%n0) : tensor<?x2xi64>
  %ib0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%tokc0 : tensor<?x1xi64>) outs(%ie0 : tensor<?x2xi64>) {
  ^bb0(%in: i64, %o: i64):
    linalg.yield %in : i64
  } -> tensor<?x2xi64>
  %s0 = tessel.scatter_elements %zeros, %ib0, %u0 {axis = 0 : i64} : tensor<4x2xf32>, tensor<?x2xi64>, tensor<?x2xf32> -> tensor<4x2xf32>
  %c1 = "tosa.const"() <{values = dense<1> : tensor<1x1xi64>}> : () -> tensor<1x1xi64>
  %m1 = tosa.equal %idx, %c1 : (tensor<4x2xi64>, tensor<1x1xi64>) -> tensor<4x2xi1>
  %nz1 = tessel.nonzero %m1 : tensor<4x2xi1> -> tensor<2x?xi64>
  %tr1 = tosa.transpose %nz1 {perms = array<i32: 1, 0>} : (tensor<2x?xi64>) -> tensor<?x2xi64>
  %n1 = tensor.dim %tr1, %i0 : tensor<?x2xi64>
  %tokc1 = tensor.extract_slice %tr1[0, 0] [%n1, 1] [1, 1] : tensor<?x2xi64> to tensor<?x1xi64>
  %slotc1 = tensor.extract_slice %tr1[0, 1] [%n1, 1] [1, 1] : tensor<?x2xi64> to tensor<?x1xi64>
  %tok1 = tensor.collapse_shape %tokc1 [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
  %slot1 = tensor.collapse_shape %slotc1 [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
  %xg1 = tessel.gather %x, %tok1 {axis = 0 : i64} : tensor<4x2xf32>, tensor<?xi64> -> tensor<?x2xf32>
  %w1 = "tosa.const"() <{values = dense<[[2.0, 0.5]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %ym1 = tosa.mul %xg1, %w1, %sh : (tensor<?x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<?x2xf32>
  %mean1 = tosa.reduce_sum %ym1 {axis = 0 : i32} : (tensor<?x2xf32>) -> tensor<1x2xf32>
  %y1 = tosa.sub %ym1, %mean1 : (tensor<?x2xf32>, tensor<1x2xf32>) -> tensor<?x2xf32>
  %tk1 = tosa.mul %tok1, %two, %sh : (tensor<?xi64>, tensor<1xi64>, tensor<1xi8>) -> tensor<?xi64>
  %fi1 = tosa.add %slot1, %tk1 : (tensor<?xi64>, tensor<?xi64>) -> tensor<?xi64>
  %wg1 = tessel.gather %wflat, %fi1 {axis = 0 : i64} : tensor<8x1xf32>, tensor<?xi64> -> tensor<?x1xf32>
  %u1 = tosa.mul %y1, %wg1, %sh : (tensor<?x2xf32>, tensor<?x1xf32>, tensor<1xi8>) -> tensor<?x2xf32>
  %ie1 = tensor.empty(%n1) : tensor<?x2xi64>
  %ib1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%tokc1 : tensor<?x1xi64>) outs(%ie1 : tensor<?x2xi64>) {
  ^bb0(%in: i64, %o: i64):
    linalg.yield %in : i64
  } -> tensor<?x2xi64>
  %s1 = tessel.scatter_elements %zeros, %ib1, %u1 {axis = 0 : i64} : tensor<4x2xf32>, tensor<?x2xi64>, tensor<?x2xf32> -> tensor<4x2xf32>
  %acc1 = tosa.add %s0, %s1 : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %c2 = "tosa.const"() <{values = dense<2> : tensor<1x1xi64>}> : () -> tensor<1x1xi64>
  %m2 = tosa.equal %idx, %c2 : (tensor<4x2xi64>, tensor<1x1xi64>) -> tensor<4x2xi1>
  %nz2 = tessel.nonzero %m2 : tensor<4x2xi1> -> tensor<2x?xi64>
  %tr2 = tosa.transpose %nz2 {perms = array<i32: 1, 0>} : (tensor<2x?xi64>) -> tensor<?x2xi64>
  %n2 = tensor.dim %tr2, %i0 : tensor<?x2xi64>
  %tokc2 = tensor.extract_slice %tr2[0, 0] [%n2, 1] [1, 1] : tensor<?x2xi64> to tensor<?x1xi64>
  %slotc2 = tensor.extract_slice %tr2[0, 1] [%n2, 1] [1, 1] : tensor<?x2xi64> to tensor<?x1xi64>
  %tok2 = tensor.collapse_shape %tokc2 [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
  %slot2 = tensor.collapse_shape %slotc2 [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
  %xg2 = tessel.gather %x, %tok2 {axis = 0 : i64} : tensor<4x2xf32>, tensor<?xi64> -> tensor<?x2xf32>
  %w2 = "tosa.const"() <{values = dense<[[3.0, 0.5]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %ym2 = tosa.mul %xg2, %w2, %sh : (tensor<?x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<?x2xf32>
  %y2 = tosa.clamp %ym2 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<?x2xf32>) -> tensor<?x2xf32>
  %tk2 = tosa.mul %tok2, %two, %sh : (tensor<?xi64>, tensor<1xi64>, tensor<1xi8>) -> tensor<?xi64>
  %fi2 = tosa.add %slot2, %tk2 : (tensor<?xi64>, tensor<?xi64>) -> tensor<?xi64>
  %wg2 = tessel.gather %wflat, %fi2 {axis = 0 : i64} : tensor<8x1xf32>, tensor<?xi64> -> tensor<?x1xf32>
  %u2 = tosa.mul %y2, %wg2, %sh : (tensor<?x2xf32>, tensor<?x1xf32>, tensor<1xi8>) -> tensor<?x2xf32>
  %ie2 = tensor.empty(%n2) : tensor<?x2xi64>
  %ib2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%tokc2 : tensor<?x1xi64>) outs(%ie2 : tensor<?x2xi64>) {
  ^bb0(%in: i64, %o: i64):
    linalg.yield %in : i64
  } -> tensor<?x2xi64>
  %s2 = tessel.scatter_elements %zeros, %ib2, %u2 {axis = 0 : i64} : tensor<4x2xf32>, tensor<?x2xi64>, tensor<?x2xf32> -> tensor<4x2xf32>
  %acc2 = tosa.add %acc1, %s2 : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  return %acc2 : tensor<4x2xf32>
}

// -----

// The weights gathered at tok * k + tok, not tok * k + slot.
// CHECK-LABEL: func.func @wrong_slot
// CHECK-NOT: compose.route
// CHECK-COUNT-3: tessel.scatter_elements
// CHECK-NOT: tosa.select
func.func @wrong_slot(%x: tensor<4x2xf32>, %s: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %v, %idx = tessel.top_k %s {axis = 1 : i64, k = 2 : i64} : tensor<4x3xf32> -> tensor<4x2xf32>, tensor<4x2xi64>
  %sh = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %i0 = arith.constant 0 : index
  %idx1 = tosa.cast %idx : (tensor<4x2xi64>) -> tensor<4x2xi1>
  %two = "tosa.const"() <{values = dense<2> : tensor<1xi64>}> : () -> tensor<1xi64>
  %zeros = "tosa.const"() <{values = dense<0.0> : tensor<4x2xf32>}> : () -> tensor<4x2xf32>
  %ones = "tosa.const"() <{values = dense<1.0> : tensor<4x2xf32>}> : () -> tensor<4x2xf32>
  %sum = tosa.reduce_sum %v {axis = 1 : i32} : (tensor<4x2xf32>) -> tensor<4x1xf32>
  %rcp = tosa.reciprocal %sum : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %wts = tosa.mul %v, %rcp, %sh : (tensor<4x2xf32>, tensor<4x1xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %wshape = tosa.const_shape {values = dense<[8, 1]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %wflat = tosa.reshape %wts, %wshape : (tensor<4x2xf32>, !tosa.shape<2>) -> tensor<8x1xf32>
  %c0 = "tosa.const"() <{values = dense<0> : tensor<1x1xi64>}> : () -> tensor<1x1xi64>
  %m0 = tosa.equal %idx, %c0 : (tensor<4x2xi64>, tensor<1x1xi64>) -> tensor<4x2xi1>
  %nz0 = tessel.nonzero %m0 : tensor<4x2xi1> -> tensor<2x?xi64>
  %tr0 = tosa.transpose %nz0 {perms = array<i32: 1, 0>} : (tensor<2x?xi64>) -> tensor<?x2xi64>
  %n0 = tensor.dim %tr0, %i0 : tensor<?x2xi64>
  %tokc0 = tensor.extract_slice %tr0[0, 0] [%n0, 1] [1, 1] : tensor<?x2xi64> to tensor<?x1xi64>
  %slotc0 = tensor.extract_slice %tr0[0, 1] [%n0, 1] [1, 1] : tensor<?x2xi64> to tensor<?x1xi64>
  %tok0 = tensor.collapse_shape %tokc0 [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
  %slot0 = tensor.collapse_shape %slotc0 [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
  %xg0 = tessel.gather %x, %tok0 {axis = 0 : i64} : tensor<4x2xf32>, tensor<?xi64> -> tensor<?x2xf32>
  %w0 = "tosa.const"() <{values = dense<[[1.0, 0.5]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %ym0 = tosa.mul %xg0, %w0, %sh : (tensor<?x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<?x2xf32>
  %y0 = tosa.clamp %ym0 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<?x2xf32>) -> tensor<?x2xf32>
  %tk0 = tosa.mul %tok0, %two, %sh : (tensor<?xi64>, tensor<1xi64>, tensor<1xi8>) -> tensor<?xi64>
  %fi0 = tosa.add %tok0, %tk0 : (tensor<?xi64>, tensor<?xi64>) -> tensor<?xi64>
  %wg0 = tessel.gather %wflat, %fi0 {axis = 0 : i64} : tensor<8x1xf32>, tensor<?xi64> -> tensor<?x1xf32>
  %u0 = tosa.mul %y0, %wg0, %sh : (tensor<?x2xf32>, tensor<?x1xf32>, tensor<1xi8>) -> tensor<?x2xf32>
  %ie0 = tensor.empty(%n0) : tensor<?x2xi64>
  %ib0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%tokc0 : tensor<?x1xi64>) outs(%ie0 : tensor<?x2xi64>) {
  ^bb0(%in: i64, %o: i64):
    linalg.yield %in : i64
  } -> tensor<?x2xi64>
  %s0 = tessel.scatter_elements %zeros, %ib0, %u0 {axis = 0 : i64} : tensor<4x2xf32>, tensor<?x2xi64>, tensor<?x2xf32> -> tensor<4x2xf32>
  %c1 = "tosa.const"() <{values = dense<1> : tensor<1x1xi64>}> : () -> tensor<1x1xi64>
  %m1 = tosa.equal %idx, %c1 : (tensor<4x2xi64>, tensor<1x1xi64>) -> tensor<4x2xi1>
  %nz1 = tessel.nonzero %m1 : tensor<4x2xi1> -> tensor<2x?xi64>
  %tr1 = tosa.transpose %nz1 {perms = array<i32: 1, 0>} : (tensor<2x?xi64>) -> tensor<?x2xi64>
  %n1 = tensor.dim %tr1, %i0 : tensor<?x2xi64>
  %tokc1 = tensor.extract_slice %tr1[0, 0] [%n1, 1] [1, 1] : tensor<?x2xi64> to tensor<?x1xi64>
  %slotc1 = tensor.extract_slice %tr1[0, 1] [%n1, 1] [1, 1] : tensor<?x2xi64> to tensor<?x1xi64>
  %tok1 = tensor.collapse_shape %tokc1 [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
  %slot1 = tensor.collapse_shape %slotc1 [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
  %xg1 = tessel.gather %x, %tok1 {axis = 0 : i64} : tensor<4x2xf32>, tensor<?xi64> -> tensor<?x2xf32>
  %w1 = "tosa.const"() <{values = dense<[[2.0, 0.5]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %ym1 = tosa.mul %xg1, %w1, %sh : (tensor<?x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<?x2xf32>
  %y1 = tosa.clamp %ym1 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<?x2xf32>) -> tensor<?x2xf32>
  %tk1 = tosa.mul %tok1, %two, %sh : (tensor<?xi64>, tensor<1xi64>, tensor<1xi8>) -> tensor<?xi64>
  %fi1 = tosa.add %tok1, %tk1 : (tensor<?xi64>, tensor<?xi64>) -> tensor<?xi64>
  %wg1 = tessel.gather %wflat, %fi1 {axis = 0 : i64} : tensor<8x1xf32>, tensor<?xi64> -> tensor<?x1xf32>
  %u1 = tosa.mul %y1, %wg1, %sh : (tensor<?x2xf32>, tensor<?x1xf32>, tensor<1xi8>) -> tensor<?x2xf32>
  %ie1 = tensor.empty(%n1) : tensor<?x2xi64>
  %ib1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%tokc1 : tensor<?x1xi64>) outs(%ie1 : tensor<?x2xi64>) {
  ^bb0(%in: i64, %o: i64):
    linalg.yield %in : i64
  } -> tensor<?x2xi64>
  %s1 = tessel.scatter_elements %zeros, %ib1, %u1 {axis = 0 : i64} : tensor<4x2xf32>, tensor<?x2xi64>, tensor<?x2xf32> -> tensor<4x2xf32>
  %acc1 = tosa.add %s0, %s1 : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %c2 = "tosa.const"() <{values = dense<2> : tensor<1x1xi64>}> : () -> tensor<1x1xi64>
  %m2 = tosa.equal %idx, %c2 : (tensor<4x2xi64>, tensor<1x1xi64>) -> tensor<4x2xi1>
  %nz2 = tessel.nonzero %m2 : tensor<4x2xi1> -> tensor<2x?xi64>
  %tr2 = tosa.transpose %nz2 {perms = array<i32: 1, 0>} : (tensor<2x?xi64>) -> tensor<?x2xi64>
  %n2 = tensor.dim %tr2, %i0 : tensor<?x2xi64>
  %tokc2 = tensor.extract_slice %tr2[0, 0] [%n2, 1] [1, 1] : tensor<?x2xi64> to tensor<?x1xi64>
  %slotc2 = tensor.extract_slice %tr2[0, 1] [%n2, 1] [1, 1] : tensor<?x2xi64> to tensor<?x1xi64>
  %tok2 = tensor.collapse_shape %tokc2 [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
  %slot2 = tensor.collapse_shape %slotc2 [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
  %xg2 = tessel.gather %x, %tok2 {axis = 0 : i64} : tensor<4x2xf32>, tensor<?xi64> -> tensor<?x2xf32>
  %w2 = "tosa.const"() <{values = dense<[[3.0, 0.5]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %ym2 = tosa.mul %xg2, %w2, %sh : (tensor<?x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<?x2xf32>
  %y2 = tosa.clamp %ym2 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<?x2xf32>) -> tensor<?x2xf32>
  %tk2 = tosa.mul %tok2, %two, %sh : (tensor<?xi64>, tensor<1xi64>, tensor<1xi8>) -> tensor<?xi64>
  %fi2 = tosa.add %tok2, %tk2 : (tensor<?xi64>, tensor<?xi64>) -> tensor<?xi64>
  %wg2 = tessel.gather %wflat, %fi2 {axis = 0 : i64} : tensor<8x1xf32>, tensor<?xi64> -> tensor<?x1xf32>
  %u2 = tosa.mul %y2, %wg2, %sh : (tensor<?x2xf32>, tensor<?x1xf32>, tensor<1xi8>) -> tensor<?x2xf32>
  %ie2 = tensor.empty(%n2) : tensor<?x2xi64>
  %ib2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%tokc2 : tensor<?x1xi64>) outs(%ie2 : tensor<?x2xi64>) {
  ^bb0(%in: i64, %o: i64):
    linalg.yield %in : i64
  } -> tensor<?x2xi64>
  %s2 = tessel.scatter_elements %zeros, %ib2, %u2 {axis = 0 : i64} : tensor<4x2xf32>, tensor<?x2xi64>, tensor<?x2xf32> -> tensor<4x2xf32>
  %acc2 = tosa.add %acc1, %s2 : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  return %acc2 : tensor<4x2xf32>
}

// -----

// Scattered into ones: the rows no expert writes keep a 1, which a dense
// term cannot say.
// CHECK-LABEL: func.func @nonzero_base
// CHECK-NOT: compose.route
// CHECK-COUNT-3: tessel.scatter_elements
// CHECK-NOT: tosa.select
func.func @nonzero_base(%x: tensor<4x2xf32>, %s: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %v, %idx = tessel.top_k %s {axis = 1 : i64, k = 2 : i64} : tensor<4x3xf32> -> tensor<4x2xf32>, tensor<4x2xi64>
  %sh = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %i0 = arith.constant 0 : index
  %idx1 = tosa.cast %idx : (tensor<4x2xi64>) -> tensor<4x2xi1>
  %two = "tosa.const"() <{values = dense<2> : tensor<1xi64>}> : () -> tensor<1xi64>
  %zeros = "tosa.const"() <{values = dense<0.0> : tensor<4x2xf32>}> : () -> tensor<4x2xf32>
  %ones = "tosa.const"() <{values = dense<1.0> : tensor<4x2xf32>}> : () -> tensor<4x2xf32>
  %sum = tosa.reduce_sum %v {axis = 1 : i32} : (tensor<4x2xf32>) -> tensor<4x1xf32>
  %rcp = tosa.reciprocal %sum : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %wts = tosa.mul %v, %rcp, %sh : (tensor<4x2xf32>, tensor<4x1xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %wshape = tosa.const_shape {values = dense<[8, 1]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %wflat = tosa.reshape %wts, %wshape : (tensor<4x2xf32>, !tosa.shape<2>) -> tensor<8x1xf32>
  %c0 = "tosa.const"() <{values = dense<0> : tensor<1x1xi64>}> : () -> tensor<1x1xi64>
  %m0 = tosa.equal %idx, %c0 : (tensor<4x2xi64>, tensor<1x1xi64>) -> tensor<4x2xi1>
  %nz0 = tessel.nonzero %m0 : tensor<4x2xi1> -> tensor<2x?xi64>
  %tr0 = tosa.transpose %nz0 {perms = array<i32: 1, 0>} : (tensor<2x?xi64>) -> tensor<?x2xi64>
  %n0 = tensor.dim %tr0, %i0 : tensor<?x2xi64>
  %tokc0 = tensor.extract_slice %tr0[0, 0] [%n0, 1] [1, 1] : tensor<?x2xi64> to tensor<?x1xi64>
  %slotc0 = tensor.extract_slice %tr0[0, 1] [%n0, 1] [1, 1] : tensor<?x2xi64> to tensor<?x1xi64>
  %tok0 = tensor.collapse_shape %tokc0 [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
  %slot0 = tensor.collapse_shape %slotc0 [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
  %xg0 = tessel.gather %x, %tok0 {axis = 0 : i64} : tensor<4x2xf32>, tensor<?xi64> -> tensor<?x2xf32>
  %w0 = "tosa.const"() <{values = dense<[[1.0, 0.5]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %ym0 = tosa.mul %xg0, %w0, %sh : (tensor<?x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<?x2xf32>
  %y0 = tosa.clamp %ym0 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<?x2xf32>) -> tensor<?x2xf32>
  %tk0 = tosa.mul %tok0, %two, %sh : (tensor<?xi64>, tensor<1xi64>, tensor<1xi8>) -> tensor<?xi64>
  %fi0 = tosa.add %slot0, %tk0 : (tensor<?xi64>, tensor<?xi64>) -> tensor<?xi64>
  %wg0 = tessel.gather %wflat, %fi0 {axis = 0 : i64} : tensor<8x1xf32>, tensor<?xi64> -> tensor<?x1xf32>
  %u0 = tosa.mul %y0, %wg0, %sh : (tensor<?x2xf32>, tensor<?x1xf32>, tensor<1xi8>) -> tensor<?x2xf32>
  %ie0 = tensor.empty(%n0) : tensor<?x2xi64>
  %ib0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%tokc0 : tensor<?x1xi64>) outs(%ie0 : tensor<?x2xi64>) {
  ^bb0(%in: i64, %o: i64):
    linalg.yield %in : i64
  } -> tensor<?x2xi64>
  %s0 = tessel.scatter_elements %ones, %ib0, %u0 {axis = 0 : i64} : tensor<4x2xf32>, tensor<?x2xi64>, tensor<?x2xf32> -> tensor<4x2xf32>
  %c1 = "tosa.const"() <{values = dense<1> : tensor<1x1xi64>}> : () -> tensor<1x1xi64>
  %m1 = tosa.equal %idx, %c1 : (tensor<4x2xi64>, tensor<1x1xi64>) -> tensor<4x2xi1>
  %nz1 = tessel.nonzero %m1 : tensor<4x2xi1> -> tensor<2x?xi64>
  %tr1 = tosa.transpose %nz1 {perms = array<i32: 1, 0>} : (tensor<2x?xi64>) -> tensor<?x2xi64>
  %n1 = tensor.dim %tr1, %i0 : tensor<?x2xi64>
  %tokc1 = tensor.extract_slice %tr1[0, 0] [%n1, 1] [1, 1] : tensor<?x2xi64> to tensor<?x1xi64>
  %slotc1 = tensor.extract_slice %tr1[0, 1] [%n1, 1] [1, 1] : tensor<?x2xi64> to tensor<?x1xi64>
  %tok1 = tensor.collapse_shape %tokc1 [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
  %slot1 = tensor.collapse_shape %slotc1 [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
  %xg1 = tessel.gather %x, %tok1 {axis = 0 : i64} : tensor<4x2xf32>, tensor<?xi64> -> tensor<?x2xf32>
  %w1 = "tosa.const"() <{values = dense<[[2.0, 0.5]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %ym1 = tosa.mul %xg1, %w1, %sh : (tensor<?x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<?x2xf32>
  %y1 = tosa.clamp %ym1 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<?x2xf32>) -> tensor<?x2xf32>
  %tk1 = tosa.mul %tok1, %two, %sh : (tensor<?xi64>, tensor<1xi64>, tensor<1xi8>) -> tensor<?xi64>
  %fi1 = tosa.add %slot1, %tk1 : (tensor<?xi64>, tensor<?xi64>) -> tensor<?xi64>
  %wg1 = tessel.gather %wflat, %fi1 {axis = 0 : i64} : tensor<8x1xf32>, tensor<?xi64> -> tensor<?x1xf32>
  %u1 = tosa.mul %y1, %wg1, %sh : (tensor<?x2xf32>, tensor<?x1xf32>, tensor<1xi8>) -> tensor<?x2xf32>
  %ie1 = tensor.empty(%n1) : tensor<?x2xi64>
  %ib1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%tokc1 : tensor<?x1xi64>) outs(%ie1 : tensor<?x2xi64>) {
  ^bb0(%in: i64, %o: i64):
    linalg.yield %in : i64
  } -> tensor<?x2xi64>
  %s1 = tessel.scatter_elements %ones, %ib1, %u1 {axis = 0 : i64} : tensor<4x2xf32>, tensor<?x2xi64>, tensor<?x2xf32> -> tensor<4x2xf32>
  %acc1 = tosa.add %s0, %s1 : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %c2 = "tosa.const"() <{values = dense<2> : tensor<1x1xi64>}> : () -> tensor<1x1xi64>
  %m2 = tosa.equal %idx, %c2 : (tensor<4x2xi64>, tensor<1x1xi64>) -> tensor<4x2xi1>
  %nz2 = tessel.nonzero %m2 : tensor<4x2xi1> -> tensor<2x?xi64>
  %tr2 = tosa.transpose %nz2 {perms = array<i32: 1, 0>} : (tensor<2x?xi64>) -> tensor<?x2xi64>
  %n2 = tensor.dim %tr2, %i0 : tensor<?x2xi64>
  %tokc2 = tensor.extract_slice %tr2[0, 0] [%n2, 1] [1, 1] : tensor<?x2xi64> to tensor<?x1xi64>
  %slotc2 = tensor.extract_slice %tr2[0, 1] [%n2, 1] [1, 1] : tensor<?x2xi64> to tensor<?x1xi64>
  %tok2 = tensor.collapse_shape %tokc2 [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
  %slot2 = tensor.collapse_shape %slotc2 [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
  %xg2 = tessel.gather %x, %tok2 {axis = 0 : i64} : tensor<4x2xf32>, tensor<?xi64> -> tensor<?x2xf32>
  %w2 = "tosa.const"() <{values = dense<[[3.0, 0.5]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %ym2 = tosa.mul %xg2, %w2, %sh : (tensor<?x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<?x2xf32>
  %y2 = tosa.clamp %ym2 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<?x2xf32>) -> tensor<?x2xf32>
  %tk2 = tosa.mul %tok2, %two, %sh : (tensor<?xi64>, tensor<1xi64>, tensor<1xi8>) -> tensor<?xi64>
  %fi2 = tosa.add %slot2, %tk2 : (tensor<?xi64>, tensor<?xi64>) -> tensor<?xi64>
  %wg2 = tessel.gather %wflat, %fi2 {axis = 0 : i64} : tensor<8x1xf32>, tensor<?xi64> -> tensor<?x1xf32>
  %u2 = tosa.mul %y2, %wg2, %sh : (tensor<?x2xf32>, tensor<?x1xf32>, tensor<1xi8>) -> tensor<?x2xf32>
  %ie2 = tensor.empty(%n2) : tensor<?x2xi64>
  %ib2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%tokc2 : tensor<?x1xi64>) outs(%ie2 : tensor<?x2xi64>) {
  ^bb0(%in: i64, %o: i64):
    linalg.yield %in : i64
  } -> tensor<?x2xi64>
  %s2 = tessel.scatter_elements %ones, %ib2, %u2 {axis = 0 : i64} : tensor<4x2xf32>, tensor<?x2xi64>, tensor<?x2xf32> -> tensor<4x2xf32>
  %acc2 = tosa.add %acc1, %s2 : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  return %acc2 : tensor<4x2xf32>
}

// -----

// The positions come from an argument, not from the top-k indices: a row
// may name an expert twice, and replacing is then not adding.
// CHECK-LABEL: func.func @not_topk
// CHECK-NOT: compose.route
// CHECK-COUNT-3: tessel.scatter_elements
// CHECK-NOT: tosa.select
func.func @not_topk(%x: tensor<4x2xf32>, %s: tensor<4x3xf32>, %notk: tensor<4x2xi64>) -> tensor<4x2xf32> {
  %v, %idx = tessel.top_k %s {axis = 1 : i64, k = 2 : i64} : tensor<4x3xf32> -> tensor<4x2xf32>, tensor<4x2xi64>
  %sh = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %i0 = arith.constant 0 : index
  %idx1 = tosa.cast %idx : (tensor<4x2xi64>) -> tensor<4x2xi1>
  %two = "tosa.const"() <{values = dense<2> : tensor<1xi64>}> : () -> tensor<1xi64>
  %zeros = "tosa.const"() <{values = dense<0.0> : tensor<4x2xf32>}> : () -> tensor<4x2xf32>
  %ones = "tosa.const"() <{values = dense<1.0> : tensor<4x2xf32>}> : () -> tensor<4x2xf32>
  %sum = tosa.reduce_sum %v {axis = 1 : i32} : (tensor<4x2xf32>) -> tensor<4x1xf32>
  %rcp = tosa.reciprocal %sum : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %wts = tosa.mul %v, %rcp, %sh : (tensor<4x2xf32>, tensor<4x1xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %wshape = tosa.const_shape {values = dense<[8, 1]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %wflat = tosa.reshape %wts, %wshape : (tensor<4x2xf32>, !tosa.shape<2>) -> tensor<8x1xf32>
  %c0 = "tosa.const"() <{values = dense<0> : tensor<1x1xi64>}> : () -> tensor<1x1xi64>
  %m0 = tosa.equal %notk, %c0 : (tensor<4x2xi64>, tensor<1x1xi64>) -> tensor<4x2xi1>
  %nz0 = tessel.nonzero %m0 : tensor<4x2xi1> -> tensor<2x?xi64>
  %tr0 = tosa.transpose %nz0 {perms = array<i32: 1, 0>} : (tensor<2x?xi64>) -> tensor<?x2xi64>
  %n0 = tensor.dim %tr0, %i0 : tensor<?x2xi64>
  %tokc0 = tensor.extract_slice %tr0[0, 0] [%n0, 1] [1, 1] : tensor<?x2xi64> to tensor<?x1xi64>
  %slotc0 = tensor.extract_slice %tr0[0, 1] [%n0, 1] [1, 1] : tensor<?x2xi64> to tensor<?x1xi64>
  %tok0 = tensor.collapse_shape %tokc0 [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
  %slot0 = tensor.collapse_shape %slotc0 [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
  %xg0 = tessel.gather %x, %tok0 {axis = 0 : i64} : tensor<4x2xf32>, tensor<?xi64> -> tensor<?x2xf32>
  %w0 = "tosa.const"() <{values = dense<[[1.0, 0.5]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %ym0 = tosa.mul %xg0, %w0, %sh : (tensor<?x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<?x2xf32>
  %y0 = tosa.clamp %ym0 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<?x2xf32>) -> tensor<?x2xf32>
  %tk0 = tosa.mul %tok0, %two, %sh : (tensor<?xi64>, tensor<1xi64>, tensor<1xi8>) -> tensor<?xi64>
  %fi0 = tosa.add %slot0, %tk0 : (tensor<?xi64>, tensor<?xi64>) -> tensor<?xi64>
  %wg0 = tessel.gather %wflat, %fi0 {axis = 0 : i64} : tensor<8x1xf32>, tensor<?xi64> -> tensor<?x1xf32>
  %u0 = tosa.mul %y0, %wg0, %sh : (tensor<?x2xf32>, tensor<?x1xf32>, tensor<1xi8>) -> tensor<?x2xf32>
  %ie0 = tensor.empty(%n0) : tensor<?x2xi64>
  %ib0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%tokc0 : tensor<?x1xi64>) outs(%ie0 : tensor<?x2xi64>) {
  ^bb0(%in: i64, %o: i64):
    linalg.yield %in : i64
  } -> tensor<?x2xi64>
  %s0 = tessel.scatter_elements %zeros, %ib0, %u0 {axis = 0 : i64} : tensor<4x2xf32>, tensor<?x2xi64>, tensor<?x2xf32> -> tensor<4x2xf32>
  %c1 = "tosa.const"() <{values = dense<1> : tensor<1x1xi64>}> : () -> tensor<1x1xi64>
  %m1 = tosa.equal %notk, %c1 : (tensor<4x2xi64>, tensor<1x1xi64>) -> tensor<4x2xi1>
  %nz1 = tessel.nonzero %m1 : tensor<4x2xi1> -> tensor<2x?xi64>
  %tr1 = tosa.transpose %nz1 {perms = array<i32: 1, 0>} : (tensor<2x?xi64>) -> tensor<?x2xi64>
  %n1 = tensor.dim %tr1, %i0 : tensor<?x2xi64>
  %tokc1 = tensor.extract_slice %tr1[0, 0] [%n1, 1] [1, 1] : tensor<?x2xi64> to tensor<?x1xi64>
  %slotc1 = tensor.extract_slice %tr1[0, 1] [%n1, 1] [1, 1] : tensor<?x2xi64> to tensor<?x1xi64>
  %tok1 = tensor.collapse_shape %tokc1 [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
  %slot1 = tensor.collapse_shape %slotc1 [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
  %xg1 = tessel.gather %x, %tok1 {axis = 0 : i64} : tensor<4x2xf32>, tensor<?xi64> -> tensor<?x2xf32>
  %w1 = "tosa.const"() <{values = dense<[[2.0, 0.5]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %ym1 = tosa.mul %xg1, %w1, %sh : (tensor<?x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<?x2xf32>
  %y1 = tosa.clamp %ym1 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<?x2xf32>) -> tensor<?x2xf32>
  %tk1 = tosa.mul %tok1, %two, %sh : (tensor<?xi64>, tensor<1xi64>, tensor<1xi8>) -> tensor<?xi64>
  %fi1 = tosa.add %slot1, %tk1 : (tensor<?xi64>, tensor<?xi64>) -> tensor<?xi64>
  %wg1 = tessel.gather %wflat, %fi1 {axis = 0 : i64} : tensor<8x1xf32>, tensor<?xi64> -> tensor<?x1xf32>
  %u1 = tosa.mul %y1, %wg1, %sh : (tensor<?x2xf32>, tensor<?x1xf32>, tensor<1xi8>) -> tensor<?x2xf32>
  %ie1 = tensor.empty(%n1) : tensor<?x2xi64>
  %ib1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%tokc1 : tensor<?x1xi64>) outs(%ie1 : tensor<?x2xi64>) {
  ^bb0(%in: i64, %o: i64):
    linalg.yield %in : i64
  } -> tensor<?x2xi64>
  %s1 = tessel.scatter_elements %zeros, %ib1, %u1 {axis = 0 : i64} : tensor<4x2xf32>, tensor<?x2xi64>, tensor<?x2xf32> -> tensor<4x2xf32>
  %acc1 = tosa.add %s0, %s1 : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %c2 = "tosa.const"() <{values = dense<2> : tensor<1x1xi64>}> : () -> tensor<1x1xi64>
  %m2 = tosa.equal %notk, %c2 : (tensor<4x2xi64>, tensor<1x1xi64>) -> tensor<4x2xi1>
  %nz2 = tessel.nonzero %m2 : tensor<4x2xi1> -> tensor<2x?xi64>
  %tr2 = tosa.transpose %nz2 {perms = array<i32: 1, 0>} : (tensor<2x?xi64>) -> tensor<?x2xi64>
  %n2 = tensor.dim %tr2, %i0 : tensor<?x2xi64>
  %tokc2 = tensor.extract_slice %tr2[0, 0] [%n2, 1] [1, 1] : tensor<?x2xi64> to tensor<?x1xi64>
  %slotc2 = tensor.extract_slice %tr2[0, 1] [%n2, 1] [1, 1] : tensor<?x2xi64> to tensor<?x1xi64>
  %tok2 = tensor.collapse_shape %tokc2 [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
  %slot2 = tensor.collapse_shape %slotc2 [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
  %xg2 = tessel.gather %x, %tok2 {axis = 0 : i64} : tensor<4x2xf32>, tensor<?xi64> -> tensor<?x2xf32>
  %w2 = "tosa.const"() <{values = dense<[[3.0, 0.5]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %ym2 = tosa.mul %xg2, %w2, %sh : (tensor<?x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<?x2xf32>
  %y2 = tosa.clamp %ym2 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<?x2xf32>) -> tensor<?x2xf32>
  %tk2 = tosa.mul %tok2, %two, %sh : (tensor<?xi64>, tensor<1xi64>, tensor<1xi8>) -> tensor<?xi64>
  %fi2 = tosa.add %slot2, %tk2 : (tensor<?xi64>, tensor<?xi64>) -> tensor<?xi64>
  %wg2 = tessel.gather %wflat, %fi2 {axis = 0 : i64} : tensor<8x1xf32>, tensor<?xi64> -> tensor<?x1xf32>
  %u2 = tosa.mul %y2, %wg2, %sh : (tensor<?x2xf32>, tensor<?x1xf32>, tensor<1xi8>) -> tensor<?x2xf32>
  %ie2 = tensor.empty(%n2) : tensor<?x2xi64>
  %ib2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%tokc2 : tensor<?x1xi64>) outs(%ie2 : tensor<?x2xi64>) {
  ^bb0(%in: i64, %o: i64):
    linalg.yield %in : i64
  } -> tensor<?x2xi64>
  %s2 = tessel.scatter_elements %zeros, %ib2, %u2 {axis = 0 : i64} : tensor<4x2xf32>, tensor<?x2xi64>, tensor<?x2xf32> -> tensor<4x2xf32>
  %acc2 = tosa.add %acc1, %s2 : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  return %acc2 : tensor<4x2xf32>
}

// -----

// The mask compares the indices cast to i1 (i != 0) with true: a row may
// hold two trues, so it is not one expert's mask.
// CHECK-LABEL: func.func @i1_cast
// CHECK-NOT: compose.route
// CHECK-COUNT-3: tessel.scatter_elements
// CHECK-NOT: tosa.select
func.func @i1_cast(%x: tensor<4x2xf32>, %s: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %v, %idx = tessel.top_k %s {axis = 1 : i64, k = 2 : i64} : tensor<4x3xf32> -> tensor<4x2xf32>, tensor<4x2xi64>
  %sh = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %i0 = arith.constant 0 : index
  %idx1 = tosa.cast %idx : (tensor<4x2xi64>) -> tensor<4x2xi1>
  %two = "tosa.const"() <{values = dense<2> : tensor<1xi64>}> : () -> tensor<1xi64>
  %zeros = "tosa.const"() <{values = dense<0.0> : tensor<4x2xf32>}> : () -> tensor<4x2xf32>
  %ones = "tosa.const"() <{values = dense<1.0> : tensor<4x2xf32>}> : () -> tensor<4x2xf32>
  %sum = tosa.reduce_sum %v {axis = 1 : i32} : (tensor<4x2xf32>) -> tensor<4x1xf32>
  %rcp = tosa.reciprocal %sum : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %wts = tosa.mul %v, %rcp, %sh : (tensor<4x2xf32>, tensor<4x1xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %wshape = tosa.const_shape {values = dense<[8, 1]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %wflat = tosa.reshape %wts, %wshape : (tensor<4x2xf32>, !tosa.shape<2>) -> tensor<8x1xf32>
  %c0 = "tosa.const"() <{values = dense<true> : tensor<1x1xi1>}> : () -> tensor<1x1xi1>
  %m0 = tosa.equal %idx1, %c0 : (tensor<4x2xi1>, tensor<1x1xi1>) -> tensor<4x2xi1>
  %nz0 = tessel.nonzero %m0 : tensor<4x2xi1> -> tensor<2x?xi64>
  %tr0 = tosa.transpose %nz0 {perms = array<i32: 1, 0>} : (tensor<2x?xi64>) -> tensor<?x2xi64>
  %n0 = tensor.dim %tr0, %i0 : tensor<?x2xi64>
  %tokc0 = tensor.extract_slice %tr0[0, 0] [%n0, 1] [1, 1] : tensor<?x2xi64> to tensor<?x1xi64>
  %slotc0 = tensor.extract_slice %tr0[0, 1] [%n0, 1] [1, 1] : tensor<?x2xi64> to tensor<?x1xi64>
  %tok0 = tensor.collapse_shape %tokc0 [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
  %slot0 = tensor.collapse_shape %slotc0 [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
  %xg0 = tessel.gather %x, %tok0 {axis = 0 : i64} : tensor<4x2xf32>, tensor<?xi64> -> tensor<?x2xf32>
  %w0 = "tosa.const"() <{values = dense<[[1.0, 0.5]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %ym0 = tosa.mul %xg0, %w0, %sh : (tensor<?x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<?x2xf32>
  %y0 = tosa.clamp %ym0 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<?x2xf32>) -> tensor<?x2xf32>
  %tk0 = tosa.mul %tok0, %two, %sh : (tensor<?xi64>, tensor<1xi64>, tensor<1xi8>) -> tensor<?xi64>
  %fi0 = tosa.add %slot0, %tk0 : (tensor<?xi64>, tensor<?xi64>) -> tensor<?xi64>
  %wg0 = tessel.gather %wflat, %fi0 {axis = 0 : i64} : tensor<8x1xf32>, tensor<?xi64> -> tensor<?x1xf32>
  %u0 = tosa.mul %y0, %wg0, %sh : (tensor<?x2xf32>, tensor<?x1xf32>, tensor<1xi8>) -> tensor<?x2xf32>
  %ie0 = tensor.empty(%n0) : tensor<?x2xi64>
  %ib0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%tokc0 : tensor<?x1xi64>) outs(%ie0 : tensor<?x2xi64>) {
  ^bb0(%in: i64, %o: i64):
    linalg.yield %in : i64
  } -> tensor<?x2xi64>
  %s0 = tessel.scatter_elements %zeros, %ib0, %u0 {axis = 0 : i64} : tensor<4x2xf32>, tensor<?x2xi64>, tensor<?x2xf32> -> tensor<4x2xf32>
  %c1 = "tosa.const"() <{values = dense<true> : tensor<1x1xi1>}> : () -> tensor<1x1xi1>
  %m1 = tosa.equal %idx1, %c1 : (tensor<4x2xi1>, tensor<1x1xi1>) -> tensor<4x2xi1>
  %nz1 = tessel.nonzero %m1 : tensor<4x2xi1> -> tensor<2x?xi64>
  %tr1 = tosa.transpose %nz1 {perms = array<i32: 1, 0>} : (tensor<2x?xi64>) -> tensor<?x2xi64>
  %n1 = tensor.dim %tr1, %i0 : tensor<?x2xi64>
  %tokc1 = tensor.extract_slice %tr1[0, 0] [%n1, 1] [1, 1] : tensor<?x2xi64> to tensor<?x1xi64>
  %slotc1 = tensor.extract_slice %tr1[0, 1] [%n1, 1] [1, 1] : tensor<?x2xi64> to tensor<?x1xi64>
  %tok1 = tensor.collapse_shape %tokc1 [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
  %slot1 = tensor.collapse_shape %slotc1 [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
  %xg1 = tessel.gather %x, %tok1 {axis = 0 : i64} : tensor<4x2xf32>, tensor<?xi64> -> tensor<?x2xf32>
  %w1 = "tosa.const"() <{values = dense<[[2.0, 0.5]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %ym1 = tosa.mul %xg1, %w1, %sh : (tensor<?x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<?x2xf32>
  %y1 = tosa.clamp %ym1 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<?x2xf32>) -> tensor<?x2xf32>
  %tk1 = tosa.mul %tok1, %two, %sh : (tensor<?xi64>, tensor<1xi64>, tensor<1xi8>) -> tensor<?xi64>
  %fi1 = tosa.add %slot1, %tk1 : (tensor<?xi64>, tensor<?xi64>) -> tensor<?xi64>
  %wg1 = tessel.gather %wflat, %fi1 {axis = 0 : i64} : tensor<8x1xf32>, tensor<?xi64> -> tensor<?x1xf32>
  %u1 = tosa.mul %y1, %wg1, %sh : (tensor<?x2xf32>, tensor<?x1xf32>, tensor<1xi8>) -> tensor<?x2xf32>
  %ie1 = tensor.empty(%n1) : tensor<?x2xi64>
  %ib1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%tokc1 : tensor<?x1xi64>) outs(%ie1 : tensor<?x2xi64>) {
  ^bb0(%in: i64, %o: i64):
    linalg.yield %in : i64
  } -> tensor<?x2xi64>
  %s1 = tessel.scatter_elements %zeros, %ib1, %u1 {axis = 0 : i64} : tensor<4x2xf32>, tensor<?x2xi64>, tensor<?x2xf32> -> tensor<4x2xf32>
  %acc1 = tosa.add %s0, %s1 : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %c2 = "tosa.const"() <{values = dense<true> : tensor<1x1xi1>}> : () -> tensor<1x1xi1>
  %m2 = tosa.equal %idx1, %c2 : (tensor<4x2xi1>, tensor<1x1xi1>) -> tensor<4x2xi1>
  %nz2 = tessel.nonzero %m2 : tensor<4x2xi1> -> tensor<2x?xi64>
  %tr2 = tosa.transpose %nz2 {perms = array<i32: 1, 0>} : (tensor<2x?xi64>) -> tensor<?x2xi64>
  %n2 = tensor.dim %tr2, %i0 : tensor<?x2xi64>
  %tokc2 = tensor.extract_slice %tr2[0, 0] [%n2, 1] [1, 1] : tensor<?x2xi64> to tensor<?x1xi64>
  %slotc2 = tensor.extract_slice %tr2[0, 1] [%n2, 1] [1, 1] : tensor<?x2xi64> to tensor<?x1xi64>
  %tok2 = tensor.collapse_shape %tokc2 [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
  %slot2 = tensor.collapse_shape %slotc2 [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
  %xg2 = tessel.gather %x, %tok2 {axis = 0 : i64} : tensor<4x2xf32>, tensor<?xi64> -> tensor<?x2xf32>
  %w2 = "tosa.const"() <{values = dense<[[3.0, 0.5]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %ym2 = tosa.mul %xg2, %w2, %sh : (tensor<?x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<?x2xf32>
  %y2 = tosa.clamp %ym2 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<?x2xf32>) -> tensor<?x2xf32>
  %tk2 = tosa.mul %tok2, %two, %sh : (tensor<?xi64>, tensor<1xi64>, tensor<1xi8>) -> tensor<?xi64>
  %fi2 = tosa.add %slot2, %tk2 : (tensor<?xi64>, tensor<?xi64>) -> tensor<?xi64>
  %wg2 = tessel.gather %wflat, %fi2 {axis = 0 : i64} : tensor<8x1xf32>, tensor<?xi64> -> tensor<?x1xf32>
  %u2 = tosa.mul %y2, %wg2, %sh : (tensor<?x2xf32>, tensor<?x1xf32>, tensor<1xi8>) -> tensor<?x2xf32>
  %ie2 = tensor.empty(%n2) : tensor<?x2xi64>
  %ib2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%tokc2 : tensor<?x1xi64>) outs(%ie2 : tensor<?x2xi64>) {
  ^bb0(%in: i64, %o: i64):
    linalg.yield %in : i64
  } -> tensor<?x2xi64>
  %s2 = tessel.scatter_elements %zeros, %ib2, %u2 {axis = 0 : i64} : tensor<4x2xf32>, tensor<?x2xi64>, tensor<?x2xf32> -> tensor<4x2xf32>
  %acc2 = tosa.add %acc1, %s2 : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  return %acc2 : tensor<4x2xf32>
}

// -----

// Three terms, but two for expert 0 and none for expert 2: not every
// expert of the top-k, so none is densified.
// CHECK-LABEL: func.func @dup_expert
// CHECK-NOT: compose.route
// CHECK-COUNT-3: tessel.scatter_elements
// CHECK-NOT: tosa.select
func.func @dup_expert(%x: tensor<4x2xf32>, %s: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %v, %idx = tessel.top_k %s {axis = 1 : i64, k = 2 : i64} : tensor<4x3xf32> -> tensor<4x2xf32>, tensor<4x2xi64>
  %sh = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %i0 = arith.constant 0 : index
  %idx1 = tosa.cast %idx : (tensor<4x2xi64>) -> tensor<4x2xi1>
  %two = "tosa.const"() <{values = dense<2> : tensor<1xi64>}> : () -> tensor<1xi64>
  %zeros = "tosa.const"() <{values = dense<0.0> : tensor<4x2xf32>}> : () -> tensor<4x2xf32>
  %ones = "tosa.const"() <{values = dense<1.0> : tensor<4x2xf32>}> : () -> tensor<4x2xf32>
  %sum = tosa.reduce_sum %v {axis = 1 : i32} : (tensor<4x2xf32>) -> tensor<4x1xf32>
  %rcp = tosa.reciprocal %sum : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %wts = tosa.mul %v, %rcp, %sh : (tensor<4x2xf32>, tensor<4x1xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %wshape = tosa.const_shape {values = dense<[8, 1]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %wflat = tosa.reshape %wts, %wshape : (tensor<4x2xf32>, !tosa.shape<2>) -> tensor<8x1xf32>
  %c0 = "tosa.const"() <{values = dense<0> : tensor<1x1xi64>}> : () -> tensor<1x1xi64>
  %m0 = tosa.equal %idx, %c0 : (tensor<4x2xi64>, tensor<1x1xi64>) -> tensor<4x2xi1>
  %nz0 = tessel.nonzero %m0 : tensor<4x2xi1> -> tensor<2x?xi64>
  %tr0 = tosa.transpose %nz0 {perms = array<i32: 1, 0>} : (tensor<2x?xi64>) -> tensor<?x2xi64>
  %n0 = tensor.dim %tr0, %i0 : tensor<?x2xi64>
  %tokc0 = tensor.extract_slice %tr0[0, 0] [%n0, 1] [1, 1] : tensor<?x2xi64> to tensor<?x1xi64>
  %slotc0 = tensor.extract_slice %tr0[0, 1] [%n0, 1] [1, 1] : tensor<?x2xi64> to tensor<?x1xi64>
  %tok0 = tensor.collapse_shape %tokc0 [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
  %slot0 = tensor.collapse_shape %slotc0 [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
  %xg0 = tessel.gather %x, %tok0 {axis = 0 : i64} : tensor<4x2xf32>, tensor<?xi64> -> tensor<?x2xf32>
  %w0 = "tosa.const"() <{values = dense<[[1.0, 0.5]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %ym0 = tosa.mul %xg0, %w0, %sh : (tensor<?x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<?x2xf32>
  %y0 = tosa.clamp %ym0 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<?x2xf32>) -> tensor<?x2xf32>
  %tk0 = tosa.mul %tok0, %two, %sh : (tensor<?xi64>, tensor<1xi64>, tensor<1xi8>) -> tensor<?xi64>
  %fi0 = tosa.add %slot0, %tk0 : (tensor<?xi64>, tensor<?xi64>) -> tensor<?xi64>
  %wg0 = tessel.gather %wflat, %fi0 {axis = 0 : i64} : tensor<8x1xf32>, tensor<?xi64> -> tensor<?x1xf32>
  %u0 = tosa.mul %y0, %wg0, %sh : (tensor<?x2xf32>, tensor<?x1xf32>, tensor<1xi8>) -> tensor<?x2xf32>
  %ie0 = tensor.empty(%n0) : tensor<?x2xi64>
  %ib0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%tokc0 : tensor<?x1xi64>) outs(%ie0 : tensor<?x2xi64>) {
  ^bb0(%in: i64, %o: i64):
    linalg.yield %in : i64
  } -> tensor<?x2xi64>
  %s0 = tessel.scatter_elements %zeros, %ib0, %u0 {axis = 0 : i64} : tensor<4x2xf32>, tensor<?x2xi64>, tensor<?x2xf32> -> tensor<4x2xf32>
  %c1 = "tosa.const"() <{values = dense<0> : tensor<1x1xi64>}> : () -> tensor<1x1xi64>
  %m1 = tosa.equal %idx, %c1 : (tensor<4x2xi64>, tensor<1x1xi64>) -> tensor<4x2xi1>
  %nz1 = tessel.nonzero %m1 : tensor<4x2xi1> -> tensor<2x?xi64>
  %tr1 = tosa.transpose %nz1 {perms = array<i32: 1, 0>} : (tensor<2x?xi64>) -> tensor<?x2xi64>
  %n1 = tensor.dim %tr1, %i0 : tensor<?x2xi64>
  %tokc1 = tensor.extract_slice %tr1[0, 0] [%n1, 1] [1, 1] : tensor<?x2xi64> to tensor<?x1xi64>
  %slotc1 = tensor.extract_slice %tr1[0, 1] [%n1, 1] [1, 1] : tensor<?x2xi64> to tensor<?x1xi64>
  %tok1 = tensor.collapse_shape %tokc1 [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
  %slot1 = tensor.collapse_shape %slotc1 [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
  %xg1 = tessel.gather %x, %tok1 {axis = 0 : i64} : tensor<4x2xf32>, tensor<?xi64> -> tensor<?x2xf32>
  %w1 = "tosa.const"() <{values = dense<[[2.0, 0.5]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %ym1 = tosa.mul %xg1, %w1, %sh : (tensor<?x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<?x2xf32>
  %y1 = tosa.clamp %ym1 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<?x2xf32>) -> tensor<?x2xf32>
  %tk1 = tosa.mul %tok1, %two, %sh : (tensor<?xi64>, tensor<1xi64>, tensor<1xi8>) -> tensor<?xi64>
  %fi1 = tosa.add %slot1, %tk1 : (tensor<?xi64>, tensor<?xi64>) -> tensor<?xi64>
  %wg1 = tessel.gather %wflat, %fi1 {axis = 0 : i64} : tensor<8x1xf32>, tensor<?xi64> -> tensor<?x1xf32>
  %u1 = tosa.mul %y1, %wg1, %sh : (tensor<?x2xf32>, tensor<?x1xf32>, tensor<1xi8>) -> tensor<?x2xf32>
  %ie1 = tensor.empty(%n1) : tensor<?x2xi64>
  %ib1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%tokc1 : tensor<?x1xi64>) outs(%ie1 : tensor<?x2xi64>) {
  ^bb0(%in: i64, %o: i64):
    linalg.yield %in : i64
  } -> tensor<?x2xi64>
  %s1 = tessel.scatter_elements %zeros, %ib1, %u1 {axis = 0 : i64} : tensor<4x2xf32>, tensor<?x2xi64>, tensor<?x2xf32> -> tensor<4x2xf32>
  %acc1 = tosa.add %s0, %s1 : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %c2 = "tosa.const"() <{values = dense<2> : tensor<1x1xi64>}> : () -> tensor<1x1xi64>
  %m2 = tosa.equal %idx, %c2 : (tensor<4x2xi64>, tensor<1x1xi64>) -> tensor<4x2xi1>
  %nz2 = tessel.nonzero %m2 : tensor<4x2xi1> -> tensor<2x?xi64>
  %tr2 = tosa.transpose %nz2 {perms = array<i32: 1, 0>} : (tensor<2x?xi64>) -> tensor<?x2xi64>
  %n2 = tensor.dim %tr2, %i0 : tensor<?x2xi64>
  %tokc2 = tensor.extract_slice %tr2[0, 0] [%n2, 1] [1, 1] : tensor<?x2xi64> to tensor<?x1xi64>
  %slotc2 = tensor.extract_slice %tr2[0, 1] [%n2, 1] [1, 1] : tensor<?x2xi64> to tensor<?x1xi64>
  %tok2 = tensor.collapse_shape %tokc2 [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
  %slot2 = tensor.collapse_shape %slotc2 [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
  %xg2 = tessel.gather %x, %tok2 {axis = 0 : i64} : tensor<4x2xf32>, tensor<?xi64> -> tensor<?x2xf32>
  %w2 = "tosa.const"() <{values = dense<[[3.0, 0.5]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %ym2 = tosa.mul %xg2, %w2, %sh : (tensor<?x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<?x2xf32>
  %y2 = tosa.clamp %ym2 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<?x2xf32>) -> tensor<?x2xf32>
  %tk2 = tosa.mul %tok2, %two, %sh : (tensor<?xi64>, tensor<1xi64>, tensor<1xi8>) -> tensor<?xi64>
  %fi2 = tosa.add %slot2, %tk2 : (tensor<?xi64>, tensor<?xi64>) -> tensor<?xi64>
  %wg2 = tessel.gather %wflat, %fi2 {axis = 0 : i64} : tensor<8x1xf32>, tensor<?xi64> -> tensor<?x1xf32>
  %u2 = tosa.mul %y2, %wg2, %sh : (tensor<?x2xf32>, tensor<?x1xf32>, tensor<1xi8>) -> tensor<?x2xf32>
  %ie2 = tensor.empty(%n2) : tensor<?x2xi64>
  %ib2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%tokc2 : tensor<?x1xi64>) outs(%ie2 : tensor<?x2xi64>) {
  ^bb0(%in: i64, %o: i64):
    linalg.yield %in : i64
  } -> tensor<?x2xi64>
  %s2 = tessel.scatter_elements %zeros, %ib2, %u2 {axis = 0 : i64} : tensor<4x2xf32>, tensor<?x2xi64>, tensor<?x2xf32> -> tensor<4x2xf32>
  %acc2 = tosa.add %acc1, %s2 : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  return %acc2 : tensor<4x2xf32>
}
