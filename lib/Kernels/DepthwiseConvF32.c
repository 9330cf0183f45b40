/* DepthwiseConvF32.c - NHWC depthwise convolution (channel multiplier 1).
 *
 * Zero padding is implicit: out-of-range taps are skipped, so no padded
 * copy of the input is ever made. Filters the window path is instantiated
 * for (3x3, 5x5, 7x7 at column stride 1 or 2) go in tiles of pixels whose
 * window is loaded once per filter row, tiles that cross the border
 * skipping the padding; other filters take tiles of interior pixels with
 * every kw tap and a one-pixel path with the valid tap range near the
 * borders.
 *
 * Vectorized over channels (contiguous in NHWC); each step accumulates a
 * tile of OW_TILE output pixels x CV channel vectors so that enough
 * independent FMAs are in flight. Tasks are runs of output rows (n, oh)
 * (tk_parallel_for_bands: neighbouring rows share input rows). Depthwise
 * convolution does ~KH*KW flops per loaded activation, so it is memory
 * bound; the aim is streaming the input once per output row. */
#include "ThreadPool.h"
#include "Vector.h"

#include <math.h>

#define OW_TILE 4
#define CV 2 /* channel vectors per step */
#define WINDOW_TILE 8
#define WINDOW_MAX_KW 7

typedef struct {
  int64_t N, OH, OW, C, KH, KW, H, W, pad_top, pad_left;
  const float *in;
  int64_t in_sn, in_sh, in_sw, in_sc, sh, sw, dh, dw;
  const float *w;
  int64_t w_sh, w_sw, w_sc;
  float *out;
  int64_t out_sn, out_sh, out_sw, out_sc;
  const float *bias;
  float lo, hi;
  int accumulate, clamp, silu;
} dw_job_t;

TK_INLINE float finish(const dw_job_t *j, float r, const float *o,
                       int64_t c) {
  if (j->accumulate)
    r += *o;
  if (j->bias)
    r += j->bias[c];
  if (j->clamp)
    r = tk_clamp_scalar(r, j->lo, j->hi);
  return j->silu ? tk_silu_scalar(r) : r;
}

/* [lo, hi) of the taps k whose input position start + k*d is in [0, size). */
static void tap_range(int64_t start, int64_t d, int64_t taps, int64_t size,
                      int64_t *lo, int64_t *hi) {
  int64_t l = 0, h = taps;
  while (l < h && start + l * d < 0)
    ++l;
  while (h > l && start + (h - 1) * d >= size)
    --h;
  *lo = l;
  *hi = h;
}

/* One output element, any strides. */
static void scalar_point(const dw_job_t *j, int64_t n, int64_t oh, int64_t ow,
                         int64_t c) {
  const int64_t ih0 = oh * j->sh - j->pad_top, iw0 = ow * j->sw - j->pad_left;
  int64_t kh0, kh1, kw0, kw1;
  tap_range(ih0, j->dh, j->KH, j->H, &kh0, &kh1);
  tap_range(iw0, j->dw, j->KW, j->W, &kw0, &kw1);
  float r = 0.0f;
  for (int64_t kh = kh0; kh < kh1; ++kh)
    for (int64_t kw = kw0; kw < kw1; ++kw)
      r += j->in[n * j->in_sn + (ih0 + kh * j->dh) * j->in_sh +
                 (iw0 + kw * j->dw) * j->in_sw + c * j->in_sc] *
           j->w[kh * j->w_sh + kw * j->w_sw + c * j->w_sc];
  float *o = j->out + n * j->out_sn + oh * j->out_sh + ow * j->out_sw +
             c * j->out_sc;
  *o = finish(j, r, o, c);
}

/* Writes a tile's accumulators through the epilogue. The job's fields
 * are read once into locals: read through the pointer after each of the
 * output's stores (which could alias them as far as the compiler knows),
 * every field was loaded again for every vector, and those loads waited
 * on the stores (a 3x3 tile loop ran at 70 GFLOP/s with them, 190
 * without, Zen 5). The loops unrolled in full, so that the accumulators
 * stay registers: left rolled, the tile kept them in memory, stored after
 * every FMA. 3x3 layers 1.2-1.3x faster, 5x5 and 7x7 1.1x. */
