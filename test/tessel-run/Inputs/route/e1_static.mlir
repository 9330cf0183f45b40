// An e1 compiled for exactly 8 tokens: it cannot serve a route.
compose.component @e1(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %y = tosa.tanh %x : (tensor<8x4xf32>) -> tensor<8x4xf32>
  compose.return %y : tensor<8x4xf32>
}
