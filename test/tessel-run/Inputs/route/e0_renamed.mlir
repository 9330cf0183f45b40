// e0 written as a plain function whose dynamic dimension is named N: it
// links to an import that calls it T (names match up to renaming).
func.func @e0(%x: tensor<?x4xf32> {tessel.dim_names = ["N", ""]}) -> (tensor<?x4xf32> {tessel.dim_names = ["N", ""]}) {
  %y = tosa.exp %x : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}
