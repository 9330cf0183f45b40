/* TransposeF32.c - batched 2-D transposes of dense f32 arrays.
 *
 * out[b][c][r] = in[b][r][c] (tessel_kernel_transpose_f32), and the same
 * of whole rows of `inner` elements (tessel_kernel_transpose_blocks_f32).
 * Run-time data movement the compiler emits as linalg.transpose (packing a
 * weight operand that is a graph input, NCHW inputs to NHWC, K^T in
 * attention) becomes this after grouping the permutation's adjacent dims.
 * Naive loops read or write with a large stride on every element; 32 x 32
 * blocks keep both sides within a few cache lines. Parallel over (batch,
 * row block). */
#include "ThreadPool.h"
#include "TransposeBlock.h"
#include "tessel/Kernels/tessel_kernels.h"

#include <string.h>

#define BLOCK 32

typedef struct {
  int64_t rows, cols, row_blocks;
  const float *in;
  float *out;
  int64_t col_blocks; /* few rows or columns: tasks of THIN_BLOCK */
  int64_t batch, batch_per_task; /* ... or of whole short matrices */
} tr_job_t;

/* A transpose with a side of 2-4 (an image's NCHW -> NHWC, 3 channels,
 * or back; ShuffleNet's channel shuffle, a batch of one 2 x C/2 matrix per
 * pixel) is one interleave or de-interleave: with that side a constant,
 * the loop vectorizes into shuffles, where the blocked loops moved one
 * element at a time (MobileNetV3-S's input: 100 us of 1.4 ms). Tasks of
 * about THIN_BLOCK elements of the long side: a stretch of one matrix, or
 * several whole short ones (one task per pixel's 48 channels made the
 * shuffle 10% of ShuffleNetV2 x0.5, most of it the dispatch). */
#define THIN_BLOCK 4096
#define THIN_CASE(N)                                                           \
  case N:                                                                      \
    if (j->rows == N)                                                          \
      for (int64_t c = c0; c < c1; ++c)                                        \
        for (int64_t r = 0; r < N; ++r)                                        \
          out[c * N + r] = in[r * j->cols + c];                                \
    else                                                                       \
      for (int64_t r = c0; r < c1; ++r)                                        \
        for (int64_t c = 0; c < N; ++c)                                        \
          out[c * j->rows + r] = in[r * N + c];                                \
    break;

/* One matrix's long-side range [c0, c1). */
static void thin_range(const tr_job_t *j, int64_t b, int64_t c0, int64_t c1) {
  const int64_t thin = j->rows < j->cols ? j->rows : j->cols;
  const float *in = j->in + b * j->rows * j->cols;
  float *out = j->out + b * j->rows * j->cols;
  switch (thin) {
    THIN_CASE(2)
    THIN_CASE(3)
    THIN_CASE(4)
  }
}

/* Task: col_blocks tasks per matrix, or (col_blocks == 0) batch_per_task
 * whole matrices. */
static void run_thin(void *arg, int64_t task) {
  const tr_job_t *j = (const tr_job_t *)arg;
  const int64_t len = j->rows < j->cols ? j->cols : j->rows;
  if (j->col_blocks == 0) {
    const int64_t b0 = task * j->batch_per_task;
    const int64_t b1 =
        b0 + j->batch_per_task < j->batch ? b0 + j->batch_per_task : j->batch;
    for (int64_t b = b0; b < b1; ++b)
      thin_range(j, b, 0, len);
    return;
  }
  const int64_t c0 = (task % j->col_blocks) * THIN_BLOCK;
  thin_range(j, task / j->col_blocks, c0,
             c0 + THIN_BLOCK < len ? c0 + THIN_BLOCK : len);
}

