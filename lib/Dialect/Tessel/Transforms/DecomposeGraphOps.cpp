//===- DecomposeGraphOps.cpp - tessel ops -> TOSA ---------------------------===//
//
// Each pattern expands one tessel graph op into TOSA (and math.sqrt on
// tensors). The expansions follow the numerically stable textbook forms, the
// same ones ONNX's function bodies and PyTorch's reference kernels use.
//
//===----------------------------------------------------------------------===//
#include "tessel/Dialect/Tessel/IR/TesselDialect.h"
#include "tessel/Dialect/Tessel/Transforms/Passes.h"
#include "tessel/Dialect/Tessel/Utils/TosaBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>
#include <limits>

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELDECOMPOSEGRAPHOPS
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {

int64_t rankOf(Value v) { return cast<RankedTensorType>(v.getType()).getRank(); }
Type elemOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
}
ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

/// softmax / log_softmax: y = exp(x - max) / sum(exp(x - max)).
template <typename OpT, bool isLog>
struct DecomposeSoftmax : OpRewritePattern<OpT> {
  using OpRewritePattern<OpT>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpT op,
                                PatternRewriter &rewriter) const override {
    TosaBuilder tb(rewriter, op.getLoc());
    int64_t axis = op.getNormalizedAxis();
    // f16/bf16 are computed in f32, as PyTorch and ONNX Runtime do: a
    // low-precision running sum loses the small terms.
    Value x = tb.widen(op.getInput());
    Value shifted = tb.sub(x, tb.reduceMax(x, axis));
    Value e = tb.exp(shifted);
    Value sum = tb.reduceSum(e, axis);
    Value y = isLog ? tb.sub(shifted, tb.log(sum))
                    : tb.mul(e, tb.reciprocal(sum));
    rewriter.replaceOp(op, tb.narrow(y, elemOf(op.getInput())));
    return success();
  }
};

/// Mean over axes [first, rank), keeping them with size 1.
Value meanOverTrailing(TosaBuilder &tb, Value x, int64_t first) {
  int64_t count = 1;
  for (int64_t d : shapeOf(x).drop_front(first))
    count *= d;
  Value sum = x;
  for (int64_t a = first; a < rankOf(x); ++a)
    sum = tb.reduceSum(sum, a);
  return tb.mul(sum, tb.scalar(elemOf(x), 1.0 / count, rankOf(x)));
}

struct DecomposeLayerNorm : OpRewritePattern<LayerNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LayerNormOp op,
                                PatternRewriter &rewriter) const override {
    Value x = op.getInput();
    int64_t axis = op.getNormalizedAxis(), rank = rankOf(x);
    // The normalized dims give the moments' count; the leading ones (a
    // batch, a sequence) may be known only at run time.
    if (llvm::any_of(shapeOf(x).drop_front(axis), ShapedType::isDynamic))
      return rewriter.notifyMatchFailure(op, "needs static normalized dims");
    TosaBuilder tb(rewriter, op.getLoc());
    Type elemTy = elemOf(x);
    x = tb.widen(x); // moments of f16/bf16 accumulate in f32
    Value centered = tb.sub(x, meanOverTrailing(tb, x, axis));
    Value var = meanOverTrailing(tb, tb.mul(centered, centered), axis);
    Value eps = tb.scalar(elemOf(x), op.getEpsilon().convertToDouble(), rank);
    Value y = tb.mul(centered, tb.rsqrt(tb.add(var, eps)));
    // scale/bias have the normalized shape: left-pad with 1s to full rank.
    auto lift = [&](Value p) {
      SmallVector<int64_t> dims(axis, 1);
      llvm::append_range(dims, shapeOf(p));
      return tb.reshape(tb.widen(p), dims);
    };
    if (Value scale = op.getScale())
      y = tb.mul(y, lift(scale));
    if (Value bias = op.getBias())
      y = tb.add(y, lift(bias));
    rewriter.replaceOp(op, tb.narrow(y, elemTy));
    return success();
  }
};

