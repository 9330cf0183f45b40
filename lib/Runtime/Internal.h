//===- Internal.h - shared internals of libTesselRuntime -------*- C++ -*-===//
//
// The C API's opaque structs and the glue that turns C++ exceptions into
// tessel_status_t. Inside the library, code throws tessel::rt::Error; every
// extern "C" entry point runs its body through guard() so no exception ever
// crosses the C boundary.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_RUNTIME_INTERNAL_H
#define TESSEL_LIB_RUNTIME_INTERNAL_H

#include "tessel/Runtime/Runtime.h"

#include <exception>
#include <new>
#include <string>
#include <vector>

struct tessel_status {
  tessel_status_code_t code;
  std::string message;
};

struct tessel_tensor {
  tessel_dtype_t dtype = TESSEL_DTYPE_INVALID;
  std::vector<int64_t> dims;
  size_t numElements = 0;
  size_t byteSize = 0;
  void *data = nullptr;
  bool owned = false;
};

namespace tessel::rt::detail {

/// NULL when allocation of the status itself fails: callers then see "OK",
/// which is the least bad outcome when memory is exhausted.
tessel_status_t *makeStatus(tessel_status_code_t code, std::string message);

/// Runs `body` and converts whatever it throws into a status.
template <typename F> tessel_status_t *guard(F &&body) noexcept {
  try {
    body();
    return nullptr;
  } catch (const Error &e) {
    return makeStatus(e.code(), e.what());
  } catch (const std::bad_alloc &) {
    return makeStatus(TESSEL_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception &e) {
    return makeStatus(TESSEL_INTERNAL, e.what());
  } catch (...) {
    return makeStatus(TESSEL_INTERNAL, "unknown internal error");
  }
}

[[noreturn]] inline void fail(tessel_status_code_t code,
                              const std::string &message) {
  throw Error(code, message);
}

/// Element count of `dims`; throws on negative dimensions or overflow of the
/// byte size for `elemSize`-byte elements.
size_t checkedNumElements(const std::vector<int64_t> &dims, size_t elemSize);

/// New zero-filled owning tensor, 64-byte aligned; throws Error.
Tensor allocateTensor(DType dtype, const std::vector<int64_t> &dims);

/// "[2,3]": the manifest's shape spelling, used in error messages.
std::string shapeString(const std::vector<int64_t> &dims);

} // namespace tessel::rt::detail

#endif // TESSEL_LIB_RUNTIME_INTERNAL_H
