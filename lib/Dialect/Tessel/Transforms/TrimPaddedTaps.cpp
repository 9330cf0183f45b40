//===- TrimPaddedTaps.cpp - drop convolution taps that read only padding --===//
//
// A dilated convolution whose dilation is large against its input reads
// mostly zero padding: DeepLabV3's ASPP runs 3x3 convolutions with
// dilation 12, 24 and 36 on 14x14 maps, where every tap but the centre
// reads padding at dilation 24 and 36 (a 1x1 convolution in disguise) and
// at 12 for all but the border rows. Per axis, the taps an output position
// reads inside the input form a range; outputs with the same range form a
// segment. Each (row segment, column segment) region becomes a convolution
// of its valid taps over the input window it reads, with no padding, and
// the regions are concatenated back. Done only where it saves enough
// multiply-adds (`min-saving`): an ordinary 3x3 convolution with padding 1
// loses a tap only on its border, and splitting it would cost more than it
// saves.
//
//===----------------------------------------------------------------------===//
#include "tessel/Dialect/Tessel/Transforms/Passes.h"
#include "tessel/Dialect/Tessel/Utils/TosaBuilder.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELTRIMPADDEDTAPS
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;

namespace {

/// Outputs [o0, o1) of one axis, all reading exactly taps [lo, hi).
struct Segment {
  int64_t o0, o1, lo, hi;
};

/// The segments of one axis: output o reads tap k at o*s + k*d - pad,
/// inside the input when in [0, size). Empty when some output reads no
/// tap inside (its value would be the bias alone: left as it is).
SmallVector<Segment> segments(int64_t out, int64_t size, int64_t taps,
                              int64_t s, int64_t d, int64_t pad) {
  SmallVector<Segment> segs;
  for (int64_t o = 0; o < out; ++o) {
    int64_t lo = 0, hi = taps;
    while (lo < hi && o * s + lo * d - pad < 0)
      ++lo;
    while (hi > lo && o * s + (hi - 1) * d - pad >= size)
      --hi;
    if (lo == hi)
      return {};
    if (!segs.empty() && segs.back().lo == lo && segs.back().hi == hi)
      segs.back().o1 = o + 1;
    else
      segs.push_back({o, o + 1, lo, hi});
  }
  return segs;
}

/// Taps read over all outputs of an axis, summed.
int64_t tapsRead(ArrayRef<Segment> segs) {
  int64_t n = 0;
  for (const Segment &g : segs)
    n += (g.o1 - g.o0) * (g.hi - g.lo);
  return n;
}

struct TrimConv2D : OpRewritePattern<tosa::Conv2DOp> {
  TrimConv2D(MLIRContext *ctx, double minSaving)
      : OpRewritePattern(ctx), minSaving(minSaving) {}

  LogicalResult matchAndRewrite(tosa::Conv2DOp op,
                                PatternRewriter &rewriter) const override {
    auto inTy = dyn_cast<RankedTensorType>(op.getInput().getType());
    auto wTy = dyn_cast<RankedTensorType>(op.getWeight().getType());
    auto outTy = dyn_cast<RankedTensorType>(op.getOutput().getType());
    if (!inTy || !wTy || !outTy || !inTy.hasStaticShape() ||
        !wTy.hasStaticShape() || !outTy.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "needs static shapes");
    // Integer convolutions pad with their input zero point; only float
    // ones are trimmed (padding there is 0, which trimming relies on).
    if (!isa<FloatType>(inTy.getElementType()))
      return rewriter.notifyMatchFailure(op, "not a float convolution");
    ArrayRef<int64_t> pad = op.getPad(), stride = op.getStride(),
                      dil = op.getDilation();
    ArrayRef<int64_t> in = inTy.getShape(), w = wTy.getShape(),
                      out = outTy.getShape();
    SmallVector<Segment> rows =
        segments(out[1], in[1], w[1], stride[0], dil[0], pad[0]);
    SmallVector<Segment> cols =
        segments(out[2], in[2], w[2], stride[1], dil[1], pad[2]);
    if (rows.empty() || cols.empty())
      return rewriter.notifyMatchFailure(op, "an output reads no input");
    double full = double(out[1] * w[1]) * double(out[2] * w[2]);
    double kept = double(tapsRead(rows)) * double(tapsRead(cols));
    if (1.0 - kept / full < minSaving)
      return rewriter.notifyMatchFailure(op, "saves too little");

    Location loc = op.getLoc();
    tessel::TosaBuilder tb(rewriter, loc);
    SmallVector<NamedAttribute> attrs(op->getAttrs());
    for (NamedAttribute &a : attrs)
      if (a.getName() == op.getPadAttrName())
        a = NamedAttribute(a.getName(), rewriter.getDenseI64ArrayAttr({0, 0, 0, 0}));
    SmallVector<Value> rowParts;
    for (const Segment &r : rows) {
      SmallVector<Value> parts;
      for (const Segment &c : cols) {
        // The input window these outputs read through these taps: inside
        // the input by construction, so no padding.
        int64_t h0 = r.o0 * stride[0] + r.lo * dil[0] - pad[0];
        int64_t h1 = (r.o1 - 1) * stride[0] + (r.hi - 1) * dil[0] - pad[0] + 1;
        int64_t w0 = c.o0 * stride[1] + c.lo * dil[1] - pad[2];
        int64_t w1 = (c.o1 - 1) * stride[1] + (c.hi - 1) * dil[1] - pad[2] + 1;
        Value x = tb.slice(op.getInput(), {0, h0, w0, 0},
                           {in[0], h1 - h0, w1 - w0, in[3]});
        Value k = tb.slice(op.getWeight(), {0, r.lo, c.lo, 0},
                           {w[0], r.hi - r.lo, c.hi - c.lo, w[3]});
        auto ty = RankedTensorType::get(
            {out[0], r.o1 - r.o0, c.o1 - c.o0, out[3]}, outTy.getElementType());
        parts.push_back(tosa::Conv2DOp::create(
                            rewriter, loc, TypeRange{ty},
                            ValueRange{x, k, op.getBias(), op.getInputZp(),
                                       op.getWeightZp()},
                            attrs)
                            .getResult());
      }
      rowParts.push_back(parts.size() == 1 ? parts[0] : tb.concat(parts, 2));
    }
    rewriter.replaceOp(op, rowParts.size() == 1 ? rowParts[0]
                                                : tb.concat(rowParts, 1));
    return success();
  }

  double minSaving;
};

struct TrimPaddedTapsPass
    : tessel::impl::TesselTrimPaddedTapsBase<TrimPaddedTapsPass> {
  using TesselTrimPaddedTapsBase::TesselTrimPaddedTapsBase;
  void runOnOperation() override {
    if (!(minSaving >= 0.0 && minSaving <= 1.0)) {
      getOperation()->emitError() << "min-saving must be in [0, 1]";
      return signalPassFailure();
    }
    RewritePatternSet patterns(&getContext());
    patterns.add<TrimConv2D>(&getContext(), minSaving);
    // One rewrite per convolution: the pieces have no padding left and do
    // not match again.
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
