// RUN: tessel-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(tessel-plan-buffers))" | FileCheck %s

// Three 4 KiB buffers in a chain a -> b -> c: a is dead once b is written,
// so c reuses a's bytes (offset 0) while b sits at 4096; the arena is 8 KiB
// instead of 12. Live ranges end at the last use, not at the deallocs the
// deallocation pipeline put at the end of the block.
// CHECK-LABEL: func @chain
// CHECK-SAME: attributes {tessel.arena_bytes = 8192 : i64, tessel.planned_bytes = 12288 : i64}
// CHECK: %[[ARENA:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8192xi8>
// CHECK: %[[O1:.*]] = arith.constant 0 : index
// CHECK: %[[A:.*]] = memref.view %[[ARENA]][%[[O1]]][] : memref<8192xi8> to memref<1024xf32>
// CHECK: %[[O2:.*]] = arith.constant 4096 : index
// CHECK: %[[B:.*]] = memref.view %[[ARENA]][%[[O2]]][] : memref<8192xi8> to memref<1024xf32>
// CHECK: %[[O3:.*]] = arith.constant 0 : index
// CHECK: %[[C:.*]] = memref.view %[[ARENA]][%[[O3]]][] : memref<8192xi8> to memref<1024xf32>
// CHECK-NOT: memref.dealloc %[[A]]
// CHECK: memref.dealloc %[[ARENA]]
// CHECK-NEXT: return
func.func @chain(%x: memref<1024xf32>, %y: memref<1024xf32>) {
  %a = memref.alloc() : memref<1024xf32>
  memref.copy %x, %a : memref<1024xf32> to memref<1024xf32>
  %b = memref.alloc() : memref<1024xf32>
  memref.copy %a, %b : memref<1024xf32> to memref<1024xf32>
  %c = memref.alloc() : memref<1024xf32>
  memref.copy %b, %c : memref<1024xf32> to memref<1024xf32>
  memref.copy %c, %y : memref<1024xf32> to memref<1024xf32>
  memref.dealloc %a : memref<1024xf32>
  memref.dealloc %b : memref<1024xf32>
  memref.dealloc %c : memref<1024xf32>
  return
}

// -----

// A use through a view extends the live range: %a is read (through its
// reshape) after %b is written, so the two may not share bytes.
// CHECK-LABEL: func @through_view
// CHECK-SAME: tessel.arena_bytes = 8192
func.func @through_view(%x: memref<1024xf32>, %y: memref<32x32xf32>) {
  %a = memref.alloc() : memref<1024xf32>
  memref.copy %x, %a : memref<1024xf32> to memref<1024xf32>
  %v = memref.expand_shape %a [[0, 1]] output_shape [32, 32] : memref<1024xf32> into memref<32x32xf32>
  %b = memref.alloc() : memref<1024xf32>
  memref.copy %x, %b : memref<1024xf32> to memref<1024xf32>
  memref.copy %v, %y : memref<32x32xf32> to memref<32x32xf32>
  memref.dealloc %a : memref<1024xf32>
  memref.dealloc %b : memref<1024xf32>
  return
}

// -----

// Dynamic shapes and buffers freed in another block are not planned.
// CHECK-LABEL: func @not_planned
// CHECK-NOT: memref.view
// CHECK: memref.alloc(%{{.*}}) : memref<?xf32>
func.func @not_planned(%n: index, %x: memref<?xf32>, %cond: i1) {
  %a = memref.alloc(%n) : memref<?xf32>
  memref.copy %x, %a : memref<?xf32> to memref<?xf32>
  %b = memref.alloc() : memref<16xf32>
  scf.if %cond {
    memref.dealloc %b : memref<16xf32>
  }
  memref.dealloc %a : memref<?xf32>
  return
}

// -----

// A live range starts at the first use of the bytes, not at the alloc or
// at views of it (bufferization places the buffer of a concatenation built
// in place, and the slices its pieces are written through, before the
// pieces' producers): %a's bytes are first touched after %b's last use, so
// both sit at offset 0.
// CHECK-LABEL: func @first_use
// CHECK-SAME: tessel.arena_bytes = 4096
func.func @first_use(%x: memref<1024xf32>, %y: memref<1024xf32>) {
  %a = memref.alloc() : memref<1024xf32>
  %s = memref.subview %a[512] [512] [1] : memref<1024xf32> to memref<512xf32, strided<[1], offset: 512>>
  %b = memref.alloc() : memref<1024xf32>
  memref.copy %x, %b : memref<1024xf32> to memref<1024xf32>
  memref.copy %b, %y : memref<1024xf32> to memref<1024xf32>
  memref.copy %x, %a : memref<1024xf32> to memref<1024xf32>
  %xs = memref.subview %x[0] [512] [1] : memref<1024xf32> to memref<512xf32, strided<[1]>>
  memref.copy %xs, %s : memref<512xf32, strided<[1]>> to memref<512xf32, strided<[1], offset: 512>>
  memref.copy %a, %y : memref<1024xf32> to memref<1024xf32>
  memref.dealloc %a : memref<1024xf32>
  memref.dealloc %b : memref<1024xf32>
  return
}

// -----

