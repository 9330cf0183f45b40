//===- Compare.cpp - --expected_output checking ---------------------------===//
//
// Reports the count of bad elements and the single worst one (largest
// absolute error, NaN-vs-number worst of all) with its multi-index: enough to
// tell a tolerance problem from a layout bug without dumping the tensor.
//
//===----------------------------------------------------------------------===//

#include "Compare.h"
#include "tessel/Runtime/TensorText.h"

#include <cmath>
#include <cstring>
#include <cstdio>
#include <limits>

using namespace tessel;
using namespace tessel::run;

namespace {

std::string multiIndex(const std::vector<int64_t> &dims, size_t flat) {
  std::vector<int64_t> idx(dims.size());
  for (size_t k = dims.size(); k-- > 0;) {
    idx[k] = int64_t(flat % size_t(dims[k]));
    flat /= size_t(dims[k]);
  }
  std::string s = "[";
  for (size_t k = 0; k < idx.size(); ++k)
    s += (k ? "," : "") + std::to_string(idx[k]);
  return s + "]";
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

} // namespace

Comparison tessel::run::compareTensors(const rt::Tensor &got,
                                       const rt::Tensor &expected, double atol,
                                       double rtol, const std::string &label) {
  Comparison c;
  // A bf16 result against u16 data: bf16 bit patterns (numpy has no bf16).
  bool bf16Bits =
      got.dtype() == TESSEL_DTYPE_BF16 && expected.dtype() == TESSEL_DTYPE_U16;
  auto expectedAt = [&](size_t i) {
    if (!bf16Bits)
      return expected.elementAsDouble(i);
    uint32_t bits = uint32_t(expected.elementAsDouble(i)) << 16;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return double(f);
  };
  if ((got.dtype() != expected.dtype() && !bf16Bits) ||
      got.dims() != expected.dims()) {
    c.match = false;
    c.report = label + ": type mismatch: got " + got.typeString() +
               ", expected " + expected.typeString();
    return c;
  }
  size_t bad = 0, worst = 0;
  double worstErr = -1;
  for (size_t i = 0, n = got.numElements(); i < n; ++i) {
    double g = got.elementAsDouble(i), e = expectedAt(i);
    bool ok;
    double err;
    if (std::isnan(g) || std::isnan(e)) {
      ok = std::isnan(g) && std::isnan(e);
      err = std::numeric_limits<double>::infinity();
    } else if (g == e) { // also equal infinities, whose difference is NaN
      ok = true;
      err = 0;
    } else {
      err = std::fabs(g - e);
      ok = err <= atol + rtol * std::fabs(e);
    }
    if (ok)
      continue;
    if (bad++ == 0 || err > worstErr) {
      worst = i;
      worstErr = err;
    }
  }
  if (bad == 0)
    return c;
  double e = expectedAt(worst);
  double rel = e == 0 ? std::numeric_limits<double>::infinity()
                      : worstErr / std::fabs(e);
  c.match = false;
  c.report = label + ": " + std::to_string(bad) + " of " +
             std::to_string(got.numElements()) +
             " elements differ (atol=" + num(atol) + ", rtol=" + num(rtol) +
             ")\n  worst element: index " + std::to_string(worst) + " " +
             multiIndex(got.dims(), worst) +
             ": got " + rt::formatElement(got, worst) + ", expected " +
             rt::formatElement(expected, worst) + ", abs_err " +
             num(worstErr) + ", rel_err " + num(rel);
  return c;
}
