// One lane (vector-bits=32) and nothing for moving elements
// (moved-element-cost=0): the cases below test the analysis and the
// rewrite, not the lanes a small M leaves empty (8 lanes in the LANES run)
// or the moves, which on these small shapes cost more than any product
// saved (the DEFAULT run).
// RUN: rm -f %t.report %t.nmlanes %t.lanes %t.avx512 %t.half %t.default %t.defhalf %t.winograd
// RUN: tessel-opt %s -split-input-file -tessel-sparsify-weights="report=%t.report vector-bits=32 moved-element-cost=0" | FileCheck %s
// RUN: cat %t.report | FileCheck %s --check-prefix=REPORT
// RUN: tessel-opt %s -split-input-file -tessel-sparsify-weights="min-speedup=100 vector-bits=32 moved-element-cost=0" | FileCheck %s --check-prefix=STRICT
// RUN: tessel-opt %s -split-input-file -tessel-sparsify-weights="report=%t.lanes vector-bits=256 moved-element-cost=0" > /dev/null
// RUN: cat %t.lanes | FileCheck %s --check-prefix=LANES
// RUN: tessel-opt %s -split-input-file -tessel-sparsify-weights="report=%t.avx512 vector-bits=512 moved-element-cost=0" > /dev/null
// RUN: cat %t.avx512 | FileCheck %s --check-prefix=AVX512
// RUN: tessel-opt %s -split-input-file -tessel-sparsify-weights="report=%t.half vector-bits=512 fma-bits=256 moved-element-cost=0" > /dev/null
// RUN: cat %t.half | FileCheck %s --check-prefix=HALF
// RUN: tessel-opt %s -split-input-file -tessel-sparsify-weights="report=%t.default" > /dev/null
// RUN: cat %t.default | FileCheck %s --check-prefix=DEFAULT
// RUN: tessel-opt %s -split-input-file -tessel-sparsify-weights="report=%t.defhalf fma-bits=256" > /dev/null
// RUN: cat %t.defhalf | FileCheck %s --check-prefix=DEFHALF
// RUN: tessel-opt %s -split-input-file -tessel-sparsify-weights="report=%t.winograd vector-bits=32 moved-element-cost=0 winograd-min-channels=2" > /dev/null
// RUN: cat %t.winograd | FileCheck %s --check-prefix=WINOGRAD
// RUN: tessel-opt %s -split-input-file -tessel-sparsify-weights="report=%t.nmlanes vector-bits=512 moved-element-cost=0 lane-order=1" | FileCheck %s --check-prefix=NMLANES
// RUN: cat %t.nmlanes | FileCheck %s --check-prefix=NMLANES-REPORT
// RUN: not tessel-opt %s -split-input-file -tessel-sparsify-weights="vector-bits=16" 2>&1 | FileCheck %s --check-prefix=BITS
// RUN: not tessel-opt %s -split-input-file -tessel-sparsify-weights="moved-element-cost=nan" 2>&1 | FileCheck %s --check-prefix=COST
// BITS: error: vector-bits must be at least 32
// COST: error: moved-element-cost must be a number
// AVX-512's rates (measured on Intel Sapphire Rapids): 1x1 blocks pay
// less than with AVX2 (0.30 of the dense kernel's rate, not 0.43), and 16
// lanes leave a 3-row matmul 13 of them empty.
// AVX512: linalg.matmul M=3 K=8 N=6 zeros=0.938 best=1x1 density=0.062 predicted=0.39x -> dense
// AVX512: linalg.batch_matmul M=? K=16 N=7 zeros=0.973 best=4x1 density=0.036 predicted=16.80x -> sparse
// AVX512: linalg.conv_2d_nhwc_fhwc M=32 K=8 N=3 zeros=0.917 best=1x1 density=0.083 predicted=2.52x -> sparse
// AVX-512 on 256-bit FMA units (AMD Zen 4): the dense kernel runs one
// 512-bit FMA a cycle, and the sparse one keeps closer pace (1x1: 0.45;
// 4x1: 0.91; measured by bench/sparse_ratios.py): the convolution gains
// more, but the 3-row matmul, one vector a tile, still does not pay.
// HALF: linalg.matmul M=3 K=8 N=6 zeros=0.938 best=1x1 density=0.062 predicted=0.59x -> dense
// HALF: linalg.batch_matmul M=? K=16 N=7 zeros=0.973 best=4x1 density=0.036 predicted=25.48x -> sparse
// HALF: linalg.conv_2d_nhwc_fhwc M=32 K=8 N=3 zeros=0.917 best=1x1 density=0.083 predicted=3.78x -> sparse

