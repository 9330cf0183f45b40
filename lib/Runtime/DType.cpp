//===- DType.cpp - element type names and sizes ---------------------------===//

#include "tessel/Runtime/tessel_runtime.h"

#include <cstring>

namespace {
struct DTypeEntry {
  tessel_dtype_t dtype;
  const char *name;
  size_t size;
};
// Manifest spellings from docs/artifact-abi.md.
const DTypeEntry kDTypes[] = {
    {TESSEL_DTYPE_F32, "f32", 4}, {TESSEL_DTYPE_F16, "f16", 2},
    {TESSEL_DTYPE_BF16, "bf16", 2}, {TESSEL_DTYPE_F64, "f64", 8},
    {TESSEL_DTYPE_I64, "i64", 8}, {TESSEL_DTYPE_I32, "i32", 4},
    {TESSEL_DTYPE_I16, "i16", 2}, {TESSEL_DTYPE_I8, "i8", 1},
    {TESSEL_DTYPE_U8, "u8", 1},   {TESSEL_DTYPE_I1, "i1", 1},
    {TESSEL_DTYPE_U16, "u16", 2}, {TESSEL_DTYPE_U32, "u32", 4},
    {TESSEL_DTYPE_U64, "u64", 8},
};
} // namespace

extern "C" {

const char *tessel_dtype_name(tessel_dtype_t dtype) {
  for (const DTypeEntry &e : kDTypes)
    if (e.dtype == dtype)
      return e.name;
  return "invalid";
}

size_t tessel_dtype_size(tessel_dtype_t dtype) {
  for (const DTypeEntry &e : kDTypes)
    if (e.dtype == dtype)
      return e.size;
  return 0;
}

tessel_dtype_t tessel_dtype_from_name(const char *name) {
  if (!name)
    return TESSEL_DTYPE_INVALID;
  for (const DTypeEntry &e : kDTypes)
    if (std::strcmp(e.name, name) == 0)
      return e.dtype;
  if (std::strcmp(name, "bool") == 0)
    return TESSEL_DTYPE_I1;
  return TESSEL_DTYPE_INVALID;
}

} // extern "C"
