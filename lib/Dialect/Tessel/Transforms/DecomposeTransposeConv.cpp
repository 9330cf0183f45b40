//===- DecomposeTransposeConv.cpp - tosa.transpose_conv2d to tosa ops -----===//
//
// Upstream's decomposition makes a transposed convolution an ordinary one
// over the input spread on a stride grid with zeros between its elements:
// at stride 2, three of every four input elements it multiplies are zeros.
// The upsampling layers of U-Nets, FCN/FPN decoders and GAN generators use
// kernel = stride, where the output windows do not overlap: every output
// pixel comes from exactly one input pixel, and the whole layer is one
// matmul of the input pixels [N*H*W, IC] by the weights [IC, KH*KW*OC],
// whose rows [H, W, KH, KW, OC] are interleaved into the output (depth to
// space). Other transposed convolutions take upstream's decomposition.
//
//===----------------------------------------------------------------------===//
#include "tessel/Dialect/Tessel/Transforms/Passes.h"
#include "tessel/Dialect/Tessel/Utils/TosaBuilder.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Tosa/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELDECOMPOSETRANSPOSECONV
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;

namespace {

struct NonOverlappingTransposeConv
    : OpRewritePattern<tosa::TransposeConv2DOp> {
  // Before upstream's patterns.
  NonOverlappingTransposeConv(MLIRContext *ctx)
      : OpRewritePattern(ctx, /*benefit=*/2) {}

  LogicalResult matchAndRewrite(tosa::TransposeConv2DOp op,
                                PatternRewriter &rewriter) const override {
    auto inTy = dyn_cast<RankedTensorType>(op.getInput().getType());
    auto wTy = dyn_cast<RankedTensorType>(op.getWeight().getType());
    auto outTy = dyn_cast<RankedTensorType>(op.getOutput().getType());
    if (!inTy || !wTy || !outTy || !inTy.hasStaticShape() ||
        !wTy.hasStaticShape() || !outTy.hasStaticShape() ||
        !isa<FloatType>(inTy.getElementType()))
      return rewriter.notifyMatchFailure(op, "needs static float tensors");
    ArrayRef<int64_t> stride = op.getStride(), outPad = op.getOutPad();
    ArrayRef<int64_t> in = inTy.getShape(), w = wTy.getShape();
    if (w[1] != stride[0] || w[2] != stride[1] ||
        llvm::any_of(outPad, [](int64_t p) { return p != 0; }))
      return rewriter.notifyMatchFailure(op, "output windows overlap");
    // Zero points are 0 for float tensors; a non-constant or nonzero one
    // is left to upstream.
    for (Value zp : {op.getInputZp(), op.getWeightZp()}) {
      DenseFPElementsAttr attr;
      if (!matchPattern(zp, m_Constant(&attr)) || !attr.isSplat() ||
          !attr.getSplatValue<APFloat>().isZero())
        return rewriter.notifyMatchFailure(op, "nonzero zero point");
    }
    Location loc = op.getLoc();
    tessel::TosaBuilder tb(rewriter, loc);
    Type et = inTy.getElementType();
    int64_t n = in[0], h = in[1], wd = in[2], ic = in[3];
    int64_t oc = w[0], kh = w[1], kw = w[2];
    // [OC, KH, KW, IC] -> [IC, KH*KW*OC].
    Value wm = tb.reshape(tb.transpose(op.getWeight(), {3, 1, 2, 0}),
                          {1, ic, kh * kw * oc});
    Value x = tb.reshape(op.getInput(), {1, n * h * wd, ic});
    Value y = tosa::MatMulOp::create(
        rewriter, loc,
        RankedTensorType::get({1, n * h * wd, kh * kw * oc}, et), x, wm,
        tb.zeroPoint(et), tb.zeroPoint(et));
    // [N, H, W, KH, KW, OC] -> [N, H, KH, W, KW, OC] -> [N, H*KH, W*KW, OC].
    y = tb.reshape(y, {n, h, wd, kh, kw, oc});
    y = tb.transpose(y, {0, 1, 3, 2, 4, 5});
    y = tb.reshape(y, {n, h * kh, wd * kw, oc});
    y = tb.add(y, tb.reshape(op.getBias(), {1, 1, 1, oc}));
    rewriter.replaceOp(op, y);
    return success();
  }
};

struct DecomposeTransposeConvPass
    : tessel::impl::TesselDecomposeTransposeConvBase<
          DecomposeTransposeConvPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    patterns.add<NonOverlappingTransposeConv>(ctx);
    tosa::populateTosaDecomposeTransposeConv(ctx, patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
