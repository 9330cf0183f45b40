/* FlatTilesF32.h - the pointwise GEMM's narrow-panel tiles (AVX-512).
 *
 * A 1x1 convolution or a matmul reads its rows at one stride from the input
 * and writes them at one stride to the output ("flat" in ConvGemmF32.c), so
 * a tile needs neither the per-tap row pointer table, the padding-run scan,
 * nor the accumulators' round trip through memory that the implicit-GEMM
 * tiles make. That overhead is paid once per tile: next to a reduction of
 * 16-72 channels (MnasNet's and ShuffleNet's 1x1 layers of 16-72 output
 * channels at 56x56-112x112) it cost a third of the tile's time (138-160
 * GFLOP/s of Zen 5's 264). Here the accumulators stay in registers through
 * the epilogue ((+ C) (+ bias) (clamp), the panel's last vector masked).
 *
 * Only the panels narrower than the 6 x 64 asm tile's (nv < 4 vectors),
 * the full ones under a short reduction, and the rows after the last full
 * 6-row tile come here; ConvGemmF32.c decides. */
#ifndef TESSEL_KERNELS_FLATTILESF32_H
#define TESSEL_KERNELS_FLATTILESF32_H

#include "Vector.h"

#if TK_VW == 16 && defined(__AVX512F__)
#define TK_HAVE_FLAT_TILES 1

/* c[i * cs + f] (+)= sum_k a[i * as + k] * b[k * TK_NR + f] for the tile's
 * mr rows and the panel's nr <= nv * 16 columns, then the epilogue. mr and
 * nv are constants at every call, so the mr x nv sums are registers. */
TK_INLINE void flat_tile(const int mr, const int nv, int nr, int64_t kc,
                         const float *a, int64_t as, const float *b, float *c,
                         int64_t cs, int load_c, int last, const float *bias,
                         int clamp, float lo, float hi) {
  tk_vec acc[TK_MR_MAX][TK_NV];
  /* Every loop over rows or vectors unrolled in full (TK_UNROLL). */
  TK_UNROLL
  for (int i = 0; i < mr; ++i)
    TK_UNROLL
    for (int v = 0; v < nv; ++v)
      acc[i][v] = tk_splat(0.0f);
  for (int64_t k = 0; k < kc; ++k) {
    tk_vec bv[TK_NV];
    TK_UNROLL
    for (int v = 0; v < nv; ++v)
      bv[v] = tk_load(b + k * TK_NR + v * TK_VW);
    TK_UNROLL
    for (int i = 0; i < mr; ++i) {
      const tk_vec x = tk_splat(a[i * as + k]);
      TK_UNROLL
      for (int v = 0; v < nv; ++v)
        acc[i][v] += x * bv[v];
    }
  }
  /* The last vector is whole or the panel's F % 16 columns: a mask for
   * both (an all-ones masked move costs what a plain one does). */
  const int tail = nr - (nv - 1) * TK_VW;
  const __mmask16 m = (__mmask16)(tail >= TK_VW ? 0xffffu
                                                : (1u << tail) - 1);
  TK_UNROLL
  for (int i = 0; i < mr; ++i) {
    float *ci = c + i * cs;
    TK_UNROLL
    for (int v = 0; v < nv; ++v) {
      const __mmask16 mv = v == nv - 1 ? m : (__mmask16)0xffff;
      tk_vec r = acc[i][v];
      if (load_c)
        r += (tk_vec)_mm512_maskz_loadu_ps(mv, ci + v * TK_VW);
      if (last && bias)
        r += (tk_vec)_mm512_maskz_loadu_ps(mv, bias + v * TK_VW);
      if (last && clamp)
        r = tk_min(tk_max(r, tk_splat(lo)), tk_splat(hi));
      _mm512_mask_storeu_ps(ci + v * TK_VW, mv, (__m512)r);
    }
  }
}

#define FT_ARGS nr, kc, a, as, b, c, cs, load_c, last, bias, clamp, lo, hi
#define FT_CASE(MR, NV)                                                        \
  case MR:                                                                     \
    flat_tile(MR, NV, FT_ARGS);                                                \
    return;

/* One tile of mr <= TK_MR_FOR(nv) rows. */
static void flat_dispatch(int mr, int nv, int nr, int64_t kc, const float *a,
                          int64_t as, const float *b, float *c, int64_t cs,
                          int load_c, int last, const float *bias, int clamp,
                          float lo, float hi) {
  TK_SWITCH_TILES(mr, nv, FT_CASE)
}
#undef FT_CASE
#undef FT_ARGS
#endif

#endif
