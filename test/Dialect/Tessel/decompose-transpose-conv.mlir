// RUN: tessel-opt %s -split-input-file -tessel-decompose-transpose-conv | FileCheck %s

// Kernel = stride (a U-Net's 2x2 stride-2 upsampling): the windows do not
// overlap, so one matmul of the 4x4 input pixels by [IC, KH*KW*OC], its
// rows interleaved into the 8x8 output (depth to space), then the bias.
// CHECK-LABEL: func @non_overlapping
// CHECK-NOT: tosa.transpose_conv2d
// CHECK: %[[W:.*]] = tosa.transpose %arg1 {perms = array<i32: 3, 1, 2, 0>} : (tensor<5x2x2x3xf32>) -> tensor<3x2x2x5xf32>
// CHECK: %[[M:.*]] = tosa.matmul {{.*}} : (tensor<1x32x3xf32>, tensor<1x3x20xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x32x20xf32>
// CHECK: %[[T:.*]] = tosa.transpose {{.*}} {perms = array<i32: 0, 1, 3, 2, 4, 5>} : (tensor<2x4x4x2x2x5xf32>) -> tensor<2x4x2x4x2x5xf32>
// CHECK: %[[Y:.*]] = tosa.reshape %[[T]], {{.*}} -> tensor<2x8x8x5xf32>
// CHECK: tosa.add %[[Y]], {{.*}} -> tensor<2x8x8x5xf32>
// CHECK-NOT: tosa.conv2d
func.func @non_overlapping(%x: tensor<2x4x4x3xf32>, %w: tensor<5x2x2x3xf32>, %b: tensor<5xf32>) -> tensor<2x8x8x5xf32> {
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %y = tosa.transpose_conv2d %x, %w, %b, %zp, %zp {acc_type = f32, out_pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>} : (tensor<2x4x4x3xf32>, tensor<5x2x2x3xf32>, tensor<5xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x8x8x5xf32>
  return %y : tensor<2x8x8x5xf32>
}

// -----

// Overlapping windows (3x3 at stride 2): upstream's decomposition, an
// ordinary convolution over the zero-spread input.
// CHECK-LABEL: func @overlapping
// CHECK-NOT: tosa.transpose_conv2d
// CHECK-NOT: tosa.matmul
// CHECK: tosa.conv2d
func.func @overlapping(%x: tensor<1x4x4x3xf32>, %w: tensor<5x3x3x3xf32>, %b: tensor<5xf32>) -> tensor<1x9x9x5xf32> {
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %y = tosa.transpose_conv2d %x, %w, %b, %zp, %zp {acc_type = f32, out_pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>} : (tensor<1x4x4x3xf32>, tensor<5x3x3x3xf32>, tensor<5xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x9x9x5xf32>
  return %y : tensor<1x9x9x5xf32>
}

// -----

// Kernel = stride but padded output: upstream's decomposition.
// CHECK-LABEL: func @padded_output
// CHECK-NOT: tosa.matmul
// CHECK: tosa.conv2d
func.func @padded_output(%x: tensor<1x4x4x3xf32>, %w: tensor<5x2x2x3xf32>, %b: tensor<5xf32>) -> tensor<1x9x9x5xf32> {
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %y = tosa.transpose_conv2d %x, %w, %b, %zp, %zp {acc_type = f32, out_pad = array<i64: 1, 0, 0, 1>, stride = array<i64: 2, 2>} : (tensor<1x4x4x3xf32>, tensor<5x2x2x3xf32>, tensor<5xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x9x9x5xf32>
  return %y : tensor<1x9x9x5xf32>
}
