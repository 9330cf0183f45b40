/* ConvGemmBF16.c - bf16 products, f32 sums: the micro-kernel behind
 * tessel_kernel_conv2d_nhwc_bf16 (ConvGemmBF16.h).
 *
 * On CPUs with AVX512_BF16 (chosen at run time) a tile keeps mr rows x nv
 * vectors of f32 accumulators in zmm registers, like the fp32 6 x 64 tile,
 * and each `vdpbf16ps` multiplies a broadcast pair of a row's activations
 * with 16 columns' weight pairs: twice the multiply-adds of an fp32 FMA.
 * Elsewhere the pairs are widened to f32 (exactly: bf16 is the top half of
 * an f32) and summed by FMAs, the same products in another order. */
#include "ConvGemmBF16.h"
#include "CpuFeatures.h"

#include <string.h>

/* bf16 bits -> the f32 they stand for (exact). */
static inline float bf16_to_f32(uint16_t h) {
  const uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static inline uint16_t f32_to_bf16(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  if ((u & 0x7f800000u) == 0) /* zero or denormal: signed zero */
    return (uint16_t)((u >> 16) & 0x8000u);
  if ((u & 0x7fffffffu) > 0x7f800000u) /* NaN: quiet, payload's top bits */
    return (uint16_t)((u >> 16) | 0x0040u);
  u += 0x7fffu + ((u >> 16) & 1u); /* nearest, ties to even; overflows to inf */
  return (uint16_t)(u >> 16);
}

#if TK_VW == 16 && defined(__x86_64__) && !defined(TESSEL_KERNELS_NO_ASM)
#include <immintrin.h>
#define TK_HAVE_BF16_PATH 1
#define TK_BF16_TARGET                                                         \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))

TK_BF16_TARGET static inline void round_run_avx512(uint16_t *dst, const float *src,
                                            int64_t n) {
  for (; n >= 16; n -= 16, src += 16, dst += 16)
    _mm256_storeu_si256((__m256i *)dst,
                        (__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(src)));
  if (n > 0) {
    const __mmask16 m = (__mmask16)((1u << n) - 1);
    _mm256_mask_storeu_epi16(
        dst, m, (__m256i)_mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(m, src)));
  }
}

/* One tile with the row and vector counts compile-time constants once
 * inlined into the switch below, so the accumulators stay in registers;
 * each activation pair is a broadcast memory operand of `vdpbf16ps`. */
TK_BF16_TARGET static inline __attribute__((always_inline)) void
tile_avx512(const int R, const int NV, int64_t ntaps, int64_t kpairs,
            const uint16_t *a, int64_t a_rs, int64_t a_ts, const uint16_t *b,
            int64_t b_ts, tk_vec acc[TK_MR_MAX][TK_NV]) {
  __m512 c[TK_MR_MAX][TK_NV];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < NV; ++v)
      c[r][v] = _mm512_setzero_ps();
  for (int64_t t = 0; t < ntaps; ++t) {
    const uint16_t *bt = b + t * b_ts;
    const uint16_t *at = a + t * a_ts;
    for (int64_t k = 0; k < kpairs; ++k) {
      __m512bh bv[TK_NV];
      for (int v = 0; v < NV; ++v)
        bv[v] = (__m512bh)_mm512_loadu_si512(bt + (k * TK_NR + v * 16) * 2);
      for (int r = 0; r < R; ++r) {
        int32_t pair;
        memcpy(&pair, at + r * a_rs + 2 * k, sizeof pair);
        const __m512bh av = (__m512bh)_mm512_set1_epi32(pair);
        for (int v = 0; v < NV; ++v)
          c[r][v] = _mm512_dpbf16_ps(c[r][v], av, bv[v]);
      }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < NV; ++v)
      _mm512_storeu_ps((float *)&acc[r][v], c[r][v]);
}

#define BF_ARGS ntaps, kpairs, a, a_rs, a_ts, b, b_ts, acc
#define BF_CASE(R, NV)                                                         \
  case R:                                                                      \
    tile_avx512(R, NV, BF_ARGS);                                               \
    return;

