// Three experts of a routed layer, each compiled to its own artifact with
// `tessel-compile experts.mlir --component=eN`; the token dimension stays
// dynamic, so an expert runs on however many tokens reach it.
compose.component @e0(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %y = tosa.exp %x : (tensor<?x4xf32>) -> tensor<?x4xf32>
  compose.return %y : tensor<?x4xf32>
}
compose.component @e1(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %y = tosa.tanh %x : (tensor<?x4xf32>) -> tensor<?x4xf32>
  compose.return %y : tensor<?x4xf32>
}
compose.component @e2(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %w = "tosa.const"() <{values = dense<[[[1.0, 0.5, 0.0, -1.0], [0.0, 1.0, 0.5, 0.0], [2.0, 0.0, 1.0, 0.5], [0.0, -0.5, 0.0, 1.0]]]> : tensor<1x4x4xf32>}> : () -> tensor<1x4x4xf32>
  %s3 = tosa.const_shape {values = dense<[1, -1, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %x3 = tosa.reshape %x, %s3 : (tensor<?x4xf32>, !tosa.shape<3>) -> tensor<1x?x4xf32>
  %z = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %m = tosa.matmul %x3, %w, %z, %z : (tensor<1x?x4xf32>, tensor<1x4x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x?x4xf32>
  %s2 = tosa.const_shape {values = dense<[-1, 4]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %y = tosa.reshape %m, %s2 : (tensor<1x?x4xf32>, !tosa.shape<2>) -> tensor<?x4xf32>
  compose.return %y : tensor<?x4xf32>
}
// Not experts: a two-input component whose inputs share the token
// dimension, and one that returns another number of rows.
compose.component @pair(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %y = tosa.add %a, %b : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  compose.return %y : tensor<?x4xf32>
}
compose.component @twice(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %y = tosa.concat %x, %x {axis = 0 : i32} : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  compose.return %y : tensor<?x4xf32>
}
