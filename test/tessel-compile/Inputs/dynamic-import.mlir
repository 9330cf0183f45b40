// An external component with a dynamic interface: not importable.
compose.component private @ext(tensor<?x4xf32>) -> tensor<?x4xf32>
func.func @main(%x: tensor<2x4xf32>) -> tensor<?x4xf32> {
  %y = compose.call @ext(%x) : (tensor<2x4xf32>) -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}
