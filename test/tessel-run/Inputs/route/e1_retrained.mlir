// Expert e1 after retraining: sigmoid instead of tanh.
compose.component @e1(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %y = tosa.sigmoid %x : (tensor<?x4xf32>) -> tensor<?x4xf32>
  compose.return %y : tensor<?x4xf32>
}
