// RUN: tessel-opt %s -split-input-file -tessel-emit-artifact-abi=target-triple=x86_64-unknown-linux-gnu -verify-diagnostics | FileCheck %s

// The lowered function becomes internal; the entry loads one pointer per
// buffer (inputs, then outputs) and passes static row-major descriptors.
// Every other defined function becomes internal too; declarations (malloc)
// stay external.
// CHECK-LABEL: llvm.func internal @__tessel_fn_main(
// CHECK: llvm.func internal @__tessel_fn_helper(
// CHECK: llvm.func @malloc(i64) -> !llvm.ptr
// CHECK: llvm.func @tessel_entry_main(%[[BUF:.*]]: !llvm.ptr, %{{.*}}: !llvm.ptr) -> i32
// CHECK: %[[S0:.*]] = llvm.getelementptr %[[BUF]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: %[[P0:.*]] = llvm.load %[[S0]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[S1:.*]] = llvm.getelementptr %[[BUF]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: %[[P1:.*]] = llvm.load %[[S1]] : !llvm.ptr -> !llvm.ptr
// CHECK: llvm.call @__tessel_fn_main(%[[P0]], %[[P0]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[P1]], %[[P1]], %{{.*}})
// CHECK: llvm.return %{{.*}} : i32
// CHECK: llvm.mlir.global external constant @tessel_artifact_manifest("tessel-artifact 1\0Atarget x86_64-unknown-linux-gnu\0Afunction main tessel_entry_main\0Ainput x f32 [2,3]\0Aoutput s f32 []\0Aend\0A\00")
// CHECK-NOT: tessel.functions
module attributes {tessel.functions = [{entry = "tessel_entry_main", inputs = [{dtype = "f32", name = "x", shape = array<i64: 2, 3>}], name = "main", outputs = [{dtype = "f32", name = "s", shape = array<i64>}], symbol = "__tessel_fn_main"}]} {
  llvm.func @__tessel_fn_main(%a0: !llvm.ptr, %a1: !llvm.ptr, %o: i64, %s0: i64, %s1: i64, %t0: i64, %t1: i64, %b0: !llvm.ptr, %b1: !llvm.ptr, %bo: i64) {
    llvm.return
  }
  llvm.func @__tessel_fn_helper() {
    llvm.return
  }
  llvm.func @malloc(i64) -> !llvm.ptr
}

// -----

// expected-error @+1 {{missing 'tessel.functions': run tessel-record-signature on the model before lowering}}
module {
}

// -----

// expected-error @+1 {{function 'main' (symbol 'main') was not lowered to llvm.func}}
module attributes {tessel.functions = [{entry = "tessel_entry_main", inputs = [], name = "main", outputs = [{dtype = "f32", name = "s", shape = array<i64>}], symbol = "main"}]} {
}

// -----

// expected-error @+1 {{malformed 'tessel.functions' record (missing string 'symbol')}}
module attributes {tessel.functions = [{name = "f"}]} {
}

// -----

// expected-error @+1 {{malformed 'tessel.functions' record (an entry of 'outputs' lacks name/dtype/shape)}}
module attributes {tessel.functions = [{entry = "e", inputs = [], name = "f", outputs = [{dtype = "f32"}], symbol = "f"}]} {
}

// -----

// expected-error @+1 {{the entry symbol 'tessel_entry_main' of function 'main' is already defined}}
module attributes {tessel.functions = [{entry = "tessel_entry_main", inputs = [], name = "main", outputs = [{dtype = "f32", name = "s", shape = array<i64>}], symbol = "main"}]} {
  llvm.func @main(%a0: !llvm.ptr, %a1: !llvm.ptr, %o: i64) {
    llvm.return
  }
  llvm.func @tessel_entry_main() {
    llvm.return
  }
}

// -----

// expected-error @+1 {{the symbol 'tessel_artifact_manifest' is reserved for the artifact ABI}}
module attributes {tessel.functions = []} {
  llvm.func @tessel_artifact_manifest() {
    llvm.return
  }
}

// -----

module attributes {tessel.functions = [{entry = "tessel_entry_main", inputs = [], name = "main", outputs = [{dtype = "f32", name = "s", shape = array<i64: 4>}], symbol = "main"}]} {
  // expected-error @+1 {{lowered function takes 3 arguments, but its signature needs 5 for expanded memref descriptors}}
  llvm.func @main(%a0: !llvm.ptr, %a1: !llvm.ptr, %o: i64) {
    llvm.return
  }
}

// -----

module attributes {tessel.functions = [{entry = "tessel_entry_main", inputs = [], name = "main", outputs = [{dtype = "f32", name = "s", shape = array<i64>}], symbol = "main"}]} {
  // expected-error @+1 {{lowered function still returns values; results must have become out-params (buffer-results-to-out-params)}}
  llvm.func @main(%a0: !llvm.ptr, %a1: !llvm.ptr, %o: i64) -> i64 {
    llvm.return %o : i64
  }
}
