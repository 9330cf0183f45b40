//===- FuzzCalibration.cpp - libFuzzer target: calibration ranges --------===//
//
// What static quantization does with the values the calibration samples
// (--calibration-data) make an activation take: RangeObserver's three
// methods, and entropy's threshold search on any histogram. The samples'
// file is the .npy reader's (fuzz_npy); running the model on them is a
// compile and a run, too slow to fuzz. Here every float bit pattern (NaN,
// infinities, subnormals, the largest floats, one value, all equal) meets
// every method, and the results must hold what the quantizer relies on:
// a finite range lo <= hi inside the observed values (entropy's one-sided
// range starts at 0), and a threshold between the level count and the
// histogram's size. A violation aborts, which the fuzzer reports.
//
// Input: byte 0 the method, byte 1 the percentile (50 + byte % 51), byte
// 2 where the floats are cut into two observe() calls, byte 3 the level
// count of the threshold search (16 to 128, as the entropy method uses
// 128: fewer levels make the search quadratic in the bins); then the
// floats (little-endian), the first 512 of them also the histogram (the
// search is quadratic in its bins; the observer's own search, on up to
// 2048, runs too).
//===----------------------------------------------------------------------===//
#include "tessel/Quantization/Calibration.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

using namespace mlir::tessel;

static void require(bool ok) {
  if (!ok)
    abort();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 4)
    return 0;
  const CalibrationMethod method = static_cast<CalibrationMethod>(data[0] % 3);
  const double percentile = 50.0 + double(data[1] % 51);
  std::vector<float> values((size - 4) / 4);
  if (!values.empty())
    std::memcpy(values.data(), data + 4, values.size() * sizeof(float));
  const size_t cut = values.empty() ? 0 : data[2] % (values.size() + 1);

  RangeObserver observer(method, percentile);
  observer.observe(values.data(), cut);
  observer.observe(values.data() + cut, values.size() - cut);
  double mn = INFINITY, mx = -INFINITY;
  size_t finite = 0;
  bool nonFinite = false;
  for (float v : values) {
    if (!std::isfinite(v)) {
      nonFinite = true;
      continue;
    }
    mn = std::min(mn, double(v));
    mx = std::max(mx, double(v));
    ++finite;
  }
  require(observer.count() == finite);
  require(observer.sawNonFinite() == nonFinite);
  if (finite > 0 && !nonFinite) {
    auto [lo, hi] = observer.range();
    require(std::isfinite(lo) && std::isfinite(hi) && lo <= hi);
    const double floor = method == CalibrationMethod::Entropy && mn >= 0.0
                             ? 0.0
                             : mn;
    require(lo >= floor && hi <= mx);
    if (method == CalibrationMethod::MinMax)
      require(lo == mn && hi == mx);
  }

  // The threshold search on the magnitudes as a histogram (counts are
  // non-negative and finite).
  std::vector<double> hist;
  for (size_t i = 0; i < values.size() && i < 512; ++i)
    hist.push_back(std::isfinite(values[i]) ? std::fabs(double(values[i]))
                                            : 0.0);
  const size_t levels = 16 + data[3] % 113;
  const size_t t = klThreshold(hist, levels);
  require(t == hist.size() || (t >= levels && t <= hist.size()));
  return 0;
}
