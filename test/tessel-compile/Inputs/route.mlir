// A 2-expert top-1 route (experts: x + 1 and 2x), for the driver's
// expert-parallel checks.
compose.component @plus_one(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %one = "tosa.const"() <{values = dense<1.0> : tensor<1x4xf32>}> : () -> tensor<1x4xf32>
  %y = tosa.add %x, %one : (tensor<?x4xf32>, tensor<1x4xf32>) -> tensor<?x4xf32>
  compose.return %y : tensor<?x4xf32>
}
compose.component @twice(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %y = tosa.add %x, %x : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  compose.return %y : tensor<?x4xf32>
}
func.func @main(%x: tensor<4x4xf32>, %p: tensor<4x2xf32>) -> tensor<4x4xf32> {
  %y = compose.route %x, %p {experts = [@plus_one, @twice], k = 1 : i64}
      : (tensor<4x4xf32>, tensor<4x2xf32>) -> tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}
