//===- QuantizeWithoutDivision.cpp - quantize by a proven reciprocal ------===//
//
// A quantize left in a loop (what the int8 kernels' epilogues could not
// take: a GELU between a matmul and the next layer's quantize, a residual
// add, a layer norm's output) divides every element by the scale. A vector
// division costs many multiplications; for one constant scale the
// reciprocal (or the reciprocal corrected by its exact residual) gives
// the same result for every f32 input, which tessel/Support/
// QuantizeDivision.h decides by trying every input that could round
// differently. The rewrite is the kernels' own: the input clamped to where
// the result saturates anyway, then the cheaper quotient.
//
//===----------------------------------------------------------------------===//
#include "tessel/Dialect/Tessel/Transforms/Passes.h"
#include "tessel/Support/QuantizeDivision.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>
#include <limits>
#include <optional>

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELQUANTIZEWITHOUTDIVISION
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {

/// The f32 constant `v` is, if it is one (a scalar or a splat).
std::optional<float> constantF32(Value v) {
  FloatAttr f;
  if (matchPattern(v, m_Constant(&f)) && f.getType().isF32())
    return float(f.getValueAsDouble());
  DenseFPElementsAttr d;
  if (matchPattern(v, m_Constant(&d)) && d.isSplat() &&
      d.getElementType().isF32())
    return d.getSplatValue<float>();
  return std::nullopt;
}

/// The single user of `v`, or null.
Operation *onlyUser(Value v) {
  return v.hasOneUse() ? *v.getUsers().begin() : nullptr;
}

/// `v`'s other operand of the binary `op`, as a constant.
std::optional<float> otherConstant(Operation *op, Value v) {
  if (op->getNumOperands() != 2)
    return std::nullopt;
  return constantF32(op->getOperand(0) == v ? op->getOperand(1)
                                            : op->getOperand(0));
}

/// The quantize `div` starts, if it is one: y / s, roundeven, + zp (may be
/// absent), then a minimumf and a maximumf by constants (either order),
/// every intermediate used once, so nothing but the clamped value sees the
/// quotient.
struct Quantize {
  float s, zp = 0.0f, qmin, qmax;
};

std::optional<Quantize> matchQuantize(arith::DivFOp div) {
  std::optional<float> s = constantF32(div.getRhs());
  if (!s || !div.getType().isF32())
    return std::nullopt;
  Quantize q;
  q.s = *s;
  auto round = dyn_cast_or_null<math::RoundEvenOp>(onlyUser(div));
  if (!round)
    return std::nullopt;
  Value v = round;
  if (auto add = dyn_cast_or_null<arith::AddFOp>(onlyUser(v))) {
    std::optional<float> zp = otherConstant(add, v);
    if (!zp)
      return std::nullopt;
    q.zp = *zp;
    v = add;
  }
  std::optional<float> lo, hi;
  for (int i = 0; i < 2; ++i) {
    Operation *user = onlyUser(v);
    if (!user)
      return std::nullopt;
    if (isa<arith::MinimumFOp>(user) && !hi)
      hi = otherConstant(user, v);
    else if (isa<arith::MaximumFOp>(user) && !lo)
      lo = otherConstant(user, v);
    else
      return std::nullopt;
    if (!(i == 0 ? (hi || lo) : (hi && lo)))
      return std::nullopt;
    v = user->getResult(0);
  }
  q.qmin = *lo;
  q.qmax = *hi;
  return q;
}

struct TesselQuantizeWithoutDivisionPass
    : tessel::impl::TesselQuantizeWithoutDivisionBase<
          TesselQuantizeWithoutDivisionPass> {
  void runOnOperation() override {
    SmallVector<std::pair<arith::DivFOp, Quantize>> sites;
    getOperation()->walk([&](arith::DivFOp div) {
      if (std::optional<Quantize> q = matchQuantize(div))
        sites.push_back({div, *q});
    });
    const float inf = std::numeric_limits<float>::infinity();
    for (auto [div, q] : sites) {
      QuantizeDivisionPlan plan =
          planQuantizeDivision(q.s, q.zp, q.qmin, q.qmax, -inf, inf);
      if (plan.division == QuantizeDivision::Divide)
        continue;
      OpBuilder b(div);
      Location loc = div.getLoc();
      Type f32 = b.getF32Type();
      auto cst = [&](float x) {
        return arith::ConstantOp::create(b, loc, f32, b.getF32FloatAttr(x));
      };
      const bool corrected =
          plan.division == QuantizeDivision::CorrectedReciprocal;
      Value hi = cst(plan.hi), lo = cst(plan.lo), r = cst(1.0f / q.s);
      Value s = corrected ? cst(q.s) : Value();
      // The plan's clamp (min, then max: a NaN passes), then the quotient.
      Value y = arith::MinimumFOp::create(b, loc, div.getLhs(), hi);
      y = arith::MaximumFOp::create(b, loc, y, lo);
      Value quotient = arith::MulFOp::create(b, loc, y, r);
      if (corrected) {
        // e = fma(-q1, s, y), exact; q = fma(e, r, q1).
        Value negQ = arith::NegFOp::create(b, loc, quotient);
        Value e = math::FmaOp::create(b, loc, negQ, s, y);
        quotient = math::FmaOp::create(b, loc, e, r, quotient);
      }
      div.replaceAllUsesWith(quotient);
      div.erase();
    }
  }
};

} // namespace
