//===- SimplifySym.cpp - tessel-simplify-sym: exploit discreteness ---------===//
//
// Rewrites that are exact because symbols are discrete: a one-hot vector
// selects one row, an argmax of a one-hot is the symbol, an embedding by a
// well-separated codebook quantizes back to its symbol. The last rewrite
// moves codebook work (transpose, norms) to compile time. Each pattern says
// why it is correct and when it does not apply; docs/dialects/sym.md has the
// same arguments.
//
//===----------------------------------------------------------------------===//
#include "SymTosaUtils.h"

#include "tessel/Dialect/Sym/IR/SymDialect.h"
#include "tessel/Dialect/Sym/Transforms/Passes.h"
#include "tessel/Dialect/Tessel/Utils/TosaBuilder.h"

#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cfloat>
#include <cmath>

namespace mlir::tessel::sym {
#define GEN_PASS_DEF_TESSELSIMPLIFYSYM
#include "tessel/Dialect/Sym/Transforms/Passes.h.inc"
} // namespace mlir::tessel::sym

using namespace mlir;
using namespace mlir::tessel;
using namespace mlir::tessel::sym;

namespace {

/// The values of `v` if it is a constant float tensor, else null.
DenseElementsAttr constantFloats(Value v) {
  DenseElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)) ||
      !isa<FloatType>(attr.getElementType()))
    return {};
  return attr;
}

/// `f` widened to double (exact for f16, bf16 and f32).
double asDouble(APFloat f) {
  bool lost = false;
  f.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
  return f.convertToDouble();
}

/// A float constant's values as doubles.
std::vector<double> valuesOf(DenseElementsAttr attr) {
  std::vector<double> out;
  out.reserve(attr.getNumElements());
  for (const APFloat &f : attr.getValues<APFloat>())
    out.push_back(asDouble(f));
  return out;
}

bool isZeroConstant(Value v) {
  DenseElementsAttr attr = constantFloats(v);
  return attr && attr.isSplat() && attr.getSplatValue<APFloat>().isZero();
}

//===----------------------------------------------------------------------===//
// (a) one-hot x matmul -> gather
//===----------------------------------------------------------------------===//

/// `tosa.matmul(one_hot(s) [reshaped to 1 x H x V], W : 1 x V x D)`: row h of
/// the product is `sum_k onehot[h, k] * W[0, k, :] = W[0, s_h, :]`, exactly:
/// every other term is `0 * w = 0` — unless `w` is inf or NaN (then the
/// matmul gives NaN), hence the finiteness condition. A tosa.reshape that
/// keeps the last dim V keeps every one-hot row whole and in order.
struct OneHotMatmulToGather : OpRewritePattern<tosa::MatMulOp> {
  OneHotMatmulToGather(MLIRContext *ctx, bool assumeFiniteWeights)
      : OpRewritePattern(ctx), assumeFiniteWeights(assumeFiniteWeights) {}

