// Elementwise ops: tosa add/sub/mul/maximum/minimum with broadcasting (equal
// ranks, size-1 dims on either side), relu via clamp, sigmoid, tanh, exp, erf,
// reciprocal, tessel.gelu (none / tanh), and math/arith ops on tensors
// (math.sqrt, arith.divf, math.exp, math.tanh, arith.mulf, arith.addf).
// erf/tanh/exp go through libm or LLVM intrinsics; the default tolerance
// (atol 1e-5, rtol 1e-4) holds for all of them.
// References: e2e_refs.py.
// RUN: %python %e2e %s --work-dir %t -O 0,3

func.func @add_bcast(%a: tensor<2x3x4xf32>, %b: tensor<1x3x1xf32>) -> tensor<2x3x4xf32> {
  %y = tosa.add %a, %b : (tensor<2x3x4xf32>, tensor<1x3x1xf32>) -> tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}

// Both operands broadcast.
func.func @sub_bcast(%a: tensor<2x1x4xf32>, %b: tensor<1x3x4xf32>) -> tensor<2x3x4xf32> {
  %y = tosa.sub %a, %b : (tensor<2x1x4xf32>, tensor<1x3x4xf32>) -> tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}

func.func @mul_bcast(%a: tensor<4x5xf32>, %b: tensor<1x5xf32>) -> tensor<4x5xf32> {
  %shift = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %y = tosa.mul %a, %b, %shift : (tensor<4x5xf32>, tensor<1x5xf32>, tensor<1xi8>) -> tensor<4x5xf32>
  return %y : tensor<4x5xf32>
}

func.func @max_min_bcast(%a: tensor<3x4xf32>, %b: tensor<3x1xf32>, %c: tensor<1x4xf32>) -> (tensor<3x4xf32>, tensor<3x4xf32>) {
  %mx = tosa.maximum %a, %b : (tensor<3x4xf32>, tensor<3x1xf32>) -> tensor<3x4xf32>
  %mn = tosa.minimum %a, %c : (tensor<3x4xf32>, tensor<1x4xf32>) -> tensor<3x4xf32>
  return %mx, %mn : tensor<3x4xf32>, tensor<3x4xf32>
}

// relu and a [-1, 1] clamp.
func.func @relu_clamp(%x: tensor<4x6xf32>) -> (tensor<4x6xf32>, tensor<4x6xf32>) {
  %r = tosa.clamp %x {min_val = 0.0 : f32, max_val = 3.4028235e38 : f32} : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %c = tosa.clamp %x {min_val = -1.0 : f32, max_val = 1.0 : f32} : (tensor<4x6xf32>) -> tensor<4x6xf32>
  return %r, %c : tensor<4x6xf32>, tensor<4x6xf32>
}

func.func @sigmoid(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %y = tosa.sigmoid %x : (tensor<4x6xf32>) -> tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}

func.func @tanh(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %y = tosa.tanh %x : (tensor<4x6xf32>) -> tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}

func.func @exp(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %y = tosa.exp %x : (tensor<4x6xf32>) -> tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}

func.func @erf(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %y = tosa.erf %x : (tensor<4x6xf32>) -> tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}

func.func @gelu_none(%x: tensor<3x8xf32>) -> tensor<3x8xf32> {
  %y = tessel.gelu %x {approximate = #tessel.gelu_approximation<none>} : tensor<3x8xf32>
  return %y : tensor<3x8xf32>
}

func.func @gelu_tanh(%x: tensor<3x8xf32>) -> tensor<3x8xf32> {
  %y = tessel.gelu %x {approximate = #tessel.gelu_approximation<tanh>} : tensor<3x8xf32>
  return %y : tensor<3x8xf32>
}

func.func @sqrt(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %y = math.sqrt %x : tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}

func.func @reciprocal(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %y = tosa.reciprocal %x : (tensor<4x6xf32>) -> tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}

func.func @divf(%a: tensor<4x6xf32>, %b: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %y = arith.divf %a, %b : tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}

func.func @math_on_tensors(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %e = math.exp %x : tensor<4x6xf32>
  %t = math.tanh %x : tensor<4x6xf32>
  %m = arith.mulf %e, %t : tensor<4x6xf32>
  %y = arith.addf %m, %x : tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}
