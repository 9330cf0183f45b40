/* SparseConvF32.c - NHWC convolution with a sparse constant filter
 * (tessel_kernel_sparse_conv2d_f32, described in Kernels.td).
 *
 * The convolution is the sparse matmul of its implicit im2col matrix (K =
 * KH*KW*C rows, one per filter element, by the output pixels) and B, with
 * no im2col copy: the input is laid out as channel planes, one per (kw,
 * row phase), where plane[c][kw][ph][i][ow] = in[(oh0 + i)*sh + ph - pad_top]
 * [ow*sw + kw*dw - pad_left][c]. Each plane row holds wq >= OW columns, so
 * the im2col row of (kh, kw, c) over the pixels oh*wq + ow is that plane
 * from row q = kh*dh / sh, phase ph = kh*dh % sh: a fixed offset. The
 * products are SparseTiles.c's; the wq - OW padding columns of each
 * output row are computed and dropped. The planes cost KW x the input
 * (each filter column's shift baked in, so every row starts aligned)
 * instead of im2col's KH*KW x.
 *
 * Output rows go in bands whose planes stay in L2, each laid out by the
 * thread that multiplies it, just before its products. With fewer bands
 * than the threads need, each image is laid out once and the threads
 * split the output channels.
 */
#include "SparseTiles.h"
#include "TransposeBlock.h"
#include "Vector.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
  tk_sparse_view v; /* the weights, the output channel stride, epilogue */
  int64_t OH, OW, KH, KW, C, H, W, pad_top, pad_left, sh, sw, dh, dw;
  const float *in;
  int64_t in_sn, in_sh, in_sw, in_sc;
  float *out;
  int64_t out_sn, out_sh, out_sw;
  int64_t wq;      /* columns per plane row */
  int64_t band;    /* output rows per band */
  int64_t hx;      /* plane rows past a band's: (KH - 1)*dh / sh */
  int64_t pstride; /* floats per plane, whole vectors */
  int64_t per_image; /* bands per image */
  const int64_t *koff;
} conv_t;

/* Floats of a band's planes, with a vector of slack: the last rows read
 * up to a vector past their plane. */
static size_t plane_floats(const conv_t *g) {
  return (size_t)(g->KW * g->sh * g->C * g->pstride + TK_VW);
}

/* Whether some filter row kh reads input rows of phase ph. */
static int phase_used(const conv_t *g, int64_t ph) {
  for (int64_t kh = 0; kh < g->KH; ++kh)
    if (kh * g->dh % g->sh == ph)
      return 1;
  return 0;
}

/* A plane row of every channel from an NHWC input row (channels
 * contiguous): column ow of channel c's row (at row + c * pstride) is
 * in_row[(ow * sw + w0) * in_sw + c] for ow in [lo, hi), else 0. Blocks
 * of TK_VW columns x TK_VW channels, transposed in registers and stored
 * whole, padding included: through a zeroed copy per block, memset and
 * memcpy took 60% of a 14 x 14 layout (3x3 at 20%, 256 -> 256 channels,
 * Zen 5: 0.71 -> 0.63 ms; 28 x 28 x 128: 0.80 -> 0.56). */
static void row_blocks(const conv_t *g, const float *in_row, int64_t w0,
                       int64_t lo, int64_t hi, float *row) {
  const int64_t ps = g->sw * g->in_sw;
  for (int64_t j0 = 0; j0 < g->wq; j0 += TK_VW) {
    const int64_t a = lo > j0 ? lo - j0 : 0;
    const int64_t b0 = hi - j0 < TK_VW ? hi - j0 : TK_VW;
    const int64_t b = b0 > a ? b0 : a;
    const int w = (int)(g->wq - j0 < TK_VW ? g->wq - j0 : TK_VW);
    /* The first kept column's pixel (none: the pointer is not read). */
    const float *src =
        b > a ? in_row + ((j0 + a) * g->sw + w0) * g->in_sw : in_row;
    for (int64_t c0 = 0; c0 < g->C; c0 += TK_VW)
      transpose_block_part(src + c0, ps, (int)a, (int)b,
                           (int)(g->C - c0 < TK_VW ? g->C - c0 : TK_VW),
                           row + c0 * g->pstride + j0, g->pstride, w);
  }
}

/* Band b, output rows [oh0, oh0 + nb) of image n: the planes into at,
 * and the view that multiplies them. */
