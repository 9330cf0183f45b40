//===- CheckBroadcasts.cpp - dynamic elementwise sizes must broadcast -----===//
//
// TOSA elementwise ops broadcast dimensions of size 1; tosa-to-linalg reads
// every operand at the largest size of each dimension, so dynamic sizes
// that disagree (3 rows against 2) would read out of bounds. Each op whose
// dynamic sizes could disagree is guarded: checked at run time, and on a
// mismatch the call fails (__tessel_set_status) while the op runs on zero
// operands of size 1 in the dynamic dimensions, which broadcast safely.
// Dimensions whose sizes share a name are checked for equality instead.
//
//===----------------------------------------------------------------------===//
#include "tessel/Conversion/Passes.h"
#include "tessel/Conversion/StatusHelper.h"
#include "tessel/Dialect/Tessel/Utils/SizeNames.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELCHECKBROADCASTS
#include "tessel/Conversion/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;

namespace {

/// Whether dimension `d` of the participants could disagree at run time:
/// two dynamic sizes, or a dynamic one and a static one other than 1.
bool mayDisagree(ArrayRef<RankedTensorType> types, int64_t d) {
  int dynamic = 0, staticNotOne = 0;
  for (RankedTensorType t : types) {
    if (t.isDynamicDim(d))
      ++dynamic;
    else if (t.getDimSize(d) != 1)
      ++staticNotOne;
  }
  return dynamic >= 2 || (dynamic >= 1 && staticNotOne >= 1);
}

/// Dimension `d` of `v` (of type `t`) as an index value.
Value sizeOf(OpBuilder &b, Location loc, Value v, RankedTensorType t,
             int64_t d) {
  if (!t.isDynamicDim(d))
    return arith::ConstantIndexOp::create(b, loc, t.getDimSize(d));
  return tensor::DimOp::create(b, loc, v, d);
}

/// Zeros of type `t` whose dynamic dimension d has size `safe[d]`: what
/// stands in for an operand when the sizes did not match.
Value safeZeros(OpBuilder &b, Location loc, RankedTensorType t,
                ArrayRef<int64_t> safe) {
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < t.getRank(); ++d)
    if (t.isDynamicDim(d))
      sizes.push_back(arith::ConstantIndexOp::create(b, loc, safe[d]));
  return tessel::zeroTensor(b, loc, t, sizes);
}

/// The name every operand `parts` of `op` gives its dynamic dimension `d`
/// (tessel/Dialect/Tessel/Utils/SizeNames.h), or empty where one is static
/// or unnamed or the names differ.
std::string commonName(Operation *op, ArrayRef<unsigned> parts, int64_t d) {
  std::string name;
  for (unsigned p : parts) {
    Value v = op->getOperand(p);
    if (!cast<RankedTensorType>(v.getType()).isDynamicDim(d))
      return {};
    std::string n = tessel::sizeNameOf(v, d);
    if (n.empty() || (!name.empty() && n != name))
      return {};
    name = n;
  }
  return name;
}

