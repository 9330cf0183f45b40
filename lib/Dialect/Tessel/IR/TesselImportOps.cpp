//===- TesselImportOps.cpp - verifier of tessel.call_import ----------------===//
//
// The callee runs in another artifact and trusts its buffers as an entry
// point does (no shapes are passed), so the verifier pins every type to the
// import's interface.
//
//===----------------------------------------------------------------------===//
#include "tessel/Dialect/Tessel/IR/TesselDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace mlir::tessel;

LogicalResult CallImportOp::verify() {
  if (getInits().empty())
    return emitOpError() << "needs at least one init: an import has results";
  bool tensors = isa<RankedTensorType>(getInits().front().getType());
  for (Value v : getOperands()) {
    auto t = dyn_cast<ShapedType>(v.getType());
    if (!t || !t.hasRank() || isa<RankedTensorType>(t) != tensors)
      return emitOpError() << "operands must be all ranked tensors or all "
                              "memrefs, got "
                           << v.getType();
  }
  if (!tensors) {
    if (getNumResults() != 0)
      return emitOpError() << "has no results on memrefs";
    return success();
  }
  if (getNumResults() != getInits().size())
    return emitOpError() << "has " << getNumResults() << " results for "
                         << getInits().size() << " inits";
  for (auto [result, init] : llvm::zip(getResultTypes(), getInits()))
    if (result != init.getType())
      return emitOpError() << "result type " << result
                           << " differs from its init type " << init.getType();
  return success();
}

/// Shape and element type: a memref matches the tensor it was bufferized
/// from.
static bool sameShapedType(Type a, Type b) {
  auto sa = cast<ShapedType>(a), sb = cast<ShapedType>(b);
  return sa.getElementType() == sb.getElementType() &&
         sa.getShape() == sb.getShape();
}

LogicalResult
CallImportOp::verifySymbolUses(SymbolTableCollection &symbols) {
  Operation *target = symbols.lookupNearestSymbolFrom(*this, getCalleeAttr());
  if (!target) {
    // After tessel-record-signature: the declaration became a record.
    auto module = (*this)->getParentOfType<ModuleOp>();
    auto records = module ? module->getAttrOfType<ArrayAttr>(
                                TesselDialect::getImportsAttrName())
                          : ArrayAttr();
    for (Attribute a : records ? records.getValue() : ArrayRef<Attribute>()) {
      auto d = dyn_cast<DictionaryAttr>(a);
      auto name = d ? d.getAs<StringAttr>("name") : StringAttr();
      if (name && name.getValue() == getCallee())
        return success();
    }
    return emitOpError() << "callee " << getCalleeAttr()
                         << " is neither a declaration marked '"
                         << TesselDialect::getImportAttrName()
                         << "' nor recorded in '"
                         << TesselDialect::getImportsAttrName() << "'";
  }
  auto fn = dyn_cast<func::FuncOp>(target);
  if (!fn || !fn.isDeclaration() ||
      !fn->hasAttr(TesselDialect::getImportAttrName()))
    return emitOpError() << "callee " << getCalleeAttr()
                         << " must be a func.func declaration marked '"
                         << TesselDialect::getImportAttrName() << "'";
  FunctionType type = fn.getFunctionType();
  if (type.getNumInputs() != getInputs().size() ||
      type.getNumResults() != getInits().size())
    return emitOpError() << "passes " << getInputs().size() << " inputs and "
                         << getInits().size() << " inits, but import "
                         << getCalleeAttr() << " takes " << type.getNumInputs()
                         << " and returns " << type.getNumResults();
  for (auto [i, v] : llvm::enumerate(getInputs()))
    if (!isa<ShapedType>(type.getInput(i)) ||
        !sameShapedType(v.getType(), type.getInput(i)))
      return emitOpError() << "input #" << i << " of type " << v.getType()
                           << " does not match the import's "
                           << type.getInput(i);
  for (auto [i, v] : llvm::enumerate(getInits()))
    if (!isa<ShapedType>(type.getResult(i)) ||
        !sameShapedType(v.getType(), type.getResult(i)))
      return emitOpError() << "init #" << i << " of type " << v.getType()
                           << " does not match the import's result "
                           << type.getResult(i);
  return success();
}

void CallImportOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  // On tensors the op is a pure function of its inputs (entries hold no
  // state, docs/artifact-abi.md); on memrefs it reads the inputs and
  // writes every init.
  for (OpOperand &operand : getInputsMutable())
    if (isa<MemRefType>(operand.get().getType()))
      effects.emplace_back(MemoryEffects::Read::get(), &operand, /*stage=*/0,
                           /*effectOnFullRegion=*/true,
                           SideEffects::DefaultResource::get());
  for (OpOperand &operand : getInitsMutable())
    if (isa<MemRefType>(operand.get().getType()))
      effects.emplace_back(MemoryEffects::Write::get(), &operand, /*stage=*/0,
                           /*effectOnFullRegion=*/true,
                           SideEffects::DefaultResource::get());
}
