// RUN: tessel-opt %s -split-input-file -tessel-approximate-math | FileCheck %s

// f32 exp becomes arith polynomial code (no libm call left to block
// vectorization).
// CHECK-LABEL: func @exp_f32
// CHECK-NOT: math.exp
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @exp_f32(%x: f32) -> f32 {
  %y = math.exp %x : f32
  return %y : f32
}

// -----

// Inside a linalg body, on vectors too.
// CHECK-LABEL: func @tanh_in_generic
// CHECK: linalg.generic
// CHECK-NOT: math.tanh
// CHECK: linalg.yield
// CHECK-LABEL: func @tanh_vector
// CHECK-NOT: math.tanh
#id = affine_map<(d0) -> (d0)>
func.func @tanh_in_generic(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = math.tanh %a : f32
    linalg.yield %t : f32
  } -> tensor<8xf32>
  return %y : tensor<8xf32>
}
func.func @tanh_vector(%x: vector<16xf32>) -> vector<16xf32> {
  %y = math.tanh %x : vector<16xf32>
  return %y : vector<16xf32>
}

// -----

// Functions without an accurate approximation, and f64, keep libm.
// CHECK-LABEL: func @kept
// CHECK: math.sin %{{.*}} : f32
// CHECK: math.exp %{{.*}} : f64
func.func @kept(%x: f32, %y: f64) -> (f32, f64) {
  %a = math.sin %x : f32
  %b = math.exp %y : f64
  return %a, %b : f32, f64
}