TK_INLINE void store_tile(const dw_job_t *j, const int owt, const int cv,
                          int64_t n, int64_t oh, int64_t ow0, int64_t c0,
                          int skip, tk_vec acc[][CV]) {
  const int accumulate = j->accumulate, clamp = j->clamp, silu = j->silu;
  const float *const bias = j->bias;
  const float lo = j->lo, hi = j->hi;
  const int64_t out_sw = j->out_sw;
  float *const o0 = j->out + n * j->out_sn + oh * j->out_sh + ow0 * out_sw + c0;
  TK_UNROLL
  for (int t = 0; t < owt; ++t) {
    float *o = o0 + t * out_sw;
    TK_UNROLL
    for (int v = 0; v < cv; ++v) {
      tk_vec r = acc[t][v];
      if (accumulate)
        r += tk_load(o + v * TK_VW);
      if (bias)
        r += tk_load(bias + c0 + v * TK_VW);
      if (clamp)
        r = tk_min(tk_max(r, tk_splat(lo)), tk_splat(hi));
      if (silu)
        r = tk_silu(r);
      if (skip) {
        tk_store_from(o, r, skip);
        continue;
      }
      tk_store(o + v * TK_VW, r);
    }
  }
}

TK_INLINE void zero_tile(const int owt, const int cv, tk_vec acc[][CV]) {
  for (int t = 0; t < owt; ++t)
    for (int v = 0; v < cv; ++v)
      acc[t][v] = tk_splat(0.0f);
}

/* owt pixels from ow0, channels [c0, c0 + CV*VW), taps kh in [kh0, kh1) and
 * kw in [kw0, kw1) (valid for every pixel of the tile). With skip > 0 (one
 * vector), its first skip lanes are computed but not stored: the last
 * vector of a channel count that is not a multiple of the width overlaps
 * the one before, whose lanes are final already. */
TK_INLINE void vector_tile(const dw_job_t *j, const int owt, const int cv,
                           int64_t n, int64_t oh, int64_t ow0, int64_t c0,
                           int64_t kh0, int64_t kh1, int64_t kw0, int64_t kw1,
                           int skip) {
  tk_vec acc[OW_TILE][CV];
  zero_tile(owt, cv, acc);
  const int64_t ih0 = oh * j->sh - j->pad_top;
  const int64_t iw0 = ow0 * j->sw - j->pad_left;
  const float *in_img = j->in + n * j->in_sn + c0;
  for (int64_t kh = kh0; kh < kh1; ++kh) {
    const float *ir = in_img + (ih0 + kh * j->dh) * j->in_sh;
    for (int64_t kw = kw0; kw < kw1; ++kw) {
      const float *wp = j->w + kh * j->w_sh + kw * j->w_sw + c0;
      tk_vec wv[CV];
      for (int v = 0; v < cv; ++v)
        wv[v] = tk_load(wp + v * TK_VW);
      for (int t = 0; t < owt; ++t) {
        const float *ip = ir + (iw0 + t * j->sw + kw * j->dw) * j->in_sw;
        for (int v = 0; v < cv; ++v)
          acc[t][v] += tk_load(ip + v * TK_VW) * wv[v];
      }
    }
  }
  store_tile(j, owt, cv, n, oh, ow0, c0, skip, acc);
}

/* A tile of owt pixels from ow0 for a filter of KW taps at
 * column stride S and dilation D (compile-time constants at each call):
 * the input pixels of the tile's window are loaded once per filter row,
 * and input pixel p feeds output t = (p - kw * D) / S for each tap kw
 * that divides evenly. vector_tile loads an input vector per (pixel, tap): 10
 * loads per 8 multiply-adds, which bound it at a third of the FMA peak;
 * here 3x3 tiles of 8 pixels load 26 per 48. Pixels of the window
 * outside the image (the padding) are skipped, so tiles may cross the
 * borders: a 7x7 map's row is one tile of 6 or 8 pixels, not 4 pixels
 * one at a time (two accumulator chains each) around a short interior. */
