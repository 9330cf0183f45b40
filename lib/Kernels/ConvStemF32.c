/* ConvStemF32.c - stems vectorized over output pixels (ConvStemF32.h). */
#include "ConvStemF32.h"
#include "CpuFeatures.h"
#include "ThreadPool.h"
#include "Vector.h"

#include <stdlib.h>

#if TK_VW == 16 && defined(__AVX512F__)
#define SP 16       /* output pixels per vector */
#define FB 16       /* filters per block: 16 accumulators */
#define STEM_K 64   /* KH * KW * C at most: beyond, the GEMM tiles run well */

typedef struct {
  int64_t OH, OW, F, KH, KW, C, H, W, pad_top, pad_left, sh, sw, K;
  const float *in;
  int64_t in_sn, in_sh, in_sw;
  const float *wp;
  int64_t wp_sn;
  float *out;
  int64_t out_sn, out_sh, out_sw;
  const float *bias;
  float lo, hi;
  int has_lo, has_hi;
  /* Columns of one phase row: every column a vector of the row reads. */
  int64_t JW;
  /* The input deinterleaved by column phase, once per call: plane row
   * r = ih + pad_top (zeros above, below and beside the image), channel
   * c, phase ph, column j at ((r * C + c) * sw + ph) * JW + j holds input
   * column j * sw + ph - pad_left. Image n's planes are nplane floats on. */
  float *planes;
  int64_t prows, nplane;
  /* Per product k = (kh * KW + kw) * C + c, where its 16 pixels' inputs
   * start in the phase rows (relative to the tile's first pixel). */
  int64_t off[STEM_K];
} stem_t;

