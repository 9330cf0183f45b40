/* SparseTiles.c - the products and stores of the sparse f32 kernels
 * (SparseTiles.h).
 *
 * The work is vectorized over the virtual rows, as XNNPACK's SpMM is over
 * pixels: each nonzero block loads one vector of TK_VW rows' k-th values
 * and runs R FMAs with its values broadcast; nothing is spent on zeros
 * and no index is read per row. A tile is up to 12 vectors of rows x up
 * to 4 columns of one block column, its accumulators in registers (the
 * block's row vectors loaded once for its columns); the tiles of a group
 * of 16 output columns gather in a buffer, which is transposed in
 * registers and written as whole output rows with the epilogue.
 *
 * Measured (bench/sparse_gemm.c, Intel Sapphire Rapids, one thread), each
 * step on its own: the activations cache-line aligned (a vector load
 * that straddles two lines costs two, and R = 1 is one load per FMA):
 * R = 1 at 20% 0.92x -> 1.3x the dense kernel; the next blocks' rows
 * prefetched: another ~1.1x; whole output rows instead of one column
 * at a time: R = 1 at 10% 2.3x -> 3.2x.
 */
#include "SparseTiles.h"
#include "ThreadPool.h"
#include "Vector.h"

#if defined(__AVX__)
#include <immintrin.h>
#endif

#include <stdlib.h>
#include <string.h>

/* Software prefetch distance, in nonzero blocks. */
#ifndef PF
#define PF 4
#endif

/* Rows of a tile at most: 12 vectors. The group buffer holds a tile of
 * GROUP columns, column-major with this stride. */
#define TROWS (12 * TK_VW)
#define GROUP TK_SPARSE_GROUP

/* The TK_VW x TK_VW block at in (in[c*is + r] is row r of column c) into
 * out, row-major (out[r*os + c]). */
static inline void transpose_block(const float *in, int64_t is, float *out,
                                   int64_t os) {
#if TK_VW == 16
  /* Three rounds of interleaves (pairs of floats, pairs of doubles, then
   * 128-bit lanes twice): r[i] ends as row i of the block. */
  __m512 r[16], t[16];
  for (int i = 0; i < 16; ++i)
    r[i] = _mm512_loadu_ps(in + i * is);
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {
    r[i] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t[i]),
                                               _mm512_castps_pd(t[i + 2])));
    r[i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(
        _mm512_castps_pd(t[i]), _mm512_castps_pd(t[i + 2])));
    r[i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(
        _mm512_castps_pd(t[i + 1]), _mm512_castps_pd(t[i + 3])));
    r[i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(
        _mm512_castps_pd(t[i + 1]), _mm512_castps_pd(t[i + 3])));
  }
  for (int i = 0; i < 16; i += 8)
    for (int k = 0; k < 4; ++k) {
      t[i + k] = _mm512_shuffle_f32x4(r[i + k], r[i + k + 4], 0x88);
      t[i + k + 4] = _mm512_shuffle_f32x4(r[i + k], r[i + k + 4], 0xdd);
    }
  for (int k = 0; k < 8; ++k) {
    r[k] = _mm512_shuffle_f32x4(t[k], t[k + 8], 0x88);
    r[k + 8] = _mm512_shuffle_f32x4(t[k], t[k + 8], 0xdd);
  }
  for (int i = 0; i < 16; ++i)
    _mm512_storeu_ps(out + i * os, r[i]);
#elif TK_VW == 8 && defined(__AVX__)
  /* The same in 256-bit registers: floats, pairs, then 128-bit halves. */
  __m256 r[8], t[8];
  for (int i = 0; i < 8; ++i)
    r[i] = _mm256_loadu_ps(in + i * is);
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    r[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
    r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xee);
    r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xee);
  }
  for (int k = 0; k < 4; ++k) {
    t[k] = _mm256_permute2f128_ps(r[k], r[k + 4], 0x20);
    t[k + 4] = _mm256_permute2f128_ps(r[k], r[k + 4], 0x31);
  }
  for (int i = 0; i < 8; ++i)
    _mm256_storeu_ps(out + i * os, t[i]);