// 3 of 8 lanes filled, and one vector a tile where one lane made three
// (tileRowsFactor: a tile of tm vectors runs at tm / (tm + 3), 1/4
// against 1/2): 3/8 x 1/2 of the one-lane prediction (6.02x), which no
// longer pays; nor does one row of 8 lanes (@accumulates).
// LANES: linalg.matmul M=3 K=8 N=6 zeros=0.938 best=1x1 density=0.062 predicted=1.13x -> dense
// LANES: linalg.matmul M=1 K=4 N=4 zeros=0.938 best=1x1 density=0.062 predicted=0.38x -> dense

// 3 nonzeros of 48: unstructured (1 x 1 blocks, density 1/16) is
// predicted best (2 x 1 blocks would store 4 values); the zero fill is not
// read.
// CHECK-LABEL: func @unstructured
// CHECK-DAG: %[[P:.*]] = arith.constant dense<[0, 1, 2, 2, 2, 3, 3]> : tensor<7xi32>
// CHECK-DAG: %[[K:.*]] = arith.constant dense<[1, 1, 3]> : tensor<3xi32>
// CHECK-DAG: %[[V:.*]] = arith.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>
// CHECK-DAG: %[[E:.*]] = tensor.empty() : tensor<3x6xf32>
// CHECK: %[[R:.*]] = tessel.sparse_matmul ins(%arg0, %[[P]], %[[K]], %[[V]] : tensor<3x8xf32>, tensor<7xi32>, tensor<3xi32>, tensor<3xf32>) outs(%[[E]] : tensor<3x6xf32>) {block_size = 1 : i64, k_ascending} -> tensor<3x6xf32>
// CHECK-NOT: linalg.matmul
// CHECK: return %[[R]]
// REPORT: linalg.matmul M=3 K=8 N=6 zeros=0.938 best=1x1 density=0.062 predicted=6.02x -> sparse
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
// CHECK: %[[S:.*]] = tessel.sparse_matmul ins(%[[A]], %[[P]], %[[K]], %[[V]] : tensor<?x16xf32>, tensor<3xi32>, tensor<1xi32>, tensor<4xf32>) bias(%arg1 : tensor<7xf32>) outs(%{{.*}} : tensor<?x7xf32>) {block_size = 4 : i64, k_ascending}
// CHECK: tensor.expand_shape %[[S]] {{\[}}[0, 1], [2]]
// REPORT: linalg.batch_matmul M=? K=16 N=7 zeros=0.973 best=4x1 density=0.036 predicted=25.20x -> sparse
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
// REPORT: linalg.matmul M=2 K=2 N=2 zeros=0.250 best=1x1 density=0.750 predicted=0.40x -> dense
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
// CHECK: tessel.sparse_matmul {{.*}} outs(%arg1 : tensor<1x4xf32>) {accumulate, block_size = 1 : i64, k_ascending}
// CHECK: linalg.matmul
// REPORT: linalg.matmul M=1 K=4 N=4 zeros=0.938 best=1x1 density=0.062 predicted=3.01x -> sparse
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
// (c = 0 and 3). A 3x3 one without zeros stays dense.
// CHECK-LABEL: func @conv1x1
// CHECK-DAG: %[[P:.*]] = arith.constant dense<[0, 0, 2, 2]> : tensor<4xi32>
// CHECK-DAG: %[[K:.*]] = arith.constant dense<[0, 3]> : tensor<2xi32>
// CHECK-DAG: %[[V:.*]] = arith.constant dense<[5.000000e+00, 7.000000e+00]> : tensor<2xf32>
// CHECK: %[[X:.*]] = tensor.collapse_shape %arg0 {{\[}}[0, 1, 2], [3]] : tensor<2x4x4x8xf32> into tensor<32x8xf32>
// CHECK: %[[S:.*]] = tessel.sparse_matmul ins(%[[X]], %[[P]], %[[K]], %[[V]] : tensor<32x8xf32>, tensor<4xi32>, tensor<2xi32>, tensor<2xf32>) outs(%{{.*}} : tensor<32x3xf32>) {block_size = 1 : i64, k_ascending}
// CHECK: tensor.expand_shape %[[S]] {{\[}}[0, 1, 2], [3]] output_shape [2, 4, 4, 3] : tensor<32x3xf32> into tensor<2x4x4x3xf32>
// CHECK: linalg.conv_2d_nhwc_fhwc
// REPORT: linalg.conv_2d_nhwc_fhwc M=32 K=8 N=3 zeros=0.917 best=1x1 density=0.083 predicted=5.16x -> sparse
// The 3x3 one, with no zeros, stays dense.
// REPORT: linalg.conv_2d_nhwc_fhwc M=16 K=72 N=3 zeros=0.000 best=4x1 density=1.333 predicted=0.68x -> dense
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

