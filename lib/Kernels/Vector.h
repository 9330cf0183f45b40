/* Vector.h - the vector width of the variant being built.
 *
 * The kernels are written once with GCC/Clang vector extensions; the CMake
 * variant's -march decides what they become (zmm for x86-64-v4, ymm for
 * x86-64-v3, xmm otherwise), and MR, the micro-kernel's row count, is
 * chosen so that the accumulators fill but do not overflow the register
 * file. */
#ifndef TESSEL_KERNELS_VECTOR_H
#define TESSEL_KERNELS_VECTOR_H

#include "tessel/Kernels/tessel_kernels.h"

#include <math.h>
#include <string.h>
#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#endif

#if defined(__AVX512F__)
#define TK_VW 16
#define TK_MR 6 /* 6 x 4 zmm accumulators + 4 B vectors + 1 broadcast of 32 */
#elif defined(__AVX2__) || defined(__AVX__)
#define TK_VW 8
/* 6 rows x 2 ymm accumulators + 2 B vectors + 1 broadcast of 16: the
 * panel's 64 columns are walked 16 at a time (TK_GV), each B vector feeding
 * 6 FMAs. One row x 8 vectors, with B as FMA memory operands, reached 39%
 * of the FMA peak on AMD Zen 3: a load per FMA. */
#define TK_MR 6
#define TK_GV 2
#else
#define TK_VW 4
#define TK_MR 1 /* 16 xmm accumulators: a fallback, not a fast path */
#endif

#define TK_NR TESSEL_KERNEL_NR
#define TK_NV (TK_NR / TK_VW)
/* Vectors of the panel one micro-kernel call covers (the rest in further
 * calls over the same rows). */
#ifndef TK_GV
#define TK_GV TK_NV
#endif

/* Rows per micro-kernel call when nv of the panel's vectors are used: as
 * many accumulators as fit next to the B vectors and a broadcast. With
 * AVX-512: 6x4, 8x3, 12x2, 12x1 zmm (row pointers, not registers, cap
 * the narrow cases at 12). */
#if TK_VW == 16
#define TK_MR_MAX 12
#define TK_MR_FOR(nv) ((nv) >= 4 ? 6 : (nv) == 3 ? 8 : 12)
/* The tiles TK_MR_FOR allows, for a dispatch on (mr, nv) at run time:
 * CASE(MR, NV) (a `case MR:` that returns) for 1-12 rows at 1 or 2
 * vectors, 1-8 at 3, 1-6 at 4. */
#define TK_ROWS_1_6(CASE, NV)                                                  \
  CASE(1, NV) CASE(2, NV) CASE(3, NV) CASE(4, NV) CASE(5, NV) CASE(6, NV)
#define TK_ROWS_1_8(CASE, NV) TK_ROWS_1_6(CASE, NV) CASE(7, NV) CASE(8, NV)
#define TK_ROWS_1_12(CASE, NV)                                                 \
  TK_ROWS_1_8(CASE, NV) CASE(9, NV) CASE(10, NV) CASE(11, NV) CASE(12, NV)
#define TK_SWITCH_TILES(mr, nv, CASE)                                          \
  switch (nv) {                                                                \
  case 1:                                                                      \
    switch (mr) { TK_ROWS_1_12(CASE, 1) }                                      \
    break;                                                                     \
  case 2:                                                                      \
    switch (mr) { TK_ROWS_1_12(CASE, 2) }                                      \
    break;                                                                     \
  case 3:                                                                      \
    switch (mr) { TK_ROWS_1_8(CASE, 3) }                                       \
    break;                                                                     \
  default:                                                                     \
    switch (mr) { TK_ROWS_1_6(CASE, 4) }                                       \
    break;                                                                     \
  }
#else
#define TK_MR_MAX TK_MR
#define TK_MR_FOR(nv) TK_MR
#endif

typedef float tk_vec __attribute__((vector_size(TK_VW * 4)));

