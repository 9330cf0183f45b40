// RUN: tessel-opt %s -split-input-file | FileCheck %s
// Round trip: every sym op and the symbol type parse, verify and print in
// their declarative assembly formats.
// RUN: tessel-opt %s -split-input-file | tessel-opt -split-input-file | FileCheck %s
// RUN: tessel-opt %s -split-input-file -mlir-print-op-generic | tessel-opt -split-input-file | FileCheck %s

// The symbol type in a signature is the interface declaration.
// CHECK-LABEL: func @signature
// CHECK-SAME: (%{{.*}}: tensor<64x!sym.symbol<512>>) -> tensor<64x!sym.symbol<512>>
func.func @signature(%s: tensor<64x!sym.symbol<512>>) -> tensor<64x!sym.symbol<512>> {
  return %s : tensor<64x!sym.symbol<512>>
}

// -----

// CHECK-LABEL: func @argmax
// CHECK: sym.argmax %{{.*}} : tensor<4x16xf32> -> tensor<4x!sym.symbol<16>>
// CHECK: sym.argmax %{{.*}} : tensor<?x3x16xbf16> -> tensor<?x3x!sym.symbol<16>>
// CHECK: sym.argmax %{{.*}} : tensor<16xf16> -> tensor<!sym.symbol<16>>
func.func @argmax(%a: tensor<4x16xf32>, %b: tensor<?x3x16xbf16>, %c: tensor<16xf16>)
    -> (tensor<4x!sym.symbol<16>>, tensor<?x3x!sym.symbol<16>>, tensor<!sym.symbol<16>>) {
  %0 = sym.argmax %a : tensor<4x16xf32> -> tensor<4x!sym.symbol<16>>
  %1 = sym.argmax %b : tensor<?x3x16xbf16> -> tensor<?x3x!sym.symbol<16>>
  %2 = sym.argmax %c : tensor<16xf16> -> tensor<!sym.symbol<16>>
  return %0, %1, %2 : tensor<4x!sym.symbol<16>>, tensor<?x3x!sym.symbol<16>>, tensor<!sym.symbol<16>>
}

// -----

// CHECK-LABEL: func @quantize
// CHECK: sym.quantize %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x!sym.symbol<16>>
// CHECK: sym.quantize %{{.*}}, %{{.*}} : tensor<2x?x8xf16>, tensor<16x?xf16> -> tensor<2x?x!sym.symbol<16>>
func.func @quantize(%x: tensor<4x8xf32>, %c: tensor<16x8xf32>, %y: tensor<2x?x8xf16>, %d: tensor<16x?xf16>)
    -> (tensor<4x!sym.symbol<16>>, tensor<2x?x!sym.symbol<16>>) {
  %0 = sym.quantize %x, %c : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x!sym.symbol<16>>
  %1 = sym.quantize %y, %d : tensor<2x?x8xf16>, tensor<16x?xf16> -> tensor<2x?x!sym.symbol<16>>
  return %0, %1 : tensor<4x!sym.symbol<16>>, tensor<2x?x!sym.symbol<16>>
}

// -----

// CHECK-LABEL: func @embed
// CHECK: sym.embed %{{.*}}, %{{.*}} : tensor<4x!sym.symbol<16>>, tensor<16x8xf32> -> tensor<4x8xf32>
// CHECK: sym.embed %{{.*}}, %{{.*}} : tensor<?x2x!sym.symbol<16>>, tensor<16x?xbf16> -> tensor<?x2x?xbf16>
// CHECK: sym.embed %{{.*}}, %{{.*}} : tensor<!sym.symbol<16>>, tensor<16x8xf32> -> tensor<8xf32>
func.func @embed(%s: tensor<4x!sym.symbol<16>>, %t: tensor<16x8xf32>, %u: tensor<?x2x!sym.symbol<16>>, %v: tensor<16x?xbf16>, %w: tensor<!sym.symbol<16>>)
    -> (tensor<4x8xf32>, tensor<?x2x?xbf16>, tensor<8xf32>) {
  %0 = sym.embed %s, %t : tensor<4x!sym.symbol<16>>, tensor<16x8xf32> -> tensor<4x8xf32>
  %1 = sym.embed %u, %v : tensor<?x2x!sym.symbol<16>>, tensor<16x?xbf16> -> tensor<?x2x?xbf16>
  %2 = sym.embed %w, %t : tensor<!sym.symbol<16>>, tensor<16x8xf32> -> tensor<8xf32>
  return %0, %1, %2 : tensor<4x8xf32>, tensor<?x2x?xbf16>, tensor<8xf32>
}

// -----

// CHECK-LABEL: func @one_hot
// CHECK: sym.one_hot %{{.*}} : tensor<4x!sym.symbol<16>> -> tensor<4x16xf32>
// CHECK: sym.one_hot %{{.*}} : tensor<?x!sym.symbol<3>> -> tensor<?x3xf16>
func.func @one_hot(%s: tensor<4x!sym.symbol<16>>, %t: tensor<?x!sym.symbol<3>>) -> (tensor<4x16xf32>, tensor<?x3xf16>) {
  %0 = sym.one_hot %s : tensor<4x!sym.symbol<16>> -> tensor<4x16xf32>
  %1 = sym.one_hot %t : tensor<?x!sym.symbol<3>> -> tensor<?x3xf16>
  return %0, %1 : tensor<4x16xf32>, tensor<?x3xf16>
}

// -----

// CHECK-LABEL: func @indices
// CHECK: sym.from_index %{{.*}} : tensor<4xi64> -> tensor<4x!sym.symbol<16>>
// CHECK: sym.from_index %{{.*}} : tensor<?x2xi32> -> tensor<?x2x!sym.symbol<1>>
// CHECK: sym.to_index %{{.*}} : tensor<4x!sym.symbol<16>> -> tensor<4xi32>
// CHECK: sym.to_index %{{.*}} : tensor<?x2x!sym.symbol<1>> -> tensor<?x2xi64>
func.func @indices(%i: tensor<4xi64>, %j: tensor<?x2xi32>) -> (tensor<4xi32>, tensor<?x2xi64>) {
  %s = sym.from_index %i : tensor<4xi64> -> tensor<4x!sym.symbol<16>>
  %t = sym.from_index %j : tensor<?x2xi32> -> tensor<?x2x!sym.symbol<1>>
  %0 = sym.to_index %s : tensor<4x!sym.symbol<16>> -> tensor<4xi32>
  %1 = sym.to_index %t : tensor<?x2x!sym.symbol<1>> -> tensor<?x2xi64>
  return %0, %1 : tensor<4xi32>, tensor<?x2xi64>
}

// -----

// The largest vocabulary (ids up to 2^31 - 1 fit i32) and the interface
// attribute tessel-lower-sym leaves on lowered signatures.
// CHECK-LABEL: func @limits
// CHECK-SAME: tensor<2x!sym.symbol<2147483648>> {sym.vocab = 2147483648 : i64}
// CHECK-SAME: tensor<2xi32> {sym.vocab = 7 : i64}
// CHECK-SAME: -> (tensor<2xi32> {sym.vocab = 7 : i64})
func.func @limits(%s: tensor<2x!sym.symbol<2147483648>> {sym.vocab = 2147483648 : i64}, %i: tensor<2xi32> {sym.vocab = 7 : i64}) -> (tensor<2xi32> {sym.vocab = 7 : i64}) {
  return %i : tensor<2xi32>
}
