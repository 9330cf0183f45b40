// Padded pooling: tosa.max_pool2d (padding never wins) and tosa.avg_pool2d
// (TOSA excludes the padding from the divisor) with stride and symmetric or
// asymmetric padding. Unpadded pooling: ops_pool.mlir.
// References: e2e_refs.py.
//
// RUN: %python %e2e %s --work-dir %t -O 0,3

func.func @maxpool_pad_stride(%x: tensor<1x7x7x3xf32>) -> tensor<1x4x4x3xf32> {
  %y = tosa.max_pool2d %x {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>, pad = array<i64: 1, 1, 1, 1>}
      : (tensor<1x7x7x3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

func.func @avgpool_pad_stride(%x: tensor<1x7x7x3xf32>) -> tensor<1x4x4x3xf32> {
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %y = tosa.avg_pool2d %x, %zp, %zp {acc_type = f32, kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>, pad = array<i64: 1, 1, 1, 1>}
      : (tensor<1x7x7x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// kernel 2x3, stride (1, 2), pad [top 0, bottom 1, left 1, right 2].
func.func @avgpool_asym(%x: tensor<2x5x8x2xf32>) -> tensor<2x5x5x2xf32> {
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %y = tosa.avg_pool2d %x, %zp, %zp {acc_type = f32, kernel = array<i64: 2, 3>, stride = array<i64: 1, 2>, pad = array<i64: 0, 1, 1, 2>}
      : (tensor<2x5x8x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x5x5x2xf32>
  return %y : tensor<2x5x5x2xf32>
}
