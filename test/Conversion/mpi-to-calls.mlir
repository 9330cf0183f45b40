// RUN: tessel-opt %s -split-input-file --tessel-mpi-to-calls -verify-diagnostics | FileCheck %s
// RUN: tessel-opt %s -split-input-file --tessel-mpi-to-calls="implementation=MPICH" -verify-diagnostics | FileCheck %s --check-prefix=MPICH
// RUN: not tessel-opt %s --tessel-mpi-to-calls="implementation=LAM" 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: tessel-mpi-to-calls: 'implementation' must be OpenMPI or MPICH, got 'LAM'

// Rows of 64 f32 (256 bytes) each; counts and buffers as pointers to their
// first elements; the module records the MPI whose ABI upstream's lowering
// of the communicator follows.
// CHECK: module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "OpenMPI">}
// MPICH: module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "MPICH">}
// CHECK-LABEL: func.func @all_to_all_v
// CHECK-SAME: (%[[X:.*]]: memref<256x64xf32>, %[[S:.*]]: memref<2xi32>, %[[R:.*]]: memref<2xi32>, %[[OUT:.*]]: memref<512x64xf32>)
// CHECK: %[[COMM:.*]] = mpi.comm_world
// CHECK: %[[PX:.*]] = llvm.inttoptr
// CHECK: %[[PS:.*]] = llvm.inttoptr
// CHECK: %[[PR:.*]] = llvm.inttoptr
// CHECK: %[[PO:.*]] = llvm.inttoptr
// CHECK: %[[ROW:.*]] = arith.constant 256 : i64
// CHECK: call @tessel_mpi_all_to_all_v(%[[COMM]], %[[PX]], %[[PS]], %[[PO]], %[[PR]], %[[ROW]]) : (!mpi.comm, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64) -> ()
// CHECK-NOT: tessel.all_to_all_v
// CHECK: func.func private @tessel_mpi_all_to_all_v(!mpi.comm, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64)
func.func @all_to_all_v(%x: memref<256x64xf32>, %s: memref<2xi32>, %r: memref<2xi32>,
                        %out: memref<512x64xf32>) {
  %comm = mpi.comm_world : !mpi.comm
  tessel.all_to_all_v %x, %s, %r, %comm outs(%out : memref<512x64xf32>)
      : memref<256x64xf32>, memref<2xi32>, memref<2xi32>
  return
}

// -----

// A strided init goes through a dense copy, written back after the call;
// all_gather passes the input's bytes (rows x row bytes).
// CHECK-LABEL: func.func @all_gather_strided
// CHECK: %[[COPY:.*]] = memref.alloc() : memref<6x4xf32>
// CHECK: %[[ROWS:.*]] = memref.dim %{{.*}}, %c0
// CHECK: %[[ROWS64:.*]] = arith.index_cast %[[ROWS]] : index to i64
// CHECK: %[[BYTES:.*]] = arith.muli %[[ROWS64]], %c16_i64
// CHECK: call @tessel_mpi_all_gather(%{{.*}}, %{{.*}}, %{{.*}}, %[[BYTES]])
// CHECK: memref.copy %[[COPY]], %{{.*}} : memref<6x4xf32> to memref<6x4xf32, strided<[8, 1]>>
// CHECK: memref.dealloc %[[COPY]]
func.func @all_gather_strided(%x: memref<3x4xf32>, %out: memref<6x4xf32, strided<[8, 1]>>) {
  %comm = mpi.comm_world : !mpi.comm
  tessel.all_gather %x, %comm outs(%out : memref<6x4xf32, strided<[8, 1]>>) : memref<3x4xf32>
  return
}

// -----

func.func @on_tensors(%x: tensor<3x4xf32>, %init: tensor<6x4xf32>) -> tensor<6x4xf32> {
  %comm = mpi.comm_world : !mpi.comm
  // expected-error @+1 {{must be bufferized before tessel-mpi-to-calls}}
  %y = tessel.all_gather %x, %comm outs(%init : tensor<6x4xf32>) : tensor<3x4xf32> -> tensor<6x4xf32>
  return %y : tensor<6x4xf32>
}

// -----

func.func @dynamic_rows(%x: memref<3x?xf32>, %out: memref<6x?xf32>) {
  %comm = mpi.comm_world : !mpi.comm
  // expected-error @+1 {{needs static dimensions past the first, got 'memref<3x?xf32>'}}
  tessel.all_gather %x, %comm outs(%out : memref<6x?xf32>) : memref<3x?xf32>
  return
}
