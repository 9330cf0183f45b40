// RUN: tessel-opt %s | FileCheck %s
// RUN: tessel-opt %s | tessel-opt | FileCheck %s
// RUN: tessel-opt %s --mlir-print-op-generic | tessel-opt | FileCheck %s

// CHECK-LABEL: compose.component @expert(
// CHECK-SAME: %{{.*}}: tensor<?x8xf32>) -> tensor<?x8xf32>
// CHECK-SAME: attributes {precision = f32, sparsity = "2:4", state = #compose.state<frozen>}
compose.component @expert(%x: tensor<?x8xf32>) -> tensor<?x8xf32>
    attributes {state = #compose.state<frozen>, precision = f32, sparsity = "2:4"} {
  // CHECK: compose.return %{{.*}} : tensor<?x8xf32>
  compose.return %x : tensor<?x8xf32>
}

// CHECK: compose.component private @remote(tensor<4x8xf32>) -> tensor<4x8xf32>
compose.component private @remote(tensor<4x8xf32>) -> tensor<4x8xf32>

// CHECK: compose.component @trainable(
// CHECK-SAME: attributes {state = #compose.state<trainable>}
compose.component @trainable(%x: tensor<?x8xf32>) -> tensor<?x8xf32>
    attributes {state = #compose.state<trainable>} {
  compose.return %x : tensor<?x8xf32>
}

// CHECK: compose.instance @shared of @expert
compose.instance @shared of @expert

// CHECK-LABEL: func.func @calls
func.func @calls(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<?x8xf32>) {
  // CHECK: compose.call @shared(%{{.*}}) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %a = compose.call @shared(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: compose.call @remote(%{{.*}}) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %b = compose.call @remote(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: compose.call @expert(%{{.*}}) : (tensor<4x8xf32>) -> tensor<?x8xf32>
  %c = compose.call @expert(%b) : (tensor<4x8xf32>) -> tensor<?x8xf32>
  return %a, %b, %c : tensor<4x8xf32>, tensor<4x8xf32>, tensor<?x8xf32>
}

// CHECK-LABEL: func.func @route
func.func @route(%x: tensor<16x8xf32>, %p: tensor<16x3xf32>) -> (tensor<16x8xf32>, tensor<16x8xf32>) {
  // CHECK: compose.route %{{.*}}, %{{.*}} {experts = [@expert, @shared, @trainable], k = 2 : i64, renormalize} : (tensor<16x8xf32>, tensor<16x3xf32>) -> tensor<16x8xf32>
  %y = compose.route %x, %p {experts = [@expert, @shared, @trainable], k = 2 : i64, renormalize}
      : (tensor<16x8xf32>, tensor<16x3xf32>) -> tensor<16x8xf32>
  // CHECK: compose.route %{{.*}}, %{{.*}} {capacity = 6 : i64, experts = [@expert, @expert, @expert], k = 1 : i64}
  %z = compose.route %x, %p {experts = [@expert, @expert, @expert], k = 1 : i64, capacity = 6 : i64}
      : (tensor<16x8xf32>, tensor<16x3xf32>) -> tensor<16x8xf32>
  return %y, %z : tensor<16x8xf32>, tensor<16x8xf32>
}

// CHECK-LABEL: func.func @memory
func.func @memory(%mem: tensor<32x8xf32>, %loc: tensor<4xi32>, %loc64: tensor<4xi64>,
                  %v: tensor<4x8xf32>, %q: tensor<4x8xf32>, %vals: tensor<32x16xf32>)
    -> (tensor<4x8xf32>, tensor<32x8xf32>, tensor<32x8xf32>, tensor<4x16xf32>, tensor<4x16xf32>) {
  // CHECK: compose.memory_read %{{.*}}[%{{.*}}] : tensor<32x8xf32>, tensor<4xi32> -> tensor<4x8xf32>
  %r = compose.memory_read %mem[%loc] : tensor<32x8xf32>, tensor<4xi32> -> tensor<4x8xf32>
  // CHECK: compose.memory_write %{{.*}} into %{{.*}}[%{{.*}}] : tensor<4x8xf32>, tensor<4xi32> -> tensor<32x8xf32>
  %w = compose.memory_write %v into %mem[%loc] : tensor<4x8xf32>, tensor<4xi32> -> tensor<32x8xf32>
  // CHECK: compose.memory_write %{{.*}} into %{{.*}}[%{{.*}}] {mode = #compose.write_mode<add>} : tensor<4x8xf32>, tensor<4xi64> -> tensor<32x8xf32>
  %a = compose.memory_write %v into %w[%loc64] {mode = #compose.write_mode<add>} : tensor<4x8xf32>, tensor<4xi64> -> tensor<32x8xf32>
  // CHECK: compose.memory_lookup %{{.*}} in %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<32x8xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
  %l = compose.memory_lookup %q in %mem, %vals : tensor<4x8xf32>, tensor<32x8xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
  // CHECK: compose.memory_lookup %{{.*}} in %{{.*}}, %{{.*}} {scale = 5.000000e+00 : f32, similarity = #compose.similarity<cosine>}
  %c = compose.memory_lookup %q in %mem, %vals {similarity = #compose.similarity<cosine>, scale = 5.0 : f32}
      : tensor<4x8xf32>, tensor<32x8xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
  return %r, %w, %a, %l, %c : tensor<4x8xf32>, tensor<32x8xf32>, tensor<32x8xf32>, tensor<4x16xf32>, tensor<4x16xf32>
}
