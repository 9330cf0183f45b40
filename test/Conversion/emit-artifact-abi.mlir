// RUN: tessel-opt %s -split-input-file -tessel-emit-artifact-abi=target-triple=x86_64-unknown-linux-gnu -verify-diagnostics | FileCheck %s
// RUN: tessel-opt %s -split-input-file -tessel-emit-artifact-abi="target-triple=x86_64-unknown-linux-gnu cpu-features=avx2,avx512f,fma" -verify-diagnostics | FileCheck %s --check-prefix=FEATURES

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
// The CPU features the code needs make a version-4 manifest.
// FEATURES: llvm.mlir.global external constant @tessel_artifact_manifest("tessel-artifact 4\0Atarget x86_64-unknown-linux-gnu\0Arequires avx2 avx512f fma\0Afunction main tessel_entry_main\0A
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
  // expected-error @+1 {{lowered function still returns values; results must have become out-params (tessel-results-to-out-params)}}
  llvm.func @main(%a0: !llvm.ptr, %a1: !llvm.ptr, %o: i64) -> i64 {
    llvm.return %o : i64
  }
}

// -----

// Imports: the manifest (version 2) has one record per import, in slot
// order, the vocabularies and each entry's uses; the artifact exports a
// zeroed table of entry pointers. The helper calls a slot with the running
// entry's context (a thread-local) and keeps the first failure; an entry
// first checks that its imports are linked, then saves, sets and restores
// the context and status around the call and returns the status.
// CHECK-LABEL: llvm.mlir.global internal thread_local @__tessel_import_status() {{.*}} : i32
// CHECK-LABEL: llvm.mlir.global internal thread_local @__tessel_invoke_context() {{.*}} : !llvm.ptr
// CHECK-LABEL: llvm.mlir.global external @tessel_artifact_imports() {{.*}} : !llvm.array<2 x ptr> {
// CHECK: llvm.mlir.zero : !llvm.array<2 x ptr>
// CHECK-LABEL: llvm.func internal @__tessel_call_import(%{{.*}}: i32, %{{.*}}: !llvm.ptr) -> i32 {
// No buffers: the call site found its named dimensions inconsistent.
// CHECK: %[[NOBUF:.*]] = llvm.icmp "eq" %arg1, %{{.*}} : !llvm.ptr
// CHECK: %[[MISMATCH:.*]] = llvm.mlir.constant(-3 : i32) : i32
// CHECK: llvm.cond_br %[[NOBUF]], ^[[RECORD:.*]](%[[MISMATCH]] : i32), ^[[LOOKUP:.*]]
// CHECK: ^[[LOOKUP]]:
// CHECK: %[[TABLE:.*]] = llvm.mlir.addressof @tessel_artifact_imports
// CHECK: %[[AT:.*]] = llvm.getelementptr %[[TABLE]][0, %arg0] : (!llvm.ptr, i32) -> !llvm.ptr, !llvm.array<2 x ptr>
// CHECK: %[[FN:.*]] = llvm.load %[[AT]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[NULL:.*]] = llvm.icmp "eq" %[[FN]], %{{.*}} : !llvm.ptr
// CHECK: llvm.cond_br %[[NULL]], ^[[UNRESOLVED:.*]], ^[[CALL:.*]]
// CHECK: ^[[UNRESOLVED]]:
// CHECK: llvm.mlir.constant(-2 : i32)
// CHECK: ^[[CALL]]:
// CHECK: %[[CTX:.*]] = llvm.load %{{.*}} : !llvm.ptr -> !llvm.ptr
// CHECK: llvm.call %[[FN]](%arg1, %[[CTX]]) : !llvm.ptr, (!llvm.ptr, !llvm.ptr) -> i32
// CHECK: llvm.store %{{.*}}, %{{.*}} : i32, !llvm.ptr
// CHECK: llvm.func internal @__tessel_fn_main(
// CHECK: llvm.func @tessel_entry_main(%{{.*}}: !llvm.ptr, %[[CONTEXT:.*]]: !llvm.ptr) -> i32 {
// CHECK: %[[T:.*]] = llvm.mlir.addressof @tessel_artifact_imports
// CHECK: %[[SLOT:.*]] = llvm.getelementptr %[[T]][0, 1] : (!llvm.ptr) -> !llvm.ptr, !llvm.array<2 x ptr>
// CHECK: %[[LINKED:.*]] = llvm.load %[[SLOT]]
// CHECK: %[[ISNULL:.*]] = llvm.icmp "eq" %[[LINKED]]
// CHECK: llvm.cond_br %[[ISNULL]], ^[[FAIL:.*]], ^[[BODY:.*]]
// CHECK: ^[[FAIL]]:
// CHECK: %[[UNRES:.*]] = llvm.mlir.constant(-2 : i32) : i32
// CHECK: llvm.return %[[UNRES]] : i32
// CHECK: ^[[BODY]]:
// CHECK: %[[CADDR:.*]] = llvm.mlir.addressof @__tessel_invoke_context
// CHECK: %[[SADDR:.*]] = llvm.mlir.addressof @__tessel_import_status
// CHECK: %[[OLDC:.*]] = llvm.load %[[CADDR]]
// CHECK: %[[OLDS:.*]] = llvm.load %[[SADDR]]
// CHECK: llvm.store %[[CONTEXT]], %[[CADDR]]
// CHECK: llvm.call @__tessel_fn_main(
// CHECK: %[[STATUS:.*]] = llvm.load %[[SADDR]] : !llvm.ptr -> i32
// CHECK: llvm.store %[[OLDC]], %[[CADDR]]
// CHECK: llvm.store %[[OLDS]], %[[SADDR]]
// CHECK: llvm.return %[[STATUS]] : i32
// CHECK-LABEL: llvm.func @tessel_entry_plain(
// CHECK-NOT: llvm.cond_br
// CHECK: llvm.call @__tessel_fn_plain(
// CHECK: llvm.mlir.global external constant @tessel_artifact_manifest("tessel-artifact 2\0Atarget x86_64-unknown-linux-gnu\0Aimport other 0\0Aoutput o f32 []\0Aend\0Aimport decoder 1\0Ainput ids i32 [6] vocab=12\0Aoutput emb f32 [6,4]\0Aend\0Afunction main tessel_entry_main\0Ainput ids i32 [6] vocab=12\0Aoutput y f32 []\0Auses decoder\0Aend\0Afunction plain tessel_entry_plain\0Aoutput o f32 []\0Aend\0A\00")
// CHECK-NOT: tessel.imports
module attributes {tessel.functions = [{entry = "tessel_entry_main", imports = ["decoder"], inputs = [{dtype = "i32", name = "ids", shape = array<i64: 6>, vocab = 12 : i64}], name = "main", outputs = [{dtype = "f32", name = "y", shape = array<i64>}], symbol = "__tessel_fn_main"}, {entry = "tessel_entry_plain", inputs = [], name = "plain", outputs = [{dtype = "f32", name = "o", shape = array<i64>}], symbol = "__tessel_fn_plain"}], tessel.imports = [{name = "other", inputs = [], outputs = [{dtype = "f32", name = "o", shape = array<i64>}]}, {inputs = [{dtype = "i32", name = "ids", shape = array<i64: 6>, vocab = 12 : i64}], name = "decoder", outputs = [{dtype = "f32", name = "emb", shape = array<i64: 6, 4>}]}]} {
  llvm.func @__tessel_call_import(i32, !llvm.ptr) -> i32
  llvm.func @__tessel_fn_main(%a0: !llvm.ptr, %a1: !llvm.ptr, %o: i64, %s0: i64, %t0: i64, %b0: !llvm.ptr, %b1: !llvm.ptr, %bo: i64) {
    llvm.return
  }
  llvm.func @__tessel_fn_plain(%b0: !llvm.ptr, %b1: !llvm.ptr, %bo: i64) {
    llvm.return
  }
}

