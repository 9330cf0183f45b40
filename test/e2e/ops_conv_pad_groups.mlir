// Convolutions with padding: tosa.conv2d (asymmetric padding, stride,
// dilation), tosa.depthwise_conv2d (multiplier 2), tessel.conv2d with
// groups = 2 and depthwise groups = C (multiplier 1 and 2); and tessel.conv2d
// with groups = 2 without padding (lowered to per-group slices + concat);
// and square groups (2 in, 2 out) whose weights are an input, which -O3
// keeps whole as linalg.conv_2d_nhwgc_gfhwc without a constant filter for
// the grouped kernel: the generic lowering runs it.
// Layouts: NHWC input, OHWI weights (tosa.depthwise_conv2d: KH x KW x C x M).
// The unpadded, ungrouped variants are in ops_conv.mlir.
// References: e2e_refs.py (explicit-window numpy convolution).
//
// RUN: %python %e2e %s --work-dir %t -O 0,3

// pad = [top 1, bottom 2, left 0, right 1], stride (1, 2), dilation (2, 1).
func.func @conv2d_pad_dilation(%x: tensor<2x8x8x2xf32>, %w: tensor<3x3x3x2xf32>, %b: tensor<3xf32>) -> tensor<2x7x4x3xf32> {
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %y = tosa.conv2d %x, %w, %b, %zp, %zp {acc_type = f32, pad = array<i64: 1, 2, 0, 1>, stride = array<i64: 1, 2>, dilation = array<i64: 2, 1>}
      : (tensor<2x8x8x2xf32>, tensor<3x3x3x2xf32>, tensor<3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x7x4x3xf32>
  return %y : tensor<2x7x4x3xf32>
}

// Taps that read only padding (tessel-trim-padded-taps at -O3): dilation
// 12 with padding 12 on a 14x14 map (DeepLabV3's ASPP), 9 regions of 1 or
// 2 taps a side; dilation 4, stride 2, asymmetric padding.
func.func @conv2d_aspp_dilation_12(%x: tensor<1x14x14x5xf32>, %w: tensor<3x3x3x5xf32>, %b: tensor<3xf32>) -> tensor<1x14x14x3xf32> {
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %y = tosa.conv2d %x, %w, %b, %zp, %zp {acc_type = f32, pad = array<i64: 12, 12, 12, 12>, stride = array<i64: 1, 1>, dilation = array<i64: 12, 12>}
      : (tensor<1x14x14x5xf32>, tensor<3x3x3x5xf32>, tensor<3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x14x14x3xf32>
  return %y : tensor<1x14x14x3xf32>
}

func.func @conv2d_padded_taps_strided(%x: tensor<2x9x9x2xf32>, %w: tensor<3x3x3x2xf32>, %b: tensor<3xf32>) -> tensor<2x5x5x3xf32> {
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %y = tosa.conv2d %x, %w, %b, %zp, %zp {acc_type = f32, pad = array<i64: 8, 0, 0, 8>, stride = array<i64: 2, 2>, dilation = array<i64: 4, 4>}
      : (tensor<2x9x9x2xf32>, tensor<3x3x3x2xf32>, tensor<3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x5x5x3xf32>
  return %y : tensor<2x5x5x3xf32>
}

// Transposed convolutions (tessel-decompose-transpose-conv): kernel =
// stride, one matmul and a depth-to-space; overlapping 3x3 at stride 2 and
// a padded output, upstream's zero-spread convolution.
func.func @transpose_conv_k2s2(%x: tensor<2x4x5x3xf32>, %w: tensor<4x2x2x3xf32>, %b: tensor<4xf32>) -> tensor<2x8x10x4xf32> {
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %y = tosa.transpose_conv2d %x, %w, %b, %zp, %zp {acc_type = f32, out_pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>}
      : (tensor<2x4x5x3xf32>, tensor<4x2x2x3xf32>, tensor<4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x8x10x4xf32>
  return %y : tensor<2x8x10x4xf32>
}

func.func @transpose_conv_k3s2_pad(%x: tensor<1x4x4x3xf32>, %w: tensor<5x3x3x3xf32>, %b: tensor<5xf32>) -> tensor<1x10x9x5xf32> {
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %y = tosa.transpose_conv2d %x, %w, %b, %zp, %zp {acc_type = f32, out_pad = array<i64: 1, 0, 0, 0>, stride = array<i64: 2, 2>}
      : (tensor<1x4x4x3xf32>, tensor<5x3x3x3xf32>, tensor<5xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x10x9x5xf32>
  return %y : tensor<1x10x9x5xf32>
}

func.func @depthwise_tosa_m2(%x: tensor<1x6x6x3xf32>, %w: tensor<3x3x3x2xf32>, %b: tensor<6xf32>) -> tensor<1x6x6x6xf32> {
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %y = tosa.depthwise_conv2d %x, %w, %b, %zp, %zp {acc_type = f32, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
      : (tensor<1x6x6x3xf32>, tensor<3x3x3x2xf32>, tensor<6xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x6x6x6xf32>
  return %y : tensor<1x6x6x6xf32>
}

func.func @grouped_conv_g2(%x: tensor<1x6x6x4xf32>, %w: tensor<6x3x3x2xf32>, %b: tensor<6xf32>) -> tensor<1x6x6x6xf32> {
  %y = tessel.conv2d %x, %w, %b {groups = 2 : i64, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
      : (tensor<1x6x6x4xf32>, tensor<6x3x3x2xf32>, tensor<6xf32>) -> tensor<1x6x6x6xf32>
  return %y : tensor<1x6x6x6xf32>
}

// Depthwise: groups = C = 4, multiplier 1, stride 2.
func.func @depthwise_m1(%x: tensor<1x7x7x4xf32>, %w: tensor<4x3x3x1xf32>, %b: tensor<4xf32>) -> tensor<1x4x4x4xf32> {
  %y = tessel.conv2d %x, %w, %b {groups = 4 : i64, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>}
      : (tensor<1x7x7x4xf32>, tensor<4x3x3x1xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  return %y : tensor<1x4x4x4xf32>
}

// Depthwise: groups = C = 3, multiplier 2, dilation 2, batch 2.
func.func @depthwise_m2_dilated(%x: tensor<2x6x6x3xf32>, %w: tensor<6x3x3x1xf32>, %b: tensor<6xf32>) -> tensor<2x6x6x6xf32> {
  %y = tessel.conv2d %x, %w, %b {groups = 3 : i64, pad = array<i64: 2, 2, 2, 2>, stride = array<i64: 1, 1>, dilation = array<i64: 2, 2>}
      : (tensor<2x6x6x3xf32>, tensor<6x3x3x1xf32>, tensor<6xf32>) -> tensor<2x6x6x6xf32>
  return %y : tensor<2x6x6x6xf32>
}

func.func @grouped_conv_g2_valid(%x: tensor<1x6x6x4xf32>, %w: tensor<6x3x3x2xf32>, %b: tensor<6xf32>) -> tensor<1x4x4x6xf32> {
  %y = tessel.conv2d %x, %w, %b {groups = 2 : i64, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
      : (tensor<1x6x6x4xf32>, tensor<6x3x3x2xf32>, tensor<6xf32>) -> tensor<1x4x4x6xf32>
  return %y : tensor<1x4x4x6xf32>
}

func.func @grouped_conv_square_runtime_w(%x: tensor<2x7x8x6xf32>, %w: tensor<6x3x3x2xf32>, %b: tensor<6xf32>) -> tensor<2x3x7x6xf32> {
  %y = tessel.conv2d %x, %w, %b {groups = 3 : i64, pad = array<i64: 1, 0, 2, 1>, stride = array<i64: 2, 1>, dilation = array<i64: 1, 2>}
      : (tensor<2x7x8x6xf32>, tensor<6x3x3x2xf32>, tensor<6xf32>) -> tensor<2x3x7x6xf32>
  return %y : tensor<2x3x7x6xf32>
}
