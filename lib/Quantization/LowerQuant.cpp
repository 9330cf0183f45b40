//===- LowerQuant.cpp - quant casts to integer and float arithmetic -------===//
//
// The meaning of quant.dcast / quant.qcast on tensors, with ONNX's
// DequantizeLinear / QuantizeLinear semantics (round half to even, exact
// division, saturation), per tensor or per axis. Everything before this
// pass sees quantized types; everything after it plain integers and floats.
//
//===----------------------------------------------------------------------===//
#include "tessel/Quantization/Passes.h"

#include "QuantParams.h"

#include "tessel/Dialect/Tessel/Utils/TosaBuilder.h"

#include "mlir/Dialect/Quant/IR/QuantTypes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELLOWERQUANT
#include "tessel/Quantization/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;

namespace {

using tessel::QuantParams;
using tessel::quantParamsOf;

/// `values` as an f32 constant of rank `rank` that broadcasts along `axis`
/// (all-ones shape per tensor).
Value paramTensor(OpBuilder &b, Location loc, ArrayRef<double> values,
                  int64_t rank, int64_t axis) {
  SmallVector<int64_t> shape(rank, 1);
  if (axis >= 0)
    shape[axis] = values.size();
  SmallVector<float> f(values.begin(), values.end());
  auto type = RankedTensorType::get(shape, b.getF32Type());
  return arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(type, ArrayRef<float>(f)));
}

SmallVector<double> toDoubles(ArrayRef<int64_t> v) {
  return SmallVector<double>(v.begin(), v.end());
}

RankedTensorType withElement(RankedTensorType t, Type elem) {
  return RankedTensorType::get(t.getShape(), elem);
}

/// y = (x - zero_point) * scale. x - zero_point is exact in f32 for storage
/// of up to 16 bits, so this is the integer difference, scaled once; 32-bit
/// storage (integer accumulators) is rounded to f32 first.
struct LowerDequantize : OpRewritePattern<quant::DequantizeCastOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(quant::DequantizeCastOp op,
                                PatternRewriter &rewriter) const override {
    auto inTy = dyn_cast<RankedTensorType>(op.getInput().getType());
    if (!inTy)
      return rewriter.notifyMatchFailure(op, "not a ranked tensor");
    std::optional<QuantParams> p = quantParamsOf(inTy.getElementType());
    if (!p || p->storage.getWidth() > 32)
      return rewriter.notifyMatchFailure(op, "not uniform storage of <= 32 bits");
    Location loc = op.getLoc();
    if (Value folded = foldConstant(rewriter, op, inTy, *p)) {
      rewriter.replaceOp(op, folded);
      return success();
    }
    tessel::TosaBuilder tb(rewriter, loc);
    Value stored = quant::StorageCastOp::create(
        rewriter, loc, withElement(inTy, p->storage), op.getInput());
    auto f32Ty = withElement(inTy, rewriter.getF32Type());
    Value x = p->isSigned
                  ? Value(arith::SIToFPOp::create(rewriter, loc, f32Ty, stored))
                  : Value(arith::UIToFPOp::create(rewriter, loc, f32Ty, stored));
    int64_t rank = inTy.getRank();
    Value zp = paramTensor(rewriter, loc, toDoubles(p->zeroPoints), rank,
                           p->axis);
    Value scale = paramTensor(rewriter, loc, p->scales, rank, p->axis);
    Value y = tb.mul(tb.sub(x, zp), scale);
    if (!p->expressed.isF32())
      y = arith::TruncFOp::create(rewriter, loc,
                                  withElement(inTy, p->expressed), y);
    rewriter.replaceOp(op, y);
    return success();
  }

  /// Quantized constants (the weights of a QDQ model) dequantized now, with
  /// the same f32 arithmetic as the code below would run: otherwise every
  /// inference would dequantize (and re-pack) all the weights.
  static Value foldConstant(PatternRewriter &rewriter,
                            quant::DequantizeCastOp op, RankedTensorType inTy,
                            const QuantParams &p) {
    auto scast = op.getInput().getDefiningOp<quant::StorageCastOp>();
    DenseIntElementsAttr stored;
    if (!scast || !p.expressed.isF32() || !inTy.hasStaticShape() ||
        !matchPattern(scast.getInput(), m_Constant(&stored)))
      return Value();
    ArrayRef<int64_t> shape = inTy.getShape();
    int64_t inner = 1; // elements per step of the quantized axis
    for (int64_t d = p.axis + 1; p.axis >= 0 && d < inTy.getRank(); ++d)
      inner *= shape[d];
    int64_t axisSize = p.axis >= 0 ? shape[p.axis] : 1;
    SmallVector<float> values;
    values.reserve(inTy.getNumElements());
    int64_t i = 0;
    for (const APInt &v : stored.getValues<APInt>()) {
      int64_t c = p.axis >= 0 ? (i / inner) % axisSize : 0;
      float x = p.isSigned ? float(v.getSExtValue()) : float(v.getZExtValue());
      float d = x - float(p.zeroPoints[c]);
      values.push_back(d * float(p.scales[c]));
      ++i;
    }
    auto f32Ty = RankedTensorType::get(shape, rewriter.getF32Type());
    return arith::ConstantOp::create(
        rewriter, op.getLoc(), f32Ty,
        DenseElementsAttr::get(f32Ty, ArrayRef<float>(values)));
  }
};

