// RUN: tessel-opt %s -split-input-file --compose-extract-component=component=head -verify-diagnostics | FileCheck %s

// The named component becomes the only func.func; the graph that used it
// is dropped, the components it calls stay (inlined later).
// CHECK-NOT: func.func @main
// CHECK: compose.component @body
// CHECK-LABEL: func.func @head(%{{.*}}: tensor<4xf32> {tessel.name = "x"}) -> tensor<4xf32>
// CHECK: %[[E:.*]] = compose.call @body
// CHECK: %[[T:.*]] = tosa.tanh %[[E]]
// CHECK: return %[[T]] : tensor<4xf32>
// CHECK-NOT: compose.component @head
compose.component @body(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = tosa.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  compose.return %y : tensor<4xf32>
}
compose.component @head(%x: tensor<4xf32> {tessel.name = "x"}) -> tensor<4xf32> {
  %e = compose.call @body(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %y = tosa.tanh %e : (tensor<4xf32>) -> tensor<4xf32>
  compose.return %y : tensor<4xf32>
}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = compose.call @head(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// expected-error @below {{no compose.component named 'head' to compile}}
module {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// expected-error @+1 {{is external (no body): it is compiled where it is defined}}
compose.component private @head(tensor<4xf32>) -> tensor<4xf32>

// -----

// A route expert keeps its dynamic token dimension; the entry names every
// `?` of its interface `T`, bound at run time from the input (ABI v3).
// CHECK-LABEL: func.func @head(%{{.*}}: tensor<?x4xf32> {tessel.dim_names = ["T", ""], tessel.name = "x"}) -> (tensor<?x4xf32> {tessel.dim_names = ["T", ""]})
compose.component @head(%x: tensor<?x4xf32> {tessel.name = "x"}) -> tensor<?x4xf32> {
  %y = tosa.exp %x : (tensor<?x4xf32>) -> tensor<?x4xf32>
  compose.return %y : tensor<?x4xf32>
}

// -----

// expected-error @+1 {{component 'head' has result #0 of type 'tensor<?x4xf32>' with a dynamic token dimension but no argument with one: its size cannot be known from the inputs}}
compose.component @head(%x: tensor<2x4xf32>) -> tensor<?x4xf32> {
  %y = tensor.cast %x : tensor<2x4xf32> to tensor<?x4xf32>
  compose.return %y : tensor<?x4xf32>
}
