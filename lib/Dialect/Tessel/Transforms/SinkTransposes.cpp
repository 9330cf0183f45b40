//===- SinkTransposes.cpp - move layout transposes towards their inverse ---===//
//
// ONNX graphs are NCHW and TOSA convolutions NHWC, so the importer wraps
// every convolution in transposes. Upstream tosa-reduce-transposes cancels
// them across chains of elementwise ops; what it leaves are transposes in
// front of ops it does not model (reductions, broadcasting multiplies with
// a small operand, values with several users) — e.g. every
// squeeze-and-excitation block of EfficientNet. These patterns move such a
// transpose below the op (transposing the small operands instead), so the
// transposes meet the next convolution's inverse transpose and fold away.
//
//===----------------------------------------------------------------------===//
#include "tessel/Dialect/Tessel/Transforms/Passes.h"

#include "mlir/Dialect/Tosa/Utils/ConversionUtils.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <numeric>

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELSINKTRANSPOSES
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;

namespace {

SmallVector<int64_t> permuted(ArrayRef<int64_t> shape, ArrayRef<int32_t> perm) {
  SmallVector<int64_t> out;
  for (int32_t p : perm)
    out.push_back(shape[p]);
  return out;
}

SmallVector<int32_t> inverse(ArrayRef<int32_t> perm) {
  SmallVector<int32_t> inv(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inv[p] = i;
  return inv;
}

/// The type of `v` (a ranked tensor) with its dims permuted by `perm`.
RankedTensorType permutedType(Value v, ArrayRef<int32_t> perm) {
  auto t = cast<RankedTensorType>(v.getType());
  return RankedTensorType::get(permuted(t.getShape(), perm),
                               t.getElementType());
}

Value transpose(PatternRewriter &rewriter, Location loc, Value v,
                ArrayRef<int32_t> perm) {
  RankedTensorType type = permutedType(v, perm);
  return tosa::TransposeOp::create(rewriter, loc, type, v,
                                   rewriter.getDenseI32ArrayAttr(perm));
}

/// A ranked tensor whose sizes are static but perhaps the first (a batch
/// known only at run time: a transpose moves it like any other size).
bool isStaticButBatch(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && (t.getRank() == 0 ||
               llvm::none_of(t.getShape().drop_front(), ShapedType::isDynamic));
}

/// Whether `v` has the sizes of `result` (a run-time size where it has
/// one), i.e. is not broadcast by an elementwise op.
bool isFullSize(Value v, RankedTensorType result) {
  auto t = cast<RankedTensorType>(v.getType());
  return t.getShape() == result.getShape();
}

/// Whether `v` is a transpose of a tensor by the same permutation as
/// the others seen so far (`perm`, set by the first one).
bool joinTranspose(Value v, std::optional<SmallVector<int32_t>> &perm) {
  auto tr = v.getDefiningOp<tosa::TransposeOp>();
  if (!tr || !isStaticButBatch(tr.getInput1()))
    return false;
  SmallVector<int32_t> p(tr.getPerms());
  if (perm && *perm != p)
    return false;
  perm = p;
  return true;
}

/// The data operands of an elementwise op (tosa.mul's shift is not one).
unsigned numDataOperands(Operation *op) {
  return isa<tosa::MulOp>(op) ? 2 : op->getNumOperands();
}

/// elementwise(transpose(x, P), small...) ->
///   transpose(elementwise(x, transpose(small, P^-1)...), P)
/// Every full-size operand must be a transpose with the same P or a
/// constant; smaller (broadcast) operands and constants are transposed back
/// instead, which is cheap (and folds for constants). Elementwise means TOSA's
/// elementwise ops and the arith/math ops applied to tensors
/// (tessel-lower-quant's conversions and rounding): QDQ models put those
/// around every convolution.
struct SinkThroughElementwise : RewritePattern {
  SinkThroughElementwise(MLIRContext *ctx)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, ctx) {}
  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!op->hasTrait<OpTrait::tosa::TosaElementwiseOperator>() &&
        !isa<tosa::MulOp>(op) &&
        !(op->hasTrait<OpTrait::Elementwise>() &&
          isa<arith::ArithDialect, math::MathDialect>(op->getDialect())))
      return failure();
    if (op->getNumResults() != 1 || !isStaticButBatch(op->getResult(0)))
      return failure();
    auto resTy = cast<RankedTensorType>(op->getResult(0).getType());
    unsigned n = numDataOperands(op);
    std::optional<SmallVector<int32_t>> perm;
    for (unsigned i = 0; i < n; ++i) {
      Value v = op->getOperand(i);
      if (!isStaticButBatch(v) ||
          cast<RankedTensorType>(v.getType()).getRank() != resTy.getRank())
        return failure();
      if (!isFullSize(v, resTy) || matchPattern(v, m_Constant()))
        continue; // broadcast operand or constant
      if (!joinTranspose(v, perm))
        return failure();
    }
    if (!perm)
      return failure();
    SmallVector<int32_t> inv = inverse(*perm);
    SmallVector<Value> operands;
    for (unsigned i = 0; i < op->getNumOperands(); ++i) {
      Value v = op->getOperand(i);
      if (i >= n) {
        operands.push_back(v);
        continue;
      }
      if (isFullSize(v, resTy) && !matchPattern(v, m_Constant()))
        operands.push_back(v.getDefiningOp<tosa::TransposeOp>().getInput1());
      else
        operands.push_back(transpose(rewriter, op->getLoc(), v, inv));
    }
    RankedTensorType newTy = permutedType(op->getResult(0), inv);
    OperationState state(op->getLoc(), op->getName(), operands, {newTy},
                         op->getAttrs());
    Operation *inner = rewriter.create(state);
    rewriter.replaceOp(op, transpose(rewriter, op->getLoc(),
                                     inner->getResult(0), *perm));
    return success();
  }
};

