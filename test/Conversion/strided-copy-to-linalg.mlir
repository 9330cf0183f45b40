// RUN: tessel-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(tessel-strided-copy-to-linalg))" | FileCheck %s

// A copy into a strided subview (what tensor.pad bufferizes to) must not
// become a call to the runner-utils `memrefCopy`.
// CHECK-LABEL: func @into_subview
// CHECK-NOT: memref.copy
// CHECK: linalg.copy ins(%{{.*}} : memref<3x4xf32>) outs(%{{.*}} : memref<3x4xf32, strided<[9, 1], offset: 11>>)
func.func @into_subview(%src: memref<3x4xf32>, %dst: memref<4x9xf32>) {
  %sv = memref.subview %dst[1, 2] [3, 4] [1, 1] : memref<4x9xf32> to memref<3x4xf32, strided<[9, 1], offset: 11>>
  memref.copy %src, %sv : memref<3x4xf32> to memref<3x4xf32, strided<[9, 1], offset: 11>>
  return
}

// -----

// CHECK-LABEL: func @from_subview
// CHECK: linalg.copy ins(%{{.*}} : memref<2x2xf32, strided<[4, 1], offset: 1>>) outs(%{{.*}} : memref<2x2xf32>)
func.func @from_subview(%src: memref<4x4xf32>, %dst: memref<2x2xf32>) {
  %sv = memref.subview %src[0, 1] [2, 2] [1, 1] : memref<4x4xf32> to memref<2x2xf32, strided<[4, 1], offset: 1>>
  memref.copy %sv, %dst : memref<2x2xf32, strided<[4, 1], offset: 1>> to memref<2x2xf32>
  return
}

// -----

// Contiguous copies stay memref.copy (lowered to llvm.memcpy).
// CHECK-LABEL: func @contiguous
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<8xf32> to memref<8xf32>
// CHECK-NOT: linalg.copy
func.func @contiguous(%src: memref<8xf32>, %dst: memref<8xf32>) {
  memref.copy %src, %dst : memref<8xf32> to memref<8xf32>
  return
}
