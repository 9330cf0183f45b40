/* CpuFeatures.h - what the CPU running the kernels has (internal).
 *
 * The archive for an x86-64 level is compiled for that level's baseline;
 * the faster instructions beyond it (VNNI, AVX512_BF16, VBMI) are chosen
 * at run time by CPUID, once per process. Environment variables turn
 * paths off so that the tests can run the others on any CPU:
 * TESSEL_KERNELS_NO_VNNI=1, TESSEL_KERNELS_NO_AVX2=1 (the int8 kernels'
 * AVX2 path), TESSEL_KERNELS_NO_BF16=1 (the bf16 kernels' portable path),
 * TESSEL_KERNELS_NO_AMX=1 (the int8 kernels' AMX path). */
#ifndef TESSEL_KERNELS_CPU_FEATURES_H
#define TESSEL_KERNELS_CPU_FEATURES_H

int tk_has_vnni(void);
int tk_has_avx2(void);
int tk_has_vbmi(void);
int tk_has_avx512bf16(void);
/* The microarchitecture, where a kernel's best form depends on it (not on
 * the ISA): TK_UARCH_ZEN4 is AMD family 25 with AVX-512, TK_UARCH_ZEN5
 * family 26 and later. */
enum { TK_UARCH_OTHER, TK_UARCH_INTEL, TK_UARCH_ZEN4, TK_UARCH_ZEN5 };
int tk_cpu_uarch(void);
/* Whether the fp32 AVX-512 tile should take its activations as embedded
 * broadcasts (Zen 4) or broadcast them first (everything else);
 * TESSEL_KERNELS_F32_BROADCAST=embedded|separate chooses. */
int tk_f32_embedded_broadcast(void);

/* Whether environment variable `name` is set to something other than 0. */
int tk_env_flag(const char *name);
/* probe(), computed once and cached in *slot (initially -1; threads may
 * race to compute the same value, which is harmless). */
int tk_cached(int *slot, int (*probe)(void));

#endif /* TESSEL_KERNELS_CPU_FEATURES_H */
