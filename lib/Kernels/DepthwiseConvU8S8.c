/* DepthwiseConvU8S8.c - int8 depthwise convolution with exact int32 sums
 * (tessel_kernel_depthwise_conv2d_u8s8, described in Kernels.td).
 *
 * `vpdpbusd` sums 4 u8 x s8 products per int32 lane, but a depthwise
 * convolution has one product per channel and tap. So each output row
 * first gathers, per input column, 4 kernel rows' bytes of each channel
 * side by side (B[g][iw][c][0..3] = the rows 4g..4g+3 of the window, the
 * kernel rows interleaved as the packed weights are): then one `vpdpbusd`
 * does 4 taps of 16 channels, and a 3x3 kernel is 3 of them per pixel and
 * 16 channels. The rows and columns outside the input are the zero point,
 * so every pixel takes the same path (no border cases), and
 *   sum (x - zp) * w = sum x * w - zp * colsum[c]
 * is corrected in the epilogue. Signed input is made unsigned by flipping
 * the top bit (x + 128, zp + 128), as in MatmulU8S8.c.
 *
 * Without VNNI, AVX2 builds B in int16 and `vpmaddwd` sums the products of
 * 2 taps per int32 lane (exact: no 16-bit saturation, unlike vpmaddubsw).
 *
 * Tiles are 6 pixels x 64 channels of int32, the int8 matmul's shape, so
 * the same requantizing epilogue finishes them (Requantize.h). Tasks are
 * output rows (n, oh).
 */
#include "Requantize.h"
#include "ThreadPool.h"
#include "tessel/Kernels/tessel_kernels.h"

#include <stdlib.h>
#include <string.h>

#define MR TK_RQ_MR
#define NR TK_RQ_NR
#define CB TESSEL_KERNEL_CBLOCK_DW_I8 /* the packed weights' channel padding */

typedef struct {
  int64_t N, OH, OW, C, Cp, KH, KW, H, W, pad_top, pad_left;
  const uint8_t *in;
  int64_t in_sn, in_sh, in_sw;
  uint8_t flip; /* 0x80 for signed input */
  int32_t zp;   /* the zero point, unsigned (flipped) */
  int64_t sh, sw, dh, dw;
  const int8_t *wp;
  const int32_t *colsum;
  char *out;
  int64_t out_sn, out_sh, out_sw;
  const struct epilogue *ep; /* NULL: int32 output */
  int64_t G, Wp;             /* kernel-row groups of 4; columns of B */
  const uint8_t *zrow;       /* Cp raw bytes that read as the zero point */
} dwq_job_t;

/* 16 bytes of channels [c0, c0 + 16) of one input pixel, flipped;
 * channels past C read as the zero point. */
static inline void load16(const dwq_job_t *j, const uint8_t *px, int64_t c0,
                          uint8_t out[16]) {
  memset(out, j->zp, 16);
  for (int64_t i = 0; c0 + i < j->C && i < 16; ++i)
    out[i] = (uint8_t)(px[c0 + i] ^ j->flip);
}

/* The 4 input rows of kernel-row group g for output row oh of image `img`;
 * a row outside the input (or past KH) is j->zrow. */
static inline void group_rows(const dwq_job_t *j, const uint8_t *img,
                              int64_t oh, int64_t g, const uint8_t *rows[4]) {
  for (int r = 0; r < 4; ++r) {
    const int64_t kh = 4 * g + r, ih = oh * j->sh - j->pad_top + kh * j->dh;
    rows[r] = kh < j->KH && ih >= 0 && ih < j->H ? img + ih * j->in_sh
                                                 : j->zrow;
  }
}

/* The pixels of column x of B in those rows: j->zrow (bytes that read as
 * the zero point) outside the input, so every column takes one path. */
static inline void column_pixels(const dwq_job_t *j, const uint8_t *rows[4],
                                 int64_t x, const uint8_t *px[4]) {
  const int64_t iw = x - j->pad_left;
  const int inside = iw >= 0 && iw < j->W;
  for (int r = 0; r < 4; ++r)
    px[r] = inside && rows[r] != j->zrow ? rows[r] + iw * j->in_sw : j->zrow;
}

