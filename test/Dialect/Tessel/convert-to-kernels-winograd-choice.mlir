// RUN: tessel-opt %s -split-input-file -tessel-convert-to-kernels="panel-width=4" -mlir-elide-elementsattrs-if-larger=16 | FileCheck %s

// Large images run as Winograd F(4x4, 3x3) (36 transform positions), few
// channels too (32 -> 32 at 56x56: 2.0x the direct kernel, where F(2x2,
// 3x3)'s larger transforms streamed through memory and lost to it), and
// so do wide outputs (32 -> 256: the GEMMs' results per block stay in the
// core's cache).
// CHECK-LABEL: func @large_images
// CHECK: tessel.packed_conv2d ins(%{{.*}} : tensor<1x58x58x32xf32>, tensor<36x8x32x4xf32>) {{.*}}outs(%{{.*}} : tensor<1x56x56x32xf32>) {{{.*}}winograd}
// CHECK: tessel.packed_conv2d ins(%{{.*}} : tensor<1x58x58x32xf32>, tensor<36x64x32x4xf32>) {{.*}}outs(%{{.*}} : tensor<1x56x56x256xf32>) {{{.*}}winograd}
func.func @large_images(%x: tensor<1x58x58x32xf32>)
    -> (tensor<1x56x56x32xf32>, tensor<1x56x56x256xf32>) {
  %zero = arith.constant 0.0 : f32
  %w32 = arith.constant dense<0.25> : tensor<32x3x3x32xf32>
  %w256 = arith.constant dense<0.5> : tensor<256x3x3x32xf32>
  %e32 = tensor.empty() : tensor<1x56x56x32xf32>
  %z32 = linalg.fill ins(%zero : f32) outs(%e32 : tensor<1x56x56x32xf32>) -> tensor<1x56x56x32xf32>
  %e256 = tensor.empty() : tensor<1x56x56x256xf32>
  %z256 = linalg.fill ins(%zero : f32) outs(%e256 : tensor<1x56x56x256xf32>) -> tensor<1x56x56x256xf32>
  %a = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w32 : tensor<1x58x58x32xf32>, tensor<32x3x3x32xf32>) outs(%z32 : tensor<1x56x56x32xf32>) -> tensor<1x56x56x32xf32>
  %b = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w256 : tensor<1x58x58x32xf32>, tensor<256x3x3x32xf32>) outs(%z256 : tensor<1x56x56x256xf32>) -> tensor<1x56x56x256xf32>
  return %a, %b : tensor<1x56x56x32xf32>, tensor<1x56x56x256xf32>
}

// -----

// The tile by image size: F(4x4, 3x3) at 28x28 (49 4x4 tiles); at 14x14
// (16 tiles covering 16x16) and 7x7 F(2x2, 3x3) (16 positions), whose
// GEMMs have more rows for each of the filter's elements (ResNet-34: 1.11x
// faster than with F(4x4, 3x3) there); below 32 input or output channels
// (the default winograd-min-channels) the direct convolution.
// CHECK-LABEL: func @winograd_tile
// CHECK: tessel.packed_conv2d ins(%{{.*}} : tensor<1x30x30x64xf32>, tensor<36x{{.*}}>) {{.*}}winograd}
// CHECK: tessel.packed_conv2d ins(%{{.*}} : tensor<1x16x16x64xf32>, tensor<16x{{.*}}>) {{.*}}winograd}
// CHECK: tessel.packed_conv2d ins(%{{.*}} : tensor<1x9x9x64xf32>, tensor<16x{{.*}}>) {{.*}}winograd}
// CHECK: tessel.packed_conv2d ins(%{{.*}} : tensor<1x30x30x64xf32>, tensor<{{[0-9]+}}x576x4xf32>) {{.*}}strides = array<i64: 1, 1>} ->
func.func @winograd_tile(%x28: tensor<1x30x30x64xf32>, %x14: tensor<1x16x16x64xf32>, %x7: tensor<1x9x9x64xf32>)
    -> (tensor<1x28x28x32xf32>, tensor<1x14x14x32xf32>, tensor<1x7x7x32xf32>, tensor<1x28x28x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %w32 = arith.constant dense<0.25> : tensor<32x3x3x64xf32>
  %w16 = arith.constant dense<0.5> : tensor<16x3x3x64xf32>
  %e28 = tensor.empty() : tensor<1x28x28x32xf32>
  %z28 = linalg.fill ins(%zero : f32) outs(%e28 : tensor<1x28x28x32xf32>) -> tensor<1x28x28x32xf32>
  %e14 = tensor.empty() : tensor<1x14x14x32xf32>
  %z14 = linalg.fill ins(%zero : f32) outs(%e14 : tensor<1x14x14x32xf32>) -> tensor<1x14x14x32xf32>
  %e7 = tensor.empty() : tensor<1x7x7x32xf32>
  %z7 = linalg.fill ins(%zero : f32) outs(%e7 : tensor<1x7x7x32xf32>) -> tensor<1x7x7x32xf32>
  %e16 = tensor.empty() : tensor<1x28x28x16xf32>
  %z16 = linalg.fill ins(%zero : f32) outs(%e16 : tensor<1x28x28x16xf32>) -> tensor<1x28x28x16xf32>
  %a = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x28, %w32 : tensor<1x30x30x64xf32>, tensor<32x3x3x64xf32>) outs(%z28 : tensor<1x28x28x32xf32>) -> tensor<1x28x28x32xf32>
  %b = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x14, %w32 : tensor<1x16x16x64xf32>, tensor<32x3x3x64xf32>) outs(%z14 : tensor<1x14x14x32xf32>) -> tensor<1x14x14x32xf32>
  %c = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x7, %w32 : tensor<1x9x9x64xf32>, tensor<32x3x3x64xf32>) outs(%z7 : tensor<1x7x7x32xf32>) -> tensor<1x7x7x32xf32>
  %d = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x28, %w16 : tensor<1x30x30x64xf32>, tensor<16x3x3x64xf32>) outs(%z16 : tensor<1x28x28x16xf32>) -> tensor<1x28x28x16xf32>
  return %a, %b, %c, %d : tensor<1x28x28x32xf32>, tensor<1x14x14x32xf32>, tensor<1x7x7x32xf32>, tensor<1x28x28x16xf32>
}

