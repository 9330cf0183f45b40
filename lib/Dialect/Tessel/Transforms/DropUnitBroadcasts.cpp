//===- DropUnitBroadcasts.cpp - drop provably no-op run-time broadcasts ---===//
//
// tosa-to-linalg cannot tell that two operands of size `?` have the same
// size, so it guards each with a run-time broadcast of index 0 taken when
// the size is 1. Inside that guard, a dimension that is provably the
// guarded size is 1, and broadcasting a size-1 dimension to size 1 copies
// the operand unchanged: the guard's result is the operand.
//
// First, each run-time size read twice (`tensor.dim` of two values that
// provably have the same size, e.g. two activations of one batch) is read
// once: the checks that the sizes agree then fold away.
//
//===----------------------------------------------------------------------===//
#include "tessel/Dialect/Tessel/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELDROPUNITBROADCASTS
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;

namespace {

ValueBoundsConstraintSet::Variable sizeOf(Value x, int64_t d);

/// The static size of dimension `d` of `v`, looking through tensor.cast
/// (a guard's zeros, cast to the operand's dynamic type).
std::optional<int64_t> staticSize(Value v, int64_t d) {
  while (true) {
    auto t = cast<RankedTensorType>(v.getType());
    if (!t.isDynamicDim(d))
      return t.getDimSize(d);
    auto c = v.getDefiningOp<tensor::CastOp>();
    if (!c || !isa<RankedTensorType>(c.getSource().getType()))
      return std::nullopt;
    v = c.getSource();
  }
}

/// Whether the index `a` is dimension `d` of `t`.
bool isDimOf(Value a, Value t, int64_t d) {
  if (auto dim = a.getDefiningOp<tensor::DimOp>())
    if (dim.getSource() == t && dim.getConstantIndex() == d)
      return true;
  FailureOr<bool> eq = ValueBoundsConstraintSet::areEqual({a}, sizeOf(t, d));
  return succeeded(eq) && *eq;
}

/// Whether `cond` (a conjunction) has a conjunct `dim(a, d) == dim(b, d)`.
bool saysEqual(Value cond, Value a, Value b, int64_t d) {
  if (auto both = cond.getDefiningOp<arith::AndIOp>())
    return saysEqual(both.getLhs(), a, b, d) ||
           saysEqual(both.getRhs(), a, b, d);
  auto cmp = cond.getDefiningOp<arith::CmpIOp>();
  if (!cmp || cmp.getPredicate() != arith::CmpIPredicate::eq)
    return false;
  Value l = cmp.getLhs(), r = cmp.getRhs();
  return (isDimOf(l, a, d) && isDimOf(r, b, d)) ||
         (isDimOf(l, b, d) && isDimOf(r, a, d));
}

/// For result `x` of a size guard (tessel-check-broadcasts: `scf.if %ok {
/// yield the operands } else { fail; yield zeros }`): an earlier result
/// whose dimension `d` provably equals x's in both branches, where the
/// condition checks the two operands' sizes equal and the zeros have one
/// static size there. Else null.
Value equalGuardResult(Value x, int64_t d) {
  auto guard = x.getDefiningOp<scf::IfOp>();
  if (!guard || guard.getElseRegion().empty())
    return {};
  unsigned i = cast<OpResult>(x).getResultNumber();
  Value ti = guard.thenYield().getOperand(i);
  std::optional<int64_t> ei = staticSize(guard.elseYield().getOperand(i), d);
  if (!ei || !isa<RankedTensorType>(ti.getType()))
    return {};
  for (unsigned j = 0; j < i; ++j) {
    Value tj = guard.thenYield().getOperand(j);
    auto tjType = dyn_cast<RankedTensorType>(tj.getType());
    if (!tjType || tjType.getRank() != cast<RankedTensorType>(ti.getType()).getRank() ||
        staticSize(guard.elseYield().getOperand(j), d) != ei ||
        !saysEqual(guard.getCondition(), ti, tj, d))
      continue;
    return guard.getResult(j);
  }
  return {};
}

/// Dimension `d` of `x` for ValueBoundsOpInterface, which does not see
/// through tensor.reshape and tensor.expand_shape here: the size a reshape
/// was given (by tensor.from_elements, or the expansion's output shape);
/// and of a size guard's result, an earlier result's it equals
/// (equalGuardResult).
ValueBoundsConstraintSet::Variable sizeOf(Value x, int64_t d) {
  if (Value same = equalGuardResult(x, d))
    return sizeOf(same, d);
  if (auto r = x.getDefiningOp<tensor::ReshapeOp>())
    if (auto shape = r.getShape().getDefiningOp<tensor::FromElementsOp>())
      if (shape.getElements()[d].getType().isIndex())
        return {shape.getElements()[d]};
  if (auto e = x.getDefiningOp<tensor::ExpandShapeOp>())
    return {e.getMixedOutputShape()[d]};
  return {x, d};
}

/// `v` through max/min of a value with itself (what a broadcast's largest
/// size is once the sizes are unified).
Value throughSelfMinMax(Value v) {
  while (Operation *op = v.getDefiningOp()) {
    if (!isa<arith::MaxUIOp, arith::MinUIOp, arith::MaxSIOp, arith::MinSIOp>(
            op) ||
        op->getOperand(0) != op->getOperand(1))
      break;
    v = op->getOperand(0);
  }
  return v;
}

/// Whether the i1 `cond` holds: a constant true, a comparison of a size
/// with itself that holds on equality, or a conjunction / disjunction of
/// such.
bool provablyTrue(Value cond) {
  if (matchPattern(cond, m_One()))
    return true;
  if (auto a = cond.getDefiningOp<arith::AndIOp>())
    return provablyTrue(a.getLhs()) && provablyTrue(a.getRhs());
  if (auto o = cond.getDefiningOp<arith::OrIOp>())
    return provablyTrue(o.getLhs()) || provablyTrue(o.getRhs());
  auto cmp = cond.getDefiningOp<arith::CmpIOp>();
  if (!cmp)
    return false;
  using P = arith::CmpIPredicate;
  P p = cmp.getPredicate();
  if (p != P::eq && p != P::sle && p != P::sge && p != P::ule && p != P::uge)
    return false;
  return throughSelfMinMax(cmp.getLhs()) == throughSelfMinMax(cmp.getRhs());
}

/// The index values that `cond` (`%n == 1`, or a conjunction of such) says
/// are 1.
void sizesThatAreOne(Value cond, SmallVectorImpl<Value> &ones) {
  if (auto a = cond.getDefiningOp<arith::AndIOp>()) {
    sizesThatAreOne(a.getLhs(), ones);
    sizesThatAreOne(a.getRhs(), ones);
    return;
  }
  auto cmp = cond.getDefiningOp<arith::CmpIOp>();
  if (!cmp || cmp.getPredicate() != arith::CmpIPredicate::eq)
    return;
  if (matchPattern(cmp.getRhs(), m_One()))
    ones.push_back(cmp.getLhs());
  else if (matchPattern(cmp.getLhs(), m_One()))
    ones.push_back(cmp.getRhs());
}

/// Whether dimension `d` of `a` and of `b` provably have the same size.
bool sameSize(Value a, Value b, int64_t d) {
  int64_t sa = cast<ShapedType>(a.getType()).getDimSize(d);
  int64_t sb = cast<ShapedType>(b.getType()).getDimSize(d);
  if (!ShapedType::isDynamic(sa) || !ShapedType::isDynamic(sb))
    return sa == sb;
  FailureOr<bool> eq =
      ValueBoundsConstraintSet::areEqual(sizeOf(a, d), sizeOf(b, d));
  return succeeded(eq) && *eq;
}

/// Whether dimension `d` of `x` is 1 wherever all of `ones` are.
bool isOneThere(Value x, int64_t d, ArrayRef<Value> ones) {
  if (cast<ShapedType>(x.getType()).getDimSize(d) == 1)
    return true;
  return llvm::any_of(ones, [&](Value one) {
    FailureOr<bool> eq =
        ValueBoundsConstraintSet::areEqual(sizeOf(x, d), {one});
    return succeeded(eq) && *eq;
  });
}

/// `copy` is `x` read with index 0 along some dimensions and written to an
/// init of x's sizes; each such dimension is 1 where `ones` are.
bool isUnitBroadcastOf(linalg::GenericOp copy, Value x,
                       ArrayRef<Value> ones) {
  if (copy.getNumDpsInputs() != 1 || copy.getNumDpsInits() != 1 ||
      copy.getDpsInputs()[0] != x ||
      copy.getNumParallelLoops() != copy.getNumLoops())
    return false;
  Block &body = copy.getRegion().front();
  if (body.getOperations().size() != 1 ||
      body.getTerminator()->getOperand(0) != body.getArgument(0))
    return false;
  SmallVector<AffineMap> maps = copy.getIndexingMapsArray();
  auto xType = dyn_cast<RankedTensorType>(x.getType());
  int64_t rank = copy.getNumLoops();
  if (!xType || xType.getRank() != rank || !maps[1].isIdentity() ||
      maps[0].getNumResults() != rank)
    return false;
  Value init = copy.getDpsInits()[0];
  for (int64_t d = 0; d < rank; ++d) {
    AffineExpr e = maps[0].getResult(d);
    if (auto dim = dyn_cast<AffineDimExpr>(e)) {
      if (dim.getPosition() != d || !sameSize(x, init, d))
        return false;
      continue;
    }
    auto c = dyn_cast<AffineConstantExpr>(e);
    if (!c || c.getValue() != 0 || !isOneThere(x, d, ones) ||
        !sameSize(x, init, d))
      return false;
  }
  return true;
}

struct DropUnitBroadcast : OpRewritePattern<scf::IfOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(scf::IfOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getNumResults() == 0 || op.getElseRegion().empty())
      return failure();
    SmallVector<Value> ones;
    sizesThatAreOne(op.getCondition(), ones);
    if (ones.empty())
      return failure();
    bool changed = false;
    for (auto [r, t, x] :
         llvm::zip(op.getResults(), op.thenYield().getOperands(),
                   op.elseYield().getOperands())) {
      auto copy = t.getDefiningOp<linalg::GenericOp>();
      if (r.use_empty() || r.getType() != x.getType() || !copy ||
          copy->getBlock() != op.thenBlock() ||
          !isUnitBroadcastOf(copy, x, ones))
        continue;
      rewriter.replaceAllUsesWith(r, x);
      changed = true;
    }
    return success(changed);
  }
};

