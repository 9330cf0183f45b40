//===- Passes.td - sym dialect passes ---------------------*- tablegen -*-===//
#ifndef TESSEL_DIALECT_SYM_TRANSFORMS_PASSES
#define TESSEL_DIALECT_SYM_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def TesselSimplifySym : Pass<"tessel-simplify-sym"> {
  let summary = "Rewrites that exploit the discreteness of symbols";
  let description = [{
    Model-level rewrites (docs/dialects/sym.md has the proofs):

    - **one-hot matmul to gather**: `tosa.matmul(sym.one_hot(s), W)`, the
      one-hot possibly reshaped to `1 x H x V` by `tosa.reshape`, with `W`
      of shape `1 x V x D`, becomes `sym.embed(s, W as V x D)` reshaped to
      the matmul's result: a row gather instead of `H*V*D` multiply-adds.
      Only when every weight is finite (0 * inf would make the matmul NaN
      where the gather is not): `W` must be a constant, or
      `assume-finite-weights` must be set.
    - **argmax of one-hot**: `sym.argmax(sym.one_hot(s))` is `s`.
    - **codebook round trip**: `sym.quantize(sym.embed(s, C), C)` is `s` when
      `C` is a constant whose rows are finite and pairwise distinct, with a
      margin that covers the rounding of the lowered distance computation.
    - **constant codebook**: `sym.quantize(x, C)` with a constant `C`
      becomes `sym.argmax(x . Ct - |c|^2 / 2)` with `Ct` and `|c|^2 / 2`
      computed at compile time: the per-call work is one matmul and one
      subtraction (this is what an `embed` after a discretization by a
      known codebook costs at run time; the embed itself is already a row
      lookup).
    - `sym.from_index(sym.to_index(s))` is `s` (a folder).
  }];
  let options = [
    Option<"assumeFiniteWeights", "assume-finite-weights", "bool",
           /*default=*/"false",
           "Rewrite one-hot matmuls whose weights are not constants, "
           "assuming they hold no inf or NaN">,
  ];
  let dependentDialects = ["::mlir::tessel::sym::SymDialect",
                           "::mlir::tosa::TosaDialect",
                           "::mlir::tensor::TensorDialect"];
}

def TesselLowerSym : Pass<"tessel-lower-sym", "::mlir::ModuleOp"> {
  let summary = "Lower sym ops to TOSA and symbol types to i32 ids";
  let description = [{
    A dialect conversion: every `tensor<...x!sym.symbol<V>>` becomes
    `tensor<...xi32>` everywhere (function signatures, calls, returns,
    block arguments, any op that carries symbols), and every sym op becomes
    TOSA (plus `tensor` reshapes where shapes are dynamic):

    | op | becomes |
    |---|---|
    | argmax | `tosa.argmax` over the last axis |
    | quantize | `tosa.matmul(x, Ct) - reduce_sum(C*C)/2`, then `tosa.argmax` |
    | embed | `tosa.gather` of the `1 x V x D` table by `1 x N` ids |
    | one_hot | `tosa.equal` with an iota constant, `tosa.select` 1/0 |
    | from_index | `tosa.clamp` to `[0, V-1]`, `tosa.cast` to i32 |
    | to_index | `tosa.cast` (nothing for i32) |

    Function arguments and results that had a symbol type get the attribute
    `sym.vocab = V : i64`, so the interface survives in the lowered
    signature. First pass of `tessel-model-to-linalg`.
  }];
  let dependentDialects = ["::mlir::tosa::TosaDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

#endif // TESSEL_DIALECT_SYM_TRANSFORMS_PASSES
