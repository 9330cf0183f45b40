// RUN: tessel-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(tessel-gpu-place-buffers))" -verify-diagnostics | FileCheck %s

// Inputs are copied in, outputs (the out-params tessel.functions lists
// after the inputs) copied back; every twin is freed before the return.
// CHECK-LABEL: func @io
// CHECK-SAME: (%[[X:.*]]: memref<4x8xf32>, %[[Y:.*]]: memref<4x8xf32>)
// CHECK: %[[DX:.*]] = gpu.alloc () : memref<4x8xf32>
// CHECK-NEXT: gpu.memcpy %[[DX]], %[[X]]
// CHECK-NEXT: %[[DY:.*]] = gpu.alloc () : memref<4x8xf32>
// CHECK-NOT: gpu.memcpy %[[DY]], %[[Y]]
// CHECK: scf.parallel
// CHECK: memref.load %[[DX]]
// CHECK: memref.store %{{.*}}, %[[DY]]
// CHECK: gpu.memcpy %[[Y]], %[[DY]]
// CHECK-NEXT: gpu.dealloc %[[DX]]
// CHECK-NEXT: gpu.dealloc %[[DY]]
// CHECK-NEXT: return
module attributes {tessel.functions = [{entry = "tessel_entry_io", inputs = [{dtype = "f32", name = "x", shape = array<i64: 4, 8>}], name = "io", outputs = [{dtype = "f32", name = "y", shape = array<i64: 4, 8>}], symbol = "io"}]} {
  func.func @io(%x: memref<4x8xf32>, %y: memref<4x8xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) {
      %v = memref.load %x[%i, %j] : memref<4x8xf32>
      memref.store %v, %y[%i, %j] : memref<4x8xf32>
      scf.reduce
    }
    return
  }
}

// -----

// Without a signature record every argument is copied both ways; a dynamic
// size is read from the host argument.
// CHECK-LABEL: func @dynamic
// CHECK: %[[N:.*]] = memref.dim %arg0, %c0
// CHECK-NEXT: %[[D:.*]] = gpu.alloc (%[[N]]) : memref<?xf32>
// CHECK-NEXT: gpu.memcpy %[[D]], %arg0
// CHECK: gpu.memcpy %arg0, %[[D]]
// CHECK-NEXT: gpu.dealloc %[[D]]
func.func @dynamic(%x: memref<?xf32>) {
  return
}

// -----

// Constants are copied to the device once per call (one copy however many
// uses); intermediates are device allocations; a contiguous copy between
// device buffers is a device copy; buffers inside loop nests (kernels) are
// left alone.
// CHECK-LABEL: func @globals_and_allocs
// CHECK: %[[G:.*]] = memref.get_global @w
// CHECK-NEXT: %[[DG:.*]] = gpu.alloc () : memref<4xf32>
// CHECK-NEXT: gpu.memcpy %[[DG]], %[[G]]
// CHECK-NOT: memref.get_global
// CHECK: %[[T:.*]] = gpu.alloc () : memref<4xf32>
// CHECK: gpu.memcpy %[[T]], %[[DG]]
// CHECK: scf.parallel
// CHECK: memref.alloca() : memref<2xf32>
// CHECK: gpu.dealloc %[[T]]
// CHECK-NOT: memref.dealloc
memref.global "private" constant @w : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
func.func @globals_and_allocs(%out: memref<4xf32>) {
  %g = memref.get_global @w : memref<4xf32>
  %g2 = memref.get_global @w : memref<4xf32>
  %t = memref.alloc() : memref<4xf32>
  memref.copy %g, %t : memref<4xf32> to memref<4xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %scratch = memref.alloca() : memref<2xf32>
    %v = memref.load %t[%i] : memref<4xf32>
    %w = memref.load %g2[%i] : memref<4xf32>
    %s = arith.addf %v, %w : f32
    memref.store %s, %out[%i] : memref<4xf32>
    scf.reduce
  }
  memref.dealloc %t : memref<4xf32>
  return
}

// -----

// expected-error @+1 {{argument #0 has a strided layout; the GPU target needs identity-layout arguments}}
func.func @strided(%x: memref<4xf32, strided<[2]>>) {
  return
}
