/* GroupedConvF32.c - NHWC grouped convolution whose groups have as many
 * input as output channels, fg = 2..16 of each (ResNeXt's and RegNet's
 * 3x3 convolutions): tessel_kernel_grouped_conv2d_nhwc_f32 (Kernels.td).
 *
 * A group this narrow leaves a GEMM micro-kernel's panel mostly empty (fg
 * of its 64 columns), and one call per group pays the calls too. Here a
 * vector holds L / fg whole groups of channels, in the output's order, and
 * with the input's channels in the same order:
 *
 *   out[g, f] = sum_j in[g, j] * W[g, f, j]      (j: the group's inputs)
 *
 * Lane (g, j) of the input vector meets every output of its group once
 * over fg rotations r: acc_r[g, j] += in[g, j] * W[g, (j + r) % fg, j], so
 * out[g, f] = sum_r acc_r[g, (f - r) % fg]. The products take the input
 * vector as it lies in memory (no shuffles, fg FMAs per load); the fg - 1
 * permutes that line the sums up are paid once per output vector, after
 * all KH*KW taps.
 *
 * The filter comes packed (Kernels.td): per tap, per block of L channels,
 * per rotation, one vector of L lanes. Zero padding is implicit: rows of
 * taps outside the input are skipped, and output columns whose taps would
 * leave the input on the left or right take a one-pixel path that skips
 * those taps. Tasks are runs of output rows. */
#include "ThreadPool.h"
#include "Vector.h"

#if defined(__AVX__)
#include <immintrin.h>
#endif

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define L TESSEL_KERNEL_GROUP_LANES

typedef struct {
  int64_t OH, OW, F, G, fg, KH, KW, H, W, pt, pl, sh, sw, dh, dw;
  const float *in;
  int64_t in_sn, in_sh, in_sw, in_sc;
  const float *wp;
  float *out;
  int64_t out_sn, out_sh, out_sw, out_sf;
  const float *bias;
  float lo, hi;
  int accumulate, clamp;
  int cmajor; /* the filter's packing: c-major rows, else rotated */
  /* Output columns [ow_lo, ow_hi) read every kw tap inside the input. */
  int64_t ow_lo, ow_hi;
  tk_ivec rot[16]; /* rot[r]: lane (g, f) <- lane (g, (f - r) % fg) */
} gc_job_t;

/* v with lane i taken from lane idx[i]. */
TK_INLINE tk_vec permute(tk_vec v, tk_ivec idx) {
#if TK_VW == 16
  return (tk_vec)_mm512_permutexvar_ps((__m512i)idx, (__m512)v);
#elif TK_VW == 8 && defined(__AVX2__)
  return (tk_vec)_mm256_permutevar8x32_ps((__m256)v, (__m256i)idx);
#else
  tk_vec r;
  for (int i = 0; i < TK_VW; ++i)
    r[i] = v[idx[i]];
  return r;
#endif
}

/* The rotated sums acc[0 .. FG) folded into one vector. */
TK_INLINE tk_vec fold(const gc_job_t *j, const tk_vec *acc, const int FG) {
  tk_vec v = acc[0];
  for (int r = 1; r < FG; ++r)
    v += permute(acc[r], j->rot[r]);
  return v;
}

/* The TK_VW channels from c0 of the output pixel at `o`, with the
 * epilogue; lanes from `lanes` on (and past F) are neither read nor
 * written. */
TK_INLINE void finish_n(const gc_job_t *j, tk_vec v, float *o, int64_t c0,
                        int64_t lanes) {
  int64_t n = j->F - c0 < TK_VW ? j->F - c0 : TK_VW;
  n = n < lanes ? n : lanes;
  float *dst = o + c0;
  if (n == TK_VW) {
    if (j->accumulate)
      v += tk_load(dst);
    if (j->bias)
      v += tk_load(j->bias + c0);
    if (j->clamp)
      v = tk_min(tk_max(v, tk_splat(j->lo)), tk_splat(j->hi));
    tk_store(dst, v);
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    float x = v[i];
    if (j->accumulate)
      x += dst[i];
    if (j->bias)
      x += j->bias[c0 + i];
    dst[i] = j->clamp ? tk_clamp_scalar(x, j->lo, j->hi) : x;
  }
}

