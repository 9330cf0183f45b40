// RUN: tessel-opt %s -split-input-file --tessel-copy-repeated-results | FileCheck %s

// A value returned twice: the repeat is copied, the first use stays.
// CHECK-LABEL: func.func @twice
// CHECK: %[[Y:.*]] = tosa.clamp
// CHECK: %[[C:.*]] = bufferization.alloc_tensor() copy(%[[Y]]) : tensor<4xf32>
// CHECK: return %[[Y]], %[[C]]
func.func @twice(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %y = tosa.clamp %x {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  return %y, %y : tensor<4xf32>, tensor<4xf32>
}

// -----

// An argument returned three times: two copies.
// CHECK-LABEL: func.func @arg
// CHECK-SAME: (%[[X:.*]]: tensor<2xf32>)
// CHECK: %[[C1:.*]] = bufferization.alloc_tensor() copy(%[[X]])
// CHECK: %[[C2:.*]] = bufferization.alloc_tensor() copy(%[[X]])
// CHECK: return %[[X]], %[[C1]], %[[C2]]
func.func @arg(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  return %x, %x, %x : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}

// -----

// Distinct results and private functions are left alone.
// CHECK-LABEL: func.func @distinct
// CHECK-NOT: alloc_tensor
// CHECK: return
// CHECK-LABEL: func.func private @helper
// CHECK-NOT: alloc_tensor
func.func @distinct(%x: tensor<2xf32>, %y: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  return %x, %y : tensor<2xf32>, tensor<2xf32>
}
func.func private @helper(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  return %x, %x : tensor<2xf32>, tensor<2xf32>
}