// The same weights over 65536 pixels, with the moves counted: moving 8
// activations in and 3 results out per pixel costs more than its 24
// multiply-adds, so it stays dense (as every small case does by default).
// Zen 4's dense kernel runs at half Sapphire Rapids' rate, so a move
// costs it 12 multiply-adds, not 24 (its measured moved-element-cost):
// still dense, at twice the prediction.
// CHECK-LABEL: func @conv1x1_many_pixels
// DEFAULT: linalg.conv_2d_nhwc_fhwc M=65536 K=8 N=3 zeros=0.917 best=1x1 density=0.083 predicted=0.09x -> dense
// DEFHALF: linalg.conv_2d_nhwc_fhwc M=65536 K=8 N=3 zeros=0.917 best=1x1 density=0.083 predicted=0.18x -> dense
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

// -----

// A 3x3 convolution (K = 3*3*2 = 18 filter elements by F = 2) with 2
// nonzeros: tessel.sparse_conv2d, the zero tensor.pad of its input
// absorbed as `pad`, B's rows in (kh, kw, c) order: filter[0][1][1][0]
// is k = (1*3 + 1)*2 + 0 = 8, filter[1][2][0][1] is k = (2*3 + 0)*2 + 1 =
// 13. Stride 2 and dilation 2 pass through.
// CHECK-LABEL: func @conv3x3
// CHECK-DAG: %[[P:.*]] = arith.constant dense<[0, 1, 2]> : tensor<3xi32>
// CHECK-DAG: %[[K:.*]] = arith.constant dense<[8, 13]> : tensor<2xi32>
// CHECK-DAG: %[[V:.*]] = arith.constant dense<[3.000000e+00, -2.000000e+00]> : tensor<2xf32>
// CHECK: tessel.sparse_conv2d ins(%arg0, %[[P]], %[[K]], %[[V]] : tensor<1x6x6x2xf32>, tensor<3xi32>, tensor<2xi32>, tensor<2xf32>) outs(%{{.*}} : tensor<1x6x6x2xf32>) {block_size = 1 : i64, dilations = array<i64: 1, 1>, k_ascending, kernel_size = array<i64: 3, 3>, pad = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
// CHECK: tessel.sparse_conv2d ins(%arg0, {{.*}}) outs(%{{.*}} : tensor<1x1x1x2xf32>) {block_size = 1 : i64, dilations = array<i64: 2, 2>, k_ascending, kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>}
// CHECK-NOT: linalg.conv_2d_nhwc_fhwc
// REPORT: linalg.conv_2d_nhwc_fhwc M=36 K=18 N=2 zeros=0.944 best=1x1 density=0.056 predicted=7.74x -> sparse
// REPORT: linalg.conv_2d_nhwc_fhwc M=1 K=18 N=2 zeros=0.944 best=1x1 density=0.056 predicted=3.39x -> sparse
// With 8 lanes, rows of 6 columns are not padded to 8 (that would waste a
// third): their loads straddle cache lines (x 0.65).
// LANES: linalg.conv_2d_nhwc_fhwc M=36 K=18 N=2 zeros=0.944 best=1x1 density=0.056 predicted=5.03x -> sparse
// With Winograd from 2 channels the stride-1 one is weighed against it.
// WINOGRAD: linalg.conv_2d_nhwc_fhwc M=36 K=18 N=2 dense=winograd zeros=0.944 best=1x1 density=0.056 predicted=3.87x -> sparse
// WINOGRAD: linalg.conv_2d_nhwc_fhwc M=1 K=18 N=2 zeros=0.944
func.func @conv3x3(%x: tensor<1x6x6x2xf32>) -> (tensor<1x6x6x2xf32>, tensor<1x1x1x2xf32>) {
  %w = arith.constant dense<[[[[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]],
                              [[0.0, 0.0], [3.0, 0.0], [0.0, 0.0]],
                              [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]]],
                             [[[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]],
                              [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]],
                              [[0.0, -2.0], [0.0, 0.0], [0.0, 0.0]]]]> : tensor<2x3x3x2xf32>
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %z : f32
  } : tensor<1x6x6x2xf32> to tensor<1x8x8x2xf32>
  %e = tensor.empty() : tensor<1x6x6x2xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x6x6x2xf32>) -> tensor<1x6x6x2xf32>
  %r = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%p, %w : tensor<1x8x8x2xf32>, tensor<2x3x3x2xf32>) outs(%f : tensor<1x6x6x2xf32>) -> tensor<1x6x6x2xf32>
  %e2 = tensor.empty() : tensor<1x1x1x2xf32>
  %f2 = linalg.fill ins(%z : f32) outs(%e2 : tensor<1x1x1x2xf32>) -> tensor<1x1x1x2xf32>
  %r2 = linalg.conv_2d_nhwc_fhwc {dilations = dense<2> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%x, %w : tensor<1x6x6x2xf32>, tensor<2x3x3x2xf32>) outs(%f2 : tensor<1x1x1x2xf32>) -> tensor<1x1x1x2xf32>
  return %r, %r2 : tensor<1x6x6x2xf32>, tensor<1x1x1x2xf32>
}

