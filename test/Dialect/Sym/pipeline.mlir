// tessel-lower-sym runs first in tessel-model-to-linalg: the recorded
// signature sees i32 ids and records their vocabulary (for the manifest),
// and the vocabulary stays on the lowered function.
// RUN: tessel-opt %s --pass-pipeline="builtin.module(tessel-model-to-linalg{opt-level=0})" | FileCheck %s
// RUN: tessel-opt %s --pass-pipeline="builtin.module(tessel-model-to-linalg{opt-level=3})" | FileCheck %s
// RUN: tessel-opt --help | FileCheck %s --check-prefix=HELP
// RUN: tessel-opt --show-dialects | FileCheck %s --check-prefix=DIALECTS

// HELP-DAG: --tessel-lower-sym
// HELP-DAG: --tessel-simplify-sym
// HELP-DAG: assume-finite-weights
// DIALECTS: sym

// CHECK: tessel.functions = [{entry = "tessel_entry_main", inputs = [{dtype = "i32", name = "tokens", shape = array<i64: 4>, vocab = 16 : i64}, {dtype = "f32", name = "input1", shape = array<i64: 16, 8>}], name = "main", outputs = [{dtype = "f32", name = "output0", shape = array<i64: 4, 8>}, {dtype = "i32", name = "output1", shape = array<i64: 4>, vocab = 16 : i64}]
// CHECK: func.func @__tessel_fn_main(%{{.*}}: tensor<4xi32> {{{.*}}sym.vocab = 16 : i64{{.*}}}, %{{.*}}: tensor<16x8xf32>{{.*}}) -> (tensor<4x8xf32>, tensor<4xi32> {sym.vocab = 16 : i64})
// CHECK-NOT: sym.embed
// CHECK-NOT: sym.quantize
// CHECK-NOT: !sym.symbol
func.func @main(%s: tensor<4x!sym.symbol<16>> {tessel.name = "tokens"}, %t: tensor<16x8xf32>) -> (tensor<4x8xf32>, tensor<4x!sym.symbol<16>>) {
  %e = sym.embed %s, %t : tensor<4x!sym.symbol<16>>, tensor<16x8xf32> -> tensor<4x8xf32>
  %q = sym.quantize %e, %t : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x!sym.symbol<16>>
  return %e, %q : tensor<4x8xf32>, tensor<4x!sym.symbol<16>>
}
