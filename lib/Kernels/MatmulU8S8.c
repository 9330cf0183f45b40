/* MatmulU8S8.c - int8 matmul with exact int32 results
 * (tessel_kernel_matmul_u8s8_i32, described in Kernels.td).
 *
 * C = (A - a_zp) x (B - b_zp) in int32, A unsigned 8-bit (or signed with
 * TESSEL_KERNEL_A_SIGNED), B signed 8-bit packed for VNNI: per panel of NR
 * columns, groups of 4 consecutive k per column, bp[p][k/4][j][k%4]
 * (what `vpdpbusd` multiplies: 4 u8 x 4 s8 summed into one int32 lane).
 * The kernel computes S = sum_k a*b and corrects for the zero points:
 *   C[m][n] = S - a_zp * colsum_b[n] - b_zp * rowsum_a[m] + K * a_zp * b_zp
 * where colsum_b comes with the weights (packed at compile time) or is
 * computed here. Signed activations are made unsigned by flipping the top
 * bit (a + 128, a_zp + 128), so one micro-kernel serves both.
 *
 * The AVX-512 VNNI micro-kernel keeps 6 rows x 64 columns of int32 in 24
 * zmm accumulators, like the fp32 one; each step broadcasts 4 bytes of a
 * row and runs `vpdpbusd` against 4 vectors of packed weights: 4x the
 * multiply-adds of an fp32 FMA per instruction. It is chosen at run time
 * (CPUID), since x86-64-v4 does not imply VNNI; CPUs with AVX2 but no VNNI
 * take tile_avx2 (16-bit vpmaddwd, exact), others portable C over the same
 * layout. int32 sums wrap only past K = 65793 (255 * 128 *
 * K < 2^31), far beyond any layer.
 *
 * tessel_kernel_matmul_u8s8_requant runs the same tiles and, instead of
 * storing int32, finishes each tile while it is in L1 (Requantize.h): the
 * dequantize (scale, bias), clamp and requantize of a QDQ model's
 * activation, then an optional 256-entry table for what follows the
 * quantization.
 */
#include "AmxTiles.h"
#include "Im2colSegments.h"
#include "Requantize.h"
#include "ThreadPool.h"
#include "tessel/Kernels/tessel_kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#pragma clang fp contract(off)

#define NR TK_RQ_NR
#define KG TESSEL_KERNEL_KGROUP_I8
#define MR TK_RQ_MR
/* Rows per task (a multiple of MR). */
#define MBLOCK 48

typedef struct {
  int64_t M, N, K, npanels, mtiles;
  const uint8_t *a;
  int64_t a_sb, a_sm;
  int32_t a_zp, b_zp;
  uint32_t a_flip; /* 0x80808080 for signed A: a + 128 per byte */
  const int8_t *bp;
  int64_t bp_sb;
  const int32_t *colsum; /* NULL when a_zp is 0 */
  int64_t colsum_sb;
  void *c; /* int32_t, or the epilogue's output type */
  int64_t c_sb, c_sm, c_sn;
  int accumulate;
  const struct epilogue *ep; /* NULL: int32 output */
  /* Which bytes form row m of A. A matmul (ow = 0): a + m * a_sm. The
   * convolution form: the im2col row of output pixel (m / ow, m % ow), at
   * a + (m / ow) * a_sh + (m % ow) * a_sw, made of nseg segments of
   * seg_len bytes at seg_off[s] from there, in k order. With gather, the
   * segments are first copied into one contiguous row per tile row. */
  int64_t ow, a_sh, a_sw;
  const int64_t *seg_off;
  int64_t nseg, seg_len;
  int gather;
} job_t;

/* The segments of a contiguous row of K bytes (a matmul's, or a gathered
 * one). */
static const int64_t k_no_offset[1] = {0};

/* 4 bytes of row `a` from k = 4 * g: the last group is zero-padded (the
 * packed weights are zero there too, so the pad adds nothing). */
static inline uint32_t load_group(const uint8_t *a, int64_t g, int64_t K) {
  uint32_t v = 0;
  const int64_t k = g * KG;
  memcpy(&v, a + k, (size_t)(K - k >= KG ? KG : K - k));
  return v;
}

/* Copies a run of `len` bytes of an im2col row (short: a filter row of an
 * RGB stem is 21 bytes), without a library call where AVX-512BW is on. */
static inline void copy_run(uint8_t *dst, const uint8_t *src, int64_t len) {
#if defined(__AVX512BW__) && !defined(TESSEL_KERNELS_NO_ASM)
  for (; len >= 64; len -= 64, dst += 64, src += 64)
    _mm512_storeu_si512(dst, _mm512_loadu_si512(src));
  if (len > 0) {
    const __mmask64 m = ((__mmask64)1 << len) - 1;
    _mm512_mask_storeu_epi8(dst, m, _mm512_maskz_loadu_epi8(m, src));
  }
#else
  memcpy(dst, src, (size_t)len);
#endif
}

/* sum_k (a[k] ^ flip) over one row. */
static int32_t row_sum(const uint8_t *a, int64_t K, uint32_t flip) {
  int32_t s = 0;
  const uint8_t f = (uint8_t)flip;
  for (int64_t k = 0; k < K; ++k)
    s += (uint8_t)(a[k] ^ f);
  return s;
}

/* The k extent of a tile's rows: nseg segments of seg_len bytes at
 * off[s] from each row pointer. The VNNI and AVX2 tiles take more than
 * one segment (then seg_len is a multiple of KG); the portable one gets
 * contiguous rows (nseg = 1, seg_len = K). */
typedef struct {
  const int64_t *off;
  int64_t nseg, seg_len;
} segs_t;

/* acc[r][j] = init[j] (0 without init) + the sum over the panel's k of
 * (a_r ^ flip) * b, rows r < mr. */