// -----

// A vocabulary alone needs version 2 too.
// CHECK: @tessel_artifact_manifest("tessel-artifact 2\0Atarget x86_64-unknown-linux-gnu\0Afunction main tessel_entry_main\0Ainput s i32 [4] vocab=3\0Aoutput s f32 []\0Aend\0A\00")
// CHECK-NOT: tessel_artifact_imports
module attributes {tessel.functions = [{entry = "tessel_entry_main", inputs = [{dtype = "i32", name = "s", shape = array<i64: 4>, vocab = 3 : i64}], name = "main", outputs = [{dtype = "f32", name = "s", shape = array<i64>}], symbol = "main"}]} {
  llvm.func @main(%a0: !llvm.ptr, %a1: !llvm.ptr, %o: i64, %s0: i64, %t0: i64, %b0: !llvm.ptr, %b1: !llvm.ptr, %bo: i64) {
    llvm.return
  }
}

// -----

// expected-error @+1 {{function 'main' uses import 'decoder', which 'tessel.imports' does not record}}
module attributes {tessel.functions = [{entry = "tessel_entry_main", imports = ["decoder"], inputs = [], name = "main", outputs = [{dtype = "f32", name = "s", shape = array<i64>}], symbol = "main"}]} {
}

// -----

// expected-error @+1 {{malformed 'tessel.imports' record (missing string 'name')}}
module attributes {tessel.functions = [], tessel.imports = [{inputs = [], outputs = []}]} {
}

