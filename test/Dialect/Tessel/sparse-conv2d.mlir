// RUN: tessel-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// Round trip, on tensors (padded, bias, clamp) and on memrefs (strided,
// accumulating). B is (3*3*2) x 3: k in [0, 18).
// CHECK-LABEL: func @round_trip
// CHECK: tessel.sparse_conv2d ins(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<?x6x6x2xf32>, tensor<4xi32>, tensor<2xi32>, tensor<2xf32>) bias(%{{.*}} : tensor<3xf32>) outs(%{{.*}} : tensor<?x6x6x3xf32>) {block_size = 1 : i64, clamp_min = 0.000000e+00 : f32, dilations = array<i64: 1, 1>, kernel_size = array<i64: 3, 3>, pad = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} -> tensor<?x6x6x3xf32>
// CHECK: tessel.sparse_conv2d ins(%{{.*}} : memref<1x7x7x2xf32>, memref<4xi32>, memref<2xi32>, memref<2xf32>) outs(%{{.*}} : memref<1x3x3x3xf32>) {accumulate, block_size = 1 : i64, dilations = array<i64: 1, 1>, kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>}
func.func @round_trip(%x: tensor<?x6x6x2xf32>, %b: tensor<3xf32>, %c: tensor<?x6x6x3xf32>,
                      %xm: memref<1x7x7x2xf32>, %p: memref<4xi32>, %k: memref<2xi32>, %v: memref<2xf32>, %cm: memref<1x3x3x3xf32>) -> tensor<?x6x6x3xf32> {
  %ptr = arith.constant dense<[0, 1, 1, 2]> : tensor<4xi32>
  %ks = arith.constant dense<[8, 17]> : tensor<2xi32>
  %vals = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %r = tessel.sparse_conv2d ins(%x, %ptr, %ks, %vals : tensor<?x6x6x2xf32>, tensor<4xi32>, tensor<2xi32>, tensor<2xf32>) bias(%b : tensor<3xf32>) outs(%c : tensor<?x6x6x3xf32>) {kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, block_size = 1 : i64, clamp_min = 0.0 : f32} -> tensor<?x6x6x3xf32>
  tessel.sparse_conv2d ins(%xm, %p, %k, %v : memref<1x7x7x2xf32>, memref<4xi32>, memref<2xi32>, memref<2xf32>) outs(%cm : memref<1x3x3x3xf32>) {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, accumulate, block_size = 1 : i64}
  return %r : tensor<?x6x6x3xf32>
}

// -----

// K is KH*KW*C = 18: k = 18 is past it.
func.func @k_out_of_range(%x: tensor<1x6x6x2xf32>, %c: tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32> {
  %ptr = arith.constant dense<[0, 1, 1, 1]> : tensor<4xi32>
  %ks = arith.constant dense<[18]> : tensor<1xi32>
  %vals = arith.constant dense<[1.0]> : tensor<1xf32>
  // expected-error @+1 {{block_k entry 18 is outside [0, K)}}
  %r = tessel.sparse_conv2d ins(%x, %ptr, %ks, %vals : tensor<1x6x6x2xf32>, tensor<4xi32>, tensor<1xi32>, tensor<1xf32>) outs(%c : tensor<1x4x4x3xf32>) {kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, block_size = 1 : i64} -> tensor<1x4x4x3xf32>
  return %r : tensor<1x4x4x3xf32>
}

// -----

func.func @output_size(%x: tensor<1x6x6x2xf32>, %c: tensor<1x6x6x3xf32>) -> tensor<1x6x6x3xf32> {
  %ptr = arith.constant dense<[0, 1, 1, 1]> : tensor<4xi32>
  %ks = arith.constant dense<[0]> : tensor<1xi32>
  %vals = arith.constant dense<[1.0]> : tensor<1xf32>
  // expected-error @+1 {{output spatial dim 0 is 6, expected 4}}
  %r = tessel.sparse_conv2d ins(%x, %ptr, %ks, %vals : tensor<1x6x6x2xf32>, tensor<4xi32>, tensor<1xi32>, tensor<1xf32>) outs(%c : tensor<1x6x6x3xf32>) {kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, block_size = 1 : i64} -> tensor<1x6x6x3xf32>
  return %r : tensor<1x6x6x3xf32>
}

// -----

func.func @pad(%x: tensor<1x6x6x2xf32>, %c: tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32> {
  %ptr = arith.constant dense<[0, 1, 1, 1]> : tensor<4xi32>
  %ks = arith.constant dense<[0]> : tensor<1xi32>
  %vals = arith.constant dense<[1.0]> : tensor<1xf32>
  // expected-error @+1 {{pad must have 4 non-negative values [top, bottom, left, right]}}
  %r = tessel.sparse_conv2d ins(%x, %ptr, %ks, %vals : tensor<1x6x6x2xf32>, tensor<4xi32>, tensor<1xi32>, tensor<1xf32>) outs(%c : tensor<1x4x4x3xf32>) {kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad = array<i64: 1, 1>, block_size = 1 : i64} -> tensor<1x4x4x3xf32>
  return %r : tensor<1x4x4x3xf32>
}

// -----

func.func @values_size(%x: tensor<1x6x6x2xf32>, %c: tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32> {
  %ptr = arith.constant dense<[0, 1]> : tensor<2xi32>
  %ks = arith.constant dense<[0]> : tensor<1xi32>
  %vals = arith.constant dense<[1.0]> : tensor<1xf32>
  // expected-error @+1 {{values must have block_size values per block (4)}}
  %r = tessel.sparse_conv2d ins(%x, %ptr, %ks, %vals : tensor<1x6x6x2xf32>, tensor<2xi32>, tensor<1xi32>, tensor<1xf32>) outs(%c : tensor<1x4x4x3xf32>) {kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, block_size = 4 : i64} -> tensor<1x4x4x3xf32>
  return %r : tensor<1x4x4x3xf32>
}
