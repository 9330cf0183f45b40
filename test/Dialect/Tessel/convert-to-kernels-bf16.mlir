// RUN: tessel-opt %s -split-input-file -tessel-convert-to-kernels=panel-width=4 -canonicalize | FileCheck %s

// A convolution on bf16 operands (tessel-compute-in-bf16's form): the f32
// source of the input's truncf goes to the kernel (which rounds it), the
// zero padding is absorbed, and the bf16 filter is packed at compile time
// in pairs of k = (kh*2 + kw)*3 + c per output channel: 2x2x3 = 12 -> 6
// pairs x (2 * 4 columns), output channel 1 zero-padded; no Winograd.
// CHECK-LABEL: func @conv
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x4x3xf32>, %[[INIT:.*]]: tensor<1x5x5x1xf32>)
// CHECK: %[[W:.*]] = arith.constant dense<{{\[\[\[}}1.000000e+00, 2.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00], [3.000000e+00, 4.000000e+00, {{.*}} : tensor<1x6x8xbf16>
// CHECK: %[[Y:.*]] = tessel.packed_conv2d ins(%[[X]], %[[W]] : tensor<1x4x4x3xf32>, tensor<1x6x8xbf16>) outs(%[[INIT]] : tensor<1x5x5x1xf32>) {accumulate, dilations = array<i64: 1, 1>, kernel_size = array<i64: 2, 2>, pad = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
// CHECK-NOT: linalg.generic
// CHECK: return %[[Y]]
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @conv(%x: tensor<1x4x4x3xf32>, %init: tensor<1x5x5x1xf32>) -> tensor<1x5x5x1xf32> {
  %w = arith.constant dense<[[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [[7.0, 8.0, 9.0], [10.0, 11.0, 12.0]]]]> : tensor<1x2x2x3xbf16>
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x4x4x3xf32> to tensor<1x6x6x3xf32>
  %e = tensor.empty() : tensor<1x6x6x3xbf16>
  %xb = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%p : tensor<1x6x6x3xf32>) outs(%e : tensor<1x6x6x3xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<1x6x6x3xbf16>
  %c = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%xb, %w : tensor<1x6x6x3xbf16>, tensor<1x2x2x3xbf16>) outs(%init : tensor<1x5x5x1xf32>) -> tensor<1x5x5x1xf32>
  return %c : tensor<1x5x5x1xf32>
}

// -----

// A matmul whose bf16 activations are not a truncf (a bf16 argument): they
// are extended to f32, which the kernel's rounding gives back exactly. The
// run-time B is packed at run time: K = 3 padded to 4 (2 pairs), N = 5 to
// two panels of 4, then the tile dimensions collapsed.
// CHECK-LABEL: func @matmul_bf16_args
// CHECK: %[[AX:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<2x3xbf16>) outs(%{{.*}} : tensor<2x3xf32>)
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: %[[PAD:.*]] = tensor.pad %arg1 low[0, 0] high[1, 3]
// CHECK: %[[T:.*]] = linalg.transpose ins(%{{.*}} : tensor<2x2x2x4xbf16>) outs(%{{.*}} : tensor<2x2x4x2xbf16>) permutation = [2, 0, 3, 1]
// CHECK: %[[B:.*]] = tensor.collapse_shape %[[T]] {{\[\[}}0], [1], [2, 3]] : tensor<2x2x4x2xbf16> into tensor<2x2x8xbf16>
// CHECK: tessel.packed_conv2d ins(%{{.*}}, %[[B]] : tensor<1x1x2x3xf32>, tensor<2x2x8xbf16>) outs(%{{.*}} : tensor<1x1x2x5xf32>)
func.func @matmul_bf16_args(%a: tensor<2x3xbf16>, %b: tensor<3x5xbf16>, %c: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<2x3xbf16>, tensor<3x5xbf16>) outs(%c : tensor<2x5xf32>) -> tensor<2x5xf32>
  return %r : tensor<2x5xf32>
}

// -----

// Mixed f32 x bf16 inputs, or a bf16 result: not a kernel.
// CHECK-LABEL: func @not_kernels
// CHECK-NOT: tessel.packed_conv2d
// CHECK: linalg.matmul
// CHECK: linalg.matmul
func.func @not_kernels(%a: tensor<2x3xf32>, %b: tensor<3x5xbf16>, %c: tensor<2x5xf32>,
                       %d: tensor<2x3xbf16>, %e: tensor<2x5xbf16>) -> (tensor<2x5xf32>, tensor<2x5xbf16>) {
  %r = linalg.matmul ins(%a, %b : tensor<2x3xf32>, tensor<3x5xbf16>) outs(%c : tensor<2x5xf32>) -> tensor<2x5xf32>
  %s = linalg.matmul ins(%d, %b : tensor<2x3xbf16>, tensor<3x5xbf16>) outs(%e : tensor<2x5xbf16>) -> tensor<2x5xbf16>
  return %r, %s : tensor<2x5xf32>, tensor<2x5xbf16>
}
