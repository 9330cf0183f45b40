// RUN: tessel-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(tessel-simplify-sym))" | FileCheck %s
// RUN: tessel-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(tessel-simplify-sym{assume-finite-weights=true}))" | FileCheck %s --check-prefix=FINITE

//===----------------------------------------------------------------------===//
// (a) one-hot x matmul -> gather
//===----------------------------------------------------------------------===//

// The one-hot reshaped to 1 x H x V times a constant 1 x V x D weight: a row
// gather of the weight as V x D, reshaped to the matmul's result.
// CHECK-LABEL: func @one_hot_matmul
// CHECK-SAME: %[[S:.*]]: tensor<4x!sym.symbol<3>>
// CHECK-DAG: %[[T:.*]] = "tosa.const"() <{values = dense<{{\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00], [5.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>}>
// CHECK: %[[E:.*]] = sym.embed %[[S]], %[[T]] : tensor<4x!sym.symbol<3>>, tensor<3x2xf32> -> tensor<4x2xf32>
// CHECK: %[[R:.*]] = tosa.reshape %[[E]], %{{.*}} : (tensor<4x2xf32>, !tosa.shape<3>) -> tensor<1x4x2xf32>
// CHECK: return %[[R]]
// CHECK-NOT: tosa.matmul
// CHECK-NOT: sym.one_hot
func.func @one_hot_matmul(%s: tensor<4x!sym.symbol<3>>) -> tensor<1x4x2xf32> {
  %w = "tosa.const"() {values = dense<[[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]]> : tensor<1x3x2xf32>} : () -> tensor<1x3x2xf32>
  %h = sym.one_hot %s : tensor<4x!sym.symbol<3>> -> tensor<4x3xf32>
  %shape = tosa.const_shape {values = dense<[1, 4, 3]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %a = tosa.reshape %h, %shape : (tensor<4x3xf32>, !tosa.shape<3>) -> tensor<1x4x3xf32>
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %y = tosa.matmul %a, %w, %zp, %zp : (tensor<1x4x3xf32>, tensor<1x3x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x2xf32>
  return %y : tensor<1x4x2xf32>
}

// -----

// A rank-3 one-hot needs no reshape; f16 throughout.
// CHECK-LABEL: func @one_hot_matmul_rank3
// CHECK: sym.embed %{{.*}}, %{{.*}} : tensor<1x5x!sym.symbol<2>>, tensor<2x3xf16> -> tensor<1x5x3xf16>
// CHECK-NOT: tosa.matmul
func.func @one_hot_matmul_rank3(%s: tensor<1x5x!sym.symbol<2>>) -> tensor<1x5x3xf16> {
  %w = "tosa.const"() {values = dense<[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]]> : tensor<1x2x3xf16>} : () -> tensor<1x2x3xf16>
  %h = sym.one_hot %s : tensor<1x5x!sym.symbol<2>> -> tensor<1x5x2xf16>
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf16>} : () -> tensor<1xf16>
  %y = tosa.matmul %h, %w, %zp, %zp : (tensor<1x5x2xf16>, tensor<1x2x3xf16>, tensor<1xf16>, tensor<1xf16>) -> tensor<1x5x3xf16>
  return %y : tensor<1x5x3xf16>
}

// -----