/* The 16 x 16 transpose: r[i][j] -> r[j][i] (48 + 16 shuffles). */
TK_INLINE void transpose16(__m512 r[16]) {
  __m512 t[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  __m512 u[16];
  for (int g = 0; g < 4; ++g) {
    const __m512d a = _mm512_castps_pd(t[4 * g]), b = _mm512_castps_pd(t[4 * g + 1]),
                  c = _mm512_castps_pd(t[4 * g + 2]), d = _mm512_castps_pd(t[4 * g + 3]);
    u[4 * g] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
    u[4 * g + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
    u[4 * g + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
    u[4 * g + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
  }
  /* u[4g + q], 128-bit lane L: rows 4g..4g+3 of column 4L + q. */
  for (int q = 0; q < 4; ++q) {
    const __m512 v0 = _mm512_shuffle_f32x4(u[q], u[4 + q], 0x88),
                 v1 = _mm512_shuffle_f32x4(u[q], u[4 + q], 0xDD),
                 w0 = _mm512_shuffle_f32x4(u[8 + q], u[12 + q], 0x88),
                 w1 = _mm512_shuffle_f32x4(u[8 + q], u[12 + q], 0xDD);
    r[q] = _mm512_shuffle_f32x4(v0, w0, 0x88);
    r[8 + q] = _mm512_shuffle_f32x4(v0, w0, 0xDD);
    r[4 + q] = _mm512_shuffle_f32x4(v1, w1, 0x88);
    r[12 + q] = _mm512_shuffle_f32x4(v1, w1, 0xDD);
  }
}

/* Filters [f0, f0 + fb) of pixels [ow0, ow0 + cnt) of one output row, fb
 * a compile-time constant once inlined. The products run in k order, as
 * the GEMM tiles sum them; then bias and clamp, as their epilogue. */
TK_INLINE void stem_block(const stem_t *s, const float *rb, const float *w,
                          int64_t ow0, int cnt, int64_t f0, const int fb,
                          float *orow) {
  __m512 acc[FB];
  for (int f = 0; f < FB; ++f)
    acc[f] = _mm512_setzero_ps();
  const float *x0 = rb + ow0;
  for (int64_t k = 0; k < s->K; ++k) {
    const __m512 x = _mm512_loadu_ps(x0 + s->off[k]);
    const float *wk = w + k * TK_NR;
    for (int f = 0; f < fb; ++f)
      acc[f] = _mm512_fmadd_ps(_mm512_set1_ps(wk[f]), x, acc[f]);
  }
  for (int f = 0; f < fb; ++f) {
    tk_vec v = (tk_vec)acc[f];
    if (s->bias)
      v += tk_splat(s->bias[f0 + f]);
    if (s->has_lo)
      v = tk_max(v, tk_splat(s->lo));
    if (s->has_hi)
      v = tk_min(v, tk_splat(s->hi));
    acc[f] = (__m512)v;
  }
  transpose16(acc);
  const __mmask16 m = (__mmask16)((1u << fb) - 1);
  for (int i = 0; i < cnt; ++i)
    _mm512_mask_storeu_ps(orow + (ow0 + i) * s->out_sw + f0, m, acc[i]);
}

/* One plane row (task = n * prows + r): input row r - pad_top of image n,
 * deinterleaved; zeros outside the image. */
static void stem_planes(void *arg, int64_t task) {
  const stem_t *s = (const stem_t *)arg;
  const int64_t n = task / s->prows, r = task % s->prows;
  const int64_t ih = r - s->pad_top, S = s->sw;
  float *row = s->planes + n * s->nplane + r * s->C * S * s->JW;
  const float *src = s->in + n * s->in_sn + ih * s->in_sh;
  for (int64_t c = 0; c < s->C; ++c)
    for (int64_t ph = 0; ph < S; ++ph) {
      float *dst = row + (c * S + ph) * s->JW;
      /* Columns j with 0 <= j * S + ph - pad_left < W. */
      int64_t j0 = 0, j1 = 0;
      if (ih >= 0 && ih < s->H) {
        j0 = s->pad_left - ph > 0 ? (s->pad_left - ph + S - 1) / S : 0;
        j1 = (s->W - 1 + s->pad_left - ph) / S + 1;
        j1 = j1 < s->JW ? j1 : s->JW;
        j0 = j0 < j1 ? j0 : j1;
      }
      for (int64_t j = 0; j < j0; ++j)
        dst[j] = 0.0f;
      const float *p = src + (j0 * S + ph - s->pad_left) * s->in_sw + c;
      for (int64_t j = j0; j < j1; ++j, p += S * s->in_sw)
        dst[j] = *p;
      for (int64_t j = j1; j < s->JW; ++j)
        dst[j] = 0.0f;
    }
}

/* One output row (task = n * OH + oh): its pixel vectors, 16 filters at a
 * time, from the plane rows oh * sh .. oh * sh + KH - 1. */
static void stem_row(void *arg, int64_t task) {
  const stem_t *s = (const stem_t *)arg;
  const int64_t n = task / s->OH, oh = task % s->OH;
  const float *rb =
      s->planes + n * s->nplane + oh * s->sh * s->C * s->sw * s->JW;
  float *orow = s->out + n * s->out_sn + oh * s->out_sh;
  const float *w_n = s->wp + n * s->wp_sn;
  for (int64_t ow0 = 0; ow0 < s->OW; ow0 += SP) {
    const int cnt = s->OW - ow0 < SP ? (int)(s->OW - ow0) : SP;
    for (int64_t f0 = 0; f0 < s->F; f0 += FB) {
      const int fb = s->F - f0 < FB ? (int)(s->F - f0) : FB;
      /* Packed panels of TK_NR filters: k's row of the panel holding f0. */
      const float *w = w_n + (f0 / TK_NR) * s->K * TK_NR + f0 % TK_NR;
      switch (fb) {
#define STEM_CASE(FBV)                                                         \
  case FBV:                                                                    \
    stem_block(s, rb, w, ow0, cnt, f0, FBV, orow);                             \
    break;
        STEM_CASE(1) STEM_CASE(2) STEM_CASE(3) STEM_CASE(4) STEM_CASE(5)
        STEM_CASE(6) STEM_CASE(7) STEM_CASE(8) STEM_CASE(9) STEM_CASE(10)
        STEM_CASE(11) STEM_CASE(12) STEM_CASE(13) STEM_CASE(14)
        STEM_CASE(15) STEM_CASE(16)
#undef STEM_CASE
      }
    }
  }
}
#endif

int tk_conv_stem_f32(int64_t N, int64_t OH, int64_t OW, int64_t F, int64_t KH,
                     int64_t KW, int64_t C, int64_t H, int64_t W,
                     int64_t pad_top, int64_t pad_left, const float *in,
                     int64_t in_sn, int64_t in_sh, int64_t in_sw,
                     int64_t in_sc, int64_t stride_h, int64_t stride_w,
                     int64_t dil_h, int64_t dil_w, const float *wp,
                     int64_t wp_sn, float *out, int64_t out_sn, int64_t out_sh,
                     int64_t out_sw, int64_t out_sf, const float *bias,
                     float lo, float hi, int accumulate) {
#if TK_VW == 16 && defined(__AVX512F__)
  const int64_t K = KH * KW * C;
  if (accumulate || C > 4 || KH * KW < 2 || K > STEM_K || F < 1 ||
      stride_h < 1 || stride_h > 2 || stride_w < 1 || stride_w > 2 ||
      dil_h != 1 || dil_w != 1 || in_sc != 1 || in_sw != C || out_sf != 1 ||
      N <= 0 || OH <= 0 || OW <= 0 || tk_env_flag("TESSEL_KERNELS_NO_STEM"))
    return 0;
  stem_t *s = (stem_t *)malloc(sizeof(stem_t));
  if (!s)
    abort(); /* out of memory: nothing sane to return */
  s->OH = OH, s->OW = OW, s->F = F, s->KH = KH, s->KW = KW, s->C = C;
  s->H = H, s->W = W, s->pad_top = pad_top, s->pad_left = pad_left;
  s->sh = stride_h, s->sw = stride_w, s->K = K;
  s->in = in, s->in_sn = in_sn, s->in_sh = in_sh, s->in_sw = in_sw;
  s->wp = wp, s->wp_sn = wp_sn;
  s->out = out, s->out_sn = out_sn, s->out_sh = out_sh, s->out_sw = out_sw;
  s->bias = bias, s->lo = lo, s->hi = hi;
  /* A clamp to an infinite bound changes nothing (tk_max / tk_min keep
   * NaN either way). */
  s->has_lo = lo > -INFINITY, s->has_hi = hi < INFINITY;
  s->JW = (OW + SP - 1) / SP * SP + (KW - 1) / stride_w + 1;
  for (int64_t kh = 0; kh < KH; ++kh)
    for (int64_t kw = 0; kw < KW; ++kw)
      for (int64_t c = 0; c < C; ++c)
        s->off[(kh * KW + kw) * C + c] =
            ((kh * C + c) * stride_w + kw % stride_w) * s->JW + kw / stride_w;
  /* Plane rows: every input row a window reads, and the padding rows. */
  const int64_t need = (OH - 1) * stride_h + KH;
  s->prows = need > H + pad_top ? need : H + pad_top;
  s->nplane = s->prows * C * stride_w * s->JW;
  s->planes = (float *)malloc(sizeof(float) * (size_t)(N * s->nplane));
  if (!s->planes)
    abort(); /* out of memory: nothing sane to return */
  const int threads = tk_threads_for(N * OH * OW * F * K);
  tk_parallel_for_on(threads, N * s->prows, stem_planes, s);
  tk_parallel_for_on(threads, N * OH, stem_row, s);
  free(s->planes);
  free(s);
  return 1;
#else
  (void)N, (void)OH, (void)OW, (void)F, (void)KH, (void)KW, (void)C, (void)H;
  (void)W, (void)pad_top, (void)pad_left, (void)in, (void)in_sn, (void)in_sh;
  (void)in_sw, (void)in_sc, (void)stride_h, (void)stride_w, (void)dil_h;
  (void)dil_w, (void)wp, (void)wp_sn, (void)out, (void)out_sn, (void)out_sh;
  (void)out_sw, (void)out_sf, (void)bias, (void)lo, (void)hi, (void)accumulate;
  return 0;
#endif
}