static void tile_portable(int mr, int nv, const uint8_t *const *arow,
                          int64_t K, uint32_t flip, const int8_t *panel,
                          const segs_t *sg, const int32_t *init,
                          int32_t acc[MR][NR]) {
  (void)sg; /* contiguous rows */
  const int cols = 16 * nv;
  const int64_t groups = (K + KG - 1) / KG;
  memset(acc, 0, sizeof(int32_t) * MR * NR);
  for (int r = 0; r < mr; ++r) {
    int32_t *out = acc[r];
    if (init)
      memcpy(out, init, sizeof(int32_t) * (size_t)cols);
    for (int64_t g = 0; g < groups; ++g) {
      uint32_t word = load_group(arow[r], g, K) ^ flip;
      uint8_t av[KG];
      memcpy(av, &word, KG);
      const int8_t *b = panel + g * NR * KG;
      for (int j = 0; j < cols; ++j) {
        int32_t s = 0;
        for (int t = 0; t < KG; ++t)
          s += (int32_t)av[t] * (int32_t)b[j * KG + t];
        out[j] += s;
      }
    }
  }
}

#ifdef TK_HAVE_VNNI_PATH
/* One MR-row tile of V vectors of 16 columns (V < 4: a last panel of
 * N < 64 columns, as MobileNet's 16- to 40-channel projections have, runs
 * only the vectors it needs), with R and V compile-time constants once
 * inlined into the switch below, so the V x R accumulators stay in
 * registers. */
TK_VNNI_TARGET static inline __attribute__((always_inline)) void
tile_vnni_rows(const int R, const int V, const uint8_t *const *arow,
               const uint32_t flip, const int8_t *panel, const segs_t *sg,
               const int32_t *init, int32_t acc[MR][NR]) {
  __m512i c[MR][4];
  for (int v = 0; v < V; ++v) {
    const __m512i c0 =
        init ? _mm512_loadu_si512(init + 16 * v) : _mm512_setzero_si512();
    for (int r = 0; r < R; ++r)
      c[r][v] = c0;
  }
  /* Groups per segment; only a lone segment can end in a partial one. */
  const int64_t len = sg->seg_len, full = len / KG, groups = (len + KG - 1) / KG;
  const int8_t *b = panel;
  for (int64_t s = 0; s < sg->nseg; ++s) {
    /* The rows' segment starts, held in registers across the k loop. */
    const uint8_t *p[MR];
    for (int r = 0; r < R; ++r)
      p[r] = arow[r] + sg->off[s];
    for (int64_t g = 0; g < full; ++g, b += NR * KG) {
      __m512i bv[4];
      for (int v = 0; v < V; ++v)
        bv[v] = _mm512_loadu_si512(b + 64 * v);
      for (int r = 0; r < R; ++r) {
        int32_t word;
        memcpy(&word, p[r] + g * KG, sizeof word);
        __m512i av = _mm512_set1_epi32(word);
        if (flip) /* a compile-time constant once inlined */
          av = _mm512_xor_si512(av, _mm512_set1_epi32((int)flip));
        for (int v = 0; v < V; ++v)
          c[r][v] = _mm512_dpbusd_epi32(c[r][v], av, bv[v]);
      }
    }
    if (full < groups) { /* a lone segment's last, partial group */
      __m512i bv[4];
      for (int v = 0; v < V; ++v)
        bv[v] = _mm512_loadu_si512(b + 64 * v);
      b += NR * KG;
      for (int r = 0; r < R; ++r) {
        const __m512i av = _mm512_set1_epi32(
            (int32_t)(load_group(p[r], full, len) ^ flip));
        for (int v = 0; v < V; ++v)
          c[r][v] = _mm512_dpbusd_epi32(c[r][v], av, bv[v]);
      }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v)
      _mm512_storeu_si512(acc[r] + 16 * v, c[r][v]);
}

/* Row counts, vector counts and the activation flip as compile-time
 * constants. */
#define TK_VNNI_ROWS(V, flip)                                                  \
  switch (mr) {                                                                \
  case 1: tile_vnni_rows(1, V, arow, flip, panel, sg, init, acc); break;             \
  case 2: tile_vnni_rows(2, V, arow, flip, panel, sg, init, acc); break;             \
  case 3: tile_vnni_rows(3, V, arow, flip, panel, sg, init, acc); break;             \
  case 4: tile_vnni_rows(4, V, arow, flip, panel, sg, init, acc); break;             \
  case 5: tile_vnni_rows(5, V, arow, flip, panel, sg, init, acc); break;             \
  default: tile_vnni_rows(6, V, arow, flip, panel, sg, init, acc); break;            \
  }
#define TK_VNNI_VECTORS(flip)                                                  \
  switch (nv) {                                                                \
  case 1: TK_VNNI_ROWS(1, flip) break;                                         \
  case 2: TK_VNNI_ROWS(2, flip) break;                                         \
  case 3: TK_VNNI_ROWS(3, flip) break;                                         \
  default: TK_VNNI_ROWS(4, flip) break;                                        \
  }

TK_VNNI_TARGET static void tile_vnni(int mr, int nv,
                                     const uint8_t *const *arow, int64_t K,
                                     uint32_t flip, const int8_t *panel,
                                     const segs_t *sg, const int32_t *init,
                                     int32_t acc[MR][NR]) {
  (void)K; /* sg->nseg * sg->seg_len */
  if (flip)
    TK_VNNI_VECTORS(0x80808080u)
  else
    TK_VNNI_VECTORS(0u)
}
#undef TK_VNNI_VECTORS
#undef TK_VNNI_ROWS

/* AVX2 without VNNI: exact products by widening both operands to 16 bits
 * and `vpmaddwd` (vpmaddubsw would saturate: 255 * 127 * 2 > 32767).
 * The rows are widened once per tile and k block into a small buffer, 4
 * bytes of a group -> 4 int16 (8 bytes), so each step broadcasts them with
 * a plain load (vpbroadcastq) and the ALU only widens the weights and
 * multiplies. For 8 columns, the group's 32 packed bytes (8 columns x 4 k)
 * widen to two vectors of 4 columns x 4 k; against a row's 4 widened values
 * (repeated) vpmaddwd gives each column's two pair sums, kept apart in the
 * accumulators and added once per block. R rows x 8 columns: 2R
 * accumulators (12 for R = 6), 2 weight vectors and 1 row vector fit
 * AVX2's 16 registers; per group 2 widens and 2R multiply-adds. */

/* Groups of 4 k per block: the panel's 64 x 256 bytes and R rows x 64 x 8
 * bytes of widened rows (3 KiB for 6 rows) stay in L1 while every column
 * block of the panel runs over them (256 groups measured 5-15% slower on
 * Zen 3, most for one row). */
#define TK_AVX2_KBLOCK 64

/* Widens groups [g0, g0 + n) of row `a` (K bytes, each ^ flip) to int16:
 * w[g] holds k = 4g..4g+3. */
TK_AVX2_TARGET static void widen_row(const uint8_t *a, int64_t K,
                                     uint32_t flip, int64_t g0, int64_t n,
                                     uint64_t *w) {
  const __m128i f = _mm_set1_epi32((int)flip);
  int64_t g = 0;
  for (; g + 4 <= n && (g0 + g + 4) * KG <= K; g += 4) {
    const __m128i v = _mm_xor_si128(
        _mm_loadu_si128((const __m128i *)(a + (g0 + g) * KG)), f);
    _mm256_storeu_si256((__m256i *)(w + g), _mm256_cvtepu8_epi16(v));
  }
  for (; g < n; ++g) {
    /* A partial last group's pad bytes become 0 ^ flip: the weights there
     * are 0, so they add nothing. */
    const uint32_t word = load_group(a, g0 + g, K) ^ flip;
    const __m128i v = _mm_cvtepu8_epi16(_mm_cvtsi32_si128((int)word));
    _mm_storel_epi64((__m128i *)(w + g), v);
  }
}

/* R rows (a compile-time constant once inlined) x columns [0, 16 nv) of
 * the panel over groups [g0, g0 + n), from rows widened into w (row r at
 * w + r * TK_AVX2_KBLOCK); `first` stores the sums, else adds them. */
TK_AVX2_TARGET static inline __attribute__((always_inline)) void
tile_avx2_rows(const int R, int nv, const uint64_t *w, const int8_t *panel,
               int64_t g0, int64_t n, int first, const int32_t *init,
               int32_t acc[MR][NR]) {
  for (int cb = 0; cb < 16 * nv; cb += 8) {
    __m256i lo[MR], hi[MR];
    for (int r = 0; r < R; ++r)
      lo[r] = hi[r] = _mm256_setzero_si256();
    const int8_t *b = panel + g0 * NR * KG + cb * KG;
    for (int64_t g = 0; g < n; ++g, b += NR * KG) {
      const __m256i b0 =
          _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)b));
      const __m256i b1 =
          _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(b + 16)));
      for (int r = 0; r < R; ++r) {
        const __m256i a =
            _mm256_set1_epi64x((long long)w[r * TK_AVX2_KBLOCK + g]);
        lo[r] = _mm256_add_epi32(lo[r], _mm256_madd_epi16(b0, a));
        hi[r] = _mm256_add_epi32(hi[r], _mm256_madd_epi16(b1, a));
      }
    }
    for (int r = 0; r < R; ++r) {
      __m256i s = tk_pair_sums_avx2(lo[r], hi[r]);
      if (!first)
        s = _mm256_add_epi32(
            s, _mm256_loadu_si256((const __m256i *)(acc[r] + cb)));
      else if (init)
        s = _mm256_add_epi32(s,
                             _mm256_loadu_si256((const __m256i *)(init + cb)));
      _mm256_storeu_si256((__m256i *)(acc[r] + cb), s);
    }
  }
}

