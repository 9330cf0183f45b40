//===- SymDialect.td - symbolic component interfaces ------*- tablegen -*-===//
//
// The `sym` dialect models discrete symbols at the boundaries between model
// components: one component emits symbol ids from a vocabulary, the next
// embeds them. A discrete interface stops errors from propagating (a slightly
// wrong logit still yields the right symbol) and makes the interface
// checkable: a component whose signature takes `tensor<...x!sym.symbol<V>>`
// declares that it requires symbols of vocabulary V at its boundary.
// `tessel-lower-sym` lowers everything here to TOSA on i32 ids.
//
//===----------------------------------------------------------------------===//
#ifndef SYM_DIALECT_TD
#define SYM_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Sym_Dialect : Dialect {
  let name = "sym";
  let cppNamespace = "::mlir::tessel::sym";
  let summary = "Discrete symbols at the interfaces between model components";
  let description = [{
    A symbol is an id in `[0, V)` drawn from a vocabulary of size `V`; its
    type is `!sym.symbol<V>` and it is used as the element type of ranked
    tensors. Symbol tensors come from discretizing floats (`sym.argmax`,
    `sym.quantize`) or from integer ids (`sym.from_index`, which clamps) and
    go back to floats (`sym.embed`, `sym.one_hot`) or to ids
    (`sym.to_index`). Every op keeps the invariant that a symbol tensor only
    holds ids in `[0, V)`, so consumers never need a bounds check.

    The symbol type in a function signature is the interface declaration:
    two components agree on an interface exactly when their symbol types
    are equal, i.e. when their vocabularies are equal. After lowering, the
    vocabulary survives as the argument/result attribute `sym.vocab = V`.
  }];
  let useDefaultTypePrinterParser = 1;
  // `sym.vocab` on function arguments and results (set by tessel-lower-sym).
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let extraClassDeclaration = [{
    /// The argument/result attribute that records a lowered symbol
    /// interface's vocabulary size (an i64).
    static constexpr ::llvm::StringLiteral getVocabAttrName() {
      return ::llvm::StringLiteral("sym.vocab");
    }
  }];
}

class Sym_Op<string mnemonic, list<Trait> traits = []>
    : Op<Sym_Dialect, mnemonic, traits>;

#endif // SYM_DIALECT_TD
