//===- QuantizedDepthwiseToKernel.cpp - int8 depthwise -> the VNNI kernel --===//
//
// tessel-fold-qdq turns a depthwise convolution of a dequantized input and
// dequantized symmetric weights into an i8 tosa.depthwise_conv2d, which
// tosa-to-linalg makes a tensor.pad (with the input's zero point), a
// linalg.depthwise_conv_2d_nhwc_hwcm_q into a zero-filled 5-D init and an
// i32 add of the (zero) bias. With constant weights of multiplier 1 that is
// tessel.depthwise_conv2d_i8: the padding absorbed (the kernel reads the
// zero point outside the input), the weights packed here for `vpdpbusd`
// (Kernels.td: depthwise_conv2d_u8s8) with their sums for the zero-point
// correction. docs/quantization.md.
//
//===----------------------------------------------------------------------===//
#include "QuantizedToKernels.h"

#include "tessel/Dialect/Tessel/IR/TesselDialect.h"
#include "tessel/Kernels/tessel_kernels.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

#include <limits>

using namespace mlir;
using namespace mlir::tessel;

namespace {

/// The packed weights' channel padding and kernel-row groups, as the
/// kernel reads them (Kernels.td).
constexpr int64_t kChannelBlock = TESSEL_KERNEL_CBLOCK_DW_I8,
                  kRowGroup = TESSEL_KERNEL_KGROUP_I8;

/// Spatial-only padding of `pad` with the constant `value`, as [top,
/// bottom, left, right]; none otherwise.
std::optional<SmallVector<int64_t>> spatialPadWith(tensor::PadOp pad,
                                                   int64_t value) {
  APInt pv;
  Value v = pad.getConstantPaddingValue();
  if (!v || !matchPattern(v, m_ConstantInt(&pv)) || pv.getSExtValue() != value)
    return std::nullopt;
  return staticSpatialPad(pad);
}

/// linalg.depthwise_conv_2d_nhwc_hwcm[_q] on i8 with constant weights of
/// multiplier 1 and no weight zero point -> tessel.depthwise_conv2d_i8.
template <typename OpT>
struct QuantizedDepthwiseToKernel : OpRewritePattern<OpT> {
  using OpRewritePattern<OpT>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpT op,
                                PatternRewriter &rewriter) const override {
    Value x = op.getInputs()[0], f = op.getInputs()[1];
    Value init = op.getOutputs()[0];
    int64_t za, zb;
    if (failed(matchInt8Product(op, rewriter, za, zb)))
      return failure();
    if (zb != 0)
      return rewriter.notifyMatchFailure(op, "weights with a zero point");
    // The kernel reads i8 signed, and pads with the zero point itself.
    if (za < -128 || za > 127)
      return rewriter.notifyMatchFailure(op, "zero point not an i8 value");
    auto fTy = cast<RankedTensorType>(f.getType());
    ArrayRef<int64_t> fs = fTy.getShape(); // KH x KW x C x M
    if (fs[3] != 1)
      return rewriter.notifyMatchFailure(op, "channel multiplier is not 1");
    std::optional<std::vector<int8_t>> filter = constantInt8Values(f);
    if (!filter)
      return rewriter.notifyMatchFailure(op, "run-time filter");
    bool accumulate;
    Value empty = kernelInit(init, accumulate);
    if (accumulate)
      return rewriter.notifyMatchFailure(op, "accumulates into its init");
    SmallVector<int64_t> pad = {0, 0, 0, 0};
    if (auto padOp = x.getDefiningOp<tensor::PadOp>())
      if (std::optional<SmallVector<int64_t>> p = spatialPadWith(padOp, za)) {
        pad = *p;
        x = padOp.getSource();
      }

    const int64_t kh = fs[0], kw = fs[1], c = fs[2];
    const int64_t groups = (kh + kRowGroup - 1) / kRowGroup;
    const int64_t cp = (c + kChannelBlock - 1) / kChannelBlock * kChannelBlock;
    // packed[g][kw][c][j] = w[4g + j][kw][c], sums[c] = sum w[.][.][c]
    std::vector<int8_t> packed(groups * kw * cp * kRowGroup, 0);
    std::vector<int32_t> sums(c, 0);
    for (int64_t r = 0; r < kh; ++r)
      for (int64_t s = 0; s < kw; ++s)
        for (int64_t ch = 0; ch < c; ++ch) {
          int8_t w = (*filter)[(r * kw + s) * c + ch];
          packed[((r / kRowGroup * kw + s) * cp + ch) * kRowGroup +
                 r % kRowGroup] = w;
          sums[ch] += w;
        }
    Location loc = op.getLoc();
    auto packedTy = RankedTensorType::get({groups, kw, cp, kRowGroup},
                                          rewriter.getI8Type());
    auto sumsTy = RankedTensorType::get({c}, rewriter.getI32Type());
    Value packedV = arith::ConstantOp::create(
        rewriter, loc, packedTy,
        DenseElementsAttr::get(packedTy, ArrayRef<int8_t>(packed)));
    Value sumsV = arith::ConstantOp::create(
        rewriter, loc, sumsTy,
        DenseElementsAttr::get(sumsTy, ArrayRef<int32_t>(sums)));

    SmallVector<ReassociationIndices> dropM = {{0}, {1}, {2}, {3, 4}};
    Value init4 = tensor::CollapseShapeOp::create(rewriter, loc, empty, dropM);
    SmallVector<int64_t> strides(op.getStrides().template getValues<int64_t>());
    SmallVector<int64_t> dilations(
        op.getDilations().template getValues<int64_t>());
    const float inf = std::numeric_limits<float>::infinity();
    auto dw = DepthwiseConv2DI8Op::create(
        rewriter, loc, TypeRange{init4.getType()}, x, packedV, sumsV,
        /*scale=*/Value(), /*bias=*/Value(), /*table=*/Value(), init4,
        ArrayRef<int64_t>{kh, kw}, strides, dilations, pad, uint32_t(za),
        /*a_signed=*/true, APFloat(-inf), APFloat(inf),
        /*out_scale=*/FloatAttr(), APFloat(0.0f), APFloat(0.0f),
        APFloat(255.0f), /*dequant_scale=*/FloatAttr(), APFloat(0.0f),
        /*dequant_signed=*/false, APFloat(-inf), APFloat(inf));
    rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(
        op, init.getType(), dw.getResult()[0], dropM);
    return success();
  }
};