/* The same for a row of segments (segs_t: whole groups each, but for a
 * lone segment's last), read in place: a convolution's window, widened
 * without first being gathered into one row. */
TK_AVX2_TARGET static void widen_segments(const uint8_t *base,
                                          const segs_t *sg, uint32_t flip,
                                          int64_t g0, int64_t n,
                                          uint64_t *w) {
  if (sg->nseg == 1) {
    widen_row(base + sg->off[0], sg->seg_len, flip, g0, n, w);
    return;
  }
  const int64_t per = sg->seg_len / KG; /* groups per segment */
  for (int64_t g = g0; g < g0 + n;) {
    const int64_t s = g / per, in = g % per;
    const int64_t run = per - in < g0 + n - g ? per - in : g0 + n - g;
    widen_row(base + sg->off[s], sg->seg_len, flip, in, run, w + (g - g0));
    g += run;
  }
}

TK_AVX2_TARGET static void tile_avx2(int mr, int nv,
                                     const uint8_t *const *arow,
                                     int64_t K, uint32_t flip,
                                     const int8_t *panel, const segs_t *sg,
                                     const int32_t *init,
                                     int32_t acc[MR][NR]) {
  uint64_t w[MR * TK_AVX2_KBLOCK];
  const int64_t groups = (K + KG - 1) / KG;
  if (groups == 0) /* K = 0: empty sums */
    for (int r = 0; r < mr; ++r) {
      memset(acc[r], 0, sizeof acc[r]);
      if (init)
        memcpy(acc[r], init, sizeof(int32_t) * (size_t)(16 * nv));
    }
  for (int64_t g0 = 0; g0 < groups; g0 += TK_AVX2_KBLOCK) {
    const int64_t n =
        groups - g0 < TK_AVX2_KBLOCK ? groups - g0 : TK_AVX2_KBLOCK;
    for (int r = 0; r < mr; ++r)
      widen_segments(arow[r], sg, flip, g0, n, w + r * TK_AVX2_KBLOCK);
    const int first = g0 == 0;
    switch (mr) {
    case 1: tile_avx2_rows(1, nv, w, panel, g0, n, first, init, acc); break;
    case 2: tile_avx2_rows(2, nv, w, panel, g0, n, first, init, acc); break;
    case 3: tile_avx2_rows(3, nv, w, panel, g0, n, first, init, acc); break;
    case 4: tile_avx2_rows(4, nv, w, panel, g0, n, first, init, acc); break;
    case 5: tile_avx2_rows(5, nv, w, panel, g0, n, first, init, acc); break;
    default: tile_avx2_rows(6, nv, w, panel, g0, n, first, init, acc); break;
    }
  }
}

