// RUN: tessel-opt %s --convert-nvgpu-to-nvvm | FileCheck %s

// Pins the upstream lowering GpuWgmmaMatmul.cpp relies on: a warpgroup's
// fragment store places each thread by the index of its warp in the whole
// block (tid.x / 32, no modulo 128), 16 rows a warp. Warpgroup 1 (warps
// 4-7) thus writes rows 64-127 while naming the tile's first 64, which is
// how the Hopper GEMM's two consumer warpgroups share one 128-row tile. If
// an LLVM update changes this, that kernel must change with it.
// CHECK-LABEL: func @store
// CHECK-DAG: %[[C32:.*]] = llvm.mlir.constant(32 : i32) : i32
// CHECK-DAG: %[[C16:.*]] = llvm.mlir.constant(16 : i32) : i32
// CHECK: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK-NOT: llvm.mlir.constant(128 : i32)
// CHECK: %[[WARP:.*]] = llvm.udiv %[[TID]], %[[C32]] : i32
// CHECK: llvm.mul %[[WARP]], %[[C16]] : i32
func.func @store(%acc: !nvgpu.warpgroup.accumulator<fragmented = vector<64x128xf32>>, %dst: memref<64x128xf32, 3>) {
  nvgpu.warpgroup.mma.store %acc, %dst : !nvgpu.warpgroup.accumulator<fragmented = vector<64x128xf32>> to memref<64x128xf32, 3>
  return
}
