// RUN: tessel-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// Round trip, on tensors and on memrefs.
// CHECK-LABEL: func @round_trip
// CHECK: tessel.sparse_matmul ins(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<?x4xf32>, tensor<3xi32>, tensor<2xi32>, tensor<4xf32>) bias(%{{.*}} : tensor<3xf32>) outs(%{{.*}} : tensor<?x3xf32>) {block_size = 2 : i64, clamp_min = 0.000000e+00 : f32} -> tensor<?x3xf32>
// CHECK: tessel.sparse_matmul ins(%{{.*}} : memref<5x4xf32>, memref<3xi32>, memref<2xi32>, memref<4xf32>) outs(%{{.*}} : memref<5x3xf32>) {accumulate, block_size = 2 : i64}
func.func @round_trip(%a: tensor<?x4xf32>, %b: tensor<3xf32>, %c: tensor<?x3xf32>,
                      %am: memref<5x4xf32>, %p: memref<3xi32>, %k: memref<2xi32>, %v: memref<4xf32>, %cm: memref<5x3xf32>) -> tensor<?x3xf32> {
  %ptr = arith.constant dense<[0, 1, 2]> : tensor<3xi32>
  %ks = arith.constant dense<[0, 3]> : tensor<2xi32>
  %vals = arith.constant dense<[1.0, 2.0, 3.0, 0.0]> : tensor<4xf32>
  %r = tessel.sparse_matmul ins(%a, %ptr, %ks, %vals : tensor<?x4xf32>, tensor<3xi32>, tensor<2xi32>, tensor<4xf32>) bias(%b : tensor<3xf32>) outs(%c : tensor<?x3xf32>) {block_size = 2 : i64, clamp_min = 0.0 : f32} -> tensor<?x3xf32>
  tessel.sparse_matmul ins(%am, %p, %k, %v : memref<5x4xf32>, memref<3xi32>, memref<2xi32>, memref<4xf32>) outs(%cm : memref<5x3xf32>) {accumulate, block_size = 2 : i64}
  return %r : tensor<?x3xf32>
}

// -----

func.func @block_size(%a: tensor<5x4xf32>, %c: tensor<5x3xf32>) -> tensor<5x3xf32> {
  %ptr = arith.constant dense<[0, 1]> : tensor<2xi32>
  %ks = arith.constant dense<[0]> : tensor<1xi32>
  %vals = arith.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  // expected-error @+1 {{block_size must be 1, 2, 4, 8 or 16, got 3}}
  %r = tessel.sparse_matmul ins(%a, %ptr, %ks, %vals : tensor<5x4xf32>, tensor<2xi32>, tensor<1xi32>, tensor<3xf32>) outs(%c : tensor<5x3xf32>) {block_size = 3 : i64} -> tensor<5x3xf32>
  return %r : tensor<5x3xf32>
}

// -----

func.func @ptr_size(%a: tensor<5x4xf32>, %c: tensor<5x3xf32>) -> tensor<5x3xf32> {
  %ptr = arith.constant dense<[0, 1]> : tensor<2xi32>
  %ks = arith.constant dense<[0]> : tensor<1xi32>
  %vals = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  // expected-error @+1 {{block_ptr must have ceil(N / block_size) + 1 = 3 entries}}
  %r = tessel.sparse_matmul ins(%a, %ptr, %ks, %vals : tensor<5x4xf32>, tensor<2xi32>, tensor<1xi32>, tensor<2xf32>) outs(%c : tensor<5x3xf32>) {block_size = 2 : i64} -> tensor<5x3xf32>
  return %r : tensor<5x3xf32>
}

// -----

func.func @values_size(%a: tensor<5x4xf32>, %c: tensor<5x3xf32>) -> tensor<5x3xf32> {
  %ptr = arith.constant dense<[0, 1, 1]> : tensor<3xi32>
  %ks = arith.constant dense<[0]> : tensor<1xi32>
  %vals = arith.constant dense<[1.0]> : tensor<1xf32>
  // expected-error @+1 {{values must have block_size values per block (2)}}
  %r = tessel.sparse_matmul ins(%a, %ptr, %ks, %vals : tensor<5x4xf32>, tensor<3xi32>, tensor<1xi32>, tensor<1xf32>) outs(%c : tensor<5x3xf32>) {block_size = 2 : i64} -> tensor<5x3xf32>
  return %r : tensor<5x3xf32>
}

