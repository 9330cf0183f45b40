// Convolutions without padding: tosa.conv2d with stride and with dilation,
// tosa.depthwise_conv2d (channel multiplier 2), tessel.conv2d with depthwise
// groups = C (channel multiplier 1 with stride 2, multiplier 2 with dilation
// 2). Padded and grouped (1 < groups < C) variants: ops_conv_pad_groups.mlir.
// Layouts: NHWC input, OHWI weights (tosa.depthwise_conv2d: KH x KW x C x M).
// References: e2e_refs.py (explicit-window numpy convolution).
// RUN: %python %e2e %s --work-dir %t -O 0,3

func.func @conv2d_stride(%x: tensor<1x9x9x3xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x4x4xf32> {
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %y = tosa.conv2d %x, %w, %b, %zp, %zp {acc_type = f32, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>}
      : (tensor<1x9x9x3xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x4x4xf32>
  return %y : tensor<1x4x4x4xf32>
}

// stride (1, 2), dilation (2, 1), batch 2.
func.func @conv2d_dilation(%x: tensor<2x8x9x2xf32>, %w: tensor<3x3x3x2xf32>, %b: tensor<3xf32>) -> tensor<2x4x4x3xf32> {
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %y = tosa.conv2d %x, %w, %b, %zp, %zp {acc_type = f32, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 2>, dilation = array<i64: 2, 1>}
      : (tensor<2x8x9x2xf32>, tensor<3x3x3x2xf32>, tensor<3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x4x4x3xf32>
  return %y : tensor<2x4x4x3xf32>
}

func.func @depthwise_tosa_m2_valid(%x: tensor<1x6x6x3xf32>, %w: tensor<3x3x3x2xf32>, %b: tensor<6xf32>) -> tensor<1x4x4x6xf32> {
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %y = tosa.depthwise_conv2d %x, %w, %b, %zp, %zp {acc_type = f32, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
      : (tensor<1x6x6x3xf32>, tensor<3x3x3x2xf32>, tensor<6xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x4x6xf32>
  return %y : tensor<1x4x4x6xf32>
}

// Depthwise: groups = C = 4, multiplier 1, stride 2.
func.func @depthwise_m1_valid(%x: tensor<1x7x7x4xf32>, %w: tensor<4x3x3x1xf32>, %b: tensor<4xf32>) -> tensor<1x3x3x4xf32> {
  %y = tessel.conv2d %x, %w, %b {groups = 4 : i64, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>}
      : (tensor<1x7x7x4xf32>, tensor<4x3x3x1xf32>, tensor<4xf32>) -> tensor<1x3x3x4xf32>
  return %y : tensor<1x3x3x4xf32>
}

// Depthwise: groups = C = 3, multiplier 2, dilation 2, batch 2.
func.func @depthwise_m2_dilated_valid(%x: tensor<2x7x7x3xf32>, %w: tensor<6x3x3x1xf32>, %b: tensor<6xf32>) -> tensor<2x3x3x6xf32> {
  %y = tessel.conv2d %x, %w, %b {groups = 3 : i64, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 2, 2>}
      : (tensor<2x7x7x3xf32>, tensor<6x3x3x1xf32>, tensor<6xf32>) -> tensor<2x3x3x6xf32>
  return %y : tensor<2x3x3x6xf32>
}