// -----

// expected-error @+1 {{import 'f' is recorded twice}}
module attributes {tessel.functions = [], tessel.imports = [{name = "f", inputs = [], outputs = []}, {name = "f", inputs = [], outputs = []}]} {
}

// -----

module attributes {tessel.functions = []} {
  // expected-error @+1 {{'__tessel_call_import' is called, but the module records no imports}}
  llvm.func @__tessel_call_import(i32, !llvm.ptr) -> i32
}

// -----

// expected-error @+1 {{the symbol 'tessel_artifact_imports' is reserved for the artifact ABI}}
module attributes {tessel.functions = []} {
  llvm.mlir.global external @tessel_artifact_imports() : i32
}

// -----

// Named dimensions (ABI v3): the manifest spells them by name; the entry
// reads their sizes from the int64 array behind the buffers (slot 2 here)
// and builds sizes and row-major strides from them. A declared
// __tessel_set_status (a run-time shape guard) gets its body and the
// status thread-local, which the entry returns.
// CHECK-LABEL: llvm.mlir.global internal thread_local @__tessel_import_status()
// CHECK-LABEL: llvm.func internal @__tessel_set_status(%{{.*}}: i32) {
// CHECK: llvm.icmp "eq"
// CHECK: llvm.store %arg0, %{{.*}} : i32, !llvm.ptr
// CHECK: llvm.func @tessel_entry_expert(%[[BUF:.*]]: !llvm.ptr, %{{.*}}: !llvm.ptr) -> i32
// CHECK: %[[SLOT:.*]] = llvm.getelementptr %[[BUF]][2] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: %[[DIMS:.*]] = llvm.load %[[SLOT]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[AT:.*]] = llvm.getelementptr %[[DIMS]][0] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK: %[[T:.*]] = llvm.load %[[AT]] : !llvm.ptr -> i64
// CHECK: %[[X:.*]] = llvm.load %{{.*}} : !llvm.ptr -> !llvm.ptr
// CHECK: %[[FOUR:.*]] = llvm.mlir.constant(4 : i64) : i64
// CHECK: %[[ONE:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK: %[[STRIDE0:.*]] = llvm.mul %[[ONE]], %[[FOUR]] : i64
// CHECK: llvm.call @__tessel_fn_expert(%[[X]], %[[X]], %{{.*}}, %[[T]], %[[FOUR]], %[[STRIDE0]], %[[ONE]],
// CHECK: %[[RC:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i32
// CHECK: llvm.return %[[RC]] : i32
// CHECK: @tessel_artifact_manifest("tessel-artifact 3\0Atarget x86_64-unknown-linux-gnu\0Afunction expert tessel_entry_expert\0Ainput x f32 [T,4]\0Aoutput y f32 [T,4]\0Aend\0A\00")
module attributes {tessel.functions = [{entry = "tessel_entry_expert", inputs = [{dim_names = ["T", ""], dtype = "f32", name = "x", shape = array<i64: -9223372036854775808, 4>}], name = "expert", outputs = [{dim_names = ["T", ""], dtype = "f32", name = "y", shape = array<i64: -9223372036854775808, 4>}], symbol = "__tessel_fn_expert"}]} {
  llvm.func @__tessel_set_status(i32)
  llvm.func @__tessel_fn_expert(%a0: !llvm.ptr, %a1: !llvm.ptr, %o: i64, %s0: i64, %s1: i64, %t0: i64, %t1: i64, %b0: !llvm.ptr, %b1: !llvm.ptr, %bo: i64, %bs0: i64, %bs1: i64, %bt0: i64, %bt1: i64) {
    llvm.return
  }
}