/* B for output row (n, oh): [G][Wp][Cp][4] bytes (portable). */
static void build_rows(const dwq_job_t *j, int64_t n, int64_t oh,
                       uint8_t *B) {
  const uint8_t *img = j->in + n * j->in_sn;
  for (int64_t g = 0; g < j->G; ++g) {
    const uint8_t *rows[4], *px[4];
    group_rows(j, img, oh, g, rows);
    uint8_t *dst = B + g * j->Wp * j->Cp * 4;
    for (int64_t x = 0; x < j->Wp; ++x) {
      column_pixels(j, rows, x, px);
      for (int64_t c0 = 0; c0 < j->Cp; c0 += 16) {
        uint8_t v[4][16];
        for (int r = 0; r < 4; ++r)
          load16(j, px[r], c0, v[r]);
        uint8_t *o = dst + (x * j->Cp + c0) * 4;
        for (int i = 0; i < 16; ++i)
          for (int r = 0; r < 4; ++r)
            o[i * 4 + r] = v[r][i];
      }
    }
  }
}

#ifdef TK_HAVE_VNNI_PATH
/* The same B, 64 channels at a time: 4 rows' bytes unpacked into 4-byte
 * groups within each 128-bit lane, then the 4 x 4 lanes transposed so
 * channels come in order. Channels past C read as the zero point (masked
 * loads over a zero-point vector). */
TK_VNNI_TARGET static void build_rows_vnni(const dwq_job_t *j, int64_t n,
                                           int64_t oh, uint8_t *B) {
  const uint8_t *img = j->in + n * j->in_sn;
  const __m512i flip = _mm512_set1_epi8((char)j->flip);
  const __m512i zraw = _mm512_set1_epi8((char)(j->zp ^ j->flip));
  for (int64_t g = 0; g < j->G; ++g) {
    const uint8_t *rows[4], *px[4];
    group_rows(j, img, oh, g, rows);
    uint8_t *dst = B + g * j->Wp * j->Cp * 4;
    for (int64_t x = 0; x < j->Wp; ++x) {
      column_pixels(j, rows, x, px);
      uint8_t *o = dst + x * j->Cp * 4;
      for (int64_t c0 = 0; c0 < j->Cp; c0 += 64) {
        const int64_t rem = j->C - c0;
        const __mmask64 m = rem >= 64 ? ~(__mmask64)0
                                      : (((__mmask64)1 << rem) - 1);
        __m512i v[4];
        for (int r = 0; r < 4; ++r)
          v[r] = _mm512_xor_si512(_mm512_mask_loadu_epi8(zraw, m, px[r] + c0),
                                  flip);
        const __m512i a = _mm512_unpacklo_epi8(v[0], v[1]);
        const __m512i b = _mm512_unpackhi_epi8(v[0], v[1]);
        const __m512i c = _mm512_unpacklo_epi8(v[2], v[3]);
        const __m512i d = _mm512_unpackhi_epi8(v[2], v[3]);
        /* lane l of q[k]: channels 16l + 4k .. 16l + 4k + 3 */
        const __m512i q0 = _mm512_unpacklo_epi16(a, c);
        const __m512i q1 = _mm512_unpackhi_epi16(a, c);
        const __m512i q2 = _mm512_unpacklo_epi16(b, d);
        const __m512i q3 = _mm512_unpackhi_epi16(b, d);
        const __m512i t0 = _mm512_shuffle_i64x2(q0, q1, 0x44);
        const __m512i t1 = _mm512_shuffle_i64x2(q0, q1, 0xEE);
        const __m512i t2 = _mm512_shuffle_i64x2(q2, q3, 0x44);
        const __m512i t3 = _mm512_shuffle_i64x2(q2, q3, 0xEE);
        const __m512i out[4] = {_mm512_shuffle_i64x2(t0, t2, 0x88),
                                _mm512_shuffle_i64x2(t0, t2, 0xDD),
                                _mm512_shuffle_i64x2(t1, t3, 0x88),
                                _mm512_shuffle_i64x2(t1, t3, 0xDD)};
        const int64_t nv = (j->Cp - c0) / 16 < 4 ? (j->Cp - c0) / 16 : 4;
        for (int64_t k = 0; k < nv; ++k)
          _mm512_storeu_si512(o + (c0 + 16 * k) * 4, out[k]);
      }
    }
  }
}
#endif