// -----

// A dilated convolution's sub-grids run as one set of GEMMs, so their
// tiles count together: dilation 4 at 28x28 is 16 sub-grids of 7x7 with
// 64 4x4 tiles, dilation 2 4 sub-grids of 14x14 with 64 too, both
// F(4x4, 3x3); dilation 2 at 14x14 (4 sub-grids of 7x7, 16 tiles) keeps
// F(2x2, 3x3).
// CHECK-LABEL: func @dilated_tile
// CHECK: tessel.packed_conv2d ins(%{{.*}} : tensor<1x36x36x64xf32>, tensor<36x{{.*}}>) {{.*}}dilations = array<i64: 4, 4>{{.*}}winograd}
// CHECK: tessel.packed_conv2d ins(%{{.*}} : tensor<1x32x32x64xf32>, tensor<36x{{.*}}>) {{.*}}dilations = array<i64: 2, 2>{{.*}}winograd}
// CHECK: tessel.packed_conv2d ins(%{{.*}} : tensor<1x18x18x64xf32>, tensor<16x{{.*}}>) {{.*}}dilations = array<i64: 2, 2>{{.*}}winograd}
func.func @dilated_tile(%x4: tensor<1x36x36x64xf32>, %x2: tensor<1x32x32x64xf32>, %x14: tensor<1x18x18x64xf32>)
    -> (tensor<1x28x28x64xf32>, tensor<1x28x28x64xf32>, tensor<1x14x14x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %w = arith.constant dense<0.25> : tensor<64x3x3x64xf32>
  %e = tensor.empty() : tensor<1x28x28x64xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x28x28x64xf32>) -> tensor<1x28x28x64xf32>
  %a = linalg.conv_2d_nhwc_fhwc {dilations = dense<4> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x4, %w : tensor<1x36x36x64xf32>, tensor<64x3x3x64xf32>) outs(%z : tensor<1x28x28x64xf32>) -> tensor<1x28x28x64xf32>
  %b = linalg.conv_2d_nhwc_fhwc {dilations = dense<2> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x2, %w : tensor<1x32x32x64xf32>, tensor<64x3x3x64xf32>) outs(%z : tensor<1x28x28x64xf32>) -> tensor<1x28x28x64xf32>
  %e14 = tensor.empty() : tensor<1x14x14x64xf32>
  %z14 = linalg.fill ins(%zero : f32) outs(%e14 : tensor<1x14x14x64xf32>) -> tensor<1x14x14x64xf32>
  %c = linalg.conv_2d_nhwc_fhwc {dilations = dense<2> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x14, %w : tensor<1x18x18x64xf32>, tensor<64x3x3x64xf32>) outs(%z14 : tensor<1x14x14x64xf32>) -> tensor<1x14x14x64xf32>
  return %a, %b, %c : tensor<1x28x28x64xf32>, tensor<1x28x28x64xf32>, tensor<1x14x14x64xf32>
}

// -----

// The images of a static batch count together too: batch 4 at 14x14 is
// 64 4x4 tiles, F(4x4, 3x3) (one image: 16, F(2x2, 3x3), @winograd_tile).
// CHECK-LABEL: func @batch_tile
// CHECK: tessel.packed_conv2d ins(%{{.*}} : tensor<4x16x16x64xf32>, tensor<36x{{.*}}>) {{.*}}winograd}
func.func @batch_tile(%x: tensor<4x16x16x64xf32>) -> tensor<4x14x14x64xf32> {
  %zero = arith.constant 0.0 : f32
  %w = arith.constant dense<0.25> : tensor<64x3x3x64xf32>
  %e = tensor.empty() : tensor<4x14x14x64xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x14x14x64xf32>) -> tensor<4x14x14x64xf32>
  %c = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<4x16x16x64xf32>, tensor<64x3x3x64xf32>) outs(%z : tensor<4x14x14x64xf32>) -> tensor<4x14x14x64xf32>
  return %c : tensor<4x14x14x64xf32>
}
