// RUN: tessel-opt %s -split-input-file -tessel-convert-to-kernels="panel-width=4 winograd-min-channels=1" -mlir-print-elementsattrs-with-hex-if-larger=-1 | FileCheck %s
// RUN: tessel-opt %s -split-input-file -tessel-convert-to-kernels="panel-width=4" | FileCheck %s --check-prefix=DEFAULT
// RUN: tessel-opt %s -split-input-file -tessel-convert-to-kernels="panel-width=4 winograd=false winograd-min-channels=1" | FileCheck %s --check-prefix=OFF

// A 3x3 stride-1 convolution with a constant filter runs as Winograd
// F(2x2, 3x3) on a 6x7 image (too few 4x4 tiles for F(4x4, 3x3), the
// next case): the filter W[0,kh,kw,0] = 3*kh + kw + 1 becomes
// U = G W G^T (numpy: g @ w @ g.T with g = [[1,0,0],[.5,.5,.5],[.5,-.5,.5],
// [0,0,1]]: 1 3 1 3 / 6 11.25 3.75 9 / 2 3.75 1.25 3 / 7 12 4 9), one
// 1 x 1 x 4 panel per transform position, output channels 1..3 zero.
// The "same" zero padding stays implicit.
// CHECK-LABEL: func @winograd_3x3
// CHECK-SAME: (%[[X:.*]]: tensor<1x6x7x1xf32>, %[[INIT:.*]]: tensor<1x6x7x1xf32>)
// CHECK: %[[U:.*]] = arith.constant dense<{{\[\[\[\[}}1.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00]]], {{\[\[\[}}3.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00]]], {{\[\[\[}}1.000000e+00, {{.*}}]]], {{\[\[\[}}3.000000e+00, {{.*}}]]], {{\[\[\[}}6.000000e+00, {{.*}}]]], {{\[\[\[}}1.125000e+01, {{.*}}]]], {{\[\[\[}}3.750000e+00, {{.*}}]]], {{\[\[\[}}9.000000e+00, {{.*}}]]], {{\[\[\[}}2.000000e+00, {{.*}}]]], {{\[\[\[}}3.750000e+00, {{.*}}]]], {{\[\[\[}}1.250000e+00, {{.*}}]]], {{\[\[\[}}3.000000e+00, {{.*}}]]], {{\[\[\[}}7.000000e+00, {{.*}}]]], {{\[\[\[}}1.200000e+01, {{.*}}]]], {{\[\[\[}}4.000000e+00, {{.*}}]]], {{\[\[\[}}9.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00]]]]> : tensor<16x1x1x4xf32>
// CHECK: %[[Y:.*]] = tessel.packed_conv2d ins(%[[X]], %[[U]] : tensor<1x6x7x1xf32>, tensor<16x1x1x4xf32>) outs(%[[INIT]] : tensor<1x6x7x1xf32>) {accumulate, dilations = array<i64: 1, 1>, kernel_size = array<i64: 3, 3>, pad = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, winograd}
// CHECK: return %[[Y]]
// Below 32 input/output channels (the default threshold) and with
// winograd=false: the direct convolution.
// DEFAULT-LABEL: func @winograd_3x3
// DEFAULT-NOT: winograd}
// DEFAULT: tessel.packed_conv2d {{.*}} tensor<1x9x4xf32>
// DEFAULT-NOT: winograd}
// OFF-LABEL: func @winograd_3x3
// OFF-NOT: winograd}
// OFF: tessel.packed_conv2d {{.*}} tensor<1x9x4xf32>
// OFF-NOT: winograd}
func.func @winograd_3x3(%x: tensor<1x6x7x1xf32>, %init: tensor<1x6x7x1xf32>) -> tensor<1x6x7x1xf32> {
  %w = arith.constant dense<[[[[1.0], [2.0], [3.0]], [[4.0], [5.0], [6.0]], [[7.0], [8.0], [9.0]]]]> : tensor<1x3x3x1xf32>
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x6x7x1xf32> to tensor<1x8x9x1xf32>
  %c = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w : tensor<1x8x9x1xf32>, tensor<1x3x3x1xf32>) outs(%init : tensor<1x6x7x1xf32>) -> tensor<1x6x7x1xf32>
  return %c : tensor<1x6x7x1xf32>
}

// -----