/// q = saturate(round_half_to_even(x / scale) + zero_point), the division
/// exact (not a multiplication by a rounded reciprocal).
struct LowerQuantize : OpRewritePattern<quant::QuantizeCastOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(quant::QuantizeCastOp op,
                                PatternRewriter &rewriter) const override {
    auto outTy = dyn_cast<RankedTensorType>(op.getResult().getType());
    if (!outTy || !outTy.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "not a static ranked tensor");
    std::optional<QuantParams> p = quantParamsOf(outTy.getElementType());
    if (!p || p->storage.getWidth() > 16)
      return rewriter.notifyMatchFailure(op, "not uniform 8/16-bit storage");
    Location loc = op.getLoc();
    tessel::TosaBuilder tb(rewriter, loc);
    Type f32 = rewriter.getF32Type();
    auto f32Ty = withElement(outTy, f32);
    Value x = op.getInput();
    if (!cast<RankedTensorType>(x.getType()).getElementType().isF32())
      x = arith::ExtFOp::create(rewriter, loc, f32Ty, x);
    int64_t rank = outTy.getRank();
    Value scale;
    if (p->axis < 0) {
      // Per tensor: a splat of the full shape (stored once, filled at run
      // time if large), which layout passes see as a constant and move
      // transposes across, as they do for the rest of this elementwise
      // chain.
      scale = arith::ConstantOp::create(
          rewriter, loc,
          DenseElementsAttr::get(f32Ty, float(p->scales.front())));
    } else {
      scale = paramTensor(rewriter, loc, p->scales, rank, p->axis);
    }
    SmallVector<int64_t> multiples;
    for (auto [have, want] :
         llvm::zip(cast<RankedTensorType>(scale.getType()).getShape(),
                   outTy.getShape()))
      multiples.push_back(have == want ? 1 : want);
    if (llvm::any_of(multiples, [](int64_t m) { return m != 1; }))
      scale = tosa::TileOp::create(rewriter, loc, f32Ty, scale,
                                   tb.shape(multiples));
    Value v = arith::DivFOp::create(rewriter, loc, x, scale);
    v = math::RoundEvenOp::create(rewriter, loc, v);
    v = tb.add(v, paramTensor(rewriter, loc, toDoubles(p->zeroPoints), rank,
                              p->axis));
    v = tosa::ClampOp::create(rewriter, loc, f32Ty, v,
                              rewriter.getFloatAttr(f32, double(p->min)),
                              rewriter.getFloatAttr(f32, double(p->max)));
    Value i = arith::FPToSIOp::create(
        rewriter, loc, withElement(outTy, rewriter.getI32Type()), v);
    i = arith::TruncIOp::create(rewriter, loc, withElement(outTy, p->storage),
                                i);
    rewriter.replaceOpWithNewOp<quant::StorageCastOp>(op, outTy, i);
    return success();
  }
};

bool isQuantized(Type t) {
  if (auto shaped = dyn_cast<ShapedType>(t))
    t = shaped.getElementType();
  return isa<quant::QuantizedType>(t);
}

struct TesselLowerQuantPass
    : tessel::impl::TesselLowerQuantBase<TesselLowerQuantPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<LowerDequantize, LowerQuantize>(&getContext());
    // One walk, no folding: upstream folds dcast(qcast(x)) to x, which
    // would drop the rounding and saturation of a quantize-dequantize pair.
    walkAndApplyPatterns(getOperation(), std::move(patterns));
    // Storage casts that meet cancel: scast(scast(x)) is x.
    getOperation()->walk([](quant::StorageCastOp op) {
      auto inner = op.getInput().getDefiningOp<quant::StorageCastOp>();
      if (inner && inner.getInput().getType() == op.getType())
        op.getResult().replaceAllUsesWith(inner.getInput());
    });
    WalkResult leftover = getOperation()->walk([](Operation *op) {
      for (Type t : llvm::concat<const Type>(op->getOperandTypes(),
                                             op->getResultTypes()))
        if (isQuantized(t) && !isa<quant::StorageCastOp>(op)) {
          op->emitError() << "quantized value of type " << t
                          << " has no lowering here: only quant.qcast, "
                             "quant.dcast and quant.scast are lowered";
          return WalkResult::interrupt();
        }
      return WalkResult::advance();
    });
    if (leftover.wasInterrupted())
      return signalPassFailure();
    // Storage casts left without users (the casts into quantized types of
    // lowered values) go, in reverse order so a chain goes whole.
    SmallVector<quant::StorageCastOp> casts;
    getOperation()->walk([&](quant::StorageCastOp op) { casts.push_back(op); });
    for (quant::StorageCastOp op : llvm::reverse(casts))
      if (op->use_empty())
        op->erase();
    WalkResult stillQuantized = getOperation()->walk([](Operation *op) {
      for (Type t : op->getResultTypes())
        if (isQuantized(t)) {
          op->emitError() << "quantized value of type " << t
                          << " is still used after lowering";
          return WalkResult::interrupt();
        }
      return WalkResult::advance();
    });
    if (stillQuantized.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
