//===- TensorText.cpp - inline tensor parsing and printing ----------------===//

#include "tessel/Runtime/TensorText.h"
#include "Float16.h"
#include "Internal.h"

#include <cerrno>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

using namespace tessel::rt;
using namespace tessel::rt::detail;

namespace {

const char *kForm = "expected SHAPExDTYPE=VALUES, e.g. 2x3xf32=1 2 3 4 5 6";

std::vector<std::string> splitValues(std::string s) {
  // Brackets act as separators so printed tensors ("[1 2][3 4]") parse back.
  for (char &c : s)
    if (c == ',' || c == '[' || c == ']' || c == '\t' || c == '\n')
      c = ' ';
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    size_t j = s.find(' ', i);
    if (j == std::string::npos)
      j = s.size();
    if (j > i)
      out.push_back(s.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

template <typename T> void store(void *base, size_t i, T v) {
  std::memcpy(static_cast<char *>(base) + i * sizeof(T), &v, sizeof(T));
}

class ElementParser {
public:
  ElementParser(const std::string &text) : text_(text) {}

  void set(Tensor &t, size_t i, const std::string &tok) {
    void *d = t.data();
    switch (t.dtype()) {
    case TESSEL_DTYPE_F32:
      return store(d, i, float(parseFloat(tok, t, FLT_MAX)));
    case TESSEL_DTYPE_F64: return store(d, i, parseFloat(tok, t, DBL_MAX));
    case TESSEL_DTYPE_F16:
      return store(d, i, floatToHalf(float(parseFloat(tok, t, 65519.0))));
    case TESSEL_DTYPE_BF16:
      // bf16 has f32's exponent range.
      return store(d, i, floatToBf16(float(parseFloat(tok, t, FLT_MAX))));
    case TESSEL_DTYPE_I64:
      return store(d, i, int64_t(parseInt(tok, t, INT64_MIN, INT64_MAX)));
    case TESSEL_DTYPE_I32:
      return store(d, i, int32_t(parseInt(tok, t, INT32_MIN, INT32_MAX)));
    case TESSEL_DTYPE_I16:
      return store(d, i, int16_t(parseInt(tok, t, INT16_MIN, INT16_MAX)));
    case TESSEL_DTYPE_I8:
      return store(d, i, int8_t(parseInt(tok, t, INT8_MIN, INT8_MAX)));
    case TESSEL_DTYPE_U8:
      return store(d, i, uint8_t(parseInt(tok, t, 0, UINT8_MAX)));
    case TESSEL_DTYPE_U16:
      return store(d, i, uint16_t(parseInt(tok, t, 0, UINT16_MAX)));
    case TESSEL_DTYPE_U32:
      return store(d, i, uint32_t(parseInt(tok, t, 0, UINT32_MAX)));
    case TESSEL_DTYPE_U64:
      return store(d, i, uint64_t(parseUnsigned64(tok, t)));
    case TESSEL_DTYPE_I1:
      return store(d, i, uint8_t(parseBool(tok)));
    case TESSEL_DTYPE_INVALID: break;
    }
  }

private:
  [[noreturn]] void bad(const std::string &tok, const Tensor &t,
                        const std::string &why = "") {
    fail(TESSEL_INVALID_ARGUMENT, "inline tensor '" + text_ + "': invalid " +
                                      tessel_dtype_name(t.dtype()) +
                                      " value '" + tok + "'" + why);
  }
  /// A finite literal beyond `max` (the dtype's largest finite value) is
  /// an error, as integers out of range are: it would silently become
  /// +-inf. "inf" and "nan" stay what they say; underflow rounds to zero.
  double parseFloat(const std::string &tok, const Tensor &t, double max) {
    char *end = nullptr;
    errno = 0;
    double v = std::strtod(tok.c_str(), &end);
    if (end == tok.c_str() || *end != '\0')
      bad(tok, t);
    bool literalInf = tok.find_first_of("iI") != std::string::npos;
    if (!literalInf && !std::isnan(v) &&
        ((errno == ERANGE && std::isinf(v)) || std::fabs(v) > max))
      bad(tok, t, " (out of range)");
    return v;
  }
  long long parseInt(const std::string &tok, const Tensor &t, long long lo,
                     long long hi) {
    char *end = nullptr;
    errno = 0;
    long long v = std::strtoll(tok.c_str(), &end, 10);
    if (*end != '\0')
      bad(tok, t, " (expected an integer)");
    if (errno == ERANGE || v < lo || v > hi)
      bad(tok, t, " (out of range)");
    return v;
  }
  /// A u64 literal: all of [0, 2^64) (strtoll stops at 2^63), no sign.
  unsigned long long parseUnsigned64(const std::string &tok, const Tensor &t) {
    if (tok.empty() || tok[0] == '-' || tok[0] == '+')
      bad(tok, t, " (expected a non-negative integer)");
    char *end = nullptr;
    errno = 0;
    unsigned long long v = std::strtoull(tok.c_str(), &end, 10);
    if (*end != '\0')
      bad(tok, t, " (expected an integer)");
    if (errno == ERANGE)
      bad(tok, t, " (out of range)");
    return v;
  }
  bool parseBool(const std::string &tok) {
    if (tok == "1" || tok == "true" || tok == "True")
      return true;
    if (tok == "0" || tok == "false" || tok == "False")
      return false;
    fail(TESSEL_INVALID_ARGUMENT, "inline tensor '" + text_ +
                                      "': invalid i1 value '" + tok +
                                      "' (expected 0, 1, true or false)");
  }
  const std::string &text_;
};

std::string formatFloat(double v, int digits) {
  if (std::isnan(v))
    return "nan"; // glibc would print "-nan" for some NaNs
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

} // namespace

Tensor tessel::rt::parseTensorText(const std::string &text) {
  size_t eq = text.find('=');
  if (eq == std::string::npos)
    fail(TESSEL_INVALID_ARGUMENT,
         "inline tensor '" + text + "': missing '=' (" + kForm + ")");
  std::string lhs = text.substr(0, eq);
  while (!lhs.empty() && lhs.back() == ' ')
    lhs.pop_back();
  while (!lhs.empty() && lhs.front() == ' ')
    lhs.erase(0, 1);

  std::vector<int64_t> dims;
  size_t pos = 0, x;
  while ((x = lhs.find('x', pos)) != std::string::npos) {
    std::string d = lhs.substr(pos, x - pos);
    if (d.empty() || d.size() > 18 ||
        d.find_first_not_of("0123456789") != std::string::npos)
      fail(TESSEL_INVALID_ARGUMENT, "inline tensor '" + text +
                                        "': invalid dimension '" + d +
                                        "' (" + kForm + ")");
    dims.push_back(std::stoll(d));
    pos = x + 1;
  }
  std::string dtypeName = lhs.substr(pos);
  DType dtype = tessel_dtype_from_name(dtypeName.c_str());
  if (dtype == TESSEL_DTYPE_INVALID)
    fail(TESSEL_INVALID_ARGUMENT,
         "inline tensor '" + text + "': unknown dtype '" + dtypeName +
             "' (expected f32 f16 bf16 f64 i64 i32 i16 i8 u8 i1)");

  std::vector<std::string> values = splitValues(text.substr(eq + 1));
  size_t count = checkedNumElements(dims, tessel_dtype_size(dtype));
  if (values.size() != count)
    fail(TESSEL_INVALID_ARGUMENT,
         "inline tensor '" + text + "': shape " + shapeString(dims) +
             " needs " + std::to_string(count) + " value(s), got " +
             std::to_string(values.size()));
  Tensor t = allocateTensor(dtype, dims);
  ElementParser parser(text);
  for (size_t i = 0; i < count; ++i)
    parser.set(t, i, values[i]);
  return t;
}

std::string tessel::rt::formatElement(const Tensor &t, size_t i) {
  switch (t.dtype()) {
  case TESSEL_DTYPE_F64: return formatFloat(t.elementAsDouble(i), 16);
  case TESSEL_DTYPE_F32:
  case TESSEL_DTYPE_F16:
  case TESSEL_DTYPE_BF16: return formatFloat(t.elementAsDouble(i), 7);
  case TESSEL_DTYPE_I64: {
    // Not through double: values above 2^53 must print exactly.
    int64_t v;
    std::memcpy(&v, t.data<char>() + 8 * i, 8);
    return std::to_string(v);
  }
  case TESSEL_DTYPE_U64: {
    uint64_t v;
    std::memcpy(&v, t.data<char>() + 8 * i, 8);
    return std::to_string(v);
  }
  default: return std::to_string(int64_t(t.elementAsDouble(i)));
  }
}

std::string tessel::rt::formatTensorText(const Tensor &t) {
  std::string out = t.typeString() + "=";
  std::vector<int64_t> dims = t.dims();
  if (dims.empty())
    return out + formatElement(t, 0);
  size_t next = 0;
  // Innermost dimension: space-separated; outer ones: one bracket group per
  // index (the top level of a rank>=2 tensor has no enclosing brackets).
  auto rec = [&](auto &self, size_t level) -> std::string {
    std::string s;
    for (int64_t i = 0; i < dims[level]; ++i) {
      if (level + 1 == dims.size())
        s += (i ? " " : "") + formatElement(t, next++);
      else
        s += "[" + self(self, level + 1) + "]";
    }
    return s;
  };
  return out + rec(rec, 0);
}

extern "C" {

tessel_status_t *tessel_tensor_parse(const char *text, tessel_tensor_t **out) {
  return guard([&] {
    if (!text || !out)
      fail(TESSEL_INVALID_ARGUMENT, "tessel_tensor_parse: NULL argument");
    *out = parseTensorText(text).release();
  });
}

char *tessel_tensor_format(const tessel_tensor_t *tensor) {
  if (!tensor)
    return nullptr;
  // Borrow the C tensor; release() before the Tensor could free it.
  Tensor borrowed(const_cast<tessel_tensor_t *>(tensor));
  char *result = nullptr;
  try {
    std::string s = formatTensorText(borrowed);
    result = static_cast<char *>(std::malloc(s.size() + 1));
    if (result)
      std::memcpy(result, s.c_str(), s.size() + 1);
  } catch (...) {
  }
  borrowed.release();
  return result;
}

} // extern "C"
