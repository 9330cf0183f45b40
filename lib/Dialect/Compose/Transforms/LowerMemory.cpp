//===- LowerMemory.cpp - compose memory ops -> TOSA / tensor / scf ---------===//
#include "tessel/Dialect/Compose/Transforms/Passes.h"
#include "tessel/Dialect/Tessel/Utils/TosaBuilder.h"

#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::tessel::compose {
#define GEN_PASS_DEF_COMPOSELOWERMEMORY
#include "tessel/Dialect/Compose/Transforms/Passes.h.inc"
} // namespace mlir::tessel::compose

using namespace mlir;
using namespace mlir::tessel;
using namespace mlir::tessel::compose;

namespace {

RankedTensorType tensorOf(ArrayRef<int64_t> shape, Type elem) {
  return RankedTensorType::get(shape, elem);
}

/// `locations` as i32 clamped into [0, slots - 1].
Value clampedLocations(OpBuilder &b, Location loc, Value locations,
                       int64_t slots) {
  auto ty = cast<RankedTensorType>(locations.getType());
  Type i32 = b.getI32Type();
  if (!ty.getElementType().isInteger(32)) {
    // Clamp in i64 first so that a huge i64 does not wrap when narrowed.
    Type i64 = ty.getElementType();
    locations = tosa::ClampOp::create(b, loc, ty, locations,
                                      b.getIntegerAttr(i64, 0),
                                      b.getIntegerAttr(i64, slots - 1));
    locations = tosa::CastOp::create(b, loc, ty.clone(i32), locations);
  }
  return tosa::ClampOp::create(b, loc, ty.clone(i32), locations,
                               b.getI32IntegerAttr(0),
                               b.getI32IntegerAttr(slots - 1));
}

/// Whether the op's memory (and other operands) have static shapes.
LogicalResult requireStatic(Operation *op) {
  for (Value v : op->getOperands())
    if (!cast<RankedTensorType>(v.getType()).hasStaticShape())
      return op->emitOpError()
             << "needs static operand shapes to be lowered, got " << v.getType();
  return success();
}

struct LowerRead : OpRewritePattern<MemoryReadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MemoryReadOp op,
                                PatternRewriter &rewriter) const override {
    auto memTy = op.getMemory().getType();
    int64_t s = memTy.getDimSize(0), w = memTy.getDimSize(1);
    int64_t n = op.getLocations().getType().getDimSize(0);
    Location loc = op.getLoc();
    TosaBuilder tb(rewriter, loc);
    Value idx = tb.reshape(clampedLocations(rewriter, loc, op.getLocations(), s),
                           {1, n});
    Value rows = tosa::GatherOp::create(
        rewriter, loc, tensorOf({1, n, w}, memTy.getElementType()),
        tb.reshape(op.getMemory(), {1, s, w}), idx);
    rewriter.replaceOp(op, tb.reshape(rows, {n, w}));
    return success();
  }
};

struct LowerWrite : OpRewritePattern<MemoryWriteOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MemoryWriteOp op,
                                PatternRewriter &rewriter) const override {
    auto memTy = op.getMemory().getType();
    int64_t s = memTy.getDimSize(0), w = memTy.getDimSize(1);
    int64_t n = op.getValues().getType().getDimSize(0);
    Location loc = op.getLoc();
    Value locs = clampedLocations(rewriter, loc, op.getLocations(), s);
    bool add = op.getMode() == WriteMode::Add;
    auto rowTy = tensorOf({1, w}, memTy.getElementType());
    Value c0 = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value c1 = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value cn = arith::ConstantIndexOp::create(rewriter, loc, n);
    Value values = op.getValues();
    // Rows in order, so the last overwrite of a slot wins and adds see the
    // rows written before them.
    auto loop = scf::ForOp::create(
        rewriter, loc, c0, cn, c1, ValueRange{op.getMemory()},
        [&](OpBuilder &b, Location l, Value i, ValueRange it) {
          Value slot = arith::IndexCastOp::create(
              b, l, b.getIndexType(), tensor::ExtractOp::create(b, l, locs, i));
          SmallVector<OpFoldResult> ones = {b.getIndexAttr(1),
                                            b.getIndexAttr(1)};
          SmallVector<OpFoldResult> size = {b.getIndexAttr(1),
                                            b.getIndexAttr(w)};
          Value row = tensor::ExtractSliceOp::create(
              b, l, rowTy, values,
              SmallVector<OpFoldResult>{i, b.getIndexAttr(0)}, size, ones);
          SmallVector<OpFoldResult> at = {slot, b.getIndexAttr(0)};
          if (add) {
            Value old = tensor::ExtractSliceOp::create(b, l, rowTy, it[0], at,
                                                       size, ones);
            row = tosa::AddOp::create(b, l, rowTy, old, row);
          }
          Value mem =
              tensor::InsertSliceOp::create(b, l, row, it[0], at, size, ones);
          scf::YieldOp::create(b, l, mem);
        });
    rewriter.replaceOp(op, loop.getResult(0));
    return success();
  }
};