static void band_view(const void *ctx, int64_t b, float *at,
                      tk_sparse_view *v) {
  const conv_t *g = (const conv_t *)ctx;
  const int64_t n = b / g->per_image, oh0 = b % g->per_image * g->band;
  const int64_t nb = g->OH - oh0 < g->band ? g->OH - oh0 : g->band;
  const float *img = g->in + n * g->in_sn;
  for (int64_t kw = 0; kw < g->KW; ++kw) {
    /* Columns ow in [lo, hi) read inside the input: w = ow*sw + w0. */
    const int64_t w0 = kw * g->dw - g->pad_left;
    int64_t lo = w0 < 0 ? (-w0 + g->sw - 1) / g->sw : 0;
    int64_t hi = g->W - w0 > 0 ? (g->W - w0 + g->sw - 1) / g->sw : 0;
    hi = hi < g->OW ? hi : g->OW;
    lo = lo < hi ? lo : hi;
    for (int64_t ph = 0; ph < g->sh; ++ph) {
      if (!phase_used(g, ph))
        continue; /* (a 1x1 filter at stride 2 reads even rows only) */
      float *plane = at + (kw * g->sh + ph) * g->C * g->pstride;
      for (int64_t i = 0; i < nb + g->hx; ++i) {
        const int64_t h = (oh0 + i) * g->sh + ph - g->pad_top;
        float *row = plane + i * g->wq;
        const int inside = h >= 0 && h < g->H && lo < hi;
        if (inside && g->in_sc == 1) {
          row_blocks(g, img + h * g->in_sh, w0, lo, hi, row);
          continue;
        }
        for (int64_t c = 0; c < g->C; ++c) {
          float *dst = row + c * g->pstride;
          if (!inside) {
            memset(dst, 0, (size_t)g->wq * sizeof(float));
            continue;
          }
          memset(dst, 0, (size_t)lo * sizeof(float));
          memset(dst + hi, 0, (size_t)(g->wq - hi) * sizeof(float));
        }
        if (inside)
          tk_sparse_transpose(hi - lo, g->C,
                              img + h * g->in_sh + (lo * g->sw + w0) * g->in_sw,
                              g->sw * g->in_sw, g->in_sc, row + lo,
                              g->pstride);
      }
    }
  }
  *v = g->v;
  v->at = at;
  v->koff = g->koff;
  v->band_m = (nb * g->wq + TK_VW - 1) / TK_VW * TK_VW;
  v->c = g->out + n * g->out_sn + oh0 * g->out_sh;
  v->wq = g->wq;
  v->owc = g->OW;
  v->nr = nb;
  v->c_sr = g->out_sh;
  v->c_sc = g->out_sw;
}

void tessel_kernel_sparse_conv2d_f32(
    int64_t N, int64_t OH, int64_t OW, int64_t F, int64_t KH, int64_t KW,
    int64_t C, int64_t H, int64_t W, int64_t pad_top, int64_t pad_left,
    const float *in, int64_t in_sn, int64_t in_sh, int64_t in_sw,
    int64_t in_sc, int64_t stride_h, int64_t stride_w, int64_t dil_h,
    int64_t dil_w, int64_t R, const int32_t *ptr, const int32_t *kidx,
    const float *val, float *out, int64_t out_sn, int64_t out_sh,
    int64_t out_sw, int64_t out_sf, const float *bias, float lo, float hi,
    int32_t flags) {
  if (N <= 0 || OH <= 0 || OW <= 0 || F <= 0)
    return;
  const int64_t K = KH * KW * C;
  /* Plane rows of whole vectors when that wastes at most a sixth of the
   * products (56 -> 64 columns), else exactly OW (7 -> 16 would more than
   * double them) at the price of loads that straddle cache lines. */
  const int64_t wv = (OW + TK_VW - 1) / TK_VW * TK_VW;
  conv_t g = {{F, R, ptr, kidx, val, NULL, NULL, 0, out, 0, 0, 0, 0, 0,
               out_sf, bias, lo, hi, (flags & TESSEL_KERNEL_ACCUMULATE) != 0},
              OH, OW, KH, KW, C, H, W, pad_top, pad_left, stride_h, stride_w,
              dil_h, dil_w, in, in_sn, in_sh, in_sw, in_sc, out, out_sn,
              out_sh, out_sw, (wv - OW) * 6 <= OW ? wv : OW, 0,
              (KH - 1) * dil_h / stride_h, 0, 0, NULL};
  /* Bands whose planes fill about TK_SPARSE_BAND_FLOATS, at least a row;
   * or whole images. */
  const int64_t row_floats = KW * stride_h * C * g.wq;
  int64_t band = TK_SPARSE_BAND_FLOATS / (row_floats > 0 ? row_floats : 1) -
                 g.hx;
  /* But at least a full tile of rows (8 vectors, R = 1's): every band
   * is a pass over all the nonzeros, and a band of few rows runs them at
   * a few FMAs each (512 -> 512 channels, 3x3 stride 2 from 14x14: bands
   * of 5 and 2 output rows, 3 and 1 row vectors, ran 2-3x slower than one
   * band of 4 vectors, whose planes, 700 KB, spill L2 a little). */
  const int64_t min_band = (8 * TK_VW + g.wq - 1) / g.wq;
  band = band < min_band ? min_band : band;
  band = band < 1 ? 1 : band > OH ? OH : band;
  if (tk_sparse_too_few_bands(N * ((OH + band - 1) / band)))
    band = OH;
  g.band = band;
  g.per_image = (OH + band - 1) / band;
  g.pstride = tk_sparse_row_stride((band + g.hx) * g.wq);
  int64_t *koff = (int64_t *)malloc((size_t)K * sizeof(int64_t));
  if (!koff)
    abort(); /* out of memory: nothing sane to return */
  for (int64_t kh = 0; kh < KH; ++kh)
    for (int64_t kw = 0; kw < KW; ++kw)
      for (int64_t c = 0; c < C; ++c) {
        const int64_t ph = kh * dil_h % stride_h, q = kh * dil_h / stride_h;
        koff[(kh * KW + kw) * C + c] =
            ((kw * stride_h + ph) * C + c) * g.pstride + q * g.wq;
      }
  g.koff = koff;
  tk_sparse_bands bands = {N * g.per_image, K, plane_floats(&g), band_view,
                           &g};
  tk_sparse_run_bands(&bands, F, R, ptr, kidx, flags);
  free(koff);
}
