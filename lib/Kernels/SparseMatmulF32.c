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
 * vectors loaded once for its columns), then written with the epilogue.
 *
 * Threads split the output columns into ranges of equal nonzero counts,
 * not equal widths, so unevenly pruned columns still balance.
 */
#include "ThreadPool.h"
#include "Vector.h"

#include <stdlib.h>
#include <string.h>

/* Output columns accumulated together: a multiple of every R. */
#define GROUP 16

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

/* A (M x K, strides a_sm, a_sk) into at (K x mpad), zero past M. */
static void transpose_a(int64_t M, int64_t K, int64_t mpad, const float *a,
                        int64_t a_sm, int64_t a_sk, float *at) {
  if (a_sk == 1 && a_sm == K && mpad == M) {
    tessel_kernel_transpose_f32(1, M, K, a, at);
    return;
  }
  for (int64_t k0 = 0; k0 < K; k0 += 16)
    for (int64_t m = 0; m < mpad; ++m)
      for (int64_t k = k0; k < K && k < k0 + 16; ++k)
        at[k * mpad + m] = m < M ? a[m * a_sm + k * a_sk] : 0.0f;
}

/* Rows m0 .. m0 + TM*TK_VW - 1 (those below M) of columns n0 .. n0 + CW - 1
 * (those below N): buf[t][c] holds the TK_VW rows from m0 + t*TK_VW of
 * column n0 + c. With the epilogue. (The accumulators reach it through
 * this buffer: taking their address would keep them out of registers.) */
