// Pooling without padding: tosa.max_pool2d / tosa.avg_pool2d with stride, and
// global pooling through avg_pool2d with a full kernel, tessel.reduce_mean and
// tosa.reduce_max. Padded pooling: ops_pool_padded.mlir.
// References: e2e_refs.py.
// RUN: %python %e2e %s --work-dir %t -O 0,3

func.func @maxpool_2x2(%x: tensor<2x8x6x3xf32>) -> tensor<2x4x3x3xf32> {
  %y = tosa.max_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>}
      : (tensor<2x8x6x3xf32>) -> tensor<2x4x3x3xf32>
  return %y : tensor<2x4x3x3xf32>
}

// Overlapping windows: kernel 3x3, stride (2, 1).
func.func @maxpool_3x3_stride(%x: tensor<1x7x6x3xf32>) -> tensor<1x3x4x3xf32> {
  %y = tosa.max_pool2d %x {kernel = array<i64: 3, 3>, stride = array<i64: 2, 1>, pad = array<i64: 0, 0, 0, 0>}
      : (tensor<1x7x6x3xf32>) -> tensor<1x3x4x3xf32>
  return %y : tensor<1x3x4x3xf32>
}

func.func @avgpool_stride(%x: tensor<1x7x7x3xf32>) -> tensor<1x3x3x3xf32> {
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %y = tosa.avg_pool2d %x, %zp, %zp {acc_type = f32, kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>}
      : (tensor<1x7x7x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x3x3x3xf32>
  return %y : tensor<1x3x3x3xf32>
}

func.func @global_avgpool_full_kernel(%x: tensor<2x6x5x4xf32>) -> tensor<2x1x1x4xf32> {
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %y = tosa.avg_pool2d %x, %zp, %zp {acc_type = f32, kernel = array<i64: 6, 5>, stride = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>}
      : (tensor<2x6x5x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x1x1x4xf32>
  return %y : tensor<2x1x1x4xf32>
}

func.func @global_avg_reduce_mean(%x: tensor<2x6x5x4xf32>) -> tensor<2x1x1x4xf32> {
  %h = tessel.reduce_mean %x {axis = 1 : i64} : (tensor<2x6x5x4xf32>) -> tensor<2x1x5x4xf32>
  %y = tessel.reduce_mean %h {axis = 2 : i64} : (tensor<2x1x5x4xf32>) -> tensor<2x1x1x4xf32>
  return %y : tensor<2x1x1x4xf32>
}

func.func @global_max_reduce_max(%x: tensor<2x6x5x4xf32>) -> tensor<2x1x1x4xf32> {
  %h = tosa.reduce_max %x {axis = 1 : i32} : (tensor<2x6x5x4xf32>) -> tensor<2x1x5x4xf32>
  %y = tosa.reduce_max %h {axis = 2 : i32} : (tensor<2x1x5x4xf32>) -> tensor<2x1x1x4xf32>
  return %y : tensor<2x1x1x4xf32>
}
