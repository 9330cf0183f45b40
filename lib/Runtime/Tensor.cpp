//===- Tensor.cpp - tessel_tensor_t allocation, views and accessors -------===//

#include "Float16.h"
#include "Internal.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>

using namespace tessel::rt;
using namespace tessel::rt::detail;

namespace {
// Matches the ABI's promise that output buffers are 64-byte aligned (cache
// line / AVX-512 friendly loads in generated code).
constexpr size_t kAlignment = 64;

std::vector<int64_t> toDims(size_t rank, const int64_t *dims) {
  if (rank && !dims)
    fail(TESSEL_INVALID_ARGUMENT, "tensor dims pointer is NULL but rank is " +
                                      std::to_string(rank));
  return std::vector<int64_t>(dims, dims + rank);
}

void checkDType(DType dtype) {
  if (tessel_dtype_size(dtype) == 0)
    fail(TESSEL_INVALID_ARGUMENT,
         "invalid tensor dtype (" + std::to_string(int(dtype)) + ")");
}
} // namespace

size_t detail::checkedNumElements(const std::vector<int64_t> &dims,
                                  size_t elemSize) {
  size_t n = 1;
  const size_t limit = std::numeric_limits<size_t>::max() / 2 / elemSize;
  for (int64_t d : dims) {
    if (d < 0)
      fail(TESSEL_INVALID_ARGUMENT,
           "negative dimension " + std::to_string(d) + " in shape " +
               shapeString(dims));
    if (d != 0 && n > limit / size_t(d))
      fail(TESSEL_INVALID_ARGUMENT,
           "tensor of shape " + shapeString(dims) + " is too large");
    n *= size_t(d);
  }
  return n;
}

std::string detail::shapeString(const std::vector<int64_t> &dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

Tensor detail::allocateTensor(DType dtype, const std::vector<int64_t> &dims) {
  checkDType(dtype);
  auto t = std::make_unique<tessel_tensor>();
  t->dtype = dtype;
  t->dims = dims;
  t->numElements = checkedNumElements(dims, tessel_dtype_size(dtype));
  t->byteSize = t->numElements * tessel_dtype_size(dtype);
  // aligned_alloc wants a multiple of the alignment; never ask for 0 bytes so
  // that data() of an empty tensor is still a valid, unique pointer.
  size_t padded = (t->byteSize + kAlignment - 1) / kAlignment * kAlignment;
  if (padded == 0)
    padded = kAlignment;
  t->data = std::aligned_alloc(kAlignment, padded);
  if (!t->data)
    fail(TESSEL_OUT_OF_MEMORY, "cannot allocate " +
                                   std::to_string(t->byteSize) +
                                   " bytes for a tensor of shape " +
                                   shapeString(dims));
  std::memset(t->data, 0, padded);
  t->owned = true;
  return Tensor(t.release());
}

extern "C" {

tessel_status_t *tessel_tensor_allocate(tessel_dtype_t dtype, size_t rank,
                                        const int64_t *dims,
                                        tessel_tensor_t **out) {
  return guard([&] {
    if (!out)
      fail(TESSEL_INVALID_ARGUMENT, "tessel_tensor_allocate: out is NULL");
    *out = allocateTensor(dtype, toDims(rank, dims)).release();
  });
}

tessel_status_t *tessel_tensor_wrap(tessel_dtype_t dtype, size_t rank,
                                    const int64_t *dims, void *data,
                                    size_t byte_size, tessel_tensor_t **out) {
  return guard([&] {
    if (!out)
      fail(TESSEL_INVALID_ARGUMENT, "tessel_tensor_wrap: out is NULL");
    checkDType(dtype);
    auto t = std::make_unique<tessel_tensor>();
    t->dtype = dtype;
    t->dims = toDims(rank, dims);
    t->numElements = checkedNumElements(t->dims, tessel_dtype_size(dtype));
    t->byteSize = t->numElements * tessel_dtype_size(dtype);
    if (byte_size != t->byteSize)
      fail(TESSEL_INVALID_ARGUMENT,
           "tessel_tensor_wrap: buffer has " + std::to_string(byte_size) +
               " bytes but " + shapeTypeString(dtype, t->dims) + " needs " +
               std::to_string(t->byteSize));
    if (!data && t->byteSize)
      fail(TESSEL_INVALID_ARGUMENT, "tessel_tensor_wrap: data is NULL");
    t->data = data;
    t->owned = false;
    *out = t.release();
  });
}

void tessel_tensor_free(tessel_tensor_t *tensor) {
  if (!tensor)
    return;
  if (tensor->owned)
    std::free(tensor->data);
  delete tensor;
}

tessel_dtype_t tessel_tensor_dtype(const tessel_tensor_t *t) {
  return t ? t->dtype : TESSEL_DTYPE_INVALID;
}
size_t tessel_tensor_rank(const tessel_tensor_t *t) {
  return t ? t->dims.size() : 0;
}
const int64_t *tessel_tensor_dims(const tessel_tensor_t *t) {
  return t ? t->dims.data() : nullptr;
}
size_t tessel_tensor_num_elements(const tessel_tensor_t *t) {
  return t ? t->numElements : 0;
}
size_t tessel_tensor_byte_size(const tessel_tensor_t *t) {
  return t ? t->byteSize : 0;
}
void *tessel_tensor_data(tessel_tensor_t *t) { return t ? t->data : nullptr; }
const void *tessel_tensor_const_data(const tessel_tensor_t *t) {
  return t ? t->data : nullptr;
}
int tessel_tensor_is_view(const tessel_tensor_t *t) {
  return t && !t->owned ? 1 : 0;
}

double tessel_tensor_element_as_double(const tessel_tensor_t *t, size_t i) {
  if (!t || i >= t->numElements)
    return std::nan("");
  const char *p = static_cast<const char *>(t->data) +
                  i * tessel_dtype_size(t->dtype);
  // memcpy: the data pointer of a view need not be aligned for the type.
  auto load = [p](auto v) {
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  switch (t->dtype) {
  case TESSEL_DTYPE_F32: return load(float());
  case TESSEL_DTYPE_F16: return halfToFloat(load(uint16_t()));
  case TESSEL_DTYPE_BF16: return bf16ToFloat(load(uint16_t()));
  case TESSEL_DTYPE_F64: return load(double());
  case TESSEL_DTYPE_I64: return double(load(int64_t()));
  case TESSEL_DTYPE_I32: return load(int32_t());
  case TESSEL_DTYPE_I16: return load(int16_t());
  case TESSEL_DTYPE_I8: return load(int8_t());
  case TESSEL_DTYPE_U8: return load(uint8_t());
  case TESSEL_DTYPE_U16: return load(uint16_t());
  case TESSEL_DTYPE_U32: return load(uint32_t());
  case TESSEL_DTYPE_U64: return double(load(uint64_t()));
  case TESSEL_DTYPE_I1: return load(uint8_t()) ? 1.0 : 0.0;
  case TESSEL_DTYPE_INVALID: break;
  }
  return std::nan("");
}

} // extern "C"
