// A batch of rows of 3 through a matmul by [[1, 2], [3, 4], [5, 6]] and a
// ReLU, the batch size left dynamic and unnamed.
func.func @main(%x: tensor<?x3xf32>) -> tensor<?x2xf32> {
  %w = arith.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x3xf32>
  %e = tensor.empty(%n) : tensor<?x2xf32>
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x2xf32>) -> tensor<?x2xf32>
  %y = linalg.matmul ins(%x, %w : tensor<?x3xf32>, tensor<3x2xf32>) outs(%f : tensor<?x2xf32>) -> tensor<?x2xf32>
  %r = tosa.clamp %y {min_val = 0.0 : f32, max_val = 3.4e38 : f32} : (tensor<?x2xf32>) -> tensor<?x2xf32>
  return %r : tensor<?x2xf32>
}
