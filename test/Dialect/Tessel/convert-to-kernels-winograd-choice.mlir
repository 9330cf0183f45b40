// RUN: tessel-opt %s -split-input-file -tessel-convert-to-kernels="panel-width=4" -mlir-elide-elementsattrs-if-larger=16 | FileCheck %s

// Few channels on a large image stay on the implicit GEMM: Winograd's
// transforms would stream through memory (32 -> 32 channels at 56x56 ran
// 0.83x the direct kernel). 32 -> 72 channels (more than 96 together) at
// the same size, and 32 -> 32 at 28x28, run as Winograd.
// CHECK-LABEL: func @few_channels_large_image
// CHECK: tessel.packed_conv2d {{.*}} outs(%{{.*}} : tensor<1x56x56x32xf32>) {dilations = array<i64: 1, 1>, kernel_size = array<i64: 3, 3>, pad = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
// CHECK: tessel.packed_conv2d {{.*}} outs(%{{.*}} : tensor<1x56x56x72xf32>) {{{.*}}winograd}
// CHECK: tessel.packed_conv2d {{.*}} outs(%{{.*}} : tensor<1x28x28x32xf32>) {{{.*}}winograd}
func.func @few_channels_large_image(%x: tensor<1x56x56x32xf32>, %x28: tensor<1x28x28x32xf32>)
    -> (tensor<1x56x56x32xf32>, tensor<1x56x56x72xf32>, tensor<1x28x28x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %w32 = arith.constant dense<0.25> : tensor<32x3x3x32xf32>
  %w72 = arith.constant dense<0.5> : tensor<72x3x3x32xf32>
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x56x56x32xf32> to tensor<1x58x58x32xf32>
  %p28 = tensor.pad %x28 low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x28x28x32xf32> to tensor<1x30x30x32xf32>
  %e32 = tensor.empty() : tensor<1x56x56x32xf32>
  %z32 = linalg.fill ins(%zero : f32) outs(%e32 : tensor<1x56x56x32xf32>) -> tensor<1x56x56x32xf32>
  %e72 = tensor.empty() : tensor<1x56x56x72xf32>
  %z72 = linalg.fill ins(%zero : f32) outs(%e72 : tensor<1x56x56x72xf32>) -> tensor<1x56x56x72xf32>
  %e28 = tensor.empty() : tensor<1x28x28x32xf32>
  %z28 = linalg.fill ins(%zero : f32) outs(%e28 : tensor<1x28x28x32xf32>) -> tensor<1x28x28x32xf32>
  %a = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w32 : tensor<1x58x58x32xf32>, tensor<32x3x3x32xf32>) outs(%z32 : tensor<1x56x56x32xf32>) -> tensor<1x56x56x32xf32>
  %b = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w72 : tensor<1x58x58x32xf32>, tensor<72x3x3x32xf32>) outs(%z72 : tensor<1x56x56x72xf32>) -> tensor<1x56x56x72xf32>
  %c = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p28, %w32 : tensor<1x30x30x32xf32>, tensor<32x3x3x32xf32>) outs(%z28 : tensor<1x28x28x32xf32>) -> tensor<1x28x28x32xf32>
  return %a, %b, %c : tensor<1x56x56x32xf32>, tensor<1x56x56x72xf32>, tensor<1x28x28x32xf32>
}

// -----

// At most 96 input channels whose 16 GEMMs would write more than 8 MiB
// (32 -> 256 at 56x56: 16 x 784 tiles x 256 floats, 12.8 MB) stay on the
// implicit GEMM; 32 -> 128 (6.4 MB) and 128 -> 256 (more input channels)
// run as Winograd.
// CHECK-LABEL: func @large_gemm_output
// CHECK: tessel.packed_conv2d {{.*}} outs(%{{.*}} : tensor<1x56x56x256xf32>) {dilations = array<i64: 1, 1>, kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>} ->
// CHECK: tessel.packed_conv2d {{.*}} outs(%{{.*}} : tensor<1x56x56x128xf32>) {{{.*}}winograd}
// CHECK: tessel.packed_conv2d {{.*}} outs(%{{.*}} : tensor<1x56x56x256xf32>) {{{.*}}winograd}
func.func @large_gemm_output(%x: tensor<1x58x58x32xf32>, %y: tensor<1x58x58x128xf32>)
    -> (tensor<1x56x56x256xf32>, tensor<1x56x56x128xf32>, tensor<1x56x56x256xf32>) {
  %zero = arith.constant 0.0 : f32
  %w256 = arith.constant dense<0.25> : tensor<256x3x3x32xf32>
  %w128 = arith.constant dense<0.5> : tensor<128x3x3x32xf32>
  %wb = arith.constant dense<0.125> : tensor<256x3x3x128xf32>
  %e256 = tensor.empty() : tensor<1x56x56x256xf32>
  %z256 = linalg.fill ins(%zero : f32) outs(%e256 : tensor<1x56x56x256xf32>) -> tensor<1x56x56x256xf32>
  %e128 = tensor.empty() : tensor<1x56x56x128xf32>
  %z128 = linalg.fill ins(%zero : f32) outs(%e128 : tensor<1x56x56x128xf32>) -> tensor<1x56x56x128xf32>
  %a = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w256 : tensor<1x58x58x32xf32>, tensor<256x3x3x32xf32>) outs(%z256 : tensor<1x56x56x256xf32>) -> tensor<1x56x56x256xf32>
  %b = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w128 : tensor<1x58x58x32xf32>, tensor<128x3x3x32xf32>) outs(%z128 : tensor<1x56x56x128xf32>) -> tensor<1x56x56x128xf32>
  %c = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%y, %wb : tensor<1x58x58x128xf32>, tensor<256x3x3x128xf32>) outs(%z256 : tensor<1x56x56x256xf32>) -> tensor<1x56x56x256xf32>
  return %a, %b, %c : tensor<1x56x56x256xf32>, tensor<1x56x56x128xf32>, tensor<1x56x56x256xf32>
}

