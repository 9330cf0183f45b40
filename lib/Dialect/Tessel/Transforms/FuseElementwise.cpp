//===- FuseElementwise.cpp - elementwise fusion without broadcast recompute
//===//
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
// And one pattern added: a constant read through a broadcast of its unit
// dims (a 1x1x64 bias indexed (d0, 0, d2), as tosa-to-linalg writes it) is
// read as the 64-element constant it is, indexed (d2). A constant 0 in an
// indexing map is not a projected permutation, and upstream's reshape
// propagation gives up on such a generic: a per-channel scale stayed a loop
// of its own on one side of an expand_shape (ResNet-50's 1x1 convolutions
// in int8 ran two passes over their output instead of one).
//
// And gathers read through reshapes are computed by their consumer
// (FuseGathers.cpp).
//
//===----------------------------------------------------------------------===//
#include "tessel/Dialect/Tessel/Transforms/Passes.h"

#include "FuseGathers.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
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

/// A constant operand of a generic indexed by a constant 0 on its unit dims
/// becomes the same data without those dims.
struct DropUnitBroadcastDimsOfConstants
    : public OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    bool changed = false;
    for (OpOperand *operand : op.getDpsInputOperands()) {
      ElementsAttr data;
      auto type = dyn_cast<RankedTensorType>(operand->get().getType());
      if (!type || !matchPattern(operand->get(), m_Constant(&data)))
        continue;
      AffineMap map = maps[operand->getOperandNumber()];
      SmallVector<AffineExpr> kept;
      SmallVector<int64_t> shape;
      for (auto [d, expr] : llvm::enumerate(map.getResults())) {
        auto c = dyn_cast<AffineConstantExpr>(expr);
        if (c && c.getValue() == 0 && type.getDimSize(d) == 1)
          continue;
        kept.push_back(expr);
        shape.push_back(type.getDimSize(d));
      }
      if (kept.size() == map.getNumResults())
        continue;
      auto newType = RankedTensorType::get(shape, type.getElementType());
      Attribute reshaped;
      if (auto dense = dyn_cast<DenseElementsAttr>(data))
        reshaped = dense.reshape(newType);
      else if (auto res = dyn_cast<DenseResourceElementsAttr>(data))
        reshaped = DenseResourceElementsAttr::get(newType, res.getRawHandle());
      else
        continue;
      rewriter.setInsertionPoint(op);
      Value c = arith::ConstantOp::create(rewriter, operand->get().getLoc(),
                                          newType, cast<TypedAttr>(reshaped));
      rewriter.modifyOpInPlace(op, [&] { operand->set(c); });
      maps[operand->getOperandNumber()] =
          AffineMap::get(map.getNumDims(), 0, kept, op.getContext());
      changed = true;
    }
    if (!changed)
      return failure();
    rewriter.modifyOpInPlace(
        op, [&] { op.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps)); });
    return success();
  }
};

/// The one value every element of `v` holds, if `v` is a fill (or a
/// generic without inputs yielding a value from outside its body, what
/// reshape propagation makes of a fill) seen through reshapes.
Value splatValue(Value v) {
  while (true) {
    if (auto c = v.getDefiningOp<tensor::CollapseShapeOp>())
      v = c.getSrc();
    else if (auto e = v.getDefiningOp<tensor::ExpandShapeOp>())
      v = e.getSrc();
    else
      break;
  }
  if (auto fill = v.getDefiningOp<linalg::FillOp>())
    return fill.getInputs()[0];
  auto gen = v.getDefiningOp<linalg::GenericOp>();
  if (!gen || gen.getNumDpsInputs() != 0 || gen.getNumResults() != 1)
    return {};
  Block *body = gen.getBody();
  if (!llvm::hasSingleElement(*body))
    return {};
  Value y = cast<linalg::YieldOp>(body->getTerminator()).getOperand(0);
  if (y.getParentBlock() == body)
    return {}; // a block argument (the init) or computed per element
  return y;
}

/// A generic input that is a splat (a large splat constant became a fill,
/// tessel-splats-to-fills, and reshape propagation a fill generic behind a
/// collapse_shape) is read in the body as its scalar instead of loaded per
/// element: GELU's `x / sqrt(2)` read a 1.5 MB buffer of 1.4142 per
/// BERT layer. The unused input is then dropped by the generic's
/// canonicalization.
struct FoldSplatInputs : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    bool changed = false;
    for (OpOperand *operand : op.getDpsInputOperands()) {
      BlockArgument arg = op.getMatchingBlockArgument(operand);
      if (arg.use_empty())
        continue;
      Value scalar = splatValue(operand->get());
      if (!scalar || scalar.getType() != arg.getType())
        continue;
      // The scalar must be visible in the body: defined above the generic.
      Region *home = scalar.getParentRegion();
      if (!home->isAncestor(op->getParentRegion()))
        continue;
      rewriter.modifyOpInPlace(op, [&] { arg.replaceAllUsesWith(scalar); });
      changed = true;
    }
    return success(changed);
  }
};

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
    patterns.add<DropUnitBroadcastDimsOfConstants, FoldSplatInputs>(ctx);
    populateFuseGatherPatterns(patterns);
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
