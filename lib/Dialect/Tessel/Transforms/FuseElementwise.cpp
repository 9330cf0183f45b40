//===- FuseElementwise.cpp - elementwise fusion without broadcast recompute ===//
//
// Upstream's linalg elementwise fusion with one change to its cost model.
// Upstream fuses any single-use producer into its consumer; when the
// consumer reads the producer's result through a broadcast (a per-channel
// sigmoid read by every pixel, a per-row rsqrt read by every element of the
// row), the fused loop recomputes the producer's body once per consumer
// point. For adds and multiplies that is cheaper than a buffer; for exp,
// rsqrt or a division it is not: EfficientNet-B0's squeeze-and-excitation
// gates ran one sigmoid per activation (56x56x96 instead of 96), layer norm
// one rsqrt per element instead of per row. Such producers stay separate
// loops over their own, small, iteration space.
//
//===----------------------------------------------------------------------===//
#include "tessel/Dialect/Tessel/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELFUSEELEMENTWISE
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {

/// Ops worth computing once per producer point rather than once per
/// consumer point: transcendental math, divisions and remainders.
bool isExpensive(Operation *op) {
  return isa<math::MathDialect>(op->getDialect()) ||
         isa<arith::DivFOp, arith::RemFOp, arith::DivSIOp, arith::DivUIOp,
             arith::RemSIOp, arith::RemUIOp, arith::CeilDivSIOp,
             arith::FloorDivSIOp>(op);
}

bool singleUseProducer(OpOperand *fusedOperand) {
  Operation *producer = fusedOperand->get().getDefiningOp();
  return producer && producer->hasOneUse();
}

bool fuseWithoutBroadcastRecompute(OpOperand *fusedOperand) {
  if (!singleUseProducer(fusedOperand))
    return false;
  auto consumer = dyn_cast<linalg::LinalgOp>(fusedOperand->getOwner());
  auto producer = fusedOperand->get().getDefiningOp<linalg::GenericOp>();
  if (!consumer || !producer)
    return true;
  if (consumer.getMatchingIndexingMap(fusedOperand).isPermutation())
    return true; // one consumer point per producer point: no recompute
  return llvm::none_of(producer.getBody()->without_terminator(),
                       [](Operation &op) { return isExpensive(&op); });
}

struct FuseElementwisePass
    : tessel::impl::TesselFuseElementwiseBase<FuseElementwisePass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    // The same pattern set as upstream's linalg-fuse-elementwise-ops.
    linalg::populateElementwiseOpsFusionPatterns(patterns,
                                                 fuseWithoutBroadcastRecompute);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns,
                                                      singleUseProducer);
    tensor::populateBubbleUpExpandShapePatterns(patterns);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, ctx);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, ctx);
    ctx->getLoadedDialect<linalg::LinalgDialect>()->getCanonicalizationPatterns(
        patterns);
    linalg::populateConstantFoldLinalgOperations(patterns, singleUseProducer);
    if (failed(applyPatternsGreedily(
            getOperation(), std::move(patterns),
            GreedyRewriteConfig().setUseTopDownTraversal())))
      return signalPassFailure();
  }
};

} // namespace
