//===- Recurrent.cpp - ONNX RNN, GRU and LSTM converters ------------------===//
//-------------------===//
//
// X * W^T + Wb for every step is one matmul up front; the steps are an
// scf.for over time, carrying the state and Y (each step's hidden state
// inserted at its position), whose body multiplies the previous hidden
// state by R^T and applies the cell's gate equations in TOSA. One body,
// not one per step: a 100-step, 2-layer GRU unrolled took tens of seconds
// to compile (one-shot bufferization and LLVM on 200 copies of the step),
// looped 0.3 s. Everything
// is computed in f32 (f16 inputs are widened, outputs narrowed).
//
// sequence_lens masks steps at or past each batch entry's length: the state
// is held and Y is zero there, as ONNX Runtime does. This also gives reverse
// directions the right start: steps run from T-1 down to 0 and the state
// stays initial until t = len - 1, the first valid step of the reversed
// sequence.
//
//===----------------------------------------------------------------------===//
#include "Common.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::tessel::onnx_import;

namespace {

enum class CellKind { RNN, GRU, LSTM };

/// Gate blocks per direction in W, R and B (RNN: i; GRU: z r h; LSTM: i o f c).
int64_t numGates(CellKind k) {
  return k == CellKind::RNN ? 1 : k == CellKind::GRU ? 3 : 4;
}

//===----------------------------------------------------------------------===//
// Activations
//===----------------------------------------------------------------------===//

enum class ActKind {
  Sigmoid,
  Tanh,
  Relu,
  HardSigmoid,
  Affine,
  LeakyRelu,
  ThresholdedRelu,
  ScaledTanh,
  Elu,
  Softsign,
  Softplus
};

struct Activation {
  ActKind kind;
  float alpha = 0.0f, beta = 0.0f;
};

/// An activation the RNN ops accept by name. NaN defaults mean the value
/// has no default (ScaledTanh: the experimental op had none) and must come
/// from activation_alpha / activation_beta.
struct ActInfo {
  StringRef name;
  ActKind kind;
  bool usesAlpha, usesBeta;
  float alpha, beta;
};

constexpr float kNoDefault = std::numeric_limits<float>::quiet_NaN();

// Defaults are those of the ONNX operators of the same name.
const ActInfo kActivations[] = {
    {"Sigmoid", ActKind::Sigmoid, false, false, 0, 0},
    {"Tanh", ActKind::Tanh, false, false, 0, 0},
    {"Relu", ActKind::Relu, false, false, 0, 0},
    {"HardSigmoid", ActKind::HardSigmoid, true, true, 0.2f, 0.5f},
    {"Affine", ActKind::Affine, true, true, 1.0f, 0.0f},
    {"LeakyRelu", ActKind::LeakyRelu, true, false, 0.01f, 0},
    {"ThresholdedRelu", ActKind::ThresholdedRelu, true, false, 1.0f, 0},
    {"ScaledTanh", ActKind::ScaledTanh, true, true, kNoDefault, kNoDefault},
    {"Elu", ActKind::Elu, true, false, 1.0f, 0},
    {"Softsign", ActKind::Softsign, false, false, 0, 0},
    {"Softplus", ActKind::Softplus, false, false, 0, 0},
};

/// The `activations` attribute (STRINGS), or `dflt` when absent. Read by
/// hand since NodeContext has no string-list accessor.
FailureOr<SmallVector<std::string>> activationNames(NodeContext &ctx,
                                                    ArrayRef<StringRef> dflt) {
  SmallVector<std::string> names;
  ctx.ignoreAttr("activations");
  for (const onnx::AttributeProto &a : ctx.node().attribute()) {
    if (a.name() != "activations")
      continue;
    if (a.type() != onnx::AttributeProto::STRINGS) {
      (void)ctx.attrError("activations", "must be a list of strings");
      return failure();
    }
    for (const std::string &s : a.strings())
      names.push_back(s);
    return names;
  }
  for (StringRef s : dflt)
    names.push_back(s.str());
  return names;
}

/// One activation per function slot per direction (f for RNN; f, g for GRU;
/// f, g, h for LSTM). activation_alpha / activation_beta are consumed in
/// order by the activations that take them (as ONNX Runtime does).
FailureOr<SmallVector<Activation>>
readActivations(NodeContext &ctx, CellKind kind, int64_t numDirections) {
  SmallVector<StringRef> dflt;
  if (kind == CellKind::RNN)
    dflt = {"Tanh"};
  else if (kind == CellKind::GRU)
    dflt = {"Sigmoid", "Tanh"};
  else
    dflt = {"Sigmoid", "Tanh", "Tanh"};
  auto names = activationNames(ctx, dflt);
  auto alphas = ctx.floatsAttr("activation_alpha", SmallVector<float>{});
  auto betas = ctx.floatsAttr("activation_beta", SmallVector<float>{});
  if (failed(names) || failed(alphas) || failed(betas))
    return failure();
  size_t perDir = dflt.size();
  // One direction's list serves both directions when bidirectional, as for
  // the defaults.
  if (names->size() == perDir && numDirections == 2)
    names->append(SmallVector<std::string>(*names));
  if (names->size() != perDir * numDirections) {
    (void)ctx.attrError("activations",
                        "has " + std::to_string(names->size()) +
                            " entries, expected " +
                            std::to_string(perDir * numDirections));
    return failure();
  }
  SmallVector<Activation> acts;
  size_t nextAlpha = 0, nextBeta = 0;
  for (const std::string &name : *names) {
    const ActInfo *info = llvm::find_if(kActivations, [&](const ActInfo &i) {
      return i.name.equals_insensitive(name);
    });
    if (info == std::end(kActivations)) {
      (void)ctx.attrError("activations", "names '" + name +
                                             "', which is not a supported "
                                             "RNN activation");
      return failure();
    }
    Activation act{info->kind, info->alpha, info->beta};
    if (info->usesAlpha && nextAlpha < alphas->size())
      act.alpha = (*alphas)[nextAlpha++];
    if (info->usesBeta && nextBeta < betas->size())
      act.beta = (*betas)[nextBeta++];
    if (std::isnan(act.alpha) || std::isnan(act.beta)) {
      (void)ctx.attrError("activations",
                          "uses " + name +
                              ", which has no default alpha/beta; give them "
                              "in activation_alpha / activation_beta");
      return failure();
    }
    acts.push_back(act);
  }
  return acts;
}

Value tosaScalarLike(NodeContext &ctx, Value x, double v) {
  return ctx.tosa().scalar(elemOf(x), v, typeOf(x).getRank());
}

Value selectIf(NodeContext &ctx, Value cond, Value a, Value b) {
  return tosa::SelectOp::create(ctx.builder(), ctx.loc(), a.getType(), cond, a,
                                b);
}

/// x > v (strict) or x >= v, elementwise, as i1.
Value compareScalar(NodeContext &ctx, Value x, double v, bool orEqual) {
  auto boolTy = withElementType(typeOf(x), ctx.builder().getI1Type());
  Value s = tosaScalarLike(ctx, x, v);
  if (orEqual)
    return tosa::GreaterEqualOp::create(ctx.builder(), ctx.loc(), boolTy, x, s);
  return tosa::GreaterOp::create(ctx.builder(), ctx.loc(), boolTy, x, s);
}

Value absOf(NodeContext &ctx, Value x) {
  return tosa::AbsOp::create(ctx.builder(), ctx.loc(), x.getType(), x);
}

Value applyActivation(NodeContext &ctx, const Activation &a, Value x) {
  tessel::TosaBuilder &tb = ctx.tosa();
  OpBuilder &b = ctx.builder();
  auto s = [&](double v) { return tosaScalarLike(ctx, x, v); };
  switch (a.kind) {
  case ActKind::Sigmoid:
    return tosa::SigmoidOp::create(b, ctx.loc(), x.getType(), x);
  case ActKind::Tanh:
    return tb.tanh(x);
  case ActKind::Relu:
    return clampF(ctx, x, 0.0, std::numeric_limits<float>::max());
  case ActKind::HardSigmoid:
    return clampF(ctx, tb.add(tb.mul(x, s(a.alpha)), s(a.beta)), 0.0, 1.0);
  case ActKind::Affine:
    return tb.add(tb.mul(x, s(a.alpha)), s(a.beta));
  case ActKind::LeakyRelu:
    return selectIf(ctx, compareScalar(ctx, x, 0.0, true), x,
                    tb.mul(x, s(a.alpha)));
  case ActKind::ThresholdedRelu:
    return selectIf(ctx, compareScalar(ctx, x, a.alpha, true), x,
                    splatConstant(ctx, typeOf(x), 0.0));
  case ActKind::ScaledTanh:
    return tb.mul(s(a.alpha), tb.tanh(tb.mul(x, s(a.beta))));
  case ActKind::Elu:
    return selectIf(ctx, compareScalar(ctx, x, 0.0, true), x,
                    tb.mul(tb.sub(tb.exp(x), s(1.0)), s(a.alpha)));
  case ActKind::Softsign:
    return arith::DivFOp::create(b, ctx.loc(), x,
                                 tb.add(absOf(ctx, x), s(1.0)));
  case ActKind::Softplus: {
    // log(1 + e^x) as max(x, 0) + log1p(e^-|x|), which cannot overflow.
    Value negAbs = tb.sub(s(0.0), absOf(ctx, x));
    Value l = math::Log1pOp::create(b, ctx.loc(), tb.exp(negAbs));
    return tb.add(tb.maximum(x, s(0.0)), l);
  }
  }
  llvm_unreachable("unknown activation");
}

//===----------------------------------------------------------------------===//
// Attributes and inputs
//===----------------------------------------------------------------------===//

struct CellAttrs {
  CellKind kind;
  int64_t hidden = 0;
  std::string direction;
  int64_t numDirections = 1;
  int64_t layout = 0;
  std::optional<float> clip;
  bool linearBeforeReset = false; // GRU
  bool inputForget = false;       // LSTM
  SmallVector<Activation> acts;   // per direction, then per function slot
};

FailureOr<CellAttrs> readAttrs(NodeContext &ctx, CellKind kind) {
  CellAttrs a;
  a.kind = kind;
  auto direction = ctx.stringAttr("direction", std::string("forward"));
  auto layout = ctx.intAttr("layout", 0);
  if (failed(direction) || failed(layout))
    return failure();
  a.direction = *direction;
  if (a.direction != "forward" && a.direction != "reverse" &&
      a.direction != "bidirectional") {
    (void)ctx.attrError("direction", "= '" + a.direction +
                                         "' is not forward, reverse or "
                                         "bidirectional");
    return failure();
  }
  a.numDirections = a.direction == "bidirectional" ? 2 : 1;
  if (*layout != 0 && *layout != 1) {
    (void)ctx.attrError("layout",
                        "= " + std::to_string(*layout) + " is not 0 or 1");
    return failure();
  }
  a.layout = *layout;
  if (ctx.hasAttr("hidden_size")) {
    auto hidden = ctx.intAttr("hidden_size");
    if (failed(hidden))
      return failure();
    if (*hidden < 1) {
      (void)ctx.attrError("hidden_size", "must be positive");
      return failure();
    }
    a.hidden = *hidden;
  }
  if (ctx.hasAttr("clip")) {
    auto clip = ctx.floatAttr("clip");
    if (failed(clip))
      return failure();
    if (!(*clip > 0.0f)) {
      (void)ctx.attrError("clip", "must be positive");
      return failure();
    }
    a.clip = *clip;
  }
  if (kind == CellKind::GRU) {
    auto lbr = ctx.intAttr("linear_before_reset", 0);
    if (failed(lbr))
      return failure();
    a.linearBeforeReset = *lbr != 0;
  }
  if (kind == CellKind::LSTM) {
    auto inputForget = ctx.intAttr("input_forget", 0);
    if (failed(inputForget))
      return failure();
    a.inputForget = *inputForget != 0;
  }
  // Opset 1's output_sequence only said whether Y is produced; which outputs
  // the node names decides that here.
  ctx.ignoreAttr("output_sequence");
  auto acts = readActivations(ctx, kind, a.numDirections);
  if (failed(acts))
    return failure();
  a.acts = std::move(*acts);
  return a;
}

/// The node's inputs in layout 0, widened to f32.
struct CellInputs {
  Value x;       // [T, B, I]
  Value w, r;    // [D, G*H, I], [D, G*H, H]
  Value bias;    // [D, 2*G*H] or null
  Value h0, c0;  // [D, B, H] or null
  Value p;       // [D, 3*H] or null
  Value seqLens; // [B, 1] i32, or null when every sequence is full length
  int64_t steps = 0, batch = 0, inputSize = 0;
};

LogicalResult checkShape(NodeContext &ctx, StringRef what, Value v,
                         ArrayRef<int64_t> want) {
  if (typeOf(v).getShape() == want)
    return success();
  ctx.emitError() << what << " has shape [" << typeOf(v).getShape()
                  << "], expected [" << want << "]";
  return failure();
}

/// sequence_lens as a [B, 1] mask source, or null when it is absent or a
/// constant that says every sequence has all T steps.
FailureOr<Value> readSequenceLens(NodeContext &ctx, int64_t steps,
                                  int64_t batch) {
  if (!ctx.hasInput(4))
    return Value();
  Value lens = ctx.input(4);
  if (!elemOf(lens).isInteger(32) || typeOf(lens).getRank() != 1 ||
      typeOf(lens).getDimSize(0) != batch)
    return ctx.emitError() << "sequence_lens must be int32 of shape [" << batch
                           << "]";
  if (DenseElementsAttr c = ctx.constantInput(4)) {
    SmallVector<int64_t> v = toInts(c);
    if (llvm::any_of(v, [&](int64_t n) { return n < 0 || n > steps; })) {
      ctx.emitError() << "sequence_lens has values outside [0, " << steps
                      << "]";
      return failure();
    }
    if (llvm::all_of(v, [&](int64_t n) { return n == steps; }))
      return Value();
  }
  return ctx.tosa().reshape(lens, {batch, 1});
}

FailureOr<CellInputs> readInputs(NodeContext &ctx, CellAttrs &a) {
  tessel::TosaBuilder &tb = ctx.tosa();
  CellInputs in;
  for (unsigned i : {0u, 1u, 2u})
    if (!ctx.hasInput(i))
      return ctx.emitError() << "requires inputs X, W and R";
  Type et = elemOf(ctx.input(0));
  if (!et.isF32() && !et.isF16())
    return ctx.unsupported("element type other than f32 and f16");
  auto prep = [&](unsigned i) {
    return ctx.hasInput(i) ? tb.widen(ctx.input(i)) : Value();
  };
  in.x = prep(0);
  if (typeOf(in.x).getRank() != 3)
    return ctx.emitError() << "X must have rank 3";
  if (a.layout == 1)
    in.x = tb.transpose(in.x, {1, 0, 2});
  ArrayRef<int64_t> xs = typeOf(in.x).getShape();
  in.steps = xs[0];
  in.batch = xs[1];
  in.inputSize = xs[2];
  in.w = prep(1);
  in.r = prep(2);
  if (typeOf(in.r).getRank() != 3)
    return ctx.emitError() << "R must have rank 3";
  int64_t hidden = typeOf(in.r).getDimSize(2);
  if (a.hidden == 0)
    a.hidden = hidden; // hidden_size is optional: R's shape says it
  int64_t d = a.numDirections, gh = numGates(a.kind) * a.hidden;
  if (failed(checkShape(ctx, "W", in.w, {d, gh, in.inputSize})) ||
      failed(checkShape(ctx, "R", in.r, {d, gh, a.hidden})))
    return failure();
  in.bias = prep(3);
  if (in.bias && failed(checkShape(ctx, "B", in.bias, {d, 2 * gh})))
    return failure();
  auto state = [&](unsigned i, StringRef name) -> FailureOr<Value> {
    Value v = prep(i);
    if (!v)
      return v;
    if (a.layout == 1)
      v = tb.transpose(v, {1, 0, 2});
    if (failed(checkShape(ctx, name, v, {d, in.batch, a.hidden})))
      return failure();
    return v;
  };
  auto h0 = state(5, "initial_h");
  auto c0 = a.kind == CellKind::LSTM ? state(6, "initial_c")
                                     : FailureOr<Value>(Value());
  auto lens = readSequenceLens(ctx, in.steps, in.batch);
  if (failed(h0) || failed(c0) || failed(lens))
    return failure();
  in.h0 = *h0;
  in.c0 = *c0;
  in.seqLens = *lens;
  if (a.kind == CellKind::LSTM) {
    in.p = prep(7);
    if (in.p && failed(checkShape(ctx, "P", in.p, {d, 3 * a.hidden})))
      return failure();
  }
  return in;
}

//===----------------------------------------------------------------------===//
// One direction
//===----------------------------------------------------------------------===//

/// [M, K] x [1, K, N] -> [M, N].
Value matmul2D(NodeContext &ctx, Value a, Value b3) {
  tessel::TosaBuilder &tb = ctx.tosa();
  int64_t m = typeOf(a).getDimSize(0), k = typeOf(a).getDimSize(1),
          n = typeOf(b3).getDimSize(2);
  Type f32 = ctx.builder().getF32Type();
  auto outTy = RankedTensorType::get({1, m, n}, f32);
  Value y = tosa::MatMulOp::create(ctx.builder(), ctx.loc(), outTy,
                                   tb.reshape(a, {1, m, k}), b3,
                                   tb.zeroPoint(f32), tb.zeroPoint(f32));
  return tb.reshape(y, {m, n});
}

/// Columns [k * h, (k + n) * h) of a [rows, *] matrix: gate blocks k..k+n-1.
Value gateCols(NodeContext &ctx, Value v, int64_t k, int64_t h, int64_t n = 1) {
  return ctx.tosa().slice(v, {0, k * h}, {typeOf(v).getDimSize(0), n * h});
}

/// Direction d's [rows, cols] block of a [D, rows, cols] tensor.
Value dirSlice(NodeContext &ctx, Value v, int64_t d) {
  ArrayRef<int64_t> s = typeOf(v).getShape();
  return ctx.tosa().reshape(ctx.tosa().slice(v, {d, 0, 0}, {1, s[1], s[2]}),
                            {s[1], s[2]});
}

/// One direction's weights, arranged for the step equations.
struct DirWeights {
  Value xw;                 // [T*B, G*H]: X * W^T + Wb for every step
  Value rT;                 // [G*H, H]^T as [1, H, G*H]
  Value rb;                 // [1, G*H] or null
  Value p;                  // [1, 3*H] or null (i, o, f)
  ArrayRef<Activation> act; // f (, g (, h))
};

/// W/R/B/P of direction d; the input projection of all steps at once.
DirWeights dirWeights(NodeContext &ctx, const CellAttrs &a,
                      const CellInputs &in, int64_t d) {
  tessel::TosaBuilder &tb = ctx.tosa();
  int64_t gh = numGates(a.kind) * a.hidden;
  int64_t perDir = a.acts.size() / a.numDirections;
  DirWeights w;
  w.act = ArrayRef<Activation>(a.acts).slice(d * perDir, perDir);
  Value wT = tb.reshape(tb.transpose(dirSlice(ctx, in.w, d), {1, 0}),
                        {1, in.inputSize, gh});
  w.xw =
      matmul2D(ctx, tb.reshape(in.x, {in.steps * in.batch, in.inputSize}), wT);
  w.rT = tb.reshape(tb.transpose(dirSlice(ctx, in.r, d), {1, 0}),
                    {1, a.hidden, gh});
  if (in.bias) {
    Value b = tb.slice(in.bias, {d, 0}, {1, 2 * gh});
    w.xw = tb.add(w.xw, tb.slice(b, {0, 0}, {1, gh}));
    w.rb = tb.slice(b, {0, gh}, {1, gh});
  }
  if (in.p)
    w.p = tb.slice(in.p, {d, 0}, {1, 3 * a.hidden});
  return w;
}

/// State carried between steps.
struct CellState {
  Value h, c; // [B, H]; c only for LSTM
};

Value clipped(NodeContext &ctx, const CellAttrs &a, Value x) {
  return a.clip ? clampF(ctx, x, -*a.clip, *a.clip) : x;
}

/// f(clip(x)): clip bounds every activation's input.
Value activate(NodeContext &ctx, const CellAttrs &a, const Activation &act,
               Value x) {
  return applyActivation(ctx, act, clipped(ctx, a, x));
}

/// h * R^T + Rb for gate blocks [k, k + n).
Value recurrent(NodeContext &ctx, const CellAttrs &a, const DirWeights &w,
                Value h, int64_t k, int64_t n) {
  tessel::TosaBuilder &tb = ctx.tosa();
  int64_t hs = a.hidden;
  Value rT = tb.slice(w.rT, {0, 0, k * hs}, {1, hs, n * hs});
  Value y = matmul2D(ctx, h, rT);
  return w.rb ? tb.add(y, gateCols(ctx, w.rb, k, hs, n)) : y;
}

/// Ht = f(Xt*(Wi^T) + Ht-1*(Ri^T) + Wbi + Rbi)
CellState rnnStep(NodeContext &ctx, const CellAttrs &a, const DirWeights &w,
                  Value xt, CellState s) {
  Value pre = ctx.tosa().add(xt, recurrent(ctx, a, w, s.h, 0, 1));
  return {activate(ctx, a, w.act[0], pre), {}};
}

/// zt = f(Xz + Ht-1 Rz^T + Rbz), rt likewise; ht = g(Xh + (rt . Ht-1) Rh^T
/// + Rbh), or g(Xh + rt . (Ht-1 Rh^T + Rbh)) with linear_before_reset;
/// Ht = (1 - zt) . ht + zt . Ht-1.
CellState gruStep(NodeContext &ctx, const CellAttrs &a, const DirWeights &w,
                  Value xt, CellState s) {
  tessel::TosaBuilder &tb = ctx.tosa();
  int64_t hs = a.hidden;
  Value zr =
      tb.add(gateCols(ctx, xt, 0, hs, 2), recurrent(ctx, a, w, s.h, 0, 2));
  Value z = activate(ctx, a, w.act[0], gateCols(ctx, zr, 0, hs));
  Value r = activate(ctx, a, w.act[0], gateCols(ctx, zr, 1, hs));
  Value rec = a.linearBeforeReset ? tb.mul(r, recurrent(ctx, a, w, s.h, 2, 1))
                                  : recurrent(ctx, a, w, tb.mul(r, s.h), 2, 1);
  Value hh = activate(ctx, a, w.act[1], tb.add(gateCols(ctx, xt, 2, hs), rec));
  Value oneMinusZ = tb.sub(tosaScalarLike(ctx, z, 1.0), z);
  return {tb.add(tb.mul(oneMinusZ, hh), tb.mul(z, s.h)), {}};
}

/// it = f(Xi + Ht-1 Ri^T + Pi . Ct-1 + Rbi), ft likewise (or 1 - it with
/// input_forget), ct = g(Xc + Ht-1 Rc^T + Rbc), Ct = ft . Ct-1 + it . ct,
/// ot = f(Xo + Ht-1 Ro^T + Po . Ct + Rbo), Ht = ot . h(Ct).
CellState lstmStep(NodeContext &ctx, const CellAttrs &a, const DirWeights &w,
                   Value xt, CellState s) {
  tessel::TosaBuilder &tb = ctx.tosa();
  int64_t hs = a.hidden;
  Value g = tb.add(xt, recurrent(ctx, a, w, s.h, 0, 4)); // i o f c
  auto peep = [&](Value pre, int64_t k, Value c) {
    return w.p ? tb.add(pre, tb.mul(gateCols(ctx, w.p, k, hs), c)) : pre;
  };
  Value i = activate(ctx, a, w.act[0], peep(gateCols(ctx, g, 0, hs), 0, s.c));
  Value f = a.inputForget ? tb.sub(tosaScalarLike(ctx, i, 1.0), i)
                          : activate(ctx, a, w.act[0],
                                     peep(gateCols(ctx, g, 2, hs), 2, s.c));
  Value cc = activate(ctx, a, w.act[1], gateCols(ctx, g, 3, hs));
  Value c = tb.add(tb.mul(f, s.c), tb.mul(i, cc));
  Value o = activate(ctx, a, w.act[0], peep(gateCols(ctx, g, 1, hs), 1, c));
  return {tb.mul(o, activate(ctx, a, w.act[2], c)), c};
}

/// A direction's outputs: Y ([T, B, H], by time position) and final state.
struct DirResult {
  Value y;
  CellState last;
};

/// Initial state of direction d: the given one, or zeros.
Value initialState(NodeContext &ctx, Value given, int64_t d, int64_t batch,
                   int64_t hidden) {
  if (given)
    return dirSlice(ctx, given, d);
  auto ty = RankedTensorType::get({batch, hidden}, ctx.builder().getF32Type());
  return splatConstant(ctx, ty, 0.0);
}

/// One step of the cell at time t (an index) from state s: the new state,
/// and the step's output.
std::pair<CellState, Value> step(NodeContext &ctx, const CellAttrs &a,
                                 const CellInputs &in, const DirWeights &w,
                                 Value t, CellState s, Value zeros) {
  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  int64_t gh = numGates(a.kind) * a.hidden;
  Value off = arith::MulIOp::create(
      b, loc, t, arith::ConstantIndexOp::create(b, loc, in.batch));
  Value xt = tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get({in.batch, gh}, b.getF32Type()), w.xw,
      ArrayRef<OpFoldResult>{off, b.getIndexAttr(0)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(in.batch), b.getIndexAttr(gh)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
  CellState next = a.kind == CellKind::RNN   ? rnnStep(ctx, a, w, xt, s)
                   : a.kind == CellKind::GRU ? gruStep(ctx, a, w, xt, s)
                                             : lstmStep(ctx, a, w, xt, s);
  if (!in.seqLens)
    return {next, next.h};
  // Step t is valid for batch entries with t < sequence_lens: the state is
  // held and Y is zero elsewhere.
  auto i32 = b.getI32Type();
  Value ti = arith::IndexCastOp::create(b, loc, i32, t);
  Value tT = tensor::FromElementsOp::create(
      b, loc, RankedTensorType::get({1, 1}, i32), ValueRange{ti});
  auto maskTy = RankedTensorType::get({in.batch, 1}, b.getI1Type());
  Value valid = tosa::GreaterOp::create(b, loc, maskTy, in.seqLens, tT);
  CellState held{selectIf(ctx, valid, next.h, s.h),
                 s.c ? selectIf(ctx, valid, next.c, s.c) : Value()};
  return {held, selectIf(ctx, valid, next.h, zeros)};
}

/// Direction d over all steps: an scf.for from the first step in its
/// direction (T - 1 down for reverse), carrying h (, c) and Y.
DirResult runDirection(NodeContext &ctx, const CellAttrs &a,
                       const CellInputs &in, int64_t d) {
  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  DirWeights w = dirWeights(ctx, a, in, d);
  bool reverse =
      a.direction == "reverse" || (a.direction == "bidirectional" && d == 1);
  Value h0 = initialState(ctx, in.h0, d, in.batch, a.hidden);
  Value c0 = a.kind == CellKind::LSTM
                 ? initialState(ctx, in.c0, d, in.batch, a.hidden)
                 : Value();
  Value zeros =
      in.seqLens ? initialState(ctx, Value(), d, in.batch, a.hidden) : Value();
  Value y0 = tensor::EmptyOp::create(
      b, loc, ArrayRef<int64_t>{in.steps, in.batch, a.hidden}, b.getF32Type());
  SmallVector<Value> inits = {h0, y0};
  if (c0)
    inits.push_back(c0);
  auto idx = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  auto loop = scf::ForOp::create(b, loc, idx(0), idx(in.steps), idx(1), inits);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value n = loop.getInductionVar();
    Value t = reverse ? arith::SubIOp::create(b, loc, idx(in.steps - 1), n)
                      : n;
    ValueRange args = loop.getRegionIterArgs();
    CellState s{args[0], c0 ? args[2] : Value()};
    auto [next, yt] = step(ctx, a, in, w, t, s, zeros);
    OpFoldResult one = b.getIndexAttr(1), zero = b.getIndexAttr(0);
    Value y = tensor::InsertSliceOp::create(
        b, loc, yt, args[1], ArrayRef<OpFoldResult>{t, zero, zero},
        ArrayRef<OpFoldResult>{one, b.getIndexAttr(in.batch),
                               b.getIndexAttr(a.hidden)},
        ArrayRef<OpFoldResult>{one, one, one});
    SmallVector<Value> yields = {next.h, y};
    if (c0)
      yields.push_back(next.c);
    scf::YieldOp::create(b, loc, yields);
  }
  return {loop.getResult(1),
          {loop.getResult(0), c0 ? loop.getResult(2) : Value()}};
}

//===----------------------------------------------------------------------===//
// Outputs
//===----------------------------------------------------------------------===//

Value concatOrSingle(NodeContext &ctx, ArrayRef<Value> xs, int64_t axis) {
  return xs.size() == 1 ? xs.front() : ctx.tosa().concat(xs, axis);
}

/// Y: [T, D, B, H] (layout 1: [B, T, D, H]).
Value assembleY(NodeContext &ctx, const CellAttrs &a, const CellInputs &in,
                ArrayRef<DirResult> dirs) {
  tessel::TosaBuilder &tb = ctx.tosa();
  SmallVector<Value> perDir;
  for (const DirResult &r : dirs)
    perDir.push_back(tb.reshape(r.y, {in.steps, 1, in.batch, a.hidden}));
  Value y = concatOrSingle(ctx, perDir, 1);
  return a.layout == 1 ? tb.transpose(y, {2, 0, 1, 3}) : y;
}

/// Y_h / Y_c: [D, B, H] (layout 1: [B, D, H]).
Value assembleState(NodeContext &ctx, const CellAttrs &a, const CellInputs &in,
                    ArrayRef<Value> finals) {
  tessel::TosaBuilder &tb = ctx.tosa();
  SmallVector<Value> parts;
  for (Value v : finals)
    parts.push_back(tb.reshape(v, {1, in.batch, a.hidden}));
  Value y = concatOrSingle(ctx, parts, 0);
  return a.layout == 1 ? tb.transpose(y, {1, 0, 2}) : y;
}

LogicalResult convertCell(NodeContext &ctx, CellKind kind) {
  auto attrs = readAttrs(ctx, kind);
  if (failed(attrs))
    return failure();
  auto in = readInputs(ctx, *attrs);
  if (failed(in))
    return failure();
  SmallVector<DirResult> dirs;
  for (int64_t d = 0; d < attrs->numDirections; ++d)
    dirs.push_back(runDirection(ctx, *attrs, *in, d));
  Type et = elemOf(ctx.input(0));
  tessel::TosaBuilder &tb = ctx.tosa();
  if (ctx.hasOutput(0))
    ctx.setOutput(0, tb.narrow(assembleY(ctx, *attrs, *in, dirs), et));
  SmallVector<Value> hs, cs;
  for (const DirResult &r : dirs) {
    hs.push_back(r.last.h);
    cs.push_back(r.last.c);
  }
  if (ctx.hasOutput(1))
    ctx.setOutput(1, tb.narrow(assembleState(ctx, *attrs, *in, hs), et));
  if (kind == CellKind::LSTM && ctx.hasOutput(2))
    ctx.setOutput(2, tb.narrow(assembleState(ctx, *attrs, *in, cs), et));
  return success();
}

LogicalResult convertRNN(NodeContext &ctx) {
  return convertCell(ctx, CellKind::RNN);
}
LogicalResult convertGRU(NodeContext &ctx) {
  return convertCell(ctx, CellKind::GRU);
}
LogicalResult convertLSTM(NodeContext &ctx) {
  return convertCell(ctx, CellKind::LSTM);
}

} // namespace

void mlir::tessel::onnx_import::registerRecurrentConverters(ConverterMap &map) {
  map["RNN"] = convertRNN;
  map["GRU"] = convertGRU;
  map["LSTM"] = convertLSTM;
}
