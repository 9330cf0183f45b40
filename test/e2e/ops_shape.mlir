// Data movement and constants: tosa.reshape, transpose, gather (i32 indices:
// an integer input), constants (including an output that is a constant), and
// integer tensors through the ABI (i32 in/out, an i64 input converted with
// arith.sitofp), and tosa.slice feeding an elementwise op. concat, a slice
// as the result, and pad: ops_slice_concat_pad.mlir.
// References: e2e_refs.py.
// RUN: %python %e2e %s --work-dir %t -O 0,3

func.func @reshape(%x: tensor<2x3x4xf32>) -> (tensor<6x4xf32>, tensor<4x1x6xf32>) {
  %s1 = tosa.const_shape {values = dense<[6, 4]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %s2 = tosa.const_shape {values = dense<[4, 1, 6]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %a = tosa.reshape %x, %s1 : (tensor<2x3x4xf32>, !tosa.shape<2>) -> tensor<6x4xf32>
  %b = tosa.reshape %x, %s2 : (tensor<2x3x4xf32>, !tosa.shape<3>) -> tensor<4x1x6xf32>
  return %a, %b : tensor<6x4xf32>, tensor<4x1x6xf32>
}

func.func @transpose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %y = tosa.transpose %x {perms = array<i32: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  return %y : tensor<4x2x3xf32>
}

// The slice is read in place by the add (no copy of its own).
func.func @slice_add(%x: tensor<3x4x5xf32>, %y: tensor<2x3x3xf32>) -> tensor<2x3x3xf32> {
  %start = tosa.const_shape {values = dense<[1, 0, 2]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %size = tosa.const_shape {values = dense<[2, 3, 3]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s = tosa.slice %x, %start, %size : (tensor<3x4x5xf32>, !tosa.shape<3>, !tosa.shape<3>) -> tensor<2x3x3xf32>
  %r = tosa.add %s, %y : (tensor<2x3x3xf32>, tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
  return %r : tensor<2x3x3xf32>
}

// values N x K x C, indices N x W (i32, in [0, K)) -> N x W x C.
func.func @gather(%v: tensor<2x5x3xf32> {tessel.name = "values"}, %i: tensor<2x4xi32> {tessel.name = "indices"}) -> tensor<2x4x3xf32> {
  %y = tosa.gather %v, %i : (tensor<2x5x3xf32>, tensor<2x4xi32>) -> tensor<2x4x3xf32>
  return %y : tensor<2x4x3xf32>
}

// CONST_ADD_C / CONST_ONLY in e2e_refs.py.
func.func @constants(%x: tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<2x2xf32>) {
  %c = "tosa.const"() {values = dense<[[1.0, -2.5, 0.375, 4.0]]> : tensor<1x4xf32>} : () -> tensor<1x4xf32>
  %k = "tosa.const"() {values = dense<[[0.5, 1.5], [-3.0, 7.25]]> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %y = tosa.add %x, %c : (tensor<3x4xf32>, tensor<1x4xf32>) -> tensor<3x4xf32>
  return %y, %k : tensor<3x4xf32>, tensor<2x2xf32>
}

func.func @int_add(%a: tensor<3x4xi32>, %b: tensor<3x4xi32>) -> tensor<3x4xi32> {
  %y = tosa.add %a, %b : (tensor<3x4xi32>, tensor<3x4xi32>) -> tensor<3x4xi32>
  return %y : tensor<3x4xi32>
}

func.func @i64_to_f32(%a: tensor<3x4xi64>, %x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %f = arith.sitofp %a : tensor<3x4xi64> to tensor<3x4xf32>
  %y = arith.mulf %f, %x : tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}
