// Attention on the -O2 kernel path: one tessel.attention at the linalg
// phase (no softmax reductions left), one kernel call in the LLVM dialect;
// below -O2 the chain stays matmuls and a decomposed softmax.
// RUN: tessel-opt %s --pass-pipeline="builtin.module(tessel-model-to-linalg)" | FileCheck %s --check-prefix=LINALG
// RUN: tessel-opt %s --pass-pipeline="builtin.module(tessel-model-to-llvm{target-triple=x86_64-unknown-linux-gnu})" | FileCheck %s --check-prefix=LLVM
// RUN: tessel-opt %s --pass-pipeline="builtin.module(tessel-model-to-linalg{opt-level=1})" | FileCheck %s --check-prefix=O1

// LINALG: tessel.attention ins({{.*}} : tensor<2x16x8xf32>, tensor<2x16x8xf32>, tensor<2x16x4xf32>) mask({{.*}} : tensor<1x16x16xf32>) outs({{.*}} : tensor<2x16x4xf32>) {scale = 5.000000e-01 : f32}
// LINALG-NOT: linalg.batch_matmul
// LINALG-NOT: math.exp

// LLVM: llvm.func @tessel_kernel_attention_f32(
// LLVM: llvm.call @tessel_kernel_attention_f32(

// O1-NOT: tessel.attention
// O1: linalg.batch_matmul
// O1: math.exp
// O1: linalg.batch_matmul
func.func @main(%q: tensor<2x16x8xf32>, %kt: tensor<2x8x16xf32>, %v: tensor<2x16x4xf32>, %m: tensor<1x16x16xf32>) -> tensor<2x16x4xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %s = tosa.matmul %q, %kt, %zp, %zp : (tensor<2x16x8xf32>, tensor<2x8x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x16x16xf32>
  %c = "tosa.const"() <{values = dense<0.5> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %ss = tosa.mul %s, %c, %shift : (tensor<2x16x16xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<2x16x16xf32>
  %sm = tosa.add %ss, %m : (tensor<2x16x16xf32>, tensor<1x16x16xf32>) -> tensor<2x16x16xf32>
  %p = tessel.softmax %sm {axis = -1 : i64} : tensor<2x16x16xf32>
  %o = tosa.matmul %p, %v, %zp, %zp : (tensor<2x16x16xf32>, tensor<2x16x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x16x4xf32>
  return %o : tensor<2x16x4xf32>
}
