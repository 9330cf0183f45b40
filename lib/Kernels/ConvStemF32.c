/* ConvStemF32.c - stems vectorized over output pixels (ConvStemF32.h). */
#include "ConvStemF32.h"
#include "CpuFeatures.h"
#include "ThreadPool.h"
#include "Vector.h"
#include "tessel/Kernels/tessel_kernels.h"

#include <stdlib.h>
#include <string.h>

#if TK_VW == 16 && defined(__AVX512F__)
#define SP 16       /* output pixels per vector */
#define FB 12       /* filters per block: 12 x PV accumulators */
#define PV 2        /* vectors of output pixels per block */
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
  /* Deinterleaving 16 pixels (G = C * sw floats each, G vectors) into the
   * G plane rows: plane o = ph * C + c takes float j * G + o of them, from
   * the pair of vectors (2i, 2i + 1) at index pidx[o][i][j] for the lanes
   * j of pmask[o][i]. */
  int32_t pidx[2 * 4][4][SP];
  __mmask16 pmask[2 * 4][4];
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

/* Filters [f0, f0 + fb) of pixels [ow0, ow0 + cnt) of one output row, in
 * pv vectors of 16 pixels (cnt <= 16 * pv); fb and pv compile-time
 * constants once inlined. Per product k: pv input vectors and fb
 * broadcast weights, pv * fb FMAs (2 x 12: 14 loads per 24 FMAs, where
 * one vector of 16 filters took 17 per 16). The products run in k order,
 * as the GEMM tiles sum them; then bias and clamp, as their epilogue. */
TK_INLINE void stem_block(const stem_t *s, const float *rb, const float *w,
                          int64_t ow0, int cnt, int64_t f0, const int fb,
                          const int pv, float *orow) {
  __m512 acc[2][16];
  for (int p = 0; p < pv; ++p)
    for (int f = 0; f < 16; ++f)
      acc[p][f] = _mm512_setzero_ps();
  const float *x0 = rb + ow0;
  for (int64_t k = 0; k < s->K; ++k) {
    __m512 x[2];
    for (int p = 0; p < pv; ++p)
      x[p] = _mm512_loadu_ps(x0 + s->off[k] + p * SP);
    const float *wk = w + k * TK_NR;
    for (int f = 0; f < fb; ++f) {
      const __m512 wf = _mm512_set1_ps(wk[f]);
      for (int p = 0; p < pv; ++p)
        acc[p][f] = _mm512_fmadd_ps(wf, x[p], acc[p][f]);
    }
  }
  const __mmask16 m = (__mmask16)((1u << fb) - 1);
  for (int p = 0; p < pv; ++p) {
    for (int f = 0; f < fb; ++f) {
      tk_vec v = (tk_vec)acc[p][f];
      if (s->bias)
        v += tk_splat(s->bias[f0 + f]);
      if (s->has_lo)
        v = tk_max(v, tk_splat(s->lo));
      if (s->has_hi)
        v = tk_min(v, tk_splat(s->hi));
      acc[p][f] = (__m512)v;
    }
    transpose16(acc[p]);
    const int n = cnt - p * SP < SP ? cnt - p * SP : SP;
    for (int i = 0; i < n; ++i)
      _mm512_mask_storeu_ps(orow + (ow0 + p * SP + i) * s->out_sw + f0, m,
                            acc[p][i]);
  }
}

/* Plane row columns [jv0, JW) by vector permutes, 16 at a time, C and S
 * compile-time constants once inlined: loads stop at the input row's end
 * (the lanes after it, the padding, load as zeros) and stores at JW. */
TK_INLINE void plane_blocks(const stem_t *s, const float *src, float *row,
                            int64_t jv0, const int C, const int S) {
  const int G = C * S;
  for (int64_t jb = jv0; jb < s->JW; jb += SP) {
    const int64_t first = (jb * S - s->pad_left) * C;
    const int64_t avail = s->W * C - first; /* floats left in the row */
    __m512 v[8];
    for (int i = 0; i < G; ++i) {
      const int64_t n = avail - i * SP;
      v[i] = _mm512_maskz_loadu_ps(
          n >= SP ? (__mmask16)0xffff : (__mmask16)(n > 0 ? (1u << n) - 1 : 0),
          src + first + i * SP);
    }
    const int64_t cols = s->JW - jb;
    const __mmask16 m =
        cols >= SP ? (__mmask16)0xffff : (__mmask16)((1u << cols) - 1);
    for (int c = 0; c < C; ++c)
      for (int ph = 0; ph < S; ++ph) {
        const int o = ph * C + c;
        __m512 x = _mm512_setzero_ps();
        for (int i = 0; 2 * i < G; ++i) {
          const __m512 hi = 2 * i + 1 < G ? v[2 * i + 1] : v[2 * i];
          x = _mm512_mask_mov_ps(
              x, s->pmask[o][i],
              _mm512_permutex2var_ps(v[2 * i],
                                     _mm512_loadu_si512(s->pidx[o][i]), hi));
        }
        _mm512_mask_storeu_ps(row + (c * S + ph) * s->JW + jb, m, x);
      }
  }
}

/* One plane row (task = n * prows + r): input row r - pad_top of image n,
 * deinterleaved; zeros outside the image. The columns from the first
 * whose pixels are all at or right of the image's left edge go by vector
 * permutes (scalar, a third of a 3x3/2 stem's time went into this copy),
 * the few before it one by one. */