TK_INLINE void finish(const gc_job_t *j, tk_vec v, float *o, int64_t c0) {
  finish_n(j, v, o, c0, TK_VW);
}

/* TK_VW channels of `p` from vector q: lanes past F read as zero (the
 * last pixel's would be past the buffer). */
TK_INLINE tk_vec load_in(const gc_job_t *j, const float *p, int64_t q) {
  const int64_t c0 = q * TK_VW;
  if (c0 + TK_VW <= j->F)
    return tk_load(p + c0);
  float t[TK_VW] = {0};
  memcpy(t, p + c0, (size_t)(j->F - c0) * sizeof(float));
  return tk_load(t);
}

/* The packed weight vector of tap t, vector q, rotation r. */
TK_INLINE const float *wvec(const gc_job_t *j, int64_t t, int64_t q,
                            int64_t r) {
  const int64_t nb = (j->F + L - 1) / L, b = q * TK_VW / L,
                half = q * TK_VW % L;
  return j->wp + ((t * nb + b) * j->fg + r) * L + half;
}

/* The taps of an output row whose input row is inside: where each reads,
 * from the row's first input column, and which it is (kh * KW + kw). */
typedef struct {
  int64_t n;
  int64_t *in_off, *tap;
} taps_t;

/* T output pixels from column ow0 (all kw taps inside the input) of row
 * `x0` (its input at ow0's first tap column), vector q (whole: q * TK_VW +
 * TK_VW <= F), FG rotations: T * FG accumulators in registers, each input
 * vector loaded once for its FG FMAs. One flat loop over the row's taps,
 * which keeps the accumulators in place (nested kh/kw loops had clang
 * copy all of them between registers every tap). */
TK_INLINE void tile(const gc_job_t *j, const taps_t *tp, const float *x0,
                    float *o, int64_t q, const int FG, const int T) {
  tk_vec acc[24];
  for (int i = 0; i < T * FG; ++i)
    acc[i] = (tk_vec){0};
  const int64_t nb = (j->F + L - 1) / L;
  const float *wq = j->wp + (q * TK_VW / L * FG) * L + q * TK_VW % L;
  const float *xq = x0 + q * TK_VW;
  const int64_t xstep = j->sw * j->in_sw;
  for (int64_t t = 0; t < tp->n; ++t) {
    const float *px = xq + tp->in_off[t];
    const float *wt = wq + tp->tap[t] * nb * FG * L;
    tk_vec w[16];
    for (int r = 0; r < FG; ++r)
      w[r] = tk_load(wt + r * L);
    for (int p = 0; p < T; ++p) {
      const tk_vec x = tk_load(px + p * xstep);
      for (int r = 0; r < FG; ++r)
        acc[p * FG + r] += x * w[r];
    }
  }
  for (int p = 0; p < T; ++p)
    finish(j, fold(j, acc + p * FG, FG), o + p * j->out_sw, q * TK_VW);
}

/* Whether tap (kh, kw) of output pixel (oh, ow) reads inside the input;
 * if so, *off is its input pixel's offset within an image. */
TK_INLINE int tap_inside(const gc_job_t *j, int64_t oh, int64_t ow,
                         int64_t kh, int64_t kw, int64_t *off) {
  const int64_t ih = oh * j->sh + kh * j->dh - j->pt,
                iw = ow * j->sw + kw * j->dw - j->pl;
  *off = ih * j->in_sh + iw * j->in_sw;
  return ih >= 0 && ih < j->H && iw >= 0 && iw < j->W;
}

/* One output pixel anywhere: taps outside the input skipped. */
TK_INLINE void pixel(const gc_job_t *j, int64_t n, int64_t oh, int64_t ow,
                     int64_t q, const int FG) {
  tk_vec acc[16];
  for (int r = 0; r < FG; ++r)
    acc[r] = (tk_vec){0};
  const float *img = j->in + n * j->in_sn;
  int64_t off;
  for (int64_t kh = 0; kh < j->KH; ++kh)
    for (int64_t kw = 0; kw < j->KW; ++kw) {
      if (!tap_inside(j, oh, ow, kh, kw, &off))
        continue;
      const tk_vec x = load_in(j, img + off, q);
      for (int r = 0; r < FG; ++r)
        acc[r] += x * tk_load(wvec(j, kh * j->KW + kw, q, r));
    }
  finish(j, fold(j, acc, FG),
         j->out + n * j->out_sn + oh * j->out_sh + ow * j->out_sw, q * TK_VW);
}

/* Row (n, oh): tiles of T pixels over the interior columns, each over
 * every vector of channels (a pixel's vectors are neighbouring cache
 * lines), one-pixel steps elsewhere and for a part vector. */
#define ROW_FN(FG, T)                                                          \
  static void row_fg##FG(const gc_job_t *j, const taps_t *tp, int64_t n,      \
                         int64_t oh) {                                         \
    const int64_t nq = (j->F + TK_VW - 1) / TK_VW;                             \
    const int64_t nfull = j->F / TK_VW;                                        \
    const float *x0 = j->in + n * j->in_sn;                                    \
    float *o0 = j->out + n * j->out_sn + oh * j->out_sh;                       \
    int64_t ow = 0;                                                            \
    for (; ow < j->ow_lo; ++ow)                                                \
      for (int64_t q = 0; q < nq; ++q)                                         \
        pixel(j, n, oh, ow, q, FG);                                            \
    for (; ow + T <= j->ow_hi; ow += T) {                                      \
      const float *x = x0 + (ow * j->sw - j->pl) * j->in_sw;                   \
      for (int64_t q = 0; q < nfull; ++q)                                      \
        tile(j, tp, x, o0 + ow * j->out_sw, q, FG, T);                         \
    }                                                                          \
    for (; ow < j->ow_hi; ++ow) {                                              \
      const float *x = x0 + (ow * j->sw - j->pl) * j->in_sw;                   \
      for (int64_t q = 0; q < nfull; ++q)                                      \
        tile(j, tp, x, o0 + ow * j->out_sw, q, FG, 1);                         \
    }                                                                          \
    for (; ow < j->OW; ++ow)                                                   \
      for (int64_t q = 0; q < nq; ++q)                                         \
        pixel(j, n, oh, ow, q, FG);                                            \
    for (int64_t q = nfull; q < nq; ++q) /* a part vector */                   \
      for (ow = j->ow_lo; ow < j->ow_hi; ++ow)                                 \
        pixel(j, n, oh, ow, q, FG);                                            \
  }
/* T * FG accumulators: 24 of AVX-512's 32 registers, 12 of AVX2's 16 (8
 * with FG = 8: the weights need registers too). */
#if TK_VW == 16
ROW_FN(2, 12)
ROW_FN(4, 6)
ROW_FN(8, 2)
ROW_FN(16, 1)
#elif TK_VW == 8
ROW_FN(2, 6)
ROW_FN(4, 3)
ROW_FN(8, 1)
#else
ROW_FN(2, 4)
ROW_FN(4, 2)
#endif
#undef ROW_FN

typedef void (*row_fn)(const gc_job_t *, const taps_t *, int64_t, int64_t);

/* Wide groups (fg of 16 or more, a multiple of 8): a GEMM per group, the
 * group's fg outputs across WV vectors (the last one part-used: 24 wide
 * on AVX-512), each input channel broadcast to them. The filter is packed
 * c-major in rows of fgp = fg rounded up to L, wp[((t*G + g)*fg + c)*fgp
 * + f] = W[g*fg + f][kh][kw][c] (zero for f >= fg), so that the outputs
 * of one input channel are one run of whole vectors. T pixels x WV
 * vectors of accumulators. */
TK_INLINE int64_t wide_row_floats(int64_t fg) { return (fg + L - 1) / L * L; }

TK_INLINE void wide_tile(const gc_job_t *j, const taps_t *tp, const float *x0,
                         float *o, int64_t g, const int WV, const int T) {
  tk_vec acc[24];
  for (int i = 0; i < T * WV; ++i)
    acc[i] = (tk_vec){0};
  const int64_t fg = j->fg, fgp = wide_row_floats(fg),
                xstep = j->sw * j->in_sw;
  const float *xg = x0 + g * fg;
  for (int64_t t = 0; t < tp->n; ++t) {
    const float *px = xg + tp->in_off[t];
    const float *wt = j->wp + (tp->tap[t] * j->G + g) * fg * fgp;
    for (int64_t c = 0; c < fg; ++c) {
      tk_vec w[4];
      for (int v = 0; v < WV; ++v)
        w[v] = tk_load(wt + c * fgp + v * TK_VW);
      for (int p = 0; p < T; ++p) {
        const tk_vec x = tk_splat(px[p * xstep + c]);
        for (int v = 0; v < WV; ++v)
          acc[p * WV + v] += x * w[v];
      }
    }
  }
  for (int p = 0; p < T; ++p)
    for (int v = 0; v < WV; ++v)
      finish_n(j, acc[p * WV + v], o + p * j->out_sw, g * fg + v * TK_VW,
               fg - v * TK_VW);
}

