// RUN: tessel-opt %s -split-input-file --tessel-outline-parallel-loops | FileCheck %s
// RUN: not tessel-opt %s -split-input-file --tessel-outline-parallel-loops="max-tasks=1" 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: max-tasks must be at least 2

// 64x256 element operations (x3 ops) = 49152 per 64 rows: 8 tasks of 8 rows
// at the default min-task-work of 8192. The buffers travel as pointer,
// offset, sizes and strides; the scalar as itself.
// CHECK: func.func private @tessel_kernel_parallel_for(i64, (!llvm.ptr, i64) -> (), !llvm.ptr)
// CHECK-LABEL: func.func @scale(
// CHECK-SAME: %[[X:.*]]: memref<64x256xf32>, %[[Y:.*]]: memref<64x256xf32, strided<[512, 1], offset: ?>>, %[[S:.*]]: f32)
// CHECK: %[[CTX:.*]] = llvm.alloca %{{.*}} x !llvm.struct<(ptr, i64, i64, i64, i64, i64, f32, ptr, i64, i64, i64, i64, i64)>
// CHECK: memref.extract_strided_metadata %[[X]]
// CHECK: %[[XP:.*]] = memref.extract_aligned_pointer_as_index %[[X]]
// CHECK: %[[XP64:.*]] = arith.index_cast %[[XP]] : index to i64
// CHECK: %[[XPTR:.*]] = llvm.inttoptr %[[XP64]]
// CHECK: %[[F0:.*]] = llvm.getelementptr %[[CTX]][0, 0]
// CHECK: llvm.store %[[XPTR]], %[[F0]]
// CHECK: %[[F6:.*]] = llvm.getelementptr %[[CTX]][0, 6]
// CHECK: llvm.store %[[S]], %[[F6]] : f32
// CHECK: %[[FN:.*]] = constant @scale__parallel0 : (!llvm.ptr, i64) -> ()
// CHECK: %[[N:.*]] = arith.constant 8 : i64
// CHECK: call @tessel_kernel_parallel_for(%[[N]], %[[FN]], %[[CTX]])
// CHECK-NOT: scf.parallel
// CHECK: return

// The task: rebuild both descriptors, then rows [8t, min(8t + 8, 64)).
// CHECK-LABEL: func.func private @scale__parallel0(
// CHECK-SAME: %[[C:.*]]: !llvm.ptr, %[[T:.*]]: i64)
// CHECK: %[[XD:.*]] = builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)> to memref<64x256xf32>
// CHECK: %[[SV:.*]] = llvm.load %{{.*}} : !llvm.ptr -> f32
// CHECK: %[[YD:.*]] = builtin.unrealized_conversion_cast %{{.*}} to memref<64x256xf32, strided<[512, 1], offset: ?>>
// CHECK: %[[TI:.*]] = arith.index_cast %[[T]] : i64 to index
// CHECK: %[[SPAN:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK: %[[OFF:.*]] = arith.muli %[[TI]], %[[SPAN]] : index
// CHECK: %[[LO:.*]] = arith.addi %{{.*}}, %[[OFF]] : index
// CHECK: %[[END:.*]] = arith.addi %[[LO]], %[[SPAN]] : index
// CHECK: %[[HI:.*]] = arith.minsi %[[END]], %{{.*}} : index
// CHECK: scf.parallel (%[[I:.*]], %[[J:.*]]) = (%[[LO]], %{{.*}}) to (%[[HI]], %{{.*}})
// CHECK: memref.load %[[XD]][%[[I]], %[[J]]]
// CHECK: arith.mulf %{{.*}}, %[[SV]]
// CHECK: memref.store %{{.*}}, %[[YD]][%[[I]], %[[J]]]
func.func @scale(%x: memref<64x256xf32>, %y: memref<64x256xf32, strided<[512, 1], offset: ?>>, %s: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c256) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<64x256xf32>
    %w = arith.mulf %v, %s : f32
    memref.store %w, %y[%i, %j] : memref<64x256xf32, strided<[512, 1], offset: ?>>
    scf.reduce
  }
  return
}

// -----