#else
  for (int c = 0; c < TK_VW; ++c)
    for (int r = 0; r < TK_VW; ++r)
      out[r * os + c] = in[c * is + r];
#endif
}

/* Rows m0 .. m0 + rows - 1 of the group's columns n0 .. n0 + GROUP - 1
 * (those below N) from the group buffer, with the epilogue: TK_VW x TK_VW
 * blocks transposed in registers, then whole output rows of GROUP
 * columns as vectors (the accumulators run down the rows; writing them
 * column by column would touch a cache line per element). */
static void store_group(const tk_sparse_view *j, int64_t m0, int64_t rows,
                        int64_t n0, const float *gbuf) {
  enum { GV = GROUP / TK_VW };
  const int64_t width = j->N - n0 < GROUP ? j->N - n0 : GROUP;
  /* Whole rows of a row-major output as vectors; a last, narrower group
   * or a strided output one element at a time. Both add the old value,
   * then the bias, then clamp. */
  const int whole = width == GROUP && j->c_sn == 1;
  const int clamp = tk_has_clamp(j->lo, j->hi);
  tk_vec bias[GV];
  for (int g = 0; g < GV; ++g)
    bias[g] = j->bias && whole ? tk_load(j->bias + n0 + g * TK_VW)
                               : (tk_vec){0};
  const tk_vec lo = tk_splat(j->lo), hi = tk_splat(j->hi);
  float tbuf[TK_VW * GROUP];
  /* Virtual row m is output row (mq, mr) = (m / wq, m % wq) of the view,
   * followed along without dividing. */
  int64_t mq = m0 / j->wq, mr = m0 % j->wq;
  for (int64_t r0 = 0; r0 < rows; r0 += TK_VW) {
    for (int g = 0; g < GV; ++g)
      transpose_block(gbuf + g * TK_VW * TROWS + r0, TROWS, tbuf + g * TK_VW,
                      GROUP);
    const int64_t nr = rows - r0 < TK_VW ? rows - r0 : TK_VW;
    for (int64_t r = 0; r < nr; ++r) {
      const int keep = mr < j->owc && mq < j->nr;
      float *out = j->c + mq * j->c_sr + mr * j->c_sc + n0 * j->c_sn;
      if (++mr == j->wq)
        mr = 0, ++mq;
      if (!keep)
        continue; /* a padding column of a convolution's rows */
      if (whole) {
        for (int g = 0; g < GV; ++g) {
          tk_vec v = tk_load(tbuf + r * GROUP + g * TK_VW);
          if (j->accumulate)
            v += tk_load(out + g * TK_VW);
          v += bias[g];
          if (clamp)
            v = tk_min(tk_max(v, lo), hi);
          tk_store(out + g * TK_VW, v);
        }
        continue;
      }
      for (int64_t c = 0; c < width; ++c) {
        float v = tbuf[r * GROUP + c];
        if (j->accumulate)
          v += out[c * j->c_sn];
        if (j->bias)
          v += j->bias[n0 + c];
        out[c * j->c_sn] = tk_clamp_scalar(v, j->lo, j->hi);
      }
    }
  }
}

/* TM vectors of rows from m0 x columns c0 .. c0 + CW - 1 of block column b
 * (blocks of R), TM and CW compile-time constants once inlined, so the
 * TM x CW accumulators stay in registers (TM * CW <= 12: with the row
 * vectors and a broadcast they fill AVX2's 16). Each nonzero block loads
 * TM row vectors and broadcasts CW values: TM * CW FMAs. The sums go to
 * the group buffer's columns gc .. gc + CW - 1. */