/* acc[r][0 .. 16 * nv) for pixels ow0 + r (r < mr), channels from c0. */
static void tile_portable(const dwq_job_t *j, const uint8_t *B, int64_t ow0,
                          int mr, int64_t c0, int nv, int32_t acc[MR][NR]) {
  for (int r = 0; r < mr; ++r)
    for (int i = 0; i < 16 * nv; ++i) {
      int32_t s = 0;
      for (int64_t g = 0; g < j->G; ++g)
        for (int64_t kw = 0; kw < j->KW; ++kw) {
          const uint8_t *b =
              B + ((g * j->Wp + (ow0 + r) * j->sw + kw * j->dw) * j->Cp + c0 +
                   i) * 4;
          const int8_t *w = j->wp + ((g * j->KW + kw) * j->Cp + c0 + i) * 4;
          for (int t = 0; t < 4; ++t)
            s += (int32_t)b[t] * (int32_t)w[t];
        }
      acc[r][i] = s;
    }
}

#ifdef TK_HAVE_VNNI_PATH
/* R pixels x NV vectors of 16 channels, both compile-time constants once
 * inlined, so the accumulators stay in registers. */
TK_VNNI_TARGET static inline __attribute__((always_inline)) void
tile_vnni_fixed(const dwq_job_t *j, const uint8_t *B, int64_t ow0, const int R,
                int64_t c0, const int NV, int32_t acc[MR][NR]) {
  __m512i a[MR][4];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < NV; ++v)
      a[r][v] = _mm512_setzero_si512();
  const int64_t step = j->sw * j->Cp * 4;
  for (int64_t g = 0; g < j->G; ++g)
    for (int64_t kw = 0; kw < j->KW; ++kw) {
      const int8_t *w = j->wp + ((g * j->KW + kw) * j->Cp + c0) * 4;
      __m512i wv[4];
      for (int v = 0; v < NV; ++v)
        wv[v] = _mm512_loadu_si512(w + 64 * v);
      const uint8_t *b =
          B + ((g * j->Wp + ow0 * j->sw + kw * j->dw) * j->Cp + c0) * 4;
      for (int r = 0; r < R; ++r, b += step)
        for (int v = 0; v < NV; ++v)
          a[r][v] = _mm512_dpbusd_epi32(a[r][v], _mm512_loadu_si512(b + 64 * v),
                                        wv[v]);
    }
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < NV; ++v)
      _mm512_storeu_si512(acc[r] + 16 * v, a[r][v]);
}

#define TK_DW_NV_CASES(R, OW0, ACC)                                            \
  switch (nv) {                                                                \
  case 1: tile_vnni_fixed(j, B, OW0, R, c0, 1, ACC); break;                    \
  case 2: tile_vnni_fixed(j, B, OW0, R, c0, 2, ACC); break;                    \
  case 3: tile_vnni_fixed(j, B, OW0, R, c0, 3, ACC); break;                    \
  default: tile_vnni_fixed(j, B, OW0, R, c0, 4, ACC); break;                   \
  }

TK_VNNI_TARGET static void tile_vnni(const dwq_job_t *j, const uint8_t *B,
                                     int64_t ow0, int mr, int64_t c0, int nv,
                                     int32_t acc[MR][NR]) {
  if (mr == MR) {
    TK_DW_NV_CASES(MR, ow0, acc)
    return;
  }
  for (int r = 0; r < mr; ++r)
    TK_DW_NV_CASES(1, ow0 + r, (int32_t(*)[NR])acc[r])
}
#endif

