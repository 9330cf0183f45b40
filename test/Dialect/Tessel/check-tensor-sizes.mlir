// RUN: tessel-opt %s -split-input-file -tessel-check-tensor-sizes -verify-diagnostics | FileCheck %s
// RUN: not tessel-opt %s -split-input-file -tessel-check-tensor-sizes=max-elements=7 2>&1 | FileCheck %s --check-prefix=SMALL

// Tensors within the limit pass unchanged.
// CHECK-LABEL: func.func @fits
// CHECK: arith.constant dense<1.000000e+00> : tensor<2x4xf32>
// SMALL: error: a result of type 'tensor<2x4xf32>' has 8 elements
func.func @fits() -> tensor<2x4xf32> {
  %c = arith.constant dense<1.0> : tensor<2x4xf32>
  return %c : tensor<2x4xf32>
}

// -----

// A splat the parser accepts but nothing could build.
func.func @huge_splat() -> tensor<100000000000xf32> {
  // expected-error @+1 {{a result of type 'tensor<100000000000xf32>' has 100000000000 elements; Tessel compiles tensors of at most 2147483648 elements}}
  %c = arith.constant dense<1.0> : tensor<100000000000xf32>
  return %c : tensor<100000000000xf32>
}

// -----

// An element count that overflows 64 bits.
func.func @overflow() {
  // expected-error @+1 {{has more elements than a 64-bit count holds}}
  %e = tensor.empty() : tensor<4294967296x4294967296x8xf32>
  return
}

// -----

// Block arguments (and function types) are checked too.
// expected-error @+1 {{a block argument of type 'tensor<9223372036854775807xf32>' has 9223372036854775807 elements}}
func.func @argument(%a: tensor<9223372036854775807xf32>) {
  return
}

// -----

// A declaration has no body: its function type is checked.
// expected-error @+1 {{attribute 'function_type' of type 'tensor<3000000000xf32>' has 3000000000 elements}}
func.func private @declared(tensor<3000000000xf32>)

// -----

// Dynamic dimensions are sized at run time.
// CHECK-LABEL: func.func @dynamic
func.func @dynamic(%a: tensor<?x4xf32>) -> tensor<?x4xf32> {
  return %a : tensor<?x4xf32>
}