// -----

func.func @k_out_of_range(%a: tensor<5x4xf32>, %c: tensor<5x3xf32>) -> tensor<5x3xf32> {
  %ptr = arith.constant dense<[0, 1, 1]> : tensor<3xi32>
  %ks = arith.constant dense<[4]> : tensor<1xi32>
  %vals = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  // expected-error @+1 {{block_k entry 4 is outside [0, K)}}
  %r = tessel.sparse_matmul ins(%a, %ptr, %ks, %vals : tensor<5x4xf32>, tensor<3xi32>, tensor<1xi32>, tensor<2xf32>) outs(%c : tensor<5x3xf32>) {block_size = 2 : i64} -> tensor<5x3xf32>
  return %r : tensor<5x3xf32>
}

// -----

func.func @ptr_order(%a: tensor<5x4xf32>, %c: tensor<5x3xf32>) -> tensor<5x3xf32> {
  %ptr = arith.constant dense<[0, 1, 0]> : tensor<3xi32>
  %ks = arith.constant dense<[1]> : tensor<1xi32>
  %vals = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  // expected-error @+1 {{block_ptr must rise from 0 to the block count, entry 2 is 0}}
  %r = tessel.sparse_matmul ins(%a, %ptr, %ks, %vals : tensor<5x4xf32>, tensor<3xi32>, tensor<1xi32>, tensor<2xf32>) outs(%c : tensor<5x3xf32>) {block_size = 2 : i64} -> tensor<5x3xf32>
  return %r : tensor<5x3xf32>
}

// -----

func.func @index_type(%a: tensor<5x4xf32>, %c: tensor<5x3xf32>) -> tensor<5x3xf32> {
  %ptr = arith.constant dense<[0, 1, 1]> : tensor<3xi64>
  %ks = arith.constant dense<[1]> : tensor<1xi32>
  %vals = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  // expected-error @+1 {{block_ptr and block_k must be i32, got 'tensor<3xi64>'}}
  %r = tessel.sparse_matmul ins(%a, %ptr, %ks, %vals : tensor<5x4xf32>, tensor<3xi64>, tensor<1xi32>, tensor<2xf32>) outs(%c : tensor<5x3xf32>) {block_size = 2 : i64} -> tensor<5x3xf32>
  return %r : tensor<5x3xf32>
}

// -----

func.func @rank(%a: tensor<1x5x4xf32>, %c: tensor<5x3xf32>) -> tensor<5x3xf32> {
  %ptr = arith.constant dense<[0, 1, 1]> : tensor<3xi32>
  %ks = arith.constant dense<[1]> : tensor<1xi32>
  %vals = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  // expected-error @+1 {{input and init must be rank 2 (M x K, M x N)}}
  %r = tessel.sparse_matmul ins(%a, %ptr, %ks, %vals : tensor<1x5x4xf32>, tensor<3xi32>, tensor<1xi32>, tensor<2xf32>) outs(%c : tensor<5x3xf32>) {block_size = 2 : i64} -> tensor<5x3xf32>
  return %r : tensor<5x3xf32>
}

// -----

// k_ascending is checked where the blocks are constants: block column 1
// has k 3 then 1.
func.func @k_not_ascending(%a: tensor<5x4xf32>, %c: tensor<5x2xf32>) -> tensor<5x2xf32> {
  %ptr = arith.constant dense<[0, 1, 3]> : tensor<3xi32>
  %ks = arith.constant dense<[2, 3, 1]> : tensor<3xi32>
  %vals = arith.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  // expected-error @+1 {{k_ascending, but block column 1 has k 1 after 3}}
  %r = tessel.sparse_matmul ins(%a, %ptr, %ks, %vals : tensor<5x4xf32>, tensor<3xi32>, tensor<3xi32>, tensor<3xf32>) outs(%c : tensor<5x2xf32>) {block_size = 1 : i64, k_ascending} -> tensor<5x2xf32>
  return %r : tensor<5x2xf32>
}

// -----

