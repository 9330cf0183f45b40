// RUN: tessel-opt %s -split-input-file | FileCheck %s
// Round trip: every tessel op parses, verifies and prints in its declarative
// assembly format.
// RUN: tessel-opt %s -split-input-file | tessel-opt -split-input-file | FileCheck %s

// CHECK-LABEL: func @softmax
// CHECK: tessel.softmax %{{.*}} {axis = -1 : i64} : tensor<2x8xf32>
// CHECK: tessel.log_softmax %{{.*}} {axis = 0 : i64} : tensor<2x8xf32>
func.func @softmax(%x: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %0 = tessel.softmax %x {axis = -1 : i64} : tensor<2x8xf32>
  %1 = tessel.log_softmax %x {axis = 0 : i64} : tensor<2x8xf32>
  return %0, %1 : tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// CHECK-LABEL: func @layer_norm
// CHECK: tessel.layer_norm %{{.*}} scale %{{.*}} bias %{{.*}} {axis = -1 : i64} : tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<4x16xf32>
// CHECK: tessel.layer_norm %{{.*}} {axis = 1 : i64, epsilon = 1.000000e-03 : f32} : tensor<4x16xf32> -> tensor<4x16xf32>
func.func @layer_norm(%x: tensor<4x16xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %0 = tessel.layer_norm %x scale %g bias %b {axis = -1 : i64} : tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  %1 = tessel.layer_norm %x {axis = 1 : i64, epsilon = 1.0e-3 : f32} : tensor<4x16xf32> -> tensor<4x16xf32>
  return %0, %1 : tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// CHECK-LABEL: func @batch_norm
// CHECK: tessel.batch_norm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {channel_axis = 3 : i64} : tensor<1x4x4x3xf32>, tensor<3xf32> -> tensor<1x4x4x3xf32>
func.func @batch_norm(%x: tensor<1x4x4x3xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<1x4x4x3xf32> {
  %0 = tessel.batch_norm %x, %s, %b, %m, %v {channel_axis = 3 : i64} : tensor<1x4x4x3xf32>, tensor<3xf32> -> tensor<1x4x4x3xf32>
  return %0 : tensor<1x4x4x3xf32>
}

// -----

// CHECK-LABEL: func @gelu
// CHECK: tessel.gelu %{{.*}} : tensor<4xf32>
// CHECK: tessel.gelu %{{.*}} {approximate = #tessel.gelu_approximation<tanh>} : tensor<4xf32>
func.func @gelu(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = tessel.gelu %x : tensor<4xf32>
  %1 = tessel.gelu %x {approximate = #tessel.gelu_approximation<tanh>} : tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func @conv2d
// CHECK: tessel.conv2d %{{.*}}, %{{.*}}, %{{.*}} {dilation = array<i64: 1, 1>, groups = 2 : i64, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 2, 2>} : (tensor<1x8x8x4xf32>, tensor<6x3x3x2xf32>, tensor<6xf32>) -> tensor<1x4x4x6xf32>
func.func @conv2d(%x: tensor<1x8x8x4xf32>, %w: tensor<6x3x3x2xf32>, %b: tensor<6xf32>) -> tensor<1x4x4x6xf32> {
  %0 = tessel.conv2d %x, %w, %b {groups = 2 : i64, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>} : (tensor<1x8x8x4xf32>, tensor<6x3x3x2xf32>, tensor<6xf32>) -> tensor<1x4x4x6xf32>
  return %0 : tensor<1x4x4x6xf32>
}

// -----

// CHECK-LABEL: func @top_k
// CHECK: tessel.top_k %{{.*}} {axis = 1 : i64, k = 2 : i64} : tensor<2x8xf32> -> tensor<2x2xf32>, tensor<2x2xi64>
// CHECK: tessel.top_k %{{.*}} {axis = 0 : i64, k = 1 : i64, largest = false} : tensor<?x8xi8> -> tensor<1x8xi8>, tensor<1x8xi64>
func.func @top_k(%x: tensor<2x8xf32>, %y: tensor<?x8xi8>) -> (tensor<2x2xf32>, tensor<1x8xi64>) {
  %v, %i = tessel.top_k %x {axis = 1 : i64, k = 2 : i64} : tensor<2x8xf32> -> tensor<2x2xf32>, tensor<2x2xi64>
  %w, %j = tessel.top_k %y {axis = 0 : i64, k = 1 : i64, largest = false} : tensor<?x8xi8> -> tensor<1x8xi8>, tensor<1x8xi64>
  return %v, %j : tensor<2x2xf32>, tensor<1x8xi64>
}

// CHECK-LABEL: func @nonzero
// CHECK: tessel.nonzero %{{.*}} : tensor<6x2xi1> -> tensor<2x?xi64>
// CHECK: tessel.nonzero %{{.*}} : tensor<?xf32> -> tensor<1x?xi64>
func.func @nonzero(%m: tensor<6x2xi1>, %x: tensor<?xf32>) -> (tensor<2x?xi64>, tensor<1x?xi64>) {
  %c = tessel.nonzero %m : tensor<6x2xi1> -> tensor<2x?xi64>
  %d = tessel.nonzero %x : tensor<?xf32> -> tensor<1x?xi64>
  return %c, %d : tensor<2x?xi64>, tensor<1x?xi64>
}

// CHECK-LABEL: func @gather_scatter
// CHECK: tessel.gather %{{.*}}, %{{.*}} {axis = 0 : i64} : tensor<6x8xf32>, tensor<?xi64> -> tensor<?x8xf32>
// CHECK: tessel.gather %{{.*}}, %{{.*}} {axis = 1 : i64} : tensor<6x8xf32>, tensor<i32> -> tensor<6xf32>
// CHECK: tessel.scatter_elements %{{.*}}, %{{.*}}, %{{.*}} {axis = 0 : i64} : tensor<6x8xf32>, tensor<?x8xi64>, tensor<?x8xf32> -> tensor<6x8xf32>
// CHECK: tessel.scatter_elements %{{.*}}, %{{.*}}, %{{.*}} {axis = 1 : i64, reduction = #tessel.scatter_reduction<max>} : tensor<6x8xi32>, tensor<6x?xi64>, tensor<6x?xi32> -> tensor<6x8xi32>
func.func @gather_scatter(%x: tensor<6x8xf32>, %i: tensor<?xi64>, %j: tensor<i32>,
                          %k: tensor<?x8xi64>, %u: tensor<?x8xf32>, %y: tensor<6x8xi32>,
                          %l: tensor<6x?xi64>, %v: tensor<6x?xi32>)
    -> (tensor<?x8xf32>, tensor<6xf32>, tensor<6x8xf32>, tensor<6x8xi32>) {
  %0 = tessel.gather %x, %i {axis = 0 : i64} : tensor<6x8xf32>, tensor<?xi64> -> tensor<?x8xf32>
  %1 = tessel.gather %x, %j {axis = 1 : i64} : tensor<6x8xf32>, tensor<i32> -> tensor<6xf32>
  %2 = tessel.scatter_elements %x, %k, %u {axis = 0 : i64} : tensor<6x8xf32>, tensor<?x8xi64>, tensor<?x8xf32> -> tensor<6x8xf32>
  %3 = tessel.scatter_elements %y, %l, %v {axis = 1 : i64, reduction = #tessel.scatter_reduction<max>} : tensor<6x8xi32>, tensor<6x?xi64>, tensor<6x?xi32> -> tensor<6x8xi32>
  return %0, %1, %2, %3 : tensor<?x8xf32>, tensor<6xf32>, tensor<6x8xf32>, tensor<6x8xi32>
}

// CHECK-LABEL: func @reduce_mean
// CHECK: tessel.reduce_mean %{{.*}} {axis = 1 : i64} : (tensor<2x8xf32>) -> tensor<2x1xf32>
func.func @reduce_mean(%x: tensor<2x8xf32>) -> tensor<2x1xf32> {
  %0 = tessel.reduce_mean %x {axis = 1 : i64} : (tensor<2x8xf32>) -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
}

// -----

// CHECK-LABEL: func.func @require(
// CHECK: tessel.require %{{.*}}, %{{.*}} else %{{.*}} {status = -3 : i32} : tensor<i1>, tensor<2xindex>
func.func @require(%ok: tensor<i1>, %v: tensor<2xindex>, %f: tensor<2xindex>) -> tensor<2xindex> {
  %0 = tessel.require %ok, %v else %f {status = -3 : i32} : tensor<i1>, tensor<2xindex>
  return %0 : tensor<2xindex>
}

// -----

// CHECK-LABEL: func.func @random
// CHECK: tessel.random_uniform {high = 2.000000e+00 : f64, low = -1.000000e+00 : f64, seed = 7 : i64} : tensor<2x3xf32>
// CHECK: tessel.random_uniform(%{{.*}}) : tensor<?x8xf16>
// CHECK: tessel.random_normal {mean = 1.000000e+00 : f64, scale = 5.000000e-01 : f64} : tensor<4xf64>
func.func @random(%n: index) -> (tensor<2x3xf32>, tensor<?x8xf16>, tensor<4xf64>) {
  %0 = tessel.random_uniform {low = -1.0, high = 2.0, seed = 7 : i64} : tensor<2x3xf32>
  %1 = tessel.random_uniform(%n) : tensor<?x8xf16>
  %2 = tessel.random_normal {mean = 1.0, scale = 0.5} : tensor<4xf64>
  return %0, %1, %2 : tensor<2x3xf32>, tensor<?x8xf16>, tensor<4xf64>
}