#endif

/* (mr, nv, ...): rows, and the vectors of 16 columns needed (a tile may
 * compute more: only acc[r][0, 16 * nv) is read); init (NULL: zeros) the
 * sums' start, per column. */
typedef void (*tile_fn)(int, int, const uint8_t *const *, int64_t, uint32_t,
                        const int8_t *, const segs_t *, const int32_t *,
                        int32_t[MR][NR]);

static tile_fn choose_tile(void) {
#ifdef TK_HAVE_VNNI_PATH
  if (tk_has_vnni())
    return tile_vnni;
  if (tk_has_avx2())
    return tile_avx2;
#endif
  return tile_portable;
}

/* Row m of batch entry b of A: its first byte (the convolution form: the
 * output pixel's window origin). */
static inline const uint8_t *row_base(const job_t *j, int64_t b, int64_t m) {
  const uint8_t *a = j->a + b * j->a_sb;
  if (!j->ow)
    return a + m * j->a_sm;
  return a + (m / j->ow) * j->a_sh + (m % j->ow) * j->a_sw;
}

/* Whether the tile this CPU runs reads a row's segments in place (the
 * VNNI and AVX2 ones; the portable one wants contiguous rows). */
static int tile_reads_segments(void) {
#ifdef TK_HAVE_VNNI_PATH
  const tile_fn t = choose_tile();
  return t == tile_vnni || t == tile_avx2;
#else
  return 0;
#endif
}

/* Finishes rows [m0, m0 + mr) of one panel from their sums in acc: the
 * zero-point corrections (row_off: each row's constant part) and either
 * the epilogue or the int32 store. */
static inline __attribute__((always_inline)) void
finish_tile(const job_t *j, int64_t b, int64_t m0, int mr,
            const int32_t *row_off, const int32_t *colsum, int64_t n0,
            int64_t width, tk_finish_fn finish, int32_t acc[MR][NR]) {
  const int64_t at = b * j->c_sb + m0 * j->c_sm + n0 * j->c_sn;
  if (j->ep) {
    const int64_t bytes = tk_epilogue_out_bytes(j->ep);
    const struct epilogue *ep = j->ep;
    const float *res = ep->res ? ep->res + b * ep->res_sb + m0 * ep->res_sm +
                                     n0 * ep->res_sn
                               : NULL;
    finish(ep, acc, mr, row_off, colsum, j->a_zp, n0, width,
           (char *)j->c + at * bytes, j->c_sm * bytes, j->c_sn, res,
           ep->res_sm);
    return;
  }
  tk_finish_i32(acc, mr, row_off, colsum, j->a_zp, width,
                (int32_t *)j->c + at, j->c_sm, j->c_sn, j->accumulate);
}

static void run_task(void *arg, int64_t task) {
  const job_t *j = (const job_t *)arg;
  const int64_t p = task % j->npanels;
  const int64_t mt = (task / j->npanels) % j->mtiles;
  const int64_t b = task / (j->npanels * j->mtiles);
  const tile_fn tile = choose_tile();
  const tk_finish_fn finish = j->ep ? tk_choose_finish(j->ep, j->c_sn) : NULL;
  const int8_t *panel = j->bp + b * j->bp_sb + p * ((j->K + KG - 1) / KG) * NR * KG;
  const int32_t *colsum =
      j->colsum ? j->colsum + b * j->colsum_sb + p * NR : NULL;
  const int64_t n0 = p * NR, width = j->N - n0 < NR ? j->N - n0 : NR;
  const int32_t kzz = (int32_t)j->K * j->a_zp * j->b_zp;
  /* The corrections common to a column, K a_zp b_zp - a_zp colsum[n],
   * start the sums (no pass over them, no vector multiply per tile); the
   * row's own, - b_zp rowsum[m], is added by the finish. */
  int32_t init_v[NR];
  const int32_t *init = NULL;
  if (colsum || kzz) {
    for (int64_t n = 0; n < NR; ++n)
      init_v[n] = n < width ? kzz - (colsum ? j->a_zp * colsum[n] : 0) : 0;
    init = init_v;
  }
  const segs_t rows_in_place = {j->seg_off, j->nseg, j->seg_len},
               contiguous = {k_no_offset, 1, j->K};
  /* Gathered rows: MR of K bytes, reused by every tile of the task. */
  uint8_t *scratch = NULL;
  if (j->gather && !(scratch = (uint8_t *)malloc((size_t)(MR * j->K))))
    abort(); /* out of memory: nothing sane to return */
  /* Zero once: a tile of fewer vectors than NR / 16 leaves the rest
   * as it was, and the vector epilogues read whole vectors. */
  int32_t acc[MR][NR] = {{0}};
  const int64_t m_end =
      (mt + 1) * MBLOCK < j->M ? (mt + 1) * MBLOCK : j->M;
  /* The convolution form's output pixel of row m0, stepped along (two
   * divisions per task, not two per row). */
  int64_t oh = j->ow ? mt * MBLOCK / j->ow : 0, ow = j->ow ? mt * MBLOCK % j->ow : 0;
  const uint8_t *const a_b = j->a + b * j->a_sb;
  for (int64_t m0 = mt * MBLOCK; m0 < m_end; m0 += MR) {
    const int mr = (int)(m_end - m0 < MR ? m_end - m0 : MR);
    const uint8_t *arow[MR];
    for (int r = 0; r < mr; ++r) {
      if (j->ow) {
        arow[r] = a_b + oh * j->a_sh + ow * j->a_sw;
        if (++ow == j->ow)
          ow = 0, ++oh;
      } else {
        arow[r] = a_b + (m0 + r) * j->a_sm;
      }
      if (scratch) {
        uint8_t *row = scratch + r * j->K;
        for (int64_t s = 0; s < j->nseg; ++s)
          copy_run(row + s * j->seg_len, arow[r] + j->seg_off[s], j->seg_len);
        arow[r] = row;
      }
    }
    tile(mr, (int)((width + 15) / 16), arow, j->K, j->a_flip, panel,
         scratch ? &contiguous : &rows_in_place, init, acc);
    int32_t row_off[MR];
    for (int r = 0; r < mr; ++r)
      row_off[r] = j->b_zp ? -j->b_zp * row_sum(arow[r], j->K, j->a_flip) : 0;
    finish_tile(j, b, m0, mr, row_off, NULL, n0, width, finish, acc);
  }
  free(scratch);
}

