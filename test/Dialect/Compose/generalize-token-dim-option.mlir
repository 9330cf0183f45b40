// RUN: tessel-opt %s -compose-generalize-token-dim=components=relu | FileCheck %s
// RUN: not tessel-opt %s -compose-generalize-token-dim=components=relu,missing 2>&1 | FileCheck %s --check-prefix=MISSING

// Only the named components are rewritten.
// CHECK: compose.component @relu(%{{.*}}: tensor<?x4xf32>) -> tensor<?x4xf32>
// CHECK: tosa.clamp {{.*}} -> tensor<?x4xf32>
// CHECK: compose.component @other(%{{.*}}: tensor<2x4xf32>) -> tensor<2x4xf32>
// MISSING: error: no component named 'missing'
compose.component @relu(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %y = tosa.clamp %x {min_val = 0.0 : f32, max_val = 3.40282347e+38 : f32} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  compose.return %y : tensor<2x4xf32>
}
compose.component @other(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  compose.return %x : tensor<2x4xf32>
}
