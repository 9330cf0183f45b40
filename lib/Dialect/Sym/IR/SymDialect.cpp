//===- SymDialect.cpp - sym dialect registration, type and attributes -----===//
#include "tessel/Dialect/Sym/IR/SymDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tessel::sym;

#include "tessel/Dialect/Sym/IR/SymOpsDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "tessel/Dialect/Sym/IR/SymTypes.cpp.inc"

void SymDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "tessel/Dialect/Sym/IR/SymOps.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "tessel/Dialect/Sym/IR/SymTypes.cpp.inc"
      >();
}

LogicalResult
SymbolType::verify(function_ref<InFlightDiagnostic()> emitError,
                   int64_t vocabSize) {
  if (vocabSize < 1 || vocabSize > kMaxVocabSize)
    return emitError() << "!sym.symbol vocabulary size must be in [1, 2^31] "
                          "(ids lower to i32), got "
                       << vocabSize;
  return success();
}

//===----------------------------------------------------------------------===//
// `sym.vocab` on function arguments and results
//===----------------------------------------------------------------------===//

/// Checks one `sym.vocab` attribute on the argument or result of type `type`
/// (null when the op is not a function): an i64 in the symbol type's range,
/// equal to the vocabulary when the value still has a symbol type.
static LogicalResult verifyVocabAttr(Operation *op, NamedAttribute attr,
                                     StringRef what, unsigned index,
                                     Type type) {
  StringRef name = attr.getName().getValue();
  if (name != SymDialect::getVocabAttrName())
    return op->emitError() << "unknown sym attribute '" << name
                           << "' on " << what << " #" << index;
  auto vocab = dyn_cast<IntegerAttr>(attr.getValue());
  if (!vocab || !vocab.getType().isSignlessInteger(64))
    return op->emitError() << "'" << name << "' on " << what
                           << " #" << index << " must be an i64, got "
                           << attr.getValue();
  int64_t v = vocab.getInt();
  if (v < 1 || v > SymbolType::kMaxVocabSize)
    return op->emitError() << "'" << name << "' on " << what
                           << " #" << index
                           << " must be in [1, 2^31], got " << v;
  if (SymbolType sym = getSymbolElementType(type);
      sym && sym.getVocabSize() != v)
    return op->emitError() << "'" << name << "' = " << v << " on "
                           << what << " #" << index
                           << " disagrees with its type " << type;
  return success();
}

LogicalResult SymDialect::verifyRegionArgAttribute(Operation *op,
                                                   unsigned regionIndex,
                                                   unsigned argIndex,
                                                   NamedAttribute attr) {
  Type type;
  if (auto fn = dyn_cast<FunctionOpInterface>(op);
      fn && argIndex < fn.getNumArguments())
    type = fn.getArgumentTypes()[argIndex];
  return verifyVocabAttr(op, attr, "argument", argIndex, type);
}

LogicalResult SymDialect::verifyRegionResultAttribute(Operation *op,
                                                      unsigned regionIndex,
                                                      unsigned resultIndex,
                                                      NamedAttribute attr) {
  Type type;
  if (auto fn = dyn_cast<FunctionOpInterface>(op);
      fn && resultIndex < fn.getNumResults())
    type = fn.getResultTypes()[resultIndex];
  return verifyVocabAttr(op, attr, "result", resultIndex, type);
}