// The same blocks in order round-trip.
// CHECK-LABEL: func @k_ascending
// CHECK: {block_size = 1 : i64, k_ascending}
func.func @k_ascending(%a: tensor<5x4xf32>, %c: tensor<5x2xf32>) -> tensor<5x2xf32> {
  %ptr = arith.constant dense<[0, 1, 3]> : tensor<3xi32>
  %ks = arith.constant dense<[2, 1, 3]> : tensor<3xi32>
  %vals = arith.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %r = tessel.sparse_matmul ins(%a, %ptr, %ks, %vals : tensor<5x4xf32>, tensor<3xi32>, tensor<3xi32>, tensor<3xf32>) outs(%c : tensor<5x2xf32>) {block_size = 1 : i64, k_ascending} -> tensor<5x2xf32>
  return %r : tensor<5x2xf32>
}

// -----

// N:M (2:4): K = 8, N = 2, one chunk of 64 k's holding both columns' four
// nonzeros (k 1, 2, 4, 5 and 0, 3, 6, 7): accepted and printed back.
// CHECK-LABEL: func @n_of_m
// CHECK: {block_size = 1 : i64, k_ascending, n_of_m = array<i64: 2, 4>}
func.func @n_of_m(%a: tensor<3x8xf32>, %c: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %ptr = arith.constant dense<[0, 4, 8]> : tensor<3xi32>
  %ks = arith.constant dense<[1, 2, 4, 5, 0, 3, 6, 7]> : tensor<8xi32>
  %vals = arith.constant dense<[1.0, 2.0, 3.0, 0.0, 4.0, 5.0, 6.0, 7.0]> : tensor<8xf32>
  %r = tessel.sparse_matmul ins(%a, %ptr, %ks, %vals : tensor<3x8xf32>, tensor<3xi32>, tensor<8xi32>, tensor<8xf32>) outs(%c : tensor<3x2xf32>) {block_size = 1 : i64, k_ascending, n_of_m = array<i64: 2, 4>} -> tensor<3x2xf32>
  return %r : tensor<3x2xf32>
}

// -----

func.func @n_of_m_values(%a: tensor<3x8xf32>, %c: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %ptr = arith.constant dense<[0, 4, 8]> : tensor<3xi32>
  %ks = arith.constant dense<[1, 2, 4, 5, 0, 3, 6, 7]> : tensor<8xi32>
  %vals = arith.constant dense<[1.0, 2.0, 3.0, 0.0, 4.0, 5.0, 6.0, 7.0]> : tensor<8xf32>
  // expected-error @+1 {{n_of_m must have 0 < n < m and m dividing 64, got 4:4}}
  %r = tessel.sparse_matmul ins(%a, %ptr, %ks, %vals : tensor<3x8xf32>, tensor<3xi32>, tensor<8xi32>, tensor<8xf32>) outs(%c : tensor<3x2xf32>) {block_size = 1 : i64, k_ascending, n_of_m = array<i64: 4, 4>} -> tensor<3x2xf32>
  return %r : tensor<3x2xf32>
}

// -----

func.func @n_of_m_m(%a: tensor<3x6xf32>, %c: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %ptr = arith.constant dense<[0, 2, 4]> : tensor<3xi32>
  %ks = arith.constant dense<[0, 3, 1, 4]> : tensor<4xi32>
  %vals = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  // expected-error @+1 {{n_of_m must have 0 < n < m and m dividing 64, got 1:3}}
  %r = tessel.sparse_matmul ins(%a, %ptr, %ks, %vals : tensor<3x6xf32>, tensor<3xi32>, tensor<4xi32>, tensor<4xf32>) outs(%c : tensor<3x2xf32>) {block_size = 1 : i64, k_ascending, n_of_m = array<i64: 1, 3>} -> tensor<3x2xf32>
  return %r : tensor<3x2xf32>
}

// -----

func.func @n_of_m_shape(%a: tensor<3x8xf32>, %c: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %ptr = arith.constant dense<[0, 4, 8]> : tensor<3xi32>
  %ks = arith.constant dense<[1, 2, 4, 5, 0, 3, 6, 7]> : tensor<8xi32>
  %vals = arith.constant dense<[1.0, 2.0, 3.0, 0.0, 4.0, 5.0, 6.0, 7.0]> : tensor<8xf32>
  // expected-error @+1 {{n_of_m must have two values (n, m)}}
  %r = tessel.sparse_matmul ins(%a, %ptr, %ks, %vals : tensor<3x8xf32>, tensor<3xi32>, tensor<8xi32>, tensor<8xf32>) outs(%c : tensor<3x2xf32>) {block_size = 1 : i64, k_ascending, n_of_m = array<i64: 2>} -> tensor<3x2xf32>
  return %r : tensor<3x2xf32>
}