/// An elementwise integer add of a zero constant (tosa-to-linalg adds an
/// integer depthwise convolution's bias after it, and tessel-fold-qdq's is
/// zero: the float bias is added after the dequantization) is its other
/// operand, so the convolution's result reaches the requantization that
/// tessel-fuse-requantize folds into the kernel.
struct DropZeroIntegerAdd : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp g,
                                PatternRewriter &rewriter) const override {
    if (g.getNumDpsInputs() != 2 || g.getNumDpsInits() != 1 ||
        g.getNumParallelLoops() != g.getNumLoops() ||
        !g.hasPureTensorSemantics())
      return failure();
    Block &body = g.getRegion().front();
    if (body.getOperations().size() != 2)
      return failure();
    auto add = dyn_cast<arith::AddIOp>(body.front());
    if (!add || body.getTerminator()->getOperand(0) != add.getResult())
      return failure();
    for (int zero = 0; zero < 2; ++zero) {
      OpOperand *z = g.getDpsInputOperand(zero);
      OpOperand *other = g.getDpsInputOperand(1 - zero);
      auto za = dyn_cast<BlockArgument>(add.getOperand(zero));
      auto oa = dyn_cast<BlockArgument>(add.getOperand(1 - zero));
      if (!za || !oa || za != g.getMatchingBlockArgument(z) ||
          oa != g.getMatchingBlockArgument(other))
        continue;
      if (!matchPattern(z->get(), m_Zero()) ||
          !g.getMatchingIndexingMap(other).isIdentity() ||
          other->get().getType() != g->getResult(0).getType())
        continue;
      rewriter.replaceOp(g, other->get());
      return success();
    }
    return failure();
  }
};

} // namespace

void mlir::tessel::populateQuantizedDepthwiseToKernelPatterns(
    RewritePatternSet &patterns) {
  patterns.add<QuantizedDepthwiseToKernel<linalg::DepthwiseConv2DNhwcHwcmQOp>,
               QuantizedDepthwiseToKernel<linalg::DepthwiseConv2DNhwcHwcmOp>,
               DropZeroIntegerAdd>(patterns.getContext());
}
