// RUN: tessel-opt %s -split-input-file -verify-diagnostics --tessel-lower-sym | FileCheck %s

// argmax over the last axis; the symbol result becomes i32 ids tagged with
// the vocabulary.
// CHECK-LABEL: func @argmax
// CHECK-SAME: (%[[L:.*]]: tensor<4x16xf32>) -> (tensor<4xi32> {sym.vocab = 16 : i64})
// CHECK: %[[A:.*]] = tosa.argmax %[[L]] {axis = 1 : i32} : (tensor<4x16xf32>) -> tensor<4xi32>
// CHECK: return %[[A]] : tensor<4xi32>
func.func @argmax(%l: tensor<4x16xf32>) -> tensor<4x!sym.symbol<16>> {
  %s = sym.argmax %l : tensor<4x16xf32> -> tensor<4x!sym.symbol<16>>
  return %s : tensor<4x!sym.symbol<16>>
}

// -----

// Rank-1 logits give one symbol (rank 0); embedding it reshapes to 1 x 1.
// CHECK-LABEL: func @argmax_rank0
// CHECK: %[[A:.*]] = tosa.argmax %{{.*}} {axis = 0 : i32} : (tensor<16xf16>) -> tensor<i32>
// CHECK: %[[I:.*]] = tosa.reshape %[[A]], %{{.*}} : (tensor<i32>, !tosa.shape<2>) -> tensor<1x1xi32>
// CHECK: tosa.gather %{{.*}}, %[[I]] : (tensor<1x16x4xf32>, tensor<1x1xi32>) -> tensor<1x1x4xf32>
func.func @argmax_rank0(%l: tensor<16xf16>, %t: tensor<16x4xf32>) -> tensor<4xf32> {
  %s = sym.argmax %l : tensor<16xf16> -> tensor<!sym.symbol<16>>
  %e = sym.embed %s, %t : tensor<!sym.symbol<16>>, tensor<16x4xf32> -> tensor<4xf32>
  return %e : tensor<4xf32>
}

// -----

// Nearest codeword: argmax_j (x . c_j - |c_j|^2 / 2), in f32 (bf16 widened).
// CHECK-LABEL: func @quantize
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x8xbf16>, %[[C:.*]]: tensor<16x8xbf16>) -> (tensor<2x3xi32> {sym.vocab = 16 : i64})
// CHECK: %[[C32:.*]] = tosa.cast %[[C]] : (tensor<16x8xbf16>) -> tensor<16x8xf32>
// CHECK: %[[C3:.*]] = tosa.reshape %[[C32]], %{{.*}} : (tensor<16x8xf32>, !tosa.shape<3>) -> tensor<1x16x8xf32>
// CHECK: %[[CT:.*]] = tosa.transpose %[[C3]] {perms = array<i32: 0, 2, 1>} : (tensor<1x16x8xf32>) -> tensor<1x8x16xf32>
// CHECK: %[[SQ:.*]] = tosa.mul %[[C32]], %[[C32]], %{{.*}} : (tensor<16x8xf32>, tensor<16x8xf32>, tensor<1xi8>) -> tensor<16x8xf32>
// CHECK: %[[N:.*]] = tosa.reduce_sum %[[SQ]] {axis = 1 : i32} : (tensor<16x8xf32>) -> tensor<16x1xf32>
// CHECK: %[[HALF:.*]] = "tosa.const"() <{values = dense<5.000000e-01> : tensor<1x1xf32>}>
// CHECK: %[[HN:.*]] = tosa.mul %[[N]], %[[HALF]], %{{.*}} : (tensor<16x1xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<16x1xf32>
// CHECK: %[[HR:.*]] = tosa.reshape %[[HN]], %{{.*}} : (tensor<16x1xf32>, !tosa.shape<3>) -> tensor<1x1x16xf32>
// CHECK: %[[X32:.*]] = tosa.cast %[[X]] : (tensor<2x3x8xbf16>) -> tensor<2x3x8xf32>
// CHECK: %[[X3:.*]] = tosa.reshape %[[X32]], %{{.*}} : (tensor<2x3x8xf32>, !tosa.shape<3>) -> tensor<1x6x8xf32>
// CHECK: %[[D:.*]] = tosa.matmul %[[X3]], %[[CT]], %{{.*}}, %{{.*}} : (tensor<1x6x8xf32>, tensor<1x8x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x6x16xf32>
// CHECK: %[[SC:.*]] = tosa.sub %[[D]], %[[HR]] : (tensor<1x6x16xf32>, tensor<1x1x16xf32>) -> tensor<1x6x16xf32>
// CHECK: %[[A:.*]] = tosa.argmax %[[SC]] {axis = 2 : i32} : (tensor<1x6x16xf32>) -> tensor<1x6xi32>
// CHECK: %[[R:.*]] = tosa.reshape %[[A]], %{{.*}} : (tensor<1x6xi32>, !tosa.shape<2>) -> tensor<2x3xi32>
// CHECK: return %[[R]]
func.func @quantize(%x: tensor<2x3x8xbf16>, %c: tensor<16x8xbf16>) -> tensor<2x3x!sym.symbol<16>> {
  %s = sym.quantize %x, %c : tensor<2x3x8xbf16>, tensor<16x8xbf16> -> tensor<2x3x!sym.symbol<16>>
  return %s : tensor<2x3x!sym.symbol<16>>
}

// -----

// Row gather: values 1 x V x D, indices 1 x N (i32).
// CHECK-LABEL: func @embed
// CHECK-SAME: (%[[S:.*]]: tensor<2x3xi32> {sym.vocab = 16 : i64}, %[[T:.*]]: tensor<16x8xf32>) -> tensor<2x3x8xf32>
// CHECK: %[[I:.*]] = tosa.reshape %[[S]], %{{.*}} : (tensor<2x3xi32>, !tosa.shape<2>) -> tensor<1x6xi32>
// CHECK: %[[V:.*]] = tosa.reshape %[[T]], %{{.*}} : (tensor<16x8xf32>, !tosa.shape<3>) -> tensor<1x16x8xf32>
// CHECK: %[[G:.*]] = tosa.gather %[[V]], %[[I]] : (tensor<1x16x8xf32>, tensor<1x6xi32>) -> tensor<1x6x8xf32>
// CHECK: %[[R:.*]] = tosa.reshape %[[G]], %{{.*}} : (tensor<1x6x8xf32>, !tosa.shape<3>) -> tensor<2x3x8xf32>
// CHECK: return %[[R]]
func.func @embed(%s: tensor<2x3x!sym.symbol<16>>, %t: tensor<16x8xf32>) -> tensor<2x3x8xf32> {
  %e = sym.embed %s, %t : tensor<2x3x!sym.symbol<16>>, tensor<16x8xf32> -> tensor<2x3x8xf32>
  return %e : tensor<2x3x8xf32>
}

// -----

// Dynamic dims: reshapes through 1-D tensor.collapse_shape/expand_shape.
// CHECK-LABEL: func @embed_dynamic
// CHECK-SAME: (%[[S:.*]]: tensor<?x3xi32> {sym.vocab = 16 : i64}, %[[T:.*]]: tensor<16x?xf32>) -> tensor<?x3x?xf32>
// CHECK-DAG: %[[N:.*]] = tensor.dim %[[S]], %{{.*}} : tensor<?x3xi32>
// CHECK-DAG: %[[D:.*]] = tensor.dim %[[T]], %{{.*}} : tensor<16x?xf32>
// CHECK: %[[N3:.*]] = arith.muli %[[N]], %{{.*}} : index
// CHECK: %[[F:.*]] = tensor.collapse_shape %[[S]] {{\[\[}}0, 1]] : tensor<?x3xi32> into tensor<?xi32>
// CHECK: %[[I:.*]] = tensor.expand_shape %[[F]] {{\[\[}}0, 1]] output_shape [1, %[[N3]]] : tensor<?xi32> into tensor<1x?xi32>
// CHECK: %[[TF:.*]] = tensor.collapse_shape %[[T]] {{\[\[}}0, 1]] : tensor<16x?xf32> into tensor<?xf32>
// CHECK: %[[V:.*]] = tensor.expand_shape %[[TF]] {{\[\[}}0, 1, 2]] output_shape [1, 16, %[[D]]] : tensor<?xf32> into tensor<1x16x?xf32>
// CHECK: %[[G:.*]] = tosa.gather %[[V]], %[[I]] : (tensor<1x16x?xf32>, tensor<1x?xi32>) -> tensor<1x?x?xf32>
// CHECK: %[[GF:.*]] = tensor.collapse_shape %[[G]] {{\[\[}}0, 1, 2]] : tensor<1x?x?xf32> into tensor<?xf32>
// CHECK: %[[R:.*]] = tensor.expand_shape %[[GF]] {{\[\[}}0, 1, 2]] output_shape [%[[N]], 3, %[[D]]] : tensor<?xf32> into tensor<?x3x?xf32>
// CHECK: return %[[R]]
func.func @embed_dynamic(%s: tensor<?x3x!sym.symbol<16>>, %t: tensor<16x?xf32>) -> tensor<?x3x?xf32> {
  %e = sym.embed %s, %t : tensor<?x3x!sym.symbol<16>>, tensor<16x?xf32> -> tensor<?x3x?xf32>
  return %e : tensor<?x3x?xf32>
}

// -----

// ids[..., None] == iota, then select 1 / 0 in the result's float type.
// CHECK-LABEL: func @one_hot
// CHECK-SAME: (%[[S:.*]]: tensor<4xi32> {sym.vocab = 3 : i64}) -> tensor<4x3xf16>
// CHECK: %[[COL:.*]] = tosa.reshape %[[S]], %{{.*}} : (tensor<4xi32>, !tosa.shape<2>) -> tensor<4x1xi32>
// CHECK: %[[IOTA:.*]] = "tosa.const"() <{values = dense<{{\[\[}}0, 1, 2]]> : tensor<1x3xi32>}>
// CHECK: %[[EQ:.*]] = tosa.equal %[[COL]], %[[IOTA]] : (tensor<4x1xi32>, tensor<1x3xi32>) -> tensor<4x3xi1>
// CHECK: %[[ONE:.*]] = "tosa.const"() <{values = dense<1.000000e+00> : tensor<1x1xf16>}>
// CHECK: %[[ZERO:.*]] = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1x1xf16>}>
// CHECK: %[[H:.*]] = tosa.select %[[EQ]], %[[ONE]], %[[ZERO]] : (tensor<4x3xi1>, tensor<1x1xf16>, tensor<1x1xf16>) -> tensor<4x3xf16>
// CHECK: return %[[H]]
func.func @one_hot(%s: tensor<4x!sym.symbol<3>>) -> tensor<4x3xf16> {
  %h = sym.one_hot %s : tensor<4x!sym.symbol<3>> -> tensor<4x3xf16>
  return %h : tensor<4x3xf16>
}

// -----

// Clamp into [0, V-1] in the ids' type, then narrow i64 to i32; to_index
// is nothing for i32 and a widening cast for i64.
// CHECK-LABEL: func @indices
// CHECK-SAME: (%[[I:.*]]: tensor<4xi64>, %[[J:.*]]: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi64>)
// CHECK: %[[CI:.*]] = tosa.clamp %[[I]] {max_val = 15 : i64, min_val = 0 : i64} : (tensor<4xi64>) -> tensor<4xi64>
// CHECK: %[[SI:.*]] = tosa.cast %[[CI]] : (tensor<4xi64>) -> tensor<4xi32>
// CHECK: %[[CJ:.*]] = tosa.clamp %[[J]] {max_val = 15 : i32, min_val = 0 : i32} : (tensor<4xi32>) -> tensor<4xi32>
// CHECK: %[[WJ:.*]] = tosa.cast %[[CJ]] : (tensor<4xi32>) -> tensor<4xi64>
// CHECK: return %[[SI]], %[[WJ]]
func.func @indices(%i: tensor<4xi64>, %j: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi64>) {
  %s = sym.from_index %i : tensor<4xi64> -> tensor<4x!sym.symbol<16>>
  %t = sym.from_index %j : tensor<4xi32> -> tensor<4x!sym.symbol<16>>
  %a = sym.to_index %s : tensor<4x!sym.symbol<16>> -> tensor<4xi32>
  %b = sym.to_index %t : tensor<4x!sym.symbol<16>> -> tensor<4xi64>
  return %a, %b : tensor<4xi32>, tensor<4xi64>
}

