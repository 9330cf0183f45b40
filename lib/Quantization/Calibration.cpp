//===- Calibration.cpp - activation ranges from observed values -----------===//
//
// The numerics follow python/tessel/quantize.py (and so numpy's percentile
// and TensorRT's entropy calibrator) so that the compiler and
// tessel.quantize_onnx quantize a model alike.
//
//===----------------------------------------------------------------------===//
#include "tessel/Quantization/Calibration.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir::tessel;

namespace {
// Entropy calibration: histogram resolution (at most; fewer bins for small
// calibration sets, whose sparse tails would otherwise look clippable).
constexpr size_t kEntropyBins = 2048;
constexpr size_t kEntropyValuesPerBin = 64;
constexpr size_t kEntropyLevels = 128;

/// numpy.percentile(sorted, q) with linear interpolation.
double percentileOf(std::vector<float> &v, double q) {
  double pos = std::clamp(q / 100.0, 0.0, 1.0) * double(v.size() - 1);
  size_t below = size_t(std::floor(pos));
  size_t above = std::min(below + 1, v.size() - 1);
  std::nth_element(v.begin(), v.begin() + below, v.end());
  double a = v[below];
  double b = a;
  if (above != below)
    b = *std::min_element(v.begin() + below + 1, v.end());
  // numpy's _lerp: from the nearer end, so both ends are exact.
  double t = pos - double(below);
  return t >= 0.5 ? b - (b - a) * (1.0 - t) : a + (b - a) * t;
}

std::pair<double, double> entropyRange(const std::vector<float> &v, double lo,
                                       double hi) {
  bool oneSided = lo >= 0.0;
  double top = oneSided ? hi : std::max(-lo, hi);
  if (top == 0.0)
    return {lo, hi};
  size_t bins = std::clamp(v.size() / kEntropyValuesPerBin, 2 * kEntropyLevels,
                           kEntropyBins);
  // Bins as numpy.histogram makes them: edges linspace(0, top, bins + 1),
  // each value's bin computed then corrected against its edges, the last
  // bin closed.
  std::vector<double> edges(bins + 1);
  const double step = top / double(bins);
  for (size_t i = 0; i < bins; ++i)
    edges[i] = double(i) * step;
  edges[bins] = top;
  std::vector<double> hist(bins, 0.0);
  for (float x : v) {
    double m = oneSided ? double(x) : std::fabs(double(x));
    size_t b = std::min(size_t(m * (double(bins) / top)), bins - 1);
    if (b > 0 && m < edges[b])
      --b;
    else if (b + 1 < bins && m >= edges[b + 1])
      ++b;
    hist[b] += 1.0;
  }
  double t = edges[klThreshold(hist, kEntropyLevels)];
  if (oneSided)
    return {0.0, t};
  return {std::max(lo, -t), std::min(hi, t)};
}
} // namespace

std::optional<CalibrationMethod>
mlir::tessel::parseCalibrationMethod(llvm::StringRef name) {
  if (name == "minmax")
    return CalibrationMethod::MinMax;
  if (name == "percentile")
    return CalibrationMethod::Percentile;
  if (name == "entropy")
    return CalibrationMethod::Entropy;
  return std::nullopt;
}

llvm::StringRef mlir::tessel::calibrationMethodName(CalibrationMethod method) {
  switch (method) {
  case CalibrationMethod::MinMax: return "minmax";
  case CalibrationMethod::Percentile: return "percentile";
  case CalibrationMethod::Entropy: return "entropy";
  }
  return "minmax";
}

void RangeObserver::observe(const float *data, size_t n) {
  const bool keep = method != CalibrationMethod::MinMax;
  for (size_t i = 0; i < n; ++i) {
    float x = data[i];
    if (!std::isfinite(x)) {
      nonFinite = true;
      continue;
    }
    if (seen == 0) {
      lo = hi = x;
    } else {
      lo = std::min(lo, double(x));
      hi = std::max(hi, double(x));
    }
    ++seen;
    if (keep)
      values.push_back(x);
  }
}

std::pair<double, double> RangeObserver::range() {
  switch (method) {
  case CalibrationMethod::MinMax:
    return {lo, hi};
  case CalibrationMethod::Percentile: {
    // Reorders `values` in place (no copy of what may be every activation
    // of every sample).
    double l = percentileOf(values, 100.0 - percentile);
    double h = percentileOf(values, percentile);
    return {std::min(l, h), std::max(l, h)};
  }
  case CalibrationMethod::Entropy:
    return entropyRange(values, lo, hi);
  }
  return {lo, hi};
}

size_t mlir::tessel::klThreshold(const std::vector<double> &hist,
                                 size_t levels) {
  const size_t n = hist.size();
  size_t bestT = n;
  double bestKL = std::numeric_limits<double>::infinity();
  std::vector<double> p, q, sums(levels), counts(levels);
  for (size_t t = levels; t <= n; t += std::max<size_t>(1, levels / 8)) {
    p.assign(hist.begin(), hist.begin() + t);
    for (size_t i = t; i < n; ++i)
      p[t - 1] += hist[i];
    double pSum = 0.0;
    for (double x : p)
      pSum += x;
    if (pSum == 0.0)
      continue;
    // Q: the first t bins merged into `levels` groups and expanded back
    // over each group's nonzero bins.
    std::fill(sums.begin(), sums.end(), 0.0);
    std::fill(counts.begin(), counts.end(), 0.0);
    for (size_t i = 0; i < t; ++i) {
      size_t g = i * levels / t;
      sums[g] += hist[i];
      counts[g] += hist[i] > 0 ? 1.0 : 0.0;
    }
    q.assign(t, 0.0);
    double qSum = 0.0;
    for (size_t i = 0; i < t; ++i) {
      size_t g = i * levels / t;
      if (hist[i] > 0)
        q[i] = sums[g] / std::max(counts[g], 1.0);
      qSum += q[i];
    }
    qSum = std::max(qSum, 1e-300);
    double kl = 0.0;
    for (size_t i = 0; i < t; ++i) {
      double pn = p[i] / pSum, qn = q[i] / qSum;
      if (pn <= 0)
        continue;
      if (qn == 0) {
        kl = std::numeric_limits<double>::infinity();
        break;
      }
      kl += pn * std::log(pn / qn);
    }
    if (kl < bestKL) {
      bestT = t;
      bestKL = kl;
    }
  }
  return bestT;
}
