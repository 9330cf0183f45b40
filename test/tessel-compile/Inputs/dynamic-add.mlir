// Two inputs whose batches are dynamic and unnamed, added elementwise:
// equal batches add, a batch of 1 broadcasts, others must fail the call.
func.func @main(%x: tensor<?x2xf32>, %y: tensor<?x2xf32>) -> tensor<?x2xf32> {
  %s = tosa.add %x, %y : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<?x2xf32>
  return %s : tensor<?x2xf32>
}