/* One output pixel of group g anywhere: taps outside the input skipped.
 * Four sums per output vector, a quarter of the input channels each: one
 * sum was one chain of KH*KW*fg dependent FMAs (144 for 3x3 and 16
 * channels, each waiting for the last), and the 2 border columns of a
 * 14-wide image took as long as its 12 interior ones. */
static void wide_pixel(const gc_job_t *j, int64_t n, int64_t oh, int64_t ow,
                       int64_t g) {
  const int64_t fg = j->fg, fgp = wide_row_floats(fg),
                nv = (fg + TK_VW - 1) / TK_VW;
  for (int64_t v0 = 0; v0 < nv; v0 += 4) {
    const int64_t nvv = nv - v0 < 4 ? nv - v0 : 4;
    tk_vec acc[4][4];
    for (int p = 0; p < 4; ++p)
      for (int v = 0; v < 4; ++v)
        acc[p][v] = (tk_vec){0};
    int64_t off;
    for (int64_t kh = 0; kh < j->KH; ++kh)
      for (int64_t kw = 0; kw < j->KW; ++kw) {
        if (!tap_inside(j, oh, ow, kh, kw, &off))
          continue;
        const float *x = j->in + n * j->in_sn + off + g * fg;
        const float *wt =
            j->wp + ((kh * j->KW + kw) * j->G + g) * fg * fgp + v0 * TK_VW;
        int64_t c = 0;
        for (; c + 4 <= fg; c += 4)
          for (int p = 0; p < 4; ++p)
            for (int64_t v = 0; v < nvv; ++v)
              acc[p][v] += tk_splat(x[c + p]) *
                           tk_load(wt + (c + p) * fgp + v * TK_VW);
        for (; c < fg; ++c)
          for (int64_t v = 0; v < nvv; ++v)
            acc[0][v] += tk_splat(x[c]) * tk_load(wt + c * fgp + v * TK_VW);
      }
    float *o = j->out + n * j->out_sn + oh * j->out_sh + ow * j->out_sw;
    for (int64_t v = 0; v < nvv; ++v)
      finish_n(j, (acc[0][v] + acc[1][v]) + (acc[2][v] + acc[3][v]), o,
               g * fg + (v0 + v) * TK_VW, fg - (v0 + v) * TK_VW);
  }
}

/* Row (n, oh) of wide groups: per group, tiles of T pixels over the
 * interior columns, one-pixel steps elsewhere. */
#define WIDE_FN(WV, T)                                                         \
  static void wide_row_v##WV(const gc_job_t *j, const taps_t *tp, int64_t n,  \
                             int64_t oh) {                                     \
    const float *x0 = j->in + n * j->in_sn;                                    \
    float *o0 = j->out + n * j->out_sn + oh * j->out_sh;                       \
    for (int64_t g = 0; g < j->G; ++g) {                                       \
      int64_t ow = 0;                                                          \
      for (; ow < j->ow_lo; ++ow)                                              \
        wide_pixel(j, n, oh, ow, g);                                           \
      for (; ow + T <= j->ow_hi; ow += T)                                      \
        wide_tile(j, tp, x0 + (ow * j->sw - j->pl) * j->in_sw,                 \
                  o0 + ow * j->out_sw, g, WV, T);                              \
      /* The rest of the interior in tiles of 2 and 1 (7x7 images: 5      */ \
      /* interior columns, none of them in a tile of 6).                  */ \
      for (; ow + 2 <= j->ow_hi; ow += 2)                                      \
        wide_tile(j, tp, x0 + (ow * j->sw - j->pl) * j->in_sw,                 \
                  o0 + ow * j->out_sw, g, WV, 2);                              \
      for (; ow < j->ow_hi; ++ow)                                              \
        wide_tile(j, tp, x0 + (ow * j->sw - j->pl) * j->in_sw,                 \
                  o0 + ow * j->out_sw, g, WV, 1);                              \
      for (; ow < j->OW; ++ow)                                                 \
        wide_pixel(j, n, oh, ow, g);                                           \
    }                                                                          \
  }
