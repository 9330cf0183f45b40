//===- LowerSymOps.cpp - sym ops -> TOSA -----------------------------------===//
//
// One conversion pattern per sym op. Operands arrive converted (symbols are
// i32 ids in [0, V)); results get the converted types. Shapes may be
// dynamic: reshapes then go through tensor.collapse_shape/expand_shape.
//
//===----------------------------------------------------------------------===//
#include "SymTosaUtils.h"

#include "tessel/Dialect/Sym/IR/SymDialect.h"
#include "tessel/Dialect/Sym/Transforms/Passes.h"
#include "tessel/Dialect/Tessel/Utils/TosaBuilder.h"

#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::tessel;
using namespace mlir::tessel::sym;

namespace {

int64_t vocabOf(Value v) {
  return getSymbolElementType(v.getType()).getVocabSize();
}

/// A sym op conversion with the converted result type at hand.
template <typename OpT>
struct SymLowering : OpConversionPattern<OpT> {
  using OpConversionPattern<OpT>::OpConversionPattern;
  using OpAdaptor = typename OpT::Adaptor;

  LogicalResult
  matchAndRewrite(OpT op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const final {
    auto resultTy = dyn_cast_or_null<RankedTensorType>(
        this->getTypeConverter()->convertType(op.getResult().getType()));
    if (!resultTy)
      return rewriter.notifyMatchFailure(op, "result type not convertible");
    Value lowered = lower(op, adaptor, resultTy, rewriter);
    rewriter.replaceOp(op, castTo(rewriter, op.getLoc(), lowered, resultTy));
    return success();
  }

  /// The lowered value; its type may differ from `resultTy` in static-ness
  /// only (a tensor.cast is added then).
  virtual Value lower(OpT op, OpAdaptor adaptor, RankedTensorType resultTy,
                      ConversionPatternRewriter &rewriter) const = 0;
};

/// tosa.argmax keeps the first maximum (strict `>` in its linalg lowering)
/// and, in its default NaN mode PROPAGATE, the first NaN: numpy's argmax.
struct LowerArgMax : SymLowering<ArgMaxOp> {
  using SymLowering::SymLowering;
  Value lower(ArgMaxOp op, OpAdaptor adaptor, RankedTensorType resultTy,
              ConversionPatternRewriter &rewriter) const override {
    auto axis = static_cast<uint32_t>(op.getLogits().getType().getRank() - 1);
    return tosa::ArgMaxOp::create(rewriter, op.getLoc(), resultTy,
                                  adaptor.getLogits(), axis);
  }
};

/// argmin_j |x - c_j|^2 = argmax_j (x . c_j - |c_j|^2 / 2): one matmul, the
/// codeword norms (constant-folded when the codebook is a constant), and
/// tosa.argmax, whose first-maximum rule gives the lowest index on ties.
/// |x|^2 is left out: constant per row, it cannot change the winner, and
/// adding it would only round near-ties together.
struct LowerQuantize : SymLowering<QuantizeOp> {
  using SymLowering::SymLowering;
  Value lower(QuantizeOp op, OpAdaptor adaptor, RankedTensorType resultTy,
              ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    TosaBuilder tb(rewriter, loc);
    int64_t vocab = vocabOf(op.getResult());
    Value c = tb.widen(adaptor.getCodebook());
    OpFoldResult d = mixedSizes(rewriter, loc, c)[1];
    Value c3 = reshape(rewriter, loc, c,
                       {rewriter.getIndexAttr(1), rewriter.getIndexAttr(vocab),
                        d});
    Value codebookT = tb.transpose(c3, {0, 2, 1});
    Value norms = tb.reduceSum(tb.mul(c, c), 1); // [V, 1]
    Value half = tb.mul(norms, tb.scalar(rewriter.getF32Type(), 0.5, 2));
    Value halfNorms = tb.reshape(half, {1, 1, vocab});
    Value scores = nearestCodewordScores(rewriter, loc, adaptor.getInput(),
                                         codebookT, halfNorms);
    auto scoresTy = cast<RankedTensorType>(scores.getType());
    Value ids = tosa::ArgMaxOp::create(
        rewriter, loc,
        RankedTensorType::get({1, scoresTy.getDimSize(1)},
                              rewriter.getI32Type()),
        scores, /*axis=*/2u);
    SmallVector<OpFoldResult> sizes =
        mixedSizes(rewriter, loc, adaptor.getInput());
    sizes.pop_back();
    return reshape(rewriter, loc, ids, sizes);
  }
};

/// tosa.gather of the table as `1 x V x D` by the ids as `1 x N`.
struct LowerEmbed : SymLowering<EmbedOp> {
  using SymLowering::SymLowering;
  Value lower(EmbedOp op, OpAdaptor adaptor, RankedTensorType resultTy,
              ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value ids = adaptor.getSymbols(), table = adaptor.getTable();
    SmallVector<OpFoldResult> sizes = mixedSizes(rewriter, loc, ids);
    SmallVector<OpFoldResult> tableSizes = mixedSizes(rewriter, loc, table);
    OpFoldResult one = rewriter.getIndexAttr(1);
    Value ids2 =
        reshape(rewriter, loc, ids, {one, product(rewriter, loc, sizes)});
    Value values =
        reshape(rewriter, loc, table, {one, tableSizes[0], tableSizes[1]});
    auto gatheredTy = RankedTensorType::get(
        {1, cast<RankedTensorType>(ids2.getType()).getDimSize(1),
         cast<RankedTensorType>(values.getType()).getDimSize(2)},
        resultTy.getElementType());
    Value rows =
        tosa::GatherOp::create(rewriter, loc, gatheredTy, values, ids2);
    sizes.push_back(tableSizes[1]);
    return reshape(rewriter, loc, rows, sizes);
  }
};

/// ids[..., None] == [0, 1, ..., V-1], then select 1.0 / 0.0.
struct LowerOneHot : SymLowering<OneHotOp> {
  using SymLowering::SymLowering;
  Value lower(OneHotOp op, OpAdaptor adaptor, RankedTensorType resultTy,
              ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    TosaBuilder tb(rewriter, loc);
    int64_t vocab = vocabOf(op.getSymbols());
    Value ids = adaptor.getSymbols();
    SmallVector<OpFoldResult> sizes = mixedSizes(rewriter, loc, ids);
    sizes.push_back(rewriter.getIndexAttr(1));
    Value column = reshape(rewriter, loc, ids, sizes);
    int64_t rank = static_cast<int64_t>(sizes.size());

    SmallVector<int64_t> iotaShape(rank, 1);
    iotaShape.back() = vocab;
    auto iotaTy = RankedTensorType::get(iotaShape, rewriter.getI32Type());
    SmallVector<int32_t> iota(vocab);
    std::iota(iota.begin(), iota.end(), 0);
    Value iotaConst = tosa::ConstOp::create(
        rewriter, loc, iotaTy,
        DenseElementsAttr::get(iotaTy, ArrayRef<int32_t>(iota)));

    SmallVector<int64_t> outShape(
        cast<RankedTensorType>(column.getType()).getShape());
    outShape.back() = vocab;
    Value hit = tosa::EqualOp::create(
        rewriter, loc, RankedTensorType::get(outShape, rewriter.getI1Type()),
        column, iotaConst);
    Type elemTy = resultTy.getElementType();
    return tosa::SelectOp::create(
        rewriter, loc, RankedTensorType::get(outShape, elemTy), hit,
        tb.scalar(elemTy, 1.0, rank), tb.scalar(elemTy, 0.0, rank));
  }
};

/// Clamp into [0, V-1] in the ids' own type (before any narrowing, so that
/// large i64 ids saturate instead of wrapping), then cast to i32.
struct LowerFromIndex : SymLowering<FromIndexOp> {
  using SymLowering::SymLowering;
  Value lower(FromIndexOp op, OpAdaptor adaptor, RankedTensorType resultTy,
              ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value in = adaptor.getIndices();
    auto inTy = cast<RankedTensorType>(in.getType());
    Type intTy = inTy.getElementType();
    Value clamped = tosa::ClampOp::create(
        rewriter, loc, inTy, in, rewriter.getIntegerAttr(intTy, 0),
        rewriter.getIntegerAttr(intTy, vocabOf(op.getResult()) - 1));
    if (intTy.isInteger(32))
      return clamped;
    return tosa::CastOp::create(rewriter, loc,
                                inTy.clone(rewriter.getI32Type()), clamped);
  }
};

/// Ids are already i32; i64 is a widening cast.
struct LowerToIndex : SymLowering<ToIndexOp> {
  using SymLowering::SymLowering;
  Value lower(ToIndexOp op, OpAdaptor adaptor, RankedTensorType resultTy,
              ConversionPatternRewriter &rewriter) const override {
    Value ids = adaptor.getSymbols();
    auto idsTy = cast<RankedTensorType>(ids.getType());
    if (resultTy.getElementType() == idsTy.getElementType())
      return ids;
    return tosa::CastOp::create(rewriter, op.getLoc(),
                                idsTy.clone(resultTy.getElementType()), ids);
  }
};

} // namespace

void mlir::tessel::sym::populateLowerSymPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<LowerArgMax, LowerQuantize, LowerEmbed, LowerOneHot,
               LowerFromIndex, LowerToIndex>(converter,
                                             patterns.getContext());
}