/* The AMX order. A's rows are gathered into contiguous, unsigned rows of
 * whole 64-byte steps, zero-padded past K: AMX's A tiles load them with
 * one stride whatever the rows' origin (a matmul's rows, or a convolution
 * window's segments), 64-byte aligned (a tile row that straddles two cache
 * lines halves the loads' speed). A panel then runs 16 rows at a time,
 * its last partial step (K not a multiple of 64) against a zero-padded
 * copy of its last groups.
 *
 * Two orders, by the size of B. Weights that L2 keeps (TK_AMX_B_IN_L2)
 * are cheap to read again: a task gathers 3 strips (48 rows, in L1) and
 * runs them against every panel, as the VNNI order does. Larger weights
 * would come from memory once per task: rows are gathered a chunk at a
 * time (TK_AMX_CHUNK_BYTES, in L2, by all threads), and each task runs
 * one panel against the chunk's strips, so every panel is read once per
 * chunk. */
#define TK_AMX_B_IN_L2 (256 << 10)
#define TK_AMX_CHUNK_BYTES (256 << 10)
#define TK_AMX_TASK_STRIPS 3

typedef struct {
  const job_t *j;
  int64_t b, m_begin, m_end, kpad;
  int64_t strips_per_task; /* per task (at most 3 in the small-B order) */
  uint8_t *rows;           /* the large-B order's chunk */
  int32_t *rsum;           /* its rows' sums, for a weight zero point */
} amx_job_t;

/* Gathers 16 * nstrips rows from row m_first (rows past c->m_end zero). */
static void amx_gather(const amx_job_t *c, int64_t m_first, int64_t nstrips,
                       uint8_t *rows, int32_t *rsum) {
  const job_t *j = c->j;
  /* Locals, so that the flip loop is not reloading them (stores to the
   * rows could alias the job, as far as the compiler knows). */
  const uint8_t f = (uint8_t)j->a_flip;
  const int64_t K = j->K, kpad = c->kpad, nseg = j->nseg, len = j->seg_len;
  for (int64_t r = 0; r < nstrips * TK_AMX_ROWS; ++r) {
    uint8_t *dst = rows + r * kpad;
    if (m_first + r >= c->m_end) {
      memset(dst, 0, (size_t)kpad);
      continue;
    }
    const uint8_t *base = row_base(j, c->b, m_first + r);
    for (int64_t s = 0; s < nseg; ++s)
      copy_run(dst + s * len, base + j->seg_off[s], len);
    if (f)
      for (int64_t k = 0; k < K; ++k)
        dst[k] ^= f;
    memset(dst + K, 0, (size_t)(kpad - K));
    if (j->b_zp)
      rsum[r] = row_sum(dst, K, 0);
  }
}

/* Strips [s0, s1) of the gathered rows (row 0 is row m_first of A) against
 * panel p, finished; the tiles configured by the caller. */
static void amx_panel(const amx_job_t *c, int64_t p, const uint8_t *rows,
                      const int32_t *rsum, int64_t m_first, int64_t s0,
                      int64_t s1, tk_finish_fn finish) {
  const job_t *j = c->j;
  const int64_t steps = j->K / TK_AMX_KSTEP, tail = j->K % TK_AMX_KSTEP,
                groups = (j->K + KG - 1) / KG;
  const int8_t *panel = j->bp + c->b * j->bp_sb + p * groups * NR * KG;
  const int32_t *colsum =
      j->colsum ? j->colsum + c->b * j->colsum_sb + p * NR : NULL;
  const int64_t n0 = p * NR, width = j->N - n0 < NR ? j->N - n0 : NR;
  const int32_t kzz = (int32_t)j->K * j->a_zp * j->b_zp;
  _Alignas(64) int8_t tail_b[TK_AMX_ROWS * NR * KG];
  _Alignas(64) int32_t acc[TK_AMX_ROWS][NR];
  if (tail)
    tk_amx_tail(tail_b, panel, steps, groups - steps * TK_AMX_ROWS);
  for (int64_t st = s0; st < s1; ++st) {
    tk_amx_strip_u8s8(rows + st * TK_AMX_ROWS * c->kpad, c->kpad, steps,
                      panel, tail ? tail_b : NULL, &acc[0][0]);
    for (int64_t r0 = 0; r0 < TK_AMX_ROWS; r0 += MR) {
      const int64_t m0 = m_first + st * TK_AMX_ROWS + r0;
      if (m0 >= c->m_end)
        break;
      int64_t mr = c->m_end - m0 < MR ? c->m_end - m0 : MR;
      if (mr > TK_AMX_ROWS - r0) /* the strip's last 16 % MR rows */
        mr = TK_AMX_ROWS - r0;
      int32_t row_off[MR];
      for (int r = 0; r < mr; ++r)
        row_off[r] = kzz - j->b_zp * rsum[m0 - m_first + r];
      finish_tile(j, c->b, m0, (int)mr, row_off, colsum, n0, width, finish,
                  (int32_t(*)[NR])acc[r0]);
    }
  }
}

