//===- SymOps.td - symbol discretization and embedding ops *- tablegen -*-===//
//
// All ops work on ranked tensors (static or dynamic dims) and carry the
// vocabulary in the symbol type of their symbol operand or result. The
// dimension a vocabulary indexes (the logits' classes, the codebook's and
// the table's rows, the one-hot width) must be static and equal to V: a
// dynamic size there could produce or read ids outside [0, V).
//
//===----------------------------------------------------------------------===//
#ifndef SYM_OPS_TD
#define SYM_OPS_TD

include "tessel/Dialect/Sym/IR/SymDialect.td"
include "tessel/Dialect/Sym/IR/SymTypes.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

/// Float element types: those TOSA matmul/gather take and argmax compares.
def Sym_FloatTensor : RankedTensorOf<[F16, BF16, F32]>;
def Sym_Float2DTensor : 2DTensorOf<[F16, BF16, F32]>;
def Sym_IndexTensor : RankedTensorOf<[I32, I64]>;

//===----------------------------------------------------------------------===//
// Discretization: floats -> symbols
//===----------------------------------------------------------------------===//

def Sym_ArgMaxOp : Sym_Op<"argmax", [Pure]> {
  let summary = "the symbol whose logit is largest (over the last dim)";
  let description = [{
    `result[i...] = argmax_k logits[i..., k]` over the last dimension, which
    must be the static vocabulary size `V` of the result's symbol type; the
    result drops that dimension. Ties go to the lowest index (numpy/torch
    `argmax`). NaN: the lowering (`tosa.argmax`, NaN mode `PROPAGATE`)
    returns the index of the first NaN in the row, as numpy/torch do. One
    corner case of that lowering differs from numpy: a row whose maximum is
    the lowest finite value or -inf, preceded by -inf, gives 0
    (docs/dialects/sym.md).

    ```mlir
    %s = sym.argmax %logits : tensor<4x16xf32> -> tensor<4x!sym.symbol<16>>
    ```
  }];
  let arguments = (ins Sym_FloatTensor:$logits);
  let results = (outs Sym_SymbolTensor:$result);
  let assemblyFormat = "$logits attr-dict `:` type($logits) `->` type($result)";
  let hasVerifier = 1;
}

def Sym_QuantizeOp : Sym_Op<"quantize", [Pure]> {
  let summary = "nearest codeword by squared L2 distance (vector quantization)";
  let description = [{
    `result[i...] = argmin_j sum_d (input[i..., d] - codebook[j, d])^2`:
    each vector along the last dimension (`D`) of `input` becomes the id of
    its nearest row of the `V x D` codebook. Ties go to the lowest index.
    `input` and `codebook` have the same float element type; the result
    drops the last dimension and has vocabulary `V` (the codebook's static
    row count).

    ```mlir
    %s = sym.quantize %x, %codebook : tensor<4x8xf32>, tensor<16x8xf32>
        -> tensor<4x!sym.symbol<16>>
    ```
  }];
  let arguments = (ins Sym_FloatTensor:$input, Sym_Float2DTensor:$codebook);
  let results = (outs Sym_SymbolTensor:$result);
  let assemblyFormat = [{
    $input `,` $codebook attr-dict `:` type($input) `,` type($codebook)
    `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Embedding: symbols -> floats
//===----------------------------------------------------------------------===//

def Sym_EmbedOp : Sym_Op<"embed", [Pure]> {
  let summary = "the table row of each symbol (row gather)";
  let description = [{
    `result[i..., d] = table[symbols[i...], d]`. `table` is `V x D` with `V`
    static and equal to the symbols' vocabulary; the result appends `D` to
    the symbols' shape and has the table's element type. Symbols are in
    `[0, V)` by construction, so the gather never reads out of bounds.

    ```mlir
    %e = sym.embed %s, %table : tensor<4x!sym.symbol<16>>, tensor<16x8xf32>
        -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Sym_SymbolTensor:$symbols, Sym_Float2DTensor:$table);
  let results = (outs Sym_FloatTensor:$result);
  let assemblyFormat = [{
    $symbols `,` $table attr-dict `:` type($symbols) `,` type($table)
    `->` type($result)
  }];
  let hasVerifier = 1;
}

def Sym_OneHotOp : Sym_Op<"one_hot", [Pure]> {
  let summary = "one-hot encoding of symbols";
  let description = [{
    `result[i..., k] = symbols[i...] == k ? 1.0 : 0.0` for `k` in `[0, V)`.
    The result appends the static dimension `V` to the symbols' shape; its
    float element type (f16, bf16 or f32) is chosen by the result type.

    ```mlir
    %h = sym.one_hot %s : tensor<4x!sym.symbol<16>> -> tensor<4x16xf32>
    ```
  }];
  let arguments = (ins Sym_SymbolTensor:$symbols);
  let results = (outs Sym_FloatTensor:$result);
  let assemblyFormat = "$symbols attr-dict `:` type($symbols) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Integer ids <-> symbols
//===----------------------------------------------------------------------===//

def Sym_FromIndexOp : Sym_Op<"from_index", [Pure]> {
  let summary = "integer ids to symbols, clamping into the vocabulary";
  let description = [{
    `result[i...] = clamp(indices[i...], 0, V - 1)`: ids below 0 become
    symbol 0, ids of `V` or more become symbol `V - 1`, so the result keeps
    the symbol invariant whatever the ids (a producer outside the model,
    e.g. a tokenizer, is not trusted). Same shape as `indices` (i32 or i64).

    ```mlir
    %s = sym.from_index %ids : tensor<4xi64> -> tensor<4x!sym.symbol<16>>
    ```
  }];
  let arguments = (ins Sym_IndexTensor:$indices);
  let results = (outs Sym_SymbolTensor:$result);
  let assemblyFormat = "$indices attr-dict `:` type($indices) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Sym_ToIndexOp : Sym_Op<"to_index", [Pure]> {
  let summary = "symbols to their integer ids";
  let description = [{
    `result[i...] = symbols[i...]` as an i32 or i64 id in `[0, V)`, same
    shape.

    ```mlir
    %ids = sym.to_index %s : tensor<4x!sym.symbol<16>> -> tensor<4xi32>
    ```
  }];
  let arguments = (ins Sym_SymbolTensor:$symbols);
  let results = (outs Sym_IndexTensor:$result);
  let assemblyFormat = "$symbols attr-dict `:` type($symbols) `->` type($result)";
  let hasVerifier = 1;
}

#endif // SYM_OPS_TD
