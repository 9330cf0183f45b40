/* TransposeF32.c - batched 2-D transpose of dense f32 arrays.
 *
 * out[b][c][r] = in[b][r][c]. Run-time data movement the compiler emits as
 * linalg.transpose (packing a weight operand that is a graph input, NCHW
 * inputs to NHWC, K^T in attention) becomes this after grouping the
 * permutation's adjacent dims. Naive loops read or write with a large
 * stride on every element; 32 x 32 blocks keep both sides within a few
 * cache lines. Parallel over (batch, row block). */
#include "ThreadPool.h"
#include "tessel/Kernels/tessel_kernels.h"

#define BLOCK 32

typedef struct {
  int64_t rows, cols, row_blocks;
  const float *in;
  float *out;
} tr_job_t;

static void run_block_row(void *arg, int64_t task) {
  const tr_job_t *j = (const tr_job_t *)arg;
  const int64_t b = task / j->row_blocks;
  const int64_t r0 = (task % j->row_blocks) * BLOCK;
  const int64_t r1 = r0 + BLOCK < j->rows ? r0 + BLOCK : j->rows;
  const float *in = j->in + b * j->rows * j->cols;
  float *out = j->out + b * j->rows * j->cols;
  for (int64_t c0 = 0; c0 < j->cols; c0 += BLOCK) {
    const int64_t c1 = c0 + BLOCK < j->cols ? c0 + BLOCK : j->cols;
    for (int64_t c = c0; c < c1; ++c)
      for (int64_t r = r0; r < r1; ++r)
        out[c * j->rows + r] = in[r * j->cols + c];
  }
}

void tessel_kernel_transpose_f32(int64_t batch, int64_t rows, int64_t cols,
                                 const float *in, float *out) {
  if (batch <= 0 || rows <= 0 || cols <= 0)
    return;
  tr_job_t job = {rows, cols, (rows + BLOCK - 1) / BLOCK, in, out};
  /* An element moved through two cache lines costs about 32 multiply-adds
   * of a GEMM's time. */
  tk_parallel_for_on(tk_threads_for(batch * rows * cols * 32),
                     batch * job.row_blocks, run_block_row, &job);
}