// Unit dimensions are skipped: the split is along the second one. Vector
// ops count their elements (16 x 3 ops x 4096 iterations); the constant
// and the global are re-created in the task, so only %y travels.
// CHECK-LABEL: func.func @vector_unit_dim(
// CHECK: llvm.alloca %{{.*}} x !llvm.struct<(ptr, i64, i64, i64, i64, i64, i64, i64)>
// CHECK: arith.constant 24 : i64
// CHECK: call @tessel_kernel_parallel_for
// CHECK-LABEL: func.func private @vector_unit_dim__parallel0(
// CHECK-DAG: memref.get_global @table
// CHECK-DAG: arith.constant 0.000000e+00 : f32
// CHECK: scf.parallel (%{{.*}}, %{{.*}}, %{{.*}}) = (%{{.*}}, %{{.*}}, %{{.*}}) to (%{{.*}}, %{{.*}}, %{{.*}})
// CHECK: vector.transfer_read
memref.global "private" constant @table : memref<4096x16xf32> = dense<1.0>
func.func @vector_unit_dim(%y: memref<1x4096x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4096 = arith.constant 4096 : index
  %pad = arith.constant 0.0 : f32
  %g = memref.get_global @table : memref<4096x16xf32>
  scf.parallel (%n, %i, %j) = (%c0, %c0, %c0) to (%c1, %c4096, %c1) step (%c1, %c1, %c1) {
    %v = vector.transfer_read %g[%i, %c0], %pad {in_bounds = [true]} : memref<4096x16xf32>, vector<16xf32>
    %w = arith.addf %v, %v : vector<16xf32>
    vector.transfer_write %w, %y[%n, %i, %c0] {in_bounds = [true]} : vector<16xf32>, memref<1x4096x16xf32>
    scf.reduce
  }
  return
}

// -----

// Too little work to pay for a dispatch: stays a serial loop.
// CHECK-LABEL: func.func @small(
// CHECK-NOT: tessel_kernel_parallel_for
// CHECK: scf.parallel
func.func @small(%x: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    memref.store %one, %x[%i] : memref<64xf32>
    scf.reduce
  }
  return
}

// -----

// Calls, allocations, reductions and a nest whose only dimension has a
// run-time bound keep a nest serial; a nested scf.parallel is never
// outlined on its own.
// CHECK-LABEL: func.func @unsafe(
// CHECK-NOT: tessel_kernel_parallel_for
// CHECK: scf.parallel
// CHECK: call @opaque
// CHECK: scf.parallel
// CHECK: memref.alloca
// CHECK: scf.parallel
// CHECK: scf.reduce(
// CHECK: scf.parallel
// CHECK: return
func.func private @opaque(index)
func.func @unsafe(%x: memref<65536xf32>, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %big = arith.constant 65536 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%big) step (%c1) {
    func.call @opaque(%i) : (index) -> ()
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%big) step (%c1) {
    %t = memref.alloc() : memref<4xf32>
    memref.dealloc %t : memref<4xf32>
    %s = memref.alloca() : memref<4xf32>
    scf.reduce
  }
  %sum = scf.parallel (%i) = (%c0) to (%big) step (%c1) init (%zero) -> f32 {
    %v = memref.load %x[%i] : memref<65536xf32>
    scf.reduce(%v : f32) {
    ^bb0(%a: f32, %b: f32):
      %r = arith.addf %a, %b : f32
      scf.reduce.return %r : f32
    }
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %k = %c0 to %big step %c1 {
      memref.store %zero, %x[%k] : memref<65536xf32>
    }
    scf.reduce
  }
  return %sum : f32
}

// -----

// A run-time batch outside a static dimension: the static one is split into
// tasks, and the batch bound travels in the context (each task runs every
// image of its rows).
// CHECK-LABEL: func.func @run_time_batch(
// CHECK: call @tessel_kernel_parallel_for
// CHECK-LABEL: func.func private @run_time_batch__parallel0(
// CHECK: %[[P:.*]] = llvm.getelementptr %arg0[0, 8]
// CHECK: %[[N:.*]] = llvm.load %[[P]] : !llvm.ptr -> i64
// CHECK: %[[NI:.*]] = arith.index_cast %[[N]] : i64 to index
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%{{.*}}, %{{.*}}) to (%[[NI]], %{{.*}})
func.func @run_time_batch(%x: memref<?x256x256xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%b, %i) = (%c0, %c0) to (%n, %c256) step (%c1, %c1) {
    scf.for %k = %c0 to %c256 step %c1 {
      memref.store %zero, %x[%b, %i, %k] : memref<?x256x256xf32>
    }
    scf.reduce
  }
  return
}
