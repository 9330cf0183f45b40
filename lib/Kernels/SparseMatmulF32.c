/* SparseMatmulF32.c - f32 matmul with sparse constant weights
 * (tessel_kernel_sparse_matmul_f32, described in Kernels.td).
 *
 * C = A x B where B (K x N) is mostly zeros, stored as blocks of R
 * consecutive columns at one k ("R x 1" blocks of the [out, in] weight a
 * framework stores, TVM's BSR orientation): per block column b (columns
 * b*R .. b*R + R - 1), the k of each nonzero block, kidx[ptr[b] ..
 * ptr[b+1]), and its R values. R = 1 is unstructured (compressed columns).
 *
 * A's rows are transposed (K x rows, padded to the vector width) and
 * multiplied by SparseTiles.c. Many rows (a CNN's pixels) go in bands that
 * stay in L2, each transposed just before its products: transposing all
 * of ResNet-50's 3136 x 576 im2col rows first streamed 7 MB through
 * memory and took longer than the products at 80% sparsity. Threads take
 * whole bands; with fewer bands than that needs, A is transposed once and
 * threads split the output columns into ranges of equal nonzero counts,
 * not equal widths, so unevenly pruned columns still balance.
 */
#include "ThreadPool.h"
#include "SparseTiles.h"
#include "Vector.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
  tk_sparse_view v; /* the weights, output and epilogue */
  int64_t M, K;
  const float *a;
  int64_t a_sm, a_sk, c_sm;
  int64_t band; /* rows per band, whole tiles */
  int64_t nbands, ntasks;
  const int64_t *koff;   /* k * band */
  const int64_t *bounds; /* shared A: the tasks' column groups */
} gemm_t;

/* Rows [m0, m0 + rows) of A into at (K x roundup(rows, TK_VW), rows
 * `band` apart), zero past `rows`, and the view that multiplies them. */
static void band_view(const gemm_t *g, int64_t m0, int64_t rows, float *at,
                      tk_sparse_view *v) {
  const int64_t pad = (rows + TK_VW - 1) / TK_VW * TK_VW;
  tk_sparse_transpose(rows, g->K, g->a + m0 * g->a_sm, g->a_sm, g->a_sk, at,
                      g->band);
  for (int64_t k = 0; k < g->K; ++k)
    memset(at + k * g->band + rows, 0, (size_t)(pad - rows) * sizeof(float));
  *v = g->v;
  v->at = at;
  v->koff = g->koff;
  v->band_m = pad;
  v->c += m0 * g->c_sm;
  v->wq = pad; /* one output row of `rows` rows */
  v->owc = rows;
  v->nr = 1;
  v->c_sr = 0;
  v->c_sc = g->c_sm;
}

/* A task of whole bands, each transposed into the task's own buffer just
 * before its products. */
static void run_bands(void *arg, int64_t t) {
  const gemm_t *g = (const gemm_t *)arg;
  const int64_t b0 = t * g->nbands / g->ntasks,
                b1 = (t + 1) * g->nbands / g->ntasks;
  float *at = (float *)_mlir_memref_to_llvm_aligned_alloc(
      64, (size_t)(g->K > 0 ? g->K : 1) * (size_t)g->band * sizeof(float));
  if (!at)
    abort(); /* out of memory: nothing sane to return */
  for (int64_t b = b0; b < b1; ++b) {
    const int64_t m0 = b * g->band;
    tk_sparse_view v;
    band_view(g, m0, g->M - m0 < g->band ? g->M - m0 : g->band, at, &v);
    tk_sparse_run(&v, g->K, 0, tk_sparse_groups(g->v.N));
  }
  _mlir_memref_to_llvm_free(at);
}

/* A task of the shared A's column groups. */
static void run_columns(void *arg, int64_t t) {
  const gemm_t *g = (const gemm_t *)arg;
  tk_sparse_run(&g->v, g->K, g->bounds[t], g->bounds[t + 1]);
}

void tessel_kernel_sparse_matmul_f32(
    int64_t M, int64_t N, int64_t K, const float *a, int64_t a_sm,
    int64_t a_sk, int64_t R, const int32_t *ptr, const int32_t *kidx,
    const float *val, float *c, int64_t c_sm, int64_t c_sn,
    const float *bias, float lo, float hi, int32_t flags) {
  if (M <= 0 || N <= 0)
    return;
  const int64_t threads = tk_num_threads();
  /* Bands of about 256 KiB of the transposed A, whole tiles of 12
   * vectors (the largest), at least one. */
  const int64_t tile = 12 * TK_VW, mpad = (M + TK_VW - 1) / TK_VW * TK_VW;
  int64_t band = (65536 / (K > 0 ? K : 1)) / tile * tile;
  if (band < tile)
    band = tile;
  int64_t nbands = (M + band - 1) / band;
  /* Too few bands to share out: one, and the threads split columns. */
  const int shared = nbands < 2 * threads;
  if (shared) {
    band = mpad;
    nbands = 1;
  }
  /* Cache-line aligned (rows of whole vectors): a vector load that
   * straddles two lines costs two, and the unstructured kernel is one
   * load per FMA. */
  int64_t *koff = (int64_t *)malloc((size_t)(K > 0 ? K : 1) * sizeof(int64_t));
  const int64_t ntasks = shared ? (tk_sparse_groups(N) < 4 * threads
                                       ? tk_sparse_groups(N)
                                       : 4 * threads)
                                : (nbands < 4 * threads ? nbands : 4 * threads);
  int64_t *bounds = (int64_t *)malloc((size_t)(ntasks + 1) * sizeof(int64_t));
  if (!koff || !bounds)
    abort(); /* out of memory: nothing sane to return */
  for (int64_t k = 0; k < K; ++k)
    koff[k] = k * band;
  gemm_t g = {{N, R, ptr, kidx, val, NULL, koff, 0, c, 0, 0, 0, 0, 0, c_sn,
               bias, lo, hi, (flags & TESSEL_KERNEL_ACCUMULATE) != 0},
              M, K, a, a_sm, a_sk, c_sm, band, nbands, ntasks, koff, bounds};
  if (shared) {
    /* From the artifacts' caching allocator: a model asks for the same
     * size on every call, and fresh pages from malloc would be faulted in
     * every time. */
    float *at = (float *)_mlir_memref_to_llvm_aligned_alloc(
        64, (size_t)(K > 0 ? K : 1) * (size_t)band * sizeof(float));
    if (!at)
      abort();
    band_view(&g, 0, M, at, &g.v);
    tk_sparse_balance(N, R, ptr, ntasks, bounds);
    tk_parallel_for(ntasks, run_columns, &g);
    _mlir_memref_to_llvm_free(at);
  } else {
    tk_parallel_for(ntasks, run_bands, &g);
  }
  free(bounds);
  free(koff);
}
