// The sym dialect end to end: symbols at function boundaries (i32 ids in
// the artifact), argmax (ties, NaN, f16), quantize (random and constant
// codebooks, ties), embed, one_hot, from_index (clamping, i32/i64) and
// to_index, lowered by tessel-lower-sym at the head of the pipeline.
// Symbol ids must match numpy exactly. References: e2e_refs.py.
// RUN: %python %e2e %s --work-dir %t -O 0,3

// Logits with many ties (small integers): the lowest index wins.
func.func @sym_argmax(%l: tensor<6x16xf32>) -> tensor<6x!sym.symbol<16>> {
  %s = sym.argmax %l : tensor<6x16xf32> -> tensor<6x!sym.symbol<16>>
  return %s : tensor<6x!sym.symbol<16>>
}

// A NaN in a row: its first NaN wins (numpy's argmax).
func.func @sym_argmax_nan(%l: tensor<4x7xf32>) -> tensor<4x!sym.symbol<7>> {
  %s = sym.argmax %l : tensor<4x7xf32> -> tensor<4x!sym.symbol<7>>
  return %s : tensor<4x!sym.symbol<7>>
}

func.func @sym_argmax_f16(%l: tensor<3x2x9xf16>) -> tensor<3x2x!sym.symbol<9>> {
  %s = sym.argmax %l : tensor<3x2x9xf16> -> tensor<3x2x!sym.symbol<9>>
  return %s : tensor<3x2x!sym.symbol<9>>
}

func.func @sym_quantize(%x: tensor<2x5x8xf32>, %c: tensor<16x8xf32>) -> tensor<2x5x!sym.symbol<16>> {
  %s = sym.quantize %x, %c : tensor<2x5x8xf32>, tensor<16x8xf32> -> tensor<2x5x!sym.symbol<16>>
  return %s : tensor<2x5x!sym.symbol<16>>
}

// SYM_TIES_CODEBOOK in e2e_refs.py: row 3 repeats row 0, and inputs with
// x[0] = 0 are equally far from rows 0 and 1. Ties go to the lowest index.
func.func @sym_quantize_ties(%x: tensor<8x2xf32>) -> tensor<8x!sym.symbol<5>> {
  %c = "tosa.const"() {values = dense<[[1.0, 0.0], [-1.0, 0.0], [0.0, 3.0], [1.0, 0.0], [0.0, -3.0]]> : tensor<5x2xf32>} : () -> tensor<5x2xf32>
  %s = sym.quantize %x, %c : tensor<8x2xf32>, tensor<5x2xf32> -> tensor<8x!sym.symbol<5>>
  return %s : tensor<8x!sym.symbol<5>>
}

// Symbols as an input: the artifact takes i32 ids in [0, 10).
func.func @sym_embed(%s: tensor<3x4x!sym.symbol<10>>, %t: tensor<10x6xf32>) -> tensor<3x4x6xf32> {
  %e = sym.embed %s, %t : tensor<3x4x!sym.symbol<10>>, tensor<10x6xf32> -> tensor<3x4x6xf32>
  return %e : tensor<3x4x6xf32>
}

func.func @sym_one_hot(%s: tensor<7x!sym.symbol<5>>) -> tensor<7x5xf32> {
  %h = sym.one_hot %s : tensor<7x!sym.symbol<5>> -> tensor<7x5xf32>
  return %h : tensor<7x5xf32>
}

// Out-of-range ids (negative, >= V, beyond i32 for i64) clamp to [0, V-1].
func.func @sym_indices(%i: tensor<12xi64>, %j: tensor<3x4xi32>) -> (tensor<12xi32>, tensor<3x4xi64>) {
  %s = sym.from_index %i : tensor<12xi64> -> tensor<12x!sym.symbol<16>>
  %t = sym.from_index %j : tensor<3x4xi32> -> tensor<3x4x!sym.symbol<16>>
  %a = sym.to_index %s : tensor<12x!sym.symbol<16>> -> tensor<12xi32>
  %b = sym.to_index %t : tensor<3x4x!sym.symbol<16>> -> tensor<3x4xi64>
  return %a, %b : tensor<12xi32>, tensor<3x4xi64>
}

// A component boundary: discretize, embed, quantize back with the same
// table (recovers the symbols: random rows are far apart), one-hot.
func.func @sym_chain(%l: tensor<4x3x10xf32>, %t: tensor<10x8xf32>) -> (tensor<4x3xi32>, tensor<4x3x8xf32>, tensor<4x3x!sym.symbol<10>>, tensor<4x3x10xf32>) {
  %s = sym.argmax %l : tensor<4x3x10xf32> -> tensor<4x3x!sym.symbol<10>>
  %e = sym.embed %s, %t : tensor<4x3x!sym.symbol<10>>, tensor<10x8xf32> -> tensor<4x3x8xf32>
  %q = sym.quantize %e, %t : tensor<4x3x8xf32>, tensor<10x8xf32> -> tensor<4x3x!sym.symbol<10>>
  %h = sym.one_hot %q : tensor<4x3x!sym.symbol<10>> -> tensor<4x3x10xf32>
  %ids = sym.to_index %s : tensor<4x3x!sym.symbol<10>> -> tensor<4x3xi32>
  return %ids, %e, %q, %h : tensor<4x3xi32>, tensor<4x3x8xf32>, tensor<4x3x!sym.symbol<10>>, tensor<4x3x10xf32>
}
