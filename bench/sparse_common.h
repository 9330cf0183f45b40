/* sparse_common.h - what bench/sparse_gemm.c and bench/sparse_conv.c share:
 * a clock, random weights in R x 1 blocks, and their packing into the
 * sparse kernels' layout (Kernels.td, tessel_kernel_sparse_matmul_f32). */
#ifndef TESSEL_BENCH_SPARSE_COMMON_H
#define TESSEL_BENCH_SPARSE_COMMON_H

#include "tessel/Kernels/tessel_kernels.h"

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

static float frand(void) { return (float)rand() / RAND_MAX - 0.5f; }

/* B (K x N) packed for the dense kernel: panels of NR columns. */
static float *pack_dense(const float *b, int64_t K, int64_t N) {
  const int64_t NR = TESSEL_KERNEL_NR, P = (N + NR - 1) / NR;
  float *bp = calloc((size_t)(P * K * NR), sizeof(float));
  for (int64_t k = 0; k < K; ++k)
    for (int64_t n = 0; n < N; ++n)
      bp[((n / NR) * K + k) * NR + n % NR] = b[k * N + n];
  return bp;
}

/* The best of `reps` timings of `iters` calls. */
#define TIME(best, reps, iters, call)                                          \
  do {                                                                         \
    best = 1e30;                                                               \
    for (int r_ = 0; r_ < (reps); ++r_) {                                      \
      double t0_ = now();                                                      \
      for (int i_ = 0; i_ < (iters); ++i_)                                     \
        call;                                                                  \
      double t_ = (now() - t0_) / (iters);                                     \
      best = t_ < best ? t_ : best;                                            \
    }                                                                          \
  } while (0)

/* B (K x N, row-major) random, its blocks of R columns at one k kept with
 * probability d. */
static void random_blocks(float *b, int64_t K, int64_t N, int64_t R,
                          double d) {
  for (int64_t k = 0; k < K; ++k)
    for (int64_t n0 = 0; n0 < N; n0 += R) {
      const int keep = (double)rand() / RAND_MAX < d;
      for (int64_t n = n0; n < n0 + R && n < N; ++n)
        b[k * N + n] = keep ? frand() : 0.0f;
    }
}

typedef struct {
  int32_t *ptr, *kidx;
  float *val;
  int64_t blocks;
} sparse_b;

/* B in the kernels' layout: per block column, the k of each nonzero
 * block and its R values. Free with free_blocks. */
static sparse_b pack_blocks(const float *b, int64_t K, int64_t N, int64_t R) {
  const int64_t nb = (N + R - 1) / R;
  sparse_b s = {malloc(sizeof(int32_t) * (nb + 1)),
                malloc(sizeof(int32_t) * (nb * K + 1)),
                malloc(sizeof(float) * (nb * K * R + 1)), 0};
  s.ptr[0] = 0;
  for (int64_t blk = 0; blk < nb; ++blk) {
    for (int64_t k = 0; k < K; ++k) {
      int any = 0;
      for (int64_t r = 0; r < R && blk * R + r < N; ++r)
        any |= b[k * N + blk * R + r] != 0.0f;
      if (!any)
        continue;
      s.kidx[s.blocks] = (int32_t)k;
      for (int64_t r = 0; r < R; ++r)
        s.val[s.blocks * R + r] = blk * R + r < N ? b[k * N + blk * R + r] : 0.0f;
      ++s.blocks;
    }
    s.ptr[blk + 1] = (int32_t)s.blocks;
  }
  return s;
}

/* B (K x N) N:M: n random k's of each aligned group of m kept in every
 * column (m dividing K). */
static void random_n_of_m(float *b, int64_t K, int64_t N, int64_t n,
                          int64_t m) {
  for (int64_t c = 0; c < N; ++c)
    for (int64_t g = 0; g < K; g += m) {
      int64_t kept = 0;
      for (int64_t i = 0; i < m; ++i) {
        /* The next k is kept with probability (still to keep) / (left). */
        const int keep = rand() % (m - i) < n - kept;
        kept += keep;
        b[(g + i) * N + c] = keep ? frand() : 0.0f;
      }
    }
}

