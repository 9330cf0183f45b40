//===- Training.cpp - ai.onnx.preview.training optimizers ------------------===//
//
// The optimizer steps of the ai.onnx.preview.training domain (opset 1):
// Adagrad, Momentum (standard and Nesterov) and Adam, each applied to
// tensors X1..Xn with gradients G1..Gn and their state, as the ONNX
// definitions write them. They are plain elementwise arithmetic once the
// scalar step size is known; that scalar (R and the update count T read at
// run time) is computed in f64, as the reference computes alpha**T and
// beta**T, and splat over each tensor. Gradient (automatic differentiation
// of a graph) is not supported.
//
//===----------------------------------------------------------------------===//
#include "Common.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::tessel::onnx_import;

namespace {

/// Elementwise arithmetic on tensors of one float type, and the scalars
/// read from and splat over them.
struct StepMath {
  OpBuilder &b;
  Location loc;

  Value add(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivFOp::create(b, loc, x, y); }
  Value sqrt(Value x) { return math::SqrtOp::create(b, loc, x); }
  Value f64(double v) {
    return arith::ConstantOp::create(b, loc, b.getF64Type(), b.getF64FloatAttr(v));
  }
  /// The one element of a scalar (or 1-element) tensor, in f64.
  Value scalar(Value t) {
    auto type = cast<RankedTensorType>(t.getType());
    SmallVector<Value> at(type.getRank(),
                          arith::ConstantIndexOp::create(b, loc, 0));
    Value v = tensor::ExtractOp::create(b, loc, t, at);
    Type e = v.getType();
    if (isa<IntegerType>(e))
      return arith::SIToFPOp::create(b, loc, b.getF64Type(), v);
    if (e.getIntOrFloatBitWidth() < 64)
      return arith::ExtFOp::create(b, loc, b.getF64Type(), v);
    return v;
  }
  /// f64 scalar `v` over a tensor like `like`.
  Value splat(Value v, Value like) {
    auto type = cast<RankedTensorType>(like.getType());
    if (type.getElementType() != v.getType())
      v = arith::TruncFOp::create(b, loc, type.getElementType(), v);
    return tensor::SplatOp::create(b, loc, type, v);
  }
  /// `t > 0 ? a : b` on f64 scalars.
  Value ifPositive(Value t, Value a, Value other) {
    Value positive = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, t, f64(0));
    return arith::SelectOp::create(b, loc, positive, a, other);
  }
};

/// Checks the shared operand layout R, T, then `groups` runs of n tensors
/// (X, G, state...), with `groups - 1` runs of n outputs; returns n.
FailureOr<int64_t> optimizerArity(NodeContext &ctx, int64_t groups) {
  int64_t tensors = static_cast<int64_t>(ctx.numInputs()) - 2;
  if (tensors <= 0 || tensors % groups != 0) {
    ctx.emitError() << "expects R, T and " << groups
                    << " equally long lists of tensors, got "
                    << ctx.numInputs() << " inputs";
    return failure();
  }
  int64_t n = tensors / groups;
  if (static_cast<int64_t>(ctx.numOutputs()) != n * (groups - 1)) {
    ctx.emitError() << "expects " << n * (groups - 1) << " outputs for " << n
                    << " optimized tensors, got " << ctx.numOutputs();
    return failure();
  }
  for (unsigned i = 0; i < ctx.numInputs(); ++i) {
    RankedTensorType t = ctx.inputType(i);
    if (!t || (i != 1 && !isa<FloatType>(t.getElementType())) ||
        (i < 2 && t.getNumElements() != 1)) {
      ctx.emitError() << "input " << i
                      << (i < 2 ? " must be a one-element tensor"
                                : " must be a floating-point tensor");
      return failure();
    }
  }
  for (int64_t k = 0; k < n; ++k)
    for (int64_t g = 1; g < groups; ++g)
      if (ctx.inputType(2 + g * n + k) != ctx.inputType(2 + k)) {
        ctx.emitError() << "input " << 2 + g * n + k
                        << " must have the type of input " << 2 + k;
        return failure();
      }
  return n;
}

void setIfUsed(NodeContext &ctx, int64_t i, Value v) {
  if (ctx.hasOutput(i))
    ctx.setOutput(i, v);
}

LogicalResult convertAdagrad(NodeContext &ctx) {
  FailureOr<float> decay = ctx.floatAttr("decay_factor", 0.0f);
  FailureOr<float> epsilon = ctx.floatAttr("epsilon", 1e-6f);
  FailureOr<float> norm = ctx.floatAttr("norm_coefficient", 0.0f);
  FailureOr<int64_t> n = optimizerArity(ctx, 3);
  if (failed(decay) || failed(epsilon) || failed(norm) || failed(n))
    return failure();
  StepMath m{ctx.builder(), ctx.loc()};
  // r = R / (1 + T * decay_factor)
  Value r = m.div(m.scalar(ctx.input(0)),
                  m.add(m.f64(1), m.mul(m.scalar(ctx.input(1)), m.f64(*decay))));
  for (int64_t k = 0; k < *n; ++k) {
    Value x = ctx.input(2 + k), g = ctx.input(2 + *n + k),
          h = ctx.input(2 + 2 * *n + k);
    Value gReg = m.add(m.mul(m.splat(m.f64(*norm), x), x), g);
    Value hNew = m.add(h, m.mul(gReg, gReg));
    Value hAdaptive = m.add(m.sqrt(hNew), m.splat(m.f64(*epsilon), x));
    setIfUsed(ctx, k, m.sub(x, m.div(m.mul(m.splat(r, x), gReg), hAdaptive)));
    setIfUsed(ctx, *n + k, hNew);
  }
  return success();
}