struct DecomposeBatchNorm : OpRewritePattern<BatchNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(BatchNormOp op,
                                PatternRewriter &rewriter) const override {
    TosaBuilder tb(rewriter, op.getLoc());
    Value x = op.getInput();
    int64_t rank = rankOf(x);
    int64_t axis = normalizeAxis(op.getChannelAxis(), rank);
    // Per-channel parameters become [1,..,C,..,1] so they broadcast on axis.
    auto lift = [&](Value p) {
      SmallVector<int64_t> dims(rank, 1);
      dims[axis] = shapeOf(p)[0];
      return tb.reshape(p, dims);
    };
    Value eps = tb.scalar(elemOf(x), op.getEpsilon().convertToDouble(), 1);
    // factor = scale / sqrt(var + eps) is computed on [C] (folded when the
    // parameters are constants), then y = (x - mean) * factor + bias.
    Value factor =
        tb.mul(op.getScale(), tb.rsqrt(tb.add(op.getVariance(), eps)));
    Value y = tb.mul(tb.sub(x, lift(op.getMean())), lift(factor));
    rewriter.replaceOp(op, tb.add(y, lift(op.getBias())));
    return success();
  }
};

struct DecomposeGelu : OpRewritePattern<GeluOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GeluOp op,
                                PatternRewriter &rewriter) const override {
    TosaBuilder tb(rewriter, op.getLoc());
    Value x = op.getInput();
    Type et = elemOf(x);
    int64_t rank = rankOf(x);
    auto c = [&](double v) { return tb.scalar(et, v, rank); };
    Value inner;
    if (op.getApproximate() == GeluApproximation::None) {
      inner = tb.erf(tb.mul(x, c(0.70710678118654752440))); // x / sqrt(2)
    } else {
      Value x3 = tb.mul(tb.mul(x, x), x);
      Value poly = tb.add(x, tb.mul(x3, c(0.044715)));
      inner = tb.tanh(tb.mul(poly, c(0.79788456080286535588))); // sqrt(2/pi)
    }
    Value y = tb.mul(tb.mul(x, c(0.5)), tb.add(inner, c(1.0)));
    rewriter.replaceOp(op, y);
    return success();
  }
};

