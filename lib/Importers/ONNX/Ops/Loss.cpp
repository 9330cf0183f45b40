//===- Loss.cpp - ONNX loss ops ---------------------------------------------===//
//
// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (the latter is
// LogSoftmax over axis 1 followed by the former). The target class of each
// element is picked with a one-hot mask, target == iota(C) along axis 1,
// instead of a gather: a target outside [0, C) (an out-of-range
// ignore_index) then selects nothing, with no index to clamp, and the sum
// over C of a mask with at most one hit is exact.
//
//===----------------------------------------------------------------------===//
#include "Common.h"

#include "tessel/Dialect/Tessel/IR/TesselDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"

#include <optional>

using namespace mlir;
using namespace mlir::tessel::onnx_import;

namespace {

enum class Reduction { None, Sum, Mean };

struct LossAttrs {
  Reduction reduction = Reduction::Mean;
  std::optional<int64_t> ignoreIndex;
};

FailureOr<LossAttrs> readLossAttrs(NodeContext &ctx) {
  LossAttrs attrs;
  FailureOr<std::string> reduction = ctx.stringAttr("reduction", "mean");
  if (failed(reduction))
    return failure();
  if (*reduction == "none")
    attrs.reduction = Reduction::None;
  else if (*reduction == "sum")
    attrs.reduction = Reduction::Sum;
  else if (*reduction != "mean")
    return ctx.attrError("reduction", "= '" + *reduction +
                                          "' is not one of none, sum, mean");
  if (ctx.hasAttr("ignore_index")) {
    FailureOr<int64_t> ii = ctx.intAttr("ignore_index");
    if (failed(ii))
      return failure();
    attrs.ignoreIndex = *ii;
  }
  return attrs;
}

/// Checks the shapes: input [N, C, d1..dk] (float), target [N, d1..dk]
/// (integer), weight [C] (input's type).
LogicalResult checkLossOperands(NodeContext &ctx, Value input, Value target,
                                Value weight) {
  RankedTensorType in = typeOf(input), tg = typeOf(target);
  if (!isa<FloatType>(in.getElementType()) || in.getRank() < 2) {
    ctx.emitError() << "input must be a floating-point tensor of rank >= 2";
    return failure();
  }
  SmallVector<int64_t> expected(in.getShape());
  expected.erase(expected.begin() + 1);
  if (!isa<IntegerType>(tg.getElementType()) || tg.getShape() != ArrayRef<int64_t>(expected)) {
    ctx.emitError() << "target must be an integer tensor of shape ["
                    << expected << "], got " << tg;
    return failure();
  }
  if (weight && (typeOf(weight).getRank() != 1 ||
                 typeOf(weight).getDimSize(0) != in.getDimSize(1) ||
                 elemOf(weight) != in.getElementType())) {
    ctx.emitError() << "weight must be a 1-D tensor of " << in.getDimSize(1)
                    << " elements of the input's type";
    return failure();
  }
  return success();
}

/// `x` reduced over all its dims to a rank-0 tensor.
Value sumAll(NodeContext &ctx, Value x) {
  for (int64_t d = 0, r = typeOf(x).getRank(); d < r; ++d)
    x = ctx.tosa().reduceSum(x, d);
  return ctx.tosa().reshape(x, {});
}

/// The loss of `logProb` ([N, C, d...], log-probabilities) against
/// `target` ([N, d...]) per the ONNX NegativeLogLikelihoodLoss reference:
/// loss = -logProb[n, t, d...] * weight[t] (0 where t == ignore_index),
/// reduced; mean divides by the sum of the applied weights.
Value nllLoss(NodeContext &ctx, Value logProb, Value target, Value weight,
              const LossAttrs &attrs) {
  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  Type resultElem = elemOf(logProb);
  logProb = ctx.tosa().widen(logProb); // f16/bf16 accumulate in f32
  if (weight)
    weight = ctx.tosa().widen(weight);
  RankedTensorType type = typeOf(logProb);
  int64_t rank = type.getRank(), classes = type.getDimSize(1);
  ArrayRef<int64_t> targetShape = typeOf(target).getShape();

  // The target as [N, 1, d...] next to an iota of C along axis 1.
  SmallVector<int64_t> keptShape(targetShape);
  keptShape.insert(keptShape.begin() + 1, 1);
  Value t = ctx.tosa().reshape(target, keptShape);
  SmallVector<int64_t> iotaShape(rank, 1), classIds;
  iotaShape[1] = classes;
  for (int64_t c = 0; c < classes; ++c)
    classIds.push_back(c);
  Value iota = ctx.materializeConstant(
      intsAttr(RankedTensorType::get(iotaShape, elemOf(target)), classIds));
  auto maskTy = withElementType(type, b.getI1Type());
  Value hit = tosa::EqualOp::create(b, loc, maskTy, t, iota);
  if (attrs.ignoreIndex) {
    // ignore_index may be a valid class: drop its hits explicitly.
    auto keptMaskTy = RankedTensorType::get(keptShape, b.getI1Type());
    Value ignored = tosa::EqualOp::create(
        b, loc, keptMaskTy, t, scalarLike(ctx, t, *attrs.ignoreIndex));
    Value kept = tosa::LogicalNotOp::create(b, loc, keptMaskTy, ignored);
    hit = tosa::LogicalAndOp::create(b, loc, maskTy, hit, kept);
  }

  // Applied weight per element: weight[t], or 1, and 0 where ignored.
  Value zero = scalarLike(ctx, logProb, 0.0);
  Value w = scalarLike(ctx, logProb, 1.0);
  if (weight) {
    SmallVector<int64_t> weightShape(rank, 1);
    weightShape[1] = classes;
    w = ctx.tosa().reshape(weight, weightShape);
  }
  Value appliedW = ctx.tosa().reduceSum(
      tosa::SelectOp::create(b, loc, type, hit, w, zero), 1);
  Value picked = ctx.tosa().reduceSum(
      tosa::SelectOp::create(b, loc, type, hit, logProb, zero), 1);
  Value loss = ctx.tosa().sub(zero, picked);
  if (weight)
    loss = ctx.tosa().mul(loss, appliedW);

  switch (attrs.reduction) {
  case Reduction::None:
    loss = ctx.tosa().reshape(loss, targetShape);
    break;
  case Reduction::Sum:
    loss = sumAll(ctx, loss);
    break;
  case Reduction::Mean:
    // Exact division (not a rounded reciprocal), as the reference.
    loss = arith::DivFOp::create(b, loc, sumAll(ctx, loss),
                                 sumAll(ctx, appliedW));
    break;
  }
  return ctx.tosa().narrow(loss, resultElem);
}

LogicalResult convertNegativeLogLikelihoodLoss(NodeContext &ctx) {
  FailureOr<LossAttrs> attrs = readLossAttrs(ctx);
  if (failed(attrs))
    return failure();
  Value input = ctx.input(0), target = ctx.input(1);
  Value weight = ctx.hasInput(2) ? ctx.input(2) : Value();
  if (failed(checkLossOperands(ctx, input, target, weight)))
    return failure();
  ctx.setOutput(0, nllLoss(ctx, input, target, weight, *attrs));
  return success();
}

LogicalResult convertSoftmaxCrossEntropyLoss(NodeContext &ctx) {
  FailureOr<LossAttrs> attrs = readLossAttrs(ctx);
  if (failed(attrs))
    return failure();
  Value scores = ctx.input(0), labels = ctx.input(1);
  Value weight = ctx.hasInput(2) ? ctx.input(2) : Value();
  if (failed(checkLossOperands(ctx, scores, labels, weight)))
    return failure();
  OpBuilder &b = ctx.builder();
  Value logProb = tessel::LogSoftmaxOp::create(b, ctx.loc(), scores.getType(),
                                               scores, b.getI64IntegerAttr(1));
  ctx.setOutput(0, nllLoss(ctx, logProb, labels, weight, *attrs));
  if (ctx.hasOutput(1))
    ctx.setOutput(1, logProb);
  return success();
}

} // namespace

void mlir::tessel::onnx_import::registerLossConverters(ConverterMap &m) {
  m["NegativeLogLikelihoodLoss"] = convertNegativeLogLikelihoodLoss;
  m["SoftmaxCrossEntropyLoss"] = convertSoftmaxCrossEntropyLoss;
}
