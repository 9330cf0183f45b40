//===- FoldQDQ.cpp - products of dequantized values on integers -----------===//
//
// A QDQ model (ONNX Runtime's quantizer, PyTorch's export) says "int8" by
// wrapping float ops in DequantizeLinear / QuantizeLinear. The product of two
// dequantized operands is computed on the stored integers instead, exactly,
// and dequantized once with the product of the scales: the rule ONNX
// Runtime's QDQ transformer applies to MatMul. docs/quantization.md.
//
//===----------------------------------------------------------------------===//
#include "tessel/Quantization/Passes.h"

#include "QuantParams.h"

#include "tessel/Dialect/Tessel/IR/TesselDialect.h"
#include "tessel/Dialect/Tessel/Utils/TosaBuilder.h"

#include "mlir/Dialect/Quant/IR/QuantTypes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELFOLDQDQ
#include "tessel/Quantization/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;

namespace {

/// An operand that is dequantized 8-bit storage, reshaped to the operand's
/// shape: the storage integers (signless) and the quantization, its axis
/// (if any) renumbered for that shape.
struct Dequantized {
  Value storage;
  bool isSigned = true;
  SmallVector<double> scales;
  SmallVector<int64_t> zeroPoints;
  int64_t axis = -1; // per tensor
};

/// Where dimension `axis` of `from` is in `to`, a reshape of it that keeps
/// that dimension whole (the same size, after the same number of elements);
/// -1 if it does not.
int64_t remapAxis(ArrayRef<int64_t> from, ArrayRef<int64_t> to, int64_t axis) {
  int64_t before = 1;
  for (int64_t d = 0; d < axis; ++d)
    before *= from[d];
  int64_t prefix = 1;
  for (int64_t d = 0, e = to.size(); d < e; ++d) {
    if (prefix == before && to[d] == from[axis])
      return d;
    prefix *= to[d];
  }
  return -1;
}

/// Looks through tosa.reshape and tosa.transpose ops (layout changes the
/// importer puts between a DequantizeLinear and its consumer: 2-D to 3-D
/// matmul operands, Gemm's transB) for quant.dcast(quant.scast(x)) with
/// 8-bit storage; replays those ops on the storage integers.
std::optional<Dequantized> dequantized(PatternRewriter &rewriter, Value v) {
  SmallVector<Operation *> layout;
  while (Operation *def = v.getDefiningOp()) {
    if (!isa<tosa::ReshapeOp, tosa::TransposeOp>(def))
      break;
    layout.push_back(def);
    v = def->getOperand(0);
  }
  auto dcast = v.getDefiningOp<quant::DequantizeCastOp>();
  if (!dcast)
    return std::nullopt;
  auto qTy = dyn_cast<RankedTensorType>(dcast.getInput().getType());
  if (!qTy || !qTy.hasStaticShape())
    return std::nullopt;
  std::optional<tessel::QuantParams> p = tessel::quantParamsOf(qTy.getElementType());
  if (!p || p->storage.getWidth() != 8)
    return std::nullopt;
  Dequantized d;
  // The stored integers: a quantized model input or constant is already
  // integers (scast); a float quantized in the graph (QuantizeLinear, a
  // qcast) is read as its storage, which tessel-lower-quant computes.
  if (auto scast = dcast.getInput().getDefiningOp<quant::StorageCastOp>())
    d.storage = scast.getInput();
  else
    d.storage = quant::StorageCastOp::create(
        rewriter, dcast.getLoc(),
        RankedTensorType::get(qTy.getShape(), p->storage), dcast.getInput());
  d.scales = p->scales;
  d.zeroPoints = p->zeroPoints;
  d.axis = p->axis;
  d.isSigned = p->isSigned;
  // First check that the quantized axis survives every layout op, then
  // build the integer copies.
  ArrayRef<int64_t> shape = qTy.getShape();
  int64_t axis = d.axis;
  for (Operation *op : llvm::reverse(layout)) {
    auto outTy = cast<RankedTensorType>(op->getResult(0).getType());
    if (!outTy.hasStaticShape())
      return std::nullopt;
    if (axis >= 0) {
      if (auto t = dyn_cast<tosa::TransposeOp>(op)) {
        ArrayRef<int32_t> perms = t.getPerms();
        axis = llvm::find(perms, int32_t(axis)) - perms.begin();
      } else {
        axis = remapAxis(shape, outTy.getShape(), axis);
      }
      if (axis < 0)
        return std::nullopt;
    }
    shape = outTy.getShape();
  }
  d.axis = axis;
  Type storageElem = cast<RankedTensorType>(d.storage.getType()).getElementType();
  for (Operation *op : llvm::reverse(layout)) {
    auto outTy = RankedTensorType::get(
        cast<RankedTensorType>(op->getResult(0).getType()).getShape(),
        storageElem);
    if (auto t = dyn_cast<tosa::TransposeOp>(op))
      d.storage = tosa::TransposeOp::create(rewriter, op->getLoc(), outTy,
                                            d.storage, t.getPermsAttr());
    else
      d.storage = tosa::ReshapeOp::create(
          rewriter, op->getLoc(), outTy, d.storage,
          cast<tosa::ReshapeOp>(op).getShape());
  }
  return d;
}

/// `x` (signless 8-bit storage) as int8 values: uint8 minus 128, which is
/// the top bit flipped.
Value toInt8(PatternRewriter &rewriter, Location loc, const Dequantized &d) {
  if (d.isSigned)
    return d.storage;
  auto ty = cast<RankedTensorType>(d.storage.getType());
  Value flip = arith::ConstantOp::create(
      rewriter, loc,
      DenseElementsAttr::get(ty, rewriter.getIntegerAttr(ty.getElementType(),
                                                         0x80)));
  return arith::XOrIOp::create(rewriter, loc, d.storage, flip);
}

Value zeroPointConst(PatternRewriter &rewriter, Location loc, int64_t zp) {
  auto ty = RankedTensorType::get({1}, rewriter.getI8Type());
  return tosa::ConstOp::create(
      rewriter, loc, ty,
      DenseElementsAttr::get(ty, rewriter.getIntegerAttr(rewriter.getI8Type(),
                                                         zp)));
}

/// Whether `a` (activation) and `b` (weights, quantized dimension
/// `bAxis` if per axis) can run as one integer product: TOSA takes one zero
/// point per operand, so per-axis weights may vary only in scale, and the
/// activation is per tensor.
bool foldable(const Dequantized &a, const Dequantized &b, int64_t bAxis) {
  return a.axis < 0 && (b.axis < 0 || b.axis == bAxis) &&
         llvm::all_of(b.zeroPoints,
                      [&](int64_t z) { return z == b.zeroPoints[0]; });
}

/// The int8 zero point of `d` as toInt8 stores it.
int64_t int8ZeroPoint(const Dequantized &d) {
  return d.zeroPoints[0] - (d.isSigned ? 0 : 128);
}

/// `acc`, the exact i32 result of a product of `a` and `b`, dequantized to
/// `outTy` with the scale products (per `axis` of the result if b is per
/// axis).
Value dequantizeAccumulator(PatternRewriter &rewriter, Location loc, Value acc,
                            const Dequantized &a, const Dequantized &b,
                            RankedTensorType outTy, int64_t axis) {
  // The accumulator's scale: sa * sb (per output column if b is).
  SmallVector<double> scales;
  for (double sb : b.scales)
    scales.push_back(a.scales[0] * sb);
  auto i32 = rewriter.getI32Type();
  auto f = cast<FloatType>(outTy.getElementType());
  int64_t lo = quant::QuantizedType::getDefaultMinimumForInteger(true, 32);
  int64_t hi = quant::QuantizedType::getDefaultMaximumForInteger(true, 32);
  Type q = b.axis < 0
               ? Type(quant::UniformQuantizedType::get(
                     quant::QuantizationFlags::Signed, i32, f, scales[0], 0,
                     lo, hi))
               : Type(quant::UniformQuantizedPerAxisType::get(
                     quant::QuantizationFlags::Signed, i32, f, scales,
                     SmallVector<int64_t>(scales.size(), 0), axis, lo, hi));
  Value accQ = quant::StorageCastOp::create(
      rewriter, loc, RankedTensorType::get(outTy.getShape(), q), acc);
  return quant::DequantizeCastOp::create(rewriter, loc, outTy, accQ);
}

/// The exact i32 product (B x M x N) of `a` (B x M x K) and `b` (B x K x
/// N): an i8 x i8 -> i32 tosa.matmul with both zero points.
Value integerProductAccumulator(PatternRewriter &rewriter, Location loc,
                                const Dequantized &a, const Dequantized &b,
                                ArrayRef<int64_t> shape) {
  auto accTy = RankedTensorType::get(shape, rewriter.getI32Type());
  return tosa::MatMulOp::create(
      rewriter, loc, accTy, toInt8(rewriter, loc, a), toInt8(rewriter, loc, b),
      zeroPointConst(rewriter, loc, int8ZeroPoint(a)),
      zeroPointConst(rewriter, loc, int8ZeroPoint(b)));
}

/// The f32 result `outTy` (B x M x N) of the product of `a` (B x M x K) and
/// `b` (B x K x N, per tensor or per column) as an exact i8 x i8 -> i32
/// tosa.matmul, dequantized with the scale products.
Value integerProduct(PatternRewriter &rewriter, Location loc,
                     const Dequantized &a, const Dequantized &b,
                     RankedTensorType outTy) {
  Value acc = integerProductAccumulator(rewriter, loc, a, b, outTy.getShape());
  return dequantizeAccumulator(rewriter, loc, acc, a, b, outTy, /*axis=*/2);
}

/// Which products the target runs faster on integers (the pass options).
struct FoldPolicy {
  bool depthwise = true;
  int64_t minReduction = 0;
};

struct FoldMatMul : OpRewritePattern<tosa::MatMulOp> {
  FoldMatMul(MLIRContext *ctx, FoldPolicy policy)
      : OpRewritePattern(ctx), policy(policy) {}
  FoldPolicy policy;
  LogicalResult matchAndRewrite(tosa::MatMulOp op,
                                PatternRewriter &rewriter) const override {
    auto outTy = cast<RankedTensorType>(op.getType());
    if (!isa<FloatType>(outTy.getElementType()) || !outTy.hasStaticShape() ||
        !tessel::isZeroConstant(op.getAZp()) ||
        !tessel::isZeroConstant(op.getBZp()))
      return rewriter.notifyMatchFailure(op, "not a float matmul");
    if (cast<RankedTensorType>(op.getA().getType()).getDimSize(2) <
        policy.minReduction)
      return rewriter.notifyMatchFailure(op, "reduction below min-reduction");
    std::optional<Dequantized> a = dequantized(rewriter, op.getA());
    std::optional<Dequantized> b = a ? dequantized(rewriter, op.getB())
                                     : std::nullopt;
    if (!a || !b)
      return rewriter.notifyMatchFailure(op, "operands not dequantized");
    if (!foldable(*a, *b, /*bAxis=*/2))
      return rewriter.notifyMatchFailure(op, "unsupported quantization axes");
    rewriter.replaceOp(op, integerProduct(rewriter, op.getLoc(), *a, *b, outTy));
    return success();
  }
};

/// tosa.conv2d and tosa.depthwise_conv2d want the padded extent to fit
/// the strides exactly; ONNX floors, so the bottom/right padding rows (then
/// the input rows of `x`) that no window reads go. Returns the padding.
SmallVector<int64_t> trimToStrides(tessel::TosaBuilder &tb, Dequantized &x,
                                   ArrayRef<int64_t> kernel,
                                   ArrayRef<int64_t> padding,
                                   ArrayRef<int64_t> stride,
                                   ArrayRef<int64_t> dilation) {
  SmallVector<int64_t> pad(padding);
  SmallVector<int64_t> inShape(
      cast<RankedTensorType>(x.storage.getType()).getShape());
  bool trimmed = false;
  for (int d = 0; d < 2; ++d) {
    int64_t extent = inShape[1 + d] - 1 + pad[2 * d] + pad[2 * d + 1] -
                     (kernel[d] - 1) * dilation[d];
    int64_t rem = extent % stride[d];
    int64_t fromPad = std::min(rem, pad[2 * d + 1]);
    pad[2 * d + 1] -= fromPad;
    inShape[1 + d] -= rem - fromPad;
    trimmed |= rem > fromPad;
  }
  if (trimmed)
    x.storage = tb.slice(x.storage, {0, 0, 0, 0}, inShape);
  return pad;
}

/// The exact i32 result (N x OH x OW x F, `shape`) of an i8 x i8 -> i32
/// TOSA convolution (tosa.conv2d or tosa.depthwise_conv2d: the same
/// operands) of `x` and `w` (zero point 0 as int8), with the input's zero
/// point (its padding reads as 0.0) and a zero bias.
template <typename TosaConvOp>
Value integerConvAccumulator(PatternRewriter &rewriter, Location loc,
                             const Dequantized &x, const Dequantized &w,
                             ArrayRef<int64_t> shape, ArrayRef<int64_t> pad,
                             DenseI64ArrayAttr stride,
                             DenseI64ArrayAttr dilation) {
  auto accTy = RankedTensorType::get(shape, rewriter.getI32Type());
  auto biasTy = RankedTensorType::get({shape[3]}, rewriter.getI32Type());
  Value zeroBias = tosa::ConstOp::create(
      rewriter, loc, biasTy,
      DenseElementsAttr::get(biasTy, rewriter.getI32IntegerAttr(0)));
  return TosaConvOp::create(
      rewriter, loc, accTy, toInt8(rewriter, loc, x), toInt8(rewriter, loc, w),
      zeroBias, zeroPointConst(rewriter, loc, int8ZeroPoint(x)),
      zeroPointConst(rewriter, loc, 0), rewriter.getDenseI64ArrayAttr(pad),
      stride, dilation, TypeAttr::get(rewriter.getI32Type()));
}

/// `acc`, the exact i32 result of a convolution of `x` and `w` (N x OH x
/// OW x F), dequantized to `outTy` per output channel (axis 3) if `w` is
/// per channel.
Value dequantizeConv(PatternRewriter &rewriter, Location loc, Value acc,
                     const Dequantized &x, Dequantized w,
                     RankedTensorType outTy) {
  if (w.axis >= 0)
    w.axis = 3; // the output channel
  return dequantizeAccumulator(rewriter, loc, acc, x, w, outTy, /*axis=*/3);
}

/// `y` plus the convolution's float bias (F values) per output channel.
Value addChannelBias(tessel::TosaBuilder &tb, Value y, Value bias) {
  auto biasTy = cast<RankedTensorType>(bias.getType());
  return tb.add(y, tb.reshape(bias, {1, 1, 1, biasTy.getNumElements()}));
}

/// Whether a convolution has no zero points and one group (tosa.conv2d has
/// zero-point operands, tessel.conv2d groups).
bool plainConv(tosa::Conv2DOp op) {
  return tessel::isZeroConstant(op.getInputZp()) &&
         tessel::isZeroConstant(op.getWeightZp());
}
bool plainConv(tessel::Conv2DOp op) { return op.getGroups() == 1; }

/// A convolution (ONNX Conv, one group) of a dequantized input and
/// dequantized weights runs on the stored integers, then adds the float
/// bias. A pointwise one (1x1, stride 1, no padding) is the product of the
/// N*H*W x C pixels and the C x F filter, the same integer matmul as
/// FoldMatMul's; any other is an i8 x i8 -> i32 tosa.conv2d with the zero
/// points as operands (its padding reads as the input's zero point, i.e.
/// 0.0, as the float convolution pads), which the int8 kernel runs on an
/// im2col matrix.
template <typename ConvOp>
struct FoldConv : OpRewritePattern<ConvOp> {
  FoldConv(MLIRContext *ctx, FoldPolicy policy)
      : OpRewritePattern<ConvOp>(ctx), policy(policy) {}
  FoldPolicy policy;
  LogicalResult matchAndRewrite(ConvOp op,
                                PatternRewriter &rewriter) const override {
    auto outTy = cast<RankedTensorType>(op.getType());
    auto wTy = cast<RankedTensorType>(op.getWeight().getType());
    if (!isa<FloatType>(outTy.getElementType()) || !outTy.hasStaticShape() ||
        !wTy.hasStaticShape() || !plainConv(op))
      return rewriter.notifyMatchFailure(op, "not a float conv of one group");
    if (wTy.getDimSize(1) * wTy.getDimSize(2) * wTy.getDimSize(3) <
        policy.minReduction)
      return rewriter.notifyMatchFailure(op, "reduction below min-reduction");
    std::optional<Dequantized> x = dequantized(rewriter, op.getInput());
    std::optional<Dequantized> w = x ? dequantized(rewriter, op.getWeight())
                                     : std::nullopt;
    if (!x || !w)
      return rewriter.notifyMatchFailure(op, "operands not dequantized");
    if (!foldable(*x, *w, /*bAxis=*/0))
      return rewriter.notifyMatchFailure(op, "unsupported quantization axes");
    // TOSA's int8 convolution takes a weight zero point of 0 only.
    if (int8ZeroPoint(*w) != 0 &&
        (wTy.getDimSize(1) != 1 || wTy.getDimSize(2) != 1))
      return rewriter.notifyMatchFailure(op, "weights with a zero point");
    Location loc = op.getLoc();
    tessel::TosaBuilder tb(rewriter, loc);
    ArrayRef<int64_t> out = outTy.getShape(); // N x H x W x F
    int64_t f = out[3];
    bool pointwise =
        wTy.getDimSize(1) == 1 && wTy.getDimSize(2) == 1 &&
        llvm::all_of(op.getPad(), [](int64_t p) { return p == 0; }) &&
        llvm::all_of(op.getStride(), [](int64_t s) { return s == 1; });
    Value y;
    if (pointwise) {
      int64_t pixels = out[0] * out[1] * out[2], c = wTy.getDimSize(3);
      // Pixels x C (the activation, per tensor) and C x F (the filter, per
      // output channel: the product's column).
      x->storage = tb.reshape(x->storage, {1, pixels, c});
      w->storage = tb.reshape(
          tb.transpose(tb.reshape(w->storage, {f, c}), {1, 0}), {1, c, f});
      if (w->axis >= 0)
        w->axis = 2;
      auto prodTy =
          RankedTensorType::get({1, pixels, f}, outTy.getElementType());
      y = tb.reshape(integerProduct(rewriter, loc, *x, *w, prodTy), out);
    } else {
      SmallVector<int64_t> pad =
          trimToStrides(tb, *x, {wTy.getDimSize(1), wTy.getDimSize(2)},
                        op.getPad(), op.getStride(), op.getDilation());
      Value acc = integerConvAccumulator<tosa::Conv2DOp>(
          rewriter, loc, *x, *w, out, pad, op.getStrideAttr(),
          op.getDilationAttr());
      y = dequantizeConv(rewriter, loc, acc, *x, *w, outTy);
    }
    rewriter.replaceOp(op, addChannelBias(tb, y, op.getBias()));
    return success();
  }
};

/// A depthwise convolution (ONNX Conv with group = C input channels = C
/// outputs) of a dequantized input (per tensor) and dequantized weights
/// (per tensor or per channel, zero point 0 as int8) runs on the stored
/// integers as an i8 x i8 -> i32 tosa.depthwise_conv2d with the input's
/// zero point (its padding reads as it, i.e. 0.0), dequantized per channel
/// and plus the float bias. Channel multipliers above 1 are
/// FoldGroupedConv's.
struct FoldDepthwiseConv : OpRewritePattern<tessel::Conv2DOp> {
  FoldDepthwiseConv(MLIRContext *ctx, FoldPolicy policy)
      : OpRewritePattern(ctx), policy(policy) {}
  FoldPolicy policy;
  LogicalResult matchAndRewrite(tessel::Conv2DOp op,
                                PatternRewriter &rewriter) const override {
    auto outTy = cast<RankedTensorType>(op.getType());
    auto wTy = cast<RankedTensorType>(op.getWeight().getType());
    auto inTy = cast<RankedTensorType>(op.getInput().getType());
    int64_t c = inTy.getDimSize(3);
    if (!isa<FloatType>(outTy.getElementType()) || !outTy.hasStaticShape() ||
        !wTy.hasStaticShape() || !inTy.hasStaticShape() || c == 1 ||
        op.getGroups() != c || wTy.getDimSize(0) != c)
      return rewriter.notifyMatchFailure(op, "not a float depthwise conv");
    if (!policy.depthwise ||
        wTy.getDimSize(1) * wTy.getDimSize(2) < policy.minReduction)
      return rewriter.notifyMatchFailure(op, "left in float by the options");
    std::optional<Dequantized> x = dequantized(rewriter, op.getInput());
    std::optional<Dequantized> w = x ? dequantized(rewriter, op.getWeight())
                                     : std::nullopt;
    if (!x || !w)
      return rewriter.notifyMatchFailure(op, "operands not dequantized");
    if (!foldable(*x, *w, /*bAxis=*/0) || int8ZeroPoint(*w) != 0)
      return rewriter.notifyMatchFailure(op, "unsupported quantization");
    Location loc = op.getLoc();
    tessel::TosaBuilder tb(rewriter, loc);
    int64_t kh = wTy.getDimSize(1), kw = wTy.getDimSize(2);
    SmallVector<int64_t> pad = trimToStrides(
        tb, *x, {kh, kw}, op.getPad(), op.getStride(), op.getDilation());
    // C x KH x KW x 1 (OHWI) -> KH x KW x C x 1, TOSA's [KH, KW, C, M].
    w->storage = tb.transpose(w->storage, {1, 2, 0, 3});
    Value acc = integerConvAccumulator<tosa::DepthwiseConv2DOp>(
        rewriter, loc, *x, *w, outTy.getShape(), pad, op.getStrideAttr(),
        op.getDilationAttr());
    Value y = dequantizeConv(rewriter, loc, acc, *x, *w, outTy);
    rewriter.replaceOp(op, addChannelBias(tb, y, op.getBias()));
    return success();
  }
};

/// Slices `d`'s storage (the quantization is unchanged: the scales stay
/// those of the whole tensor, applied after the groups are joined).
Dequantized sliceOf(tessel::TosaBuilder &tb, const Dequantized &d,
                    ArrayRef<int64_t> start, ArrayRef<int64_t> size) {
  Dequantized part = d;
  part.storage = tb.slice(d.storage, start, size);
  return part;
}

/// A grouped convolution (ONNX Conv with 1 < group, other than depthwise
/// with channel multiplier 1, which FoldDepthwiseConv takes) of a
/// dequantized input (per tensor) and dequantized weights (per tensor or
/// per output channel) runs on the stored integers one part at a time, as
/// the float decomposition does (tessel-decompose-graph-ops): the exact i32
/// results of the parts are joined along the channels, then dequantized
/// once per output channel and added to the float bias.
///  * C / group > 1 input channels per group: per group, the input's
///    channel slice and the group's F / group filters, as FoldConv computes
///    one group (a pointwise integer matmul, else an i8 tosa.conv2d, whose
///    int8 kernel reads the slice where it lies); the parts are adjacent
///    output channels.
///  * One input channel per group (depthwise with channel multiplier m =
///    F / C): output channel c * m + j is input channel c's j-th filter, so
///    part j is the i8 tosa.depthwise_conv2d of filters j, m + j, ... and
///    the parts interleave (joined on a new innermost axis).
struct FoldGroupedConv : OpRewritePattern<tessel::Conv2DOp> {
  FoldGroupedConv(MLIRContext *ctx, FoldPolicy policy)
      : OpRewritePattern(ctx), policy(policy) {}
  FoldPolicy policy;
  LogicalResult matchAndRewrite(tessel::Conv2DOp op,
                                PatternRewriter &rewriter) const override {
    auto outTy = cast<RankedTensorType>(op.getType());
    auto wTy = cast<RankedTensorType>(op.getWeight().getType());
    auto inTy = cast<RankedTensorType>(op.getInput().getType());
    const int64_t groups = static_cast<int64_t>(op.getGroups());
    if (!isa<FloatType>(outTy.getElementType()) || !outTy.hasStaticShape() ||
        !wTy.hasStaticShape() || !inTy.hasStaticShape() || groups <= 1)
      return rewriter.notifyMatchFailure(op, "not a float grouped conv");
    ArrayRef<int64_t> out = outTy.getShape(); // N x OH x OW x F
    const int64_t c = inTy.getDimSize(3), f = out[3];
    const int64_t cg = c / groups, fg = f / groups;
    if (cg == 1 && fg == 1)
      return rewriter.notifyMatchFailure(op, "depthwise: FoldDepthwiseConv");
    if ((cg == 1 && !policy.depthwise) ||
        wTy.getDimSize(1) * wTy.getDimSize(2) * cg < policy.minReduction)
      return rewriter.notifyMatchFailure(op, "left in float by the options");
    std::optional<Dequantized> x = dequantized(rewriter, op.getInput());
    std::optional<Dequantized> w = x ? dequantized(rewriter, op.getWeight())
                                     : std::nullopt;
    if (!x || !w)
      return rewriter.notifyMatchFailure(op, "operands not dequantized");
    const int64_t kh = wTy.getDimSize(1), kw = wTy.getDimSize(2);
    const bool pointwise =
        kh == 1 && kw == 1 &&
        llvm::all_of(op.getPad(), [](int64_t p) { return p == 0; }) &&
        llvm::all_of(op.getStride(), [](int64_t s) { return s == 1; });
    // TOSA's int8 convolutions take a weight zero point of 0 only.
    if (!foldable(*x, *w, /*bAxis=*/0) ||
        (int8ZeroPoint(*w) != 0 && (!pointwise || cg == 1)))
      return rewriter.notifyMatchFailure(op, "unsupported quantization");
    Location loc = op.getLoc();
    tessel::TosaBuilder tb(rewriter, loc);
    // The input as int8 once (one flip of the whole tensor, which fuses
    // with the quantization that produced it), then sliced.
    if (!x->isSigned) {
      x->zeroPoints = {int8ZeroPoint(*x)};
      x->storage = toInt8(rewriter, loc, *x);
      x->isSigned = true;
    }
    SmallVector<Value> parts;
    Value acc;
    if (cg == 1) {
      SmallVector<int64_t> pad = trimToStrides(
          tb, *x, {kh, kw}, op.getPad(), op.getStride(), op.getDilation());
      // C*m x KH x KW x 1 (f = c*m + j) -> C x m x KH x KW; filter j of
      // every channel is TOSA's [KH, KW, C, 1].
      Value wcm = tb.reshape(w->storage, {c, fg, kh, kw});
      SmallVector<int64_t> partShape = {out[0], out[1], out[2], c};
      for (int64_t j = 0; j < fg; ++j) {
        Dequantized wj = *w;
        wj.storage = tb.transpose(tb.slice(wcm, {0, j, 0, 0}, {c, 1, kh, kw}),
                                  {2, 3, 0, 1});
        Value part = integerConvAccumulator<tosa::DepthwiseConv2DOp>(
            rewriter, loc, *x, wj, partShape, pad, op.getStrideAttr(),
            op.getDilationAttr());
        parts.push_back(tb.reshape(part, {out[0], out[1], out[2], c, 1}));
      }
      acc = tb.reshape(tb.concat(parts, /*axis=*/4), out);
    } else {
      SmallVector<int64_t> partShape = {out[0], out[1], out[2], fg};
      for (int64_t g = 0; g < groups; ++g) {
        Dequantized xg = sliceOf(tb, *x, {0, 0, 0, g * cg},
                                 {inTy.getDimSize(0), inTy.getDimSize(1),
                                  inTy.getDimSize(2), cg});
        Dequantized wg = sliceOf(tb, *w, {g * fg, 0, 0, 0}, {fg, kh, kw, cg});
        if (pointwise) {
          // Pixels x C/group by the group's C/group x F/group filter.
          int64_t pixels = out[0] * out[1] * out[2];
          xg.storage = tb.reshape(xg.storage, {1, pixels, cg});
          wg.storage = tb.reshape(
              tb.transpose(tb.reshape(wg.storage, {fg, cg}), {1, 0}),
              {1, cg, fg});
          parts.push_back(tb.reshape(
              integerProductAccumulator(rewriter, loc, xg, wg, {1, pixels, fg}),
              partShape));
          continue;
        }
        SmallVector<int64_t> pad = trimToStrides(
            tb, xg, {kh, kw}, op.getPad(), op.getStride(), op.getDilation());
        parts.push_back(integerConvAccumulator<tosa::Conv2DOp>(
            rewriter, loc, xg, wg, partShape, pad, op.getStrideAttr(),
            op.getDilationAttr()));
      }
      acc = tb.concat(parts, /*axis=*/3);
    }
    Value y = dequantizeConv(rewriter, loc, acc, *x, *w, outTy);
    rewriter.replaceOp(op, addChannelBias(tb, y, op.getBias()));
    return success();
  }
};

struct TesselFoldQDQPass : tessel::impl::TesselFoldQDQBase<TesselFoldQDQPass> {
  using TesselFoldQDQBase::TesselFoldQDQBase;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    FoldPolicy policy{depthwise, minReduction};
    patterns.add<FoldMatMul, FoldConv<tosa::Conv2DOp>,
                 FoldConv<tessel::Conv2DOp>, FoldDepthwiseConv,
                 FoldGroupedConv>(&getContext(), policy);
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace
