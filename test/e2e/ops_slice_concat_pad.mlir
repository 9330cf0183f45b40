// tosa.concat (three operands on a middle axis, and an operand with itself
// on the last axis), tosa.slice, tosa.pad (padding [[1, 0], [2, 3]] with 0.5).
// References: e2e_refs.py.
//
// RUN: %python %e2e %s --work-dir %t -O 0,3

func.func @concat(%a: tensor<2x3x4xf32>, %b: tensor<2x5x4xf32>, %c: tensor<2x1x4xf32>) -> (tensor<2x9x4xf32>, tensor<2x3x8xf32>) {
  %y = tosa.concat %a, %b, %c {axis = 1 : i32} : (tensor<2x3x4xf32>, tensor<2x5x4xf32>, tensor<2x1x4xf32>) -> tensor<2x9x4xf32>
  %z = tosa.concat %a, %a {axis = 2 : i32} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x8xf32>
  return %y, %z : tensor<2x9x4xf32>, tensor<2x3x8xf32>
}

func.func @slice(%x: tensor<3x4x5xf32>) -> tensor<2x3x3xf32> {
  %start = tosa.const_shape {values = dense<[1, 0, 2]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %size = tosa.const_shape {values = dense<[2, 3, 3]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %y = tosa.slice %x, %start, %size : (tensor<3x4x5xf32>, !tosa.shape<3>, !tosa.shape<3>) -> tensor<2x3x3xf32>
  return %y : tensor<2x3x3xf32>
}

func.func @pad(%x: tensor<3x4xf32>) -> tensor<4x9xf32> {
  %p = tosa.const_shape {values = dense<[1, 0, 2, 3]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %c = "tosa.const"() {values = dense<0.5> : tensor<1xf32>} : () -> tensor<1xf32>
  %y = tosa.pad %x, %p, %c : (tensor<3x4xf32>, !tosa.shape<4>, tensor<1xf32>) -> tensor<4x9xf32>
  return %y : tensor<4x9xf32>
}