TK_INLINE void window_tile(const dw_job_t *j, const int owt, const int cv,
                           const int KW, const int S, const int D,
                           const int EDGE, int64_t n, int64_t oh, int64_t ow0,
                           int64_t c0, int64_t kh0, int64_t kh1, int skip) {
  tk_vec acc[WINDOW_TILE][CV];
  zero_tile(owt, cv, acc);
  const int span = (owt - 1) * S + (KW - 1) * D + 1;
  /* The window's pixels inside the image; the others are padding. */
  const int64_t iw0 = ow0 * S - j->pad_left;
  const int64_t plo = iw0 < 0 ? -iw0 : 0;
  const int64_t phi = j->W - iw0 < span ? j->W - iw0 : span;
  const float *in_img = j->in + n * j->in_sn + c0 + iw0 * j->in_sw;
  const int64_t ih0 = oh * j->sh - j->pad_top;
  const int64_t in_sw = j->in_sw;
  for (int64_t kh = kh0; kh < kh1; ++kh) {
    const float *ir = in_img + (ih0 + kh * j->dh) * j->in_sh;
    const float *wr = j->w + kh * j->w_sh + c0;
    tk_vec wv[WINDOW_MAX_KW][CV];
    for (int kw = 0; kw < KW; ++kw)
      for (int v = 0; v < cv; ++v)
        wv[kw][v] = tk_load(wr + kw * j->w_sw + v * TK_VW);
    /* Fully unrolled: every accumulator index is a constant, so the
     * tile stays in registers. One pointer walks the window's pixels:
     * left to itself the compiler kept a pointer per pixel, more than
     * the registers, and shuffled them between rows (with the range
     * checks below on every tile: 3x3 at 112 x 112 x 32 ran at a quarter
     * of the FMA peak). Tiles inside the image skip the checks. */
    const float *ip = ir;
#pragma clang loop unroll(full)
    for (int p = 0; p < span; ++p, ip += in_sw) {
      __asm__("" : "+r"(ip));
      if (EDGE && (p < plo || p >= phi))
        continue;
      tk_vec x[CV];
      for (int v = 0; v < cv; ++v)
        x[v] = tk_load(ip + v * TK_VW);
#pragma clang loop unroll(full)
      for (int kw = 0; kw < KW; ++kw) {
        const int q = p - kw * D;
        if (q < 0 || q % S != 0 || q / S >= owt)
          continue;
        for (int v = 0; v < cv; ++v)
          acc[q / S][v] += x[v] * wv[kw][v];
      }
    }
  }
  store_tile(j, owt, cv, n, oh, ow0, c0, skip, acc);
}

/* owt pixels from ow, every channel. */
TK_INLINE void window_pixels(const dw_job_t *j, const int owt, const int KW,
                             const int S, const int D, const int EDGE,
                             int64_t n,
                             int64_t oh, int64_t ow, int64_t cvec2,
                             int64_t cvec, int tail, int64_t ctail, int skip,
                             int64_t kh0, int64_t kh1) {
  if (TK_VW == 16)
    for (int64_t c = 0; c < cvec2; c += CV * TK_VW)
      window_tile(j, owt, CV, KW, S, D, EDGE, n, oh, ow, c, kh0, kh1, 0);
  /* Single vectors, the tail the last of them: one call site, so one copy
   * of the unrolled tile (a second for the tail made the file 1.4x the
   * size). */
  const int64_t end = tail ? cvec + TK_VW : cvec;
  for (int64_t c = TK_VW == 16 ? cvec2 : 0; c < end; c += TK_VW) {
    const int is_tail = c >= cvec;
    window_tile(j, owt, 1, KW, S, D, EDGE, n, oh, ow, is_tail ? ctail : c,
                kh0, kh1, is_tail ? skip : 0);
  }
}

/* owt pixels from ow: without the padding checks where the tile's window
 * lies inside the image. */
TK_INLINE void window_tile_any(const dw_job_t *j, const int owt,
                               const int KW, const int S, const int D,
                               int64_t n, int64_t oh, int64_t ow,
                               int64_t cvec2, int64_t cvec, int tail,
                               int64_t ctail, int skip, int64_t kh0,
                               int64_t kh1) {
  const int64_t iw0 = ow * S - j->pad_left;
  if (iw0 >= 0 && iw0 + (owt - 1) * S + (KW - 1) * D + 1 <= j->W)
    window_pixels(j, owt, KW, S, D, 0, n, oh, ow, cvec2, cvec, tail, ctail,
                  skip, kh0, kh1);
  else
    window_pixels(j, owt, KW, S, D, 1, n, oh, ow, cvec2, cvec, tail, ctail,
                  skip, kh0, kh1);
}

/* Tiles of output row (n, oh) from pixel `first` up to `last`, with
 * window_tile where the filter is one it is instantiated for; returns the
 * first pixel it did not compute. */
