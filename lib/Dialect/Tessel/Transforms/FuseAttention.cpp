//===- FuseAttention.cpp - matmul/softmax/matmul -> tessel.attention -------===//
//
// Attention as importers leave it (ONNX MatMul/Mul/Add/Softmax/MatMul, or
// torch's scaled dot product decomposed the same way) materializes the
// B x M x N score matrix twice (scores, then probabilities) and walks it
// three times. tessel.attention computes it block by block in registers
// (lib/Kernels/AttentionF32.c). The match is at the model level, before
// softmax is decomposed into reductions that no longer say "softmax".
//
//===----------------------------------------------------------------------===//
#include "tessel/Dialect/Tessel/IR/TesselDialect.h"
#include "tessel/Dialect/Tessel/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELFUSEATTENTION
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {

bool isF32Rank3(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.getRank() == 3 && t.getElementType().isF32();
}

/// The value behind `v` through reshapes that keep the type (importers
/// leave them around every matmul), provided each value passed has no
/// other user: the chain is replaced, so nothing else may read it.
Value producer(Value v) {
  while (auto r = v.getDefiningOp<tosa::ReshapeOp>()) {
    if (r.getInput1().getType() != r.getType() || !r.getInput1().hasOneUse())
      break;
    v = r.getInput1();
  }
  return v;
}

/// The float of a splat constant, looking through reshapes and tiles of it.
std::optional<float> splatValue(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto r = dyn_cast<tosa::ReshapeOp>(def))
      v = r.getInput1();
    else if (auto t = dyn_cast<tosa::TileOp>(def))
      v = t.getInput1();
    else
      break;
  }
  DenseElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)) || !attr.isSplat() ||
      !attr.getElementType().isF32())
    return std::nullopt;
  return attr.getSplatValue<APFloat>().convertToFloat();
}

bool hasZeroPoints(tosa::MatMulOp mm) {
  FailureOr<int64_t> a = mm.getAZeroPoint(), b = mm.getBZeroPoint();
  return succeeded(a) && succeeded(b) && *a == 0 && *b == 0;
}

/// Whether `mask` broadcasts to `full` (rank 3, each dim 1 or equal).
bool broadcastsTo(Value mask, RankedTensorType full) {
  if (!isF32Rank3(mask))
    return false;
  auto m = cast<RankedTensorType>(mask.getType());
  for (int64_t d = 0; d < 3; ++d)
    if (m.getDimSize(d) != 1 && m.getDimSize(d) != full.getDimSize(d))
      return false;
  return true;
}

/// If `v` (single use) is `x * c` or `x / c` with `c` a splat constant,
/// multiplies `scale` by c (or 1/c) and returns `x`; else returns `v`.
Value peelScale(Value v, float &scale) {
  auto ty = v.getType();
  if (auto mul = v.getDefiningOp<tosa::MulOp>()) {
    for (int side = 0; side < 2; ++side) {
      std::optional<float> c = splatValue(mul->getOperand(1 - side));
      Value x = producer(mul->getOperand(side));
      if (c && x.getType() == ty && x.hasOneUse()) {
        scale *= *c;
        return x;
      }
    }
  } else if (auto div = v.getDefiningOp<arith::DivFOp>()) {
    std::optional<float> c = splatValue(div.getRhs());
    Value x = producer(div.getLhs());
    if (c && x.getType() == ty && x.hasOneUse()) {
      scale /= *c;
      return x;
    }
  }
  return v;
}

struct FuseAttentionPattern : OpRewritePattern<tosa::MatMulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tosa::MatMulOp pv,
                                PatternRewriter &rewriter) const override {
    if (!isF32Rank3(pv.getA()) || !isF32Rank3(pv.getB()) || !hasZeroPoints(pv))
      return failure();
    Value probs = producer(pv.getA());
    auto softmax = probs.getDefiningOp<SoftmaxOp>();
    if (!softmax || !probs.hasOneUse() || softmax.getNormalizedAxis() != 2)
      return rewriter.notifyMatchFailure(pv, "A is not a last-axis softmax");
    Value s = producer(softmax.getInput());
    auto scoresTy = cast<RankedTensorType>(s.getType());
    if (!s.hasOneUse())
      return failure();

    Value mask;
    if (auto add = s.getDefiningOp<tosa::AddOp>()) {
      if (add.getType() != scoresTy)
        return failure();
      // The scores are the side that comes from the matmul chain.
      for (int side = 0; side < 2 && !mask; ++side) {
        Value chain = producer(add->getOperand(side));
        Value other = add->getOperand(1 - side);
        if (chain.getType() == scoresTy && chain.hasOneUse() &&
            isa_and_nonnull<tosa::MatMulOp, tosa::MulOp, arith::DivFOp>(
                chain.getDefiningOp()) &&
            broadcastsTo(other, scoresTy)) {
          mask = other;
          s = chain;
        }
      }
      if (!mask)
        return rewriter.notifyMatchFailure(pv, "add is not a mask add");
    }

    float scale = 1.0f;
    s = peelScale(s, scale);
    auto qk = s.getDefiningOp<tosa::MatMulOp>();
    if (!qk || !isF32Rank3(qk.getA()) || !isF32Rank3(qk.getB()) ||
        !hasZeroPoints(qk) || qk.getType() != scoresTy)
      return rewriter.notifyMatchFailure(pv, "scores are not a matmul");

    Location loc = pv.getLoc();
    Value kT = qk.getB(), v = pv.getB();
    // A constant scaling of the queries (BERT's q / sqrt(d)) is the same
    // scaling of the scores: fold it too.
    Value q = peelScale(producer(qk.getA()), scale);
    auto kTTy = cast<RankedTensorType>(kT.getType());
    auto kTy = RankedTensorType::get(
        {kTTy.getDimSize(0), kTTy.getDimSize(2), kTTy.getDimSize(1)},
        kTTy.getElementType());
    Value k = tosa::TransposeOp::create(rewriter, loc, kTy, kT,
                                        ArrayRef<int32_t>{0, 2, 1});
    auto outTy = cast<RankedTensorType>(pv.getType());
    SmallVector<Value> dynSizes;
    std::pair<Value, int64_t> sizeOf[3] = {{q, 0}, {q, 1}, {v, 2}};
    for (int64_t d = 0; d < 3; ++d)
      if (outTy.isDynamicDim(d))
        dynSizes.push_back(tensor::DimOp::create(
            rewriter, loc, sizeOf[d].first, sizeOf[d].second));
    Value init = tensor::EmptyOp::create(rewriter, loc, outTy.getShape(),
                                         outTy.getElementType(), dynSizes);
    auto attention = AttentionOp::create(
        rewriter, loc, TypeRange{outTy}, q, k, v, mask, init,
        rewriter.getF32FloatAttr(scale));
    rewriter.replaceOp(pv, attention.getResult());
    return success();
  }
};

struct FuseAttentionPass
    : tessel::impl::TesselFuseAttentionBase<FuseAttentionPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseAttentionPattern>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
