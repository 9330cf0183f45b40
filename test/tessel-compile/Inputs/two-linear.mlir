// Two linear layers with ReLU between (x: 2x8 -> 2x4): the model of
// quantize-static.test.
func.func @main(%x: tensor<2x8xf32> {tessel.name = "x"}) -> (tensor<2x4xf32> {tessel.name = "y"}) {
  %w1 = "tosa.const"() <{values = dense<[[0.5, -1.0, 0.25, 0.0, 1.0, 0.5], [1.0, 0.5, -0.5, 0.25, 0.0, -1.0], [-0.25, 0.75, 1.0, -1.0, 0.5, 0.0], [0.0, 0.25, -0.75, 1.0, -0.5, 0.5], [1.0, -0.5, 0.0, 0.5, 0.25, -0.25], [-1.0, 0.0, 0.5, -0.25, 1.0, 0.75], [0.25, 1.0, -0.25, 0.0, -1.0, 0.5], [0.5, -0.75, 0.0, 1.0, 0.25, -0.5]]> : tensor<8x6xf32>}> : () -> tensor<8x6xf32> loc("w1")
  %w2 = "tosa.const"() <{values = dense<[[1.0, -0.5, 0.25, 0.0], [0.5, 1.0, -1.0, 0.25], [-0.75, 0.0, 0.5, 1.0], [0.25, -0.25, 1.0, -0.5], [0.0, 0.75, -0.5, 0.5], [1.0, 0.5, 0.0, -1.0]]> : tensor<6x4xf32>}> : () -> tensor<6x4xf32> loc("w2")
  %s1 = tosa.const_shape {values = dense<[1, 2, 8]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s2 = tosa.const_shape {values = dense<[1, 8, 6]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s3 = tosa.const_shape {values = dense<[1, 6, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %z = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %x3 = tosa.reshape %x, %s1 : (tensor<2x8xf32>, !tosa.shape<3>) -> tensor<1x2x8xf32>
  %w13 = tosa.reshape %w1, %s2 : (tensor<8x6xf32>, !tosa.shape<3>) -> tensor<1x8x6xf32>
  %h = tosa.matmul %x3, %w13, %z, %z : (tensor<1x2x8xf32>, tensor<1x8x6xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x6xf32> loc("fc1")
  %r = tosa.clamp %h {min_val = 0.0 : f32, max_val = 3.4e38 : f32} : (tensor<1x2x6xf32>) -> tensor<1x2x6xf32> loc("relu")
  %w23 = tosa.reshape %w2, %s3 : (tensor<6x4xf32>, !tosa.shape<3>) -> tensor<1x6x4xf32>
  %y3 = tosa.matmul %r, %w23, %z, %z : (tensor<1x2x6xf32>, tensor<1x6x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x4xf32> loc("fc2")
  %s4 = tosa.const_shape {values = dense<[2, 4]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %y = tosa.reshape %y3, %s4 : (tensor<1x2x4xf32>, !tosa.shape<2>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}
