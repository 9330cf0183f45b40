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
 * is read per row. 16 output columns are accumulated at a time (16
 * vectors), then written row by row with the epilogue.
 *
 * Threads split the output columns into ranges of equal nonzero counts,
 * not equal widths, so unevenly pruned columns still balance.
 */
#include "ThreadPool.h"
#include "Vector.h"

#include <stdlib.h>

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

/* Finishes a tile: acc[j] holds rows m0 .. m0 + TK_VW - 1 of column
 * n0 + j. */
static void store_tile(const job_t *j, int64_t m0, int64_t n0, int64_t width,
                       const tk_vec acc[GROUP]) {
  float buf[GROUP][TK_VW];
  for (int64_t c = 0; c < width; ++c)
    tk_store(buf[c], acc[c]);
  const int64_t rows = j->M - m0 < TK_VW ? j->M - m0 : TK_VW;
  for (int64_t r = 0; r < rows; ++r) {
    float *out = j->c + (m0 + r) * j->c_sm + n0 * j->c_sn;
    for (int64_t c = 0; c < width; ++c) {
      float v = buf[c][r];
      if (j->accumulate)
        v += out[c * j->c_sn];
      if (j->bias)
        v += j->bias[n0 + c];
      out[c * j->c_sn] = tk_clamp_scalar(v, j->lo, j->hi);
    }
  }
}

/* One group of GROUP output columns for every row tile, blocks of R. */
#define TK_SPARSE_GROUP(R)                                                     \
  static void group_r##R(const job_t *j, int64_t g) {                          \
    const int64_t n0 = g * GROUP;                                              \
    const int64_t width = j->N - n0 < GROUP ? j->N - n0 : GROUP;               \
    const int64_t b0 = n0 / R, nb = (width + R - 1) / R;                       \
    for (int64_t m0 = 0; m0 < j->M; m0 += TK_VW) {                             \
      tk_vec acc[GROUP] = {{0}};                                               \
      const float *at = j->at + m0;                                            \
      for (int64_t bi = 0; bi < nb; ++bi) {                                    \
        const int64_t b = b0 + bi;                                             \
        const float *v = j->val + (int64_t)j->ptr[b] * R;                      \
        for (int32_t e = j->ptr[b]; e < j->ptr[b + 1]; ++e, v += R) {          \
          const tk_vec x = tk_load(at + (int64_t)j->kidx[e] * j->mpad);        \
          for (int r = 0; r < R; ++r)                                          \
            acc[bi * R + r] += tk_splat(v[r]) * x;                             \
        }                                                                      \
      }                                                                        \
      store_tile(j, m0, n0, width, acc);                                       \
    }                                                                          \
  }
TK_SPARSE_GROUP(1)
TK_SPARSE_GROUP(2)
TK_SPARSE_GROUP(4)
TK_SPARSE_GROUP(8)
TK_SPARSE_GROUP(16)
#undef TK_SPARSE_GROUP

typedef void (*group_fn)(const job_t *, int64_t);

typedef struct {
  const job_t *job;
  group_fn fn;
} task_t;

static void run_task(void *arg, int64_t t) {
  const task_t *task = (const task_t *)arg;
  for (int64_t g = task->job->task_groups[t]; g < task->job->task_groups[t + 1];
       ++g)
    task->fn(task->job, g);
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
  job_t job = {M, N, mpad, at, ptr, kidx, val, c, c_sm, c_sn, bias, lo, hi,
               (flags & TESSEL_KERNEL_ACCUMULATE) != 0, bounds};
  task_t task = {&job, fn};
  tk_parallel_for(ntasks, run_task, &task);
  free(bounds);
  free(at);
}
