//===- SplatsToFills.cpp - large splat constants become fills -------------===//
//
// One-shot bufferization turns a constant tensor into a memref.global with
// its full contents, and LLVM then writes every element into the object: a
// ConstantOfShape of 1024x1024x1024 is 4 GiB of artifact and minutes of
// code generation. A splat has one value, so filling it at run time costs
// one loop instead.
//
//===----------------------------------------------------------------------===//
#include "tessel/Dialect/Tessel/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELSPLATSTOFILLS
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;

namespace {

struct SplatToFill : OpRewritePattern<arith::ConstantOp> {
  SplatToFill(MLIRContext *ctx, int64_t minElements)
      : OpRewritePattern(ctx), minElements(minElements) {}

  LogicalResult matchAndRewrite(arith::ConstantOp op,
                                PatternRewriter &rewriter) const override {
    auto type = dyn_cast<RankedTensorType>(op.getType());
    auto splat = dyn_cast<SplatElementsAttr>(op.getValue());
    if (!type || !splat || !type.hasStaticShape() ||
        type.getNumElements() <= minElements ||
        !type.getElementType().isIntOrIndexOrFloat())
      return failure();
    Location loc = op.getLoc();
    Value scalar = arith::ConstantOp::create(
        rewriter, loc, cast<TypedAttr>(splat.getSplatValue<Attribute>()));
    Value empty = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                          type.getElementType());
    rewriter.replaceOpWithNewOp<linalg::FillOp>(op, scalar, empty);
    return success();
  }

  int64_t minElements;
};

struct TesselSplatsToFillsPass
    : tessel::impl::TesselSplatsToFillsBase<TesselSplatsToFillsPass> {
  using Base::Base;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<SplatToFill>(&getContext(), minElements);
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace
