//===- TensorText.h - IREE-style inline tensors -----------------*- C++ -*-===//
//
// "2x3xf32=1 2 3 4 5 6", "f32=5", "4xi64=1,2,3,4", "2xi1=true 0": the
// command-line spelling of a tensor (as iree-run-module uses it), so small
// inputs need no .npy file.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_TENSORTEXT_H
#define TESSEL_RUNTIME_TENSORTEXT_H

#include "tessel/Runtime/Runtime.h"

#include <string>

namespace tessel::rt {

/// Parses SHAPExDTYPE=VALUES. Values are separated by spaces and/or commas;
/// brackets are ignored so that formatTensorText output parses back.
Tensor parseTensorText(const std::string &text);

/// "2x3xf32=[1 2 3][4 5 6]"; floats with 7 significant digits (f64: 16).
std::string formatTensorText(const Tensor &tensor);

/// Formats one element for messages, with the same precision rules.
std::string formatElement(const Tensor &tensor, size_t index);

} // namespace tessel::rt

#endif // TESSEL_RUNTIME_TENSORTEXT_H
