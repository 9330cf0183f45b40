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

static int probe_f32_embedded_broadcast(void) {
  const char *v = getenv("TESSEL_KERNELS_F32_BROADCAST");
  if (v && !strcmp(v, "embedded"))
    return 1;
  if (v && !strcmp(v, "separate"))
    return 0;
  __builtin_cpu_init();
  return __builtin_cpu_is("amd");
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
int tk_has_vnni(void) { return 0; }
int tk_f32_embedded_broadcast(void) { return 0; }
int tk_has_avx2(void) { return 0; }
int tk_has_vbmi(void) { return 0; }
int tk_has_avx512bf16(void) { return 0; }
#endif
