// tessel-simplify-sym's rewrites, numerically: the simplified model is
// compiled and compared with numpy (the references are those of the
// unsimplified functions). References: e2e_refs.py.
// RUN: rm -rf %t && mkdir -p %t
// RUN: tessel-opt %s --pass-pipeline="builtin.module(func.func(tessel-simplify-sym))" -o %t/simplified.mlir
// RUN: FileCheck %s --input-file=%t/simplified.mlir
// RUN: %python %e2e %t/simplified.mlir --work-dir %t -O 0,3

// SYM_SIMPLIFY_W in e2e_refs.py. Becomes a gather.
// CHECK-LABEL: func @sym_simplify_one_hot_matmul
// CHECK-NOT: tosa.matmul
// CHECK: sym.embed
func.func @sym_simplify_one_hot_matmul(%s: tensor<6x!sym.symbol<4>>) -> tensor<1x6x3xf32> {
  %w = "tosa.const"() {values = dense<[[[0.5, -1.0, 2.0], [3.0, 0.25, -4.0], [-0.75, 1.5, 6.0], [7.0, -8.0, 0.125]]]> : tensor<1x4x3xf32>} : () -> tensor<1x4x3xf32>
  %h = sym.one_hot %s : tensor<6x!sym.symbol<4>> -> tensor<6x4xf32>
  %shape = tosa.const_shape {values = dense<[1, 6, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %a = tosa.reshape %h, %shape : (tensor<6x4xf32>, !tosa.shape<3>) -> tensor<1x6x4xf32>
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %y = tosa.matmul %a, %w, %zp, %zp : (tensor<1x6x4xf32>, tensor<1x4x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x6x3xf32>
  return %y : tensor<1x6x3xf32>
}

// SYM_SIMPLIFY_C in e2e_refs.py. Becomes argmax of folded scores.
// CHECK-LABEL: func @sym_simplify_codebook
// CHECK-NOT: sym.quantize
// CHECK: sym.argmax
func.func @sym_simplify_codebook(%x: tensor<2x5x3xf32>) -> tensor<2x5x!sym.symbol<4>> {
  %c = "tosa.const"() {values = dense<[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [-1.0, -1.0, -1.0]]> : tensor<4x3xf32>} : () -> tensor<4x3xf32>
  %q = sym.quantize %x, %c : tensor<2x5x3xf32>, tensor<4x3xf32> -> tensor<2x5x!sym.symbol<4>>
  return %q : tensor<2x5x!sym.symbol<4>>
}

// Round trip through SYM_SIMPLIFY_C: the symbols themselves.
// CHECK-LABEL: func @sym_simplify_round_trip
// CHECK-NEXT: return
func.func @sym_simplify_round_trip(%s: tensor<7x!sym.symbol<4>>) -> tensor<7x!sym.symbol<4>> {
  %c = "tosa.const"() {values = dense<[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [-1.0, -1.0, -1.0]]> : tensor<4x3xf32>} : () -> tensor<4x3xf32>
  %e = sym.embed %s, %c : tensor<7x!sym.symbol<4>>, tensor<4x3xf32> -> tensor<7x3xf32>
  %q = sym.quantize %e, %c : tensor<7x3xf32>, tensor<4x3xf32> -> tensor<7x!sym.symbol<4>>
  return %q : tensor<7x!sym.symbol<4>>
}
