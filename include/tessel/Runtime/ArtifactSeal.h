//===- ArtifactSeal.h - the integrity trailer of an artifact ----*- C++ -*-===//
//
// tessel-compile appends a 32-byte seal to every artifact it links:
//
//   bytes [0, N)        the ELF shared library (N = payload size)
//   bytes [N, N + 32)   "TSLSEAL1", N (u64 LE), XXH64(bytes [0, N), seed 0)
//                       (u64 LE), 8 zero bytes (reserved)
//
// The runtime checks it before dlopen (docs/artifact-abi.md, "Seal"): a
// truncated, extended or edited artifact (its manifest or its code) is
// refused with a message instead of crashing inside the loader or running
// with a manifest that no longer describes the code. ELF loaders ignore
// bytes past the last segment, so the seal does not change what dlopen
// maps. Header-only so that the compiler, the runtime and the test tools
// share one definition without linking each other.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_ARTIFACTSEAL_H
#define TESSEL_RUNTIME_ARTIFACTSEAL_H

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace tessel::seal {

inline constexpr char kMagic[8] = {'T', 'S', 'L', 'S', 'E', 'A', 'L', '1'};
inline constexpr size_t kSize = 32;

namespace detail {
inline constexpr uint64_t P1 = 11400714785074694791ULL;
inline constexpr uint64_t P2 = 14029467366897019727ULL;
inline constexpr uint64_t P3 = 1609587929392839161ULL;
inline constexpr uint64_t P4 = 9650029242287828579ULL;
inline constexpr uint64_t P5 = 2870177450012600261ULL;

inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
inline uint64_t read64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i)
    v = (v << 8) | p[i];
  return v;
}
inline uint32_t read32(const unsigned char *p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 |
         uint32_t(p[3]) << 24;
}
inline uint64_t round(uint64_t acc, uint64_t input) {
  acc += input * P2;
  acc = rotl(acc, 31);
  return acc * P1;
}
inline uint64_t mergeRound(uint64_t acc, uint64_t val) {
  acc ^= round(0, val);
  return acc * P1 + P4;
}
inline void store64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    p[i] = static_cast<unsigned char>(v >> (8 * i));
}
} // namespace detail

/// XXH64 of bytes fed in pieces (the reference algorithm, little-endian
/// reads; the same value as xxh64 of them all):
/// the compiler seals a large artifact from its file in chunks, so that
/// the whole file is never mapped at once (ViT-B/16's 346 MB artifact,
/// mapped to be sealed, was the compiler's peak memory).
class Xxh64Stream {
public:
  explicit Xxh64Stream(uint64_t seed = 0)
      : seed_(seed), v_{seed + detail::P1 + detail::P2, seed + detail::P2,
                        seed, seed - detail::P1} {}

  void update(const void *data, size_t size) {
    const auto *p = static_cast<const unsigned char *>(data);
    total_ += size;
    if (buffered_ + size < 32) {
      std::memcpy(buf_ + buffered_, p, size);
      buffered_ += size;
      return;
    }
    if (buffered_ > 0) {
      const size_t fill = 32 - buffered_;
      std::memcpy(buf_ + buffered_, p, fill);
      stripe(buf_);
      p += fill;
      size -= fill;
      buffered_ = 0;
    }
    for (; size >= 32; p += 32, size -= 32)
      stripe(p);
    std::memcpy(buf_, p, size);
    buffered_ = size;
  }

  uint64_t digest() const {
    using namespace detail;
    uint64_t h;
    if (total_ >= 32) {
      h = rotl(v_[0], 1) + rotl(v_[1], 7) + rotl(v_[2], 12) + rotl(v_[3], 18);
      for (uint64_t v : v_)
        h = mergeRound(h, v);
    } else {
      h = seed_ + P5;
    }
    h += total_;
    const unsigned char *p = buf_, *end = buf_ + buffered_;
    for (; p + 8 <= end; p += 8)
      h = rotl(h ^ round(0, read64(p)), 27) * P1 + P4;
    if (p + 4 <= end) {
      h = rotl(h ^ (uint64_t(read32(p)) * P1), 23) * P2 + P3;
      p += 4;
    }
    for (; p < end; ++p)
      h = rotl(h ^ (uint64_t(*p) * P5), 11) * P1;
    h ^= h >> 33;
    h *= P2;
    h ^= h >> 29;
    h *= P3;
    h ^= h >> 32;
    return h;
  }

  uint64_t size() const { return total_; }

private:
  void stripe(const unsigned char *p) {
    for (int i = 0; i < 4; ++i)
      v_[i] = detail::round(v_[i], detail::read64(p + 8 * i));
  }

  uint64_t seed_;
  uint64_t v_[4];
  unsigned char buf_[32] = {};
  size_t buffered_ = 0;
  uint64_t total_ = 0;
};

/// XXH64 (the reference algorithm, little-endian reads) of `size` bytes.
inline uint64_t xxh64(const void *data, size_t size, uint64_t seed = 0) {
  Xxh64Stream s(seed);
  s.update(data, size);
  return s.digest();
}

/// The seal of a payload whose size and XXH64 are known.
inline std::string make(uint64_t payloadSize, uint64_t hash) {
  unsigned char s[kSize] = {};
  std::memcpy(s, kMagic, sizeof kMagic);
  detail::store64(s + 8, payloadSize);
  detail::store64(s + 16, hash);
  return std::string(reinterpret_cast<const char *>(s), kSize);
}

/// The seal of `payloadSize` bytes at `payload`.
inline std::string make(const void *payload, size_t payloadSize) {
  return make(payloadSize, xxh64(payload, payloadSize));
}

/// What check() found.
enum class Result { Ok, Missing, WrongSize, Mismatch };

/// Checks the seal at the end of the `size` bytes at `file`.
inline Result check(const void *file, size_t size) {
  const auto *p = static_cast<const unsigned char *>(file);
  if (size < kSize || std::memcmp(p + size - kSize, kMagic, sizeof kMagic))
    return Result::Missing;
  const unsigned char *s = p + size - kSize;
  if (detail::read64(s + 8) != size - kSize)
    return Result::WrongSize;
  return detail::read64(s + 16) == xxh64(p, size - kSize) ? Result::Ok
                                                          : Result::Mismatch;
}

} // namespace tessel::seal

#endif // TESSEL_RUNTIME_ARTIFACTSEAL_H