// Buffers of a run-time batch %n: each is %n times a fixed size, so they
// are planned in those units (the @chain plan: 8 KiB per image instead of
// 12) in one arena of %n x 8 KiB, at offsets %n x 0 and %n x 4096.
// CHECK-LABEL: func @run_time_batch
// CHECK-SAME: (%[[X:[a-z0-9]+]]: memref<?x1024xf32>
// CHECK: %[[N:.*]] = memref.dim %[[X]]
// CHECK: %[[PER:.*]] = arith.constant 8192 : index
// CHECK: %[[BYTES:.*]] = arith.muli %[[N]], %[[PER]] : index
// CHECK: %[[ARENA:.*]] = memref.alloc(%[[BYTES]]) {alignment = 64 : i64} : memref<?xi8>
// CHECK: %[[O1:.*]] = arith.constant 0 : index
// CHECK: %[[S1:.*]] = arith.muli %[[N]], %[[O1]] : index
// CHECK: memref.view %[[ARENA]][%[[S1]]][%[[N]]] : memref<?xi8> to memref<?x1024xf32>
// CHECK: %[[O2:.*]] = arith.constant 4096 : index
// CHECK: %[[S2:.*]] = arith.muli %[[N]], %[[O2]] : index
// CHECK: memref.view %[[ARENA]][%[[S2]]][%[[N]]] : memref<?xi8> to memref<?x1024xf32>
// CHECK: memref.view %[[ARENA]]
// CHECK-NOT: memref.alloc
// CHECK: memref.dealloc %[[ARENA]]
// CHECK-NEXT: return
func.func @run_time_batch(%x: memref<?x1024xf32>, %y: memref<?x1024xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x1024xf32>
  %a = memref.alloc(%n) : memref<?x1024xf32>
  memref.copy %x, %a : memref<?x1024xf32> to memref<?x1024xf32>
  %b = memref.alloc(%n) : memref<?x1024xf32>
  memref.copy %a, %b : memref<?x1024xf32> to memref<?x1024xf32>
  %c = memref.alloc(%n) : memref<?x1024xf32>
  memref.copy %b, %c : memref<?x1024xf32> to memref<?x1024xf32>
  memref.copy %c, %y : memref<?x1024xf32> to memref<?x1024xf32>
  memref.dealloc %a : memref<?x1024xf32>
  memref.dealloc %b : memref<?x1024xf32>
  memref.dealloc %c : memref<?x1024xf32>
  return
}

// -----

// Two run-time sizes: each size's buffers get their own arena (the product
// of a buffer's sizes is what scales it); a buffer alone in its set, and a
// size used twice (%n x %n), are left to the allocator unless another
// buffer shares the set.
// CHECK-LABEL: func @two_sizes
// CHECK-DAG: %[[N:.*]] = memref.dim %{{.*}}, %c0
// CHECK-DAG: %[[M:.*]] = memref.dim %{{.*}}, %c1
// CHECK: %[[AN:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?xi8>
// CHECK: memref.view %[[AN]]{{.*}}[%[[N]]] : memref<?xi8> to memref<?x16xf32>
// CHECK: %[[AM:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?xi8>
// CHECK: memref.view %[[AM]]{{.*}}[%[[M]]] : memref<?xi8> to memref<16x?xf32>
// CHECK: memref.view %[[AN]]{{.*}}[%[[N]]] : memref<?xi8> to memref<?x16xf32>
// CHECK: memref.view %[[AM]]{{.*}}[%[[M]]] : memref<?xi8> to memref<16x?xf32>
// CHECK: memref.alloc(%[[N]], %[[N]]) : memref<?x?xf32>
// CHECK: memref.dealloc %{{.*}} : memref<?x?xf32>
// CHECK-DAG: memref.dealloc %[[AN]]
// CHECK-DAG: memref.dealloc %[[AM]]
func.func @two_sizes(%x: memref<?x?xf32>, %y: memref<?x16xf32>, %z: memref<16x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?x?xf32>
  %m = memref.dim %x, %c1 : memref<?x?xf32>
  %a = memref.alloc(%n) : memref<?x16xf32>
  memref.copy %y, %a : memref<?x16xf32> to memref<?x16xf32>
  %b = memref.alloc(%m) : memref<16x?xf32>
  memref.copy %z, %b : memref<16x?xf32> to memref<16x?xf32>
  %c = memref.alloc(%n) : memref<?x16xf32>
  memref.copy %a, %c : memref<?x16xf32> to memref<?x16xf32>
  %d = memref.alloc(%m) : memref<16x?xf32>
  memref.copy %b, %d : memref<16x?xf32> to memref<16x?xf32>
  %e = memref.alloc(%n, %n) : memref<?x?xf32>
  memref.copy %x, %e : memref<?x?xf32> to memref<?x?xf32>
  memref.copy %c, %y : memref<?x16xf32> to memref<?x16xf32>
  memref.copy %d, %z : memref<16x?xf32> to memref<16x?xf32>
  memref.dealloc %a : memref<?x16xf32>
  memref.dealloc %b : memref<16x?xf32>
  memref.dealloc %c : memref<?x16xf32>
  memref.dealloc %d : memref<16x?xf32>
  memref.dealloc %e : memref<?x?xf32>
  return
}
