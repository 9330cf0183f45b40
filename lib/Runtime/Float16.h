//===- Float16.h - f16 / bf16 <-> float conversion --------------*- C++ -*-===//
//
// Portable bit-level conversions (no _Float16 / compiler support needed) so
// the runtime can print, parse and compare half-precision tensors.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_RUNTIME_FLOAT16_H
#define TESSEL_LIB_RUNTIME_FLOAT16_H

#include <cstdint>
#include <cstring>

namespace tessel::rt::detail {

inline uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  if (exp == 0x1f) // inf / nan
    return bitsFloat(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {
    if (mant == 0)
      return bitsFloat(sign);
    // Subnormal: value = mant * 2^-24.
    float v = float(mant) * (1.0f / 16777216.0f);
    return sign ? -v : v;
  }
  return bitsFloat(sign | ((exp + 112) << 23) | (mant << 13));
}

/// Round-to-nearest-even, overflow to inf, NaN stays NaN.
inline uint16_t floatToHalf(float f) {
  uint32_t u = floatBits(f);
  uint16_t sign = uint16_t((u >> 16) & 0x8000);
  uint32_t absu = u & 0x7fffffffu;
  if (absu >= 0x7f800000u) // inf or nan
    return sign | 0x7c00 | (absu > 0x7f800000u ? 0x200 : 0);
  if (absu >= 0x477ff000u) // rounds to >= 65520: overflow
    return sign | 0x7c00;
  if (absu < 0x38800000u) { // below the smallest normal half (2^-14)
    // Subnormal half: units of 2^-24, rounded to nearest even by the FPU.
    float a = bitsFloat(absu) * 16777216.0f;
    uint32_t m = uint32_t(a);
    float rem = a - float(m);
    if (rem > 0.5f || (rem == 0.5f && (m & 1)))
      ++m;
    return sign | uint16_t(m);
  }
  uint32_t exp = ((absu >> 23) - 112) << 10;
  uint32_t mant = (absu >> 13) & 0x3ff;
  uint32_t h = exp | mant;
  uint32_t rest = absu & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (h & 1)))
    ++h; // may carry into the exponent, which is the right result
  return sign | uint16_t(h);
}

inline float bf16ToFloat(uint16_t b) { return bitsFloat(uint32_t(b) << 16); }

inline uint16_t floatToBf16(float f) {
  uint32_t u = floatBits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) // keep NaN a (quiet) NaN
    return uint16_t((u >> 16) | 0x40);
  u += 0x7fff + ((u >> 16) & 1);
  return uint16_t(u >> 16);
}

} // namespace tessel::rt::detail

#endif // TESSEL_LIB_RUNTIME_FLOAT16_H
