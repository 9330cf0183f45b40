// RUN: tessel-opt %s -split-input-file -tessel-compute-in-bf16 | FileCheck %s

// A convolution with a constant filter: the filter is rounded at compile
// time (1.00390625 = 1 + 2^-8 is a tie and rounds to even, 1.0; 1.01171875
// = 1 + 3*2^-8 rounds up to 1.015625), the input through an elementwise
// truncf; strides, dilations and the f32 init are kept.
// CHECK-LABEL: func @conv
// CHECK-SAME: (%[[X:.*]]: tensor<1x5x5x2xf32>, %[[INIT:.*]]: tensor<1x2x2x1xf32>)
// CHECK-DAG: %[[W:.*]] = arith.constant dense<{{\[\[\[\[}}1.000000e+00, 1.015630e+00]{{.*}} : tensor<1x3x3x2xbf16>
// CHECK: %[[XB:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<1x5x5x2xf32>) outs(%{{.*}} : tensor<1x5x5x2xbf16>)
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: %[[Y:.*]] = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%[[XB]], %[[W]] : tensor<1x5x5x2xbf16>, tensor<1x3x3x2xbf16>) outs(%[[INIT]] : tensor<1x2x2x1xf32>)
// CHECK: return %[[Y]]
func.func @conv(%x: tensor<1x5x5x2xf32>, %init: tensor<1x2x2x1xf32>) -> tensor<1x2x2x1xf32> {
  %w = arith.constant dense<[[[[1.00390625, 1.01171875], [1.0, 1.0], [1.0, 1.0]], [[1.0, 1.0], [1.0, 1.0], [1.0, 1.0]], [[1.0, 1.0], [1.0, 1.0], [1.0, 1.0]]]]> : tensor<1x3x3x2xf32>
  %c = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<1x5x5x2xf32>, tensor<1x3x3x2xf32>) outs(%init : tensor<1x2x2x1xf32>) -> tensor<1x2x2x1xf32>
  return %c : tensor<1x2x2x1xf32>
}

// -----

// Both operands at run time, a dynamic row count: two truncf generics.
// CHECK-LABEL: func @matmul_dynamic
// CHECK: %[[AB:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<?x8xf32>) outs(%{{.*}} : tensor<?x8xbf16>)
// CHECK: %[[BB:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<8x4xf32>) outs(%{{.*}} : tensor<8x4xbf16>)
// CHECK: linalg.matmul ins(%[[AB]], %[[BB]] : tensor<?x8xbf16>, tensor<8x4xbf16>) outs(%arg2 : tensor<?x4xf32>)
func.func @matmul_dynamic(%a: tensor<?x8xf32>, %b: tensor<8x4xf32>, %c: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<?x8xf32>, tensor<8x4xf32>) outs(%c : tensor<?x4xf32>) -> tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}

// -----

// CHECK-LABEL: func @batch_matmul
// CHECK: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<2x3x8xbf16>, tensor<2x8x4xbf16>) outs(%arg2 : tensor<2x3x4xf32>)
func.func @batch_matmul(%a: tensor<2x3x8xf32>, %b: tensor<2x8x4xf32>, %c: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %r = linalg.batch_matmul ins(%a, %b : tensor<2x3x8xf32>, tensor<2x8x4xf32>) outs(%c : tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %r : tensor<2x3x4xf32>
}

// -----

// Left alone: integer matmuls, ops already on bf16, depthwise convolutions.
// CHECK-LABEL: func @untouched
// CHECK-NOT: truncf
// CHECK: linalg.matmul ins(%arg0, %arg1 : tensor<3x8xi8>, tensor<8x4xi8>) outs(%arg2 : tensor<3x4xi32>)
// CHECK: linalg.matmul ins(%arg3, %arg4 : tensor<3x8xbf16>, tensor<8x4xbf16>) outs(%arg5 : tensor<3x4xf32>)
// CHECK: linalg.depthwise_conv_2d_nhwc_hwc
// CHECK-NOT: truncf
func.func @untouched(%a: tensor<3x8xi8>, %b: tensor<8x4xi8>, %c: tensor<3x4xi32>,
                     %d: tensor<3x8xbf16>, %e: tensor<8x4xbf16>, %f: tensor<3x4xf32>,
                     %x: tensor<1x5x5x4xf32>, %w: tensor<3x3x4xf32>, %o: tensor<1x3x3x4xf32>)
    -> (tensor<3x4xi32>, tensor<3x4xf32>, tensor<1x3x3x4xf32>) {
  %r = linalg.matmul ins(%a, %b : tensor<3x8xi8>, tensor<8x4xi8>) outs(%c : tensor<3x4xi32>) -> tensor<3x4xi32>
  %s = linalg.matmul ins(%d, %e : tensor<3x8xbf16>, tensor<8x4xbf16>) outs(%f : tensor<3x4xf32>) -> tensor<3x4xf32>
  %t = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x5x5x4xf32>, tensor<3x3x4xf32>) outs(%o : tensor<1x3x3x4xf32>) -> tensor<1x3x3x4xf32>
  return %r, %s, %t : tensor<3x4xi32>, tensor<3x4xf32>, tensor<1x3x3x4xf32>
}