// -----

func.func @n_of_m_ascending(%a: tensor<3x8xf32>, %c: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %ptr = arith.constant dense<[0, 4, 8]> : tensor<3xi32>
  %ks = arith.constant dense<[1, 2, 4, 5, 0, 3, 6, 7]> : tensor<8xi32>
  %vals = arith.constant dense<[1.0, 2.0, 3.0, 0.0, 4.0, 5.0, 6.0, 7.0]> : tensor<8xf32>
  // expected-error @+1 {{n_of_m needs block_size 1 and k_ascending}}
  %r = tessel.sparse_matmul ins(%a, %ptr, %ks, %vals : tensor<3x8xf32>, tensor<3xi32>, tensor<8xi32>, tensor<8xf32>) outs(%c : tensor<3x2xf32>) {block_size = 1 : i64, n_of_m = array<i64: 2, 4>} -> tensor<3x2xf32>
  return %r : tensor<3x2xf32>
}

// -----

func.func @n_of_m_k(%a: tensor<3x6xf32>, %c: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %ptr = arith.constant dense<[0, 3, 6]> : tensor<3xi32>
  %ks = arith.constant dense<[0, 2, 4, 1, 3, 5]> : tensor<6xi32>
  %vals = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]> : tensor<6xf32>
  // expected-error @+1 {{n_of_m: m (4) must divide K (6)}}
  %r = tessel.sparse_matmul ins(%a, %ptr, %ks, %vals : tensor<3x6xf32>, tensor<3xi32>, tensor<6xi32>, tensor<6xf32>) outs(%c : tensor<3x2xf32>) {block_size = 1 : i64, k_ascending, n_of_m = array<i64: 2, 4>} -> tensor<3x2xf32>
  return %r : tensor<3x2xf32>
}

// -----

func.func @n_of_m_count(%a: tensor<3x8xf32>, %c: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %ptr = arith.constant dense<[0, 3, 6]> : tensor<3xi32>
  %ks = arith.constant dense<[1, 2, 4, 0, 3, 6]> : tensor<6xi32>
  %vals = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]> : tensor<6xf32>
  // expected-error @+1 {{n_of_m 2:4 needs N * K / m * n = 8 blocks}}
  %r = tessel.sparse_matmul ins(%a, %ptr, %ks, %vals : tensor<3x8xf32>, tensor<3xi32>, tensor<6xi32>, tensor<6xf32>) outs(%c : tensor<3x2xf32>) {block_size = 1 : i64, k_ascending, n_of_m = array<i64: 2, 4>} -> tensor<3x2xf32>
  return %r : tensor<3x2xf32>
}

// -----

func.func @n_of_m_ptr(%a: tensor<3x8xf32>, %c: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %ptr = arith.constant dense<[0, 3, 8]> : tensor<3xi32>
  %ks = arith.constant dense<[1, 2, 4, 5, 0, 3, 6, 7]> : tensor<8xi32>
  %vals = arith.constant dense<[1.0, 2.0, 3.0, 0.0, 4.0, 5.0, 6.0, 7.0]> : tensor<8xf32>
  // expected-error @+1 {{n_of_m: block_ptr entry 1 must be 4}}
  %r = tessel.sparse_matmul ins(%a, %ptr, %ks, %vals : tensor<3x8xf32>, tensor<3xi32>, tensor<8xi32>, tensor<8xf32>) outs(%c : tensor<3x2xf32>) {block_size = 1 : i64, k_ascending, n_of_m = array<i64: 2, 4>} -> tensor<3x2xf32>
  return %r : tensor<3x2xf32>
}

// -----

// Column order (column 0's k 1, 2, 4, 5 then column 1's) is what the
// kernel reads here; a k outside its group in the chunk-major order is not.
func.func @n_of_m_order(%a: tensor<3x8xf32>, %c: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %ptr = arith.constant dense<[0, 4, 8]> : tensor<3xi32>
  %ks = arith.constant dense<[1, 2, 5, 4, 0, 3, 6, 7]> : tensor<8xi32>
  %vals = arith.constant dense<[1.0, 2.0, 3.0, 0.0, 4.0, 5.0, 6.0, 7.0]> : tensor<8xf32>
  // expected-error @+1 {{n_of_m: block_k entry 3 (k 4) is not column 0's nonzero 1 of group 1 in chunk-major order}}
  %r = tessel.sparse_matmul ins(%a, %ptr, %ks, %vals : tensor<3x8xf32>, tensor<3xi32>, tensor<8xi32>, tensor<8xf32>) outs(%c : tensor<3x2xf32>) {block_size = 1 : i64, k_ascending, n_of_m = array<i64: 2, 4>} -> tensor<3x2xf32>
  return %r : tensor<3x2xf32>
}