// -----

// 2:4 (no column has more than 2 nonzeros in any 4 consecutive k): stored
// as N:M, 4 entries a column in the kernel's chunk-major order; column 0's
// second group holds one nonzero (k = 4), so k = 5 stores a zero. The
// unstructured form (7 of 16) is predicted slower (0.98x with one lane):
// its kernel's rate is well below the fixed-count N:M kernel's. With 16
// lanes (AVX512) 4 rows fill 4 of them, one vector a tile, and it stays
// dense.
// CHECK-LABEL: func @two_of_four
// CHECK-DAG: %[[P:.*]] = arith.constant dense<[0, 4, 8]> : tensor<3xi32>
// CHECK-DAG: %[[K:.*]] = arith.constant dense<[1, 2, 4, 5, 0, 3, 6, 7]> : tensor<8xi32>
// CHECK-DAG: %[[V:.*]] = arith.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 0.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00, 7.000000e+00]> : tensor<8xf32>
// CHECK: tessel.sparse_matmul ins(%arg0, %[[P]], %[[K]], %[[V]] : tensor<4x8xf32>, tensor<3xi32>, tensor<8xi32>, tensor<8xf32>) outs(%{{.*}} : tensor<4x2xf32>) {block_size = 1 : i64, k_ascending, n_of_m = array<i64: 2, 4>} -> tensor<4x2xf32>
// REPORT: linalg.matmul M=4 K=8 N=2 zeros=0.562 best=2:4 density=0.500 predicted=1.42x -> sparse
// AVX512: linalg.matmul M=4 K=8 N=2 zeros=0.562 best=2:4 density=0.500 predicted=0.14x -> dense
// HALF: linalg.matmul M=4 K=8 N=2 zeros=0.562 best=2:4 density=0.500 predicted=0.15x -> dense
func.func @two_of_four(%a: tensor<4x8xf32>) -> tensor<4x2xf32> {
  %b = arith.constant dense<[[0.0, 4.0], [1.0, 0.0], [2.0, 0.0], [0.0, 5.0], [3.0, 0.0], [0.0, 0.0], [0.0, 6.0], [0.0, 7.0]]> : tensor<8x2xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x2xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x2xf32>) -> tensor<4x2xf32>
  %r = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x2xf32>) outs(%f : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %r : tensor<4x2xf32>
}

