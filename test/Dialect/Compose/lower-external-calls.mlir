// RUN: tessel-opt %s -split-input-file --compose-lower-external-calls -verify-diagnostics | FileCheck %s

// A call of an external component becomes a destination-passing call of an
// import; the component becomes a declaration of the same name and
// interface (attributes kept); a component with a body is left alone, and
// a call inside it is lowered too (it is inlined later with its body).
// CHECK-LABEL: func.func private @decoder(tensor<6x!sym.symbol<12>> {tessel.name = "ids"}) -> tensor<6x4xf32> attributes {tessel.import}
// CHECK-NOT: compose.component @decoder
// CHECK: compose.component @head(%[[HX:.*]]: tensor<6x!sym.symbol<12>>)
// CHECK: %[[HI:.*]] = tensor.empty() : tensor<6x4xf32>
// CHECK: %[[HY:.*]] = tessel.call_import @decoder(%[[HX]] : tensor<6x!sym.symbol<12>>) outs(%[[HI]] : tensor<6x4xf32>) -> tensor<6x4xf32>
// CHECK: compose.return %[[HY]]
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[S:.*]]: tensor<6x!sym.symbol<12>>
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<6x4xf32>
// CHECK: %[[Y:.*]] = tessel.call_import @decoder(%[[S]] : tensor<6x!sym.symbol<12>>) outs(%[[INIT]] : tensor<6x4xf32>) -> tensor<6x4xf32>
// CHECK: %[[Z:.*]] = compose.call @head(%[[S]])
// CHECK: return %[[Y]], %[[Z]]
compose.component private @decoder(tensor<6x!sym.symbol<12>> {tessel.name = "ids"}) -> tensor<6x4xf32>
compose.component @head(%s: tensor<6x!sym.symbol<12>>) -> tensor<6x4xf32> {
  %y = compose.call @decoder(%s) : (tensor<6x!sym.symbol<12>>) -> tensor<6x4xf32>
  compose.return %y : tensor<6x4xf32>
}
func.func @main(%s: tensor<6x!sym.symbol<12>>) -> (tensor<6x4xf32>, tensor<6x4xf32>) {
  %y = compose.call @decoder(%s) : (tensor<6x!sym.symbol<12>>) -> tensor<6x4xf32>
  %z = compose.call @head(%s) : (tensor<6x!sym.symbol<12>>) -> tensor<6x4xf32>
  return %y, %z : tensor<6x4xf32>, tensor<6x4xf32>
}

// -----

// Through an instance (erased: the weights live in the providing artifact),
// with several results and a call site less static than the interface.
// CHECK-NOT: compose.instance
// CHECK-LABEL: func.func private @split(tensor<2x3xf32>) -> (tensor<2xf32>, tensor<3xf32>) attributes {tessel.import}
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:.*]]: tensor<?x3xf32>
// CHECK: %[[C:.*]] = tensor.cast %[[X]] : tensor<?x3xf32> to tensor<2x3xf32>
// CHECK: %[[I0:.*]] = tensor.empty() : tensor<2xf32>
// CHECK: %[[I1:.*]] = tensor.empty() : tensor<3xf32>
// CHECK: %[[R:.*]]:2 = tessel.call_import @split(%[[C]] : tensor<2x3xf32>) outs(%[[I0]], %[[I1]] : tensor<2xf32>, tensor<3xf32>) -> tensor<2xf32>, tensor<3xf32>
// CHECK: %[[R1:.*]] = tensor.cast %[[R]]#1 : tensor<3xf32> to tensor<?xf32>
// CHECK: return %[[R]]#0, %[[R1]]
compose.component private @split(tensor<2x3xf32>) -> (tensor<2xf32>, tensor<3xf32>)
compose.instance @shared of @split
func.func @main(%x: tensor<?x3xf32>) -> (tensor<2xf32>, tensor<?xf32>) {
  %a, %b = compose.call @shared(%x) : (tensor<?x3xf32>) -> (tensor<2xf32>, tensor<?xf32>)
  return %a, %b : tensor<2xf32>, tensor<?xf32>
}

