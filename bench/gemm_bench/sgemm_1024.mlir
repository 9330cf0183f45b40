// sgemm microbenchmark: C[1024x1024] = A[1024x1024] x B[1024x1024], fp32.
// 2*1024^3 = 2.147 GFLOP per call. Both operands are inputs (no constants),
// so the compiler cannot fold anything. Run by bench/gemm_bench/gemm_bench.py.
func.func @main(%a: tensor<1x1024x1024xf32> {tessel.name = "a"},
                %b: tensor<1x1024x1024xf32> {tessel.name = "b"})
    -> (tensor<1x1024x1024xf32> {tessel.name = "c"}) {
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %c = tosa.matmul %a, %b, %zp, %zp : (tensor<1x1024x1024xf32>, tensor<1x1024x1024xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1024x1024xf32>
  return %c : tensor<1x1024x1024xf32>
}
