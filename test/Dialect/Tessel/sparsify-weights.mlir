// One lane (vector-bits=32): the cases below test the analysis, not the
// lanes a small M leaves empty (8 lanes in the LANES run).
// RUN: rm -f %t.report %t.lanes %t.avx512
// RUN: tessel-opt %s -split-input-file -tessel-sparsify-weights="report=%t.report vector-bits=32" | FileCheck %s
// RUN: cat %t.report | FileCheck %s --check-prefix=REPORT
// RUN: tessel-opt %s -split-input-file -tessel-sparsify-weights="min-speedup=100 vector-bits=32" | FileCheck %s --check-prefix=STRICT
// RUN: tessel-opt %s -split-input-file -tessel-sparsify-weights="report=%t.lanes vector-bits=256" > /dev/null
// RUN: cat %t.lanes | FileCheck %s --check-prefix=LANES
// RUN: tessel-opt %s -split-input-file -tessel-sparsify-weights="report=%t.avx512 vector-bits=512" > /dev/null
// RUN: cat %t.avx512 | FileCheck %s --check-prefix=AVX512
// RUN: not tessel-opt %s -split-input-file -tessel-sparsify-weights="vector-bits=16" 2>&1 | FileCheck %s --check-prefix=BITS
// BITS: error: vector-bits must be at least 32
// AVX-512's rates (measured on Intel Sapphire Rapids): 1x1 blocks pay
// less than with AVX2 (0.15 of the dense rate, not 0.25), and 16 lanes
// leave a 3-row matmul 13 of them empty.
// AVX512: linalg.matmul M=3 K=8 N=6 zeros=0.938 best=1x1 density=0.062 predicted=0.84x -> dense
// AVX512: linalg.batch_matmul M=? K=16 N=7 zeros=0.973 best=4x1 density=0.036 predicted=12.60x -> sparse
// AVX512: linalg.conv_2d_nhwc_fhwc M=32 K=8 N=3 zeros=0.917 best=1x1 density=0.083 predicted=3.36x -> sparse

// 3 of 8 lanes filled: the prediction is 3/8 of the one-lane one (4.00x);
// one row of 8 lanes (@accumulates) does not pay.
// LANES: linalg.matmul M=3 K=8 N=6 zeros=0.938 best=1x1 density=0.062 predicted=1.68x -> sparse
// LANES: linalg.matmul M=1 K=4 N=4 zeros=0.938 best=1x1 density=0.062 predicted=0.56x -> dense