#ifdef TK_HAVE_VNNI_PATH
/* AVX2 without VNNI: exact products in 16 bits (`vpmaddwd`, as the int8
 * matmul's AVX2 tile). B is built in int16 ([G][Wp][Cp][4] of them): each
 * column is read by KW taps, so it is widened once here, not per tap. The
 * 4 rows' bytes of 32 channels are interleaved as in build_rows_vnni
 * (within 128-bit lanes), and each lane's 4 channels x 4 rows widen to one
 * vector of 16 int16. */
TK_AVX2_TARGET static void build_rows_avx2(const dwq_job_t *j, int64_t n,
                                           int64_t oh, int16_t *B) {
  const uint8_t *img = j->in + n * j->in_sn;
  const __m256i flip = _mm256_set1_epi8((char)j->flip);
  for (int64_t g = 0; g < j->G; ++g) {
    const uint8_t *rows[4], *px[4];
    group_rows(j, img, oh, g, rows);
    int16_t *dst = B + g * j->Wp * j->Cp * 4;
    for (int64_t x = 0; x < j->Wp; ++x) {
      column_pixels(j, rows, x, px);
      int16_t *o = dst + x * j->Cp * 4;
      for (int64_t c0 = 0; c0 < j->Cp; c0 += 32) {
        /* c0 < Cp = C rounded up to 16, so 1 <= rem. */
        const int64_t rem = j->C - c0;
        __m256i v[4];
        for (int r = 0; r < 4; ++r) {
          if (rem >= 32) {
            v[r] = _mm256_loadu_si256((const __m256i *)(px[r] + c0));
          } else { /* channels past C read as the zero point */
            uint8_t tmp[32];
            memset(tmp, j->zp ^ j->flip, sizeof tmp);
            memcpy(tmp, px[r] + c0, (size_t)rem);
            v[r] = _mm256_loadu_si256((const __m256i *)tmp);
          }
          v[r] = _mm256_xor_si256(v[r], flip);
        }
        const __m256i a = _mm256_unpacklo_epi8(v[0], v[1]);
        const __m256i b = _mm256_unpackhi_epi8(v[0], v[1]);
        const __m256i c = _mm256_unpacklo_epi8(v[2], v[3]);
        const __m256i d = _mm256_unpackhi_epi8(v[2], v[3]);
        /* lane l of q[k]: channels 16l + 4k .. 16l + 4k + 3 */
        const __m256i q[4] = {
            _mm256_unpacklo_epi16(a, c), _mm256_unpackhi_epi16(a, c),
            _mm256_unpacklo_epi16(b, d), _mm256_unpackhi_epi16(b, d)};
        const int lanes = j->Cp - c0 >= 32 ? 2 : 1;
        for (int l = 0; l < lanes; ++l)
          for (int k = 0; k < 4; ++k) {
            const __m128i h = l ? _mm256_extracti128_si256(q[k], 1)
                                : _mm256_castsi256_si128(q[k]);
            _mm256_storeu_si256((__m256i *)(o + (c0 + 16 * l + 4 * k) * 4),
                                _mm256_cvtepu8_epi16(h));
          }
      }
    }
  }
}

/* R pixels (a compile-time constant once inlined) x channels [c0, c0 +
 * 16 nv), 8 at a time: 2R accumulators of 4 channels' pair sums and the
 * tap's 2 widened weight vectors. */