static tk_finish_fn amx_finish(const job_t *j) {
  return j->ep ? tk_choose_finish(j->ep, j->c_sn) : NULL;
}

/* Small B: task t gathers strips [n t, n t + n) of batch entry c->b (n =
 * c->strips_per_task). */
static void amx_rows_task(void *arg, int64_t task) {
  const amx_job_t *c = (const amx_job_t *)arg;
  const int64_t per = c->strips_per_task;
  const int64_t m_first = task * per * TK_AMX_ROWS;
  const int64_t left = (c->m_end - m_first + TK_AMX_ROWS - 1) / TK_AMX_ROWS;
  const int64_t nstrips = left < per ? left : per;
  uint8_t *rows = (uint8_t *)aligned_alloc(
      64, (size_t)(per * TK_AMX_ROWS * c->kpad));
  int32_t rsum[TK_AMX_TASK_STRIPS * TK_AMX_ROWS];
  if (!rows)
    abort(); /* out of memory: nothing sane to return */
  amx_gather(c, m_first, nstrips, rows, rsum);
  const tk_finish_fn finish = amx_finish(c->j);
  tk_amx_configure();
  for (int64_t p = 0; p < c->j->npanels; ++p)
    amx_panel(c, p, rows, rsum, m_first, 0, nstrips, finish);
  tk_amx_release();
  free(rows);
}

/* Large B: the chunk's strips gathered by all threads... */
static void amx_gather_task(void *arg, int64_t strip) {
  const amx_job_t *c = (const amx_job_t *)arg;
  amx_gather(c, c->m_begin + strip * TK_AMX_ROWS, 1,
             c->rows + strip * TK_AMX_ROWS * c->kpad,
             c->rsum + strip * TK_AMX_ROWS);
}

/* ... then task t runs one panel against a run of them, panel-major. */
static void amx_panel_task(void *arg, int64_t task) {
  const amx_job_t *c = (const amx_job_t *)arg;
  const int64_t nstrips =
      (c->m_end - c->m_begin + TK_AMX_ROWS - 1) / TK_AMX_ROWS;
  const int64_t runs = (nstrips + c->strips_per_task - 1) / c->strips_per_task;
  const int64_t s0 = task % runs * c->strips_per_task,
                s1 = s0 + c->strips_per_task < nstrips ? s0 + c->strips_per_task
                                                       : nstrips;
  tk_amx_configure();
  amx_panel(c, task / runs, c->rows, c->rsum, c->m_begin, s0, s1,
            amx_finish(c->j));
  tk_amx_release();
}

static void run_amx(const job_t *j, int64_t batch) {
  amx_job_t c = {0};
  c.j = j;
  c.kpad = (j->K + TK_AMX_KSTEP - 1) / TK_AMX_KSTEP * TK_AMX_KSTEP;
  const int64_t strips_m = (j->M + TK_AMX_ROWS - 1) / TK_AMX_ROWS;
  /* AMX-INT8: about 16x the f32 rate per element. */
  const int64_t threads = tk_threads_for(batch * j->M * j->N * j->K / 16);
  if (j->npanels * c.kpad / KG * NR * KG <= TK_AMX_B_IN_L2) {
    /* Fewer strips per task where 3 would leave threads idle. */
    int64_t per = TK_AMX_TASK_STRIPS;
    while (per > 1 && (strips_m + per - 1) / per < 2 * threads)
      --per;
    c.strips_per_task = per;
    for (c.b = 0; c.b < batch; ++c.b) {
      c.m_end = j->M;
      tk_parallel_for_on((int)threads, (strips_m + per - 1) / per,
                         amx_rows_task, &c);
    }
    return;
  }
  int64_t chunk = TK_AMX_CHUNK_BYTES / c.kpad / TK_AMX_ROWS;
  if (chunk < TK_AMX_TASK_STRIPS)
    chunk = TK_AMX_TASK_STRIPS;
  if (chunk > strips_m)
    chunk = strips_m;
  c.rows = (uint8_t *)aligned_alloc(
      64, (size_t)(chunk * TK_AMX_ROWS * c.kpad));
  c.rsum = (int32_t *)calloc((size_t)(chunk * TK_AMX_ROWS), sizeof(int32_t));
  if (!c.rows || !c.rsum)
    abort(); /* out of memory: nothing sane to return */
  for (c.b = 0; c.b < batch; ++c.b)
    for (c.m_begin = 0; c.m_begin < j->M; c.m_begin += chunk * TK_AMX_ROWS) {
      c.m_end = c.m_begin + chunk * TK_AMX_ROWS < j->M
                    ? c.m_begin + chunk * TK_AMX_ROWS
                    : j->M;
      const int64_t nstrips =
          (c.m_end - c.m_begin + TK_AMX_ROWS - 1) / TK_AMX_ROWS;
      tk_parallel_for_on((int)threads, nstrips, amx_gather_task, &c);
      /* Every strip of the chunk per task where the panels keep the
       * threads busy, else runs of 3 (or fewer) so that the strips do. */
      c.strips_per_task = nstrips;
      while (c.strips_per_task > 1 &&
             j->npanels * ((nstrips + c.strips_per_task - 1) /
                           c.strips_per_task) < 4 * threads)
        c.strips_per_task = c.strips_per_task > TK_AMX_TASK_STRIPS
                                ? TK_AMX_TASK_STRIPS
                                : c.strips_per_task - 1;
      tk_parallel_for_on((int)threads,
                         j->npanels * ((nstrips + c.strips_per_task - 1) /
                                       c.strips_per_task),
                         amx_panel_task, &c);
    }
  free(c.rsum);
  free(c.rows);
}