TK_INLINE void block_tile(const tk_sparse_view *j, int64_t b, const int R, const int c0,
                          const int CW, int64_t m0, const int TM, float *gbuf,
                          int64_t gc) {
  tk_vec acc[12][4];
  for (int t = 0; t < TM; ++t)
    for (int c = 0; c < CW; ++c)
      acc[t][c] = (tk_vec){0};
  const float *at = j->at + m0;
  const int64_t e1 = j->ptr[b + 1];
  /* Indices, not pointers: with no blocks at all, val and kidx may be
   * null, and no offset may be applied to them. */
  for (int64_t e = j->ptr[b]; e < e1; ++e) {
    const float *v = j->val + e * R + c0;
    const float *x = at + j->koff[j->kidx[e]];
    /* The first line of the block PF ahead: a column's k jumps, which the
     * hardware prefetchers do not follow. A line per row vector (TM
     * prefetches per block) loaded the load ports instead: with the
     * activations in L2, R = 1 ran 1.1-1.25x slower. */
    if (e + PF < e1)
      __builtin_prefetch(at + j->koff[j->kidx[e + PF]], 0, 3);
    tk_vec xv[12];
    for (int t = 0; t < TM; ++t)
      xv[t] = tk_load(x + t * TK_VW);
    for (int c = 0; c < CW; ++c) {
      const tk_vec s = tk_splat(v[c]);
      for (int t = 0; t < TM; ++t)
        acc[t][c] += s * xv[t];
    }
  }
  for (int t = 0; t < TM; ++t)
    for (int c = 0; c < CW; ++c)
      tk_store(gbuf + (gc + c) * TROWS + t * TK_VW, acc[t][c]);
}

/* A tile of T row vectors from m0 over every column of the group. */
#define SPARSE_TILE(T, R, CW, TMAX)                                         \
  case T:                                                                      \
    if (T <= TMAX)                                                             \
      for (int64_t b = b0; b < b0 + nb; ++b)                                   \
        for (int c0 = 0; c0 < R && b * R + c0 < j->N; c0 += CW)                \
          block_tile(j, b, R, c0, CW, m0, T <= TMAX ? T : 1, gbuf,             \
                     b * R + c0 - n0);                                         \
    break;
/* Rows [m_lo, m_hi) of one group of GROUP output columns, in tiles of up
 * to 12 / CW row vectors (the last tile's count a constant too): each
 * tile over every block column of the group, CW of its R columns at a
 * time, into the group buffer; then stored. Columns of the group past N
 * are left out of the buffer (the store does not read them). */
#define SPARSE_GROUP_FN(R, CW)                                                 \
  static void group_r##R(const tk_sparse_view *j, int64_t g, int64_t m_lo,             \
                         int64_t m_hi) {                                       \
    enum { TMAX = 12 / CW };                                                   \
    float gbuf[GROUP * TROWS] __attribute__((aligned(64)));                    \
    const int64_t n0 = g * GROUP;                                              \
    const int64_t width = j->N - n0 < GROUP ? j->N - n0 : GROUP;               \
    const int64_t b0 = n0 / R, nb = (width + R - 1) / R;                       \
    if (width < GROUP)                                                         \
      memset(gbuf, 0, sizeof gbuf);                                            \
    for (int64_t m0 = m_lo; m0 < m_hi; m0 += TMAX * TK_VW) {                   \
      const int64_t left = (m_hi - m0) / TK_VW;                                \
      const int tm = left < TMAX ? (int)left : TMAX;                           \
      switch (tm) {                                                            \
        SPARSE_TILE(1, R, CW, TMAX)                                         \
        SPARSE_TILE(2, R, CW, TMAX)                                         \
        SPARSE_TILE(3, R, CW, TMAX)                                         \
        SPARSE_TILE(4, R, CW, TMAX)                                         \
        SPARSE_TILE(5, R, CW, TMAX)                                         \
        SPARSE_TILE(6, R, CW, TMAX)                                         \
        SPARSE_TILE(7, R, CW, TMAX)                                         \
        SPARSE_TILE(8, R, CW, TMAX)                                         \
        SPARSE_TILE(9, R, CW, TMAX)                                         \
        SPARSE_TILE(10, R, CW, TMAX)                                        \
        SPARSE_TILE(11, R, CW, TMAX)                                        \
        SPARSE_TILE(12, R, CW, TMAX)                                        \
      }                                                                        \
      const int64_t rows = m_hi - m0 < tm * TK_VW ? m_hi - m0 : tm * TK_VW;    \
      store_group(j, m0, rows, n0, gbuf);                                      \
    }                                                                          \
  }
