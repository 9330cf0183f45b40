// RUN: tessel-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(tessel-gpu-map-parallel-loops{block-size=128}))" -verify-diagnostics | FileCheck %s
// RUN: not tessel-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(tessel-gpu-map-parallel-loops{block-size=2048}))" 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: block-size must be 1..1024, got 2048

// A 3-D nest: one thread per iteration, linearized (innermost fastest) and
// cut into blocks of 128 with a bounds check; the induction variables are
// recovered with the steps and lower bounds.
// CHECK-LABEL: func @nest
// CHECK: arith.ceildivui %{{.*}}, %c2 : index
// CHECK: %[[TOTAL:.*]] = arith.muli
// CHECK-NEXT: %[[C128:.*]] = arith.constant 128 : index
// CHECK-NEXT: %[[BLOCKS:.*]] = arith.ceildivui %[[TOTAL]], %[[C128]]
// CHECK: %[[GRID:.*]] = arith.maxui %[[BLOCKS]]
// CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[GRID]], %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C128]],
// CHECK: %[[BASE:.*]] = arith.muli %[[BX]], %[[C128]]
// CHECK: %[[ID:.*]] = arith.addi %[[BASE]], %[[TX]]
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[ID]], %[[TOTAL]]
// CHECK: scf.if %[[IN]]
// CHECK: arith.remui %[[ID]]
// CHECK: arith.divui %[[ID]]
// CHECK: memref.store
// CHECK: gpu.terminator
// CHECK-NOT: scf.parallel
func.func @nest(%y: memref<2x3x40xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c40 = arith.constant 40 : index
  %cst = arith.constant 1.0 : f32
  scf.parallel (%i, %j, %k) = (%c0, %c0, %c0) to (%c2, %c3, %c40) step (%c1, %c1, %c2) {
    memref.store %cst, %y[%i, %j, %k] : memref<2x3x40xf32>
    scf.reduce
  }
  return
}

// -----

// A loop with no parallel dimension (a reduction to a scalar) runs in a
// one-thread kernel: the host never dereferences device memory.
// CHECK-LABEL: func @serial
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %[[ONE:.*]], %{{.*}} = %[[ONE]], %{{.*}} = %[[ONE]]) threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %[[ONE]], %{{.*}} = %[[ONE]], %{{.*}} = %[[ONE]])
// CHECK-NEXT: scf.for
// CHECK: memref.store
// CHECK: gpu.terminator
func.func @serial(%x: memref<16xf32>, %y: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  scf.for %i = %c0 to %c16 step %c1 {
    %v = memref.load %x[%i] : memref<16xf32>
    %a = memref.load %y[] : memref<f32>
    %s = arith.addf %a, %v : f32
    memref.store %s, %y[] : memref<f32>
  }
  return
}

// -----

func.func @reduce(%x: memref<16xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  // expected-error @+1 {{a parallel loop with reductions (scf.reduce) cannot run as a GPU kernel yet}}
  %r = scf.parallel (%i) = (%c0) to (%c16) step (%c1) init (%zero) -> f32 {
    %v = memref.load %x[%i] : memref<16xf32>
    scf.reduce(%v : f32) {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      scf.reduce.return %s : f32
    }
  }
  return %r : f32
}

// -----

func.func @host_reads(%x: memref<4xindex>) -> index {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{the host would read a value computed from device memory}}
  %n = memref.load %x[%c0] : memref<4xindex>
  return %n : index
}

// -----

// A TMA descriptor is a host call (the driver encodes the buffer's address
// and sizes): it stays on the host. A tiled kernel that asked for its
// constants (tessel.sink_constants) gets its own copies and loses the
// mark; another kernel keeps reading the function's.
// CHECK-LABEL: func @descriptor_and_constants
// CHECK: %[[C8:.*]] = arith.constant 8 : index
// CHECK: nvgpu.tma.create.descriptor
// CHECK-NOT: gpu.launch
// CHECK: gpu.launch
// CHECK: %[[IN:.*]] = arith.constant 8 : index
// CHECK: memref.store %{{.*}}, %arg1[%[[IN]]]
// CHECK-NOT: tessel.sink_constants
// CHECK: gpu.launch
// CHECK-NOT: arith.constant 8
// CHECK: memref.store %{{.*}}, %arg1[%[[C8]]]
func.func @descriptor_and_constants(%a: memref<256x64xf16>, %out: memref<16xf32>) {
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %v = arith.constant 1.0 : f32
  %u = memref.cast %a : memref<256x64xf16> to memref<*xf16>
  %d = nvgpu.tma.create.descriptor %u box[%c128, %c64] : memref<*xf16> -> !nvgpu.tensormap.descriptor<tensor = memref<128x64xf16, 3>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    memref.store %v, %out[%c8] : memref<16xf32>
    gpu.terminator
  } {tessel.sink_constants}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    memref.store %v, %out[%c8] : memref<16xf32>
    gpu.terminator
  }
  return
}
