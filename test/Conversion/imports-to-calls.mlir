// RUN: tessel-opt %s -split-input-file -tessel-imports-to-calls -verify-diagnostics | FileCheck %s

// A bufferized import call becomes a call of the helper with the import's
// slot (its position in tessel.imports) and an array of buffer pointers
// (inputs, then outputs) allocated once at function entry; on failure the
// outputs are zero-filled.
// CHECK-LABEL: func.func private @__tessel_call_import(i32, !llvm.ptr) -> i32
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[IDS:.*]]: memref<6xi32>, %[[OUT:.*]]: memref<6x4xf32>)
// CHECK: %[[N:.*]] = llvm.mlir.constant(2 : i64) : i64
// CHECK: %[[ARR:.*]] = llvm.alloca %[[N]] x !llvm.ptr : (i64) -> !llvm.ptr
// CHECK: scf.for
// CHECK: %[[S0:.*]] = llvm.getelementptr %[[ARR]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: %[[B0:[^,]*]], %[[OFF0:[^,]*]], %{{.*}} = memref.extract_strided_metadata %[[IDS]]
// CHECK: %[[P0:.*]] = memref.extract_aligned_pointer_as_index %[[B0]]
// CHECK: %[[BYTES:.*]] = arith.muli %[[OFF0]], %{{.*}} : index
// CHECK: %[[ADDR:.*]] = arith.addi %[[P0]], %[[BYTES]] : index
// CHECK: %[[I64:.*]] = arith.index_cast %[[ADDR]] : index to i64
// CHECK: %[[A0:.*]] = llvm.inttoptr %[[I64]] : i64 to !llvm.ptr
// CHECK: llvm.store %[[A0]], %[[S0]] : !llvm.ptr, !llvm.ptr
// CHECK: %[[S1:.*]] = llvm.getelementptr %[[ARR]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: memref.extract_strided_metadata %[[OUT]]
// CHECK: llvm.store %{{.*}}, %[[S1]] : !llvm.ptr, !llvm.ptr
// CHECK: %[[SLOT:.*]] = arith.constant 1 : i32
// CHECK: %[[RC:.*]] = func.call @__tessel_call_import(%[[SLOT]], %[[ARR]]) : (i32, !llvm.ptr) -> i32
// CHECK: %[[FAILED:.*]] = arith.cmpi ne, %[[RC]], %{{.*}} : i32
// CHECK: scf.if %[[FAILED]] {
// CHECK:   %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:   linalg.fill ins(%[[ZERO]] : f32) outs(%[[OUT]] : memref<6x4xf32>)
// CHECK: }
// CHECK-NOT: tessel.call_import
module attributes {tessel.imports = [{name = "other", inputs = [], outputs = [{}]}, {name = "decoder", inputs = [{}], outputs = [{}]}]} {
  func.func @main(%ids: memref<6xi32>, %out: memref<6x4xf32>) {
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %c1 = arith.constant 1 : index
    scf.for %i = %c0 to %c2 step %c1 {
      tessel.call_import @decoder(%ids : memref<6xi32>) outs(%out : memref<6x4xf32>)
    }
    return
  }
}

// -----

// A strided input is passed through a dense copy; a strided output is
// computed in a dense buffer and copied back after the call (and the
// failure fill). A contiguous row slice is passed as is, at its offset.
// CHECK-LABEL: func.func @strided(
// CHECK-SAME: %[[X:.*]]: memref<4x8xf32>, %[[O:.*]]: memref<4x8xf32>)
// CHECK: %[[XS:.*]] = memref.subview %[[X]][0, 0] [4, 2] [1, 1]
// CHECK: %[[OS:.*]] = memref.subview %[[O]][0, 0] [4, 2] [1, 1]
// CHECK: %[[ROW:.*]] = memref.subview %[[X]][1, 0] [1, 8] [1, 1]
// CHECK: %[[XD:.*]] = memref.alloc() : memref<4x2xf32>
// CHECK: memref.copy %[[XS]], %[[XD]]
// CHECK: %[[OD:.*]] = memref.alloc() : memref<4x2xf32>
// CHECK-NOT: memref.copy
// CHECK: memref.extract_strided_metadata %[[XD]]
// CHECK: memref.extract_strided_metadata %[[ROW]]
// CHECK: memref.extract_strided_metadata %[[OD]]
// CHECK: call @__tessel_call_import
// CHECK: scf.if
// CHECK:   linalg.fill ins(%{{.*}} : f32) outs(%[[OD]] : memref<4x2xf32>)
// CHECK: memref.copy %[[OD]], %[[OS]]
// CHECK: memref.dealloc %[[XD]]
// CHECK: memref.dealloc %[[OD]]
module attributes {tessel.imports = [{name = "f", inputs = [{}, {}], outputs = [{}]}]} {
  func.func @strided(%x: memref<4x8xf32>, %o: memref<4x8xf32>) {
    %xs = memref.subview %x[0, 0] [4, 2] [1, 1] : memref<4x8xf32> to memref<4x2xf32, strided<[8, 1]>>
    %os = memref.subview %o[0, 0] [4, 2] [1, 1] : memref<4x8xf32> to memref<4x2xf32, strided<[8, 1]>>
    %row = memref.subview %x[1, 0] [1, 8] [1, 1] : memref<4x8xf32> to memref<1x8xf32, strided<[8, 1], offset: 8>>
    tessel.call_import @f(%xs, %row : memref<4x2xf32, strided<[8, 1]>>, memref<1x8xf32, strided<[8, 1], offset: 8>>) outs(%os : memref<4x2xf32, strided<[8, 1]>>)
    return
  }
}

