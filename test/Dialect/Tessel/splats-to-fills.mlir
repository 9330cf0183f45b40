// RUN: tessel-opt %s -split-input-file -tessel-splats-to-fills | FileCheck %s
// RUN: tessel-opt %s -split-input-file -tessel-splats-to-fills=min-elements=1 | FileCheck %s --check-prefix=ALL

// A splat larger than the threshold becomes a fill of an empty tensor: no
// 4 GiB global in the artifact.
// CHECK-LABEL: func.func @large
// CHECK: %[[C:.*]] = arith.constant 2.500000e+00 : f32
// CHECK: %[[E:.*]] = tensor.empty() : tensor<1024x1024x1024xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%[[C]] : f32) outs(%[[E]] : tensor<1024x1024x1024xf32>) -> tensor<1024x1024x1024xf32>
// CHECK: return %[[F]]
func.func @large() -> tensor<1024x1024x1024xf32> {
  %c = arith.constant dense<2.5> : tensor<1024x1024x1024xf32>
  return %c : tensor<1024x1024x1024xf32>
}

// -----

// Small splats and non-splat constants stay constants.
// CHECK-LABEL: func.func @small
// CHECK: arith.constant dense<0> : tensor<4x4xi32>
// CHECK: arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-NOT: linalg.fill
// ALL-LABEL: func.func @small
// ALL: linalg.fill ins(%{{.*}} : i32) outs(%{{.*}} : tensor<4x4xi32>)
// ALL: arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
func.func @small() -> (tensor<4x4xi32>, tensor<2xf32>) {
  %a = arith.constant dense<0> : tensor<4x4xi32>
  %b = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  return %a, %b : tensor<4x4xi32>, tensor<2xf32>
}
