// Calls the external two-input component @pair with 3 and 5 rows: both
// are its token dimension T, so the import call finds them inconsistent
// and fails instead of letting @pair read past the shorter buffer.
compose.component private @pair(tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
func.func @main(%a: tensor<3x4xf32>, %b: tensor<5x4xf32>) -> tensor<3x4xf32> {
  %y = compose.call @pair(%a, %b) : (tensor<3x4xf32>, tensor<5x4xf32>) -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}
