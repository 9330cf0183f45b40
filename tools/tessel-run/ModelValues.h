//===- ModelValues.h - a model's sequences and optionals --------*- C++ -*-===//
//
// A model's input or output may be a sequence of tensors or an optional;
// the artifact takes and returns each as several tensors, its parts
// (ABI v7: `part=ROLE:OWNER` in the manifest). tessel-run reads, prints,
// writes and compares the values as the model's user sees them, and packs
// and unpacks the parts around the call.
//
//   --input=@DIR      a sequence: DIR/0.npy, DIR/1.npy, ... in order
//   --input=none      an empty optional
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_TOOLS_TESSEL_RUN_MODELVALUES_H
#define TESSEL_TOOLS_TESSEL_RUN_MODELVALUES_H

#include "tessel/Runtime/Runtime.h"

#include <string>
#include <vector>

namespace tessel::run {

/// A value as the model's user sees it.
struct ModelValue {
  bool present = true;  // false: an empty optional
  bool sequence = false;
  std::vector<rt::Tensor> tensors; // one for a tensor; the elements
};

/// One value of the model: the indices of its parts among the function's
/// inputs or outputs.
struct Slot {
  std::string name;
  bool optional = false, sequence = false;
  /// A tensor's (or an optional tensor's) index; a sequence's sizes and
  /// data; an optional's flag (-1 where there is none).
  long tensor = -1, sizes = -1, data = -1, present = -1;
};

/// The model's values, from the parts the manifest declares. Throws on a
/// malformed grouping.
std::vector<Slot> groupParts(const std::vector<rt::ValueInfo> &infos);

/// "@file.npy", "@DIR" (a sequence), "none" (an empty optional), or an
/// inline tensor.
ModelValue loadValue(const std::string &spec);

/// The function's input tensors for the model's `values`.
std::vector<rt::Tensor> packInputs(const std::vector<Slot> &slots,
                                   const std::vector<rt::ValueInfo> &infos,
                                   std::vector<ModelValue> values);

/// The model's values from the function's output tensors.
std::vector<ModelValue> unpackOutputs(const std::vector<Slot> &slots,
                                      std::vector<rt::Tensor> &outputs);

/// Text of a value (tensors as TensorText prints them).
std::string formatValue(const ModelValue &v);
/// Writes a tensor to PATH, a sequence to the directory PATH (N.npy), and
/// refuses an empty optional.
void writeValue(const std::string &path, const ModelValue &v);
/// Compares `got` with `expected`; empty when they match, else why.
std::string compareValues(const ModelValue &got, const ModelValue &expected,
                          double atol, double rtol, const std::string &label);

} // namespace tessel::run

#endif
