//===- CpuFeatures.cpp - CPUID checks of an artifact's requirements -------===//
//
// An instruction the CPU lacks kills the process with SIGILL somewhere in
// the first kernel that uses it; checking CPUID (and XCR0, which says
// whether the OS saves the AVX/AVX-512/AMX registers) at load turns that into
// an error naming the missing features.
//
//===----------------------------------------------------------------------===//

#include "CpuFeatures.h"

#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

using namespace tessel::rt::detail;

namespace {

struct Feature {
  const char *name;
  uint32_t leaf, subleaf, reg, bit;
  uint64_t xcr0;
  uint32_t avx10Version;
};

const Feature kFeatures[] = {
#define TESSEL_CPU_FEATURE(NAME, LEAF, SUBLEAF, REG, BIT, XCR0, AVX10)         \
  {NAME, LEAF, SUBLEAF, REG, BIT, XCR0, AVX10},
#include "tessel/Runtime/CpuFeatures.def"
};

const Feature *lookup(const std::string &name) {
  for (const Feature &f : kFeatures)
    if (name == f.name)
      return &f;
  return nullptr;
}

#if defined(__x86_64__)
/// CPUID (leaf, subleaf) registers; zeros for a leaf the CPU does not have.
void cpuid(uint32_t leaf, uint32_t subleaf, uint32_t regs[4]) {
  regs[0] = regs[1] = regs[2] = regs[3] = 0;
  uint32_t max = __get_cpuid_max(leaf & 0x80000000u, nullptr);
  if (max < leaf)
    return;
  __cpuid_count(leaf, subleaf, regs[0], regs[1], regs[2], regs[3]);
}

/// The state components the OS enabled (XCR0); 0 without OSXSAVE.
uint64_t xcr0() {
  uint32_t r[4];
  cpuid(1, 0, r);
  if (!(r[2] & (1u << 27)))
    return 0;
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return uint64_t(hi) << 32 | lo;
}

bool has(const Feature &f) {
  uint32_t r[4];
  cpuid(f.leaf, f.subleaf, r);
  if (!(r[f.reg] & (1u << f.bit)))
    return false;
  if (f.xcr0 && (xcr0() & f.xcr0) != f.xcr0)
    return false;
  if (f.avx10Version) {
    cpuid(0x24, 0, r);
    if ((r[1] & 0xff) < f.avx10Version)
      return false;
  }
  return true;
}
#else
bool has(const Feature &) { return false; }
#endif

} // namespace

bool tessel::rt::detail::isKnownCpuFeature(const std::string &name) {
  return lookup(name) != nullptr;
}

std::vector<std::string> tessel::rt::detail::missingCpuFeatures(
    const std::vector<std::string> &required) {
  std::vector<std::string> missing;
  for (const std::string &name : required) {
    const Feature *f = lookup(name);
    if (!f || !has(*f))
      missing.push_back(name);
  }
  return missing;
}