#define TK_INLINE static inline __attribute__((always_inline))
/* A loop over a tile's rows or vectors unrolled in full: left rolled
 * (clang rolls an epilogue's loop over 8 or 12 rows), the accumulators are
 * indexed at run time and live on the stack. */
#define TK_UNROLL _Pragma("clang loop unroll(full)")

TK_INLINE tk_vec tk_load(const float *p) {
  tk_vec v;
  memcpy(&v, p, sizeof v);
  return v;
}
TK_INLINE void tk_store(float *p, tk_vec v) { memcpy(p, &v, sizeof v); }
/* The first n (0 < n < TK_VW) lanes, with masked moves where the ISA has
 * them: a panel's last vector when F is not a multiple of it (the other
 * lanes load as 0 and are not stored). */
#if defined(__AVX512F__)
TK_INLINE tk_vec tk_load_n(const float *p, int n) {
  return (tk_vec)_mm512_maskz_loadu_ps((__mmask16)((1u << n) - 1), p);
}
TK_INLINE void tk_store_n(float *p, tk_vec v, int n) {
  _mm512_mask_storeu_ps(p, (__mmask16)((1u << n) - 1), (__m512)v);
}
/* Lanes [skip, TK_VW) only (0 < skip < TK_VW): a channel count's last
 * vector that overlaps the one before it, whose lanes are final. */
TK_INLINE void tk_store_from(float *p, tk_vec v, int skip) {
  _mm512_mask_storeu_ps(p, (__mmask16)(0xffffu << skip), (__m512)v);
}
#elif defined(__AVX2__)
TK_INLINE __m256i tk_mask_n(int n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
TK_INLINE tk_vec tk_load_n(const float *p, int n) {
  return (tk_vec)_mm256_maskload_ps(p, tk_mask_n(n));
}
TK_INLINE void tk_store_n(float *p, tk_vec v, int n) {
  _mm256_maskstore_ps(p, tk_mask_n(n), (__m256)v);
}
TK_INLINE void tk_store_from(float *p, tk_vec v, int skip) {
  _mm256_maskstore_ps(p,
                      _mm256_cmpgt_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5,
                                                           6, 7),
                                         _mm256_set1_epi32(skip - 1)),
                      (__m256)v);
}
#else
TK_INLINE tk_vec tk_load_n(const float *p, int n) {
  tk_vec v = {0};
  memcpy(&v, p, sizeof(float) * (size_t)n);
  return v;
}
TK_INLINE void tk_store_n(float *p, tk_vec v, int n) {
  memcpy(p, &v, sizeof(float) * (size_t)n);
}
TK_INLINE void tk_store_from(float *p, tk_vec v, int skip) {
  float t[TK_VW];
  tk_store(t, v);
  memcpy(p + skip, t + skip, sizeof(float) * (size_t)(TK_VW - skip));
}
#endif
/* x - 0 (not 0 + x) folds away: it is exact for every x, -0 included. */
TK_INLINE tk_vec tk_splat(float x) { return x - (tk_vec){0}; }
typedef int tk_ivec __attribute__((vector_size(TK_VW * 4)));
/* Vector selects without the ?: operator, which C (unlike C++) lacks for
 * vector types. NaN in `a` propagates, like fmaxf/fminf do not: clamping a
 * NaN keeps it NaN, as the graph's Clip would. */
TK_INLINE tk_vec tk_select(tk_ivec m, tk_vec a, tk_vec b) {
  return (tk_vec)((m & (tk_ivec)a) | (~m & (tk_ivec)b));
}
/* Whether [lo, hi] clamps anything: (-inf, +inf) means no clamp. */
TK_INLINE int tk_has_clamp(float lo, float hi) {
  return !(isinf(lo) && lo < 0 && isinf(hi) && hi > 0);
}
/* Clamps x to [lo, hi]; NaN stays NaN (PyTorch's clamp and relu, TOSA's
 * clamp with PROPAGATE), which fminf(fmaxf(x, lo), hi) would turn into lo. */
