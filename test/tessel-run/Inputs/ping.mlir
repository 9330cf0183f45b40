// With pong.mlir: two artifacts that import each other (a cycle).
compose.component private @pong(tensor<2xf32>) -> tensor<2xf32>
func.func @ping(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = compose.call @pong(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %y : tensor<2xf32>
}
