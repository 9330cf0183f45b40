//===- SymTypes.td - the symbol type ----------------------*- tablegen -*-===//
#ifndef SYM_TYPES_TD
#define SYM_TYPES_TD

include "tessel/Dialect/Sym/IR/SymDialect.td"

def Sym_SymbolType : TypeDef<Sym_Dialect, "Symbol"> {
  let mnemonic = "symbol";
  let summary = "an id from a vocabulary of `vocab_size` symbols";
  let description = [{
    One discrete symbol: an id in `[0, vocab_size)`. Used as the element
    type of ranked tensors, e.g. `tensor<64x!sym.symbol<512>>` is 64 symbols
    from a vocabulary of 512. Two symbol types are equal exactly when their
    vocabularies are, so type equality is interface compatibility.

    `vocab_size` is at least 1 and at most 2^31: symbols lower to i32 ids
    (the index type of `tosa.argmax` and `tosa.gather`).
  }];
  let parameters = (ins "int64_t":$vocabSize);
  let assemblyFormat = "`<` $vocabSize `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The largest vocabulary whose ids all fit in i32.
    static constexpr int64_t kMaxVocabSize = int64_t(1) << 31;
  }];
}

/// A ranked tensor of symbols (any vocabulary).
def Sym_SymbolTensor : RankedTensorOf<[Sym_SymbolType]>;

#endif // SYM_TYPES_TD