/// reduce(transpose(x, P), axis) -> transpose(reduce(x, P[axis]), P): the
/// reduced axis is kept (size 1), so the permutation stays valid.
template <typename ReduceOp>
struct SinkThroughReduce : OpRewritePattern<ReduceOp> {
  using OpRewritePattern<ReduceOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(ReduceOp op,
                                PatternRewriter &rewriter) const override {
    auto tr = op.getInput().template getDefiningOp<tosa::TransposeOp>();
    if (!tr || !isStaticButBatch(tr.getInput1()) ||
        !isStaticButBatch(op.getResult()))
      return failure();
    SmallVector<int32_t> perm(tr.getPerms());
    int32_t axis = op.getAxis();
    RankedTensorType newTy = permutedType(op.getResult(), inverse(perm));
    SmallVector<NamedAttribute> attrs(op->getAttrs());
    for (NamedAttribute &a : attrs)
      if (a.getName() == "axis")
        a.setValue(rewriter.getI32IntegerAttr(perm[axis]));
    OperationState state(op.getLoc(), op->getName(),
                         ValueRange{tr.getInput1()}, {newTy}, attrs);
    Operation *inner = rewriter.create(state);
    rewriter.replaceOp(op, transpose(rewriter, op.getLoc(),
                                     inner->getResult(0), perm));
    return success();
  }
};

/// concat(transpose(x_i, P)..., axis) -> transpose(concat(x_i..., P[axis]), P)
/// (SqueezeNet's fire modules, Inception-style branches).
struct SinkThroughConcat : OpRewritePattern<tosa::ConcatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tosa::ConcatOp op,
                                PatternRewriter &rewriter) const override {
    if (!isStaticButBatch(op.getResult()))
      return failure();
    std::optional<SmallVector<int32_t>> perm;
    SmallVector<Value> sources;
    for (Value v : op.getInput1()) {
      if (!joinTranspose(v, perm))
        return failure();
      sources.push_back(v.getDefiningOp<tosa::TransposeOp>().getInput1());
    }
    if (!perm)
      return failure();
    RankedTensorType newTy = permutedType(op.getResult(), inverse(*perm));
    auto concat = tosa::ConcatOp::create(
        rewriter, op.getLoc(), newTy, sources,
        rewriter.getI32IntegerAttr((*perm)[op.getAxis()]));
    rewriter.replaceOp(op, transpose(rewriter, op.getLoc(), concat, *perm));
    return success();
  }
};

