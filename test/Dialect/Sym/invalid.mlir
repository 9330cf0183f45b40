// RUN: tessel-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{!sym.symbol vocabulary size must be in [1, 2^31] (ids lower to i32), got 0}}
func.func @vocab_zero(%s: tensor<4x!sym.symbol<0>>)

// -----

// expected-error @+1 {{!sym.symbol vocabulary size must be in [1, 2^31] (ids lower to i32), got -3}}
func.func @vocab_negative(%s: tensor<4x!sym.symbol<-3>>)

// -----

// expected-error @+1 {{!sym.symbol vocabulary size must be in [1, 2^31] (ids lower to i32), got 2147483649}}
func.func @vocab_too_large(%s: tensor<4x!sym.symbol<2147483649>>)

// -----

//===----------------------------------------------------------------------===//
// argmax
//===----------------------------------------------------------------------===//

func.func @argmax_vocab(%x: tensor<4x12xf32>) -> tensor<4x!sym.symbol<16>> {
  // expected-error @+1 {{'logits' last dimension must be the static vocabulary size 16, got 12}}
  %0 = sym.argmax %x : tensor<4x12xf32> -> tensor<4x!sym.symbol<16>>
  return %0 : tensor<4x!sym.symbol<16>>
}

// -----

func.func @argmax_dynamic_vocab(%x: tensor<4x?xf32>) -> tensor<4x!sym.symbol<16>> {
  // expected-error @+1 {{'logits' last dimension must be the static vocabulary size 16, got ?}}
  %0 = sym.argmax %x : tensor<4x?xf32> -> tensor<4x!sym.symbol<16>>
  return %0 : tensor<4x!sym.symbol<16>>
}

// -----

func.func @argmax_rank(%x: tensor<4x16xf32>) -> tensor<4x1x!sym.symbol<16>> {
  // expected-error @+1 {{result has rank 2 but 'logits' without its last dim has rank 1}}
  %0 = sym.argmax %x : tensor<4x16xf32> -> tensor<4x1x!sym.symbol<16>>
  return %0 : tensor<4x1x!sym.symbol<16>>
}

// -----

func.func @argmax_rank0(%x: tensor<f32>) -> tensor<!sym.symbol<16>> {
  // expected-error @+1 {{'logits' must have rank >= 1, got 'tensor<f32>'}}
  %0 = sym.argmax %x : tensor<f32> -> tensor<!sym.symbol<16>>
  return %0 : tensor<!sym.symbol<16>>
}

// -----

func.func @argmax_shape(%x: tensor<4x16xf32>) -> tensor<5x!sym.symbol<16>> {
  // expected-error @+1 {{result dim 0 is 5 but 'logits' without its last dim dim 0 is 4}}
  %0 = sym.argmax %x : tensor<4x16xf32> -> tensor<5x!sym.symbol<16>>
  return %0 : tensor<5x!sym.symbol<16>>
}

// -----

func.func @argmax_int(%x: tensor<4x16xi32>) -> tensor<4x!sym.symbol<16>> {
  // expected-error @+1 {{operand #0 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float values}}
  %0 = sym.argmax %x : tensor<4x16xi32> -> tensor<4x!sym.symbol<16>>
  return %0 : tensor<4x!sym.symbol<16>>
}

// -----

func.func @argmax_f64(%x: tensor<4x16xf64>) -> tensor<4x!sym.symbol<16>> {
  // expected-error @+1 {{operand #0 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float values}}
  %0 = sym.argmax %x : tensor<4x16xf64> -> tensor<4x!sym.symbol<16>>
  return %0 : tensor<4x!sym.symbol<16>>
}

// -----

