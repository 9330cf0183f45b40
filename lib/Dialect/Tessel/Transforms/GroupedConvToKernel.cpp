//===- GroupedConvToKernel.cpp - grouped conv -> the grouped kernel -------===//
//
// tessel-decompose-graph-ops keeps an f32 grouped convolution of narrow,
// square groups (as many input as output channels, 2, 4 or 8) whole, as a
// linalg.conv_2d_nhwgc_gfhwc on the expanded input, collapsed back to NHWC.
// With a constant filter that becomes tessel.grouped_conv2d: the zero
// padding absorbed, the filter packed here in the kernel's rotated layout
// (Kernels.td: grouped_conv2d_nhwc_f32), the op on the NHWC tensors either
// side, so the bias, residual and clamp epilogues that follow fuse as they
// do into the other kernel ops.
//
//===----------------------------------------------------------------------===//
#include "GroupedConvToKernel.h"
#include "KernelInit.h"

#include "tessel/Dialect/Tessel/IR/TesselDialect.h"
#include "tessel/Kernels/tessel_kernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::tessel;

namespace {

constexpr int64_t kLanes = TESSEL_KERNEL_GROUP_LANES;

/// The filter W (G x fg x KH x KW x fg, values of the group's inputs
/// last) in the kernel's layout: per tap, per block of kLanes channels,
/// per rotation r, lane (g, j) = W[g][(j + r) % fg][kh][kw][j].
std::vector<float> packRotated(DenseElementsAttr w, int64_t groups,
                               int64_t fg, int64_t kh, int64_t kw) {
  auto values = w.getValues<float>();
  std::vector<float> src(values.begin(), values.end());
  const int64_t f = groups * fg, nb = (f + kLanes - 1) / kLanes;
  std::vector<float> out(size_t(kh * kw * nb * fg * kLanes), 0.0f);
  for (int64_t t = 0; t < kh * kw; ++t)
    for (int64_t ch = 0; ch < f; ++ch) {
      const int64_t g = ch / fg, j = ch % fg, b = ch / kLanes,
                    l = ch % kLanes;
      for (int64_t r = 0; r < fg; ++r) {
        const int64_t fo = (j + r) % fg;
        out[size_t(((t * nb + b) * fg + r) * kLanes + l)] =
            src[size_t(((g * fg + fo) * kh * kw + t) * fg + j)];
      }
    }
  return out;
}

/// The filter of wide groups (fg of kLanes or more) c-major: per tap, per
/// group, per input channel c, the fg outputs' weights W[g][f][kh][kw][c]
/// in a row of fg rounded up to kLanes (zeros after).
std::vector<float> packCMajor(DenseElementsAttr w, int64_t groups,
                              int64_t fg, int64_t kh, int64_t kw) {
  auto values = w.getValues<float>();
  std::vector<float> src(values.begin(), values.end());
  const int64_t fgp = (fg + kLanes - 1) / kLanes * kLanes;
  std::vector<float> out(size_t(kh * kw * groups * fg * fgp), 0.0f);
  for (int64_t t = 0; t < kh * kw; ++t)
    for (int64_t g = 0; g < groups; ++g)
      for (int64_t f = 0; f < fg; ++f)
        for (int64_t c = 0; c < fg; ++c)
          out[size_t(((t * groups + g) * fg + c) * fgp + f)] =
              src[size_t(((g * fg + f) * kh * kw + t) * fg + c)];
  return out;
}

/// Any groups (cg inputs, fg outputs) as the dense kernel's panels of `nr`
/// output channels, per group: [g][p][k][j] = W[g*fg + p*nr + j][k] with
/// k = (kh*KW + kw)*cg + c (zero past fg).
std::vector<float> packPanels(DenseElementsAttr w, int64_t groups, int64_t fg,
                              int64_t k, int64_t nr) {
  auto values = w.getValues<float>();
  std::vector<float> src(values.begin(), values.end());
  const int64_t panels = (fg + nr - 1) / nr;
  std::vector<float> out(size_t(groups * panels * k * nr), 0.0f);
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t f = 0; f < fg; ++f)
      for (int64_t kk = 0; kk < k; ++kk)
        out[size_t(((g * panels + f / nr) * k + kk) * nr + f % nr)] =
            src[size_t((g * fg + f) * k + kk)];
  return out;
}

/// The constant behind `v`, looking through expand_shapes of it.
DenseElementsAttr constantBehind(Value v) {
  DenseElementsAttr attr;
  while (!matchPattern(v, m_Constant(&attr))) {
    auto e = v.getDefiningOp<tensor::ExpandShapeOp>();
    if (!e)
      return {};
    v = e.getSrc();
  }
  return attr;
}

struct GroupedConvToKernel : OpRewritePattern<linalg::Conv2DNhwgcGfhwcOp> {
  GroupedConvToKernel(MLIRContext *ctx, int64_t nr, int64_t rotatedMaxWidth)
      : OpRewritePattern(ctx), nr(nr), rotatedMaxWidth(rotatedMaxWidth) {}