struct DecomposeConv2D : OpRewritePattern<Conv2DOp> {
  DecomposeConv2D(MLIRContext *ctx, bool keepGrouped)
      : OpRewritePattern(ctx), keepGrouped(keepGrouped) {}
  LogicalResult matchAndRewrite(Conv2DOp op,
                                PatternRewriter &rewriter) const override {
    auto inTy = cast<RankedTensorType>(op.getInput().getType());
    auto wTy = cast<RankedTensorType>(op.getWeight().getType());
    // A batch of run-time size is fine for TOSA's convolutions; the window
    // arithmetic below needs the rest static.
    bool runTimeBatch = inTy.isDynamicDim(0);
    if (llvm::any_of(inTy.getShape().drop_front(), ShapedType::isDynamic) ||
        !wTy.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "needs static shapes");
    TosaBuilder tb(rewriter, op.getLoc());
    Location loc = op.getLoc();
    Type et = inTy.getElementType();
    // f16/bf16 accumulate in f32, as TOSA's FP profile allows.
    TypeAttr acc = TypeAttr::get(et.isF64() ? et : rewriter.getF32Type());
    auto outTy = cast<RankedTensorType>(op.getType());
    int64_t groups = static_cast<int64_t>(op.getGroups());
    int64_t n = inTy.getDimSize(0), h = inTy.getDimSize(1),
            w = inTy.getDimSize(2), c = inTy.getDimSize(3);
    int64_t f = wTy.getDimSize(0), kh = wTy.getDimSize(1),
            kw = wTy.getDimSize(2);
    // TOSA wants (in + pads - effective kernel) divisible by the stride;
    // framework convs floor instead. The rows/cols past the last window are
    // never read, so trim them from the high padding, or crop the input when
    // the padding is too small.
    SmallVector<int64_t> pad(op.getPad());
    int64_t spatial[2] = {h, w}, kernel[2] = {kh, kw};
    for (int i = 0; i < 2; ++i) {
      int64_t span = spatial[i] + pad[2 * i] + pad[2 * i + 1] -
                     op.getDilation()[i] * (kernel[i] - 1) - 1;
      int64_t excess = span % op.getStride()[i];
      pad[2 * i + 1] -= excess;
      if (pad[2 * i + 1] < 0) {
        spatial[i] += pad[2 * i + 1];
        pad[2 * i + 1] = 0;
      }
      if (spatial[i] < 1)
        return rewriter.notifyMatchFailure(op, "windows see only padding");
    }
    Value input = op.getInput();
    // Channels [c0, c0 + count) of x (N x H x W x C), at any batch.
    auto channels = [&](Value x, int64_t c0, int64_t count) -> Value {
      if (!runTimeBatch)
        return tb.slice(x, {0, 0, 0, c0}, {n, h, w, count});
      SmallVector<OpFoldResult> offsets = {
          rewriter.getIndexAttr(0), rewriter.getIndexAttr(0),
          rewriter.getIndexAttr(0), rewriter.getIndexAttr(c0)};
      SmallVector<OpFoldResult> sizes = {
          tensor::DimOp::create(rewriter, loc, x, 0).getResult(),
          rewriter.getIndexAttr(h), rewriter.getIndexAttr(w),
          rewriter.getIndexAttr(count)};
      return tensor::ExtractSliceOp::create(
          rewriter, loc,
          RankedTensorType::get({ShapedType::kDynamic, h, w, count}, et), x,
          offsets, sizes, SmallVector<OpFoldResult>(4, rewriter.getIndexAttr(1)));
    };
    if (spatial[0] != h || spatial[1] != w) {
      // The rows and columns no window reads are cropped.
      h = spatial[0];
      w = spatial[1];
      input = channels(input, 0, c);
    }
    DenseI64ArrayAttr padAttr = rewriter.getDenseI64ArrayAttr(pad);
    auto conv = [&](Value in, Value wt, Value bias, RankedTensorType ty) {
      return tosa::Conv2DOp::create(rewriter, loc, ty, in, wt, bias,
                                    tb.zeroPoint(et), tb.zeroPoint(et),
                                    padAttr, op.getStrideAttr(),
                                    op.getDilationAttr(), acc)
          .getResult();
    };
    if (groups == 1) {
      rewriter.replaceOp(op, conv(input, op.getWeight(), op.getBias(), outTy));
      return success();
    }
    if (groups == c) {
      // Depthwise: output channel o = ci * M + m, the order of
      // tosa.depthwise_conv2d's [KH, KW, C, M] weights.
      int64_t m = f / c;
      Value wt = tb.reshape(op.getWeight(), {c, m, kh, kw});
      wt = tb.transpose(wt, {2, 3, 0, 1});
      Value y = tosa::DepthwiseConv2DOp::create(
          rewriter, loc, outTy, input, wt, op.getBias(),
          tb.zeroPoint(et), tb.zeroPoint(et), padAttr,
          op.getStrideAttr(), op.getDilationAttr(), acc);
      rewriter.replaceOp(op, y);
      return success();
    }
    int64_t cg = c / groups, fg = f / groups;
    // For the kernel library's grouped kernel: one op, whatever the group
    // count (the code does not grow with it, and no concat copies).
    if (keepGrouped && et.isF32()) {
      rewriter.replaceOp(op, wholeGrouped(rewriter, op, input, pad, groups));
      return success();
    }
    // General groups: one conv per group on channel slices, then concat.
    auto groupTy = RankedTensorType::get(
        {outTy.getDimSize(0), outTy.getDimSize(1), outTy.getDimSize(2), fg},
        et);
    SmallVector<Value> parts;
    for (int64_t g = 0; g < groups; ++g) {
      Value in = channels(input, g * cg, cg);
      Value wt = tb.slice(op.getWeight(), {g * fg, 0, 0, 0}, {fg, kh, kw, cg});
      Value bias = tb.slice(op.getBias(), {g * fg}, {fg});
      parts.push_back(conv(in, wt, bias, groupTy));
    }
    rewriter.replaceOp(op, tb.concat(parts, 3));
    return success();
  }

