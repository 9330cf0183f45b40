// conv microbenchmark: ResNet-50's 3x3, 256->256-channel layer at 14x14
// (layer3), stride 1, pad 1, NHWC activations / OHWI weights, fp32.
// 2*14*14*256*256*9 = 231.2 MFLOP per call. Input, weights and bias are
// inputs. Run by bench/gemm_bench/gemm_bench.py.
func.func @main(%x: tensor<1x14x14x256xf32> {tessel.name = "x"},
                %w: tensor<256x3x3x256xf32> {tessel.name = "w"},
                %bias: tensor<256xf32> {tessel.name = "bias"})
    -> (tensor<1x14x14x256xf32> {tessel.name = "y"}) {
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %y = tosa.conv2d %x, %w, %bias, %zp, %zp {acc_type = f32, pad = array<i64: 1, 1, 1, 1>,
      stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
      : (tensor<1x14x14x256xf32>, tensor<256x3x3x256xf32>, tensor<256xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x14x14x256xf32>
  return %y : tensor<1x14x14x256xf32>
}