func.func @argmax_result_not_symbols(%x: tensor<4x16xf32>) -> tensor<4xi32> {
  // expected-error @+1 {{result #0 must be ranked tensor of an id from a vocabulary of `vocab_size` symbols values}}
  %0 = sym.argmax %x : tensor<4x16xf32> -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @argmax_empty(%x: tensor<0x16xf32>) -> tensor<0x!sym.symbol<16>> {
  // expected-error @+1 {{type 'tensor<0x16xf32>' has a zero-sized dimension}}
  %0 = sym.argmax %x : tensor<0x16xf32> -> tensor<0x!sym.symbol<16>>
  return %0 : tensor<0x!sym.symbol<16>>
}

// -----

//===----------------------------------------------------------------------===//
// quantize
//===----------------------------------------------------------------------===//

func.func @quantize_vocab(%x: tensor<4x8xf32>, %c: tensor<12x8xf32>) -> tensor<4x!sym.symbol<16>> {
  // expected-error @+1 {{'codebook' row count must be the static vocabulary size 16, got 12}}
  %0 = sym.quantize %x, %c : tensor<4x8xf32>, tensor<12x8xf32> -> tensor<4x!sym.symbol<16>>
  return %0 : tensor<4x!sym.symbol<16>>
}

// -----

func.func @quantize_dynamic_vocab(%x: tensor<4x8xf32>, %c: tensor<?x8xf32>) -> tensor<4x!sym.symbol<16>> {
  // expected-error @+1 {{'codebook' row count must be the static vocabulary size 16, got ?}}
  %0 = sym.quantize %x, %c : tensor<4x8xf32>, tensor<?x8xf32> -> tensor<4x!sym.symbol<16>>
  return %0 : tensor<4x!sym.symbol<16>>
}

// -----

func.func @quantize_width(%x: tensor<4x8xf32>, %c: tensor<16x6xf32>) -> tensor<4x!sym.symbol<16>> {
  // expected-error @+1 {{'codebook' codewords have size 6 but 'input' vectors have size 8}}
  %0 = sym.quantize %x, %c : tensor<4x8xf32>, tensor<16x6xf32> -> tensor<4x!sym.symbol<16>>
  return %0 : tensor<4x!sym.symbol<16>>
}

// -----

func.func @quantize_elem(%x: tensor<4x8xf16>, %c: tensor<16x8xf32>) -> tensor<4x!sym.symbol<16>> {
  // expected-error @+1 {{'input' element type 'f16' differs from 'codebook' element type 'f32'}}
  %0 = sym.quantize %x, %c : tensor<4x8xf16>, tensor<16x8xf32> -> tensor<4x!sym.symbol<16>>
  return %0 : tensor<4x!sym.symbol<16>>
}

// -----

func.func @quantize_codebook_rank(%x: tensor<4x8xf32>, %c: tensor<1x16x8xf32>) -> tensor<4x!sym.symbol<16>> {
  // expected-error @+1 {{operand #1 must be 2D tensor of 16-bit float or bfloat16 type or 32-bit float values}}
  %0 = sym.quantize %x, %c : tensor<4x8xf32>, tensor<1x16x8xf32> -> tensor<4x!sym.symbol<16>>
  return %0 : tensor<4x!sym.symbol<16>>
}

// -----

func.func @quantize_result_rank(%x: tensor<4x8xf32>, %c: tensor<16x8xf32>) -> tensor<4x8x!sym.symbol<16>> {
  // expected-error @+1 {{result has rank 2 but 'input' without its last dim has rank 1}}
  %0 = sym.quantize %x, %c : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x8x!sym.symbol<16>>
  return %0 : tensor<4x8x!sym.symbol<16>>
}

// -----

func.func @quantize_shape(%x: tensor<2x4x8xf32>, %c: tensor<16x8xf32>) -> tensor<2x3x!sym.symbol<16>> {
  // expected-error @+1 {{result dim 1 is 3 but 'input' without its last dim dim 1 is 4}}
  %0 = sym.quantize %x, %c : tensor<2x4x8xf32>, tensor<16x8xf32> -> tensor<2x3x!sym.symbol<16>>
  return %0 : tensor<2x3x!sym.symbol<16>>
}

// -----

func.func @quantize_int(%x: tensor<4x8xi32>, %c: tensor<16x8xf32>) -> tensor<4x!sym.symbol<16>> {
  // expected-error @+1 {{operand #0 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float values}}
  %0 = sym.quantize %x, %c : tensor<4x8xi32>, tensor<16x8xf32> -> tensor<4x!sym.symbol<16>>
  return %0 : tensor<4x!sym.symbol<16>>
}

// -----

//===----------------------------------------------------------------------===//
// embed
//===----------------------------------------------------------------------===//

// The table's rows must be the symbols' vocabulary.
func.func @embed_vocab(%s: tensor<4x!sym.symbol<16>>, %t: tensor<12x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'table' row count must be the static vocabulary size 16, got 12}}
  %0 = sym.embed %s, %t : tensor<4x!sym.symbol<16>>, tensor<12x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @embed_dynamic_vocab(%s: tensor<4x!sym.symbol<16>>, %t: tensor<?x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'table' row count must be the static vocabulary size 16, got ?}}
  %0 = sym.embed %s, %t : tensor<4x!sym.symbol<16>>, tensor<?x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @embed_rank(%s: tensor<4x!sym.symbol<16>>, %t: tensor<16x8xf32>) -> tensor<32xf32> {
  // expected-error @+1 {{result has rank 1, expected 2 (the symbols' rank plus one)}}
  %0 = sym.embed %s, %t : tensor<4x!sym.symbol<16>>, tensor<16x8xf32> -> tensor<32xf32>
  return %0 : tensor<32xf32>
}