  LogicalResult matchAndRewrite(linalg::Conv2DNhwgcGfhwcOp op,
                                PatternRewriter &rewriter) const override {
    Value x5 = op.getInputs()[0], w5 = op.getInputs()[1];
    Value init5 = op.getOutputs()[0];
    auto xTy = dyn_cast<RankedTensorType>(x5.getType());
    auto wTy = dyn_cast<RankedTensorType>(w5.getType());
    auto oTy = dyn_cast<RankedTensorType>(init5.getType());
    if (!xTy || !wTy || !oTy || !xTy.getElementType().isF32() ||
        !wTy.getElementType().isF32() || !oTy.getElementType().isF32() ||
        !wTy.hasStaticShape() ||
        llvm::any_of(xTy.getShape().drop_front(), ShapedType::isDynamic) ||
        llvm::any_of(oTy.getShape().drop_front(), ShapedType::isDynamic))
      return rewriter.notifyMatchFailure(op, "needs f32, static but batch");
    const int64_t groups = wTy.getDimSize(0), fg = wTy.getDimSize(1),
                  kh = wTy.getDimSize(2), kw = wTy.getDimSize(3),
                  cg = wTy.getDimSize(4);
    // Square groups of 2-8 channels: the rotated vectors; of 16: c-major
    // (bench/grouped_conv.c: 1.1-1.2x the per-group GEMMs; 24 and 32 wide
    // 0.6-1.08x, so those stay GEMMs); any others: a GEMM per group.
    StringRef packing = "panels";
    if (cg == fg && (fg == 2 || fg == 4 || fg == 8) && fg <= rotatedMaxWidth)
      packing = "rotated";
    else if (cg == fg && fg == 16)
      packing = "cmajor";
    DenseElementsAttr w = constantBehind(w5);
    if (!w)
      return rewriter.notifyMatchFailure(op, "filter is not a constant");
    // The result goes back to NHWC: the op's NHWC result replaces that.
    if (!op->hasOneUse())
      return rewriter.notifyMatchFailure(op, "result used more than once");
    auto collapse = dyn_cast<tensor::CollapseShapeOp>(*op->user_begin());
    if (!collapse || collapse.getResultType().getRank() != 4)
      return rewriter.notifyMatchFailure(op, "result not collapsed to NHWC");
    Location loc = op.getLoc();
    SmallVector<ReassociationIndices> channels = {{0}, {1}, {2}, {3, 4}};
    // The NHWC input: the source of the expand_shape that made it 5-D.
    Value x;
    if (auto e = x5.getDefiningOp<tensor::ExpandShapeOp>();
        e && e.getSrcType().getRank() == 4 &&
        e.getReassociationIndices() == channels)
      x = e.getSrc();
    else
      x = tensor::CollapseShapeOp::create(rewriter, loc, x5, channels);
    SmallVector<int64_t> pad =
        absorbZeroPad(x).value_or(SmallVector<int64_t>{0, 0, 0, 0});
    // A zero init is write-only; any other is added.
    Value init4 =
        tensor::CollapseShapeOp::create(rewriter, loc, init5, channels);
    bool accumulate = true;
    if (auto fill = init5.getDefiningOp<linalg::FillOp>();
        fill && matchPattern(fill.getInputs()[0], m_AnyZeroFloat())) {
      init4 = tensor::EmptyOp::create(
          rewriter, loc, tensor::getMixedSizes(rewriter, loc, init4),
          rewriter.getF32Type());
      accumulate = false;
    }
    const int64_t fgp = (fg + kLanes - 1) / kLanes * kLanes;
    std::vector<float> packed;
    SmallVector<int64_t> packedShape;
    if (packing == "rotated") {
      packed = packRotated(w, groups, fg, kh, kw);
      packedShape = {kh * kw, (groups * fg + kLanes - 1) / kLanes, fg, kLanes};
    } else if (packing == "cmajor") {
      packed = packCMajor(w, groups, fg, kh, kw);
      packedShape = {kh * kw, groups, fg, fgp};
    } else {
      packed = packPanels(w, groups, fg, kh * kw * cg, nr);
      packedShape = {groups, (fg + nr - 1) / nr, kh * kw * cg, nr};
    }
    auto packedTy = RankedTensorType::get(packedShape, rewriter.getF32Type());
    Value filter = arith::ConstantOp::create(
        rewriter, loc, DenseElementsAttr::get(packedTy, ArrayRef(packed)));
    auto strides = llvm::to_vector(op.getStrides().getValues<int64_t>());
    auto dilations = llvm::to_vector(op.getDilations().getValues<int64_t>());
    auto conv = GroupedConv2DOp::create(
        rewriter, loc, TypeRange{init4.getType()}, x, filter, Value(), init4,
        rewriter.getI64IntegerAttr(groups), rewriter.getStringAttr(packing),
        rewriter.getDenseI64ArrayAttr({kh, kw}),
        rewriter.getDenseI64ArrayAttr(strides),
        rewriter.getDenseI64ArrayAttr(dilations),
        rewriter.getDenseI64ArrayAttr(pad),
        accumulate ? rewriter.getUnitAttr() : nullptr, FloatAttr(),
        FloatAttr());
    Value result = conv.getResult()[0];
    if (result.getType() != collapse.getResultType())
      result = tensor::CastOp::create(rewriter, loc, collapse.getResultType(),
                                      result);
    rewriter.replaceOp(collapse, result);
    rewriter.eraseOp(op);
    return success();
  }

  int64_t nr, rotatedMaxWidth;
};

} // namespace

void mlir::tessel::populateGroupedConvToKernelPatterns(
    RewritePatternSet &patterns, int64_t nr, int64_t rotatedMaxWidth) {
  patterns.add<GroupedConvToKernel>(patterns.getContext(), nr,
                                    rotatedMaxWidth);
}
