//===- StatusHelper.cpp - fail an entry call from compiled code -----------===//
#include "tessel/Conversion/StatusHelper.h"
#include "tessel/Conversion/Passes.h"

#include "mlir/IR/BuiltinOps.h"

using namespace mlir;

FailureOr<func::FuncOp>
mlir::tessel::getOrDeclareStatusHelper(Operation *anchor, OpBuilder &b,
                                       Location loc) {
  auto module = isa<ModuleOp>(anchor) ? cast<ModuleOp>(anchor)
                                      : anchor->getParentOfType<ModuleOp>();
  FunctionType type = b.getFunctionType({b.getI32Type()}, {});
  if (Operation *existing = module.lookupSymbol(kSetStatusHelperName)) {
    auto helper = dyn_cast<func::FuncOp>(existing);
    if (!helper || helper.getFunctionType() != type)
      return existing->emitError() << "the symbol '" << kSetStatusHelperName
                                   << "' is reserved for the artifact ABI";
    return helper;
  }
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(module.getBody());
  auto helper = func::FuncOp::create(b, loc, kSetStatusHelperName, type);
  helper.setPrivate();
  return helper;
}
