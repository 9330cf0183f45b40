// RUN: tessel-opt %s -split-input-file --tessel-gpu-resident-constants | FileCheck %s

// A constant copied to a fresh device buffer, read (by kernels, through
// its descriptor) and freed:
// one runtime call that returns the cached device copy.
// CHECK-LABEL: llvm.func @weights
// CHECK: %[[G:.*]] = llvm.mlir.addressof @w
// CHECK: %[[SRC:.*]] = llvm.getelementptr %[[G]][0, 0]
// CHECK: %[[DEV:.*]] = llvm.call @__tessel_cuda_constant(%[[SRC]], %{{.*}}, %[[S:.*]]) : (!llvm.ptr, i64, !llvm.ptr) -> !llvm.ptr
// CHECK-NOT: mgpuMemAlloc
// CHECK-NOT: mgpuMemcpy
// CHECK: llvm.ptrtoint %[[DEV]]
// CHECK-NOT: mgpuMemFree
// CHECK: llvm.func @__tessel_cuda_constant(!llvm.ptr, i64, !llvm.ptr) -> !llvm.ptr
llvm.mlir.global private constant @w(dense<1.0> : tensor<4xf32>) : !llvm.array<4 x f32>
llvm.func @mgpuStreamCreate() -> !llvm.ptr
llvm.func @mgpuMemAlloc(i64, !llvm.ptr, i8) -> !llvm.ptr
llvm.func @mgpuMemcpy(!llvm.ptr, !llvm.ptr, i64, !llvm.ptr)
llvm.func @mgpuMemFree(!llvm.ptr, !llvm.ptr)
llvm.func @weights() {
  %s = llvm.call @mgpuStreamCreate() : () -> !llvm.ptr
  %n = llvm.mlir.constant(16 : i64) : i64
  %f = llvm.mlir.constant(0 : i8) : i8
  %d = llvm.call @mgpuMemAlloc(%n, %s, %f) : (i64, !llvm.ptr, i8) -> !llvm.ptr
  %g = llvm.mlir.addressof @w : !llvm.ptr
  %src = llvm.getelementptr %g[0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.array<4 x f32>
  llvm.call @mgpuMemcpy(%d, %src, %n, %s) : (!llvm.ptr, !llvm.ptr, i64, !llvm.ptr) -> ()
  %i = llvm.ptrtoint %d : !llvm.ptr to i64
  llvm.call @mgpuMemFree(%d, %s) : (!llvm.ptr, !llvm.ptr) -> ()
  llvm.return
}

// -----

// A mutable global, a buffer another copy writes to, or one handed to an
// unknown function keeps its own per-call buffer.
// CHECK-LABEL: llvm.func @not_constant
// CHECK-NOT: __tessel_cuda_constant
// CHECK-COUNT-3: llvm.call @mgpuMemAlloc
llvm.mlir.global private @v(dense<1.0> : tensor<4xf32>) : !llvm.array<4 x f32>
llvm.mlir.global private constant @c(dense<1.0> : tensor<4xf32>) : !llvm.array<4 x f32>
llvm.func @mgpuStreamCreate() -> !llvm.ptr
llvm.func @mgpuMemAlloc(i64, !llvm.ptr, i8) -> !llvm.ptr
llvm.func @mgpuMemcpy(!llvm.ptr, !llvm.ptr, i64, !llvm.ptr)
llvm.func @mgpuMemFree(!llvm.ptr, !llvm.ptr)
llvm.func @use(!llvm.ptr)
llvm.func @not_constant(%other: !llvm.ptr) {
  %s = llvm.call @mgpuStreamCreate() : () -> !llvm.ptr
  %n = llvm.mlir.constant(16 : i64) : i64
  %f = llvm.mlir.constant(0 : i8) : i8
  %d = llvm.call @mgpuMemAlloc(%n, %s, %f) : (i64, !llvm.ptr, i8) -> !llvm.ptr
  %g = llvm.mlir.addressof @v : !llvm.ptr
  llvm.call @mgpuMemcpy(%d, %g, %n, %s) : (!llvm.ptr, !llvm.ptr, i64, !llvm.ptr) -> ()
  %e = llvm.call @mgpuMemAlloc(%n, %s, %f) : (i64, !llvm.ptr, i8) -> !llvm.ptr
  %c = llvm.mlir.addressof @c : !llvm.ptr
  llvm.call @mgpuMemcpy(%e, %c, %n, %s) : (!llvm.ptr, !llvm.ptr, i64, !llvm.ptr) -> ()
  llvm.call @mgpuMemcpy(%e, %other, %n, %s) : (!llvm.ptr, !llvm.ptr, i64, !llvm.ptr) -> ()
  %h = llvm.call @mgpuMemAlloc(%n, %s, %f) : (i64, !llvm.ptr, i8) -> !llvm.ptr
  llvm.call @mgpuMemcpy(%h, %c, %n, %s) : (!llvm.ptr, !llvm.ptr, i64, !llvm.ptr) -> ()
  llvm.call @use(%h) : (!llvm.ptr) -> ()
  llvm.call @mgpuMemFree(%d, %s) : (!llvm.ptr, !llvm.ptr) -> ()
  llvm.call @mgpuMemFree(%e, %s) : (!llvm.ptr, !llvm.ptr) -> ()
  llvm.call @mgpuMemFree(%h, %s) : (!llvm.ptr, !llvm.ptr) -> ()
  llvm.return
}
