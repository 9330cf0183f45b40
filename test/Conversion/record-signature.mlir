// RUN: tessel-opt %s -split-input-file -tessel-record-signature -verify-diagnostics | FileCheck %s

// Names come from tessel.name, else input<i>/output<i>; private functions
// are not entry points. Every function gets a reserved internal symbol (so
// no model name clashes with malloc, libm or the ABI's symbols), and entry
// arguments become read-only for bufferization (the ABI's inputs are).
// CHECK: module attributes {tessel.functions = [{entry = "tessel_entry_main", inputs = [{dtype = "f32", name = "x", shape = array<i64: 2, 3>}, {dtype = "i64", name = "input1", shape = array<i64: 4>}], name = "main", outputs = [{dtype = "f32", name = "output0", shape = array<i64: 2, 3>}, {dtype = "i1", name = "mask", shape = array<i64>}], symbol = "__tessel_fn_main"}]}
// CHECK: func.func @__tessel_fn_main(%{{.*}}: tensor<2x3xf32> {bufferization.writable = false, tessel.name = "x"}, %{{.*}}: tensor<4xi64> {bufferization.writable = false})
// CHECK: func.func private @__tessel_fn_helper(
module {
  func.func @main(%x: tensor<2x3xf32> {tessel.name = "x"}, %i: tensor<4xi64>) -> (tensor<2x3xf32>, tensor<i1> {tessel.name = "mask"}) {
    %c = arith.constant dense<true> : tensor<i1>
    return %x, %c : tensor<2x3xf32>, tensor<i1>
  }
  func.func private @helper(%x: tensor<?xf32>) -> tensor<?xf32> {
    return %x : tensor<?xf32>
  }
}

// -----

// Whitespace and control characters in names would break the line-oriented
// manifest; entry symbols are C identifiers.
// CHECK: entry = "tessel_entry_my_model_v1", inputs = [{dtype = "f32", name = "my_input", shape = array<i64: 2>}], name = "my_model.v1", outputs = [{dtype = "f32", name = "a_b"
func.func @"my model.v1"(%x: tensor<2xf32> {tessel.name = "my input"}) -> (tensor<2xf32> {tessel.name = "a\00b"}) {
  return %x : tensor<2xf32>
}

// -----