SPARSE_GROUP_FN(1, 1)
SPARSE_GROUP_FN(2, 2)
SPARSE_GROUP_FN(4, 4)
SPARSE_GROUP_FN(8, 4)
SPARSE_GROUP_FN(16, 4)
#undef SPARSE_GROUP_FN
#undef SPARSE_TILE

typedef void (*group_fn)(const tk_sparse_view *, int64_t, int64_t, int64_t);

int64_t tk_sparse_groups(int64_t N) { return (N + GROUP - 1) / GROUP; }

void tk_sparse_run(const tk_sparse_view *v, int64_t K, int64_t g0,
                   int64_t g1) {
  const int64_t R = v->R;
  group_fn fn = R == 1   ? group_r1
                : R == 2 ? group_r2
                : R == 4 ? group_r4
                : R == 8 ? group_r8
                : R == 16 ? group_r16
                          : NULL;
  if (!fn)
    abort(); /* the compiler packs only these block sizes */
  /* About 256 KiB of the activations per chunk, whole tiles of 12
   * vectors (the largest), at least one. */
  const int64_t tile = 12 * TK_VW;
  int64_t chunk = (65536 / (K > 0 ? K : 1)) / tile * tile;
  if (chunk < tile)
    chunk = tile;
  for (int64_t m_lo = 0; m_lo < v->band_m; m_lo += chunk) {
    const int64_t m_hi = m_lo + chunk < v->band_m ? m_lo + chunk : v->band_m;
    for (int64_t g = g0; g < g1; ++g)
      fn(v, g, m_lo, m_hi);
  }
}

void tk_sparse_balance(int64_t N, int64_t R, const int32_t *ptr,
                       int64_t ntasks, int64_t *bounds) {
  const int64_t ngroups = tk_sparse_groups(N);
  const int64_t nblocks = (N + R - 1) / R;
  /* A group's work: its nonzero blocks times R, plus its stores. */
  int64_t total = 0;
  for (int64_t g = 0; g < ngroups; ++g) {
    const int64_t b1 = (g + 1) * GROUP / R < nblocks ? (g + 1) * GROUP / R
                                                      : nblocks;
    total += ((int64_t)ptr[b1] - ptr[g * GROUP / R]) * R + GROUP;
  }
  bounds[0] = 0;
  int64_t t = 1, work = 0;
  for (int64_t g = 0; g < ngroups && t < ntasks; ++g) {
    const int64_t b1 = (g + 1) * GROUP / R < nblocks ? (g + 1) * GROUP / R
                                                      : nblocks;
    work += ((int64_t)ptr[b1] - ptr[g * GROUP / R]) * R + GROUP;
    if (work * ntasks >= t * total)
      bounds[t++] = g + 1;
  }
  while (t <= ntasks)
    bounds[t++] = ngroups;
}

