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

Value mlir::tessel::allElements(
    OpBuilder &b, Location loc, Value t,
    function_ref<Value(OpBuilder &, Location, Value)> holds) {
  int64_t rank = cast<RankedTensorType>(t.getType()).getRank();
  Value init = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{},
                                       b.getI1Type());
  Value yes = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1);
  init = linalg::FillOp::create(b, loc, yes, init).getResult(0);
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(rank),
                                 AffineMap::get(rank, 0, {}, b.getContext())};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::reduction);
  auto reduce = linalg::GenericOp::create(
      b, loc, init.getType(), ValueRange{t}, ValueRange{init}, maps, iterators,
      [&](OpBuilder &n, Location l, ValueRange args) {
        Value ok = holds(n, l, args[0]);
        linalg::YieldOp::create(
            n, l, ValueRange{arith::AndIOp::create(n, l, ok, args[1])});
      });
  return tensor::ExtractOp::create(b, loc, reduce.getResult(0), ValueRange{});
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