// -----

// The lane order (lanes), 1:4, K = 4, N = 16: one unit (one column
// vector, one short quad of 4 k's) of one slot, column c's one nonzero at
// entry c.
// CHECK-LABEL: func @lanes_n_of_m
// CHECK: {{block_size = 1 : i64, k_ascending, lanes, n_of_m = array<i64: 1, 4>}}
func.func @lanes_n_of_m(%a: tensor<3x4xf32>, %c: tensor<3x16xf32>) -> tensor<3x16xf32> {
  %ptr = arith.constant dense<[0, 1]> : tensor<2xi32>
  %ks = arith.constant dense<[0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3]> : tensor<16xi32>
  %vals = arith.constant dense<1.0> : tensor<16xf32>
  %r = tessel.sparse_matmul ins(%a, %ptr, %ks, %vals : tensor<3x4xf32>, tensor<2xi32>, tensor<16xi32>, tensor<16xf32>) outs(%c : tensor<3x16xf32>) {block_size = 1 : i64, k_ascending, lanes, n_of_m = array<i64: 1, 4>} -> tensor<3x16xf32>
  return %r : tensor<3x16xf32>
}

// -----

// Unstructured weights in the lane order: K = 20 (a quad of 16 and one of
// 4), N = 16: the first unit 2 slots, the second 1.
// CHECK-LABEL: func @lanes_unstructured
// CHECK: {{block_size = 1 : i64, lanes}}
func.func @lanes_unstructured(%a: tensor<3x20xf32>, %c: tensor<3x16xf32>) -> tensor<3x16xf32> {
  %ptr = arith.constant dense<[0, 2, 3]> : tensor<3xi32>
  %ks = arith.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 16, 17, 18, 19, 16, 17, 18, 19, 16, 17, 18, 19, 16, 17, 18, 19]> : tensor<48xi32>
  %vals = arith.constant dense<1.0> : tensor<48xf32>
  %r = tessel.sparse_matmul ins(%a, %ptr, %ks, %vals : tensor<3x20xf32>, tensor<3xi32>, tensor<48xi32>, tensor<48xf32>) outs(%c : tensor<3x16xf32>) {block_size = 1 : i64, lanes} -> tensor<3x16xf32>
  return %r : tensor<3x16xf32>
}

// -----

// The second unit's slot holds k 3, outside its quad [16, 20).
func.func @lanes_k_outside_quad(%a: tensor<3x20xf32>, %c: tensor<3x16xf32>) -> tensor<3x16xf32> {
  %ptr = arith.constant dense<[0, 2, 3]> : tensor<3xi32>
  %ks = arith.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 17, 18, 19, 16, 17, 18, 19, 16, 17, 18, 19, 16, 17, 18, 19]> : tensor<48xi32>
  %vals = arith.constant dense<1.0> : tensor<48xf32>
  // expected-error @+1 {{lanes: block_k entry 32 (k 3) is not column 0's slot 0 of quad 1}}
  %r = tessel.sparse_matmul ins(%a, %ptr, %ks, %vals : tensor<3x20xf32>, tensor<3xi32>, tensor<48xi32>, tensor<48xf32>) outs(%c : tensor<3x16xf32>) {block_size = 1 : i64, lanes} -> tensor<3x16xf32>
  return %r : tensor<3x16xf32>
}

// -----

func.func @lanes_columns(%a: tensor<3x8xf32>, %c: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %ptr = arith.constant dense<[0, 4, 8]> : tensor<3xi32>
  %ks = arith.constant dense<[1, 0, 2, 3, 4, 6, 5, 7]> : tensor<8xi32>
  %vals = arith.constant dense<1.0> : tensor<8xf32>
  // expected-error @+1 {{lanes needs block_size 1, N a multiple of 16 and with n_of_m, m dividing 16 and K, got N 2}}
  %r = tessel.sparse_matmul ins(%a, %ptr, %ks, %vals : tensor<3x8xf32>, tensor<3xi32>, tensor<8xi32>, tensor<8xf32>) outs(%c : tensor<3x2xf32>) {block_size = 1 : i64, k_ascending, lanes, n_of_m = array<i64: 2, 4>} -> tensor<3x2xf32>
  return %r : tensor<3x2xf32>
}