// A weight that is not a constant could hold inf or NaN, where the matmul
// gives NaN (0 * inf) but the gather does not: only rewritten with
// assume-finite-weights.
// CHECK-LABEL: func @one_hot_matmul_arg_weight
// CHECK: tosa.matmul
// CHECK-NOT: sym.embed
// FINITE-LABEL: func @one_hot_matmul_arg_weight
// FINITE-SAME: %[[S:.*]]: tensor<1x4x!sym.symbol<3>>, %[[W:.*]]: tensor<1x3x2xf32>
// FINITE: %[[T:.*]] = tosa.reshape %[[W]], %{{.*}} : (tensor<1x3x2xf32>, !tosa.shape<2>) -> tensor<3x2xf32>
// FINITE: sym.embed %[[S]], %[[T]]
// FINITE-NOT: tosa.matmul
func.func @one_hot_matmul_arg_weight(%s: tensor<1x4x!sym.symbol<3>>, %w: tensor<1x3x2xf32>) -> tensor<1x4x2xf32> {
  %h = sym.one_hot %s : tensor<1x4x!sym.symbol<3>> -> tensor<1x4x3xf32>
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %y = tosa.matmul %h, %w, %zp, %zp : (tensor<1x4x3xf32>, tensor<1x3x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x2xf32>
  return %y : tensor<1x4x2xf32>
}

// -----

// A constant weight with an inf: never rewritten.
// CHECK-LABEL: func @one_hot_matmul_inf_weight
// CHECK: tosa.matmul
// CHECK-NOT: sym.embed
// FINITE-LABEL: func @one_hot_matmul_inf_weight
// FINITE: tosa.matmul
// FINITE-NOT: sym.embed
func.func @one_hot_matmul_inf_weight(%s: tensor<1x4x!sym.symbol<3>>) -> tensor<1x4x2xf32> {
  %w = "tosa.const"() {values = dense<[[[1.0, 2.0], [0x7F800000, 4.0], [5.0, 6.0]]]> : tensor<1x3x2xf32>} : () -> tensor<1x3x2xf32>
  %h = sym.one_hot %s : tensor<1x4x!sym.symbol<3>> -> tensor<1x4x3xf32>
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %y = tosa.matmul %h, %w, %zp, %zp : (tensor<1x4x3xf32>, tensor<1x3x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x2xf32>
  return %y : tensor<1x4x2xf32>
}

// -----

// W with a batch of 2 (one weight per batch image): not rewritten.
// CHECK-LABEL: func @one_hot_matmul_batched_weight
// CHECK: tosa.matmul
// CHECK-NOT: sym.embed
// FINITE-LABEL: func @one_hot_matmul_batched_weight
// FINITE: tosa.matmul
func.func @one_hot_matmul_batched_weight(%s: tensor<2x4x!sym.symbol<3>>) -> tensor<2x4x2xf32> {
  %w = "tosa.const"() {values = dense<1.0> : tensor<2x3x2xf32>} : () -> tensor<2x3x2xf32>
  %h = sym.one_hot %s : tensor<2x4x!sym.symbol<3>> -> tensor<2x4x3xf32>
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %y = tosa.matmul %h, %w, %zp, %zp : (tensor<2x4x3xf32>, tensor<2x3x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x4x2xf32>
  return %y : tensor<2x4x2xf32>
}

// -----

// A reshape that does not keep the one-hot rows whole (4 x 6 -> 1 x 8 x 3):
// the matmul no longer selects rows.
// CHECK-LABEL: func @one_hot_matmul_split_rows
// CHECK: tosa.matmul
// CHECK-NOT: sym.embed
func.func @one_hot_matmul_split_rows(%s: tensor<4x!sym.symbol<6>>) -> tensor<1x8x2xf32> {
  %w = "tosa.const"() {values = dense<1.0> : tensor<1x3x2xf32>} : () -> tensor<1x3x2xf32>
  %h = sym.one_hot %s : tensor<4x!sym.symbol<6>> -> tensor<4x6xf32>
  %shape = tosa.const_shape {values = dense<[1, 8, 3]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %a = tosa.reshape %h, %shape : (tensor<4x6xf32>, !tosa.shape<3>) -> tensor<1x8x3xf32>
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %y = tosa.matmul %a, %w, %zp, %zp : (tensor<1x8x3xf32>, tensor<1x3x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x2xf32>
  return %y : tensor<1x8x2xf32>
}

// -----

// The one-hot on the right (X . onehot^T-like): not a row selection.
// CHECK-LABEL: func @one_hot_matmul_rhs
// CHECK: tosa.matmul
// CHECK-NOT: sym.embed
func.func @one_hot_matmul_rhs(%s: tensor<1x3x!sym.symbol<2>>, %x: tensor<1x4x3xf32>) -> tensor<1x4x2xf32> {
  %h = sym.one_hot %s : tensor<1x3x!sym.symbol<2>> -> tensor<1x3x2xf32>
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %y = tosa.matmul %x, %h, %zp, %zp : (tensor<1x4x3xf32>, tensor<1x3x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x2xf32>
  return %y : tensor<1x4x2xf32>
}

// -----

//===----------------------------------------------------------------------===//
// (b) argmax(one_hot(s)) -> s
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func @argmax_of_one_hot
// CHECK-SAME: %[[S:.*]]: tensor<4x!sym.symbol<3>>
// CHECK-NEXT: return %[[S]]
func.func @argmax_of_one_hot(%s: tensor<4x!sym.symbol<3>>) -> tensor<4x!sym.symbol<3>> {
  %h = sym.one_hot %s : tensor<4x!sym.symbol<3>> -> tensor<4x3xf32>
  %t = sym.argmax %h : tensor<4x3xf32> -> tensor<4x!sym.symbol<3>>
  return %t : tensor<4x!sym.symbol<3>>
}

// -----

// Static and dynamic shapes on the way: a tensor.cast keeps the result type.
// CHECK-LABEL: func @argmax_of_one_hot_cast
// CHECK-SAME: %[[S:.*]]: tensor<4x2x!sym.symbol<3>>
// CHECK-NEXT: %[[C:.*]] = tensor.cast %[[S]] : tensor<4x2x!sym.symbol<3>> to tensor<?x2x!sym.symbol<3>>
// CHECK-NEXT: return %[[C]]
func.func @argmax_of_one_hot_cast(%s: tensor<4x2x!sym.symbol<3>>) -> tensor<?x2x!sym.symbol<3>> {
  %h = sym.one_hot %s : tensor<4x2x!sym.symbol<3>> -> tensor<?x2x3xbf16>
  %t = sym.argmax %h : tensor<?x2x3xbf16> -> tensor<?x2x!sym.symbol<3>>
  return %t : tensor<?x2x!sym.symbol<3>>
}

// -----

//===----------------------------------------------------------------------===//
// (c) quantize(embed(s, C), C) -> s
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func @codebook_round_trip
// CHECK-SAME: %[[S:.*]]: tensor<4x!sym.symbol<3>>
// CHECK-NEXT: return %[[S]]
func.func @codebook_round_trip(%s: tensor<4x!sym.symbol<3>>) -> tensor<4x!sym.symbol<3>> {
  %c = "tosa.const"() {values = dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>} : () -> tensor<3x2xf32>
  %e = sym.embed %s, %c : tensor<4x!sym.symbol<3>>, tensor<3x2xf32> -> tensor<4x2xf32>
  %q = sym.quantize %e, %c : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x!sym.symbol<3>>
  return %q : tensor<4x!sym.symbol<3>>
}

// -----

// Two equal constants are one attribute: still the same codebook.
// CHECK-LABEL: func @codebook_round_trip_two_constants
// CHECK-SAME: %[[S:.*]]: tensor<2x!sym.symbol<2>>
// CHECK-NEXT: return %[[S]]
func.func @codebook_round_trip_two_constants(%s: tensor<2x!sym.symbol<2>>) -> tensor<2x!sym.symbol<2>> {
  %t = arith.constant dense<[[1.0, 0.0], [0.0, 1.0]]> : tensor<2x2xf16>
  %c = "tosa.const"() {values = dense<[[1.0, 0.0], [0.0, 1.0]]> : tensor<2x2xf16>} : () -> tensor<2x2xf16>
  %e = sym.embed %s, %t : tensor<2x!sym.symbol<2>>, tensor<2x2xf16> -> tensor<2x2xf16>
  %q = sym.quantize %e, %c : tensor<2x2xf16>, tensor<2x2xf16> -> tensor<2x!sym.symbol<2>>
  return %q : tensor<2x!sym.symbol<2>>
}

// -----

// Duplicate rows: quantizing row 2 gives 0 (the lowest index of the tie),
// so the round trip is not the identity. The constant codebook still
// folds (d).
// CHECK-LABEL: func @codebook_duplicate_rows
// CHECK: sym.embed
// CHECK: tosa.matmul
// CHECK: sym.argmax
func.func @codebook_duplicate_rows(%s: tensor<4x!sym.symbol<3>>) -> tensor<4x!sym.symbol<3>> {
  %c = "tosa.const"() {values = dense<[[1.0, 2.0], [3.0, 4.0], [1.0, 2.0]]> : tensor<3x2xf32>} : () -> tensor<3x2xf32>
  %e = sym.embed %s, %c : tensor<4x!sym.symbol<3>>, tensor<3x2xf32> -> tensor<4x2xf32>
  %q = sym.quantize %e, %c : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x!sym.symbol<3>>
  return %q : tensor<4x!sym.symbol<3>>
}

// -----

// Distinct rows closer than the lowered f32 distance computation can tell
// apart (1000 and 1000.0001): not rewritten.
// CHECK-LABEL: func @codebook_nearly_duplicate_rows
// CHECK: sym.embed
// CHECK: sym.argmax
func.func @codebook_nearly_duplicate_rows(%s: tensor<4x!sym.symbol<2>>) -> tensor<4x!sym.symbol<2>> {
  %c = "tosa.const"() {values = dense<[[1000.0, 0.0], [1000.0001, 0.0]]> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %e = sym.embed %s, %c : tensor<4x!sym.symbol<2>>, tensor<2x2xf32> -> tensor<4x2xf32>
  %q = sym.quantize %e, %c : tensor<4x2xf32>, tensor<2x2xf32> -> tensor<4x!sym.symbol<2>>
  return %q : tensor<4x!sym.symbol<2>>
}

// -----

// A codebook that is not a constant: nothing is known about its rows.
// CHECK-LABEL: func @codebook_not_constant
// CHECK: %[[E:.*]] = sym.embed
// CHECK: sym.quantize %[[E]], %{{.*}}
func.func @codebook_not_constant(%s: tensor<4x!sym.symbol<3>>, %c: tensor<3x2xf32>) -> tensor<4x!sym.symbol<3>> {
  %e = sym.embed %s, %c : tensor<4x!sym.symbol<3>>, tensor<3x2xf32> -> tensor<4x2xf32>
  %q = sym.quantize %e, %c : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x!sym.symbol<3>>
  return %q : tensor<4x!sym.symbol<3>>
}

// -----

// Embedding table and codebook differ: no round trip (the codebook folds).
// CHECK-LABEL: func @codebook_other_table
// CHECK: sym.embed
// CHECK: sym.argmax
func.func @codebook_other_table(%s: tensor<4x!sym.symbol<2>>) -> tensor<4x!sym.symbol<2>> {
  %t = "tosa.const"() {values = dense<[[0.0, 1.0], [1.0, 0.0]]> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %c = "tosa.const"() {values = dense<[[1.0, 0.0], [0.0, 1.0]]> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %e = sym.embed %s, %t : tensor<4x!sym.symbol<2>>, tensor<2x2xf32> -> tensor<4x2xf32>
  %q = sym.quantize %e, %c : tensor<4x2xf32>, tensor<2x2xf32> -> tensor<4x!sym.symbol<2>>
  return %q : tensor<4x!sym.symbol<2>>
}

// -----

//===----------------------------------------------------------------------===//
// (d) quantize with a constant codebook: transpose and norms folded
//===----------------------------------------------------------------------===//

// scores = x . Ct - |c|^2 / 2 with both constants computed now
// (|(1,2)|^2/2 = 2.5, |(3,4)|^2/2 = 12.5, |(5,6)|^2/2 = 30.5), then
// sym.argmax; the embed after it stays a row lookup.
// CHECK-LABEL: func @constant_codebook
// CHECK-SAME: %[[X:.*]]: tensor<4x2xf32>
// CHECK-DAG: %[[CT:.*]] = "tosa.const"() <{values = dense<{{\[\[\[}}1.000000e+00, 3.000000e+00, 5.000000e+00], [2.000000e+00, 4.000000e+00, 6.000000e+00]]]> : tensor<1x2x3xf32>}>
// CHECK-DAG: %[[H:.*]] = "tosa.const"() <{values = dense<{{\[\[\[}}2.500000e+00, 1.250000e+01, 3.050000e+01]]]> : tensor<1x1x3xf32>}>
// CHECK: %[[X3:.*]] = tosa.reshape %[[X]], %{{.*}} : (tensor<4x2xf32>, !tosa.shape<3>) -> tensor<1x4x2xf32>
// CHECK: %[[D:.*]] = tosa.matmul %[[X3]], %[[CT]], %{{.*}}, %{{.*}} : (tensor<1x4x2xf32>, tensor<1x2x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x3xf32>
// CHECK: %[[SC:.*]] = tosa.sub %[[D]], %[[H]] : (tensor<1x4x3xf32>, tensor<1x1x3xf32>) -> tensor<1x4x3xf32>
// CHECK: %[[SC2:.*]] = tosa.reshape %[[SC]], %{{.*}} : (tensor<1x4x3xf32>, !tosa.shape<2>) -> tensor<4x3xf32>
// CHECK: %[[S:.*]] = sym.argmax %[[SC2]] : tensor<4x3xf32> -> tensor<4x!sym.symbol<3>>
// CHECK: sym.embed %[[S]]
// CHECK-NOT: sym.quantize
func.func @constant_codebook(%x: tensor<4x2xf32>, %t: tensor<3x8xf32>) -> tensor<4x8xf32> {
  %c = "tosa.const"() {values = dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>} : () -> tensor<3x2xf32>
  %q = sym.quantize %x, %c : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x!sym.symbol<3>>
  %e = sym.embed %q, %t : tensor<4x!sym.symbol<3>>, tensor<3x8xf32> -> tensor<4x8xf32>
  return %e : tensor<4x8xf32>
}

// -----

// f16 input (compared in f32) with a dynamic batch dim.
// CHECK-LABEL: func @constant_codebook_f16_dynamic
// CHECK: %[[W:.*]] = tosa.cast %{{.*}} : (tensor<?x2xf16>) -> tensor<?x2xf32>
// CHECK: tensor.collapse_shape %[[W]] {{\[\[}}0, 1]] : tensor<?x2xf32> into tensor<?xf32>
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1, 2]] output_shape [1, %{{.*}}, 2] : tensor<?xf32> into tensor<1x?x2xf32>
// CHECK: tosa.matmul {{.*}} -> tensor<1x?x3xf32>
// CHECK: tosa.sub
// CHECK: sym.argmax %{{.*}} : tensor<?x3xf32> -> tensor<?x!sym.symbol<3>>
func.func @constant_codebook_f16_dynamic(%x: tensor<?x2xf16>) -> tensor<?x!sym.symbol<3>> {
  %c = "tosa.const"() {values = dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf16>} : () -> tensor<3x2xf16>
  %q = sym.quantize %x, %c : tensor<?x2xf16>, tensor<3x2xf16> -> tensor<?x!sym.symbol<3>>
  return %q : tensor<?x!sym.symbol<3>>
}

// -----

// CHECK-LABEL: func @codebook_argument
// CHECK: sym.quantize
// CHECK-NOT: sym.argmax
func.func @codebook_argument(%x: tensor<4x2xf32>, %c: tensor<3x2xf32>) -> tensor<4x!sym.symbol<3>> {
  %q = sym.quantize %x, %c : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x!sym.symbol<3>>
  return %q : tensor<4x!sym.symbol<3>>
}

// -----

//===----------------------------------------------------------------------===//
// from_index(to_index(s)) -> s (folder)
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func @index_round_trip
// CHECK-SAME: %[[S:.*]]: tensor<4x!sym.symbol<3>>
// CHECK-NEXT: return %[[S]]
func.func @index_round_trip(%s: tensor<4x!sym.symbol<3>>) -> tensor<4x!sym.symbol<3>> {
  %i = sym.to_index %s : tensor<4x!sym.symbol<3>> -> tensor<4xi64>
  %t = sym.from_index %i : tensor<4xi64> -> tensor<4x!sym.symbol<3>>
  return %t : tensor<4x!sym.symbol<3>>
}

// -----

// Into another vocabulary: the clamp stays.
// CHECK-LABEL: func @index_other_vocab
// CHECK: sym.to_index
// CHECK: sym.from_index
func.func @index_other_vocab(%s: tensor<4x!sym.symbol<5>>) -> tensor<4x!sym.symbol<3>> {
  %i = sym.to_index %s : tensor<4x!sym.symbol<5>> -> tensor<4xi32>
  %t = sym.from_index %i : tensor<4xi32> -> tensor<4x!sym.symbol<3>>
  return %t : tensor<4x!sym.symbol<3>>
}
