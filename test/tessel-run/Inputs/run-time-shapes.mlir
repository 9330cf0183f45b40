// Outputs whose sizes follow from the data (artifact ABI v6): the first
// clamp(n, 0, 8) elements of x; an n x 3 matrix of row indices; x + 1,
// whose static size the caller allocates as usual.
func.func @main(%x: tensor<8xf32>, %n: tensor<i64>)
    -> (tensor<?xf32>, tensor<?x3xi32>, tensor<8xf32>) {
  %c0 = arith.constant 0 : i64
  %c8 = arith.constant 8 : i64
  %v = tensor.extract %n[] : tensor<i64>
  %lo = arith.maxsi %v, %c0 : i64
  %k = arith.minsi %lo, %c8 : i64
  %s = arith.index_cast %k : i64 to index
  %head = tensor.extract_slice %x[0] [%s] [1] : tensor<8xf32> to tensor<?xf32>
  %rows = tensor.generate %s {
  ^bb0(%i: index, %j: index):
    %r = arith.index_cast %i : index to i32
    tensor.yield %r : i32
  } : tensor<?x3xi32>
  %one = arith.constant dense<1.0> : tensor<8xf32>
  %y = arith.addf %x, %one : tensor<8xf32>
  return %head, %rows, %y : tensor<?xf32>, tensor<?x3xi32>, tensor<8xf32>
}