// -----

// 2:4 with 16 columns: with lane-order (AVX-512, a CPU whose permutes run
// beside the FMAs) the lane order: one column vector and one (short) quad
// of 8 k's, so block_ptr [0, 4] (one unit of 4 slots), column c's i-th
// nonzero at i * 16 + c (each column's 4 entries 16 apart), predicted 1/(0.5/0.635) = 1.27x:
// the lane kernel reads the 16 rows in place (no moves) in two whole
// tiles of 8, where the chunk-major order fills one row vector a tile.
// Without lane-order (every other prefix) the chunk-major order's rates.
// NMLANES-LABEL: func @two_of_four_lanes
// NMLANES-DAG: arith.constant dense<[0, 4]> : tensor<2xi32>
// NMLANES-DAG: arith.constant dense<[0, 1, 2, 0, 0, 1, 2, 0, 0, 1, 2, 0, 0, 1, 2, 0, 1, 2, 3, 3, 1, 2, 3, 3, 1, 2, 3, 3, 1, 2, 3, 3, 5, 6, 4, 4, 5, 6, 4, 4, 5, 6, 4, 4, 5, 6, 4, 4, 6, 7, 7, 5, 6, 7, 7, 5, 6, 7, 7, 5, 6, 7, 7, 5]> : tensor<64xi32>
// NMLANES-DAG: arith.constant dense<[1.000000e+00, 1.200000e+01, 2.300000e+01, 3.100000e+01, {{.*}}]> : tensor<64xf32>
// NMLANES: tessel.sparse_matmul {{.*}} {block_size = 1 : i64, k_ascending, lanes, n_of_m = array<i64: 2, 4>} -> tensor<16x16xf32>
// NMLANES-REPORT: linalg.matmul M=16 K=8 N=16 zeros=0.500 best=2:4 lanes density=0.500 predicted=1.27x -> sparse
// AVX512: linalg.matmul M=16 K=8 N=16 zeros=0.500 best=2:4 density=0.500 predicted=0.54x -> dense
func.func @two_of_four_lanes(%a: tensor<16x8xf32>) -> tensor<16x16xf32> {
  %b = arith.constant dense<[[1.0, 0.0, 0.0, 31.0, 41.0, 0.0, 0.0, 71.0, 81.0, 0.0, 0.0, 111.0, 121.0, 0.0, 0.0, 151.0], [2.0, 12.0, 0.0, 0.0, 42.0, 52.0, 0.0, 0.0, 82.0, 92.0, 0.0, 0.0, 122.0, 132.0, 0.0, 0.0], [0.0, 13.0, 23.0, 0.0, 0.0, 53.0, 63.0, 0.0, 0.0, 93.0, 103.0, 0.0, 0.0, 133.0, 143.0, 0.0], [0.0, 0.0, 24.0, 34.0, 0.0, 0.0, 64.0, 74.0, 0.0, 0.0, 104.0, 114.0, 0.0, 0.0, 144.0, 154.0], [0.0, 0.0, 25.0, 35.0, 0.0, 0.0, 65.0, 75.0, 0.0, 0.0, 105.0, 115.0, 0.0, 0.0, 145.0, 155.0], [6.0, 0.0, 0.0, 36.0, 46.0, 0.0, 0.0, 76.0, 86.0, 0.0, 0.0, 116.0, 126.0, 0.0, 0.0, 156.0], [7.0, 17.0, 0.0, 0.0, 47.0, 57.0, 0.0, 0.0, 87.0, 97.0, 0.0, 0.0, 127.0, 137.0, 0.0, 0.0], [0.0, 18.0, 28.0, 0.0, 0.0, 58.0, 68.0, 0.0, 0.0, 98.0, 108.0, 0.0, 0.0, 138.0, 148.0, 0.0]]> : tensor<8x16xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  %r = linalg.matmul ins(%a, %b : tensor<16x8xf32>, tensor<8x16xf32>) outs(%f : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %r : tensor<16x16xf32>
}

// -----

// Unstructured (one nonzero a column, on the diagonal) with lane-order: one
// column vector, one quad, one slot (column c's nonzero at entry c), the
// 16 rows in place: stored 1/16, predicted 0.40 * 16 = 6.40x, where the
// chunked R = 1 kernel, one row vector a tile, is predicted 2.1x.
// NMLANES-LABEL: func @unstructured_lanes
// NMLANES-DAG: arith.constant dense<[0, 1]> : tensor<2xi32>
// NMLANES-DAG: arith.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]> : tensor<16xi32>
// NMLANES: tessel.sparse_matmul {{.*}} {block_size = 1 : i64, k_ascending, lanes} -> tensor<16x16xf32>
// NMLANES-REPORT: linalg.matmul M=16 K=16 N=16 zeros=0.938 best=1x1 lanes density=0.062 predicted=6.40x -> sparse
func.func @unstructured_lanes(%a: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %b = arith.constant dense<[[1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 3.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 4.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 5.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 6.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 7.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 8.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 9.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 10.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 11.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 12.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 13.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 14.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 15.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 16.0]]> : tensor<16x16xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  %r = linalg.matmul ins(%a, %b : tensor<16x16xf32>, tensor<16x16xf32>) outs(%f : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %r : tensor<16x16xf32>
}

// -----

// 1 of every 8 (m = 4 would store 1:4, twice the entries): 1:8 in two
// chunks of 64 k's (K = 72: the second holds one group), each column's
// entries of a chunk together: column 0's eight of chunk 0, column 1's,
// then each column's one of chunk 1. With 16 rows AVX-512's lanes are
// full and 1:8 pays there too.
// CHECK-LABEL: func @one_of_eight
// CHECK-DAG: arith.constant dense<[0, 9, 18, 27, 36, 45, 54, 63, 7, 12, 18, 31, 38, 47, 54, 63, 67, 64]> : tensor<18xi32>
// CHECK: tessel.sparse_matmul {{.*}} tensor<16x72xf32>, tensor<3xi32>, tensor<18xi32>, tensor<18xf32>) {{.*}} {block_size = 1 : i64, k_ascending, n_of_m = array<i64: 1, 8>}
// REPORT: linalg.matmul M=16 K=72 N=2 zeros=0.875 best=1:8 density=0.125 predicted=5.68x -> sparse
// AVX512: linalg.matmul M=16 K=72 N=2 zeros=0.875 best=1:8 density=0.125 predicted=1.82x -> sparse
// HALF: linalg.matmul M=16 K=72 N=2 zeros=0.875 best=1:8 density=0.125 predicted=1.86x -> sparse
func.func @one_of_eight(%a: tensor<16x72xf32>) -> tensor<16x2xf32> {
  %b = arith.constant dense<[[1.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 2.0],
                             [0.0, 0.0], [3.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 4.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0],
                             [0.0, 0.0], [0.0, 0.0], [5.0, 6.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0],
                             [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [7.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 8.0],
                             [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [9.0, 0.0], [0.0, 0.0], [0.0, 10.0], [0.0, 0.0],
                             [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [11.0, 0.0], [0.0, 0.0], [0.0, 12.0],
                             [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [13.0, 14.0], [0.0, 0.0],
                             [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [15.0, 16.0],
                             [0.0, 17.0], [0.0, 0.0], [0.0, 0.0], [18.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0]]> : tensor<72x2xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x2xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<16x2xf32>) -> tensor<16x2xf32>
  %r = linalg.matmul ins(%a, %b : tensor<16x72xf32>, tensor<72x2xf32>) outs(%f : tensor<16x2xf32>) -> tensor<16x2xf32>
  return %r : tensor<16x2xf32>
}
