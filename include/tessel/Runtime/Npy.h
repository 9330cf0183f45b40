//===- Npy.h - .npy file reading and writing --------------------*- C++ -*-===//
//
// NumPy's .npy format, so that tessel-run and tests exchange tensors with
// Python without a converter. Reads NPY 1.0/2.0/3.0 and writes 1.0; only
// little-endian, C-order data of the dtypes f32 f16 f64 i64 i32 i16 i8 u8 and
// bool (i1). Everything else is rejected with an Error naming the problem.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_NPY_H
#define TESSEL_RUNTIME_NPY_H

#include "tessel/Runtime/Runtime.h"

#include <string>

namespace tessel::rt {

/// Reads `path`; errors mention the path.
Tensor readNpy(const std::string &path);
/// Parses an in-memory .npy image; `source` names it in error messages.
Tensor parseNpy(const void *data, size_t size, const std::string &source);

/// Writes `tensor` as NPY 1.0 (2.0 only if the header would not fit).
void writeNpy(const std::string &path, const Tensor &tensor);
/// The bytes writeNpy would write.
std::string serializeNpy(const Tensor &tensor);

} // namespace tessel::rt

#endif // TESSEL_RUNTIME_NPY_H
