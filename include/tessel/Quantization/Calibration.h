//===- Calibration.h - activation ranges from observed values ---*- C++ -*-===//
//
// How static quantization turns the values an activation takes on the
// calibration samples into the range it is quantized over
// (`--calibration-method`), the same three methods as
// `tessel.quantize_onnx` (docs/quantization.md#calibration).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_QUANTIZATION_CALIBRATION_H
#define TESSEL_QUANTIZATION_CALIBRATION_H

#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

namespace mlir::tessel {

enum class CalibrationMethod {
  MinMax,     ///< the observed minimum and maximum
  Percentile, ///< the central `percentile` % of values (ignores outliers)
  Entropy,    ///< the clipping threshold of least KL divergence (TensorRT)
};

/// The central % of values --calibration-method=percentile keeps: in
/// [50, 100] (below 50 the low bound would pass the high one).
inline bool isValidCalibrationPercentile(double p) { return p >= 50.0 && p <= 100.0; }

/// Parses minmax|percentile|entropy.
std::optional<CalibrationMethod> parseCalibrationMethod(llvm::StringRef name);
llvm::StringRef calibrationMethodName(CalibrationMethod method);

/// Collects the values one activation takes over the calibration samples
/// and gives the range to quantize it over.
class RangeObserver {
public:
  RangeObserver(CalibrationMethod method, double percentile)
      : method(method), percentile(percentile) {}

  void observe(const float *data, size_t n);
  /// Whether a NaN or infinity was seen (no range is meaningful then).
  bool sawNonFinite() const { return nonFinite; }
  size_t count() const { return seen; }
  /// [lo, hi]; requires count() > 0 and !sawNonFinite(). May reorder the
  /// values kept.
  std::pair<double, double> range();

private:
  CalibrationMethod method;
  double percentile;
  size_t seen = 0;
  bool nonFinite = false;
  double lo = 0.0, hi = 0.0;
  std::vector<float> values; // kept for percentile and entropy only
};

/// Entropy calibration's search, exposed for tests: the bin count t
/// (levels <= t <= hist.size()) minimizing KL(P || Q), P the histogram
/// clipped at t (the mass beyond added to its last bin), Q the same bins
/// quantized to `levels` levels.
size_t klThreshold(const std::vector<double> &hist, size_t levels = 128);

} // namespace mlir::tessel

#endif // TESSEL_QUANTIZATION_CALIBRATION_H