#if TK_VW == 16
WIDE_FN(1, 12)
WIDE_FN(2, 6)
WIDE_FN(4, 3)
#elif TK_VW == 8
WIDE_FN(2, 6)
WIDE_FN(3, 4)
WIDE_FN(4, 3)
#else
WIDE_FN(4, 2)
#endif
#undef WIDE_FN

/* Groups wider than a vector (fg = 16 without AVX-512, 8 with SSE only),
 * or channels that are not contiguous: plain loops. The compiler picks
 * neither (vector-bits decides fg). */
static void row_scalar(const gc_job_t *j, const taps_t *tp, int64_t n,
                       int64_t oh) {
  (void)tp;
  const int64_t nb = (j->F + L - 1) / L;
  for (int64_t ow = 0; ow < j->OW; ++ow)
    for (int64_t f = 0; f < j->F; ++f) {
      const int64_t g = f / j->fg, fl = f % j->fg;
      float s = 0.0f;
      int64_t off;
      for (int64_t kh = 0; kh < j->KH; ++kh)
        for (int64_t kw = 0; kw < j->KW; ++kw) {
          if (!tap_inside(j, oh, ow, kh, kw, &off))
            continue;
          const float *x = j->in + n * j->in_sn + off;
          const int64_t t = kh * j->KW + kw;
          for (int64_t c = 0; c < j->fg; ++c) {
            /* Narrow: W[g, fl, c] sits at rotation (fl - c) % fg, lane of
             * c. Wide: c-major. */
            const int64_t r = ((fl - c) % j->fg + j->fg) % j->fg;
            const int64_t lane = (g * j->fg + c) % L, b = (g * j->fg) / L;
            const float wv =
                j->cmajor
                    ? j->wp[((t * j->G + g) * j->fg + c) *
                                wide_row_floats(j->fg) +
                            fl]
                    : j->wp[((t * nb + b) * j->fg + r) * L + lane];
            s += x[(g * j->fg + c) * j->in_sc] * wv;
          }
        }
      float *o = j->out + n * j->out_sn + oh * j->out_sh + ow * j->out_sw +
                 f * j->out_sf;
      if (j->accumulate)
        s += *o;
      if (j->bias)
        s += j->bias[f];
      *o = j->clamp ? tk_clamp_scalar(s, j->lo, j->hi) : s;
    }
}

typedef struct {
  const gc_job_t *j;
  row_fn fn;
} gc_task_t;

static void run_row(void *arg, int64_t task) {
  const gc_task_t *t = (const gc_task_t *)arg;
  const gc_job_t *j = t->j;
  const int64_t n = task / j->OH, oh = task % j->OH;
  /* The row's taps: on the stack for any usual filter, on the heap for a
   * huge one (a model's 100x100 filter must not overflow a worker's
   * stack). */
  int64_t small[2 * 64];
  const int64_t ntaps = j->KH * j->KW;
  int64_t *buf = ntaps <= 64 ? small
                             : (int64_t *)malloc(sizeof(int64_t) * 2 * ntaps);
  if (!buf)
    abort(); /* out of memory for a tap table: nothing sane to return */
  int64_t *in_off = buf, *tap = buf + ntaps;
  taps_t tp = {0, in_off, tap};
  for (int64_t kh = 0; kh < j->KH; ++kh) {
    const int64_t ih = oh * j->sh + kh * j->dh - j->pt;
    if (ih < 0 || ih >= j->H)
      continue;
    for (int64_t kw = 0; kw < j->KW; ++kw, ++tp.n) {
      in_off[tp.n] = ih * j->in_sh + kw * j->dw * j->in_sw;
      tap[tp.n] = kh * j->KW + kw;
    }
  }
  t->fn(j, &tp, n, oh);
  if (buf != small)
    free(buf);
}