  /// The grouped convolution as one linalg.conv_2d_nhwgc_gfhwc on `input`
  /// (N x H x W x C, H and W already trimmed to the windows) padded by
  /// `pad` [top, bottom, left, right], plus the bias.
  Value wholeGrouped(PatternRewriter &rewriter, Conv2DOp op, Value input,
                     ArrayRef<int64_t> pad, int64_t groups) const {
    TosaBuilder tb(rewriter, op.getLoc());
    Location loc = op.getLoc();
    auto inTy = cast<RankedTensorType>(input.getType());
    auto outTy = cast<RankedTensorType>(op.getType());
    Type et = inTy.getElementType();
    int64_t n = inTy.getDimSize(0), c = inTy.getDimSize(3),
            f = outTy.getDimSize(3);
    auto wTy = cast<RankedTensorType>(op.getWeight().getType());
    int64_t kh = wTy.getDimSize(1), kw = wTy.getDimSize(2), cg = c / groups,
            fg = f / groups;
    Value x = input;
    if (llvm::any_of(pad, [](int64_t p) { return p != 0; })) {
      SmallVector<int64_t> padded = {n, inTy.getDimSize(1) + pad[0] + pad[1],
                                     inTy.getDimSize(2) + pad[2] + pad[3], c};
      x = tosa::PadOp::create(
          rewriter, loc, RankedTensorType::get(padded, et), x,
          tb.shape({0, 0, pad[0], pad[1], pad[2], pad[3], 0, 0}),
          tb.zeroPoint(et));
    }
    ArrayRef<int64_t> xs = cast<RankedTensorType>(x.getType()).getShape();
    x = tensor::ExpandShapeOp::create(
        rewriter, loc,
        RankedTensorType::get({n, xs[1], xs[2], groups, cg}, et), x,
        ArrayRef<ReassociationIndices>{{0}, {1}, {2}, {3, 4}});
    Value w = tensor::ExpandShapeOp::create(
        rewriter, loc, RankedTensorType::get({groups, fg, kh, kw, cg}, et),
        op.getWeight(),
        ArrayRef<ReassociationIndices>{{0, 1}, {2}, {3}, {4}});
    auto out5 = RankedTensorType::get({n, outTy.getDimSize(1),
                                       outTy.getDimSize(2), groups, fg},
                                      et);
    SmallVector<Value> batch;
    if (ShapedType::isDynamic(n))
      batch.push_back(tensor::DimOp::create(rewriter, loc, input, 0));
    Value empty = tensor::EmptyOp::create(rewriter, loc, out5.getShape(), et,
                                          batch);
    Value zero = arith::ConstantOp::create(rewriter, loc,
                                           rewriter.getFloatAttr(et, 0.0));
    Value init =
        linalg::FillOp::create(rewriter, loc, ValueRange{zero},
                               ValueRange{empty})
            .getResult(0);
    Value y = linalg::Conv2DNhwgcGfhwcOp::create(
                  rewriter, loc, TypeRange{out5}, ValueRange{x, w},
                  ValueRange{init},
                  rewriter.getI64TensorAttr(op.getStride()),
                  rewriter.getI64TensorAttr(op.getDilation()))
                  .getResult(0);
    y = tensor::CollapseShapeOp::create(
        rewriter, loc, outTy, y,
        ArrayRef<ReassociationIndices>{{0}, {1}, {2}, {3, 4}});
    return tb.add(y, tb.reshape(op.getBias(), {1, 1, 1, f}));
  }

  bool keepGrouped;
};