// -----

func.func @embed_shape(%s: tensor<4x!sym.symbol<16>>, %t: tensor<16x8xf32>) -> tensor<5x8xf32> {
  // expected-error @+1 {{result without its last dim dim 0 is 5 but 'symbols' dim 0 is 4}}
  %0 = sym.embed %s, %t : tensor<4x!sym.symbol<16>>, tensor<16x8xf32> -> tensor<5x8xf32>
  return %0 : tensor<5x8xf32>
}

// -----

func.func @embed_width(%s: tensor<4x!sym.symbol<16>>, %t: tensor<16x8xf32>) -> tensor<4x7xf32> {
  // expected-error @+1 {{result last dim is 7 but 'table' rows have size 8}}
  %0 = sym.embed %s, %t : tensor<4x!sym.symbol<16>>, tensor<16x8xf32> -> tensor<4x7xf32>
  return %0 : tensor<4x7xf32>
}

// -----

func.func @embed_elem(%s: tensor<4x!sym.symbol<16>>, %t: tensor<16x8xf32>) -> tensor<4x8xf16> {
  // expected-error @+1 {{result element type 'f16' differs from 'table' element type 'f32'}}
  %0 = sym.embed %s, %t : tensor<4x!sym.symbol<16>>, tensor<16x8xf32> -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// -----

func.func @embed_int_table(%s: tensor<4x!sym.symbol<16>>, %t: tensor<16x8xi32>) -> tensor<4x8xi32> {
  // expected-error @+1 {{operand #1 must be 2D tensor of 16-bit float or bfloat16 type or 32-bit float values}}
  %0 = sym.embed %s, %t : tensor<4x!sym.symbol<16>>, tensor<16x8xi32> -> tensor<4x8xi32>
  return %0 : tensor<4x8xi32>
}

// -----

func.func @embed_ids(%s: tensor<4xi32>, %t: tensor<16x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{operand #0 must be ranked tensor of an id from a vocabulary of `vocab_size` symbols values}}
  %0 = sym.embed %s, %t : tensor<4xi32>, tensor<16x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

//===----------------------------------------------------------------------===//
// one_hot
//===----------------------------------------------------------------------===//

func.func @one_hot_vocab(%s: tensor<4x!sym.symbol<16>>) -> tensor<4x15xf32> {
  // expected-error @+1 {{result last dimension must be the static vocabulary size 16, got 15}}
  %0 = sym.one_hot %s : tensor<4x!sym.symbol<16>> -> tensor<4x15xf32>
  return %0 : tensor<4x15xf32>
}

// -----

func.func @one_hot_rank(%s: tensor<4x!sym.symbol<16>>) -> tensor<4x1x16xf32> {
  // expected-error @+1 {{result has rank 3, expected 2 (the symbols' rank plus one)}}
  %0 = sym.one_hot %s : tensor<4x!sym.symbol<16>> -> tensor<4x1x16xf32>
  return %0 : tensor<4x1x16xf32>
}

// -----

func.func @one_hot_shape(%s: tensor<4x!sym.symbol<16>>) -> tensor<2x16xf32> {
  // expected-error @+1 {{result without its last dim dim 0 is 2 but 'symbols' dim 0 is 4}}
  %0 = sym.one_hot %s : tensor<4x!sym.symbol<16>> -> tensor<2x16xf32>
  return %0 : tensor<2x16xf32>
}

// -----

func.func @one_hot_int(%s: tensor<4x!sym.symbol<16>>) -> tensor<4x16xi8> {
  // expected-error @+1 {{result #0 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float values}}
  %0 = sym.one_hot %s : tensor<4x!sym.symbol<16>> -> tensor<4x16xi8>
  return %0 : tensor<4x16xi8>
}

// -----

//===----------------------------------------------------------------------===//
// from_index / to_index
//===----------------------------------------------------------------------===//

func.func @from_index_shape(%i: tensor<4xi32>) -> tensor<5x!sym.symbol<16>> {
  // expected-error @+1 {{result dim 0 is 5 but 'indices' dim 0 is 4}}
  %0 = sym.from_index %i : tensor<4xi32> -> tensor<5x!sym.symbol<16>>
  return %0 : tensor<5x!sym.symbol<16>>
}

// -----

func.func @from_index_rank(%i: tensor<4xi32>) -> tensor<4x1x!sym.symbol<16>> {
  // expected-error @+1 {{result has rank 2 but 'indices' has rank 1}}
  %0 = sym.from_index %i : tensor<4xi32> -> tensor<4x1x!sym.symbol<16>>
  return %0 : tensor<4x1x!sym.symbol<16>>
}

// -----

func.func @from_index_i8(%i: tensor<4xi8>) -> tensor<4x!sym.symbol<16>> {
  // expected-error @+1 {{operand #0 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values}}
  %0 = sym.from_index %i : tensor<4xi8> -> tensor<4x!sym.symbol<16>>
  return %0 : tensor<4x!sym.symbol<16>>
}

// -----

func.func @from_index_float(%i: tensor<4xf32>) -> tensor<4x!sym.symbol<16>> {
  // expected-error @+1 {{operand #0 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values}}
  %0 = sym.from_index %i : tensor<4xf32> -> tensor<4x!sym.symbol<16>>
  return %0 : tensor<4x!sym.symbol<16>>
}

// -----

func.func @to_index_shape(%s: tensor<4x!sym.symbol<16>>) -> tensor<2x2xi32> {
  // expected-error @+1 {{result has rank 2 but 'symbols' has rank 1}}
  %0 = sym.to_index %s : tensor<4x!sym.symbol<16>> -> tensor<2x2xi32>
  return %0 : tensor<2x2xi32>
}

// -----

func.func @to_index_dim(%s: tensor<4x?x!sym.symbol<16>>) -> tensor<3x2xi32> {
  // expected-error @+1 {{result dim 0 is 3 but 'symbols' dim 0 is 4}}
  %0 = sym.to_index %s : tensor<4x?x!sym.symbol<16>> -> tensor<3x2xi32>
  return %0 : tensor<3x2xi32>
}

// -----

func.func @to_index_ui32(%s: tensor<4x!sym.symbol<16>>) -> tensor<4xui32> {
  // expected-error @+1 {{result #0 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values}}
  %0 = sym.to_index %s : tensor<4x!sym.symbol<16>> -> tensor<4xui32>
  return %0 : tensor<4xui32>
}

// -----

//===----------------------------------------------------------------------===//
// sym.vocab on function arguments and results
//===----------------------------------------------------------------------===//

// expected-error @+1 {{'sym.vocab' = 8 on argument #0 disagrees with its type 'tensor<4x!sym.symbol<16>>'}}
func.func private @vocab_attr_mismatch(%s: tensor<4x!sym.symbol<16>> {sym.vocab = 8 : i64})

// -----

// expected-error @+1 {{'sym.vocab' on result #0 must be an i64, got 16 : i32}}
func.func private @vocab_attr_type() -> (tensor<4xi32> {sym.vocab = 16 : i32})

// -----

// expected-error @+1 {{'sym.vocab' on argument #1 must be in [1, 2^31], got 0}}
func.func private @vocab_attr_range(%a: tensor<4xi32>, %b: tensor<4xi32> {sym.vocab = 0 : i64})

// -----

// expected-error @+1 {{unknown sym attribute 'sym.vocabulary' on argument #0}}
func.func private @vocab_attr_name(%a: tensor<4xi32> {sym.vocabulary = 4 : i64})
