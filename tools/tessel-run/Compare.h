//===- Compare.h - --expected_output checking -------------------*- C++ -*-===//
#ifndef TESSEL_TOOLS_TESSEL_RUN_COMPARE_H
#define TESSEL_TOOLS_TESSEL_RUN_COMPARE_H

#include "tessel/Runtime/Runtime.h"

#include <string>

namespace tessel::run {

struct Comparison {
  bool match = true;
  std::string report; // empty on match; otherwise why, with the worst element
};

/// Elementwise |got - expected| <= atol + rtol * |expected|; NaN matches only
/// NaN. A dtype or shape difference is a mismatch. `label` names the output
/// in the report, e.g. "output 0 ('out0')".
Comparison compareTensors(const rt::Tensor &got, const rt::Tensor &expected,
                          double atol, double rtol, const std::string &label);

} // namespace tessel::run

#endif // TESSEL_TOOLS_TESSEL_RUN_COMPARE_H
