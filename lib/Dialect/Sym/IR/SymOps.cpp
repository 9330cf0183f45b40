//===- SymOps.cpp - sym op verifiers and folders ---------------------------===//
//
// Verifiers reject every malformed op with a diagnostic naming the operand
// at fault and the sizes involved; the lowering and the rewrites rely on
// these invariants (ranks, vocabulary dims static and equal to V).
//
//===----------------------------------------------------------------------===//
#include "tessel/Dialect/Sym/IR/SymDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::tessel::sym;

namespace {

/// A dimension size for diagnostics: `?` when dynamic.
std::string dimStr(int64_t d) {
  return ShapedType::isDynamic(d) ? "?" : std::to_string(d);
}

/// Static-size equality that lets dynamic sizes through (checked at run time).
bool compatibleDim(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

int64_t vocabOf(Value v) { return getSymbolElementType(v.getType()).getVocabSize(); }

RankedTensorType tensorOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// TOSA, which these ops lower to, rejects zero-sized tensors; say so here,
/// at the op the user wrote.
LogicalResult verifyNonEmpty(Operation *op) {
  for (Type t : llvm::concat<const Type>(op->getOperandTypes(),
                                         op->getResultTypes()))
    if (auto shaped = dyn_cast<RankedTensorType>(t);
        shaped && llvm::is_contained(shaped.getShape(), 0))
      return op->emitOpError() << "type " << t
                               << " has a zero-sized dimension";
  return success();
}

/// `size` (the dimension `what` indexes by symbol id) must be static and V.
LogicalResult verifyVocabDim(Operation *op, StringRef what, int64_t size,
                             int64_t vocab) {
  if (size != vocab)
    return op->emitOpError()
           << what << " must be the static vocabulary size " << vocab
           << ", got " << dimStr(size);
  return success();
}

/// `got` must have the rank of `want` and compatible dims (dynamic matches
/// anything). `gotName`/`wantName` name the two shapes in the diagnostic.
LogicalResult verifySameShape(Operation *op, StringRef gotName,
                              ArrayRef<int64_t> got, StringRef wantName,
                              ArrayRef<int64_t> want) {
  if (got.size() != want.size())
    return op->emitOpError() << gotName << " has rank " << got.size()
                             << " but " << wantName << " has rank "
                             << want.size();
  for (auto [i, g, w] : llvm::enumerate(got, want))
    if (!compatibleDim(g, w))
      return op->emitOpError() << gotName << " dim " << i << " is "
                               << dimStr(g) << " but " << wantName
                               << " dim " << i << " is " << dimStr(w);
  return success();
}

/// Checks a discretizing op: `input` (rank >= 1, last dim the class/vector
/// dim) gives `result` (symbols, the leading dims of `input`).
LogicalResult verifyDropsLastDim(Operation *op, StringRef inputName,
                                 RankedTensorType input,
                                 RankedTensorType result) {
  if (input.getRank() < 1)
    return op->emitOpError() << "'" << inputName
                             << "' must have rank >= 1, got " << input;
  return verifySameShape(op, "result", result.getShape(),
                         "'" + inputName.str() + "' without its last dim",
                         input.getShape().drop_back());
}

/// Checks an op that appends a dimension: `result` has the symbols' dims
/// then one more.
LogicalResult verifyAppendsLastDim(Operation *op, RankedTensorType symbols,
                                   RankedTensorType result) {
  if (result.getRank() != symbols.getRank() + 1)
    return op->emitOpError() << "result has rank " << result.getRank()
                             << ", expected " << symbols.getRank() + 1
                             << " (the symbols' rank plus one)";
  return verifySameShape(op, "result without its last dim",
                         result.getShape().drop_back(), "'symbols'",
                         symbols.getShape());
}

} // namespace

LogicalResult ArgMaxOp::verify() {
  if (failed(verifyNonEmpty(*this)))
    return failure();
  RankedTensorType in = getLogits().getType();
  if (failed(verifyDropsLastDim(*this, "logits", in, getResult().getType())))
    return failure();
  return verifyVocabDim(*this, "'logits' last dimension",
                        in.getShape().back(), vocabOf(getResult()));
}

LogicalResult QuantizeOp::verify() {
  if (failed(verifyNonEmpty(*this)))
    return failure();
  RankedTensorType in = getInput().getType();
  RankedTensorType cb = tensorOf(getCodebook());
  if (in.getElementType() != cb.getElementType())
    return emitOpError() << "'input' element type " << in.getElementType()
                         << " differs from 'codebook' element type "
                         << cb.getElementType();
  if (failed(verifyDropsLastDim(*this, "input", in, getResult().getType())))
    return failure();
  if (!compatibleDim(cb.getDimSize(1), in.getShape().back()))
    return emitOpError() << "'codebook' codewords have size "
                         << dimStr(cb.getDimSize(1))
                         << " but 'input' vectors have size "
                         << dimStr(in.getShape().back());
  return verifyVocabDim(*this, "'codebook' row count", cb.getDimSize(0),
                        vocabOf(getResult()));
}

LogicalResult EmbedOp::verify() {
  if (failed(verifyNonEmpty(*this)))
    return failure();
  RankedTensorType sy = getSymbols().getType();
  RankedTensorType table = tensorOf(getTable());
  RankedTensorType out = getResult().getType();
  if (failed(verifyVocabDim(*this, "'table' row count", table.getDimSize(0),
                            vocabOf(getSymbols()))))
    return failure();
  if (out.getElementType() != table.getElementType())
    return emitOpError() << "result element type " << out.getElementType()
                         << " differs from 'table' element type "
                         << table.getElementType();
  if (failed(verifyAppendsLastDim(*this, sy, out)))
    return failure();
  if (!compatibleDim(out.getShape().back(), table.getDimSize(1)))
    return emitOpError() << "result last dim is "
                         << dimStr(out.getShape().back())
                         << " but 'table' rows have size "
                         << dimStr(table.getDimSize(1));
  return success();
}

LogicalResult OneHotOp::verify() {
  if (failed(verifyNonEmpty(*this)))
    return failure();
  RankedTensorType out = getResult().getType();
  if (failed(verifyAppendsLastDim(*this, getSymbols().getType(), out)))
    return failure();
  return verifyVocabDim(*this, "result last dimension", out.getShape().back(),
                        vocabOf(getSymbols()));
}

LogicalResult FromIndexOp::verify() {
  if (failed(verifyNonEmpty(*this)))
    return failure();
  return verifySameShape(*this, "result", getResult().getType().getShape(),
                         "'indices'", getIndices().getType().getShape());
}

/// from_index(to_index(s)) is s: to_index yields ids in [0, V), which the
/// clamp leaves alone. Only with the same vocabulary and shape (the types
/// are then equal).
OpFoldResult FromIndexOp::fold(FoldAdaptor) {
  if (auto toIndex = getIndices().getDefiningOp<ToIndexOp>();
      toIndex && toIndex.getSymbols().getType() == getResult().getType())
    return toIndex.getSymbols();
  return {};
}

LogicalResult ToIndexOp::verify() {
  if (failed(verifyNonEmpty(*this)))
    return failure();
  return verifySameShape(*this, "result", getResult().getType().getShape(),
                         "'symbols'", getSymbols().getType().getShape());
}

#define GET_OP_CLASSES
#include "tessel/Dialect/Sym/IR/SymOps.cpp.inc"
