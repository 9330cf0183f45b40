// RUN: tessel-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(tessel-gpu-fold-fill-copies))" | FileCheck %s

// A buffer only a fill writes, copied twice: both copies become fills of
// their targets, at their places, and the buffer goes.
// CHECK-LABEL: func @copies_of_a_fill
// CHECK-NOT: memref.alloc
// CHECK: memref.store
// CHECK-NEXT: linalg.fill ins(%[[Z:.*]] : f32) outs(%arg0 : memref<4x8xf32>)
// CHECK-NEXT: linalg.fill ins(%[[Z]] : f32) outs(%arg1 : memref<4x8xf32>)
// CHECK-NOT: memref.copy
// CHECK-NOT: memref.dealloc
func.func @copies_of_a_fill(%x: memref<4x8xf32>, %y: memref<4x8xf32>, %s: memref<f32>) {
  %zero = arith.constant 0.0 : f32
  %t = memref.alloc() : memref<4x8xf32>
  linalg.fill ins(%zero : f32) outs(%t : memref<4x8xf32>)
  memref.store %zero, %s[] : memref<f32>
  memref.copy %t, %x : memref<4x8xf32> to memref<4x8xf32>
  memref.copy %t, %y : memref<4x8xf32> to memref<4x8xf32>
  memref.dealloc %t : memref<4x8xf32>
  return
}

// -----

// The buffer is written in place later (a matmul into it, as bufferization
// does for the last use): the copy before that is a fill; the buffer's own
// fill moves down to the matmul (where tessel-gpu-tile-matmul folds it);
// a copy after it stays a copy.
// CHECK-LABEL: func @written_later
// CHECK: %[[T:.*]] = memref.alloc
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%arg2
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[T]]
// CHECK-NEXT: linalg.matmul {{.*}} outs(%[[T]]
// CHECK: memref.copy %[[T]], %arg3
func.func @written_later(%a: memref<4x4xf32>, %b: memref<4x8xf32>, %x: memref<4x8xf32>, %y: memref<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %t = memref.alloc() : memref<4x8xf32>
  linalg.fill ins(%zero : f32) outs(%t : memref<4x8xf32>)
  memref.copy %t, %x : memref<4x8xf32> to memref<4x8xf32>
  linalg.matmul ins(%a, %b : memref<4x4xf32>, memref<4x8xf32>) outs(%t : memref<4x8xf32>)
  memref.copy %t, %y : memref<4x8xf32> to memref<4x8xf32>
  memref.dealloc %t : memref<4x8xf32>
  return
}

// -----

// A view of the buffer before the copy (someone may write through it):
// nothing changes; nor for a buffer written before the fill.
// CHECK-LABEL: func @left_alone
// CHECK: memref.copy
// CHECK: memref.copy
func.func @left_alone(%x: memref<4x8xf32>, %y: memref<4x8xf32>, %s: memref<32xf32>) {
  %zero = arith.constant 0.0 : f32
  %t = memref.alloc() : memref<4x8xf32>
  linalg.fill ins(%zero : f32) outs(%t : memref<4x8xf32>)
  %v = memref.collapse_shape %t [[0, 1]] : memref<4x8xf32> into memref<32xf32>
  memref.copy %v, %s : memref<32xf32> to memref<32xf32>
  memref.copy %t, %x : memref<4x8xf32> to memref<4x8xf32>
  %u = memref.alloc() : memref<4x8xf32>
  memref.copy %y, %u : memref<4x8xf32> to memref<4x8xf32>
  linalg.fill ins(%zero : f32) outs(%u : memref<4x8xf32>)
  return
}