// -----

// An external component nobody calls stays as it is.
// CHECK: compose.component private @unused(tensor<4xf32>) -> tensor<4xf32>
// CHECK-NOT: tessel.import
compose.component private @unused(tensor<4xf32>) -> tensor<4xf32>
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// A dynamic token dimension (a route expert compiled on its own): the
// results' `?` take the run-time size of the first dynamic input
// dimension; a static call site is cast to the interface and back. The
// declaration names every `?` of its interface `T` (ABI v3).
// CHECK-LABEL: func.func private @expert(tensor<?x4xf32> {tessel.dim_names = ["T", ""]}, tensor<4xf32>) -> (tensor<?x4xf32> {tessel.dim_names = ["T", ""]}) attributes {tessel.import}
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:.*]]: tensor<?x4xf32>, %[[R:.*]]: tensor<5x4xf32>, %[[B:.*]]: tensor<4xf32>)
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[T:.*]] = tensor.dim %[[X]], %[[C0]] : tensor<?x4xf32>
// CHECK: %[[INIT:.*]] = tensor.empty(%[[T]]) : tensor<?x4xf32>
// CHECK: %[[Y:.*]] = tessel.call_import @expert(%[[X]], %[[B]] : tensor<?x4xf32>, tensor<4xf32>) outs(%[[INIT]] : tensor<?x4xf32>) -> tensor<?x4xf32>
// CHECK: %[[RC:.*]] = tensor.cast %[[R]] : tensor<5x4xf32> to tensor<?x4xf32>
// CHECK: %[[T2:.*]] = tensor.dim %[[RC]], %{{.*}} : tensor<?x4xf32>
// CHECK: %[[INIT2:.*]] = tensor.empty(%[[T2]]) : tensor<?x4xf32>
// CHECK: %[[Z:.*]] = tessel.call_import @expert(%[[RC]], %[[B]] : tensor<?x4xf32>, tensor<4xf32>) outs(%[[INIT2]] : tensor<?x4xf32>) -> tensor<?x4xf32>
// CHECK: %[[ZC:.*]] = tensor.cast %[[Z]] : tensor<?x4xf32> to tensor<5x4xf32>
// CHECK: return %[[Y]], %[[ZC]]
compose.component private @expert(tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
func.func @main(%x: tensor<?x4xf32>, %r: tensor<5x4xf32>, %b: tensor<4xf32>) -> (tensor<?x4xf32>, tensor<5x4xf32>) {
  %y = compose.call @expert(%x, %b) : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %z = compose.call @expert(%r, %b) : (tensor<5x4xf32>, tensor<4xf32>) -> tensor<5x4xf32>
  return %y, %z : tensor<?x4xf32>, tensor<5x4xf32>
}

// -----

compose.component private @grow(tensor<4xf32>) -> tensor<?x4xf32>
func.func @main(%x: tensor<4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{calls external component 'grow', whose result #0 has type 'tensor<?x4xf32>' with a dynamic token dimension but no argument has one: the size of its result cannot be known from its inputs}}
  %y = compose.call @grow(%x) : (tensor<4xf32>) -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// -----

compose.component private @opaque(tensor<*xf32>) -> tensor<4xf32>
func.func @main(%x: tensor<*xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{calls external component 'opaque', whose argument #0 has type 'tensor<*xf32>'; an imported component crosses the artifact ABI, which needs ranked tensors}}
  %y = compose.call @opaque(%x) : (tensor<*xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

compose.component private @remote(tensor<4xf32>) -> tensor<4xf32>
compose.instance @inst of @remote
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = compose.call @remote(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
// A symbol use the pass cannot turn into an import call.
// expected-error @+1 {{'compose.instance' op of external component 'remote' is still used by something other than compose.call}}
compose.instance @inst2 of @remote
func.func @other() attributes {uses = @inst2} {
  return
}