// On a 24x24 image (36 4x4 tiles, which fit it as well as 2x2 ones),
// Winograd F(4x4, 3x3): the same filter becomes U = G W G^T with G's 6 rows
// [1/4,0,0], [-1/6,-1/6,-1/6], [-1/6,1/6,-1/6], [1/24,1/12,1/6],
// [1/24,-1/12,1/6], [0,0,1] (numpy, row 0: 0.0625 -0.25 -0.0833 0.1771
// 0.09375 0.75; U[5][5] = W[2][2] = 9), 36 transform positions.
// CHECK-LABEL: func @winograd_f4x4
// CHECK: %[[U:.*]] = arith.constant dense<{{\[\[\[\[}}6.250000e-02, 0.000000e+00, 0.000000e+00, 0.000000e+00]]], {{\[\[\[}}-2.500000e-01, {{.*}}]]], {{\[\[\[}}-0.0833333358, {{.*}}]]], {{\[\[\[}}0.177083328, {{.*}}]]], {{\[\[\[}}9.375000e-02, {{.*}}]]], {{\[\[\[}}7.500000e-01, {{.*}}]]], {{\[\[\[}}-5.000000e-01, {{.*}}]]], {{.*}}, {{\[\[\[}}9.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00]]]]> : tensor<36x1x1x4xf32>
// CHECK: tessel.packed_conv2d ins(%{{.*}}, %[[U]] : tensor<1x24x24x1xf32>, tensor<36x1x1x4xf32>) {{.*}}winograd}
// OFF-LABEL: func @winograd_f4x4
// OFF-NOT: winograd}
func.func @winograd_f4x4(%x: tensor<1x24x24x1xf32>, %init: tensor<1x24x24x1xf32>) -> tensor<1x24x24x1xf32> {
  %w = arith.constant dense<[[[[1.0], [2.0], [3.0]], [[4.0], [5.0], [6.0]], [[7.0], [8.0], [9.0]]]]> : tensor<1x3x3x1xf32>
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x24x24x1xf32> to tensor<1x26x26x1xf32>
  %c = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w : tensor<1x26x26x1xf32>, tensor<1x3x3x1xf32>) outs(%init : tensor<1x24x24x1xf32>) -> tensor<1x24x24x1xf32>
  return %c : tensor<1x24x24x1xf32>
}

// -----

// Strided, non-3x3 and run-time filters keep the direct convolution, and
// so does a dilation whose sub-grids would be under 4 pixels (here 5x5
// at dilation 2: most of its taps fall in the padding).
// CHECK-LABEL: func @not_winograd
// CHECK-NOT: winograd}
// CHECK-COUNT-4: tessel.packed_conv2d
// CHECK-NOT: winograd}
// CHECK: return
func.func @not_winograd(%x: tensor<1x9x9x2xf32>, %wr: tensor<2x3x3x2xf32>) -> (tensor<1x4x4x2xf32>, tensor<1x5x5x2xf32>, tensor<1x5x5x2xf32>, tensor<1x7x7x2xf32>) {
  %w3 = arith.constant dense<0.5> : tensor<2x3x3x2xf32>
  %w5 = arith.constant dense<0.5> : tensor<2x5x5x2xf32>
  %e4 = tensor.empty() : tensor<1x4x4x2xf32>
  %e5 = tensor.empty() : tensor<1x5x5x2xf32>
  %e7 = tensor.empty() : tensor<1x7x7x2xf32>
  %s = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w3 : tensor<1x9x9x2xf32>, tensor<2x3x3x2xf32>) outs(%e4 : tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  %d = linalg.conv_2d_nhwc_fhwc {dilations = dense<2> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w3 : tensor<1x9x9x2xf32>, tensor<2x3x3x2xf32>) outs(%e5 : tensor<1x5x5x2xf32>) -> tensor<1x5x5x2xf32>
  %k = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w5 : tensor<1x9x9x2xf32>, tensor<2x5x5x2xf32>) outs(%e5 : tensor<1x5x5x2xf32>) -> tensor<1x5x5x2xf32>
  %r = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %wr : tensor<1x9x9x2xf32>, tensor<2x3x3x2xf32>) outs(%e7 : tensor<1x7x7x2xf32>) -> tensor<1x7x7x2xf32>
  return %s, %d, %k, %r : tensor<1x4x4x2xf32>, tensor<1x5x5x2xf32>, tensor<1x5x5x2xf32>, tensor<1x7x7x2xf32>
}

// -----

// A dilated 3x3 (DeepLab's, dilation 2, "same"): Winograd with the
// dilation kept, which the kernel runs as 2 x 2 sub-grids of 8 x 8.
// CHECK-LABEL: func @winograd_dilated
// CHECK: tessel.packed_conv2d {{.*}} outs(%{{.*}} : tensor<1x16x16x2xf32>) {dilations = array<i64: 2, 2>, kernel_size = array<i64: 3, 3>, pad = array<i64: 2, 2, 2, 2>, strides = array<i64: 1, 1>, winograd}
// OFF-LABEL: func @winograd_dilated
// OFF-NOT: winograd}
func.func @winograd_dilated(%x: tensor<1x16x16x2xf32>) -> tensor<1x16x16x2xf32> {
  %w = arith.constant dense<0.5> : tensor<2x3x3x2xf32>
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 2, 2, 0] high[0, 2, 2, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<1x16x16x2xf32> to tensor<1x20x20x2xf32>
  %e = tensor.empty() : tensor<1x16x16x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x16x16x2xf32>) -> tensor<1x16x16x2xf32>
  %c = linalg.conv_2d_nhwc_fhwc {dilations = dense<2> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w : tensor<1x20x20x2xf32>, tensor<2x3x3x2xf32>) outs(%init : tensor<1x16x16x2xf32>) -> tensor<1x16x16x2xf32>
  return %c : tensor<1x16x16x2xf32>
}
