// RUN: tessel-opt %s -split-input-file -tessel-reassociate-reductions | FileCheck %s

// A sum over the last dim: its addf may be reassociated (so LLVM can keep
// partial sums in vector lanes); an all-parallel generic is left alone.
// CHECK-LABEL: func @row_sum
// CHECK: arith.addf %{{.*}}, %{{.*}} fastmath<reassoc,contract> : f32
// CHECK-LABEL: func @elementwise
// CHECK: arith.addf %{{.*}}, %{{.*}} : f32
#in = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d0)>
func.func @row_sum(%x: tensor<4x8xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
func.func @elementwise(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = linalg.generic {indexing_maps = [#in, #in], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%y : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// Existing flags are kept.
// CHECK-LABEL: func @keeps_flags
// CHECK: arith.maximumf %{{.*}}, %{{.*}} fastmath<reassoc,nnan,contract> : f32
#in2 = affine_map<(d0) -> (d0)>
#out2 = affine_map<(d0) -> ()>
func.func @keeps_flags(%x: tensor<8xf32>, %init: tensor<f32>) -> tensor<f32> {
  %r = linalg.generic {indexing_maps = [#in2, #out2], iterator_types = ["reduction"]} ins(%x : tensor<8xf32>) outs(%init : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.maximumf %a, %acc fastmath<nnan> : f32
    linalg.yield %m : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}