/// reshape(transpose(x, P)) -> transpose(reshape(x'), P') where the reshape
/// only splits dims or only merges them: ShuffleNet's channel shuffle (NCHW
/// [1, 48, H, W] -> [1, 2, 24, H, W], a transpose of the two, -> [1, 48, H,
/// W]) between NHWC convolutions, whose layout transposes then meet. A
/// merge of dims the transpose has put out of their order in x first
/// reorders them in x (the shuffle itself, now on the channels of NHWC).
struct SinkThroughReshape : OpRewritePattern<tosa::ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tosa::ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    auto tr = op.getInput1().getDefiningOp<tosa::TransposeOp>();
    if (!tr || !tr->hasOneUse())
      return failure();
    auto xTy = cast<RankedTensorType>(tr.getInput1().getType());
    auto tTy = cast<RankedTensorType>(tr.getType());
    auto outTy = cast<RankedTensorType>(op.getType());
    if (!xTy.hasStaticShape() || !outTy.hasStaticShape() ||
        xTy.getRank() == outTy.getRank())
      return failure();
    std::optional<SmallVector<ReassociationIndices>> groups =
        getReassociationIndicesForReshape(tTy, outTy);
    if (!groups)
      return failure();
    ArrayRef<int32_t> perm = tr.getPerms();
    ArrayRef<int64_t> xShape = xTy.getShape(), tShape = tTy.getShape(),
                      outShape = outTy.getShape();
    Location loc = op.getLoc();
    Value x = tr.getInput1();
    SmallVector<int64_t> newShape;
    SmallVector<int32_t> outer;
    if (outTy.getRank() < tTy.getRank()) {
      // Merges: each group of t's dims from dims of x that are adjacent
      // there. Groups in the order of x; within a group, t's order.
      SmallVector<int64_t> order(groups->size());
      std::iota(order.begin(), order.end(), 0);
      auto minSrc = [&](int64_t g) {
        int32_t m = perm[(*groups)[g].front()];
        for (int64_t d : (*groups)[g])
          m = std::min(m, perm[d]);
        return m;
      };
      llvm::sort(order, [&](int64_t a, int64_t b) {
        return minSrc(a) < minSrc(b);
      });
      SmallVector<int32_t> inner;
      for (int64_t g : order) {
        for (int64_t d : (*groups)[g])
          inner.push_back(perm[d]);
        // Adjacent in x: the group's dims of x are a run.
        SmallVector<int32_t> run(inner.end() - (*groups)[g].size(),
                                 inner.end());
        llvm::sort(run);
        for (size_t i = 1; i < run.size(); ++i)
          if (run[i] != run[i - 1] + 1)
            return failure();
        newShape.push_back(outShape[g]);
      }
      outer.assign(groups->size(), 0);
      for (auto [pos, g] : llvm::enumerate(order))
        outer[g] = pos;
      // A transpose within the groups only: nothing to move past.
      if (llvm::equal(outer, llvm::seq<int32_t>(0, outer.size())))
        return failure();
      if (!llvm::equal(inner, llvm::seq<int32_t>(0, inner.size())))
        x = transpose(rewriter, loc, x, inner);
    } else {
      // Splits: dim j of t into the sizes of its group; x's dim perm[j]
      // likewise, then the pieces moved as the dims were.
      SmallVector<int32_t> inv = inverse(perm);
      SmallVector<int64_t> start(tShape.size());
      int64_t at = 0;
      for (int64_t i = 0; i < int64_t(xShape.size()); ++i) {
        start[inv[i]] = at;
        for (int64_t d : (*groups)[inv[i]])
          newShape.push_back(outShape[d]);
        at += (*groups)[inv[i]].size();
      }
      for (int64_t j = 0; j < int64_t(tShape.size()); ++j)
        for (int64_t k = 0; k < int64_t((*groups)[j].size()); ++k)
          outer.push_back(start[j] + k);
    }
    auto newTy = RankedTensorType::get(newShape, outTy.getElementType());
    Value reshaped = tosa::ReshapeOp::create(
        rewriter, loc, newTy, x,
        tosa::getTosaConstShape(rewriter, loc, newShape));
    rewriter.replaceOp(op, transpose(rewriter, loc, reshaped, outer));
    return success();
  }
};

/// slice(transpose(x, P)) -> transpose(slice(x), P), where every user of
/// the transpose is a slice (ShuffleNet's channel split after the shuffle):
/// the start and size permuted back.
struct SinkThroughSlice : OpRewritePattern<tosa::SliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tosa::SliceOp op,
                                PatternRewriter &rewriter) const override {
    auto tr = op.getInput1().getDefiningOp<tosa::TransposeOp>();
    SmallVector<int64_t> start, size;
    if (!tr || !cast<RankedTensorType>(tr.getType()).hasStaticShape() ||
        !llvm::all_of(tr->getUsers(),
                      [](Operation *u) { return isa<tosa::SliceOp>(u); }) ||
        !tosa::getConstShapeValues(op.getStart().getDefiningOp(), start) ||
        !tosa::getConstShapeValues(op.getSize().getDefiningOp(), size))
      return failure();
    ArrayRef<int32_t> perm = tr.getPerms();
    SmallVector<int32_t> inv = inverse(perm);
    SmallVector<int64_t> xStart = permuted(start, inv),
                         xSize = permuted(size, inv);
    RankedTensorType newTy = permutedType(op->getResult(0), inv);
    Location loc = op.getLoc();
    Value sliced = tosa::SliceOp::create(
        rewriter, loc, newTy, tr.getInput1(),
        tosa::getTosaConstShape(rewriter, loc, xStart),
        tosa::getTosaConstShape(rewriter, loc, xSize));
    rewriter.replaceOp(op, transpose(rewriter, loc, sliced, perm));
    return success();
  }
};