static void stem_planes(void *arg, int64_t task) {
  const stem_t *s = (const stem_t *)arg;
  const int64_t n = task / s->prows, r = task % s->prows;
  const int64_t ih = r - s->pad_top, S = s->sw, G = s->C * S;
  float *row = s->planes + n * s->nplane + r * G * s->JW;
  if (ih < 0 || ih >= s->H) {
    memset(row, 0, sizeof(float) * (size_t)(G * s->JW));
    return;
  }
  const float *src = s->in + n * s->in_sn + ih * s->in_sh;
  const int64_t jv0 = (s->pad_left + S - 1) / S;
  const int64_t jl = jv0 < s->JW ? jv0 : s->JW;
  for (int64_t c = 0; c < s->C; ++c)
    for (int64_t ph = 0; ph < S; ++ph) {
      float *dst = row + (c * S + ph) * s->JW;
      for (int64_t j = 0; j < jl; ++j) {
        const int64_t iw = j * S + ph - s->pad_left;
        dst[j] = iw >= 0 && iw < s->W ? src[iw * s->in_sw + c] : 0.0f;
      }
    }
  switch (s->C * 2 + S - 1) {
#define PLANES_CASE(CV, SV)                                                    \
  case CV * 2 + SV - 1:                                                        \
    plane_blocks(s, src, row, jl, CV, SV);                                     \
    break;
    PLANES_CASE(1, 1)
    PLANES_CASE(1, 2) PLANES_CASE(2, 1) PLANES_CASE(2, 2) PLANES_CASE(3, 1)
        PLANES_CASE(3, 2) PLANES_CASE(4, 1) PLANES_CASE(4, 2)
#undef PLANES_CASE
  }
}

/* stem_block with fb and pv as constants. */
static void stem_any(const stem_t *s, const float *rb, const float *w,
                     int64_t ow0, int cnt, int64_t f0, int fb, float *orow) {
  const int pv = cnt > SP ? 2 : 1;
  switch (fb * 2 + pv - 1) {
#define STEM_CASE(FBV)                                                         \
  case FBV * 2:                                                                \
    stem_block(s, rb, w, ow0, cnt, f0, FBV, 1, orow);                          \
    return;                                                                    \
  case FBV * 2 + 1:                                                            \
    stem_block(s, rb, w, ow0, cnt, f0, FBV, 2, orow);                          \
    return;
    STEM_CASE(1)
    STEM_CASE(2) STEM_CASE(3) STEM_CASE(4) STEM_CASE(5) STEM_CASE(6)
        STEM_CASE(7) STEM_CASE(8) STEM_CASE(9) STEM_CASE(10) STEM_CASE(11)
            STEM_CASE(12)
#undef STEM_CASE
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
  for (int64_t ow0 = 0; ow0 < s->OW; ow0 += PV * SP) {
    const int cnt = s->OW - ow0 < PV * SP ? (int)(s->OW - ow0) : PV * SP;
    /* Per packed panel of TK_NR filters, blocks of at most FB filters, as
     * even as they come (24: 12 + 12, not 12 + 12 at 16 + 8's cost). */
    for (int64_t p0 = 0; p0 < s->F; p0 += TK_NR) {
      const int64_t fp = s->F - p0 < TK_NR ? s->F - p0 : TK_NR;
      const int64_t nfb = (fp + FB - 1) / FB, fbw = (fp + nfb - 1) / nfb;
      const float *w = w_n + p0 * s->K;
      for (int64_t b0 = 0; b0 < fp; b0 += fbw)
        stem_any(s, rb, w + b0, ow0, cnt, p0 + b0,
                 fp - b0 < fbw ? (int)(fp - b0) : (int)fbw, orow);
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
  s->JW = (OW + PV * SP - 1) / (PV * SP) * (PV * SP) + (KW - 1) / stride_w + 1;
  for (int64_t kh = 0; kh < KH; ++kh)
    for (int64_t kw = 0; kw < KW; ++kw)
      for (int64_t c = 0; c < C; ++c)
        s->off[(kh * KW + kw) * C + c] =
            ((kh * C + c) * stride_w + kw % stride_w) * s->JW + kw / stride_w;
  for (int64_t o = 0; o < C * stride_w; ++o)
    for (int i = 0; i < 4; ++i) {
      s->pmask[o][i] = 0;
      for (int j = 0; j < SP; ++j) {
        const int64_t at = j * C * stride_w + o;
        s->pidx[o][i][j] = (int32_t)(at & 31);
        if (at / 32 == i)
          s->pmask[o][i] |= (__mmask16)(1u << j);
      }
    }
  /* Plane rows: every input row a window reads, and the padding rows. */
  const int64_t need = (OH - 1) * stride_h + KH;
  s->prows = need > H + pad_top ? need : H + pad_top;
  s->nplane = s->prows * C * stride_w * s->JW;
  /* From the artifacts' caching allocator: the planes of a 224 x 224
   * image are 0.7 MB, which malloc maps afresh on every call (and both
   * threads of two then fault its pages in under one lock). */
  s->planes = (float *)_mlir_memref_to_llvm_aligned_alloc(
      64, sizeof(float) * (size_t)(N * s->nplane));
  if (!s->planes)
    abort(); /* out of memory: nothing sane to return */
  /* In bands: a thread lays out the plane rows of about the output rows
   * it then computes, which stay in its core's cache. Handed out one by
   * one, each output row read plane rows of both threads (Zen 5, two
   * vCPUs on different CCDs: 224 x 224 x 3 -> 16, 3x3 stride 2, 132 us
   * on one thread, 241 us on two). */
  const int threads = tk_threads_for(N * OH * OW * F * K);
  tk_parallel_for_bands(threads, N * s->prows, 1, stem_planes, s);
  tk_parallel_for_bands(threads, N * OH, 1, stem_row, s);
  _mlir_memref_to_llvm_free(s->planes);
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