TK_INLINE int64_t window_row(const dw_job_t *j, const int KW, const int S,
                             const int D, int64_t n, int64_t oh, int64_t first,
                             int64_t last, int64_t cvec2, int64_t cvec,
                             int tail, int64_t ctail, int skip, int64_t kh0,
                             int64_t kh1) {
  /* Accumulators + one filter row + the input vectors within the
   * registers, then one tile of the pixels left (they went one pixel at a
   * time, two accumulator chains each: a 14-pixel row's last 2 of 3x3 took
   * a fifth of the layer's time). AVX-512's 32 zmm hold 8 pixels x 2
   * vectors up to 5x5 and 6 at 7x7 (4 and 6 before: 7x7x1152 5x5 1.6x,
   * 14x14x96 7x7 2x faster, Zen 5; 10 or 12 at 3x3 ran 1.1-1.2x slower);
   * AVX2's 16 ymm, one vector of channels, 8, 6 and 4. */
  const int owt = TK_VW == 16 ? (KW <= 5 ? 8 : 6)
                  : KW <= 3   ? 8
                  : KW <= 5   ? 6
                              : 4;
  int64_t ow = first;
  for (; ow + owt <= last; ow += owt)
    window_tile_any(j, owt, KW, S, D, n, oh, ow, cvec2, cvec, tail, ctail, skip,
                    kh0, kh1);
  /* The rest as one tile of its count, with the padding checks: a row's
   * last pixels reach its right border (and a 7-pixel row both). One
   * variant a count, not two: 0.8 MB of code for this file otherwise.
   * (Tiles of 4, 2 and 1 instead: 7x7x1152 5x5 1.9x slower.) */
  switch (last - ow) {
#define TK_REST(R)                                                             \
  case R:                                                                      \
    /* (R < owt ? R : 1: where the case is dead for the filter's owt, no       \
     * tile of R pixels is instantiated for it.) */                            \
    if (R < owt) {                                                             \
      window_pixels(j, R < owt ? R : 1, KW, S, D, 1, n, oh, ow, cvec2, cvec,   \
                    tail, ctail, skip, kh0, kh1);                              \
      return last;                                                             \
    }                                                                          \
    break;
    TK_REST(1) TK_REST(2) TK_REST(3) TK_REST(4) TK_REST(5) TK_REST(6) TK_REST(7)
#undef TK_REST
  }
  return ow;
}

/* One function per filter the window path is instantiated for. */
#define TK_WINDOW_ROW(K, S, D)                                                 \
  static __attribute__((noinline)) int64_t window_row_##K##_##S##_##D(         \
      const dw_job_t *j, int64_t n, int64_t oh, int64_t first, int64_t last,   \
      int64_t cvec2, int64_t cvec, int tail, int64_t ctail, int skip,          \
      int64_t kh0, int64_t kh1) {                                              \
    return window_row(j, K, S, D, n, oh, first, last, cvec2, cvec, tail,       \
                      ctail, skip, kh0, kh1);                                  \
  }
TK_WINDOW_ROW(3, 1, 1)
TK_WINDOW_ROW(3, 2, 1)
TK_WINDOW_ROW(5, 1, 1)
TK_WINDOW_ROW(5, 2, 1)
TK_WINDOW_ROW(7, 1, 1)
/* Dilated (DeepLabV3's and LR-ASPP's MobileNetV3 backbones: 5x5 and 3x3
 * at dilation 2; they went one pixel at a time through vector_tile). */
TK_WINDOW_ROW(3, 1, 2)
TK_WINDOW_ROW(5, 1, 2)
#undef TK_WINDOW_ROW

static void run_row(void *arg, int64_t task) {
  const dw_job_t *j = (const dw_job_t *)arg;
  const int64_t n = task / j->OH, oh = task % j->OH;
  const int unit = j->in_sc == 1 && j->w_sc == 1 && j->out_sc == 1;
  /* channels: pairs of vectors, then single vectors, then scalars */
  const int64_t cvec2 = unit ? j->C / (CV * TK_VW) * (CV * TK_VW) : 0;
  const int64_t cvec = unit ? j->C / TK_VW * TK_VW : 0;
  /* The rest of the channels as one vector overlapping the last whole one
   * (ShuffleNet's 24, MobileNetV3's 72, 120, 184 and 200 channels), where
   * there is a whole one; else one element at a time. Scalars for 8 of 72
   * channels cost as much as the 64 in vectors. */
  const int tail = unit && j->C > cvec && cvec > 0;
  const int skip = tail ? (int)(TK_VW - (j->C - cvec)) : 0;
  const int64_t ctail = j->C - TK_VW;
  int64_t kh0, kh1;
  tap_range(oh * j->sh - j->pad_top, j->dh, j->KH, j->H, &kh0, &kh1);
  /* Whole channel vectors only: the window path reads no scalars. */
  const int window = unit && cvec > 0 && (tail || cvec == j->C);
  int64_t start = 0;
#define TK_WINDOW(K, S, D)                                                    \
  if (window && j->KW == K && j->sw == S && j->dw == D)                      \
    start = window_row_##K##_##S##_##D(j, n, oh, 0, j->OW, cvec2, cvec, tail, \
                                       ctail, skip, kh0, kh1);
  TK_WINDOW(3, 1, 1) else TK_WINDOW(3, 2, 1) else TK_WINDOW(5, 1, 1)
  else TK_WINDOW(5, 2, 1) else TK_WINDOW(7, 1, 1) else TK_WINDOW(3, 1, 2)
  else TK_WINDOW(5, 1, 2)