struct LowerLookup : OpRewritePattern<MemoryLookupOp> {
  using OpRewritePattern::OpRewritePattern;

  /// Rows of `x` (`M x C`) scaled to unit length; a zero row stays zero
  /// (its norm is clamped to 1e-8 before dividing).
  static Value normalizeRows(TosaBuilder &tb, Value x) {
    Value sq = tb.reduceSum(tb.mul(x, x), 1);
    Type elem = cast<RankedTensorType>(x.getType()).getElementType();
    Value floor = tb.scalar(elem, 1e-16, 2);
    return tb.mul(x, tb.rsqrt(tb.maximum(sq, floor)));
  }

  LogicalResult matchAndRewrite(MemoryLookupOp op,
                                PatternRewriter &rewriter) const override {
    auto qTy = op.getQueries().getType();
    int64_t n = qTy.getDimSize(0), dk = qTy.getDimSize(1);
    int64_t s = op.getKeys().getType().getDimSize(0);
    int64_t dv = op.getValues().getType().getDimSize(1);
    Type elem = qTy.getElementType();
    Location loc = op.getLoc();
    TosaBuilder tb(rewriter, loc);
    Value q = op.getQueries(), keys = op.getKeys();
    if (op.getSimilarity() == Similarity::Cosine) {
      q = normalizeRows(tb, q);
      keys = normalizeRows(tb, keys);
    }
    Value kt = tb.transpose(tb.reshape(keys, {1, s, dk}), {0, 2, 1});
    Value zp = tb.zeroPoint(elem);
    Value scores = tosa::MatMulOp::create(rewriter, loc,
                                          tensorOf({1, n, s}, elem),
                                          tb.reshape(q, {1, n, dk}), kt, zp, zp);
    float scale = op.getScale().convertToFloat();
    if (scale != 1.0f)
      scores = tb.mul(scores, tb.scalar(elem, scale, 3));
    Value probs = SoftmaxOp::create(rewriter, loc, scores.getType(), scores,
                                    rewriter.getI64IntegerAttr(-1));
    Value out = tosa::MatMulOp::create(
        rewriter, loc, tensorOf({1, n, dv}, elem), probs,
        tb.reshape(op.getValues(), {1, s, dv}), zp, zp);
    rewriter.replaceOp(op, tb.reshape(out, {n, dv}));
    return success();
  }
};

struct ComposeLowerMemoryPass
    : mlir::tessel::compose::impl::ComposeLowerMemoryBase<ComposeLowerMemoryPass> {
  void runOnOperation() override {
    bool ok = true;
    getOperation()->walk([&](Operation *op) {
      if (isa<MemoryReadOp, MemoryWriteOp, MemoryLookupOp>(op) &&
          failed(requireStatic(op)))
        ok = false;
    });
    if (!ok)
      return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    patterns.add<LowerRead, LowerWrite, LowerLookup>(&getContext());
    // Only these ops change: no folding of the rest of the graph.
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace
