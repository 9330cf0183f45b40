/* CpuFeatures.c - run-time CPU feature checks of the kernel library. */
#include "CpuFeatures.h"

#include <stdlib.h>
#include <string.h>

int tk_env_flag(const char *name) {
  const char *v = getenv(name);
  return v && *v && *v != '0';
}

int tk_cached(int *slot, int (*probe)(void)) {
  int v = __atomic_load_n(slot, __ATOMIC_RELAXED);
  if (v < 0) {
    v = probe();
    __atomic_store_n(slot, v, __ATOMIC_RELAXED);
  }
  return v;
}

#if defined(__x86_64__) && !defined(TESSEL_KERNELS_NO_ASM)
#include <cpuid.h>

static int probe_vnni(void) {
  __builtin_cpu_init();
  return !tk_env_flag("TESSEL_KERNELS_NO_VNNI") &&
         __builtin_cpu_supports("avx512vnni") &&
         __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl");
}

static int probe_avx2(void) {
  __builtin_cpu_init();
  /* FMA too: the AVX2 epilogue's corrected reciprocal uses it (every AVX2
   * CPU of note has both). */
  return !tk_env_flag("TESSEL_KERNELS_NO_AVX2") &&
         __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

static int probe_vbmi(void) {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512vbmi");
}

static int probe_bf16(void) {
  __builtin_cpu_init();
  return !tk_env_flag("TESSEL_KERNELS_NO_BF16") &&
         __builtin_cpu_supports("avx512bf16") &&
         __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl");
}

/* The vendor and family from CPUID (libgcc's __builtin_cpu_is, which
 * clang's code may link against, does not know Zen 5). */
static int probe_uarch(void) {
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx))
    return TK_UARCH_OTHER;
  /* "GenuineIntel" / "AuthenticAMD": EBX holds the first four bytes. */
  const int intel = ebx == 0x756e6547u, amd = ebx == 0x68747541u;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx))
    return TK_UARCH_OTHER;
  unsigned family = (eax >> 8) & 0xf;
  if (family == 0xf)
    family += (eax >> 20) & 0xff;
  if (intel)
    return TK_UARCH_INTEL;
  /* Family 25 is Zen 3 and Zen 4; only Zen 4 has AVX-512, the only ISA
   * whose choices differ. */
  if (amd && family == 25)
    return __builtin_cpu_supports("avx512f") ? TK_UARCH_ZEN4
                                              : TK_UARCH_OTHER;
  if (amd && family >= 26)
    return TK_UARCH_ZEN5;
  return TK_UARCH_OTHER;
}

int tk_cpu_uarch(void) {
  static int slot = -1;
  return tk_cached(&slot, probe_uarch);
}

/* Zen 4 runs a 512-bit FMA as two halves on 256-bit units, and the
 * separate vbroadcastss of the other form takes a vector pipe from them:
 * the embedded form ran at ~95% of the FMA peak there, the separate one
 * ~90%. Zen 5 (full-width units) and Intel run the embedded form far
 * slower: 1024^3 at 116 against 166-193 GFLOP/s on Zen 5, ~68% against
 * ~90% of the peak on Sapphire Rapids. */
static int probe_f32_embedded_broadcast(void) {
  const char *v = getenv("TESSEL_KERNELS_F32_BROADCAST");
  if (v && !strcmp(v, "embedded"))
    return 1;
  if (v && !strcmp(v, "separate"))
    return 0;
  return tk_cpu_uarch() == TK_UARCH_ZEN4;
}

int tk_f32_embedded_broadcast(void) {
  static int slot = -1;
  return tk_cached(&slot, probe_f32_embedded_broadcast);
}

int tk_has_vnni(void) {
  static int slot = -1;
  return tk_cached(&slot, probe_vnni);
}

int tk_has_avx2(void) {
  static int slot = -1;
  return tk_cached(&slot, probe_avx2);
}

int tk_has_vbmi(void) {
  static int slot = -1;
  return tk_cached(&slot, probe_vbmi);
}

int tk_has_avx512bf16(void) {
  static int slot = -1;
  return tk_cached(&slot, probe_bf16);
}
#else
int tk_cpu_uarch(void) { return TK_UARCH_OTHER; }
int tk_has_vnni(void) { return 0; }
int tk_f32_embedded_broadcast(void) { return 0; }
int tk_has_avx2(void) { return 0; }
int tk_has_vbmi(void) { return 0; }
int tk_has_avx512bf16(void) { return 0; }
#endif