TK_INLINE float tk_clamp_scalar(float x, float lo, float hi) {
  return x < lo ? lo : x > hi ? hi : x;
}
TK_INLINE tk_vec tk_max(tk_vec a, tk_vec b) { return tk_select(a < b, b, a); }
TK_INLINE tk_vec tk_min(tk_vec a, tk_vec b) { return tk_select(a > b, b, a); }

/* The largest lane and the lanes' sum, in log2(TK_VW) shuffle steps (the
 * sum's order is a tree's, not lane by lane). */
TK_INLINE float tk_reduce_max(tk_vec v) {
#if TK_VW == 16 && defined(__AVX512F__)
  return _mm512_reduce_max_ps((__m512)v);
#elif TK_VW == 8 && defined(__AVX__)
  __m128 x = _mm_max_ps(_mm256_castps256_ps128((__m256)v),
                        _mm256_extractf128_ps((__m256)v, 1));
  x = _mm_max_ps(x, _mm_movehl_ps(x, x));
  return _mm_cvtss_f32(_mm_max_ss(x, _mm_movehdup_ps(x)));
#else
  float m = v[0];
  for (int i = 1; i < TK_VW; ++i)
    m = v[i] > m ? v[i] : m;
  return m;
#endif
}
TK_INLINE float tk_reduce_add(tk_vec v) {
#if TK_VW == 16 && defined(__AVX512F__)
  return _mm512_reduce_add_ps((__m512)v);
#elif TK_VW == 8 && defined(__AVX__)
  __m128 x = _mm_add_ps(_mm256_castps256_ps128((__m256)v),
                        _mm256_extractf128_ps((__m256)v, 1));
  x = _mm_add_ps(x, _mm_movehl_ps(x, x));
  return _mm_cvtss_f32(_mm_add_ss(x, _mm_movehdup_ps(x)));
#else
  float s = 0.0f;
  for (int i = 0; i < TK_VW; ++i)
    s += v[i];
  return s;
#endif
}

/* exp(x) to ~1 ulp (Cephes' expf polynomial on x - n*ln2, scaled by 2^n
 * through the exponent bits); 0 below -87.3, where 2^n leaves the normal
 * range (softmax terms that small are < 2^-126 of the row maximum's). */
TK_INLINE tk_vec tk_exp(tk_vec x) {
  const tk_vec lo = tk_splat(-87.33654f), hi = tk_splat(88.37626f);
  const tk_ivec under = x < lo;
  x = tk_min(tk_max(x, lo), hi);
  const tk_vec magic = tk_splat(12582912.0f); /* 1.5 * 2^23: round to int */
  tk_vec n = (x * tk_splat(1.44269504088896341f) + magic) - magic;
  tk_vec r = x - n * tk_splat(0.693359375f);
  r = r - n * tk_splat(-2.12194440e-4f);
  tk_vec y = tk_splat(1.9875691500e-4f);
  y = y * r + tk_splat(1.3981999507e-3f);
  y = y * r + tk_splat(8.3334519073e-3f);
  y = y * r + tk_splat(4.1665795894e-2f);
  y = y * r + tk_splat(1.6666665459e-1f);
  y = y * r + tk_splat(5.0000001201e-1f);
  y = y * (r * r) + r + tk_splat(1.0f);
  tk_ivec e = (__builtin_convertvector(n, tk_ivec) + 127) << 23;
  y = y * (tk_vec)e;
  return tk_select(under, tk_splat(0.0f), y);
}

/* x * sigmoid(x) (SiLU, "swish") as x / (1 + exp(-x)); for x below -88
 * tk_exp saturates near FLT_MAX and the quotient is ~-0, the limit. */
TK_INLINE tk_vec tk_silu(tk_vec x) { return x / (tk_splat(1.0f) + tk_exp(-x)); }
TK_INLINE float tk_silu_scalar(float x) { return x / (1.0f + expf(-x)); }

#endif
