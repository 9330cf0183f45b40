//===- QuantizeDivision.cpp - Quantizing without a division ---------------===//
//
// The proof. Write Q(y) = clamp(roundeven(y / s) + zp, qmin, qmax), every
// step an f32 operation. Both reciprocal sequences compute a quotient within
// 2^-21 of y / s, relative (r = RN(1/s) is within 2^-24 of 1/s, each
// rounding adds at most 2^-24; the corrected one is better still), as long
// as nothing overflows or underflows, which bounding s and y rules out
// (underflow near zero only moves a quotient that rounds to 0 anyway).
// roundeven of two values can differ only if a half-integer lies between
// them, so a y can give a different result only if its exact quotient is
// within 2^-21 of a half-integer h: with a margin, the few f32 in
// [(h - |h| 2^-19) s, (h + |h| 2^-19) s]. Only the h between the saturation
// limits matter, a few hundred for 8-bit outputs; every such y is tried.
//
// Large or infinite y would break the reciprocal sequences (the residual of
// an infinite product is NaN), so y is first clamped to where the result
// saturates anyway: Q is monotone in y, so if Q(hi') is qmax, every y above
// hi' gives qmax too, clamped or not.
//
//===----------------------------------------------------------------------===//

#include "tessel/Support/QuantizeDivision.h"

#include <cmath>
#include <initializer_list>
#include <limits>

// Each line below is one f32 operation, as in the kernels: no contraction.
#pragma STDC FP_CONTRACT OFF
#ifdef __clang__
#pragma clang fp contract(off)
#endif

using namespace mlir::tessel;

namespace {

/// The kernels' clamp: min then max, a NaN passing through.
float clampKeepNaN(float y, float lo, float hi) {
  y = y > hi ? hi : y;
  return y < lo ? lo : y;
}

float quotient(QuantizeDivision division, float y, float s, float r) {
  switch (division) {
  case QuantizeDivision::Divide:
    return y / s;
  case QuantizeDivision::Reciprocal:
    return y * r;
  case QuantizeDivision::CorrectedReciprocal: {
    float q = y * r;
    float e = std::fma(-q, s, y);
    return std::fma(e, r, q);
  }
  }
  return y / s;
}

bool sameValue(float a, float b) {
  return (std::isnan(a) && std::isnan(b)) || a == b;
}

bool isInteger(float x) { return std::isfinite(x) && std::nearbyint(x) == x; }

/// Whether `plan` gives the division's result for every y (see the top).
bool proves(const QuantizeDivisionPlan &plan, float s, float zp, float qmin,
            float qmax, float lo, float hi) {
  QuantizeDivisionPlan exact{QuantizeDivision::Divide, lo, hi};
  auto same = [&](float y) {
    return sameValue(quantizeByPlan(plan, y, s, zp, qmin, qmax),
                     quantizeByPlan(exact, y, s, zp, qmin, qmax));
  };
  const float inf = std::numeric_limits<float>::infinity();
  const float big = std::numeric_limits<float>::max();
  // Saturation beyond the narrowed bounds, and the special values.
  if (plan.hi < hi &&
      quantizeByPlan(exact, plan.hi, s, zp, qmin, qmax) != qmax)
    return false;
  if (plan.lo > lo &&
      quantizeByPlan(exact, plan.lo, s, zp, qmin, qmax) != qmin)
    return false;
  for (float y : {-inf, -big, plan.lo, lo, -0.0f, 0.0f, hi, plan.hi, big,
                  inf, std::numeric_limits<float>::quiet_NaN()})
    if (!same(y))
      return false;
  // Every y near a rounding boundary that is not saturated on both sides.
  for (double k = double(qmin) - zp - 3; k <= double(qmax) - zp + 2; ++k) {
    const double h = k + 0.5, margin = std::fabs(h) * 0x1p-19;
    const double from = (h - margin) * s, to = (h + margin) * s;
    float y = std::nextafter(float(from), -inf);
    for (int guard = 0; double(y) <= to; ++guard) {
      if (guard > 4096 || !same(y))
        return false;
      y = std::nextafter(y, inf);
    }
  }
  return true;
}

} // namespace

float mlir::tessel::quantizeByPlan(const QuantizeDivisionPlan &plan, float y,
                                   float s, float zp, float qmin, float qmax) {
  const float r = 1.0f / s;
  y = clampKeepNaN(y, plan.lo, plan.hi);
  float q = quotient(plan.division, y, s, r);
  q = std::nearbyint(q); // half to even in the default rounding mode
  q = q + zp;
  return clampKeepNaN(q, qmin, qmax);
}

QuantizeDivisionPlan mlir::tessel::planQuantizeDivision(float s, float zp,
                                                        float qmin, float qmax,
                                                        float lo, float hi) {
  QuantizeDivisionPlan divide{QuantizeDivision::Divide, lo, hi};
  // Bounds that keep every quantity of the proof finite and normal, and the
  // number of boundaries small (8- and 16-bit outputs).
  if (!(s >= 0x1p-60f && s <= 0x1p60f) || !isInteger(zp) ||
      !isInteger(qmin) || !isInteger(qmax) || qmin > qmax ||
      std::fabs(qmax - zp) > 65536.0f || std::fabs(qmin - zp) > 65536.0f ||
      std::isnan(lo) || std::isnan(hi) || lo > hi)
    return divide;
  // Narrowed bounds: two steps past saturation (the result there is qmax or
  // qmin, which `proves` checks).
  float narrowLo = (qmin - zp - 2.0f) * s, narrowHi = (qmax - zp + 2.0f) * s;
  float newLo = lo > narrowLo ? lo : narrowLo;
  float newHi = hi < narrowHi ? hi : narrowHi;
  if (!(newLo <= newHi))
    return divide;
  for (QuantizeDivision division :
       {QuantizeDivision::Reciprocal, QuantizeDivision::CorrectedReciprocal}) {
    QuantizeDivisionPlan plan{division, newLo, newHi};
    if (proves(plan, s, zp, qmin, qmax, lo, hi))
      return plan;
  }
  return divide;
}