/// pad(transpose(x, P)) -> transpose(pad(x), P), the padding permuted
/// back: an importer pads in the source's layout (ONNX's AveragePool with
/// count_include_pad pads NCHW, then pools NHWC), which left Inception-v3's
/// nine average pools transposing their input to NCHW and the padded copy
/// back. Moved when the pad's result only goes to the inverse transpose
/// (where the two then cancel) or the transpose has no other user, so a
/// transpose is never duplicated onto the larger, padded tensor.
struct SinkThroughPad : OpRewritePattern<tosa::PadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tosa::PadOp op,
                                PatternRewriter &rewriter) const override {
    auto tr = op.getInput1().getDefiningOp<tosa::TransposeOp>();
    SmallVector<int64_t> padding;
    if (!tr || !isStaticButBatch(tr.getInput1()) ||
        !isStaticButBatch(op.getResult()) ||
        !tosa::getConstShapeValues(op.getPadding().getDefiningOp(), padding))
      return failure();
    ArrayRef<int32_t> perm = tr.getPerms();
    SmallVector<int32_t> inv = inverse(perm);
    bool cancels = llvm::all_of(op->getUsers(), [&](Operation *u) {
      auto next = dyn_cast<tosa::TransposeOp>(u);
      return next && next.getPerms() == ArrayRef<int32_t>(inv);
    });
    if (!tr->hasOneUse() && !cancels)
      return failure();
    // padding = [lo_0, hi_0, lo_1, hi_1, ...]; dim j of the transpose is
    // dim perm[j] of x.
    SmallVector<int64_t> xPadding(padding.size());
    for (auto [j, p] : llvm::enumerate(perm)) {
      xPadding[2 * p] = padding[2 * j];
      xPadding[2 * p + 1] = padding[2 * j + 1];
    }
    RankedTensorType newTy = permutedType(op->getResult(0), inv);
    Location loc = op.getLoc();
    Value padded = tosa::PadOp::create(
        rewriter, loc, newTy, tr.getInput1(),
        tosa::getTosaConstShape(rewriter, loc, xPadding), op.getPadConst());
    rewriter.replaceOp(op, transpose(rewriter, loc, padded, perm));
    return success();
  }
};

/// A transpose that only moves size-1 dims keeps the element order: it is a
/// reshape (free after bufferization).
struct UnitTransposeToReshape : OpRewritePattern<tosa::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tosa::TransposeOp op,
                                PatternRewriter &rewriter) const override {
    // A run-time batch is one -1 in the reshape's shape.
    if (!isStaticButBatch(op.getInput1()) || !isStaticButBatch(op.getResult()))
      return failure();
    ArrayRef<int64_t> shape =
        cast<RankedTensorType>(op.getInput1().getType()).getShape();
    int32_t last = -1;
    for (int32_t p : op.getPerms()) {
      if (shape[p] == 1)
        continue;
      if (p < last)
        return failure();
      last = p;
    }
    auto resTy = cast<RankedTensorType>(op.getResult().getType());
    SmallVector<int64_t> target(resTy.getShape());
    for (int64_t &d : target)
      if (ShapedType::isDynamic(d))
        d = -1;
    Value shapeVal = tosa::getTosaConstShape(rewriter, op.getLoc(), target);
    rewriter.replaceOpWithNewOp<tosa::ReshapeOp>(op, resTy, op.getInput1(),
                                                 shapeVal);
    return success();
  }
};

struct SinkTransposesPass
    : tessel::impl::TesselSinkTransposesBase<SinkTransposesPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    patterns.add<SinkThroughElementwise, UnitTransposeToReshape,
                 SinkThroughConcat, SinkThroughReshape, SinkThroughSlice,
                 SinkThroughPad,
                 SinkThroughReduce<tosa::ReduceSumOp>,
                 SinkThroughReduce<tosa::ReduceMaxOp>,
                 SinkThroughReduce<tosa::ReduceMinOp>,
                 SinkThroughReduce<tosa::ReduceProductOp>>(ctx);
    tosa::TransposeOp::getCanonicalizationPatterns(patterns, ctx);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