// -----

// i1 and integer outputs are zero-filled with their own zero.
// CHECK-LABEL: func.func @zeros
// CHECK: scf.if
// CHECK: %[[F:.*]] = arith.constant false
// CHECK: linalg.fill ins(%[[F]] : i1) outs(%{{.*}} : memref<3xi1>)
// CHECK: %[[Z:.*]] = arith.constant 0 : i64
// CHECK: linalg.fill ins(%[[Z]] : i64) outs(%{{.*}} : memref<2xi64>)
module attributes {tessel.imports = [{name = "f", inputs = [], outputs = [{}, {}]}]} {
  func.func @zeros(%a: memref<3xi1>, %b: memref<2xi64>) {
    tessel.call_import @f() outs(%a, %b : memref<3xi1>, memref<2xi64>)
    return
  }
}

// -----

module attributes {tessel.imports = [{name = "f", inputs = [], outputs = []}]} {
  func.func @tensors(%x: tensor<2xf32>) -> tensor<2xf32> {
    // expected-error @+1 {{must be bufferized before tessel-imports-to-calls}}
    %y = tessel.call_import @f() outs(%x : tensor<2xf32>) -> tensor<2xf32>
    return %y : tensor<2xf32>
  }
}

// -----

func.func private @g() -> tensor<2xf32> attributes {tessel.import}
func.func @unrecorded(%o: memref<2xf32>) {
  // expected-error @+1 {{calls @g, which has no record in 'tessel.imports' (run tessel-record-signature first)}}
  tessel.call_import @g() outs(%o : memref<2xf32>)
  return
}

// -----

// Named dimensions (ABI v3): the size of each name, from its first input,
// goes into an int64 array behind the buffers; a second input of the same
// name must agree, else the call passes no buffers (the helper then fails
// with TESSEL_ENTRY_SHAPE_MISMATCH). Row blocks of a dense buffer
// (a dynamic leading dimension, any offset) are passed without a copy.
// CHECK-LABEL: func.func @dynamic(
// CHECK-SAME: %[[X:.*]]: memref<?x4xf32, strided<[4, 1], offset: ?>>, %[[Y:.*]]: memref<?x4xf32>, %[[O:.*]]: memref<?x4xf32>)
// CHECK-DAG: %[[THREE:.*]] = llvm.mlir.constant(4 : i64) : i64
// CHECK-DAG: %[[ARR:.*]] = llvm.alloca %[[THREE]] x !llvm.ptr
// CHECK-DAG: %[[ONE:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK-DAG: %[[DIMS:.*]] = llvm.alloca %[[ONE]] x i64
// CHECK-NOT: memref.alloc
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[TX:.*]] = memref.dim %[[X]], %[[C0]]
// CHECK: %[[TY:.*]] = memref.dim %[[Y]], %{{.*}}
// CHECK: %[[NE:.*]] = arith.cmpi ne, %[[TX]], %[[TY]] : index
// CHECK: %[[BAD:.*]] = arith.ori %{{.*}}, %[[NE]]
// CHECK: %[[TO:.*]] = memref.dim %[[O]], %{{.*}}
// CHECK: arith.cmpi ne, %[[TX]], %[[TO]] : index
// CHECK: %[[T64:.*]] = arith.index_cast %[[TX]] : index to i64
// CHECK: %[[D0:.*]] = llvm.getelementptr %[[DIMS]][0] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK: llvm.store %[[T64]], %[[D0]] : i64, !llvm.ptr
// CHECK: %[[S3:.*]] = llvm.getelementptr %[[ARR]][3] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: llvm.store %[[DIMS]], %[[S3]] : !llvm.ptr, !llvm.ptr
// CHECK: %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK: %[[ARG:.*]] = arith.select %{{.*}}, %[[NULL]], %[[ARR]] : !llvm.ptr
// CHECK: call @__tessel_call_import(%{{.*}}, %[[ARG]])
module attributes {tessel.imports = [{name = "f", inputs = [{dim_names = ["T", ""]}, {dim_names = ["T", ""]}], outputs = [{dim_names = ["T", ""]}]}]} {
  func.func @dynamic(%x: memref<?x4xf32, strided<[4, 1], offset: ?>>, %y: memref<?x4xf32>, %o: memref<?x4xf32>) {
    tessel.call_import @f(%x, %y : memref<?x4xf32, strided<[4, 1], offset: ?>>, memref<?x4xf32>) outs(%o : memref<?x4xf32>)
    return
  }
}

// -----

module attributes {tessel.imports = [{name = "f", inputs = [{}], outputs = [{}]}]} {
  func.func @count(%x: memref<4xf32>, %o: memref<4xf32>) {
    // expected-error @+1 {{has 2 inputs and 1 outputs, but the record of @f has 1 and 1}}
    tessel.call_import @f(%x, %x : memref<4xf32>, memref<4xf32>) outs(%o : memref<4xf32>)
    return
  }
}