// 3 nonzeros of 48: unstructured (1 x 1 blocks, density 1/16) is
// predicted best (2 x 1 blocks would store 4 values); the zero fill is not
// read.
// CHECK-LABEL: func @unstructured
// CHECK-DAG: %[[P:.*]] = arith.constant dense<[0, 1, 2, 2, 2, 3, 3]> : tensor<7xi32>
// CHECK-DAG: %[[K:.*]] = arith.constant dense<[1, 1, 3]> : tensor<3xi32>
// CHECK-DAG: %[[V:.*]] = arith.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>
// CHECK-DAG: %[[E:.*]] = tensor.empty() : tensor<3x6xf32>
// CHECK: %[[R:.*]] = tessel.sparse_matmul ins(%arg0, %[[P]], %[[K]], %[[V]] : tensor<3x8xf32>, tensor<7xi32>, tensor<3xi32>, tensor<3xf32>) outs(%[[E]] : tensor<3x6xf32>) {block_size = 1 : i64} -> tensor<3x6xf32>
// CHECK-NOT: linalg.matmul
// CHECK: return %[[R]]
// REPORT: linalg.matmul M=3 K=8 N=6 zeros=0.938 best=1x1 density=0.062 predicted=4.48x -> sparse
// STRICT-LABEL: func @unstructured
// STRICT: linalg.matmul
// STRICT-NOT: tessel.sparse_matmul
func.func @unstructured(%a: tensor<3x8xf32>) -> tensor<3x6xf32> {
  %b = arith.constant dense<[[0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [1.0, 2.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 3.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<8x6xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x6xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<3x6xf32>) -> tensor<3x6xf32>
  %r = linalg.matmul ins(%a, %b : tensor<3x8xf32>, tensor<8x6xf32>) outs(%f : tensor<3x6xf32>) -> tensor<3x6xf32>
  return %r : tensor<3x6xf32>
}

// -----

// Whole 4 x 1 blocks (columns 4..7 at k = 2, the last padded with 0), a
// dynamic M, a batch of one (tosa.matmul's form) and a broadcast bias as
// the init: the 2-D problem, the bias as the op's.
// CHECK-LABEL: func @blocks_batch_bias
// CHECK-DAG: %[[P:.*]] = arith.constant dense<[0, 0, 1]> : tensor<3xi32>
// CHECK-DAG: %[[K:.*]] = arith.constant dense<2> : tensor<1xi32>
// CHECK-DAG: %[[V:.*]] = arith.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 0.000000e+00]> : tensor<4xf32>
// CHECK: %[[A:.*]] = tensor.collapse_shape %arg0 {{\[}}[0, 1], [2]] : tensor<1x?x16xf32> into tensor<?x16xf32>
// CHECK: %[[S:.*]] = tessel.sparse_matmul ins(%[[A]], %[[P]], %[[K]], %[[V]] : tensor<?x16xf32>, tensor<3xi32>, tensor<1xi32>, tensor<4xf32>) bias(%arg1 : tensor<7xf32>) outs(%{{.*}} : tensor<?x7xf32>) {block_size = 4 : i64}
// CHECK: tensor.expand_shape %[[S]] {{\[}}[0, 1], [2]]
// REPORT: linalg.batch_matmul M=? K=16 N=7 zeros=0.973 best=4x1 density=0.036 predicted=12.60x -> sparse
#bias = affine_map<(d0, d1, d2) -> (d2)>
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @blocks_batch_bias(%a: tensor<1x?x16xf32>, %bias: tensor<7xf32>) -> tensor<1x?x7xf32> {
  %b = arith.constant dense<[[[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 1.0, 2.0, 3.0],
      [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
      [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
      [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
      [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]]> : tensor<1x16x7xf32>
  %c1 = arith.constant 1 : index
  %m = tensor.dim %a, %c1 : tensor<1x?x16xf32>
  %e = tensor.empty(%m) : tensor<1x?x7xf32>
  %init = linalg.generic {indexing_maps = [#bias, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%bias : tensor<7xf32>) outs(%e : tensor<1x?x7xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<1x?x7xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<1x?x16xf32>, tensor<1x16x7xf32>) outs(%init : tensor<1x?x7xf32>) -> tensor<1x?x7xf32>
  return %r : tensor<1x?x7xf32>
}

// -----

// Dense weights stay dense (the report says why), and so do weights that
// are not constant and batches of more than one.
// CHECK-LABEL: func @stays_dense
// CHECK-NOT: tessel.sparse_matmul
// CHECK: linalg.matmul
// CHECK: linalg.matmul
// CHECK: linalg.batch_matmul
// REPORT: linalg.matmul M=2 K=2 N=2 zeros=0.250 best=1x1 density=0.750 predicted=0.37x -> dense
// REPORT-NOT: M=2 K=2 N=2
func.func @stays_dense(%a: tensor<2x2xf32>, %w: tensor<2x2xf32>, %a3: tensor<2x2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2x2xf32>) {
  %b = arith.constant dense<[[1.0, 2.0], [0.0, 4.0]]> : tensor<2x2xf32>
  %b3 = arith.constant dense<0.0> : tensor<2x2x2xf32>
  %e = tensor.empty() : tensor<2x2xf32>
  %e3 = tensor.empty() : tensor<2x2x2xf32>
  %r = linalg.matmul ins(%a, %b : tensor<2x2xf32>, tensor<2x2xf32>) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
  %s = linalg.matmul ins(%a, %w : tensor<2x2xf32>, tensor<2x2xf32>) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
  %t = linalg.batch_matmul ins(%a3, %b3 : tensor<2x2x2xf32>, tensor<2x2x2xf32>) outs(%e3 : tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
  return %r, %s, %t : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2x2xf32>
}

// -----

// An init that is neither a zero fill nor a broadcast bias is added
// (accumulate); all-zero weights have no blocks and stay dense.
// CHECK-LABEL: func @accumulates
// CHECK: tessel.sparse_matmul {{.*}} outs(%arg1 : tensor<1x4xf32>) {accumulate, block_size = 1 : i64}
// CHECK: linalg.matmul
// REPORT: linalg.matmul M=1 K=4 N=4 zeros=0.938 best=1x1 density=0.062 predicted=4.48x -> sparse
// REPORT: linalg.matmul M=1 K=4 N=4 zeros=1.000 -> dense
func.func @accumulates(%a: tensor<1x4xf32>, %c: tensor<1x4xf32>) -> (tensor<1x4xf32>, tensor<1x4xf32>) {
  %b = arith.constant dense<[[0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 5.0, 0.0], [0.0, 0.0, 0.0, 0.0]]> : tensor<4x4xf32>
  %z = arith.constant dense<0.0> : tensor<4x4xf32>
  %r = linalg.matmul ins(%a, %b : tensor<1x4xf32>, tensor<4x4xf32>) outs(%c : tensor<1x4xf32>) -> tensor<1x4xf32>
  %s = linalg.matmul ins(%a, %z : tensor<1x4xf32>, tensor<4x4xf32>) outs(%c : tensor<1x4xf32>) -> tensor<1x4xf32>
  return %r, %s : tensor<1x4xf32>, tensor<1x4xf32>
}

// -----

// A 1x1, stride-1 convolution is the matmul of its pixels by the filter's
// transpose (B[c][f] = filter[f][0][0][c]): 2 of 8 channels feed filter 1
// (c = 0 and 3). A 3x3 one is left alone.
// CHECK-LABEL: func @conv1x1
// CHECK-DAG: %[[P:.*]] = arith.constant dense<[0, 0, 2, 2]> : tensor<4xi32>
// CHECK-DAG: %[[K:.*]] = arith.constant dense<[0, 3]> : tensor<2xi32>
// CHECK-DAG: %[[V:.*]] = arith.constant dense<[5.000000e+00, 7.000000e+00]> : tensor<2xf32>
// CHECK: %[[X:.*]] = tensor.collapse_shape %arg0 {{\[}}[0, 1, 2], [3]] : tensor<2x4x4x8xf32> into tensor<32x8xf32>
// CHECK: %[[S:.*]] = tessel.sparse_matmul ins(%[[X]], %[[P]], %[[K]], %[[V]] : tensor<32x8xf32>, tensor<4xi32>, tensor<2xi32>, tensor<2xf32>) outs(%{{.*}} : tensor<32x3xf32>) {block_size = 1 : i64}
// CHECK: tensor.expand_shape %[[S]] {{\[}}[0, 1, 2], [3]] output_shape [2, 4, 4, 3] : tensor<32x3xf32> into tensor<2x4x4x3xf32>
// CHECK: linalg.conv_2d_nhwc_fhwc
// REPORT: linalg.conv_2d_nhwc_fhwc M=32 K=8 N=3 zeros=0.917 best=1x1 density=0.083 predicted=3.36x -> sparse
// REPORT-NOT: conv_2d{{.*}}M=16 
func.func @conv1x1(%x: tensor<2x4x4x8xf32>, %y: tensor<1x6x6x8xf32>) -> (tensor<2x4x4x3xf32>, tensor<1x4x4x3xf32>) {
  %w = arith.constant dense<[[[[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]],
                            [[[5.0, 0.0, 0.0, 7.0, 0.0, 0.0, 0.0, 0.0]]],
                            [[[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]]]> : tensor<3x1x1x8xf32>
  %w3 = arith.constant dense<0.5> : tensor<3x3x3x8xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x4x3xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<2x4x4x3xf32>) -> tensor<2x4x4x3xf32>
  %r = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<2x4x4x8xf32>, tensor<3x1x1x8xf32>) outs(%f : tensor<2x4x4x3xf32>) -> tensor<2x4x4x3xf32>
  %e3 = tensor.empty() : tensor<1x4x4x3xf32>
  %f3 = linalg.fill ins(%z : f32) outs(%e3 : tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
  %r3 = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%y, %w3 : tensor<1x6x6x8xf32>, tensor<3x3x3x8xf32>) outs(%f3 : tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
  return %r, %r3 : tensor<2x4x4x3xf32>, tensor<1x4x4x3xf32>
}

// -----

// The same weights over 65536 pixels: the kernel's transposition of the
// 65536 x 8 activations (beyond the L2) would cost more than the zeros
// save, 128 dense multiply-adds per activation over 3 output columns.
// CHECK-LABEL: func @conv1x1_many_pixels
// CHECK-NOT: tessel.sparse_matmul
// CHECK: linalg.conv_2d_nhwc_fhwc
// REPORT: linalg.conv_2d_nhwc_fhwc M=65536 K=8 N=3 zeros=0.917 best=1x1 density=0.083 predicted=0.02x -> dense
func.func @conv1x1_many_pixels(%x: tensor<1x256x256x8xf32>) -> tensor<1x256x256x3xf32> {
  %w = arith.constant dense<[[[[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]],
                            [[[5.0, 0.0, 0.0, 7.0, 0.0, 0.0, 0.0, 0.0]]],
                            [[[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]]]> : tensor<3x1x1x8xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x256x256x3xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x256x256x3xf32>) -> tensor<1x256x256x3xf32>
  %r = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x256x256x8xf32>, tensor<3x1x1x8xf32>) outs(%f : tensor<1x256x256x3xf32>) -> tensor<1x256x256x3xf32>
  return %r : tensor<1x256x256x3xf32>
}