/* Rows as TK_MR_FOR allows: 6 at 4 vectors, 8 at 3, 12 at 1 or 2. */
TK_BF16_TARGET static void
dispatch_avx512(int mr, int nv, int64_t ntaps, int64_t kpairs,
                const uint16_t *a, int64_t a_rs, int64_t a_ts,
                const uint16_t *b, int64_t b_ts,
                tk_vec acc[TK_MR_MAX][TK_NV]){TK_SWITCH_TILES(mr, nv, BF_CASE)}
#endif

#ifdef TK_HAVE_BF16_PATH
TK_BF16_TARGET
    static void round_rows_avx512(uint16_t *dst, int64_t dst_rs,
                                  const float *const *src, int64_t src_ts,
                                  int mr, int64_t ntaps, int64_t n) {
  for (int i = 0; i < mr; ++i) {
    uint16_t *d = dst + i * dst_rs;
    for (int64_t t = 0; t < ntaps; ++t)
      round_run_avx512(d + t * n, src[t * src_ts + i], n);
    if (ntaps * n % 2)
      d[ntaps * n] = 0;
  }
}
#endif

void tk_bf16_round_run(uint16_t *dst, const float *src, int64_t n,
                       int64_t sc) {
#ifdef TK_HAVE_BF16_PATH
  if (sc == 1 && tk_has_avx512bf16()) {
    round_run_avx512(dst, src, n);
    return;
  }
#endif
  for (int64_t c = 0; c < n; ++c)
    dst[c] = f32_to_bf16(src[c * sc]);
}

void tk_bf16_round_rows(uint16_t *dst, int64_t dst_rs,
                        const float *const *src, int64_t src_ts, int mr,
                        int64_t ntaps, int64_t n, int64_t sc) {
#ifdef TK_HAVE_BF16_PATH
  if (sc == 1 && tk_has_avx512bf16()) {
    round_rows_avx512(dst, dst_rs, src, src_ts, mr, ntaps, n);
    return;
  }
#endif
  for (int i = 0; i < mr; ++i) {
    uint16_t *d = dst + i * dst_rs;
    for (int64_t t = 0; t < ntaps; ++t) {
      const float *s = src[t * src_ts + i];
      for (int64_t c = 0; c < n; ++c)
        d[t * n + c] = f32_to_bf16(s[c * sc]);
    }
    if (ntaps * n % 2)
      d[ntaps * n] = 0;
  }
}

/* One row at a time, pairs widened to f32. */
static void tile_portable(int mr, int nv, int64_t ntaps, int64_t kpairs,
                          const uint16_t *a, int64_t a_rs, int64_t a_ts,
                          const uint16_t *b, int64_t b_ts,
                          tk_vec acc[TK_MR_MAX][TK_NV]) {
  const tk_ivec hi_mask = (tk_ivec){0} + (int)0xffff0000u;
  for (int r = 0; r < mr; ++r) {
    tk_vec c[TK_NV];
    for (int v = 0; v < nv; ++v)
      c[v] = tk_splat(0.0f);
    for (int64_t t = 0; t < ntaps; ++t) {
      const uint16_t *ar = a + r * a_rs + t * a_ts;
      const uint16_t *bt = b + t * b_ts;
      for (int64_t k = 0; k < kpairs; ++k) {
        const tk_vec a0 = tk_splat(bf16_to_f32(ar[2 * k]));
        const tk_vec a1 = tk_splat(bf16_to_f32(ar[2 * k + 1]));
        for (int v = 0; v < nv; ++v) {
          tk_ivec w;
          memcpy(&w, bt + (k * TK_NR + v * TK_VW) * 2, sizeof w);
          c[v] += a0 * (tk_vec)(w << 16) + a1 * (tk_vec)(w & hi_mask);
        }
      }
    }
    for (int v = 0; v < nv; ++v)
      acc[r][v] = c[v];
  }
}

void tk_bf16_tile(int mr, int nv, int64_t ntaps, int64_t kpairs,
                  const uint16_t *a, int64_t a_rs, int64_t a_ts,
                  const uint16_t *b, int64_t b_ts,
                  tk_vec acc[TK_MR_MAX][TK_NV]) {
#ifdef TK_HAVE_BF16_PATH
  if (tk_has_avx512bf16()) {
    dispatch_avx512(mr, nv, ntaps, kpairs, a, a_rs, a_ts, b, b_ts, acc);
    return;
  }
#endif
  tile_portable(mr, nv, ntaps, kpairs, a, a_rs, a_ts, b, b_ts, acc);
}
