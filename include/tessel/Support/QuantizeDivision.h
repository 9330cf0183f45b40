//===- QuantizeDivision.h - Quantizing without a division -------*- C++ -*-===//
//
// Quantization divides: q = clamp(roundeven(y / s) + zp, qmin, qmax). A
// vector division costs many times a multiplication, and in the int8
// kernels' epilogue it was a sixth of MobileNetV2's time. Multiplying by
// the reciprocal instead is not the same function in general, but for one
// constant s it may be: only the y whose quotient lies within a few ulps
// of a rounding boundary (a half-integer between the saturation limits)
// can round differently, and those are few enough to try them all. This
// file decides, for one (s, zp, qmin, qmax, clamp), which cheaper sequence
// gives the division's result for every f32 y, NaN and infinities
// included, and with which clamp bounds.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_SUPPORT_QUANTIZEDIVISION_H
#define TESSEL_SUPPORT_QUANTIZEDIVISION_H

namespace mlir::tessel {

enum class QuantizeDivision {
  /// y / s.
  Divide,
  /// y * r, r = 1/s rounded to f32.
  Reciprocal,
  /// q1 = y * r; e = fma(-q1, s, y); q = fma(e, r, q1): the product
  /// corrected by its exact residual.
  CorrectedReciprocal,
};

struct QuantizeDivisionPlan {
  QuantizeDivision division = QuantizeDivision::Divide;
  /// The clamp of y before the division: the given bounds, narrowed to
  /// where the result saturates anyway (so an infinite or huge y never
  /// reaches the reciprocal sequences, whose residual would be NaN).
  float lo, hi;
};

/// The cheapest sequence that gives, for every f32 y,
///   clamp(roundeven(clamp(y, lo, hi) / s) + zp, qmin, qmax)
/// (f32 operations, min/max keeping NaN as the kernels' clamps do), proven
/// by evaluating every y that could round differently. Divide, with the
/// bounds unchanged, when none is proven.
QuantizeDivisionPlan planQuantizeDivision(float s, float zp, float qmin,
                                          float qmax, float lo, float hi);

/// The quantized value by a plan (what the kernels compute), before the
/// 8-bit conversion: for tests and the proof itself.
float quantizeByPlan(const QuantizeDivisionPlan &plan, float y, float s,
                     float zp, float qmin, float qmax);

} // namespace mlir::tessel

#endif // TESSEL_SUPPORT_QUANTIZEDIVISION_H
