/* SparseMatmulF32.c - f32 matmul with sparse constant weights
 * (tessel_kernel_sparse_matmul_f32, described in Kernels.td).
 *
 * C = A x B where B (K x N) is mostly zeros, stored as blocks of R
 * consecutive columns at one k ("R x 1" blocks of the [out, in] weight a
 * framework stores, TVM's BSR orientation): per block column b (columns
 * b*R .. b*R + R - 1), the k of each nonzero block, kidx[ptr[b] ..
 * ptr[b+1]), and its R values. R = 1 is unstructured (compressed columns).
 *
 * The work is vectorized over rows of A, as XNNPACK's SpMM is over pixels:
 * A is first transposed (K x M, rows padded to the vector width), so that
 * each nonzero block loads one vector of TK_VW rows' k-th values and runs R
 * FMAs with its values broadcast; nothing is spent on zeros and no index
 * is read per row. A tile is up to 12 vectors of rows x up to 4 columns of
 * one block column, its accumulators in registers (the block's row
 * vectors loaded once for its columns); the tiles of a group of 16 output
 * columns gather in a buffer, which is transposed in registers and
 * written as whole output rows with the epilogue.
 *
 * Measured (bench/sparse_gemm.c, Intel Sapphire Rapids, one thread), each
 * step on its own: the transposed A cache-line aligned (a vector load
 * that straddles two lines costs two, and R = 1 is one load per FMA):
 * R = 1 at 20% 0.92x -> 1.3x the dense kernel; the next blocks' rows
 * prefetched: another ~1.1x; whole output rows instead of one column
 * at a time: R = 1 at 10% 2.3x -> 3.2x.
 *
 * Threads split the output columns into ranges of equal nonzero counts,
 * not equal widths, so unevenly pruned columns still balance.
 */
#include "ThreadPool.h"
#include "Vector.h"

#if defined(__AVX__)
#include <immintrin.h>
#endif

#include <stdlib.h>
#include <string.h>

/* Output columns accumulated together: a multiple of every R. */
#define GROUP 16

/* Software prefetch distance, in nonzero blocks. */
#ifndef PF
#define PF 4
#endif

typedef struct {
  int64_t M, N, mpad;
  const float *at; /* K x mpad */
  const int32_t *ptr, *kidx;
  const float *val;
  float *c;
  int64_t c_sm, c_sn;
  const float *bias;
  float lo, hi;
  int accumulate;
  const int64_t *task_groups; /* ntasks + 1 group boundaries */
  int64_t mchunk; /* rows per pass over a task's groups (run_task) */
} job_t;

/* Rows of a tile at most: 12 vectors. The group buffer holds a tile of
 * GROUP columns, column-major with this stride. */
#define TROWS (12 * TK_VW)

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

/* A (M x K, strides a_sm, a_sk) into at (K x mpad), zero past M: whole
 * TK_VW x TK_VW blocks in registers, the edges one element at a time. */
static void transpose_a(int64_t M, int64_t K, int64_t mpad, const float *a,
                        int64_t a_sm, int64_t a_sk, float *at) {
  const int64_t mb = a_sk == 1 ? M / TK_VW * TK_VW : 0;
  const int64_t kb = a_sk == 1 ? K / TK_VW * TK_VW : 0;
  /* Along the rows of at: each block's stores continue the TK_VW
   * sequential streams of the block before. */
  for (int64_t k0 = 0; k0 < kb; k0 += TK_VW)
    for (int64_t m0 = 0; m0 < mb; m0 += TK_VW)
      transpose_block(a + m0 * a_sm + k0, a_sm, at + k0 * mpad + m0, mpad);
  for (int64_t k0 = 0; k0 < K; k0 += 16)
    for (int64_t m = 0; m < mpad; ++m)
      for (int64_t k = k0; k < K && k < k0 + 16; ++k)
        if (m >= mb || k >= kb)
          at[k * mpad + m] = m < M ? a[m * a_sm + k * a_sk] : 0.0f;
}

/* Rows m0 .. m0 + rows - 1 of the group's columns n0 .. n0 + GROUP - 1
 * (those below N) from the group buffer, with the epilogue: TK_VW x TK_VW
 * blocks transposed in registers, then whole output rows of GROUP
 * columns as vectors (the accumulators run down the rows; writing them
 * column by column would touch a cache line per element). */