TK_AVX2_TARGET static inline __attribute__((always_inline)) void
tile_avx2_fixed(const dwq_job_t *j, const int16_t *B, int64_t ow0, const int R,
                int64_t c0, int nv, int32_t acc[MR][NR]) {
  const int64_t step = j->sw * j->Cp * 4;
  for (int cb = 0; cb < 16 * nv; cb += 8) {
    __m256i lo[MR], hi[MR];
    for (int r = 0; r < R; ++r)
      lo[r] = hi[r] = _mm256_setzero_si256();
    for (int64_t g = 0; g < j->G; ++g)
      for (int64_t kw = 0; kw < j->KW; ++kw) {
        const int8_t *w = j->wp + ((g * j->KW + kw) * j->Cp + c0 + cb) * 4;
        const __m256i w0 =
            _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)w));
        const __m256i w1 =
            _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(w + 16)));
        const int16_t *b =
            B + ((g * j->Wp + ow0 * j->sw + kw * j->dw) * j->Cp + c0 + cb) * 4;
        for (int r = 0; r < R; ++r, b += step) {
          lo[r] = _mm256_add_epi32(
              lo[r], _mm256_madd_epi16(
                         _mm256_loadu_si256((const __m256i *)b), w0));
          hi[r] = _mm256_add_epi32(
              hi[r], _mm256_madd_epi16(
                         _mm256_loadu_si256((const __m256i *)(b + 16)), w1));
        }
      }
    for (int r = 0; r < R; ++r)
      _mm256_storeu_si256((__m256i *)(acc[r] + cb),
                          tk_pair_sums_avx2(lo[r], hi[r]));
  }
}

/* B: the int16 rows of build_rows_avx2. */
TK_AVX2_TARGET static void tile_avx2(const dwq_job_t *j, const uint8_t *B,
                                     int64_t ow0, int mr, int64_t c0, int nv,
                                     int32_t acc[MR][NR]) {
  const int16_t *b = (const int16_t *)(const void *)B;
  switch (mr) {
  case 1: tile_avx2_fixed(j, b, ow0, 1, c0, nv, acc); break;
  case 2: tile_avx2_fixed(j, b, ow0, 2, c0, nv, acc); break;
  case 3: tile_avx2_fixed(j, b, ow0, 3, c0, nv, acc); break;
  case 4: tile_avx2_fixed(j, b, ow0, 4, c0, nv, acc); break;
  case 5: tile_avx2_fixed(j, b, ow0, 5, c0, nv, acc); break;
  default: tile_avx2_fixed(j, b, ow0, 6, c0, nv, acc); break;
  }
}
#endif

typedef void (*dw_tile_fn)(const dwq_job_t *, const uint8_t *, int64_t, int,
                           int64_t, int, int32_t[MR][NR]);

static void run_row(void *arg, int64_t task) {
  const dwq_job_t *j = (const dwq_job_t *)arg;
  const int64_t n = task / j->OH, oh = task % j->OH;
  dw_tile_fn tile = tile_portable;
  size_t elem = 1; /* B's bytes per value: 2 for the AVX2 tile's int16 */
#ifdef TK_HAVE_VNNI_PATH
  if (tk_has_vnni()) {
    tile = tile_vnni;
  } else if (tk_has_avx2()) {
    tile = tile_avx2;
    elem = 2;
  }
#endif
  uint8_t *B = (uint8_t *)malloc((size_t)(j->G * j->Wp * j->Cp * 4) * elem);
  if (!B)
    abort(); /* as the generated code's allocations do */
#ifdef TK_HAVE_VNNI_PATH
  if (tile == tile_vnni)
    build_rows_vnni(j, n, oh, B);
  else if (tile == tile_avx2)
    build_rows_avx2(j, n, oh, (int16_t *)(void *)B);
  else
#endif
    build_rows(j, n, oh, B);
  const tk_finish_fn finish = j->ep ? tk_choose_finish(j->ep, 1) : NULL;
  const int64_t bytes = j->ep ? tk_epilogue_out_bytes(j->ep) : 4;
  static const int32_t no_row_off[MR] = {0};
  /* Zero once: a tile of fewer vectors than NR / 16 leaves the rest
   * as it was, and the vector epilogues read whole vectors. */
  int32_t acc[MR][NR] = {{0}};
  for (int64_t ow0 = 0; ow0 < j->OW; ow0 += MR) {
    const int mr = (int)(j->OW - ow0 < MR ? j->OW - ow0 : MR);
    for (int64_t c0 = 0; c0 < j->C; c0 += NR) {
      const int64_t width = j->C - c0 < NR ? j->C - c0 : NR;
      tile(j, B, ow0, mr, c0, (int)((width + 15) / 16), acc);
      char *out = j->out +
                  (n * j->out_sn + oh * j->out_sh + ow0 * j->out_sw + c0) *
                      bytes;
      if (finish) {
        finish(j->ep, acc, mr, no_row_off, j->colsum + c0, j->zp, c0, width,
               out, j->out_sw * bytes, 1, NULL, 0);
        continue;
      }
      for (int r = 0; r < mr; ++r) {
        int32_t *o = (int32_t *)(out + r * j->out_sw * bytes);
        for (int64_t c = 0; c < width; ++c)
          o[c] = acc[r][c] - j->zp * j->colsum[c0 + c];
      }
    }
  }
  free(B);
}