static void run_block_row(void *arg, int64_t task) {
  const tr_job_t *j = (const tr_job_t *)arg;
  const int64_t b = task / j->row_blocks;
  const int64_t r0 = (task % j->row_blocks) * BLOCK;
  const int64_t r1 = r0 + BLOCK < j->rows ? r0 + BLOCK : j->rows;
  const float *in = j->in + b * j->rows * j->cols;
  float *out = j->out + b * j->rows * j->cols;
  const int64_t rows = j->rows, cols = j->cols;
  for (int64_t c0 = 0; c0 < cols; c0 += BLOCK) {
    const int64_t c1 = c0 + BLOCK < cols ? c0 + BLOCK : cols;
    /* Whole TK_VW x TK_VW sub-blocks in registers (784 x 512 and back,
     * Zen 4: 1.2 ns an element one at a time), the edges one at a time. */
    const int64_t rv = r0 + (r1 - r0) / TK_VW * TK_VW;
    const int64_t cv = c0 + (c1 - c0) / TK_VW * TK_VW;
    for (int64_t c = c0; c < cv; c += TK_VW)
      for (int64_t r = r0; r < rv; r += TK_VW)
        transpose_block(in + r * cols + c, cols, out + c * rows + r, rows);
    for (int64_t c = c0; c < c1; ++c)
      for (int64_t r = c < cv ? rv : r0; r < r1; ++r)
        out[c * rows + r] = in[r * cols + c];
  }
}

void tessel_kernel_transpose_f32(int64_t batch, int64_t rows, int64_t cols,
                                 const float *in, float *out) {
  if (batch <= 0 || rows <= 0 || cols <= 0)
    return;
  tr_job_t job = {rows, cols, (rows + BLOCK - 1) / BLOCK, in, out, 0, batch, 1};
  /* An element moved through two cache lines costs about 32 multiply-adds
   * of a GEMM's time. */
  const int threads = tk_threads_for(batch * rows * cols * 32);
  const int64_t thin = rows < cols ? rows : cols;
  if (thin >= 2 && thin <= 4) {
    const int64_t len = rows < cols ? cols : rows;
    if (len >= THIN_BLOCK / 2) {
      job.col_blocks = (len + THIN_BLOCK - 1) / THIN_BLOCK;
      tk_parallel_for_on(threads, batch * job.col_blocks, run_thin, &job);
      return;
    }
    /* Short matrices: enough of them a task, but at least as many tasks
     * as threads. */
    job.batch_per_task = THIN_BLOCK / len;
    if (job.batch_per_task * threads > batch)
      job.batch_per_task = (batch + threads - 1) / threads;
    tk_parallel_for_on(threads,
                       (batch + job.batch_per_task - 1) / job.batch_per_task,
                       run_thin, &job);
    return;
  }
  tk_parallel_for_on(threads, batch * job.row_blocks, run_block_row, &job);
}

/* Blocks of `inner` contiguous floats: out[b][c][r][:] = in[b][r][c][:]
 * (a sequence-first layout to batch-first, heads split from the model
 * dim: each move a memcpy of a whole row of the inner dim). Parallel over
 * (batch, c): each task writes one contiguous run of rows x inner. */
typedef struct {
  int64_t rows, cols, inner;
  const float *in;
  float *out;
} trb_job_t;

static void run_blocks(void *arg, int64_t task) {
  const trb_job_t *j = (const trb_job_t *)arg;
  const int64_t b = task / j->cols, c = task % j->cols;
  const int64_t plane = j->rows * j->cols * j->inner;
  const float *in = j->in + b * plane + c * j->inner;
  float *out = j->out + b * plane + c * j->rows * j->inner;
  const size_t bytes = (size_t)j->inner * sizeof(float);
  for (int64_t r = 0; r < j->rows; ++r)
    memcpy(out + r * j->inner, in + r * j->cols * j->inner, bytes);
}

void tessel_kernel_transpose_blocks_f32(int64_t batch, int64_t rows,
                                        int64_t cols, int64_t inner,
                                        const float *in, float *out) {
  if (batch <= 0 || rows <= 0 || cols <= 0 || inner <= 0)
    return;
  trb_job_t job = {rows, cols, inner, in, out};
  /* A contiguous float copied costs about a multiply-add of a GEMM's time
   * (both sides stream). */
  const int threads = tk_threads_for(batch * rows * cols * inner);
  tk_parallel_for_on(threads, batch * cols, run_blocks, &job);
}