struct DecomposeReduceMean : OpRewritePattern<ReduceMeanOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReduceMeanOp op,
                                PatternRewriter &rewriter) const override {
    Value x = op.getInput();
    int64_t rank = rankOf(x);
    int64_t axis = normalizeAxis(op.getAxis(), rank);
    int64_t count = shapeOf(x)[axis];
    TosaBuilder tb(rewriter, op.getLoc());
    Value sum = tb.reduceSum(tb.widen(x), axis); // f16/bf16 sum in f32
    Value scale;
    if (!ShapedType::isDynamic(count)) {
      scale = tb.scalar(elemOf(sum), 1.0 / count, rank);
    } else {
      // 1 / the reduced size, read at run time (all-1s shape: broadcast).
      Location loc = op.getLoc();
      Type elem = elemOf(sum);
      Value n = arith::UIToFPOp::create(
          rewriter, loc, elem,
          arith::IndexCastUIOp::create(
              rewriter, loc, rewriter.getI64Type(),
              tensor::DimOp::create(rewriter, loc, x, axis)));
      Value inverse = arith::DivFOp::create(
          rewriter, loc,
          arith::ConstantOp::create(rewriter, loc, elem, rewriter.getFloatAttr(elem, 1.0)),
          n);
      scale = tensor::FromElementsOp::create(
          rewriter, loc,
          RankedTensorType::get(SmallVector<int64_t>(rank, 1), elem),
          ValueRange{inverse});
    }
    Value mean = tb.mul(sum, scale);
    rewriter.replaceOp(op, tb.narrow(mean, elemOf(x)));
    return success();
  }
};

/// TOSA has no sort or top-k. k rounds of (reduce_max, argmax) each take the
/// current first maximum and then mask its position with the lowest value;
/// argmax returns the first maximum, which gives the tie order (lower index
/// first). The smallest k are the largest of an exact order-reversing map:
/// -x for floats, -1 - x (= ~x) for integers (no overflow at the minimum).
struct DecomposeTopK : OpRewritePattern<TopKOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TopKOp op,
                                PatternRewriter &rewriter) const override {
    Value x = op.getInput();
    auto type = cast<RankedTensorType>(x.getType());
    int64_t rank = type.getRank(), axis = op.getNormalizedAxis();
    int64_t n = type.getDimSize(axis), k = op.getK();
    if (ShapedType::isDynamic(n))
      return rewriter.notifyMatchFailure(op, "run-time size along the axis");
    Location loc = op.getLoc();
    TosaBuilder tb(rewriter, loc);
    Type et = type.getElementType();
    bool isFloat = isa<FloatType>(et);
    // A rank-`rank` all-1s constant of `et` (TosaBuilder's is float only).
    auto splat = [&](double v) -> Value {
      if (isFloat)
        return tb.scalar(et, v, rank);
      auto t = RankedTensorType::get(SmallVector<int64_t>(rank, 1), et);
      APInt bits(et.getIntOrFloatBitWidth(), static_cast<int64_t>(v),
                 /*isSigned=*/true);
      return tosa::ConstOp::create(rewriter, loc, t,
                                   DenseElementsAttr::get(t, bits));
    };
    auto reverseOrder = [&](Value v) {
      return tb.sub(splat(isFloat ? 0.0 : -1.0), v);
    };
    double lowest;
    if (isFloat) {
      lowest = -std::numeric_limits<double>::infinity();
    } else {
      auto it = cast<IntegerType>(et);
      lowest = it.isUnsigned() ? 0.0 : -std::ldexp(1.0, it.getWidth() - 1);
    }
    Value y = op.getLargest() ? x : reverseOrder(x);
    SmallVector<int64_t> iotaShape(rank, 1);
    iotaShape[axis] = n;
    SmallVector<int32_t> iota(n);
    for (int64_t i = 0; i < n; ++i)
      iota[i] = i;
    auto iotaTy = RankedTensorType::get(iotaShape, rewriter.getI32Type());
    Value positions = tosa::ConstOp::create(
        rewriter, loc, iotaTy, DenseElementsAttr::get(iotaTy, ArrayRef(iota)));
    Value floor = splat(lowest);
    auto boolTy = RankedTensorType::get(type.getShape(), rewriter.getI1Type());
    SmallVector<int64_t> removed(type.getShape()), kept(type.getShape());
    removed.erase(removed.begin() + axis);
    kept[axis] = 1;
    SmallVector<Value> values, indices;
    for (int64_t i = 0; i < k; ++i) {
      values.push_back(tb.reduceMax(y, axis));
      Value arg = tosa::ArgMaxOp::create(
          rewriter, loc, RankedTensorType::get(removed, rewriter.getI32Type()),
          y, static_cast<uint32_t>(axis));
      indices.push_back(tb.reshape(arg, kept));
      if (i + 1 == k)
        break;
      Value hit =
          tosa::EqualOp::create(rewriter, loc, boolTy, indices.back(), positions);
      y = tosa::SelectOp::create(rewriter, loc, y.getType(), hit, floor, y);
    }
    Value vals = k == 1 ? values.front() : tb.concat(values, axis);
    Value idxs = k == 1 ? indices.front() : tb.concat(indices, axis);
    if (!op.getLargest())
      vals = reverseOrder(vals);
    idxs = arith::ExtSIOp::create(
        rewriter, loc,
        RankedTensorType::get(cast<RankedTensorType>(idxs.getType()).getShape(),
                              rewriter.getI64Type()),
        idxs);
    rewriter.replaceOp(op, {vals, idxs});
    return success();
  }
};

