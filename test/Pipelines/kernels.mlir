// The -O2/-O3 path with the kernel library (the default): the matmul
// becomes a packed_conv2d with its weight packed at compile time, a call
// into the library after bufferization, buffers come from the library's
// caching allocator, and the entry passes its invoke context (threads) on.
// RUN: tessel-opt %s --pass-pipeline="builtin.module(tessel-model-to-linalg)" | FileCheck %s --check-prefix=LINALG
// RUN: tessel-opt %s --pass-pipeline="builtin.module(tessel-model-to-llvm{target-triple=x86_64-unknown-linux-gnu})" | FileCheck %s --check-prefix=LLVM
// Below -O2 the loops path is kept (no calls, plain malloc).
// RUN: tessel-opt %s --pass-pipeline="builtin.module(tessel-model-to-llvm{opt-level=1 target-triple=x86_64-unknown-linux-gnu})" | FileCheck %s --check-prefix=O1

// LINALG: arith.constant dense<{{.*}}> : tensor<1x1x4x64xf32>
// LINALG: tessel.packed_conv2d ins({{.*}} : tensor<1x1x2x4xf32>, tensor<1x1x4x64xf32>)
// LINALG-NOT: linalg.batch_matmul

// LLVM-DAG: llvm.func @tessel_kernel_set_context(!llvm.ptr)
// LLVM-DAG: llvm.func @_mlir_memref_to_llvm_alloc(i64) -> !llvm.ptr
// LLVM-DAG: llvm.func @tessel_kernel_conv2d_nhwc_f32(
// LLVM: llvm.func internal @__tessel_fn_main(
// LLVM: llvm.call @tessel_kernel_conv2d_nhwc_f32(
// LLVM: llvm.func @tessel_entry_main(%[[BUFS:.*]]: !llvm.ptr, %[[CTX:.*]]: !llvm.ptr) -> i32
// LLVM-NEXT: llvm.call @tessel_kernel_set_context(%[[CTX]])

// O1-NOT: tessel_kernel
// O1: llvm.call @malloc
// O1-NOT: tessel_kernel
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
