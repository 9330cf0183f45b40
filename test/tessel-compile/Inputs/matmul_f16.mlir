// An f16 GEMM with f32 results (tessel-compile --target=cuda
// --cuda-arch=sm_90a: the TMA + wgmma kernel).
func.func @main(%a: tensor<1x512x256xf16>, %b: tensor<1x256x512xf16>) -> tensor<1x512x512xf32> {
  %z = "tosa.const"() <{values = dense<0.0> : tensor<1xf16>}> : () -> tensor<1xf16>
  %c = tosa.matmul %a, %b, %z, %z : (tensor<1x512x256xf16>, tensor<1x256x512xf16>, tensor<1xf16>, tensor<1xf16>) -> tensor<1x512x512xf32>
  return %c : tensor<1x512x512xf32>
}