void tessel_kernel_depthwise_conv2d_u8s8(
    int64_t N, int64_t OH, int64_t OW, int64_t C, int64_t KH, int64_t KW,
    int64_t H, int64_t W, int64_t pad_top, int64_t pad_left,
    const uint8_t *in, int64_t in_sn, int64_t in_sh, int64_t in_sw,
    int32_t a_zp, int64_t stride_h, int64_t stride_w, int64_t dil_h,
    int64_t dil_w, const int8_t *wp, const int32_t *colsum, void *out,
    int64_t out_sn, int64_t out_sh, int64_t out_sw, const float *scale,
    const float *bias, float lo, float hi, float out_scale, float out_zp,
    float qmin, float qmax, const void *table, float dq_scale, float dq_zp,
    float dq_lo, float dq_hi, int32_t flags) {
  if (N <= 0 || OH <= 0 || OW <= 0 || C <= 0)
    return;
  const int a_signed = (flags & TESSEL_KERNEL_A_SIGNED) != 0;
  struct epilogue ep;
  if (scale) {
    tk_epilogue_init(&ep, scale, bias, lo, hi, out_scale, out_zp, qmin, qmax,
                     table, dq_scale, dq_zp, dq_lo, dq_hi, flags);
    tk_epilogue_bound(&ep, C, KH * KW, a_zp + (a_signed ? 128 : 0), 0);
  }
  dwq_job_t job;
  memset(&job, 0, sizeof job);
  job.N = N, job.OH = OH, job.OW = OW, job.C = C;
  job.Cp = (C + CB - 1) / CB * CB;
  job.KH = KH, job.KW = KW, job.H = H, job.W = W;
  job.pad_top = pad_top, job.pad_left = pad_left;
  job.in = in, job.in_sn = in_sn, job.in_sh = in_sh, job.in_sw = in_sw;
  job.flip = a_signed ? 0x80 : 0;
  job.zp = a_zp + (a_signed ? 128 : 0);
  job.sh = stride_h, job.sw = stride_w, job.dh = dil_h, job.dw = dil_w;
  job.wp = wp, job.colsum = colsum;
  job.out = (char *)out;
  job.out_sn = out_sn, job.out_sh = out_sh, job.out_sw = out_sw;
  job.ep = scale ? &ep : NULL;
  job.G = (KH + 3) / 4;
  /* Every column any window reads: the last pixel's last tap, from the
   * first padding column. */
  job.Wp = (OW - 1) * stride_w + (KW - 1) * dil_w + 1;
  uint8_t *zrow = (uint8_t *)malloc((size_t)job.Cp);
  if (!zrow)
    abort();
  memset(zrow, job.zp ^ job.flip, (size_t)job.Cp);
  job.zrow = zrow;
  /* vpdpbusd: 4 multiply-adds per f32 FMA's lane. */
  tk_parallel_for_bands(tk_threads_for(N * OH * OW * C * KH * KW / 4),
                        N * OH, 1, run_row, &job);
  free(zrow);
}