#undef TK_WINDOW
  /* Without the window path, the interior pixels [first, last), where
   * every kw tap is in range, go in tiles. */
  int64_t first = -1, last = -1;
  if (start == 0) {
    const int64_t span = (j->KW - 1) * j->dw;
    first = 0;
    last = j->OW;
    while (first < j->OW && first * j->sw - j->pad_left < 0)
      ++first;
    while (last > first && (last - 1) * j->sw - j->pad_left + span >= j->W)
      --last;
  }
  for (int64_t ow = start; ow < j->OW; ++ow) {
    if (ow == first) {
      for (; ow + OW_TILE <= last; ow += OW_TILE) {
        for (int64_t c = 0; c < cvec2; c += CV * TK_VW)
          vector_tile(j, OW_TILE, CV, n, oh, ow, c, kh0, kh1, 0, j->KW, 0);
        for (int64_t c = cvec2; c < cvec; c += TK_VW)
          vector_tile(j, OW_TILE, 1, n, oh, ow, c, kh0, kh1, 0, j->KW, 0);
        if (tail)
          vector_tile(j, OW_TILE, 1, n, oh, ow, ctail, kh0, kh1, 0, j->KW,
                      skip);
      }
      if (ow >= j->OW)
        break;
    }
    int64_t kw0, kw1;
    tap_range(ow * j->sw - j->pad_left, j->dw, j->KW, j->W, &kw0, &kw1);
    for (int64_t c = 0; c < cvec2; c += CV * TK_VW)
      vector_tile(j, 1, CV, n, oh, ow, c, kh0, kh1, kw0, kw1, 0);
    for (int64_t c = cvec2; c < cvec; c += TK_VW)
      vector_tile(j, 1, 1, n, oh, ow, c, kh0, kh1, kw0, kw1, 0);
    if (tail)
      vector_tile(j, 1, 1, n, oh, ow, ctail, kh0, kh1, kw0, kw1, skip);
  }
  if (tail)
    return;
  for (int64_t w = 0; w < j->OW; ++w)
    for (int64_t c = cvec; c < j->C; ++c)
      scalar_point(j, n, oh, w, c);
}

void tessel_kernel_depthwise_conv2d_nhwc_f32(
    int64_t N, int64_t OH, int64_t OW, int64_t C, int64_t KH, int64_t KW,
    int64_t H, int64_t W, int64_t pad_top, int64_t pad_left, const float *in, int64_t in_sn, int64_t in_sh, int64_t in_sw,
    int64_t in_sc, int64_t stride_h, int64_t stride_w, int64_t dil_h,
    int64_t dil_w, const float *w, int64_t w_sh, int64_t w_sw, int64_t w_sc,
    float *out, int64_t out_sn, int64_t out_sh, int64_t out_sw,
    int64_t out_sc, const float *bias, float lo, float hi, int32_t flags) {
  if (N <= 0 || OH <= 0 || OW <= 0 || C <= 0)
    return;
  dw_job_t job = {N,      OH,    OW,     C,      KH,       KW,
                  H,      W,     pad_top, pad_left,
                  in,     in_sn, in_sh,  in_sw,  in_sc,    stride_h,
                  stride_w, dil_h, dil_w, w,     w_sh,     w_sw,
                  w_sc,   out,   out_sn, out_sh, out_sw,   out_sc,
                  bias,   lo,    hi,     (flags & TESSEL_KERNEL_ACCUMULATE) != 0,
                  tk_has_clamp(lo, hi), (flags & TESSEL_KERNEL_SILU) != 0};
  tk_parallel_for_bands(tk_threads_for(N * OH * OW * C * KH * KW), N * OH, 1,
                        run_row, &job);
}
