// Reductions along every axis of a rank-3 tensor: tosa.reduce_sum,
// tosa.reduce_max, tessel.reduce_mean (the reduced axis stays with size 1).
// References: e2e_refs.py.
// RUN: %python %e2e %s --work-dir %t -O 0,3

func.func @reduce_sum_axes(%x: tensor<3x4x5xf32>) -> (tensor<1x4x5xf32>, tensor<3x1x5xf32>, tensor<3x4x1xf32>) {
  %a = tosa.reduce_sum %x {axis = 0 : i32} : (tensor<3x4x5xf32>) -> tensor<1x4x5xf32>
  %b = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<3x4x5xf32>) -> tensor<3x1x5xf32>
  %c = tosa.reduce_sum %x {axis = 2 : i32} : (tensor<3x4x5xf32>) -> tensor<3x4x1xf32>
  return %a, %b, %c : tensor<1x4x5xf32>, tensor<3x1x5xf32>, tensor<3x4x1xf32>
}

func.func @reduce_max_axes(%x: tensor<3x4x5xf32>) -> (tensor<1x4x5xf32>, tensor<3x4x1xf32>) {
  %a = tosa.reduce_max %x {axis = 0 : i32} : (tensor<3x4x5xf32>) -> tensor<1x4x5xf32>
  %c = tosa.reduce_max %x {axis = 2 : i32} : (tensor<3x4x5xf32>) -> tensor<3x4x1xf32>
  return %a, %c : tensor<1x4x5xf32>, tensor<3x4x1xf32>
}

func.func @reduce_mean_axes(%x: tensor<3x4x5xf32>) -> (tensor<3x1x5xf32>, tensor<3x4x1xf32>) {
  %b = tessel.reduce_mean %x {axis = 1 : i64} : (tensor<3x4x5xf32>) -> tensor<3x1x5xf32>
  %c = tessel.reduce_mean %x {axis = 2 : i64} : (tensor<3x4x5xf32>) -> tensor<3x4x1xf32>
  return %b, %c : tensor<3x1x5xf32>, tensor<3x4x1xf32>
}