static row_fn pick(int64_t fg, int cmajor) {
  if (!cmajor) {
    switch (fg) {
    case 2:
      return row_fg2;
    case 4:
      return row_fg4;
#if TK_VW >= 8
    case 8:
      return row_fg8;
#endif
    default:
      return row_scalar;
    }
  }
  if (fg < L || fg % 8)
    return row_scalar;
  switch ((fg + TK_VW - 1) / TK_VW) { /* wide groups: vectors a group */
#if TK_VW == 16
  case 1:
    return wide_row_v1;
#endif
#if TK_VW >= 8
  case 2:
    return wide_row_v2;
#endif
#if TK_VW == 8
  case 3:
    return wide_row_v3;
#endif
  case 4:
    return wide_row_v4;
  default:
    return row_scalar;
  }
}

void tessel_kernel_grouped_conv2d_nhwc_f32(
    int64_t N, int64_t OH, int64_t OW, int64_t F, int64_t KH, int64_t KW,
    int64_t C, int64_t H, int64_t W, int64_t pad_top, int64_t pad_left,
    const float *in, int64_t in_sn, int64_t in_sh, int64_t in_sw,
    int64_t in_sc, int64_t stride_h, int64_t stride_w, int64_t dil_h,
    int64_t dil_w, int64_t G, int64_t packing, const float *wp, float *out,
    int64_t out_sn, int64_t out_sh, int64_t out_sw, int64_t out_sf,
    const float *bias, float lo, float hi, int32_t flags) {
  if (N <= 0 || OH <= 0 || OW <= 0 || F <= 0 || G <= 0)
    return;
  if (packing == TESSEL_KERNEL_GROUPED_PANELS) {
    /* A GEMM per group, by the dense kernel on the group's channel
     * slices: one call here for every group (the compiler's code does not
     * grow with them), the bias at the group's channels. */
    const int64_t cg = C / G, fg = F / G, NR = TESSEL_KERNEL_NR;
    const int64_t per_group = (fg + NR - 1) / NR * KH * KW * cg * NR;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t g = 0; g < G; ++g)
        tessel_kernel_conv2d_nhwc_f32(
            1, OH, OW, fg, KH, KW, cg, H, W, pad_top, pad_left,
            in + n * in_sn + g * cg * in_sc, 0, in_sh, in_sw, in_sc, stride_h,
            stride_w, dil_h, dil_w, wp + g * per_group, 0,
            out + n * out_sn + g * fg * out_sf, 0, out_sh, out_sw, out_sf,
            bias ? bias + g * fg : NULL, lo, hi, flags);
    return;
  }
  (void)C; /* rotated and c-major groups are square: C = F */
  gc_job_t j = {OH, OW, F, G, F / G, KH, KW, H, W, pad_top, pad_left,
                stride_h, stride_w, dil_h, dil_w, in, in_sn, in_sh, in_sw,
                in_sc, wp, out, out_sn, out_sh, out_sw, out_sf, bias, lo, hi,
                (flags & TESSEL_KERNEL_ACCUMULATE) != 0, tk_has_clamp(lo, hi),
                packing == TESSEL_KERNEL_GROUPED_CMAJOR, 0, 0, {{0}}};
  /* Columns whose kw taps all read inside: ow*sw - pl >= 0 and
   * ow*sw + (KW-1)*dw - pl < W. */
  int64_t lo_ow = (pad_left + stride_w - 1) / stride_w;
  int64_t span = W - 1 + pad_left - (KW - 1) * dil_w;
  int64_t hi_ow = span < 0 ? 0 : span / stride_w + 1;
  hi_ow = hi_ow < OW ? hi_ow : OW;
  lo_ow = lo_ow < hi_ow ? lo_ow : hi_ow;
  j.ow_lo = lo_ow;
  j.ow_hi = hi_ow;
  const int64_t fg = j.fg;
  for (int64_t r = 0; r < fg && r < 16; ++r)
    for (int i = 0; i < TK_VW; ++i)
      j.rot[r][i] = (int)(i - i % fg + ((i % fg - r) % fg + fg) % fg);
  const int contiguous = in_sc == 1 && out_sf == 1;
  gc_task_t t = {&j, contiguous ? pick(fg, j.cmajor) : row_scalar};
  tk_parallel_for_bands(tk_threads_for(N * OH * OW * F * KH * KW * (C / G)),
                        N * OH, 1, run_row, &t);
}