/* colsum[b][n] = sum_k B[b][k][n] from the packed layout. */
static int32_t *column_sums(const int8_t *bp, int64_t bp_sb, int64_t batches,
                            int64_t npanels, int64_t K) {
  const int64_t groups = (K + KG - 1) / KG;
  int32_t *s = (int32_t *)calloc((size_t)(batches * npanels * NR),
                                 sizeof(int32_t));
  if (!s)
    abort(); /* out of memory: nothing sane to return */
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t p = 0; p < npanels; ++p) {
      const int8_t *panel = bp + b * bp_sb + p * groups * NR * KG;
      int32_t *out = s + (b * npanels + p) * NR;
      for (int64_t g = 0; g < groups; ++g)
        for (int jj = 0; jj < NR; ++jj)
          for (int t = 0; t < KG; ++t)
            out[jj] += panel[(g * NR + jj) * KG + t];
    }
  return s;
}

/* Runs `j` (its A rows, C and epilogue set by the caller) over `batch`
 * entries of B: fills in the zero-point fields and the column sums. */
static void run_u8s8(job_t *j, int64_t batch, int32_t a_zp, int a_signed,
                     const int8_t *bp, int64_t bp_sb, const int32_t *b_colsum,
                     int32_t b_zp) {
  if (batch <= 0 || j->M <= 0 || j->N <= 0)
    return;
  const int64_t npanels = (j->N + NR - 1) / NR;
  const int32_t azp = a_zp + (a_signed ? 128 : 0);
  /* Column sums: the caller's (N per packed B), computed here when the
   * caller has none and a zero point needs them, or none at all. */
  int32_t *sums = NULL;
  int64_t colsum_sb = bp_sb ? j->N : 0;
  if (!b_colsum && azp != 0) {
    sums = column_sums(bp, bp_sb, bp_sb ? batch : 1, npanels, j->K);
    b_colsum = sums;
    colsum_sb = bp_sb ? npanels * NR : 0;
  }
  j->npanels = npanels;
  j->mtiles = (j->M + MBLOCK - 1) / MBLOCK;
  j->a_zp = azp;
  j->b_zp = b_zp;
  j->a_flip = a_signed ? 0x80808080u : 0u;
  j->bp = bp;
  j->bp_sb = bp_sb;
  j->colsum = azp ? b_colsum : NULL;
  j->colsum_sb = colsum_sb;
  if (j->M >= TK_AMX_ROWS && j->K >= TK_AMX_KSTEP && tk_has_amx()) {
    run_amx(j, batch);
  } else {
    /* vpdpbusd: 4 multiply-adds per f32 FMA's lane. */
    tk_parallel_for_on(tk_threads_for(batch * j->M * j->N * j->K / 4),
                       batch * j->mtiles * npanels, run_task, j);
  }
  free(sums);
}

static void matmul_u8s8(int64_t batch, int64_t M, int64_t N, int64_t K,
                        const uint8_t *a, int64_t a_sb, int64_t a_sm,
                        int32_t a_zp, const int8_t *bp, int64_t bp_sb,
                        const int32_t *b_colsum, int32_t b_zp, void *c,
                        int64_t c_sb, int64_t c_sm, int64_t c_sn,
                        int32_t flags, const struct epilogue *ep) {
  job_t job = {0};
  job.M = M, job.N = N, job.K = K;
  job.a = a, job.a_sb = a_sb, job.a_sm = a_sm;
  job.seg_off = k_no_offset, job.nseg = 1, job.seg_len = K;
  job.c = c, job.c_sb = c_sb, job.c_sm = c_sm, job.c_sn = c_sn;
  job.accumulate = (flags & TESSEL_KERNEL_ACCUMULATE) != 0;
  job.ep = ep;
  run_u8s8(&job, batch, a_zp, (flags & TESSEL_KERNEL_A_SIGNED) != 0, bp, bp_sb,
           b_colsum, b_zp);
}

/* The convolution as the matmul of its im2col matrix (M = OH * OW output
 * pixels, K = KH * KW * C, k = (kh * KW + kw) * C + c) whose rows are
 * read where they lie in the input. The VNNI and AVX2 tiles walk a row's
 * taps in place (AVX2 widening them as it goes): one segment per filter row when a row's KW taps are adjacent
 * (dilation 1, dense pixels: KW * C bytes), else one per tap (C bytes),
 * provided each segment is whole groups of KG bytes (the packed weights'
 * groups never straddle two). Otherwise (C not a multiple of KG, a
 * weight zero point, whose row sums want contiguous rows, or a CPU
 * without AVX2) each tile row is gathered first: a copy of K bytes in
 * L1, not of the whole im2col matrix. */
