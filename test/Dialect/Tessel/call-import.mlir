// RUN: tessel-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// Round trip: tensors (results = inits), memrefs (no results), no inputs.
// CHECK-LABEL: func @round_trip
// CHECK: %{{.*}} = tessel.call_import @decoder(%{{.*}} : tensor<6xi32>) outs(%{{.*}} : tensor<6x4xf32>) -> tensor<6x4xf32>
// CHECK: tessel.call_import @decoder(%{{.*}} : memref<6xi32>) outs(%{{.*}} : memref<6x4xf32>)
// CHECK: tessel.call_import @iota() outs(%{{.*}} : tensor<4xi64>) -> tensor<4xi64>
func.func private @decoder(tensor<6xi32>) -> tensor<6x4xf32> attributes {tessel.import}
func.func private @iota() -> tensor<4xi64> attributes {tessel.import}
func.func @round_trip(%s: tensor<6xi32>, %m: memref<6xi32>, %o: memref<6x4xf32>) -> (tensor<6x4xf32>, tensor<4xi64>) {
  %init = tensor.empty() : tensor<6x4xf32>
  %y = tessel.call_import @decoder(%s : tensor<6xi32>) outs(%init : tensor<6x4xf32>) -> tensor<6x4xf32>
  tessel.call_import @decoder(%m : memref<6xi32>) outs(%o : memref<6x4xf32>)
  %i = tensor.empty() : tensor<4xi64>
  %r = tessel.call_import @iota() outs(%i : tensor<4xi64>) -> tensor<4xi64>
  return %y, %r : tensor<6x4xf32>, tensor<4xi64>
}

// -----

// After tessel-record-signature the declaration is a record of the module.
// CHECK-LABEL: func @recorded
// CHECK: tessel.call_import @decoder
module attributes {tessel.imports = [{name = "decoder", inputs = [], outputs = []}]} {
  func.func @recorded(%m: memref<6xi32>, %o: memref<6x4xf32>) {
    tessel.call_import @decoder(%m : memref<6xi32>) outs(%o : memref<6x4xf32>)
    return
  }
}

// -----

func.func @undeclared(%s: tensor<6xi32>) -> tensor<6x4xf32> {
  %init = tensor.empty() : tensor<6x4xf32>
  // expected-error @+1 {{callee @nowhere is neither a declaration marked 'tessel.import' nor recorded in 'tessel.imports'}}
  %y = tessel.call_import @nowhere(%s : tensor<6xi32>) outs(%init : tensor<6x4xf32>) -> tensor<6x4xf32>
  return %y : tensor<6x4xf32>
}

// -----

func.func private @plain(tensor<6xi32>) -> tensor<6x4xf32>
func.func @not_an_import(%s: tensor<6xi32>) -> tensor<6x4xf32> {
  %init = tensor.empty() : tensor<6x4xf32>
  // expected-error @+1 {{callee @plain must be a func.func declaration marked 'tessel.import'}}
  %y = tessel.call_import @plain(%s : tensor<6xi32>) outs(%init : tensor<6x4xf32>) -> tensor<6x4xf32>
  return %y : tensor<6x4xf32>
}

// -----

func.func private @decoder(tensor<6xi32>) -> tensor<6x4xf32> attributes {tessel.import}
func.func @wrong_input(%s: tensor<5xi32>) -> tensor<6x4xf32> {
  %init = tensor.empty() : tensor<6x4xf32>
  // expected-error @+1 {{input #0 of type 'tensor<5xi32>' does not match the import's 'tensor<6xi32>'}}
  %y = tessel.call_import @decoder(%s : tensor<5xi32>) outs(%init : tensor<6x4xf32>) -> tensor<6x4xf32>
  return %y : tensor<6x4xf32>
}

// -----

func.func private @decoder(tensor<6xi32>) -> tensor<6x4xf32> attributes {tessel.import}
func.func @wrong_init(%s: tensor<6xi32>) -> tensor<6x4xf16> {
  %init = tensor.empty() : tensor<6x4xf16>
  // expected-error @+1 {{init #0 of type 'tensor<6x4xf16>' does not match the import's result 'tensor<6x4xf32>'}}
  %y = tessel.call_import @decoder(%s : tensor<6xi32>) outs(%init : tensor<6x4xf16>) -> tensor<6x4xf16>
  return %y : tensor<6x4xf16>
}

// -----

func.func private @decoder(tensor<6xi32>) -> tensor<6x4xf32> attributes {tessel.import}
func.func @arity(%s: tensor<6xi32>) -> tensor<6x4xf32> {
  %init = tensor.empty() : tensor<6x4xf32>
  // expected-error @+1 {{passes 2 inputs and 1 inits, but import @decoder takes 1 and returns 1}}
  %y = tessel.call_import @decoder(%s, %s : tensor<6xi32>, tensor<6xi32>) outs(%init : tensor<6x4xf32>) -> tensor<6x4xf32>
  return %y : tensor<6x4xf32>
}

// -----

// A dynamic (named) dimension crosses the ABI with its run-time size.
// CHECK-LABEL: func.func @dynamic
// CHECK: tessel.call_import @e(%{{.*}} : tensor<?x4xf32>) outs(%{{.*}} : tensor<?x4xf32>) -> tensor<?x4xf32>
func.func private @e(tensor<?x4xf32> {tessel.dim_names = ["T", ""]}) -> (tensor<?x4xf32> {tessel.dim_names = ["T", ""]}) attributes {tessel.import}
func.func @dynamic(%s: tensor<?x4xf32>, %init: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %y = tessel.call_import @e(%s : tensor<?x4xf32>) outs(%init : tensor<?x4xf32>) -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// -----

func.func @mixed(%s: tensor<4xi32>, %init: memref<4xf32>) {
  // expected-error @+1 {{operands must be all ranked tensors or all memrefs}}
  tessel.call_import @f(%s : tensor<4xi32>) outs(%init : memref<4xf32>)
  return
}

// -----

func.func @result_type(%s: tensor<4xi32>, %init: tensor<4xf32>) -> tensor<4xf16> {
  // expected-error @+1 {{result type 'tensor<4xf16>' differs from its init type 'tensor<4xf32>'}}
  %y = tessel.call_import @f(%s : tensor<4xi32>) outs(%init : tensor<4xf32>) -> tensor<4xf16>
  return %y : tensor<4xf16>
}

// -----

func.func @no_inits(%s: tensor<4xi32>) {
  // expected-error @+1 {{needs at least one init: an import has results}}
  "tessel.call_import"(%s) <{callee = @f, operandSegmentSizes = array<i32: 1, 0>}> : (tensor<4xi32>) -> ()
  return
}