// User names that lowering or the ABI also use are harmless: they are
// renamed, and calls follow.
// CHECK: symbol = "__tessel_fn_malloc"
// CHECK: func.func @__tessel_fn_malloc(
// CHECK: call @__tessel_fn_tessel_entry_x(
// CHECK: func.func private @__tessel_fn_tessel_entry_x(
func.func @malloc(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = call @tessel_entry_x(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
func.func private @tessel_entry_x(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}

// -----

func.func @"a-b"(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}
// expected-error @+1 {{entry point 'a.b' maps to the symbol 'tessel_entry_a_b' of another entry point; rename one}}
func.func @"a.b"(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}

// -----

// expected-error @+1 {{entry point input #0 has type 'tensor<?x3xf32>'; name its dynamic dimensions with 'tessel.dim_names' (the artifact ABI binds them from the inputs) or pin them}}
func.func @dynamic(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  return %x : tensor<?x3xf32>
}

// -----

// Named dynamic dimensions (ABI v3) are recorded with their names.
// CHECK: tessel.functions = [{entry = "tessel_entry_named", inputs = [{dim_names = ["B", "", "T"], dtype = "f32", name = "input0", shape = array<i64: -9223372036854775808, 3, -9223372036854775808>}], name = "named", outputs = [{dim_names = ["T", "B"], dtype = "f32", name = "output0", shape = array<i64: -9223372036854775808, -9223372036854775808>}]
func.func @named(%x: tensor<?x3x?xf32> {tessel.dim_names = ["B", "", "T"]}) -> (tensor<?x?xf32> {tessel.dim_names = ["T", "B"]}) {
  %c = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %b = tensor.dim %x, %c : tensor<?x3x?xf32>
  %t = tensor.dim %x, %c2 : tensor<?x3x?xf32>
  %e = tensor.empty(%t, %b) : tensor<?x?xf32>
  return %e : tensor<?x?xf32>
}

// -----

// expected-error @+1 {{output #0 has the dynamic dimension 'N', which no input has: the caller could not know the output's size}}
func.func @unbound(%x: tensor<?xf32> {tessel.dim_names = ["T"]}) -> (tensor<?xf32> {tessel.dim_names = ["N"]}) {
  return %x : tensor<?xf32>
}

// -----

// expected-error @+1 {{entry point input #0 has type 'tensor<?x3xf32>'; 'tessel.dim_names' must name each dynamic dimension with an identifier ([A-Za-z_][A-Za-z0-9_]*) and each static one "", got ["T", "K"]}}
func.func @named_static(%x: tensor<?x3xf32> {tessel.dim_names = ["T", "K"]}) -> tensor<3xf32> {
  %c = arith.constant dense<1.0> : tensor<3xf32>
  return %c : tensor<3xf32>
}

// -----

// expected-error @+1 {{entry point input #0 has type 'tensor<?xf32>'; 'tessel.dim_names' must be an array of one string per dimension}}
func.func @short(%x: tensor<?xf32> {tessel.dim_names = []}) -> tensor<3xf32> {
  %c = arith.constant dense<1.0> : tensor<3xf32>
  return %c : tensor<3xf32>
}

// -----

// expected-error @+1 {{input #0 has type 'f32'; entry points take and return ranked tensors}}
func.func @scalar(%x: f32) -> f32 {
  return %x : f32
}

// -----

// expected-error @+1 {{input #0 has element type 'complex<f32>', which the artifact ABI cannot carry}}
func.func @complex(%x: tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>> {
  return %x : tensor<2xcomplex<f32>>
}

// -----

// expected-error @+1 {{input name 'a' is empty or used twice}}
func.func @dup(%x: tensor<2xf32> {tessel.name = "a"}, %y: tensor<2xf32> {tessel.name = "a"}) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}

// -----

// expected-error @+1 {{entry point 'nothing' returns nothing}}
func.func @nothing(%x: tensor<2xf32>) {
  return
}

// -----

// expected-error @+1 {{the model has no public function with a body to export as an entry point}}
module {
  func.func private @only_private(%x: tensor<2xf32>) -> tensor<2xf32> {
    return %x : tensor<2xf32>
  }
}

// -----

// Imports: each declaration marked tessel.import becomes a record of
// tessel.imports (described like an entry, symbol vocabularies included)
// and is erased; each entry lists the imports it calls, also through the
// functions it calls.
// CHECK: module attributes {tessel.functions = [{entry = "tessel_entry_main", imports = ["decoder", "other"], inputs = [{dtype = "i32", name = "ids", shape = array<i64: 6>, vocab = 12 : i64}], name = "main", outputs = [{dtype = "f32", name = "output0", shape = array<i64: 6, 4>}, {dtype = "f32", name = "output1", shape = array<i64: 2>}], symbol = "__tessel_fn_main"}, {entry = "tessel_entry_plain", inputs = [{dtype = "f32", name = "input0", shape = array<i64: 2>}], name = "plain", outputs = [{dtype = "f32", name = "output0", shape = array<i64: 2>}], symbol = "__tessel_fn_plain"}], tessel.imports = [{inputs = [{dtype = "i32", name = "ids", shape = array<i64: 6>, vocab = 12 : i64}], name = "decoder", outputs = [{dtype = "f32", name = "emb", shape = array<i64: 6, 4>}]}, {inputs = [], name = "other", outputs = [{dtype = "f32", name = "output0", shape = array<i64: 2>}]}]}
// CHECK-NOT: tessel.import}
// CHECK: tessel.call_import @decoder
// CHECK: tessel.call_import @other
module {
  func.func private @decoder(tensor<6xi32> {tessel.name = "ids", sym.vocab = 12 : i64}) -> (tensor<6x4xf32> {tessel.name = "emb"}) attributes {tessel.import}
  func.func private @other() -> tensor<2xf32> attributes {tessel.import}
  func.func @main(%s: tensor<6xi32> {tessel.name = "ids", sym.vocab = 12 : i64}) -> (tensor<6x4xf32>, tensor<2xf32>) {
    %i = tensor.empty() : tensor<6x4xf32>
    %y = tessel.call_import @decoder(%s : tensor<6xi32>) outs(%i : tensor<6x4xf32>) -> tensor<6x4xf32>
    %o = call @helper() : () -> tensor<2xf32>
    return %y, %o : tensor<6x4xf32>, tensor<2xf32>
  }
  func.func private @helper() -> tensor<2xf32> {
    %i = tensor.empty() : tensor<2xf32>
    %o = tessel.call_import @other() outs(%i : tensor<2xf32>) -> tensor<2xf32>
    return %o : tensor<2xf32>
  }
  func.func @plain(%x: tensor<2xf32>) -> tensor<2xf32> {
    return %x : tensor<2xf32>
  }
}

// -----

// expected-error @+1 {{import input #0 has type 'tensor<?xf32>'; name its dynamic dimensions with 'tessel.dim_names'}}
func.func private @dyn(tensor<?xf32>) -> tensor<2xf32> attributes {tessel.import}
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}

// -----

// expected-error @+1 {{import 'none' returns nothing}}
func.func private @none(tensor<2xf32>) attributes {tessel.import}
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}

// -----

// expected-error @+1 {{import 'a b' has whitespace or control characters in its name; rename the component}}
func.func private @"a b"() -> tensor<2xf32> attributes {tessel.import}
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}

// -----

// Entry names are sanitized ("a b" is exported as "a_b"); an import may not
// take the name of an entry.
func.func @"a b"(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}
// expected-error @+1 {{import 'a_b' has the name of an entry point of this artifact}}
func.func private @a_b() -> tensor<2xf32> attributes {tessel.import}

// -----

// expected-error @+1 {{input #0 has 'sym.vocab' but element type 'f32'; symbol ids are i32}}
func.func @main(%x: tensor<2xf32> {sym.vocab = 4 : i64}) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}

// -----

// A run-time dimension ("?", ABI v6) on an entry's output is recorded as is.
// CHECK: outputs = [{dim_names = ["?", ""], dtype = "f32", name = "output0", shape = array<i64: -9223372036854775808, 4>}]
func.func @run_time(%x: tensor<8xf32>) -> (tensor<?x4xf32> {tessel.dim_names = ["?", ""]}) {
  %c = arith.constant 2 : index
  %e = tensor.empty(%c) : tensor<?x4xf32>
  return %e : tensor<?x4xf32>
}

// -----

// An input cannot have a run-time size: inputs bind their names.
// expected-error @+1 {{entry point input #0 has type 'tensor<?xf32>'; dimension sizes that follow from the data ('?') are only for an entry point's outputs}}
func.func @run_time_input(%x: tensor<?xf32> {tessel.dim_names = ["?"]}) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  return %e : tensor<4xf32>
}

// -----

// Nor can an import's output: its caller allocates it before the call.
// expected-error @+1 {{import output #0 has type 'tensor<?xf32>'; dimension sizes that follow from the data ('?') are only for an entry point's outputs}}
func.func private @dyn_out(tensor<2xf32>) -> (tensor<?xf32> {tessel.dim_names = ["?"]}) attributes {tessel.import}
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}
