// tessel-simplify-sym is part of tessel-model-to-linalg from -O2 on: a
// one-hot matmul with constant weights becomes a row gather there, and
// stays a matmul at -O0/-O1.
// RUN: tessel-opt %s --pass-pipeline="builtin.module(tessel-model-to-linalg{opt-level=2})" | FileCheck %s --check-prefix=O2
// RUN: tessel-opt %s --pass-pipeline="builtin.module(tessel-model-to-linalg{opt-level=1})" | FileCheck %s --check-prefix=O1

// O2-LABEL: func.func @__tessel_fn_main(
// O2-NOT: linalg.batch_matmul
// O2-NOT: tessel.packed_conv2d
// O2: tensor.extract
// O2-NOT: linalg.batch_matmul
// O1-LABEL: func.func @__tessel_fn_main(
// O1: linalg.batch_matmul
func.func @main(%s: tensor<6x!sym.symbol<4>> {tessel.name = "tokens"}) -> tensor<1x6x3xf32> {
  %w = "tosa.const"() {values = dense<[[[0.5, -1.0, 2.0], [3.0, 0.25, -4.0], [-0.75, 1.5, 6.0], [7.0, -8.0, 0.125]]]> : tensor<1x4x3xf32>} : () -> tensor<1x4x3xf32>
  %h = sym.one_hot %s : tensor<6x!sym.symbol<4>> -> tensor<6x4xf32>
  %shape = tosa.const_shape {values = dense<[1, 6, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %a = tosa.reshape %h, %shape : (tensor<6x4xf32>, !tosa.shape<3>) -> tensor<1x6x4xf32>
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %y = tosa.matmul %a, %w, %zp, %zp : (tensor<1x6x4xf32>, tensor<1x4x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x6x3xf32>
  return %y : tensor<1x6x3xf32>
}