  LogicalResult matchAndRewrite(tosa::MatMulOp op,
                                PatternRewriter &rewriter) const override {
    Value a = op.getA();
    if (auto reshape = a.getDefiningOp<tosa::ReshapeOp>())
      a = reshape.getInput1();
    auto oneHot = a.getDefiningOp<OneHotOp>();
    if (!oneHot)
      return rewriter.notifyMatchFailure(op, "A is not a sym.one_hot");
    RankedTensorType hotTy = oneHot.getResult().getType();
    auto aTy = cast<RankedTensorType>(op.getA().getType());
    auto wTy = cast<RankedTensorType>(op.getB().getType());
    auto outTy = cast<RankedTensorType>(op.getType());
    if (!hotTy.hasStaticShape() || !aTy.hasStaticShape() ||
        !wTy.hasStaticShape() || !outTy.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shapes");
    int64_t vocab = hotTy.getShape().back();
    if (wTy.getDimSize(0) != 1)
      return rewriter.notifyMatchFailure(op, "W has a batch dim > 1");
    if (aTy.getDimSize(2) != vocab)
      return rewriter.notifyMatchFailure(op, "the reshape splits rows");
    Type elemTy = wTy.getElementType();
    if (hotTy.getElementType() != elemTy || outTy.getElementType() != elemTy)
      return rewriter.notifyMatchFailure(op, "mixed element types");
    if (!isZeroConstant(op.getAZp()) || !isZeroConstant(op.getBZp()))
      return rewriter.notifyMatchFailure(op, "non-zero zero points");
    if (DenseElementsAttr w = constantFloats(op.getB())) {
      if (!llvm::all_of(w.getValues<APFloat>(),
                        [](const APFloat &f) { return f.isFinite(); }))
        return rewriter.notifyMatchFailure(op, "W has inf or NaN");
    } else if (!assumeFiniteWeights) {
      return rewriter.notifyMatchFailure(
          op, "W is not a constant (see assume-finite-weights)");
    }

    TosaBuilder tb(rewriter, op.getLoc());
    int64_t width = wTy.getDimSize(2);
    Value table = tb.reshape(op.getB(), {vocab, width});
    SmallVector<int64_t> rowsShape(hotTy.getShape());
    rowsShape.back() = width;
    Value rows = EmbedOp::create(rewriter, op.getLoc(),
                                 RankedTensorType::get(rowsShape, elemTy),
                                 oneHot.getSymbols(), table);
    rewriter.replaceOp(op, tb.reshape(rows, outTy.getShape()));
    return success();
  }

  bool assumeFiniteWeights;
};

//===----------------------------------------------------------------------===//
// (b) argmax(one_hot(s)) -> s
//===----------------------------------------------------------------------===//

/// The one-hot row of s has its only 1.0 (the unique maximum; no NaN) at s.
struct ArgMaxOfOneHot : OpRewritePattern<ArgMaxOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ArgMaxOp op,
                                PatternRewriter &rewriter) const override {
    auto oneHot = op.getLogits().getDefiningOp<OneHotOp>();
    if (!oneHot)
      return rewriter.notifyMatchFailure(op, "logits are not a sym.one_hot");
    rewriter.replaceOp(op, castTo(rewriter, op.getLoc(), oneHot.getSymbols(),
                                  op.getType()));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// (c) quantize(embed(s, C), C) -> s
//===----------------------------------------------------------------------===//

/// Larger codebooks are not checked (the check is O(V^2 D) at compile time).
constexpr int64_t kMaxPairwiseWork = int64_t(1) << 26;

/// Whether quantizing any row c_s of the `V x D` codebook gives back s, both
/// exactly (rows pairwise distinct) and as lowered: the lowering compares
/// scores `x.c_j - |c_j|^2/2` in f32, each off by at most about
/// `1.5 (D+1) u R^2` (u = 2^-24, R the largest row norm, any summation
/// order), while the exact gap between row s and row j is
/// `|c_s - c_j|^2 / 2`. Requiring `|c_s - c_j|^2 > 8 (D+2) u R^2` leaves a
/// margin. Rows must be finite, and R^2 far from overflow.
bool isLosslessCodebook(DenseElementsAttr codebook) {
  auto type = cast<RankedTensorType>(codebook.getType());
  int64_t vocab = type.getDimSize(0), dim = type.getDimSize(1);
  if (vocab * vocab * dim > kMaxPairwiseWork)
    return false;
  std::vector<double> c = valuesOf(codebook);
  double maxNorm = 0;
  for (int64_t j = 0; j < vocab; ++j) {
    double norm = 0;
    for (int64_t d = 0; d < dim; ++d)
      norm += c[j * dim + d] * c[j * dim + d];
    if (!std::isfinite(norm))
      return false;
    maxNorm = std::max(maxNorm, norm);
  }
  if (maxNorm > FLT_MAX / 16)
    return false;
  const double u = std::ldexp(1.0, -24);
  double required = 8.0 * static_cast<double>(dim + 2) * u * maxNorm;
  for (int64_t i = 0; i < vocab; ++i)
    for (int64_t j = i + 1; j < vocab; ++j) {
      double dist = 0;
      for (int64_t d = 0; d < dim; ++d) {
        double diff = c[i * dim + d] - c[j * dim + d];
        dist += diff * diff;
      }
      if (!(dist > required))
        return false;
    }
  return true;
}

struct CodebookRoundTrip : OpRewritePattern<QuantizeOp> {
  // Before ConstantCodebookScores, which also matches a constant codebook.
  CodebookRoundTrip(MLIRContext *ctx) : OpRewritePattern(ctx, /*benefit=*/2) {}
  LogicalResult matchAndRewrite(QuantizeOp op,
                                PatternRewriter &rewriter) const override {
    auto embed = op.getInput().getDefiningOp<EmbedOp>();
    if (!embed)
      return rewriter.notifyMatchFailure(op, "input is not a sym.embed");
    DenseElementsAttr codebook = constantFloats(op.getCodebook());
    if (!codebook || codebook != constantFloats(embed.getTable()))
      return rewriter.notifyMatchFailure(
          op, "codebook and table are not the same constant");
    if (!isLosslessCodebook(codebook))
      return rewriter.notifyMatchFailure(
          op, "codebook rows are not finite and well separated");
    rewriter.replaceOp(op, castTo(rewriter, op.getLoc(), embed.getSymbols(),
                                  op.getType()));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// (d) quantize(x, constant C) -> argmax(x . Ct - |c|^2 / 2), folded
//===----------------------------------------------------------------------===//

/// The lowering of sym.quantize computes, per call, the transposed codebook
/// and `|c_j|^2 / 2` before the one matmul that depends on x. With a
/// constant codebook both are constants: this rewrite computes them now (in
/// double, rounded once to f32) and leaves `sym.argmax` of the scores, so a
/// call costs one matmul, one subtraction and the argmax.
struct ConstantCodebookScores : OpRewritePattern<QuantizeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(QuantizeOp op,
                                PatternRewriter &rewriter) const override {
    DenseElementsAttr codebook = constantFloats(op.getCodebook());
    if (!codebook)
      return rewriter.notifyMatchFailure(op, "codebook is not a constant");
    auto type = cast<RankedTensorType>(codebook.getType());
    int64_t vocab = type.getDimSize(0), dim = type.getDimSize(1);
    std::vector<double> c = valuesOf(codebook);
    SmallVector<float> transposed(dim * vocab), halfNorms(vocab);
    for (int64_t j = 0; j < vocab; ++j) {
      double norm = 0;
      for (int64_t d = 0; d < dim; ++d) {
        transposed[d * vocab + j] = static_cast<float>(c[j * dim + d]);
        norm += c[j * dim + d] * c[j * dim + d];
      }
      halfNorms[j] = static_cast<float>(norm / 2);
    }
    Location loc = op.getLoc();
    auto constant = [&](ArrayRef<int64_t> shape, ArrayRef<float> values) {
      auto type = RankedTensorType::get(shape, rewriter.getF32Type());
      return tosa::ConstOp::create(rewriter, loc, type,
                                   DenseElementsAttr::get(type, values));
    };
    Value codebookT = constant({1, dim, vocab}, transposed);
    Value half = constant({1, 1, vocab}, halfNorms);
    Value scores =
        nearestCodewordScores(rewriter, loc, op.getInput(), codebookT, half);
    SmallVector<OpFoldResult> sizes = mixedSizes(rewriter, loc, op.getInput());
    sizes.back() = rewriter.getIndexAttr(vocab);
    rewriter.replaceOpWithNewOp<ArgMaxOp>(op, op.getType(),
                                          reshape(rewriter, loc, scores, sizes));
    return success();
  }
};

struct TesselSimplifySymPass
    : sym::impl::TesselSimplifySymBase<TesselSimplifySymPass> {
  using Base::Base;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateSimplifySymPatterns(patterns, assumeFiniteWeights);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace

void mlir::tessel::sym::populateSimplifySymPatterns(
    RewritePatternSet &patterns, bool assumeFiniteWeights) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<OneHotMatmulToGather>(ctx, assumeFiniteWeights);
  patterns.add<ArgMaxOfOneHot, CodebookRoundTrip, ConstantCodebookScores>(ctx);
}
