// RUN: tessel-opt %s -split-input-file -tessel-convert-to-kernels=panel-width=4 -canonicalize | FileCheck %s

// tosa-to-linalg's form of tessel-fold-qdq's integer matmul: constant i8
// weights packed at compile time in panels of 4 columns and groups of 4 k,
// packed[p][g][j][t] = W[g*4 + t][p*4 + j], zero-padded (K = 5 -> 2 groups),
// with their column sums; the zero fill becomes the overwritten init.
// CHECK-LABEL: func.func @quantized
// CHECK-DAG: %[[W:.*]] = arith.constant dense<{{\[}}{{\[}}{{\[}}[1, 4, 7, 10], [2, 5, 8, 11], [3, 6, 9, 12], [0, 0, 0, 0]], {{\[}}[13, 0, 0, 0], [14, 0, 0, 0], [15, 0, 0, 0], [0, 0, 0, 0]]]]> : tensor<1x2x4x4xi8>
// CHECK-DAG: %[[S:.*]] = arith.constant dense<[35, 40, 45]> : tensor<3xi32>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<1x2x3xi32>
// CHECK: tessel.packed_matmul_i8 ins(%{{.*}}, %[[W]] : tensor<1x2x5xi8>, tensor<1x2x4x4xi8>) column_sums(%[[S]] : tensor<3xi32>) outs(%[[E]] : tensor<1x2x3xi32>) {a_signed, a_zp = 2 : i32, b_zp = -1 : i32}
// CHECK-NOT: linalg.quantized_batch_matmul
func.func @quantized(%a: tensor<1x2x5xi8>) -> tensor<1x2x3xi32> {
  %w = arith.constant dense<[[[1, 2, 3], [4, 5, 6], [7, 8, 9], [10, 11, 12], [13, 14, 15]]]> : tensor<1x5x3xi8>
  %za = arith.constant 2 : i32
  %zb = arith.constant -1 : i32
  %c0 = arith.constant 0 : i32
  %e = tensor.empty() : tensor<1x2x3xi32>
  %f = linalg.fill ins(%c0 : i32) outs(%e : tensor<1x2x3xi32>) -> tensor<1x2x3xi32>
  %r = linalg.quantized_batch_matmul ins(%a, %w, %za, %zb : tensor<1x2x5xi8>, tensor<1x5x3xi8>, i32, i32)
      outs(%f : tensor<1x2x3xi32>) -> tensor<1x2x3xi32>
  return %r : tensor<1x2x3xi32>
}

// -----

// Without zero points (an integer batch_matmul), one weight matrix per batch
// entry (rank-5 packing), accumulating into a non-zero init.
// CHECK-LABEL: func.func @batched_accumulate
// CHECK: tessel.packed_matmul_i8 ins(%{{.*}}, %{{.*}} : tensor<2x3x4xi8>, tensor<2x1x1x4x4xi8>) column_sums(%{{.*}} : tensor<2x2xi32>) outs(%{{.*}} : tensor<2x3x2xi32>) {a_signed, a_zp = 0 : i32, accumulate, b_zp = 0 : i32}
func.func @batched_accumulate(%a: tensor<2x3x4xi8>, %init: tensor<2x3x2xi32>) -> tensor<2x3x2xi32> {
  %w = arith.constant dense<1> : tensor<2x4x2xi8>
  %r = linalg.batch_matmul ins(%a, %w : tensor<2x3x4xi8>, tensor<2x4x2xi8>)
      outs(%init : tensor<2x3x2xi32>) -> tensor<2x3x2xi32>
  return %r : tensor<2x3x2xi32>
}

// -----

// What stays: run-time weights, run-time zero points, unsigned casts.
// CHECK-LABEL: func.func @stays
// CHECK-NOT: tessel.packed_matmul_i8
// CHECK: linalg.batch_matmul
// CHECK: linalg.quantized_batch_matmul
// CHECK: linalg.batch_matmul
func.func @stays(%a: tensor<1x3x4xi8>, %b: tensor<1x4x2xi8>, %zp: i32, %init: tensor<1x3x2xi32>)
    -> (tensor<1x3x2xi32>, tensor<1x3x2xi32>, tensor<1x3x2xi32>) {
  %w = arith.constant dense<1> : tensor<1x4x2xi8>
  %r0 = linalg.batch_matmul ins(%a, %b : tensor<1x3x4xi8>, tensor<1x4x2xi8>)
      outs(%init : tensor<1x3x2xi32>) -> tensor<1x3x2xi32>
  %r1 = linalg.quantized_batch_matmul ins(%a, %w, %zp, %zp : tensor<1x3x4xi8>, tensor<1x4x2xi8>, i32, i32)
      outs(%init : tensor<1x3x2xi32>) -> tensor<1x3x2xi32>
  %r2 = linalg.batch_matmul {cast = #linalg.type_fn<cast_unsigned>} ins(%a, %w : tensor<1x3x4xi8>, tensor<1x4x2xi8>)
      outs(%init : tensor<1x3x2xi32>) -> tensor<1x3x2xi32>
  return %r0, %r1, %r2 : tensor<1x3x2xi32>, tensor<1x3x2xi32>, tensor<1x3x2xi32>
}
