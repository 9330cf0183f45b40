//===- PadInPlace.cpp - a padded result written into its padded buffer ----===//
//
// A `tensor.pad` bufferizes to a new buffer, filled with the padding value,
// and a copy of the whole source into its interior. The source's producer
// can write into that interior itself (a pooling's input with
// count_include_pad, a max pool's ceil-mode or "same" border: GoogLeNet's
// and Inception's pools): the pad becomes a fill of an empty tensor plus a
// `tensor.insert_slice` of the source, the form `eliminate-empty-tensors`
// turns into "compute into the slice" (as it does for concatenations), and
// the source's other users read it there.
//
//===----------------------------------------------------------------------===//
#include "tessel/Dialect/Tessel/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELPADINPLACE
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;

namespace {

/// pad(src) with a constant value, static sizes and low padding, src
/// computed by a destination-style op ->
///   %filled = fill(value, empty)            (before the producer)
///   %padded = insert_slice src into %filled (in place of the pad)
/// src's other users (an Inception block's input also feeds three
/// convolutions) keep reading src, which bufferization then places in the
/// padded buffer's interior, a strided view.
struct PadToFillAndInsert : OpRewritePattern<tensor::PadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::PadOp op,
                                PatternRewriter &rewriter) const override {
    Value src = op.getSource();
    Value value = op.getConstantPaddingValue();
    auto resTy = op.getResultType();
    if (!value || !matchPattern(value, m_Constant()) ||
        !resTy.hasStaticShape() || !op.getSourceType().hasStaticShape())
      return failure();
    // tosa-to-linalg writes the padding as index constants.
    SmallVector<OpFoldResult> offsets;
    for (OpFoldResult lo : op.getMixedLowPad()) {
      std::optional<int64_t> c = getConstantIntValue(lo);
      if (!c)
        return failure();
      offsets.push_back(rewriter.getIndexAttr(*c));
    }
    // Only where the source's producer can write into the slice instead:
    // otherwise the insert is the same copy the pad makes.
    Operation *producer = src.getDefiningOp();
    if (!producer || !isa<DestinationStyleOpInterface>(producer) ||
        producer->getBlock() != op->getBlock())
      return failure();
    Location loc = op.getLoc();
    // The filled tensor dominates the producer, so that empty-tensor
    // elimination can make the producer's init a slice of it.
    rewriter.setInsertionPoint(producer);
    Value cst = rewriter.clone(*value.getDefiningOp())->getResult(0);
    Value empty = tensor::EmptyOp::create(rewriter, loc, resTy.getShape(),
                                          resTy.getElementType());
    Value filled =
        linalg::FillOp::create(rewriter, loc, cst, empty).getResult(0);
    rewriter.setInsertionPoint(op);
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(rewriter, loc, src);
    SmallVector<OpFoldResult> strides(resTy.getRank(),
                                      rewriter.getIndexAttr(1));
    rewriter.replaceOpWithNewOp<tensor::InsertSliceOp>(op, src, filled, offsets,
                                                       sizes, strides);
    return success();
  }
};

struct PadInPlacePass : tessel::impl::TesselPadInPlaceBase<PadInPlacePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<PadToFillAndInsert>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
