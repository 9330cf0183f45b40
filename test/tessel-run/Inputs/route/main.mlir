// The routed layer; its experts are external components, linked by name
// from their own artifacts at load time.
compose.component private @e0(tensor<?x4xf32>) -> tensor<?x4xf32>
compose.component private @e1(tensor<?x4xf32>) -> tensor<?x4xf32>
compose.component private @e2(tensor<?x4xf32>) -> tensor<?x4xf32>
func.func @main(%x: tensor<16x4xf32> {tessel.name = "x"}, %p: tensor<16x3xf32> {tessel.name = "p"}) -> (tensor<16x4xf32> {tessel.name = "y"}) {
  %y = compose.route %x, %p {experts = [@e0, @e1, @e2], k = 2 : i64, renormalize}
      : (tensor<16x4xf32>, tensor<16x3xf32>) -> tensor<16x4xf32>
  return %y : tensor<16x4xf32>
}
