//===- Normalization.cpp - ONNX normalization converters -------------------===//
//
// Inference only: BatchNormalization uses the running statistics, and any
// training output or mode is rejected. Statistics of f16/bf16 inputs are
// accumulated in f32 (tessel.layer_norm and tessel.reduce_mean do so).
//
//===----------------------------------------------------------------------===//
#include "Common.h"

#include "tessel/Dialect/Tessel/IR/TesselDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"

using namespace mlir;
using namespace mlir::tessel::onnx_import;

namespace {

LogicalResult requireFloat(NodeContext &ctx, Value x) {
  if (x && isa<FloatType>(elemOf(x)))
    return success();
  return ctx.unsupported("a non-float input");
}

/// `v` reshaped so its dims line up with dims [first, first + rank(v)) of a
/// rank-`rank` tensor (size-1 dims elsewhere).
Value alignAt(NodeContext &ctx, Value v, int64_t first, int64_t rank) {
  SmallVector<int64_t> dims(first, 1);
  llvm::append_range(dims, typeOf(v).getShape());
  dims.resize(rank, 1);
  return ctx.tosa().reshape(v, dims);
}

/// Mean over `axes` of x, each kept with size 1.
Value meanOver(NodeContext &ctx, Value x, ArrayRef<int64_t> axes) {
  for (int64_t axis : axes) {
    SmallVector<int64_t> shape(typeOf(x).getShape());
    shape[axis] = 1;
    x = tessel::ReduceMeanOp::create(ctx.builder(), ctx.loc(),
                                     withShape(typeOf(x), shape), x,
                                     ctx.builder().getI64IntegerAttr(axis));
  }
  return x;
}

/// x / y, y broadcast to x's shape, divided exactly (arith.divf on tensors).
Value divide(NodeContext &ctx, Value x, Value y) {
  y = broadcastTo(ctx, y, typeOf(x).getShape());
  return arith::DivFOp::create(ctx.builder(), ctx.loc(), x, y);
}

Value sqrtOf(NodeContext &ctx, Value x) {
  return math::SqrtOp::create(ctx.builder(), ctx.loc(), x);
}

//===----------------------------------------------------------------------===//
// BatchNormalization
//===----------------------------------------------------------------------===//

/// training_mode = 1 (opset 14+): Y normalized with the batch's own mean
/// and (biased) variance over every axis but the channel one, and the
/// running statistics moved toward them: running = input * momentum +
/// batch * (1 - momentum), as ONNX defines it.
LogicalResult convertBatchNormTraining(NodeContext &ctx, float eps) {
  FailureOr<float> momentum = ctx.floatAttr("momentum", 0.9f);
  if (failed(momentum))
    return failure();
  Value x = ctx.input(0);
  if (failed(requireFloat(ctx, x)))
    return failure();
  RankedTensorType xt = typeOf(x);
  int64_t rank = xt.getRank();
  if (rank < 2 || !xt.hasStaticShape()) {
    ctx.emitError() << "expects an input of rank >= 2 (N, C, ...) with "
                       "static sizes";
    return failure();
  }
  Type et = xt.getElementType();
  tessel::TosaBuilder &tb = ctx.tosa();
  SmallVector<Value> params;
  for (unsigned i = 1; i <= 4; ++i) {
    Value p = ctx.input(i);
    if (!p || typeOf(p).getRank() != 1) {
      ctx.emitError() << "expects inputs X, scale, B, mean, var (mean and var "
                         "of rank 1)";
      return failure();
    }
    params.push_back(tb.narrow(p, et));
  }
  int64_t count = xt.getNumElements() / xt.getDimSize(1);
  auto batchMean = [&](Value v) {
    for (int64_t d = 0; d < rank; ++d)
      if (d != 1)
        v = tb.reduceSum(v, d);
    return tb.mul(v, tb.scalar(et, 1.0 / count, rank));
  };
  Value mean = batchMean(x);
  Value centered = tb.sub(x, mean);
  Value var = batchMean(tb.mul(centered, centered));
  Value y = tb.mul(centered, tb.rsqrt(tb.add(var, tb.scalar(et, eps, rank))));
  y = tb.mul(y, alignAt(ctx, params[0], 1, rank));
  ctx.setOutput(0, tb.add(y, alignAt(ctx, params[1], 1, rank)));
  int64_t channels = xt.getDimSize(1);
  auto running = [&](Value in, Value batch, Type outElem) {
    Value moved = tb.add(tb.mul(in, tb.scalar(et, *momentum, 1)),
                         tb.mul(tb.reshape(batch, {channels}),
                                tb.scalar(et, 1.0 - *momentum, 1)));
    return outElem == et ? moved : tb.cast(moved, outElem);
  };
  if (ctx.hasOutput(1))
    ctx.setOutput(1, running(params[2], mean, ctx.inputType(3).getElementType()));
  if (ctx.hasOutput(2))
    ctx.setOutput(2, running(params[3], var, ctx.inputType(4).getElementType()));
  return success();
}

LogicalResult convertBatchNormalization(NodeContext &ctx) {
  auto eps = ctx.floatAttr("epsilon", 1e-5f);
  if (failed(eps))
    return failure();
  ctx.ignoreAttr("consumed_inputs"); // opset 1: in-place hints, no effect
  if (ctx.hasAttr("is_test")) {
    // Opsets 1-6; the default (0) is taken as inference when only Y is
    // requested, as opset 7+ decides the mode by the outputs.
    auto isTest = ctx.intAttr("is_test");
    if (failed(isTest))
      return failure();
    if (*isTest == 0)
      return ctx.attrError("is_test", "= 0 (training mode) is not "
                                      "supported: Tessel compiles inference");
  }
  auto training = ctx.intAttr("training_mode", 0);
  auto spatial = ctx.intAttr("spatial", 1);
  if (failed(training) || failed(spatial))
    return failure();
  if (*training != 0 && *training != 1)
    return ctx.attrError("training_mode", "= " + std::to_string(*training) +
                                              " must be 0 or 1");
  if (*training == 1)
    return convertBatchNormTraining(ctx, *eps);
  ctx.ignoreAttr("momentum"); // moves running statistics: training only
  for (unsigned i = 1; i < ctx.numOutputs(); ++i)
    if (ctx.hasOutput(i))
      return ctx.unsupported("BatchNormalization's training outputs (mean, "
                             "var, saved_mean, saved_var)");
  Value x = ctx.input(0);
  if (failed(requireFloat(ctx, x)))
    return failure();
  RankedTensorType xt = typeOf(x);
  if (xt.getRank() < 2) {
    ctx.emitError() << "expects an input of rank >= 2 (N, C, ...)";
    return failure();
  }
  // Opset 15 lets scale/bias and mean/var have their own float types.
  SmallVector<Value> params;
  for (unsigned i = 1; i <= 4; ++i) {
    Value p = ctx.input(i);
    if (!p) {
      ctx.emitError() << "expects inputs X, scale, B, mean, var";
      return failure();
    }
    params.push_back(ctx.tosa().narrow(p, xt.getElementType()));
  }
  int64_t rank = xt.getRank();
  int64_t pRank = typeOf(params[0]).getRank();
  if (pRank == 1) {
    ctx.setOutput(0, tessel::BatchNormOp::create(
                         ctx.builder(), ctx.loc(), xt, x, params[0],
                         params[1], params[2], params[3],
                         ctx.builder().getI64IntegerAttr(1),
                         ctx.builder().getF32FloatAttr(*eps)));
    return success();
  }
  // spatial = 0 (opsets 7-8): parameters have shape (C, D1, ..., Dn).
  if (*spatial != 0 || pRank != rank - 1) {
    ctx.emitError() << "parameters of rank " << pRank
                    << " need spatial = 0 and rank " << rank - 1;
    return failure();
  }
  tessel::TosaBuilder &tb = ctx.tosa();
  Type et = xt.getElementType();
  Value factor = tb.mul(params[0], tb.rsqrt(tb.add(
                                       params[3], tb.scalar(et, *eps, pRank))));
  Value y = tb.sub(x, alignAt(ctx, params[2], 1, rank));
  y = tb.mul(y, alignAt(ctx, factor, 1, rank));
  ctx.setOutput(0, tb.add(y, alignAt(ctx, params[1], 1, rank)));
  return success();
}

//===----------------------------------------------------------------------===//
// InstanceNormalization, LayerNormalization
//===----------------------------------------------------------------------===//

/// tessel.layer_norm over dims [axis, rank).
Value layerNorm(NodeContext &ctx, Value x, Value scale, Value bias,
                int64_t axis, float eps) {
  return tessel::LayerNormOp::create(
      ctx.builder(), ctx.loc(), typeOf(x), x, scale, bias,
      ctx.builder().getI64IntegerAttr(axis),
      ctx.builder().getF32FloatAttr(eps));
}

/// Per (N, C) normalization over the spatial dims, then per-channel affine.
LogicalResult convertInstanceNormalization(NodeContext &ctx) {
  auto eps = ctx.floatAttr("epsilon", 1e-5f);
  if (failed(eps))
    return failure();
  Value x = ctx.input(0), scale = ctx.input(1), bias = ctx.input(2);
  if (failed(requireFloat(ctx, x)))
    return failure();
  int64_t rank = typeOf(x).getRank();
  if (rank < 3 || !scale || !bias) {
    ctx.emitError() << "expects input (N, C, D1, ...), scale and B";
    return failure();
  }
  tessel::TosaBuilder &tb = ctx.tosa();
  Value y = layerNorm(ctx, x, Value(), Value(), 2, *eps);
  y = tb.mul(y, alignAt(ctx, scale, 1, rank));
  ctx.setOutput(0, tb.add(y, alignAt(ctx, bias, 1, rank)));
  return success();
}

LogicalResult convertLayerNormalization(NodeContext &ctx) {
  auto axisAttr = ctx.intAttr("axis", -1);
  auto eps = ctx.floatAttr("epsilon", 1e-5f);
  auto stash = ctx.intAttr("stash_type", 1);
  if (failed(axisAttr) || failed(eps) || failed(stash))
    return failure();
  if (*stash != 1)
    return ctx.attrError("stash_type", "= " + std::to_string(*stash) +
                                           " is not supported (only 1, "
                                           "float)");
  Value x = ctx.input(0);
  if (failed(requireFloat(ctx, x)))
    return failure();
  RankedTensorType xt = typeOf(x);
  int64_t rank = xt.getRank();
  auto axis = normalizeAxis(ctx, *axisAttr, rank);
  if (failed(axis))
    return failure();
  // Scale and B broadcast to the normalized shape (unidirectionally).
  ArrayRef<int64_t> normShape = xt.getShape().drop_front(*axis);
  if (llvm::any_of(normShape, ShapedType::isDynamic))
    return ctx.unsupported("LayerNormalization over dimensions known only at "
                           "run time (--shape pins a graph input's symbolic "
                           "dimensions)");
  auto fitNorm = [&](Value p) -> FailureOr<Value> {
    if (!p || typeOf(p).getShape() == normShape)
      return p;
    auto shape = broadcastShape(ctx, normShape, typeOf(p).getShape());
    if (failed(shape))
      return failure();
    if (ArrayRef<int64_t>(*shape) != normShape) {
      ctx.emitError() << "Scale/B do not broadcast to the normalized shape";
      return failure();
    }
    return broadcastTo(ctx, p, normShape);
  };
  auto scale = fitNorm(ctx.input(1));
  auto bias = fitNorm(ctx.input(2));
  if (failed(scale) || failed(bias))
    return failure();
  ctx.setOutput(0, layerNorm(ctx, x, *scale, *bias, *axis, *eps));
  if (!ctx.hasOutput(1) && !ctx.hasOutput(2))
    return success();
  // Mean and InvStdDev (stash_type float): dims [axis, rank) kept as 1.
  tessel::TosaBuilder &tb = ctx.tosa();
  Value xs = xt.getElementType().isF32()
                 ? x
                 : tb.cast(x, ctx.builder().getF32Type());
  SmallVector<int64_t> axes;
  for (int64_t a = *axis; a < rank; ++a)
    axes.push_back(a);
  Value mean = meanOver(ctx, xs, axes);
  Value centered = tb.sub(xs, mean);
  Value var = meanOver(ctx, tb.mul(centered, centered), axes);
  Value epsV = tb.scalar(elemOf(xs), *eps, rank);
  ctx.setOutput(1, mean);
  ctx.setOutput(2, tb.reciprocal(sqrtOf(ctx, tb.add(var, epsV))));
  return success();
}

//===----------------------------------------------------------------------===//
// LpNormalization, LRN, MeanVarianceNormalization
//===----------------------------------------------------------------------===//

/// x / ||x||_p along `axis`, p in {1, 2}.
LogicalResult convertLpNormalization(NodeContext &ctx) {
  auto axisAttr = ctx.intAttr("axis", -1);
  auto p = ctx.intAttr("p", 2);
  if (failed(axisAttr) || failed(p))
    return failure();
  if (*p != 1 && *p != 2)
    return ctx.attrError("p", "= " + std::to_string(*p) +
                                  " is not supported (only 1 or 2)");
  Value x = ctx.input(0);
  if (failed(requireFloat(ctx, x)))
    return failure();
  auto axis = normalizeAxis(ctx, *axisAttr, typeOf(x).getRank());
  if (failed(axis))
    return failure();
  tessel::TosaBuilder &tb = ctx.tosa();
  Value norm;
  if (*p == 1) {
    Value a = tosa::AbsOp::create(ctx.builder(), ctx.loc(), typeOf(x), x);
    norm = tb.reduceSum(a, *axis);
  } else {
    norm = sqrtOf(ctx, tb.reduceSum(tb.mul(x, x), *axis));
  }
  ctx.setOutput(0, divide(ctx, x, norm));
  return success();
}

/// y = x / (bias + alpha / size * sum of x^2 over a channel window)^beta,
/// the window [c - floor((size-1)/2), c + ceil((size-1)/2)].
LogicalResult convertLRN(NodeContext &ctx) {
  auto alpha = ctx.floatAttr("alpha", 1e-4f);
  auto beta = ctx.floatAttr("beta", 0.75f);
  auto bias = ctx.floatAttr("bias", 1.0f);
  auto size = ctx.intAttr("size");
  if (failed(alpha) || failed(beta) || failed(bias) || failed(size))
    return failure();
  if (*size < 1)
    return ctx.attrError("size", "must be positive");
  Value x = ctx.input(0);
  if (failed(requireFloat(ctx, x)))
    return failure();
  RankedTensorType xt = typeOf(x);
  int64_t rank = xt.getRank();
  if (rank < 3) {
    ctx.emitError() << "expects an input of rank >= 3 (N, C, D1, ...)";
    return failure();
  }
  tessel::TosaBuilder &tb = ctx.tosa();
  Type et = xt.getElementType();
  Value sq = tb.mul(x, x);
  int64_t lo = (*size - 1) / 2, hi = *size - 1 - lo;
  SmallVector<int64_t> pads(2 * rank, 0), padded(xt.getShape());
  pads[2] = lo;
  pads[3] = hi;
  padded[1] += lo + hi;
  Value zero = splatConstant(ctx, RankedTensorType::get({1}, et), 0.0);
  sq = tosa::PadOp::create(ctx.builder(), ctx.loc(), withShape(xt, padded), sq,
                           tb.shape(pads), zero);
  Value sum;
  SmallVector<int64_t> start(rank, 0);
  for (int64_t i = 0; i < *size; ++i) {
    start[1] = i;
    Value s = tb.slice(sq, start, xt.getShape());
    sum = sum ? tb.add(sum, s) : s;
  }
  Value base = tb.add(tb.mul(sum, tb.scalar(et, *alpha / *size, rank)),
                      tb.scalar(et, *bias, rank));
  Value den = math::PowFOp::create(ctx.builder(), ctx.loc(), base,
                                   splatConstant(ctx, xt, *beta));
  ctx.setOutput(0, divide(ctx, x, den));
  return success();
}

/// ONNX's function body: (x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9).
LogicalResult convertMeanVarianceNormalization(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (failed(requireFloat(ctx, x)))
    return failure();
  int64_t rank = typeOf(x).getRank();
  auto axesAttr = ctx.intsAttr("axes", SmallVector<int64_t>{0, 2, 3});
  if (failed(axesAttr))
    return failure();
  SmallVector<int64_t> axes;
  for (int64_t a : *axesAttr) {
    auto axis = normalizeAxis(ctx, a, rank, "axes");
    if (failed(axis))
      return failure();
    if (llvm::is_contained(axes, *axis))
      return ctx.attrError("axes", "repeats axis " + std::to_string(*axis));
    axes.push_back(*axis);
  }
  tessel::TosaBuilder &tb = ctx.tosa();
  Value mean = meanOver(ctx, x, axes);
  Value meanSq = meanOver(ctx, tb.mul(x, x), axes);
  Value var = tb.sub(meanSq, tb.mul(mean, mean));
  Value sd = tb.add(sqrtOf(ctx, var), tb.scalar(elemOf(x), 1e-9, rank));
  ctx.setOutput(0, divide(ctx, tb.sub(x, mean), sd));
  return success();
}

} // namespace

void mlir::tessel::onnx_import::registerNormalizationConverters(
    ConverterMap &map) {
  map["BatchNormalization"] = convertBatchNormalization;
  map["InstanceNormalization"] = convertInstanceNormalization;
  map["LayerNormalization"] = convertLayerNormalization;
  map["LpNormalization"] = convertLpNormalization;
  map["LRN"] = convertLRN;
  map["MeanVarianceNormalization"] = convertMeanVarianceNormalization;
}