// -----

// expected-error @+1 {{malformed 'tessel.functions' record (an entry of 'inputs' has a dynamic dimension without a name, or a name on a static one)}}
module attributes {tessel.functions = [{entry = "tessel_entry_f", inputs = [{dtype = "f32", name = "x", shape = array<i64: -9223372036854775808>}], name = "f", outputs = [{dtype = "f32", name = "y", shape = array<i64: 4>}], symbol = "f"}]} {
}

// -----

// An output with a run-time dimension (ABI v6): the lowered function returns
// its buffers; the entry passes only the inputs, then writes the run-time
// output's sizes and a fresh aligned_alloc'ed copy into the caller's
// tessel_run_time_output {data, sizes}, copies the static output into the
// caller's buffer, and frees each returned buffer with the module's free.
// CHECK: llvm.func @aligned_alloc(i64, i64) -> !llvm.ptr
// CHECK: llvm.func @free(!llvm.ptr)
// CHECK-LABEL: llvm.func @tessel_entry_main(
// CHECK: %[[RES:.*]] = llvm.call @__tessel_fn_main(%{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}) : (!llvm.ptr, !llvm.ptr, i64, i64, i64) -> !llvm.struct
// CHECK: %[[D0:.*]] = llvm.extractvalue %[[RES]][0]
// CHECK: %[[A0:.*]] = llvm.extractvalue %[[D0]][0]
// CHECK: %[[N:.*]] = llvm.extractvalue %[[D0]][3, 0]
// CHECK: %[[SLOT:.*]] = llvm.getelementptr %{{.*}}[1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: %[[OUT:.*]] = llvm.load %[[SLOT]]
// CHECK: %[[SIZESAT:.*]] = llvm.getelementptr %[[OUT]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: %[[SIZES:.*]] = llvm.load %[[SIZESAT]]
// CHECK: llvm.store %[[N]], %{{.*}} : i64, !llvm.ptr
// CHECK: %[[COPY:.*]] = llvm.call @aligned_alloc(
// CHECK: llvm.store %[[COPY]], %[[OUT]] : !llvm.ptr, !llvm.ptr
// CHECK: "llvm.intr.memcpy"(%[[COPY]],
// CHECK: llvm.call @free(%[[A0]])
// CHECK: %[[D1:.*]] = llvm.extractvalue %[[RES]][1]
// CHECK: "llvm.intr.memcpy"
// CHECK: llvm.call @free(
// CHECK: llvm.mlir.global external constant @tessel_artifact_manifest("tessel-artifact 6\0Atarget x86_64-unknown-linux-gnu\0Afunction main tessel_entry_main\0Ainput x f32 [4]\0Aoutput y f32 [?]\0Aoutput z i16 [2]\0Aend\0A\00")
!desc = !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
module attributes {tessel.functions = [{entry = "tessel_entry_main", inputs = [{dtype = "f32", name = "x", shape = array<i64: 4>}], name = "main", outputs = [{dim_names = ["?"], dtype = "f32", name = "y", shape = array<i64: -9223372036854775808>}, {dtype = "i16", name = "z", shape = array<i64: 2>}], symbol = "__tessel_fn_main"}]} {
  llvm.func @__tessel_fn_main(%a0: !llvm.ptr, %a1: !llvm.ptr, %o: i64, %s0: i64, %t0: i64) -> !llvm.struct<(!desc, !desc)> {
    %u = llvm.mlir.undef : !llvm.struct<(!desc, !desc)>
    llvm.return %u : !llvm.struct<(!desc, !desc)>
  }
}

// -----

// A run-time dimension, but the function writes out-params.
module attributes {tessel.functions = [{entry = "tessel_entry_main", inputs = [], name = "main", outputs = [{dim_names = ["?"], dtype = "f32", name = "y", shape = array<i64: -9223372036854775808>}], symbol = "__tessel_fn_main"}]} {
  // expected-error @+1 {{lowered function returns nothing, but its outputs' sizes follow from the data (tessel-results-to-out-params keeps them as results)}}
  llvm.func @__tessel_fn_main(%a0: !llvm.ptr, %a1: !llvm.ptr, %o: i64, %s0: i64, %t0: i64) {
    llvm.return
  }
}