static void store_group(const job_t *j, int64_t m0, int64_t rows, int64_t n0,
                        const float *gbuf) {
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
  for (int64_t r0 = 0; r0 < rows; r0 += TK_VW) {
    for (int g = 0; g < GV; ++g)
      transpose_block(gbuf + g * TK_VW * TROWS + r0, TROWS, tbuf + g * TK_VW,
                      GROUP);
    const int64_t nr = rows - r0 < TK_VW ? rows - r0 : TK_VW;
    for (int64_t r = 0; r < nr; ++r) {
      float *out = j->c + (m0 + r0 + r) * j->c_sm + n0 * j->c_sn;
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
TK_INLINE void block_tile(const job_t *j, int64_t b, const int R, const int c0,
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
    const float *x = at + (int64_t)j->kidx[e] * j->mpad;
    /* The row vectors of the block PF ahead: a column's k jumps, which
     * the hardware prefetchers do not follow. */
    if (e + PF < e1) {
      const float *px = at + (int64_t)j->kidx[e + PF] * j->mpad;
      for (int t = 0; t < TM; ++t)
        __builtin_prefetch(px + t * TK_VW, 0, 3);
    }
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
#define TK_SPARSE_TILE(T, R, CW, TMAX)                                         \
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
#define TK_SPARSE_GROUP(R, CW)                                                 \
  static void group_r##R(const job_t *j, int64_t g, int64_t m_lo,             \
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
        TK_SPARSE_TILE(1, R, CW, TMAX)                                         \
        TK_SPARSE_TILE(2, R, CW, TMAX)                                         \
        TK_SPARSE_TILE(3, R, CW, TMAX)                                         \
        TK_SPARSE_TILE(4, R, CW, TMAX)                                         \
        TK_SPARSE_TILE(5, R, CW, TMAX)                                         \
        TK_SPARSE_TILE(6, R, CW, TMAX)                                         \
        TK_SPARSE_TILE(7, R, CW, TMAX)                                         \
        TK_SPARSE_TILE(8, R, CW, TMAX)                                         \
        TK_SPARSE_TILE(9, R, CW, TMAX)                                         \
        TK_SPARSE_TILE(10, R, CW, TMAX)                                        \
        TK_SPARSE_TILE(11, R, CW, TMAX)                                        \
        TK_SPARSE_TILE(12, R, CW, TMAX)                                        \
      }                                                                        \
      const int64_t rows = j->M - m0 < tm * TK_VW ? j->M - m0 : tm * TK_VW;    \
      if (rows > 0)                                                            \
        store_group(j, m0, rows, n0, gbuf);                                    \
    }                                                                          \
  }
TK_SPARSE_GROUP(1, 1)
TK_SPARSE_GROUP(2, 2)
TK_SPARSE_GROUP(4, 4)
TK_SPARSE_GROUP(8, 4)
TK_SPARSE_GROUP(16, 4)
#undef TK_SPARSE_GROUP
#undef TK_SPARSE_TILE

/* Rows [m_lo, m_hi) (multiples of TK_VW, within mpad) of group g. */
typedef void (*group_fn)(const job_t *, int64_t, int64_t, int64_t);

typedef struct {
  const job_t *job;
  group_fn fn;
} task_t;

/* A task's column groups, one chunk of rows at a time: the chunk's part
 * of the transposed A (K x chunk) stays in L2 while every group of the
 * task reads it (a CNN's pixels, K x M, are megabytes). */
static void run_task(void *arg, int64_t t) {
  const task_t *task = (const task_t *)arg;
  const job_t *j = task->job;
  for (int64_t m_lo = 0; m_lo < j->mpad; m_lo += j->mchunk) {
    const int64_t m_hi = m_lo + j->mchunk < j->mpad ? m_lo + j->mchunk : j->mpad;
    for (int64_t g = j->task_groups[t]; g < j->task_groups[t + 1]; ++g)
      task->fn(j, g, m_lo, m_hi);
  }
}

void tessel_kernel_sparse_matmul_f32(
    int64_t M, int64_t N, int64_t K, const float *a, int64_t a_sm,
    int64_t a_sk, int64_t R, const int32_t *ptr, const int32_t *kidx,
    const float *val, float *c, int64_t c_sm, int64_t c_sn,
    const float *bias, float lo, float hi, int32_t flags) {
  if (M <= 0 || N <= 0)
    return;
  group_fn fn = R == 1   ? group_r1
                : R == 2 ? group_r2
                : R == 4 ? group_r4
                : R == 8 ? group_r8
                : R == 16 ? group_r16
                          : NULL;
  if (!fn)
    abort(); /* the compiler packs only these block sizes */
  const int64_t mpad = (M + TK_VW - 1) / TK_VW * TK_VW;
  const int64_t ngroups = (N + GROUP - 1) / GROUP;
  /* Column ranges of equal work: a group's nonzero blocks times R, plus
   * its stores. */
  const int64_t ntasks = ngroups < 4 * (int64_t)tk_num_threads()
                             ? ngroups
                             : 4 * (int64_t)tk_num_threads();
  /* Cache-line aligned (rows of mpad floats are whole vectors): a vector
   * load that straddles two lines costs two, and the unstructured kernel
   * is one load per FMA. From the artifacts' caching allocator: a model
   * asks for the same size on every call, and fresh pages from malloc
   * would be faulted in every time. */
  float *at = (float *)_mlir_memref_to_llvm_aligned_alloc(
      64, (size_t)(K > 0 ? K : 1) * (size_t)mpad * sizeof(float));
  int64_t *bounds = (int64_t *)malloc((size_t)(ntasks + 1) * sizeof(int64_t));
  if (!at || !bounds)
    abort(); /* out of memory: nothing sane to return */
  const int64_t nblocks = (N + R - 1) / R;
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
  transpose_a(M, K, mpad, a, a_sm, a_sk, at);
  /* About 256 KiB of the transposed A per chunk, whole tiles of 12
   * vectors (the largest), at least one. */
  const int64_t tile = 12 * TK_VW;
  int64_t mchunk = (65536 / (K > 0 ? K : 1)) / tile * tile;
  if (mchunk < tile)
    mchunk = tile;
  job_t job = {M, N, mpad, at, ptr, kidx, val, c, c_sm, c_sn, bias, lo, hi,
               (flags & TESSEL_KERNEL_ACCUMULATE) != 0, bounds, mchunk};
  task_t task = {&job, fn};
  tk_parallel_for(ntasks, run_task, &task);
  free(bounds);
  _mlir_memref_to_llvm_free(at);
}
