//===- Random.cpp - The ONNX ops that draw random values -----------------===//
//
// The draws are tessel.random_uniform / tessel.random_normal (their
// generator is documented on the ops); these converters only map the ONNX
// attributes onto them and combine the draws as each node defines.
//
//===----------------------------------------------------------------------===//
#include "../GraphImporter.h"
#include "Common.h"

#include "tessel/Dialect/Tessel/IR/TesselDialect.h"
#include "tessel/Dialect/Tessel/Utils/TosaBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Utils/Utils.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"

#include "llvm/ADT/bit.h"

using namespace mlir;
using namespace mlir::tessel::onnx_import;
using mlir::tessel::onnx_import::detail::typeText;

namespace {

/// The `seed` attribute, when given, as the ops' 64-bit seed. It is a
/// float on RandomUniform/Normal(Like) and Bernoulli (its bit pattern is
/// taken, so that distinct seeds stay distinct) and an int on Dropout.
FailureOr<std::optional<int64_t>> seedAttr(NodeContext &ctx, bool isFloat) {
  if (!ctx.hasAttr("seed"))
    return std::optional<int64_t>();
  if (isFloat) {
    FailureOr<float> s = ctx.floatAttr("seed");
    if (failed(s))
      return failure();
    return std::optional<int64_t>(llvm::bit_cast<uint32_t>(*s));
  }
  FailureOr<int64_t> s = ctx.intAttr("seed");
  if (failed(s))
    return failure();
  return std::optional<int64_t>(*s);
}

/// `dtype` (default `dflt`, null: required), which must name a float type.
FailureOr<Type> floatDtype(NodeContext &ctx, Type dflt) {
  Type elem = dflt;
  if (ctx.hasAttr("dtype") || !dflt) {
    FailureOr<int64_t> dtype = ctx.intAttr("dtype", onnx::TensorProto::FLOAT);
    if (failed(dtype))
      return failure();
    elem = convertElementType(static_cast<int32_t>(*dtype), ctx.context());
    if (!elem || !isa<FloatType>(elem))
      return ctx.attrError("dtype", "= " + std::to_string(*dtype) +
                                        " is not a float type (float16, "
                                        "bfloat16, float or double)");
  }
  if (!isa<FloatType>(elem))
    return ctx.attrError("dtype", "is required: the input's type " +
                                      typeText(elem) + " is not a float type");
  if (!elem.isF16() && !elem.isBF16() && !elem.isF32() && !elem.isF64())
    return ctx.attrError("dtype", "names " + typeText(elem) +
                                      ", which Tessel cannot draw");
  return elem;
}

/// The draws' type where a node compares them: f64 for f64, else f32 (an
/// f16 draw has only 11 bits).
Type drawType(Type elem) {
  return elem.isF64() ? elem : Float32Type::get(elem.getContext());
}

/// Uniform draws in [0, 1) of `elem` shaped like `like`.
Value unitDraws(NodeContext &ctx, Value like, Type elem,
                std::optional<int64_t> seed) {
  auto type = withElementType(cast<RankedTensorType>(like.getType()), elem);
  OpBuilder &b = ctx.builder();
  return tessel::RandomUniformOp::create(
      b, ctx.loc(), type, tensor::createDynamicDimValues(b, ctx.loc(), like),
      b.getF64FloatAttr(0.0), b.getF64FloatAttr(1.0),
      seed ? b.getI64IntegerAttr(*seed) : IntegerAttr());
}

/// RandomUniform, RandomNormal and their *Like forms (`like`: the shape
/// and, without dtype, the type come from input 0).
template <bool normal, bool like>
LogicalResult convertRandom(NodeContext &ctx) {
  OpBuilder &b = ctx.builder();
  FailureOr<std::optional<int64_t>> seed = seedAttr(ctx, /*isFloat=*/true);
  if (failed(seed))
    return failure();
  RankedTensorType type;
  SmallVector<Value> dynamicSizes;
  if (like) {
    RankedTensorType in = ctx.inputType(0);
    FailureOr<Type> elem = floatDtype(ctx, in.getElementType());
    if (failed(elem))
      return failure();
    type = withElementType(in, *elem);
    dynamicSizes = tensor::createDynamicDimValues(b, ctx.loc(), ctx.input(0));
  } else {
    FailureOr<Type> elem = floatDtype(ctx, b.getF32Type());
    FailureOr<SmallVector<int64_t>> shape = ctx.intsAttr("shape");
    if (failed(elem) || failed(shape))
      return failure();
    for (int64_t d : *shape)
      if (d < 0)
        return ctx.attrError("shape",
                             "has a negative size " + std::to_string(d));
    type = RankedTensorType::get(*shape, *elem);
  }
  const char *a = normal ? "mean" : "low";
  const char *bName = normal ? "scale" : "high";
  FailureOr<float> first = ctx.floatAttr(a, 0.0f);
  FailureOr<float> second = ctx.floatAttr(bName, 1.0f);
  if (failed(first) || failed(second))
    return failure();
  if (!std::isfinite(*first) || !std::isfinite(*second))
    return ctx.attrError(std::isfinite(*first) ? bName : a, "must be finite");
  IntegerAttr seedValue = *seed ? b.getI64IntegerAttr(**seed) : IntegerAttr();
  Value r;
  if (normal) {
    if (*second < 0)
      return ctx.attrError("scale", "= " + std::to_string(*second) +
                                        " must not be negative");
    r = tessel::RandomNormalOp::create(b, ctx.loc(), type, dynamicSizes,
                                       b.getF64FloatAttr(*first),
                                       b.getF64FloatAttr(*second), seedValue);
  } else {
    if (*first > *second)
      return ctx.attrError("low",
                           "= " + std::to_string(*first) +
                               " exceeds high = " + std::to_string(*second));
    r = tessel::RandomUniformOp::create(b, ctx.loc(), type, dynamicSizes,
                                        b.getF64FloatAttr(*first),
                                        b.getF64FloatAttr(*second), seedValue);
  }
  ctx.setOutput(0, r);
  return success();
}

/// Bernoulli: 1 with probability `input` (u < p for a uniform draw u),
/// cast to dtype (default: the input's type).
LogicalResult convertBernoulli(NodeContext &ctx) {
  FailureOr<std::optional<int64_t>> seed = seedAttr(ctx, /*isFloat=*/true);
  if (failed(seed))
    return failure();
  Value p = ctx.input(0);
  RankedTensorType in = ctx.inputType(0);
  if (!isa<FloatType>(in.getElementType()))
    return ctx.emitError() << "input must be float16, bfloat16, float or "
                              "double, got "
                           << in.getElementType();
  Type out = in.getElementType();
  if (ctx.hasAttr("dtype")) {
    FailureOr<int64_t> dtype = ctx.intAttr("dtype");
    if (failed(dtype))
      return failure();
    out = convertElementType(static_cast<int32_t>(*dtype), ctx.context());
    if (!out)
      return ctx.attrError("dtype", "= " + std::to_string(*dtype) +
                                        " names a data type Tessel does not "
                                        "support");
  }
  Type draw = drawType(in.getElementType());
  Value u = unitDraws(ctx, p, draw, *seed);
  Value pw = castValue(ctx, p, draw);
  Value ones = tosa::GreaterOp::create(
      ctx.builder(), ctx.loc(), withElementType(in, ctx.builder().getI1Type()),
      pw, u);
  ctx.setOutput(0, castValue(ctx, ones, out));
  return success();
}

/// Multinomial: `sample_size` class indices per row of unnormalized
/// log-probabilities `x` (batch x classes). Sample (b, s) is the first
/// class whose running sum of exp(x - max) exceeds u * total for a uniform
/// draw u: class c with probability softmax(x)[c].
LogicalResult convertMultinomial(NodeContext &ctx) {
  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  FailureOr<std::optional<int64_t>> seed = seedAttr(ctx, /*isFloat=*/true);
  FailureOr<int64_t> samples = ctx.intAttr("sample_size", 1);
  FailureOr<int64_t> dtype = ctx.intAttr("dtype", onnx::TensorProto::INT32);
  if (failed(seed) || failed(samples) || failed(dtype))
    return failure();
  if (*samples < 1)
    return ctx.attrError("sample_size",
                         "= " + std::to_string(*samples) + " must be positive");
  if (*dtype != onnx::TensorProto::INT32 && *dtype != onnx::TensorProto::INT64)
    return ctx.attrError("dtype", "= " + std::to_string(*dtype) +
                                      " must be int32 (6) or int64 (7)");
  Type outElem = b.getIntegerType(*dtype == onnx::TensorProto::INT32 ? 32 : 64);
  RankedTensorType in = ctx.inputType(0);
  if (in.getRank() != 2 || !isa<FloatType>(in.getElementType()))
    return ctx.emitError() << "input must be a batch x classes float "
                              "tensor, got "
                           << in;
  if (in.getDimSize(1) == 0)
    return ctx.emitError() << "input has no classes to draw from";
  auto compute = cast<FloatType>(drawType(in.getElementType()));
  // Weights exp(x - max) per row, and their total.
  tessel::TosaBuilder tb(b, loc);
  Value x = castValue(ctx, ctx.input(0), compute);
  Value w = tb.exp(tb.sub(x, tb.reduceMax(x, 1)));
  Value total = tb.reduceSum(w, 1);
  // One draw per sample, then a walk along the row.
  Value batch = in.isDynamicDim(0)
                    ? Value(tensor::DimOp::create(b, loc, ctx.input(0), 0))
                    : Value();
  auto drawTy = RankedTensorType::get({in.getDimSize(0), *samples}, compute);
  SmallVector<Value> dyn;
  if (batch)
    dyn.push_back(batch);
  Value u = tessel::RandomUniformOp::create(
      b, loc, drawTy, dyn, b.getF64FloatAttr(0.0), b.getF64FloatAttr(1.0),
      *seed ? b.getI64IntegerAttr(**seed) : IntegerAttr());
  auto outTy = RankedTensorType::get({in.getDimSize(0), *samples}, outElem);
  Value classes = tensor::DimOp::create(b, loc, w, 1);
  Value out = tensor::GenerateOp::create(
      b, loc, outTy, dyn, [&](OpBuilder &nb, Location l, ValueRange ivs) {
        Value zero = arith::ConstantIndexOp::create(nb, l, 0);
        Value one = arith::ConstantIndexOp::create(nb, l, 1);
        Value threshold = arith::MulFOp::create(
            nb, l, tensor::ExtractOp::create(nb, l, u, ivs),
            tensor::ExtractOp::create(nb, l, total, ValueRange{ivs[0], zero}));
        Value fzero = arith::ConstantOp::create(nb, l, compute,
                                                nb.getFloatAttr(compute, 0));
        // count = #{c : running sum through c <= threshold}.
        auto loop = scf::ForOp::create(
            nb, l, zero, classes, one, ValueRange{fzero, zero},
            [&](OpBuilder &lb, Location ll, Value c, ValueRange acc) {
              Value sum = arith::AddFOp::create(
                  lb, ll, acc[0],
                  tensor::ExtractOp::create(lb, ll, w, ValueRange{ivs[0], c}));
              Value below = arith::CmpFOp::create(
                  lb, ll, arith::CmpFPredicate::OLE, sum, threshold);
              Value count = arith::AddIOp::create(
                  lb, ll, acc[1],
                  arith::SelectOp::create(lb, ll, below, one, zero));
              scf::YieldOp::create(lb, ll, ValueRange{sum, count});
            });
        // Rounding may leave the last sum at or below u * total.
        Value last = arith::SubIOp::create(nb, l, classes, one);
        Value idx = arith::MinUIOp::create(nb, l, loop.getResult(1), last);
        tensor::YieldOp::create(
            nb, l, arith::IndexCastOp::create(nb, l, outElem, idx));
      });
  ctx.setOutput(0, out);
  return success();
}

/// A scalar operand (rank 0, or one element) read at run time.
Value scalarOf(NodeContext &ctx, Value t) {
  auto type = cast<RankedTensorType>(t.getType());
  SmallVector<Value> zeros(type.getRank(), arith::ConstantIndexOp::create(
                                               ctx.builder(), ctx.loc(), 0));
  return tensor::ExtractOp::create(ctx.builder(), ctx.loc(), t, zeros);
}

/// Dropout: in inference the identity (the mask all true); in training
/// (opset 12+, training_mode true, constant or read at run time) each
/// element is kept with probability 1 - ratio and scaled by 1 / (1 -
/// ratio), the rest zeroed, as the ONNX reference does.
LogicalResult convertDropout(NodeContext &ctx) {
  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  Value x = ctx.input(0);
  RankedTensorType xTy = ctx.inputType(0);
  auto maskTy = withElementType(xTy, b.getI1Type());
  auto identity = [&]() {
    ctx.setOutput(0, x);
    if (ctx.hasOutput(1))
      ctx.setConstantOutput(
          1, DenseElementsAttr::get(maskTy, b.getBoolAttr(true)));
    return success();
  };
  if (ctx.opset() < 12) {
    ctx.ignoreAttr("seed");
    ctx.ignoreAttr("ratio");
    if (ctx.hasAttr("is_test")) {
      FailureOr<int64_t> isTest = ctx.intAttr("is_test");
      if (failed(isTest))
        return failure();
      if (*isTest == 0)
        return ctx.attrError("is_test", "= 0 (training mode) is not "
                                        "supported: Tessel compiles inference");
    }
    return identity();
  }
  FailureOr<std::optional<int64_t>> seed = seedAttr(ctx, /*isFloat=*/false);
  if (failed(seed))
    return failure();
  // training_mode: absent or constant false is inference.
  Value mode;
  if (!ctx.hasInput(2))
    return identity();
  if (DenseElementsAttr m = ctx.constantInput(2)) {
    if (toInts(m).front() == 0)
      return identity();
  } else {
    mode = ctx.input(2);
    if (ctx.inputType(2).getNumElements() != 1)
      return ctx.emitError()
             << "training_mode must be a scalar, got " << ctx.inputType(2);
  }
  // ratio: constant (default 0.5) or read at run time.
  Value ratio;
  if (ctx.hasInput(1)) {
    if (DenseElementsAttr r = ctx.constantInput(1)) {
      double v = toDoubles(r).front();
      if (!(v >= 0.0 && v < 1.0))
        return ctx.emitError() << "ratio must be in [0, 1), got " << v;
      if (v == 0.0)
        return identity();
    } else if (ctx.inputType(1).getNumElements() != 1) {
      return ctx.emitError()
             << "ratio must be a scalar, got " << ctx.inputType(1);
    }
    ratio = ctx.input(1);
  }
  if (!isa<FloatType>(xTy.getElementType()))
    return ctx.emitError() << "data must be float16, bfloat16, float or "
                              "double, got "
                           << xTy.getElementType();
  auto draw = cast<FloatType>(drawType(xTy.getElementType()));
  Value u = unitDraws(ctx, x, draw, *seed);
  Value ratioScalar =
      ratio
          ? castScalar(b, loc, scalarOf(ctx, ratio),
                       cast<RankedTensorType>(ratio.getType()).getElementType(),
                       draw)
          : Value(arith::ConstantOp::create(b, loc, draw,
                                            b.getFloatAttr(draw, 0.5)));
  Value modeScalar =
      mode ? castScalar(b, loc, scalarOf(ctx, mode),
                        ctx.inputType(2).getElementType(), b.getI1Type())
           : Value();
  // keep = u >= ratio; y = keep ? x / (1 - ratio) : 0 (a ratio of 1 zeroes
  // everything instead of making 0 * inf).
  Value one = arith::ConstantOp::create(b, loc, draw, b.getFloatAttr(draw, 1));
  Value scale = arith::DivFOp::create(
      b, loc, one, arith::SubFOp::create(b, loc, one, ratioScalar));
  SmallVector<Value> sizes = tensor::createDynamicDimValues(b, loc, x);
  Value yInit = tensor::EmptyOp::create(b, loc, xTy, sizes);
  Value mInit = tensor::EmptyOp::create(b, loc, maskTy, sizes);
  int64_t rank = xTy.getRank();
  SmallVector<AffineMap> maps(4, b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  Type elem = xTy.getElementType();
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{xTy, maskTy}, ValueRange{x, u},
      ValueRange{yInit, mInit}, maps, iters,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value xv = args[0], uv = args[1];
        Value keep = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OGE, uv,
                                           ratioScalar);
        Value xw = xv.getType() == draw
                       ? xv
                       : Value(arith::ExtFOp::create(nb, l, draw, xv));
        Value kept = arith::MulFOp::create(nb, l, xw, scale);
        Value zero =
            arith::ConstantOp::create(nb, l, draw, nb.getFloatAttr(draw, 0));
        Value y = arith::SelectOp::create(nb, l, keep, kept, zero);
        if (y.getType() != elem)
          y = arith::TruncFOp::create(nb, l, elem, y);
        if (modeScalar) {
          y = arith::SelectOp::create(nb, l, modeScalar, y, xv);
          Value on = arith::ConstantIntOp::create(nb, l, nb.getI1Type(), 1);
          keep = arith::SelectOp::create(nb, l, modeScalar, keep, on);
        }
        linalg::YieldOp::create(nb, l, ValueRange{y, keep});
      });
  ctx.setOutput(0, generic.getResult(0));
  if (ctx.hasOutput(1))
    ctx.setOutput(1, generic.getResult(1));
  return success();
}

} // namespace

void mlir::tessel::onnx_import::registerRandomConverters(ConverterMap &m) {
  m["RandomUniform"] = convertRandom</*normal=*/false, /*like=*/false>;
  m["RandomNormal"] = convertRandom</*normal=*/true, /*like=*/false>;
  m["RandomUniformLike"] = convertRandom</*normal=*/false, /*like=*/true>;
  m["RandomNormalLike"] = convertRandom</*normal=*/true, /*like=*/true>;
  m["Bernoulli"] = convertBernoulli;
  m["Multinomial"] = convertMultinomial;
  m["Dropout"] = convertDropout;
}
