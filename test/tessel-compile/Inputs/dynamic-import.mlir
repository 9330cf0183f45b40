// An external component whose result is dynamic but whose arguments are
// not: the caller could not size the result, so it is not importable.
compose.component private @ext(tensor<2x4xf32>) -> tensor<?x4xf32>
func.func @main(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %y = compose.call @ext(%x) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}