// -----

func.func @lanes_ptr_size(%a: tensor<3x20xf32>, %c: tensor<3x16xf32>) -> tensor<3x16xf32> {
  %ptr = arith.constant dense<[0, 3]> : tensor<2xi32>
  %ks = arith.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 16, 17, 18, 19, 16, 17, 18, 19, 16, 17, 18, 19, 16, 17, 18, 19]> : tensor<48xi32>
  %vals = arith.constant dense<1.0> : tensor<48xf32>
  // expected-error @+1 {{lanes needs block_ptr of N / 16 * ceil(K / 16) + 1 = 3 entries and block_k and values of 16 entries a slot}}
  %r = tessel.sparse_matmul ins(%a, %ptr, %ks, %vals : tensor<3x20xf32>, tensor<2xi32>, tensor<48xi32>, tensor<48xf32>) outs(%c : tensor<3x16xf32>) {block_size = 1 : i64, lanes} -> tensor<3x16xf32>
  return %r : tensor<3x16xf32>
}

// -----

// 2:4, K = 4, N = 16: a unit of 2 slots; column 3's two nonzeros
// (entries 3 and 19) descend.
func.func @lanes_order(%a: tensor<3x4xf32>, %c: tensor<3x16xf32>) -> tensor<3x16xf32> {
  %ptr = arith.constant dense<[0, 2]> : tensor<2xi32>
  %ks = arith.constant dense<[0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1]> : tensor<32xi32>
  %vals = arith.constant dense<1.0> : tensor<32xf32>
  // expected-error @+1 {{lanes: block_k entry 19 (k 1) is not column 3's slot 1 of quad 0 in its group, ascending}}
  %r = tessel.sparse_matmul ins(%a, %ptr, %ks, %vals : tensor<3x4xf32>, tensor<2xi32>, tensor<32xi32>, tensor<32xf32>) outs(%c : tensor<3x16xf32>) {block_size = 1 : i64, k_ascending, lanes, n_of_m = array<i64: 2, 4>} -> tensor<3x16xf32>
  return %r : tensor<3x16xf32>
}

// -----

// 1:4 with K = 20: each unit must add the quad's slots (4 in the first,
// 1 in the short one).
func.func @lanes_n_of_m_counts(%a: tensor<3x20xf32>, %c: tensor<3x16xf32>) -> tensor<3x16xf32> {
  %ptr = arith.constant dense<[0, 2, 3]> : tensor<3xi32>
  %ks = arith.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 16, 17, 18, 19, 16, 17, 18, 19, 16, 17, 18, 19, 16, 17, 18, 19]> : tensor<48xi32>
  %vals = arith.constant dense<1.0> : tensor<48xf32>
  // expected-error @+1 {{lanes: block_ptr entry 1 (2) does not add the quad's slots from entry 0 (0)}}
  %r = tessel.sparse_matmul ins(%a, %ptr, %ks, %vals : tensor<3x20xf32>, tensor<3xi32>, tensor<48xi32>, tensor<48xf32>) outs(%c : tensor<3x16xf32>) {block_size = 1 : i64, k_ascending, lanes, n_of_m = array<i64: 1, 4>} -> tensor<3x16xf32>
  return %r : tensor<3x16xf32>
}

// -----

func.func @lanes_ptr_start(%a: tensor<3x4xf32>, %c: tensor<3x16xf32>) -> tensor<3x16xf32> {
  %ptr = arith.constant dense<[1, 1]> : tensor<2xi32>
  %ks = arith.constant dense<[0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3]> : tensor<16xi32>
  %vals = arith.constant dense<1.0> : tensor<16xf32>
  // expected-error @+1 {{lanes: block_ptr must start at 0}}
  %r = tessel.sparse_matmul ins(%a, %ptr, %ks, %vals : tensor<3x4xf32>, tensor<2xi32>, tensor<16xi32>, tensor<16xf32>) outs(%c : tensor<3x16xf32>) {block_size = 1 : i64, lanes} -> tensor<3x16xf32>
  return %r : tensor<3x16xf32>
}