static void store_tile(const job_t *j, int64_t m0, int64_t n0, int TM, int CW,
                       const float buf[][4][TK_VW]) {
  /* The common case, 4 whole columns written over (row-major output): a
   * row's 4 values as one 4-lane vector, bias and clamp on it, one store;
   * the clamp keeps NaN as tk_clamp_scalar does. */
  if (CW == 4 && j->c_sn == 1 && !j->accumulate && n0 + 4 <= j->N) {
    typedef float v4 __attribute__((vector_size(16)));
    typedef int32_t m4 __attribute__((vector_size(16)));
    v4 bias = {0, 0, 0, 0};
    if (j->bias)
      memcpy(&bias, j->bias + n0, sizeof bias);
    const v4 lo = {j->lo, j->lo, j->lo, j->lo},
             hi = {j->hi, j->hi, j->hi, j->hi};
    for (int t = 0; t < TM; ++t) {
      const int64_t r0 = m0 + t * TK_VW;
      const int64_t rows = j->M - r0 < TK_VW ? j->M - r0 : TK_VW;
      for (int64_t r = 0; r < rows; ++r) {
        v4 v = {buf[t][0][r], buf[t][1][r], buf[t][2][r], buf[t][3][r]};
        v += bias;
        m4 below = v < lo, above = v > hi;
        v = (v4)(((m4)lo & below) | ((m4)v & ~below));
        v = (v4)(((m4)hi & above) | ((m4)v & ~above));
        memcpy(j->c + (r0 + r) * j->c_sm + n0, &v, sizeof v);
      }
    }
    return;
  }
  for (int t = 0; t < TM; ++t) {
    const int64_t r0 = m0 + t * TK_VW;
    const int64_t rows = j->M - r0 < TK_VW ? j->M - r0 : TK_VW;
    for (int64_t r = 0; r < rows; ++r) {
      float *out = j->c + (r0 + r) * j->c_sm + n0 * j->c_sn;
      for (int c = 0; c < CW && n0 + c < j->N; ++c) {
        float v = buf[t][c][r];
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
 * TM row vectors and broadcasts CW values: TM * CW FMAs. */
TK_INLINE void block_tile(const job_t *j, int64_t b, const int R, const int c0,
                          const int CW, int64_t m0, const int TM) {
  tk_vec acc[12][4];
  for (int t = 0; t < TM; ++t)
    for (int c = 0; c < CW; ++c)
      acc[t][c] = (tk_vec){0};
  const float *at = j->at + m0;
  /* Indices, not pointers: with no blocks at all, val and kidx may be
   * null, and no offset may be applied to them. */
  for (int64_t e = j->ptr[b]; e < j->ptr[b + 1]; ++e) {
    const float *v = j->val + e * R + c0;
    const float *x = at + (int64_t)j->kidx[e] * j->mpad;
    tk_vec xv[12];
    for (int t = 0; t < TM; ++t)
      xv[t] = tk_load(x + t * TK_VW);
    for (int c = 0; c < CW; ++c) {
      const tk_vec s = tk_splat(v[c]);
      for (int t = 0; t < TM; ++t)
        acc[t][c] += s * xv[t];
    }
  }
  float buf[12][4][TK_VW];
  for (int t = 0; t < TM; ++t)
    for (int c = 0; c < CW; ++c)
      tk_store(buf[t][c], acc[t][c]);
  store_tile(j, m0, b * R + c0, TM, CW, (const float(*)[4][TK_VW])buf);
}

/* Every row of columns c0 .. c0 + CW - 1 of block column b, in tiles of up
 * to TMAX vectors (the last tile's count a constant too). */
#define TK_SPARSE_TILE(T, R, CW, TMAX)                                         \
  case T:                                                                      \
    if (T <= TMAX)                                                             \
      block_tile(j, b, R, c0, CW, m0, T <= TMAX ? T : 1);                      \
    break;
#define TK_SPARSE_ROWS(R, CW, TMAX)                                            \
  for (int64_t m0 = m_lo; m0 < m_hi; m0 += TMAX * TK_VW) {                     \
    const int64_t left = (m_hi - m0) / TK_VW;                                  \
    switch (left < TMAX ? left : TMAX) {                                       \
      TK_SPARSE_TILE(1, R, CW, TMAX)                                           \
      TK_SPARSE_TILE(2, R, CW, TMAX)                                           \
      TK_SPARSE_TILE(3, R, CW, TMAX)                                           \
      TK_SPARSE_TILE(4, R, CW, TMAX)                                           \
      TK_SPARSE_TILE(5, R, CW, TMAX)                                           \
      TK_SPARSE_TILE(6, R, CW, TMAX)                                           \
      TK_SPARSE_TILE(7, R, CW, TMAX)                                           \
      TK_SPARSE_TILE(8, R, CW, TMAX)                                           \
      TK_SPARSE_TILE(9, R, CW, TMAX)                                           \
      TK_SPARSE_TILE(10, R, CW, TMAX)                                          \
      TK_SPARSE_TILE(11, R, CW, TMAX)                                          \
      TK_SPARSE_TILE(12, R, CW, TMAX)                                          \
    }                                                                          \
  }

/* One group of GROUP output columns: each of its block columns, CW of its
 * R columns at a time (12 / CW row vectors per tile). */
#define TK_SPARSE_GROUP(R, CW)                                                 \
  static void group_r##R(const job_t *j, int64_t g, int64_t m_lo,             \
                         int64_t m_hi) {                                       \
    const int64_t n0 = g * GROUP;                                              \
    const int64_t width = j->N - n0 < GROUP ? j->N - n0 : GROUP;               \
    const int64_t b0 = n0 / R, nb = (width + R - 1) / R;                       \
    for (int64_t b = b0; b < b0 + nb; ++b)                                     \
      for (int c0 = 0; c0 < R && b * R + c0 < j->N; c0 += CW)                  \
        TK_SPARSE_ROWS(R, CW, 12 / CW)                                         \
  }
TK_SPARSE_GROUP(1, 1)
TK_SPARSE_GROUP(2, 2)
TK_SPARSE_GROUP(4, 4)
TK_SPARSE_GROUP(8, 4)
TK_SPARSE_GROUP(16, 4)
#undef TK_SPARSE_GROUP
#undef TK_SPARSE_ROWS
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
  float *at = (float *)malloc((size_t)(K > 0 ? K : 1) * (size_t)mpad *
                              sizeof(float));
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
  free(at);
}