void tk_sparse_transpose(int64_t rows, int64_t cols, const float *src,
                         int64_t s_r, int64_t s_c, float *dst, int64_t d_r) {
  if (s_c != 1) {
    for (int64_t c = 0; c < cols; ++c)
      for (int64_t r = 0; r < rows; ++r)
        dst[c * d_r + r] = src[r * s_r + c * s_c];
    return;
  }
  /* Along dst's rows: each block's stores continue the TK_VW sequential
   * streams of the block before. Edge blocks go through a zero-padded
   * copy, the source's rows and the result's rows copied whole. */
  for (int64_t c0 = 0; c0 < cols; c0 += TK_VW)
    for (int64_t r0 = 0; r0 < rows; r0 += TK_VW) {
      const int64_t nc = cols - c0 < TK_VW ? cols - c0 : TK_VW;
      const int64_t nr = rows - r0 < TK_VW ? rows - r0 : TK_VW;
      if (nc == TK_VW && nr == TK_VW) {
        transpose_block(src + r0 * s_r + c0, s_r, dst + c0 * d_r + r0, d_r);
        continue;
      }
      float in[TK_VW * TK_VW] = {0}, out[TK_VW * TK_VW];
      for (int64_t r = 0; r < nr; ++r)
        memcpy(in + r * TK_VW, src + (r0 + r) * s_r + c0,
               (size_t)nc * sizeof(float));
      transpose_block(in, TK_VW, out, TK_VW);
      for (int64_t c = 0; c < nc; ++c)
        memcpy(dst + (c0 + c) * d_r + r0, out + c * TK_VW,
               (size_t)nr * sizeof(float));
    }
}

int tk_sparse_too_few_bands(int64_t nbands) {
  return nbands < 2 * (int64_t)tk_num_threads();
}

typedef struct {
  const tk_sparse_bands *bands;
  int64_t ntasks;
  tk_sparse_view v;      /* one band at a time: the band's view */
  const int64_t *bounds; /* and the tasks' column groups */
} bands_job_t;

static float *band_alloc(const tk_sparse_bands *bands) {
  float *at = (float *)_mlir_memref_to_llvm_aligned_alloc(
      64, bands->band_floats * sizeof(float));
  if (!at)
    abort(); /* out of memory: nothing sane to return */
  return at;
}

/* A task of a run of whole bands. */
static void run_bands(void *arg, int64_t t) {
  const bands_job_t *j = (const bands_job_t *)arg;
  const tk_sparse_bands *bands = j->bands;
  float *at = band_alloc(bands);
  for (int64_t b = t * bands->nbands / j->ntasks;
       b < (t + 1) * bands->nbands / j->ntasks; ++b) {
    tk_sparse_view v;
    bands->view(bands->ctx, b, at, &v);
    tk_sparse_run(&v, bands->K, 0, tk_sparse_groups(v.N));
  }
  _mlir_memref_to_llvm_free(at);
}

/* A task of one band's column groups. */
static void run_columns(void *arg, int64_t t) {
  const bands_job_t *j = (const bands_job_t *)arg;
  tk_sparse_run(&j->v, j->bands->K, j->bounds[t], j->bounds[t + 1]);
}

void tk_sparse_run_bands(const tk_sparse_bands *bands, int64_t N, int64_t R,
                         const int32_t *ptr) {
  const int64_t threads = tk_num_threads();
  bands_job_t j = {bands, 0, {0}, NULL};
  if (!tk_sparse_too_few_bands(bands->nbands)) {
    j.ntasks = bands->nbands < 4 * threads ? bands->nbands : 4 * threads;
    tk_parallel_for(j.ntasks, run_bands, &j);
    return;
  }
  const int64_t groups = tk_sparse_groups(N);
  j.ntasks = groups < 4 * threads ? groups : 4 * threads;
  int64_t *bounds = (int64_t *)malloc((size_t)(j.ntasks + 1) * sizeof(int64_t));
  if (!bounds)
    abort(); /* out of memory: nothing sane to return */
  tk_sparse_balance(N, R, ptr, j.ntasks, bounds);
  j.bounds = bounds;
  float *at = band_alloc(bands);
  for (int64_t b = 0; b < bands->nbands; ++b) {
    bands->view(bands->ctx, b, at, &j.v);
    tk_parallel_for(j.ntasks, run_columns, &j);
  }
  _mlir_memref_to_llvm_free(at);
  free(bounds);
}
