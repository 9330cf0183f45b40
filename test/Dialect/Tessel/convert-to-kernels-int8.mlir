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

// Run-time weights are packed at run time (a linalg.pack of the same
// layout, lowered to pad + reshape + transpose; the kernel sums the
// columns); run-time zero points and unsigned casts stay linalg.
// CHECK-LABEL: func.func @stays
// CHECK: linalg.transpose ins(%{{.*}} : tensor<1x1x4x1x4xi8>) outs(%{{.*}} : tensor<1x1x1x4x4xi8>) permutation = [0, 3, 1, 4, 2]
// CHECK: tessel.packed_matmul_i8 ins(%arg0, %{{.*}} : tensor<1x3x4xi8>, tensor<1x1x1x4x4xi8>) outs(%arg3 : tensor<1x3x2xi32>) {a_signed, a_zp = 0 : i32, accumulate, b_zp = 0 : i32}
// CHECK-NOT: column_sums
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

// -----

// An integer convolution (tosa-to-linalg's form: input padded with its zero
// point) is the convolution form of tessel.packed_matmul_i8: the kernel
// reads the im2col rows in place (stride 2 here), so no copy is made; the
// 3x3x2 filter is packed as an 18 x 4 matrix in 5 groups of 4 k. The
// zero-bias broadcast init is overwritten, not accumulated.
// CHECK-LABEL: func.func @conv3x3
// CHECK-NOT: linalg.generic
// CHECK: %[[E:.*]] = tensor.empty() : tensor<1x3x3x4xi32>
// CHECK: %[[Y:.*]] = tessel.packed_matmul_i8 ins(%arg0, %{{.*}} : tensor<1x7x7x2xi8>, tensor<1x5x4x4xi8>) column_sums(%{{.*}} : tensor<4xi32>) outs(%[[E]] : tensor<1x3x3x4xi32>) {a_signed, a_zp = 3 : i32, b_zp = 0 : i32, dilations = array<i64: 1, 1>, kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>}
// CHECK-NEXT: return %[[Y]]
#bcast = affine_map<(d0, d1, d2, d3) -> (d3)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @conv3x3(%x: tensor<1x7x7x2xi8>) -> tensor<1x3x3x4xi32> {
  %w = arith.constant dense<1> : tensor<4x3x3x2xi8>
  %za = arith.constant 3 : i32
  %zb = arith.constant 0 : i32
  %zero = arith.constant dense<0> : tensor<4xi32>
  %e = tensor.empty() : tensor<1x3x3x4xi32>
  %init = linalg.generic {indexing_maps = [#bcast, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%zero : tensor<4xi32>) outs(%e : tensor<1x3x3x4xi32>) {
  ^bb0(%in: i32, %out: i32):
    linalg.yield %in : i32
  } -> tensor<1x3x3x4xi32>
  %y = linalg.conv_2d_nhwc_fhwc_q {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%x, %w, %za, %zb : tensor<1x7x7x2xi8>, tensor<4x3x3x2xi8>, i32, i32)
      outs(%init : tensor<1x3x3x4xi32>) -> tensor<1x3x3x4xi32>
  return %y : tensor<1x3x3x4xi32>
}

// -----