LogicalResult convertMomentum(NodeContext &ctx) {
  FailureOr<float> alpha = ctx.floatAttr("alpha");
  FailureOr<float> beta = ctx.floatAttr("beta");
  FailureOr<float> norm = ctx.floatAttr("norm_coefficient");
  FailureOr<std::string> mode = ctx.stringAttr("mode");
  FailureOr<int64_t> n = optimizerArity(ctx, 3);
  if (failed(alpha) || failed(beta) || failed(norm) || failed(mode) || failed(n))
    return failure();
  if (*mode != "standard" && *mode != "nesterov")
    return ctx.attrError("mode", "= '" + *mode + "' must be 'standard' or 'nesterov'");
  StepMath m{ctx.builder(), ctx.loc()};
  Value lr = m.scalar(ctx.input(0));
  // The first update (T = 0) takes the whole gradient.
  Value betaAdjusted = m.ifPositive(m.scalar(ctx.input(1)), m.f64(*beta), m.f64(1));
  for (int64_t k = 0; k < *n; ++k) {
    Value x = ctx.input(2 + k), g = ctx.input(2 + *n + k),
          v = ctx.input(2 + 2 * *n + k);
    Value a = m.splat(m.f64(*alpha), x);
    Value gReg = m.add(m.mul(m.splat(m.f64(*norm), x), x), g);
    Value vNew = m.add(m.mul(a, v), m.mul(m.splat(betaAdjusted, x), gReg));
    Value step = *mode == "standard" ? vNew : m.add(gReg, m.mul(a, vNew));
    setIfUsed(ctx, k, m.sub(x, m.mul(m.splat(lr, x), step)));
    setIfUsed(ctx, *n + k, vNew);
  }
  return success();
}

LogicalResult convertAdam(NodeContext &ctx) {
  FailureOr<float> alpha = ctx.floatAttr("alpha", 0.9f);
  FailureOr<float> beta = ctx.floatAttr("beta", 0.999f);
  FailureOr<float> epsilon = ctx.floatAttr("epsilon", 1e-6f);
  FailureOr<float> norm = ctx.floatAttr("norm_coefficient", 0.0f);
  FailureOr<float> normPost = ctx.floatAttr("norm_coefficient_post", 0.0f);
  FailureOr<int64_t> n = optimizerArity(ctx, 4);
  if (failed(alpha) || failed(beta) || failed(epsilon) || failed(norm) ||
      failed(normPost) || failed(n))
    return failure();
  StepMath m{ctx.builder(), ctx.loc()};
  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  Value lr = m.scalar(ctx.input(0)), t = m.scalar(ctx.input(1));
  // R_adjusted = T > 0 ? R * sqrt(1 - beta^T) / (1 - alpha^T) : R
  auto pow = [&](double base) {
    return math::PowFOp::create(b, loc, m.f64(base), t).getResult();
  };
  Value adjusted = m.div(m.mul(lr, math::SqrtOp::create(b, loc, m.sub(m.f64(1), pow(*beta)))),
                         m.sub(m.f64(1), pow(*alpha)));
  Value rAdjusted = m.ifPositive(t, adjusted, lr);
  for (int64_t k = 0; k < *n; ++k) {
    Value x = ctx.input(2 + k), g = ctx.input(2 + *n + k),
          v = ctx.input(2 + 2 * *n + k), h = ctx.input(2 + 3 * *n + k);
    auto c = [&](double v) { return m.splat(m.f64(v), x); };
    Value gReg = m.add(m.mul(c(*norm), x), g);
    Value vNew = m.add(m.mul(c(*alpha), v), m.mul(c(1.0 - *alpha), gReg));
    Value hNew = m.add(m.mul(c(*beta), h), m.mul(c(1.0 - *beta), m.mul(gReg, gReg)));
    Value hSqrt = m.add(m.sqrt(hNew), c(*epsilon));
    Value xNew = m.sub(x, m.mul(m.splat(rAdjusted, x), m.div(vNew, hSqrt)));
    setIfUsed(ctx, k, m.mul(c(1.0 - *normPost), xNew));
    setIfUsed(ctx, *n + k, vNew);
    setIfUsed(ctx, 2 * *n + k, hNew);
  }
  return success();
}

} // namespace

const ConverterMap &mlir::tessel::onnx_import::getTrainingConverters() {
  static const ConverterMap map = [] {
    ConverterMap m;
    m["Adagrad"] = convertAdagrad;
    m["Momentum"] = convertMomentum;
    m["Adam"] = convertAdam;
    return m;
  }();
  return map;
}