/* N:M B in the N:M kernel's chunk-major order (Kernels.td,
 * TESSEL_KERNEL_NM_CHUNK_K), every group holding exactly n nonzeros. */
static sparse_b pack_n_of_m(const float *b, int64_t K, int64_t N, int64_t n,
                            int64_t m) {
  const int64_t per = K / m * n, chunk = TESSEL_KERNEL_NM_CHUNK_K;
  sparse_b s = {malloc(sizeof(int32_t) * (N + 1)),
                malloc(sizeof(int32_t) * (N * per + 1)),
                malloc(sizeof(float) * (N * per + 1)), N * per};
  for (int64_t c = 0; c <= N; ++c)
    s.ptr[c] = (int32_t)(c * per);
  int64_t e = 0;
  for (int64_t k0 = 0; k0 < K; k0 += chunk)
    for (int64_t c = 0; c < N; ++c)
      for (int64_t k = k0; k < k0 + chunk && k < K; ++k)
        if (b[k * N + c] != 0.0f) {
          s.kidx[e] = (int32_t)k;
          s.val[e++] = b[k * N + c];
        }
  return s;
}

/* B in the lane order (Kernels.td, TESSEL_KERNEL_LANES; N a multiple of
 * TESSEL_KERNEL_LANE_COLUMNS): per column vector and quad of 16 k's, as
 * many slots as its columns' most nonzeros there, the shorter columns
 * padded with zeros. N:M weights with exactly n nonzeros a group (as
 * random_n_of_m makes) come out with n / m * 16 slots a quad. */
static sparse_b pack_lanes(const float *b, int64_t K, int64_t N) {
  const int64_t L = TESSEL_KERNEL_LANE_COLUMNS, Q = (K + L - 1) / L;
  const int64_t units = N / L * Q;
  sparse_b s = {malloc(sizeof(int32_t) * (units + 1)), NULL, NULL, 0};
  int64_t slots = 0;
  s.ptr[0] = 0;
  for (int64_t u = 0; u < units; ++u) {
    const int64_t v = u / Q, q = u % Q, k1 = q * L + L < K ? q * L + L : K;
    int64_t most = 0;
    for (int64_t l = 0; l < L; ++l) {
      int64_t cnt = 0;
      for (int64_t k = q * L; k < k1; ++k)
        cnt += b[k * N + v * L + l] != 0.0f;
      most = cnt > most ? cnt : most;
    }
    slots += most;
    s.ptr[u + 1] = (int32_t)slots;
  }
  /* 64-byte aligned, as the compiler's constants: each slot is one cache
   * line of values and one of indices. */
  s.kidx = aligned_alloc(64, sizeof(int32_t) * (slots * L + 16));
  s.val = aligned_alloc(64, sizeof(float) * (slots * L + 16));
  s.blocks = slots * L;
  for (int64_t u = 0; u < units; ++u) {
    const int64_t v = u / Q, q = u % Q, k1 = q * L + L < K ? q * L + L : K;
    const int64_t base = (int64_t)s.ptr[u] * L, n = s.ptr[u + 1] - s.ptr[u];
    for (int64_t l = 0; l < L; ++l) {
      int64_t i = 0;
      for (int64_t k = q * L; k < k1; ++k)
        if (b[k * N + v * L + l] != 0.0f) {
          s.kidx[base + i * L + l] = (int32_t)k;
          s.val[base + i++ * L + l] = b[k * N + v * L + l];
        }
      for (; i < n; ++i) {
        s.kidx[base + i * L + l] = (int32_t)(q * L);
        s.val[base + i * L + l] = 0.0f;
      }
    }
  }
  return s;
}

static void free_blocks(sparse_b *s) { free(s->ptr), free(s->kidx), free(s->val); }

#endif
