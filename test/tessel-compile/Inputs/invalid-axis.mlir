func.func @main(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0 = tessel.softmax %x {axis = 5 : i64} : tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}
