// Each named phase pipeline, checked on one model (matmul with a weight
// constant + softmax), on the plain-loops path (kernels=false; the kernel
// library path is checked in kernels.mlir).
// RUN: tessel-opt %s --pass-pipeline="builtin.module(tessel-model-to-linalg{kernels=false})" | FileCheck %s --check-prefix=LINALG
// RUN: tessel-opt %s --pass-pipeline="builtin.module(tessel-model-to-linalg{kernels=false},tessel-linalg-to-buffers{kernels=false})" | FileCheck %s --check-prefix=BUF
// RUN: tessel-opt %s --pass-pipeline="builtin.module(tessel-model-to-llvm{target-triple=x86_64-unknown-linux-gnu kernels=false})" | FileCheck %s --check-prefix=LLVM
// At -O0 the elementwise producers are not fused into their consumers.
// RUN: tessel-opt %s --pass-pipeline="builtin.module(tessel-model-to-linalg{opt-level=0})" | FileCheck %s --check-prefix=O0

// LINALG: module attributes {tessel.functions = [{entry = "tessel_entry_main", inputs = [{dtype = "f32", name = "x", shape = array<i64: 2, 4>}], name = "main", outputs = [{dtype = "f32", name = "output0", shape = array<i64: 2, 4>}], symbol = "__tessel_fn_main"}]}
// LINALG: linalg.batch_matmul
// LINALG: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// LINALG: arith.maximumf
// LINALG: arith.subf
// LINALG-NEXT: math.exp
// LINALG-NOT: tosa.
// LINALG-NOT: tessel.softmax

// Weights become a constant global; the result is an out-param.
// BUF: memref.global "private" constant @__constant_1x4x4xf32 : memref<1x4x4xf32>
// BUF: func.func @__tessel_fn_main(%{{.*}}: memref<2x4xf32> {tessel.name = "x"}, %{{.*}}: memref<2x4xf32>)
// BUF: linalg.batch_matmul
// BUF: memref.dealloc

// Weights live in a constant (read-only) global; entry + manifest are added.
// LLVM: llvm.mlir.global private constant @__constant_1x4x4xf32(dense<{{.*}}> : tensor<1x4x4xf32>)
// LLVM: llvm.func internal @__tessel_fn_main(
// At -O2 (the default) exp is a polynomial (tessel-approximate-math), no libm call.
// LLVM-NOT: llvm.intr.exp
// LLVM: llvm.intr.fma
// LLVM-NOT: llvm.intr.exp
// LLVM: llvm.func @tessel_entry_main(
// LLVM: llvm.mlir.global external constant @tessel_artifact_manifest("tessel-artifact 1\0Atarget x86_64-unknown-linux-gnu\0Afunction main tessel_entry_main\0Ainput x f32 [2,4]\0Aoutput output0 f32 [2,4]\0Aend\0A\00")

// O0: arith.subf
// O0-NEXT: linalg.yield
// O0: math.exp
// O0-NEXT: linalg.yield
func.func @main(%x: tensor<2x4xf32> {tessel.name = "x"}) -> tensor<2x4xf32> {
  %w = "tosa.const"() {values = dense<[[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0], [13.0, 14.0, 15.0, 16.0]]]> : tensor<1x4x4xf32>} : () -> tensor<1x4x4xf32>
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %s3 = tosa.const_shape {values = dense<[1, 2, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %x3 = tosa.reshape %x, %s3 : (tensor<2x4xf32>, !tosa.shape<3>) -> tensor<1x2x4xf32>
  %m = tosa.matmul %x3, %w, %zp, %zp : (tensor<1x2x4xf32>, tensor<1x4x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x4xf32>
  %s2 = tosa.const_shape {values = dense<[2, 4]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %m2 = tosa.reshape %m, %s2 : (tensor<1x2x4xf32>, !tosa.shape<2>) -> tensor<2x4xf32>
  %y = tessel.softmax %m2 {axis = -1 : i64} : tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}