struct TesselCheckBroadcastsPass
    : tessel::impl::TesselCheckBroadcastsBase<TesselCheckBroadcastsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      // (tosa.mul broadcasts too, without the traits: its shift operand
      // is not elementwise.)
      if (op->hasTrait<OpTrait::ResultsBroadcastableShape>() ||
          op->hasTrait<OpTrait::tosa::TosaElementwiseOperator>() ||
          isa<tosa::MulOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops)
      if (failed(guard(op)))
        return signalPassFailure();
    // tosa.matmul does not broadcast: A's batch and reduction sizes must
    // equal B's.
    SmallVector<tosa::MatMulOp> matmuls;
    getOperation().walk([&](tosa::MatMulOp m) { matmuls.push_back(m); });
    for (tosa::MatMulOp m : matmuls)
      if (failed(guardMatmul(m)))
        return signalPassFailure();
  }

  /// Replaces operands `operands` of `op` by themselves where `ok` holds,
  /// else (the call failing) by zeros of sizes `safe[i]` at their dynamic
  /// dimensions.
  static LogicalResult replaceUnless(Operation *op, OpBuilder &b, Value ok,
                                     ArrayRef<unsigned> operands,
                                     ArrayRef<SmallVector<int64_t>> safe) {
    SmallVector<Value> values;
    for (unsigned o : operands)
      values.push_back(op->getOperand(o));
    FailureOr<SmallVector<Value>> checked = tessel::valuesOrShapeMismatch(
        op, b, op->getLoc(), ok, values, [&](OpBuilder &e, Location l) {
          SmallVector<Value> zeros;
          for (auto [v, sizes] : llvm::zip(values, safe))
            zeros.push_back(safeZeros(
                e, l, cast<RankedTensorType>(v.getType()), sizes));
          return zeros;
        });
    if (failed(checked))
      return failure();
    for (auto [o, v] : llvm::zip(operands, *checked))
      op->setOperand(o, v);
    return success();
  }

  LogicalResult guardMatmul(tosa::MatMulOp op) {
    auto a = dyn_cast<RankedTensorType>(op.getA().getType());
    auto bt = dyn_cast<RankedTensorType>(op.getB().getType());
    if (!a || !bt || a.getRank() != 3 || bt.getRank() != 3)
      return success();
    // (dimension of A, dimension of B) that must be equal.
    SmallVector<std::pair<int64_t, int64_t>> pairs;
    for (auto [da, db] : {std::pair<int64_t, int64_t>{0, 0}, {2, 1}})
      if (a.isDynamicDim(da) || bt.isDynamicDim(db))
        pairs.push_back({da, db});
    if (pairs.empty())
      return success();
    OpBuilder b(op);
    Location loc = op.getLoc();
    Value ok;
    for (auto [da, db] : pairs) {
      Value same = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                         sizeOf(b, loc, op.getA(), a, da),
                                         sizeOf(b, loc, op.getB(), bt, db));
      ok = ok ? arith::AndIOp::create(b, loc, ok, same) : same;
    }
    // On a mismatch both operands become zeros whose paired sizes agree:
    // the static one where there is one, else 1.
    SmallVector<int64_t> safeA(a.getRank(), 1), safeB(bt.getRank(), 1);
    for (auto [da, db] : pairs) {
      int64_t v = !a.isDynamicDim(da)    ? a.getDimSize(da)
                  : !bt.isDynamicDim(db) ? bt.getDimSize(db)
                                         : 1;
      safeA[da] = v;
      safeB[db] = v;
    }
    return replaceUnless(op, b, ok, {0, 1}, {safeA, safeB});
  }

  LogicalResult guard(Operation *op) {
    if (op->getNumResults() != 1)
      return success();
    auto result = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!result)
      return success();
    int64_t rank = result.getRank();
    // The operands that broadcast: ranked tensors of the result's rank
    // (not the [1]-shaped zero points and shifts some ops take).
    SmallVector<unsigned> parts;
    SmallVector<RankedTensorType> types;
    for (OpOperand &o : op->getOpOperands()) {
      auto t = dyn_cast<RankedTensorType>(o.get().getType());
      if (t && t.getRank() == rank) {
        parts.push_back(o.getOperandNumber());
        types.push_back(t);
      }
    }
    SmallVector<int64_t> dims;
    for (int64_t d = 0; d < rank; ++d)
      if (mayDisagree(types, d))
        dims.push_back(d);
    if (dims.empty() || parts.size() < 2)
      return success();

    OpBuilder b(op);
    Location loc = op->getLoc();
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    Value ok;
    for (int64_t d : dims) {
      SmallVector<Value> sizes;
      for (unsigned p = 0; p < parts.size(); ++p)
        sizes.push_back(sizeOf(b, loc, op->getOperand(parts[p]), types[p], d));
      // Sizes of one name (a graph input's `seq`) are equal on every call
      // that has not failed: checked for equality, not for broadcasting,
      // so that past the guard they provably are (tessel-drop-unit-
      // broadcasts then drops tosa-to-linalg's broadcast of a size 1).
      if (std::string name = commonName(op, parts, d); !name.empty()) {
        for (Value s : ArrayRef(sizes).drop_front()) {
          Value same = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                             s, sizes.front());
          ok = ok ? arith::AndIOp::create(b, loc, ok, same) : same;
        }
        continue;
      }
      Value target = sizes.front();
      for (Value s : ArrayRef(sizes).drop_front())
        target = arith::MaxUIOp::create(b, loc, target, s);
      for (Value s : sizes) {
        Value fits = arith::OrIOp::create(
            b, loc,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, s, target),
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, s, one));
        ok = ok ? arith::AndIOp::create(b, loc, ok, fits) : fits;
      }
    }
    // Operands with a dynamic dimension: as they are, or zeros of size 1
    // there (the result's size where it is static), which broadcast.
    SmallVector<int64_t> safe;
    for (int64_t d = 0; d < rank; ++d)
      safe.push_back(result.isDynamicDim(d) ? 1 : result.getDimSize(d));
    SmallVector<unsigned> dynamicParts;
    SmallVector<SmallVector<int64_t>> safeSizes;
    for (unsigned p = 0; p < parts.size(); ++p)
      if (!types[p].hasStaticShape()) {
        dynamicParts.push_back(parts[p]);
        safeSizes.push_back(safe);
      }
    return replaceUnless(op, b, ok, dynamicParts, safeSizes);
  }
};

} // namespace