// Weights stored transposed (a 1x1 convolution's F x C filter as the C x F
// matmul operand, tosa-to-linalg's linalg.transpose + expand_shape of the
// constant) are packed at compile time too, the same packing and sums as
// @quantized, with no linalg.pack left to run.
// CHECK-LABEL: func.func @transposed_constant
// CHECK-DAG: %[[W:.*]] = arith.constant dense<{{\[}}{{\[}}{{\[}}[1, 4, 7, 10], [2, 5, 8, 11], [3, 6, 9, 12], [0, 0, 0, 0]], {{\[}}[13, 0, 0, 0], [14, 0, 0, 0], [15, 0, 0, 0], [0, 0, 0, 0]]]]> : tensor<1x2x4x4xi8>
// CHECK-DAG: %[[S:.*]] = arith.constant dense<[35, 40, 45]> : tensor<3xi32>
// CHECK: tessel.packed_matmul_i8 ins(%{{.*}}, %[[W]] : tensor<1x2x5xi8>, tensor<1x2x4x4xi8>) column_sums(%[[S]] : tensor<3xi32>)
// CHECK-NOT: linalg.pack
// CHECK-NOT: linalg.transpose
func.func @transposed_constant(%a: tensor<1x2x5xi8>) -> tensor<1x2x3xi32> {
  %wt = arith.constant dense<[[1, 4, 7, 10, 13], [2, 5, 8, 11, 14], [3, 6, 9, 12, 15]]> : tensor<3x5xi8>
  %te = tensor.empty() : tensor<5x3xi8>
  %t = linalg.transpose ins(%wt : tensor<3x5xi8>) outs(%te : tensor<5x3xi8>) permutation = [1, 0]
  %w = tensor.expand_shape %t [[0, 1], [2]] output_shape [1, 5, 3] : tensor<5x3xi8> into tensor<1x5x3xi8>
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

// tosa-to-linalg's form of an int8 depthwise convolution (tessel-fold-qdq
// makes it): the zero-point padding is absorbed (the kernel reads the zero
// point outside the input), the constant weights are packed with 4 kernel
// rows side by side and channels padded to 16,
// packed[g][kw][c][j] = w[4g + j][kw][c], with their sums per channel; the
// add of the zero bias goes.
// CHECK-LABEL: func.func @depthwise
// CHECK-DAG: %[[W:.*]] = arith.constant dense<{{\[}}{{\[}}{{\[}}[1, 3, 0, 0], [2, 4, 0, 0], [0, 0, 0, 0],
// CHECK-DAG: %[[S:.*]] = arith.constant dense<[4, 6]> : tensor<2xi32>
// CHECK: %[[D:.*]] = tessel.depthwise_conv2d_i8 ins(%arg0, %[[W]] : tensor<1x4x3x2xi8>, tensor<1x1x16x4xi8>) column_sums(%[[S]] : tensor<2xi32>) outs(%{{.*}} : tensor<1x5x3x2xi32>) {a_signed, a_zp = 5 : i32, dilations = array<i64: 1, 1>, kernel_size = array<i64: 2, 1>, pad = array<i64: 1, 1, 0, 0>, strides = array<i64: 1, 1>} -> tensor<1x5x3x2xi32>
// CHECK-NOT: linalg.generic
// CHECK: return %[[D]]
func.func @depthwise(%x: tensor<1x4x3x2xi8>) -> tensor<1x5x3x2xi32> {
  %w = arith.constant dense<[[[[1], [2]]], [[[3], [4]]]]> : tensor<2x1x2x1xi8>
  %bias = arith.constant dense<0> : tensor<2xi32>
  %c5 = arith.constant 5 : i8
  %za = arith.constant 5 : i32
  %zb = arith.constant 0 : i32
  %c0 = arith.constant 0 : i32
  %p = tensor.pad %x low[0, 1, 0, 0] high[0, 1, 0, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %c5 : i8
  } : tensor<1x4x3x2xi8> to tensor<1x6x3x2xi8>
  %e = tensor.empty() : tensor<1x5x3x2x1xi32>
  %f = linalg.fill ins(%c0 : i32) outs(%e : tensor<1x5x3x2x1xi32>) -> tensor<1x5x3x2x1xi32>
  %d = linalg.depthwise_conv_2d_nhwc_hwcm_q {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%p, %w, %za, %zb : tensor<1x6x3x2xi8>, tensor<2x1x2x1xi8>, i32, i32)
      outs(%f : tensor<1x5x3x2x1xi32>) -> tensor<1x5x3x2x1xi32>
  %c = tensor.collapse_shape %d [[0], [1], [2], [3, 4]] : tensor<1x5x3x2x1xi32> into tensor<1x5x3x2xi32>
  %e4 = tensor.empty() : tensor<1x5x3x2xi32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%bias, %c : tensor<2xi32>, tensor<1x5x3x2xi32>) outs(%e4 : tensor<1x5x3x2xi32>) {
  ^bb0(%b: i32, %v: i32, %o: i32):
    %s = arith.addi %b, %v : i32
    linalg.yield %s : i32
  } -> tensor<1x5x3x2xi32>
  return %r : tensor<1x5x3x2xi32>
}

// -----

// Weights with a zero point, a channel multiplier of 2 and run-time weights
// have no int8 depthwise kernel: they stay linalg.
// CHECK-LABEL: func.func @depthwise_stays
// CHECK-NOT: tessel.depthwise_conv2d_i8
// CHECK-COUNT-3: linalg.depthwise_conv_2d_nhwc_hwcm
func.func @depthwise_stays(%x: tensor<1x4x3x2xi8>, %wr: tensor<2x1x2x1xi8>) -> (tensor<1x3x3x2x1xi32>, tensor<1x3x3x2x2xi32>, tensor<1x3x3x2x1xi32>) {
  %w = arith.constant dense<1> : tensor<2x1x2x1xi8>
  %w2 = arith.constant dense<1> : tensor<2x1x2x2xi8>
  %za = arith.constant 5 : i32
  %zb = arith.constant 1 : i32
  %c0 = arith.constant 0 : i32
  %e = tensor.empty() : tensor<1x3x3x2x1xi32>
  %f = linalg.fill ins(%c0 : i32) outs(%e : tensor<1x3x3x2x1xi32>) -> tensor<1x3x3x2x1xi32>
  %d = linalg.depthwise_conv_2d_nhwc_hwcm_q {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w, %za, %zb : tensor<1x4x3x2xi8>, tensor<2x1x2x1xi8>, i32, i32)
      outs(%f : tensor<1x3x3x2x1xi32>) -> tensor<1x3x3x2x1xi32>
  %e2 = tensor.empty() : tensor<1x3x3x2x2xi32>
  %f2 = linalg.fill ins(%c0 : i32) outs(%e2 : tensor<1x3x3x2x2xi32>) -> tensor<1x3x3x2x2xi32>
  %d2 = linalg.depthwise_conv_2d_nhwc_hwcm {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w2 : tensor<1x4x3x2xi8>, tensor<2x1x2x2xi8>)
      outs(%f2 : tensor<1x3x3x2x2xi32>) -> tensor<1x3x3x2x2xi32>
  %d3 = linalg.depthwise_conv_2d_nhwc_hwcm {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %wr : tensor<1x4x3x2xi8>, tensor<2x1x2x1xi8>)
      outs(%f : tensor<1x3x3x2x1xi32>) -> tensor<1x3x3x2x1xi32>
  return %d, %d2, %d3 : tensor<1x3x3x2x1xi32>, tensor<1x3x3x2x2xi32>, tensor<1x3x3x2x1xi32>
}
