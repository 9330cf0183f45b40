// RUN: tessel-opt %s -split-input-file --pass-pipeline="builtin.module(gpu.module(tessel-gpu-extern-dynamic-shared))" | FileCheck %s

// The zero-length shared global of gpu.dynamic_shared_memory becomes
// external (PTX `.extern .shared ... []`, placed after the static shared
// variables); a static shared array and a global one are left alone.
// CHECK-LABEL: gpu.module @kernels
// CHECK: llvm.mlir.global external @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
// CHECK: llvm.mlir.global internal @tile() {addr_space = 3 : i32} : !llvm.array<64 x f32>
// CHECK: llvm.mlir.global internal @empty_global() {addr_space = 1 : i32} : !llvm.array<0 x i8>
gpu.module @kernels {
  llvm.mlir.global internal @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
  llvm.mlir.global internal @tile() {addr_space = 3 : i32} : !llvm.array<64 x f32>
  llvm.mlir.global internal @empty_global() {addr_space = 1 : i32} : !llvm.array<0 x i8>
}
