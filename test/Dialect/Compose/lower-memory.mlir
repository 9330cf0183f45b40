// RUN: tessel-opt %s -split-input-file --compose-lower-memory -verify-diagnostics | FileCheck %s

// A read clamps the computed locations into the table and gathers rows.
// CHECK-LABEL: func.func @read
// CHECK-SAME: (%[[M:.*]]: tensor<16x4xf32>, %[[L:.*]]: tensor<3xi32>)
// CHECK: %[[C:.*]] = tosa.clamp %[[L]] {max_val = 15 : i32, min_val = 0 : i32} : (tensor<3xi32>) -> tensor<3xi32>
// CHECK: %[[I:.*]] = tosa.reshape %[[C]]
// CHECK: %[[V:.*]] = tosa.reshape %[[M]]
// CHECK: %[[G:.*]] = tosa.gather %[[V]], %[[I]] : (tensor<1x16x4xf32>, tensor<1x3xi32>) -> tensor<1x3x4xf32>
// CHECK: tosa.reshape %[[G]]
func.func @read(%m: tensor<16x4xf32>, %l: tensor<3xi32>) -> tensor<3x4xf32> {
  %r = compose.memory_read %m[%l] : tensor<16x4xf32>, tensor<3xi32> -> tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}

// -----

// i64 locations are clamped before they are narrowed to i32.
// CHECK-LABEL: func.func @read64
// CHECK: %[[C64:.*]] = tosa.clamp %{{.*}} {max_val = 15 : i64, min_val = 0 : i64} : (tensor<3xi64>) -> tensor<3xi64>
// CHECK: %[[N:.*]] = tosa.cast %[[C64]] : (tensor<3xi64>) -> tensor<3xi32>
// CHECK: tosa.clamp %[[N]] {max_val = 15 : i32, min_val = 0 : i32}
func.func @read64(%m: tensor<16x4xf32>, %l: tensor<3xi64>) -> tensor<3x4xf32> {
  %r = compose.memory_read %m[%l] : tensor<16x4xf32>, tensor<3xi64> -> tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}

// -----

// Writes go row by row (last overwrite wins); add mode adds the old row.
// CHECK-LABEL: func.func @write
// CHECK-SAME: (%[[M:.*]]: tensor<16x4xf32>, %[[V:.*]]: tensor<3x4xf32>, %[[L:.*]]: tensor<3xi32>)
// CHECK: %[[C:.*]] = tosa.clamp %[[L]]
// CHECK: %[[W:.*]] = scf.for %[[I:.*]] = %c0 to %c3 step %c1 iter_args(%[[ACC:.*]] = %[[M]]) -> (tensor<16x4xf32>)
// CHECK:   %[[S:.*]] = tensor.extract %[[C]][%[[I]]]
// CHECK:   %[[SLOT:.*]] = arith.index_cast %[[S]] : i32 to index
// CHECK:   %[[ROW:.*]] = tensor.extract_slice %[[V]][%[[I]], 0] [1, 4] [1, 1]
// CHECK-NOT: tosa.add
// CHECK:   tensor.insert_slice %[[ROW]] into %[[ACC]][%[[SLOT]], 0] [1, 4] [1, 1]
// CHECK: scf.for
// CHECK:   %[[OLD:.*]] = tensor.extract_slice %{{.*}}[%{{.*}}, 0] [1, 4] [1, 1] : tensor<16x4xf32> to tensor<1x4xf32>
// CHECK:   %[[SUM:.*]] = tosa.add %[[OLD]], %{{.*}} : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
// CHECK:   tensor.insert_slice %[[SUM]]
func.func @write(%m: tensor<16x4xf32>, %v: tensor<3x4xf32>, %l: tensor<3xi32>) -> tensor<16x4xf32> {
  %w = compose.memory_write %v into %m[%l] : tensor<3x4xf32>, tensor<3xi32> -> tensor<16x4xf32>
  %a = compose.memory_write %v into %w[%l] {mode = #compose.write_mode<add>} : tensor<3x4xf32>, tensor<3xi32> -> tensor<16x4xf32>
  return %a : tensor<16x4xf32>
}

// -----

// Dot-product lookup: scores q.K^T, softmax over slots, weighted values.
// CHECK-LABEL: func.func @lookup_dot
// CHECK-NOT: tosa.rsqrt
// CHECK: %[[KT:.*]] = tosa.transpose %{{.*}} {perms = array<i32: 0, 2, 1>} : (tensor<1x16x4xf32>) -> tensor<1x4x16xf32>
// CHECK: %[[S:.*]] = tosa.matmul %{{.*}}, %[[KT]], %{{.*}}, %{{.*}} : (tensor<1x2x4xf32>, tensor<1x4x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x16xf32>
// CHECK-NOT: tosa.mul
// CHECK: %[[P:.*]] = tessel.softmax %[[S]] {axis = -1 : i64} : tensor<1x2x16xf32>
// CHECK: tosa.matmul %[[P]], %{{.*}}, %{{.*}}, %{{.*}} : (tensor<1x2x16xf32>, tensor<1x16x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x8xf32>
func.func @lookup_dot(%q: tensor<2x4xf32>, %k: tensor<16x4xf32>, %v: tensor<16x8xf32>) -> tensor<2x8xf32> {
  %r = compose.memory_lookup %q in %k, %v : tensor<2x4xf32>, tensor<16x4xf32>, tensor<16x8xf32> -> tensor<2x8xf32>
  return %r : tensor<2x8xf32>
}

// -----

// Cosine lookup: queries and keys normalized first, scores scaled.
// CHECK-LABEL: func.func @lookup_cosine
// CHECK: tosa.reduce_sum %{{.*}} {axis = 1 : i32} : (tensor<2x4xf32>) -> tensor<2x1xf32>
// CHECK: tosa.rsqrt
// CHECK: tosa.reduce_sum %{{.*}} {axis = 1 : i32} : (tensor<16x4xf32>) -> tensor<16x1xf32>
// CHECK: tosa.rsqrt
// CHECK: %[[S:.*]] = tosa.matmul
// CHECK: %[[SC:.*]] = "tosa.const"() <{values = dense<5.000000e+00> : tensor<1x1x1xf32>}>
// CHECK: %[[M:.*]] = tosa.mul %[[S]], %[[SC]]
// CHECK: tessel.softmax %[[M]]
func.func @lookup_cosine(%q: tensor<2x4xf32>, %k: tensor<16x4xf32>, %v: tensor<16x8xf32>) -> tensor<2x8xf32> {
  %r = compose.memory_lookup %q in %k, %v {similarity = #compose.similarity<cosine>, scale = 5.0 : f32}
      : tensor<2x4xf32>, tensor<16x4xf32>, tensor<16x8xf32> -> tensor<2x8xf32>
  return %r : tensor<2x8xf32>
}

// -----

func.func @dynamic(%m: tensor<?x4xf32>, %l: tensor<3xi32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{needs static operand shapes to be lowered, got 'tensor<?x4xf32>'}}
  %r = compose.memory_read %m[%l] : tensor<?x4xf32>, tensor<3xi32> -> tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}