/// Replaces each `tensor.dim` by an earlier one of provably the same size
/// that dominates it, and each quotient `size / c` of a size provably
/// `s * c` by `s` (what a reshape through a flat tensor computes: it is
/// read back as the size it was).
/// A guard (`scf.if`) whose condition has become provably true on the way
/// is replaced by its then-branch at once, so that the sizes after it are
/// unified in the same walk (a network's blocks chain them).
/// Returns whether it replaced any.
bool unifySizes(Operation *root) {
  DominanceInfo dom(root);
  SmallVector<Value> seen;
  SmallVector<Operation *> ops;
  root->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (isa<tensor::DimOp, arith::DivSIOp, arith::DivUIOp, scf::IfOp,
            arith::MaxUIOp, arith::MinUIOp, arith::MaxSIOp, arith::MinSIOp>(
            op))
      ops.push_back(op);
  });
  MLIRContext *ctx = root->getContext();
  IRRewriter rewriter(ctx);
  bool changed = false;
  for (Operation *op : ops) {
    if (auto guard = dyn_cast<scf::IfOp>(op)) {
      if (guard.getNumResults() == 0 || !provablyTrue(guard.getCondition()))
        continue;
      Block *then = guard.thenBlock();
      SmallVector<Value> results(then->getTerminator()->getOperands());
      rewriter.eraseOp(then->getTerminator());
      rewriter.inlineBlockBefore(then, guard);
      rewriter.replaceOp(guard, results);
      changed = true;
      continue;
    }
    // The largest of a size and itself (a broadcast's target size).
    if (isa<arith::MaxUIOp, arith::MinUIOp, arith::MaxSIOp, arith::MinSIOp>(
            op)) {
      if (op->getOperand(0) == op->getOperand(1) &&
          !op->getResult(0).use_empty()) {
        op->getResult(0).replaceAllUsesWith(op->getOperand(0));
        changed = true;
      }
      continue;
    }
    Value size = op->getResult(0);
    if (!size.getType().isIndex())
      continue;
    // The size it must equal: the dimension it reads, or for a quotient,
    // its dividend.
    ValueBoundsConstraintSet::Variable target(size);
    int64_t factor = 1;
    if (auto dim = dyn_cast<tensor::DimOp>(op)) {
      std::optional<int64_t> d = dim.getConstantIndex();
      // A size of a guard's result is read from the first result it
      // provably equals, which value bounds then see as one size.
      while (d && isa<RankedTensorType>(dim.getSource().getType()))
        if (Value same = equalGuardResult(dim.getSource(), *d)) {
          rewriter.modifyOpInPlace(
              dim, [&] { dim.getSourceMutable().assign(same); });
          changed = true;
        } else {
          break;
        }
      if (d && isa<RankedTensorType>(dim.getSource().getType()))
        target = sizeOf(dim.getSource(), *d);
    } else {
      APInt c;
      if (!matchPattern(op->getOperand(1), m_ConstantInt(&c)) ||
          !c.isStrictlyPositive() || c.getActiveBits() > 62)
        continue;
      target = ValueBoundsConstraintSet::Variable(op->getOperand(0));
      factor = c.getSExtValue();
    }
    Value same;
    for (Value s : seen) {
      if (!dom.properlyDominates(s, op))
        continue;
      AffineMap times = AffineMap::get(
          0, 1, getAffineSymbolExpr(0, ctx) * factor);
      FailureOr<bool> eq = ValueBoundsConstraintSet::areEqual(
          {times, ValueRange{s}}, target);
      if (succeeded(eq) && *eq) {
        same = s;
        break;
      }
    }
    if (same && !size.use_empty()) {
      size.replaceAllUsesWith(same);
      changed = true;
    } else if (!same && isa<tensor::DimOp>(op)) {
      seen.push_back(size);
    }
  }
  return changed;
}

struct TesselDropUnitBroadcastsPass
    : tessel::impl::TesselDropUnitBroadcastsBase<
          TesselDropUnitBroadcastsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<DropUnitBroadcast>(&getContext());
    // The size checks that now compare a size with itself fold to true,
    // and their guards with them.
    for (Dialect *d : getContext().getLoadedDialects())
      d->getCanonicalizationPatterns(patterns);
    for (RegisteredOperationName op : getContext().getRegisteredOperations())
      if (isa<arith::ArithDialect, scf::SCFDialect, tensor::TensorDialect>(
              op.getDialect()))
        op.getCanonicalizationPatterns(patterns, &getContext());
    FrozenRewritePatternSet frozen(std::move(patterns));
    // Folding a guard away makes the sizes behind it provably equal too
    // (the next block's): unify again until nothing changes.
    for (int round = 0; round < 16; ++round) {
      bool unified = unifySizes(getOperation());
      bool folded = false;
      if (failed(applyPatternsGreedily(getOperation(), frozen,
                                       GreedyRewriteConfig(), &folded)))
        return signalPassFailure();
      if (!unified && !folded)
        break;
    }
  }
};

} // namespace