static void conv_u8s8(int64_t N, int64_t OH, int64_t OW, int64_t F,
                      int64_t KH, int64_t KW, int64_t C, const uint8_t *in,
                      int64_t in_sn, int64_t in_sh, int64_t in_sw,
                      int64_t stride_h, int64_t stride_w, int64_t dil_h,
                      int64_t dil_w, int32_t a_zp, const int8_t *bp,
                      const int32_t *b_colsum, int32_t b_zp, void *out,
                      int64_t out_sn, int64_t out_sm, int64_t out_sf,
                      int32_t flags,
                      const struct epilogue *ep) {
  if (N <= 0 || OH <= 0 || OW <= 0 || F <= 0)
    return;
  int64_t nseg, seg_len;
  int64_t *off = tk_im2col_segments(KH, KW, C, in_sh, in_sw, dil_h, dil_w,
                                    &nseg, &seg_len);
  job_t job = {0};
  job.M = OH * OW, job.N = F, job.K = KH * KW * C;
  job.a = in, job.a_sb = in_sn;
  job.ow = OW, job.a_sh = stride_h * in_sh, job.a_sw = stride_w * in_sw;
  job.seg_off = off, job.nseg = nseg, job.seg_len = seg_len;
  job.gather = !(tile_reads_segments() && b_zp == 0 &&
                 (nseg == 1 || seg_len % KG == 0));
  job.c = out, job.c_sb = out_sn, job.c_sm = out_sm, job.c_sn = out_sf;
  job.accumulate = (flags & TESSEL_KERNEL_ACCUMULATE) != 0;
  job.ep = ep;
  run_u8s8(&job, N, a_zp, (flags & TESSEL_KERNEL_A_SIGNED) != 0, bp, 0,
           b_colsum, b_zp);
  free(off);
}

void tessel_kernel_matmul_u8s8_i32(int64_t batch, int64_t M, int64_t N,
                                   int64_t K, const uint8_t *a, int64_t a_sb,
                                   int64_t a_sm, int32_t a_zp,
                                   const int8_t *bp, int64_t bp_sb,
                                   const int32_t *b_colsum, int32_t b_zp,
                                   int32_t *c, int64_t c_sb, int64_t c_sm,
                                   int64_t c_sn, int32_t flags) {
  matmul_u8s8(batch, M, N, K, a, a_sb, a_sm, a_zp, bp, bp_sb, b_colsum, b_zp,
              c, c_sb, c_sm, c_sn, flags, NULL);
}

void tessel_kernel_matmul_u8s8_requant(
    int64_t batch, int64_t M, int64_t N, int64_t K, const uint8_t *a,
    int64_t a_sb, int64_t a_sm, int32_t a_zp, const int8_t *bp, int64_t bp_sb,
    const int32_t *b_colsum, int32_t b_zp, void *c, int64_t c_sb, int64_t c_sm,
    int64_t c_sn, const float *res, int64_t res_sb, int64_t res_sm,
    int64_t res_sn, float res_lo, float res_hi, const float *scale,
    const float *bias, float lo, float hi, float out_scale, float out_zp,
    float qmin, float qmax, const void *table, float dq_scale, float dq_zp,
    float dq_lo, float dq_hi, int32_t flags) {
  struct epilogue ep;
  tk_epilogue_init(&ep, scale, bias, lo, hi, out_scale, out_zp, qmin, qmax,
                   table, dq_scale, dq_zp, dq_lo, dq_hi, flags);
  tk_epilogue_set_residual(&ep, res, res_sb, res_sm, res_sn, res_lo, res_hi);
  tk_epilogue_bound(&ep, N, K,
                    a_zp + ((flags & TESSEL_KERNEL_A_SIGNED) ? 128 : 0), b_zp);
  matmul_u8s8(batch, M, N, K, a, a_sb, a_sm, a_zp, bp, bp_sb, b_colsum, b_zp,
              c, c_sb, c_sm, c_sn, flags & ~TESSEL_KERNEL_ACCUMULATE, &ep);
}

void tessel_kernel_conv2d_u8s8_i32(
    int64_t N, int64_t OH, int64_t OW, int64_t F, int64_t KH, int64_t KW,
    int64_t C, const uint8_t *in, int64_t in_sn, int64_t in_sh, int64_t in_sw,
    int64_t stride_h, int64_t stride_w, int64_t dil_h, int64_t dil_w,
    int32_t a_zp, const int8_t *bp, const int32_t *b_colsum, int32_t b_zp,
    int32_t *out, int64_t out_sn, int64_t out_sm, int64_t out_sf,
    int32_t flags) {
  conv_u8s8(N, OH, OW, F, KH, KW, C, in, in_sn, in_sh, in_sw, stride_h,
            stride_w, dil_h, dil_w, a_zp, bp, b_colsum, b_zp, out, out_sn,
            out_sm, out_sf, flags, NULL);
}

void tessel_kernel_conv2d_u8s8_requant(
    int64_t N, int64_t OH, int64_t OW, int64_t F, int64_t KH, int64_t KW,
    int64_t C, const uint8_t *in, int64_t in_sn, int64_t in_sh, int64_t in_sw,
    int64_t stride_h, int64_t stride_w, int64_t dil_h, int64_t dil_w,
    int32_t a_zp, const int8_t *bp, const int32_t *b_colsum, int32_t b_zp,
    void *out, int64_t out_sn, int64_t out_sm, int64_t out_sf,
    const float *res, int64_t res_sn, int64_t res_sm, int64_t res_sf,
    float res_lo, float res_hi, const float *scale, const float *bias,
    float lo, float hi, float out_scale, float out_zp, float qmin, float qmax,
    const void *table, float dq_scale, float dq_zp, float dq_lo, float dq_hi,
    int32_t flags) {
  struct epilogue ep;
  tk_epilogue_init(&ep, scale, bias, lo, hi, out_scale, out_zp, qmin, qmax,
                   table, dq_scale, dq_zp, dq_lo, dq_hi, flags);
  tk_epilogue_set_residual(&ep, res, res_sn, res_sm, res_sf, res_lo, res_hi);
  tk_epilogue_bound(&ep, F, KH * KW * C,
                    a_zp + ((flags & TESSEL_KERNEL_A_SIGNED) ? 128 : 0), b_zp);
  conv_u8s8(N, OH, OW, F, KH, KW, C, in, in_sn, in_sh, in_sw, stride_h,
            stride_w, dil_h, dil_w, a_zp, bp, b_colsum, b_zp, out, out_sn,
            out_sm, out_sf, flags & ~TESSEL_KERNEL_ACCUMULATE, &ep);
}
