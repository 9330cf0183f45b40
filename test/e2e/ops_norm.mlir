// Normalizations: tessel.softmax / log_softmax over the last and a middle
// axis, tessel.layer_norm over the last 1 and last 2 dims with and without
// scale/bias (and scale only), tessel.batch_norm for NHWC (channel_axis 3)
// and NCHW (channel_axis 1).
// References: e2e_refs.py (float64 textbook formulas, biased variance).
// RUN: %python %e2e %s --work-dir %t -O 0,3

func.func @softmax_last(%x: tensor<3x4x7xf32>) -> tensor<3x4x7xf32> {
  %y = tessel.softmax %x {axis = -1 : i64} : tensor<3x4x7xf32>
  return %y : tensor<3x4x7xf32>
}

func.func @softmax_mid(%x: tensor<3x4x7xf32>) -> tensor<3x4x7xf32> {
  %y = tessel.softmax %x {axis = 1 : i64} : tensor<3x4x7xf32>
  return %y : tensor<3x4x7xf32>
}

func.func @log_softmax_last(%x: tensor<3x4x7xf32>) -> tensor<3x4x7xf32> {
  %y = tessel.log_softmax %x {axis = -1 : i64} : tensor<3x4x7xf32>
  return %y : tensor<3x4x7xf32>
}

func.func @log_softmax_mid(%x: tensor<3x4x7xf32>) -> tensor<3x4x7xf32> {
  %y = tessel.log_softmax %x {axis = 1 : i64} : tensor<3x4x7xf32>
  return %y : tensor<3x4x7xf32>
}

func.func @layer_norm_last_affine(%x: tensor<3x4x5xf32>, %g: tensor<5xf32>, %b: tensor<5xf32>) -> tensor<3x4x5xf32> {
  %y = tessel.layer_norm %x scale %g bias %b {axis = -1 : i64, epsilon = 1.0e-5 : f32}
      : tensor<3x4x5xf32>, tensor<5xf32>, tensor<5xf32> -> tensor<3x4x5xf32>
  return %y : tensor<3x4x5xf32>
}

func.func @layer_norm_last_plain(%x: tensor<3x4x5xf32>) -> tensor<3x4x5xf32> {
  %y = tessel.layer_norm %x {axis = -1 : i64} : tensor<3x4x5xf32> -> tensor<3x4x5xf32>
  return %y : tensor<3x4x5xf32>
}

func.func @layer_norm_last2_affine(%x: tensor<3x4x5xf32>, %g: tensor<4x5xf32>, %b: tensor<4x5xf32>) -> tensor<3x4x5xf32> {
  %y = tessel.layer_norm %x scale %g bias %b {axis = -2 : i64}
      : tensor<3x4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32> -> tensor<3x4x5xf32>
  return %y : tensor<3x4x5xf32>
}

// Non-negative axis and a non-default epsilon.
func.func @layer_norm_last2_plain(%x: tensor<3x4x5xf32>) -> tensor<3x4x5xf32> {
  %y = tessel.layer_norm %x {axis = 1 : i64, epsilon = 1.0e-3 : f32} : tensor<3x4x5xf32> -> tensor<3x4x5xf32>
  return %y : tensor<3x4x5xf32>
}

func.func @layer_norm_scale_only(%x: tensor<3x4x5xf32>, %g: tensor<5xf32>) -> tensor<3x4x5xf32> {
  %y = tessel.layer_norm %x scale %g {axis = -1 : i64} : tensor<3x4x5xf32>, tensor<5xf32> -> tensor<3x4x5xf32>
  return %y : tensor<3x4x5xf32>
}

func.func @batch_norm_nhwc(%x: tensor<2x3x3x4xf32>, %s: tensor<4xf32>, %b: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) -> tensor<2x3x3x4xf32> {
  %y = tessel.batch_norm %x, %s, %b, %m, %v {channel_axis = 3 : i64, epsilon = 1.0e-5 : f32}
      : tensor<2x3x3x4xf32>, tensor<4xf32> -> tensor<2x3x3x4xf32>
  return %y : tensor<2x3x3x4xf32>
}

func.func @batch_norm_nchw(%x: tensor<2x3x4x4xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<2x3x4x4xf32> {
  %y = tessel.batch_norm %x, %s, %b, %m, %v {channel_axis = 1 : i64, epsilon = 1.0e-3 : f32}
      : tensor<2x3x4x4xf32>, tensor<3xf32> -> tensor<2x3x4x4xf32>
  return %y : tensor<2x3x4x4xf32>
}
