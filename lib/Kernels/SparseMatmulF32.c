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
#include "SparseLanes.h"
#include "SparseTiles.h"
#include "Vector.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
  tk_sparse_view v; /* the weights, output and epilogue */
  int64_t M, K;
  const float *a;
  int64_t a_sm, a_sk, c_sm;
  int64_t band;        /* rows per band */
  int64_t ld;          /* floats between the rows of k of a band's layout */
  const int64_t *koff; /* k * ld */
} gemm_t;

/* Band b of A's rows transposed into at (K x roundup(rows, TK_VW), rows
 * `ld` apart), zero past its rows, and the view that multiplies it. */
static void band_view(const void *ctx, int64_t b, float *at,
                      tk_sparse_view *v) {
  const gemm_t *g = (const gemm_t *)ctx;
  const int64_t m0 = b * g->band;
  const int64_t rows = g->M - m0 < g->band ? g->M - m0 : g->band;
  const int64_t pad = (rows + TK_VW - 1) / TK_VW * TK_VW;
  tk_sparse_transpose(rows, g->K, g->a + m0 * g->a_sm, g->a_sm, g->a_sk, at,
                      g->ld);
  for (int64_t k = 0; k < g->K; ++k)
    memset(at + k * g->ld + rows, 0, (size_t)(pad - rows) * sizeof(float));
  *v = g->v;
  v->at = at;
  v->koff = g->koff;
  v->kstep = g->ld;
  v->band_m = pad;
  v->c += m0 * g->c_sm;
  v->wq = pad; /* one output row of `rows` rows */
  v->owc = rows;
  v->nr = 1;
  v->c_sr = 0;
  v->c_sc = g->c_sm;
}

void tessel_kernel_sparse_matmul_f32(
    int64_t M, int64_t N, int64_t K, const float *a, int64_t a_sm,
    int64_t a_sk, int64_t R, const int32_t *ptr, const int32_t *kidx,
    const float *val, float *c, int64_t c_sm, int64_t c_sn,
    const float *bias, float lo, float hi, int32_t flags) {
  if (M <= 0 || N <= 0)
    return;
  if (flags & TESSEL_KERNEL_LANES) {
    if (R != 1)
      abort(); /* the compiler says the lane order only of R = 1 */
    tk_sparse_lanes(M, N, K, a, a_sm, a_sk, ptr, kidx, val, c, c_sm, c_sn, bias,
                    lo, hi, flags);
    return;
  }
  /* Bands of about 256 KiB of the transposed A, whole tiles of 12
   * vectors (the largest), at least one; or all of A in one. Rows of
   * whole vectors keep the loads cache-line aligned: one that straddles
   * two lines costs two, and the unstructured kernel is one load per FMA. */
  const int64_t tile = 12 * TK_VW;
  int64_t band = (65536 / (K > 0 ? K : 1)) / tile * tile;
  if (band < tile)
    band = tile;
  if (tk_sparse_too_few_bands((M + band - 1) / band))
    band = (M + TK_VW - 1) / TK_VW * TK_VW;
  int64_t *koff = (int64_t *)malloc((size_t)(K > 0 ? K : 1) * sizeof(int64_t));
  if (!koff)
    abort(); /* out of memory: nothing sane to return */
  const int64_t ld = tk_sparse_row_stride(band);
  for (int64_t k = 0; k < K; ++k)
    koff[k] = k * ld;
  gemm_t g = {{N, R, ptr, kidx, val, NULL, koff, 0, c, 0, 0, 0, 0, 0, c_sn,
               bias, lo, hi, (flags & TESSEL_KERNEL_ACCUMULATE) != 0},
              M, K, a, a_sm, a_sk, c_sm, band, ld, koff};
  tk_sparse_bands bands = {(M + band - 1) / band, K,
                           (size_t)(K > 0 ? K : 1) * (size_t)ld, band_view,
                           &g};
  tk_sparse_run_bands(&bands, N, R, ptr, kidx, flags);
  free(koff);
}
