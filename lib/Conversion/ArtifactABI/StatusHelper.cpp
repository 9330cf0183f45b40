//===- StatusHelper.cpp - fail an entry call from compiled code -----------===//
#include "tessel/Conversion/StatusHelper.h"
#include "tessel/Conversion/Passes.h"

#include "tessel/Runtime/tessel_abi.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
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

Value mlir::tessel::zeroTensor(OpBuilder &b, Location loc,
                               RankedTensorType type,
                               ValueRange dynamicSizes) {
  Value empty = tensor::EmptyOp::create(b, loc, type.getShape(),
                                        type.getElementType(), dynamicSizes);
  Value zero = arith::ConstantOp::create(
      b, loc, cast<TypedAttr>(b.getZeroAttr(type.getElementType())));
  return linalg::FillOp::create(b, loc, zero, empty).getResult(0);
}

FailureOr<SmallVector<Value>> mlir::tessel::valuesOrShapeMismatch(
    Operation *anchor, OpBuilder &b, Location loc, Value ok,
    ValueRange values,
    function_ref<SmallVector<Value>(OpBuilder &, Location)> safe) {
  return valuesOrFail(anchor, b, loc, ok, TESSEL_ENTRY_SHAPE_MISMATCH, values,
                      safe);
}

FailureOr<SmallVector<Value>> mlir::tessel::valuesOrFail(
    Operation *anchor, OpBuilder &b, Location loc, Value ok, int32_t status,
    ValueRange values,
    function_ref<SmallVector<Value>(OpBuilder &, Location)> safe) {
  FailureOr<func::FuncOp> fail = getOrDeclareStatusHelper(anchor, b, loc);
  if (failed(fail))
    return failure();
  auto guarded = scf::IfOp::create(
      b, loc, ok,
      [&](OpBuilder &t, Location l) { scf::YieldOp::create(t, l, values); },
      [&](OpBuilder &e, Location l) {
        Value code = arith::ConstantOp::create(
            e, l, e.getI32IntegerAttr(status));
        func::CallOp::create(e, l, *fail, ValueRange{code});
        scf::YieldOp::create(e, l, safe(e, l));
      });
  return SmallVector<Value>(guarded.getResults());
}
