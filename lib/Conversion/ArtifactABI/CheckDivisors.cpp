//===- CheckDivisors.cpp - integer divisors checked at run time -----------===//
//
// An integer division by zero traps, and so does INT_MIN / -1: a model fed
// such data would kill its process. Each integer division or remainder on
// tensors gets a divisor guarded elementwise (1 where it is 0, or where a
// signed dividend is INT_MIN and the divisor -1: the wrapped results), and a
// zero divisor fails the entry call (TESSEL_ENTRY_DIVISION_BY_ZERO).
//
//===----------------------------------------------------------------------===//
#include "tessel/Conversion/Passes.h"
#include "tessel/Conversion/StatusHelper.h"
#include "tessel/Runtime/tessel_abi.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Matchers.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELCHECKDIVISORS
#include "tessel/Conversion/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;

namespace {

/// The dynamic sizes of `v`'s type, in order.
SmallVector<Value> dynamicSizes(OpBuilder &b, Location loc, Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      sizes.push_back(tensor::DimOp::create(b, loc, v, d));
  return sizes;
}

/// Whether every element of integer tensor `y` is nonzero, as an i1.
Value allNonzero(OpBuilder &b, Location loc, Value y) {
  return tessel::allElements(
      b, loc, y, [](OpBuilder &n, Location l, Value element) {
        Value zero = arith::ConstantOp::create(
            n, l, IntegerAttr::get(element.getType(), 0));
        return arith::CmpIOp::create(n, l, arith::CmpIPredicate::ne, element,
                                     zero)
            .getResult();
      });
}

/// y with 1 where it is 0 and, given a same-shaped signed dividend x, where
/// x is the minimum and y is -1.
Value guardedDivisor(OpBuilder &b, Location loc, Value y, Value x) {
  auto type = cast<RankedTensorType>(y.getType());
  int64_t rank = type.getRank();
  Value init = tensor::EmptyOp::create(b, loc, type.getShape(),
                                       type.getElementType(),
                                       dynamicSizes(b, loc, y));
  SmallVector<Value> ins = {y};
  if (x)
    ins.push_back(x);
  SmallVector<AffineMap> maps(ins.size() + 1, b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, type, ins, ValueRange{init}, maps, iterators,
             [&](OpBuilder &n, Location l, ValueRange args) {
               Type t = args[0].getType();
               unsigned w = t.getIntOrFloatBitWidth();
               auto cst = [&](const APInt &v) {
                 return arith::ConstantOp::create(n, l, IntegerAttr::get(t, v))
                     .getResult();
               };
               Value bad = arith::CmpIOp::create(n, l, arith::CmpIPredicate::eq,
                                                 args[0], cst(APInt(w, 0)));
               if (x) {
                 Value minusOne = arith::CmpIOp::create(
                     n, l, arith::CmpIPredicate::eq, args[0],
                     cst(APInt::getAllOnes(w)));
                 Value minimum = arith::CmpIOp::create(
                     n, l, arith::CmpIPredicate::eq, args[1],
                     cst(APInt::getSignedMinValue(w)));
                 bad = arith::OrIOp::create(
                     n, l, bad, arith::AndIOp::create(n, l, minusOne, minimum));
               }
               linalg::YieldOp::create(
                   n, l,
                   ValueRange{arith::SelectOp::create(n, l, bad, cst(APInt(w, 1)),
                                                      args[0])});
             })
      .getResult(0);
}

/// Whether a constant divisor needs no guard: no 0, and for a signed
/// division no -1 (whose dividend could be the minimum).
bool safeConstant(Value y, bool isSigned) {
  DenseIntElementsAttr c;
  if (!matchPattern(y, m_Constant(&c)))
    return false;
  return llvm::all_of(c.getValues<APInt>(), [&](const APInt &v) {
    return !v.isZero() && !(isSigned && v.isAllOnes());
  });
}

struct TesselCheckDivisorsPass
    : tessel::impl::TesselCheckDivisorsBase<TesselCheckDivisorsPass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<Operation *> divisions;
    getOperation().walk([&](Operation *op) {
      if (!isa<arith::DivSIOp, arith::DivUIOp, arith::RemSIOp, arith::RemUIOp,
               arith::FloorDivSIOp, arith::CeilDivSIOp, tosa::IntDivOp>(op))
        return;
      auto type = dyn_cast<RankedTensorType>(op->getOperand(1).getType());
      if (type && isa<IntegerType>(type.getElementType()))
        divisions.push_back(op);
    });
    for (Operation *op : divisions) {
      bool isSigned = !isa<arith::DivUIOp, arith::RemUIOp>(op);
      Value x = op->getOperand(0), y = op->getOperand(1);
      if (safeConstant(y, isSigned))
        continue;
      OpBuilder b(op);
      Location loc = op->getLoc();
      // The overflow guard needs elementwise partners (arith on tensors
      // always; a tosa.intdiv unless it broadcasts).
      Value partner = isSigned && x.getType() == y.getType() ? x : Value();
      Value safe = guardedDivisor(b, loc, y, partner);
      if (report) {
        Value ok = allNonzero(b, loc, y);
        FailureOr<SmallVector<Value>> checked = tessel::valuesOrFail(
            op, b, loc, ok, TESSEL_ENTRY_DIVISION_BY_ZERO, ValueRange{safe},
            [&](OpBuilder &, Location) { return SmallVector<Value>{safe}; });
        if (failed(checked))
          return signalPassFailure();
        safe = checked->front();
      }
      op->setOperand(1, safe);
    }
  }
};

} // namespace
