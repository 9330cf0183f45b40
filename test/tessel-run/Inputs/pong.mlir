// With ping.mlir: two artifacts that import each other (a cycle).
compose.component private @ping(tensor<2xf32>) -> tensor<2xf32>
func.func @pong(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = compose.call @ping(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %y : tensor<2xf32>
}
