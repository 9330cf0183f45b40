//===- LowerIndexChecks.cpp - tessel.check_indices at run time ------------===//
//
// A gather or scatter trusts its indices: one out of range reads or writes
// out of bounds. Where a format defines such an index as an error, the
// importer wraps the indices in tessel.check_indices; this pass expands
// each into a reduction (every index in [lower, upper)?) and a guard that
// fails the entry call and substitutes zeros, which are in range.
//
//===----------------------------------------------------------------------===//
#include "tessel/Conversion/Passes.h"
#include "tessel/Conversion/StatusHelper.h"
#include "tessel/Dialect/Tessel/IR/TesselDialect.h"
#include "tessel/Runtime/tessel_abi.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Matchers.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELLOWERINDEXCHECKS
#include "tessel/Conversion/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;

namespace {

/// Whether every element of `indices` lies in [lower, upper), as an i1.
Value allInRange(OpBuilder &b, Location loc, Value indices, int64_t lower,
                 int64_t upper) {
  Type elem = cast<RankedTensorType>(indices.getType()).getElementType();
  return tessel::allElements(
      b, loc, indices, [&](OpBuilder &n, Location l, Value index) {
        Value lo = arith::ConstantOp::create(n, l, IntegerAttr::get(elem, lower));
        Value hi = arith::ConstantOp::create(n, l, IntegerAttr::get(elem, upper));
        Value above =
            arith::CmpIOp::create(n, l, arith::CmpIPredicate::sge, index, lo);
        Value below =
            arith::CmpIOp::create(n, l, arith::CmpIPredicate::slt, index, hi);
        return arith::AndIOp::create(n, l, above, below).getResult();
      });
}

/// `indices` clamped into [lower, upper), elementwise.
Value clampInto(OpBuilder &b, Location loc, Value indices, int64_t lower,
                int64_t upper) {
  auto type = cast<RankedTensorType>(indices.getType());
  Type elem = type.getElementType();
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      sizes.push_back(tensor::DimOp::create(b, loc, indices, d));
  Value init = tensor::EmptyOp::create(b, loc, type.getShape(), elem, sizes);
  SmallVector<AffineMap> maps(2, b.getMultiDimIdentityMap(type.getRank()));
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, type, ValueRange{indices}, ValueRange{init}, maps,
             iterators,
             [&](OpBuilder &n, Location l, ValueRange args) {
               Value lo = arith::ConstantOp::create(
                   n, l, IntegerAttr::get(elem, lower));
               Value hi = arith::ConstantOp::create(
                   n, l, IntegerAttr::get(elem, upper - 1));
               Value v = arith::MaxSIOp::create(n, l, args[0], lo);
               linalg::YieldOp::create(
                   n, l, ValueRange{arith::MinSIOp::create(n, l, v, hi)});
             })
      .getResult(0);
}

/// The tensor whose elements `v` repeats or rearranges (through tiles,
/// reshapes, transposes and casts of its type): an importer's broadcast
/// of constant positions (Resize's rows and columns, tiled over every
/// channel) holds no index the constant does not.
Value elementSource(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (isa<tosa::TileOp, tosa::ReshapeOp, tosa::TransposeOp, tensor::CastOp>(
            def))
      v = def->getOperand(0);
    else
      break;
  }
  return v;
}

struct TesselLowerIndexChecksPass
    : tessel::impl::TesselLowerIndexChecksBase<TesselLowerIndexChecksPass> {
  using Base::Base;
  void runOnOperation() override {
    // TOSA leaves an index out of range undefined: every gather and scatter
    // whose indices are computed (MLIR models use them directly) gets the
    // check on [0, K) too; a constant in range needs none, nor a tile of
    // one (checked over LR-ASPP's 224 x 224 x 21 upsampling, the tiled
    // positions were materialized and scanned twice: 1M elements each).
    getOperation().walk([&](Operation *op) {
      if (!isa<tosa::GatherOp, tosa::ScatterOp>(op))
        return;
      Value values = op->getOperand(0), indices = op->getOperand(1);
      auto valuesType = dyn_cast<RankedTensorType>(values.getType());
      auto indicesType = dyn_cast<RankedTensorType>(indices.getType());
      if (!valuesType || !indicesType || valuesType.getRank() != 3 ||
          valuesType.isDynamicDim(1) || valuesType.getDimSize(1) < 1)
        return;
      int64_t k = valuesType.getDimSize(1);
      DenseIntElementsAttr constant;
      if (matchPattern(elementSource(indices), m_Constant(&constant)) &&
          llvm::all_of(constant.getValues<APInt>(), [&](const APInt &v) {
            return !v.isNegative() && v.getSExtValue() < k;
          }))
        return;
      OpBuilder b(op);
      op->setOperand(1, tessel::CheckIndicesOp::create(
                            b, op->getLoc(), indicesType, indices, 0, k));
    });
    // Run-time requirements: the value, or the fallback and a failed call.
    SmallVector<tessel::RequireOp> requires;
    getOperation().walk([&](tessel::RequireOp op) { requires.push_back(op); });
    for (tessel::RequireOp op : requires) {
      OpBuilder b(op);
      Location loc = op.getLoc();
      Value ok = tensor::ExtractOp::create(b, loc, op.getCondition(),
                                           ValueRange{});
      if (!report) {
        op.replaceAllUsesWith(arith::SelectOp::create(
            b, loc, ok, op.getValue(), op.getFallback()).getResult());
        op.erase();
        continue;
      }
      FailureOr<SmallVector<Value>> checked = tessel::valuesOrFail(
          op, b, loc, ok, op.getStatus(), ValueRange{op.getValue()},
          [&](OpBuilder &, Location) {
            return SmallVector<Value>{op.getFallback()};
          });
      if (failed(checked))
        return signalPassFailure();
      op.replaceAllUsesWith(checked->front());
      op.erase();
    }
    SmallVector<tessel::CheckIndicesOp> checks;
    getOperation().walk([&](tessel::CheckIndicesOp op) { checks.push_back(op); });
    for (tessel::CheckIndicesOp op : checks) {
      OpBuilder b(op);
      Location loc = op.getLoc();
      Value indices = op.getIndices();
      auto type = cast<RankedTensorType>(indices.getType());
      if (!report) {
        op.replaceAllUsesWith(
            clampInto(b, loc, indices, op.getLower(), op.getUpper()));
        op.erase();
        continue;
      }
      Value ok = allInRange(b, loc, indices, op.getLower(), op.getUpper());
      FailureOr<SmallVector<Value>> checked = tessel::valuesOrFail(
          op, b, loc, ok, TESSEL_ENTRY_INDEX_OUT_OF_RANGE, ValueRange{indices},
          [&](OpBuilder &e, Location l) {
            SmallVector<Value> sizes;
            for (int64_t d = 0; d < type.getRank(); ++d)
              if (type.isDynamicDim(d))
                sizes.push_back(tensor::DimOp::create(e, l, indices, d));
            return SmallVector<Value>{tessel::zeroTensor(e, l, type, sizes)};
          });
      if (failed(checked))
        return signalPassFailure();
      op.replaceAllUsesWith(checked->front());
      op.erase();
    }
  }
};

} // namespace
