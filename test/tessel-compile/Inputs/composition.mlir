// Two components: an encoder and a head that calls it; main chains them.
compose.component @encoder(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %y = tosa.exp %x : (tensor<2x4xf32>) -> tensor<2x4xf32>
  compose.return %y : tensor<2x4xf32>
}
compose.component @head(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %e = compose.call @encoder(%x) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %y = tosa.tanh %e : (tensor<2x4xf32>) -> tensor<2x4xf32>
  compose.return %y : tensor<2x4xf32>
}
func.func @main(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %y = compose.call @head(%x) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %z = tosa.abs %y : (tensor<2x4xf32>) -> tensor<2x4xf32>
  return %z : tensor<2x4xf32>
}