// -----

// Symbols everywhere else: declarations, calls, block arguments, scf
// regions, tensor.cast. Every argument/result that had a symbol type keeps
// its vocabulary as `sym.vocab`.
// CHECK-LABEL: func private @component
// CHECK-SAME: (tensor<4xi32> {sym.vocab = 8 : i64}, tensor<2xf32>) -> (tensor<4xi32> {sym.vocab = 8 : i64})
// CHECK-LABEL: func @boundaries
// CHECK-SAME: (%[[S:.*]]: tensor<4xi32> {sym.vocab = 8 : i64}, %[[X:.*]]: tensor<2xf32>, %[[B:.*]]: i1) -> (tensor<?xi32> {sym.vocab = 8 : i64}, tensor<2xf32>)
// CHECK: %[[R:.*]] = call @component(%[[S]], %[[X]]) : (tensor<4xi32>, tensor<2xf32>) -> tensor<4xi32>
// CHECK: cf.cond_br %[[B]], ^[[BB:.*]](%[[R]] : tensor<4xi32>), ^[[BB]](%[[S]] : tensor<4xi32>)
// CHECK: ^[[BB]](%[[A:.*]]: tensor<4xi32>):
// CHECK: %[[C:.*]] = tensor.cast %[[A]] : tensor<4xi32> to tensor<?xi32>
// CHECK: %[[IF:.*]] = scf.if %[[B]] -> (tensor<?xi32>) {
// CHECK: scf.yield %[[C]] : tensor<?xi32>
// CHECK: } else {
// CHECK: %[[E:.*]] = tensor.empty() : tensor<3xi32>
// CHECK: tensor.cast %[[E]] : tensor<3xi32> to tensor<?xi32>
// CHECK: return %[[IF]], %[[X]] : tensor<?xi32>, tensor<2xf32>
func.func private @component(tensor<4x!sym.symbol<8>>, tensor<2xf32>) -> tensor<4x!sym.symbol<8>>
func.func @boundaries(%s: tensor<4x!sym.symbol<8>>, %x: tensor<2xf32>, %b: i1) -> (tensor<?x!sym.symbol<8>>, tensor<2xf32>) {
  %r = func.call @component(%s, %x) : (tensor<4x!sym.symbol<8>>, tensor<2xf32>) -> tensor<4x!sym.symbol<8>>
  cf.cond_br %b, ^bb1(%r : tensor<4x!sym.symbol<8>>), ^bb1(%s : tensor<4x!sym.symbol<8>>)
^bb1(%a: tensor<4x!sym.symbol<8>>):
  %c = tensor.cast %a : tensor<4x!sym.symbol<8>> to tensor<?x!sym.symbol<8>>
  %d = scf.if %b -> tensor<?x!sym.symbol<8>> {
    scf.yield %c : tensor<?x!sym.symbol<8>>
  } else {
    %e = tensor.empty() : tensor<3x!sym.symbol<8>>
    %f = tensor.cast %e : tensor<3x!sym.symbol<8>> to tensor<?x!sym.symbol<8>>
    scf.yield %f : tensor<?x!sym.symbol<8>>
  }
  return %d, %x : tensor<?x!sym.symbol<8>>, tensor<2xf32>
}

// -----

// A model without symbols is left exactly as it is.
// CHECK-LABEL: func @no_symbols
// CHECK-SAME: (%[[X:.*]]: tensor<4xi32>) -> tensor<4xi32>
// CHECK-NEXT: return %[[X]] : tensor<4xi32>
func.func @no_symbols(%x: tensor<4xi32>) -> tensor<4xi32> {
  return %x : tensor<4xi32>
}