/// The coordinates of the nonzero elements: one loop counts them, a second
/// writes each one's row-major position, and the result unravels those
/// positions into one row per dimension. A NaN counts as nonzero, as in
/// numpy.
struct DecomposeNonZero : OpRewritePattern<NonZeroOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(NonZeroOp op,
                                PatternRewriter &rewriter) const override {
    Value x = op.getInput();
    auto type = cast<RankedTensorType>(x.getType());
    if (!type.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "run-time input sizes");
    Location loc = op.getLoc();
    ArrayRef<int64_t> shape = type.getShape();
    int64_t rank = type.getRank(), n = type.getNumElements();
    if (rank != 1)
      x = tensor::CollapseShapeOp::create(
          rewriter, loc, x,
          SmallVector<ReassociationIndices>{
              llvm::to_vector(llvm::seq<int64_t>(0, rank))});
    Type elem = type.getElementType();
    auto isNonzero = [&](OpBuilder &b, Location l, Value i) -> Value {
      Value e = tensor::ExtractOp::create(b, l, x, ValueRange{i});
      if (isa<FloatType>(elem))
        return arith::CmpFOp::create(
            b, l, arith::CmpFPredicate::UNE, e,
            arith::ConstantOp::create(b, l, elem, b.getFloatAttr(elem, 0)));
      if (!elem.isSignlessInteger())
        e = UnrealizedConversionCastOp::create(
                b, l, b.getIntegerType(elem.getIntOrFloatBitWidth()), e)
                .getResult(0);
      return arith::CmpIOp::create(
          b, l, arith::CmpIPredicate::ne, e,
          arith::ConstantIntOp::create(b, l, e.getType(), 0));
    };
    auto idx = [&](OpBuilder &b, Location l, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, l, v);
    };
    Value zero = idx(rewriter, loc, 0), one = idx(rewriter, loc, 1),
          end = idx(rewriter, loc, n);
    auto count = scf::ForOp::create(
        rewriter, loc, zero, end, one, ValueRange{zero},
        [&](OpBuilder &b, Location l, Value i, ValueRange acc) {
          Value add = arith::SelectOp::create(b, l, isNonzero(b, l, i),
                                              idx(b, l, 1), idx(b, l, 0));
          scf::YieldOp::create(
              b, l, ValueRange{arith::AddIOp::create(b, l, acc[0], add)});
        });
    Value init = tensor::EmptyOp::create(
        rewriter, loc, ArrayRef<int64_t>{ShapedType::kDynamic},
        rewriter.getIndexType(), ValueRange{count.getResult(0)});
    auto fill = scf::ForOp::create(
        rewriter, loc, zero, end, one, ValueRange{init, zero},
        [&](OpBuilder &b, Location l, Value i, ValueRange acc) {
          auto branch = scf::IfOp::create(
              b, l, isNonzero(b, l, i),
              [&](OpBuilder &tb, Location tl) {
                Value t = tensor::InsertOp::create(tb, tl, i, acc[0],
                                                   ValueRange{acc[1]});
                Value next =
                    arith::AddIOp::create(tb, tl, acc[1], idx(tb, tl, 1));
                scf::YieldOp::create(tb, tl, ValueRange{t, next});
              },
              [&](OpBuilder &eb, Location el) {
                scf::YieldOp::create(eb, el, ValueRange{acc[0], acc[1]});
              });
          scf::YieldOp::create(b, l, branch.getResults());
        });
    Value positions = fill.getResult(0);
    // Row r of the result: each position's coordinate along dimension r.
    SmallVector<int64_t> strides(rank, 1);
    for (int64_t d = rank - 2; d >= 0; --d)
      strides[d] = strides[d + 1] * shape[d + 1];
    auto outType = RankedTensorType::get({rank, ShapedType::kDynamic},
                                         rewriter.getI64Type());
    auto out = tensor::GenerateOp::create(
        rewriter, loc, outType, ValueRange{count.getResult(0)},
        [&](OpBuilder &b, Location l, ValueRange iv) {
          Value p = tensor::ExtractOp::create(b, l, positions,
                                              ValueRange{iv[1]});
          Value coord = idx(b, l, 0);
          for (int64_t d = 0; d < rank; ++d) {
            Value c = arith::RemUIOp::create(
                b, l, arith::DivUIOp::create(b, l, p, idx(b, l, strides[d])),
                idx(b, l, std::max<int64_t>(shape[d], 1)));
            Value isRow = arith::CmpIOp::create(
                b, l, arith::CmpIPredicate::eq, iv[0], idx(b, l, d));
            coord = arith::SelectOp::create(b, l, isRow, c, coord);
          }
          tensor::YieldOp::create(
              b, l,
              arith::IndexCastOp::create(b, l, b.getI64Type(), coord)
                  .getResult());
        });
    // The declared type may be more static (tensor<2x?xi64> is the only
    // form the verifier allows; a cast covers a ?x? one).
    Value result = out.getResult();
    if (result.getType() != op.getType())
      result = tensor::CastOp::create(rewriter, loc, op.getType(), result);
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct TesselDecomposeGraphOpsPass
    : tessel::impl::TesselDecomposeGraphOpsBase<TesselDecomposeGraphOpsPass> {
  using Base::Base;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateDecomposeGraphOpsPatterns(patterns, keepGrouped);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    // Anything left could not be expanded (e.g. dynamic shapes): say which.
    // Kernel ops (destination style, e.g. tessel.attention) stay, and so
    // do run-time checks (tessel-lower-index-checks expands them).
    WalkResult r = getOperation()->walk([](Operation *op) {
      if (isa_and_nonnull<TesselDialect>(op->getDialect()) &&
          !isa<DestinationStyleOpInterface, CheckIndicesOp, RequireOp>(op)) {
        op->emitError() << "cannot decompose '" << op->getName()
                        << "': dynamic shapes, and convolutions whose "
                           "windows see only padding, are not supported yet";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (r.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace

void mlir::tessel::populateDecomposeGraphOpsPatterns(
    RewritePatternSet &patterns, bool keepGrouped) {
  patterns.add<DecomposeSoftmax<SoftmaxOp, false>,
               DecomposeSoftmax<LogSoftmaxOp, true>, DecomposeLayerNorm,
               DecomposeBatchNorm, DecomposeGelu,
               DecomposeReduceMean, DecomposeTopK, DecomposeNonZero>(
      patterns.getContext());
  patterns.add<DecomposeConv2D>(patterns.getContext(), keepGrouped);
  populateDecomposeGatherScatterPatterns(patterns);
}
