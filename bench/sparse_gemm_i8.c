/* sparse_gemm_i8.c - the sparse int8 matmul kernel against the dense one,
 * one thread, with the requantizing epilogue (u8 out), on BERT-base
 * projection shapes (M = 128 tokens) and ResNet-50 pointwise shapes,
 * across block sizes R (quads of 4 k x R columns) and densities: of the
 * quads (blocks), or of single weights (unstructured: a quad then holds a
 * nonzero with odds 1 - (1 - d)^4). Checks that both give the same bytes.
 * Prints one `sparse_gemm_i8: key=value ...` line per case; the speed-up
 * is dense time / sparse time. Build: cc -O2 -I build/include -I bench
 * bench/sparse_gemm_i8.c build/lib/libtessel_kernels_x86-64-v4.a
 * -lpthread -lm. `sparse_gemm_i8 M N K` runs that shape only. */
#include "sparse_common.h"
#include "tessel/Kernels/tessel_kernels.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* B (K x N) packed for the dense kernel: bp[p][g][j][t] = B[4g + t][p NR +
 * j]. */
static int8_t *pack_dense_i8(const int8_t *b, int64_t K, int64_t N) {
  const int64_t NR = TESSEL_KERNEL_NR, P = (N + NR - 1) / NR, G = (K + 3) / 4;
  int8_t *bp = calloc((size_t)(P * G * NR * 4), 1);
  for (int64_t k = 0; k < K; ++k)
    for (int64_t n = 0; n < N; ++n)
      bp[(((n / NR) * G + k / 4) * NR + n % NR) * 4 + k % 4] = b[k * N + n];
  return bp;
}

typedef struct {
  int32_t *ptr, *kidx;
  int8_t *val;
  int64_t blocks;
} sparse_i8;

/* B in quad blocks of R columns (Kernels.td,
 * tessel_kernel_sparse_matmul_u8s8_requant). */
static sparse_i8 pack_quads(const int8_t *b, int64_t K, int64_t N, int64_t R) {
  const int64_t nb = (N + R - 1) / R, G = (K + 3) / 4;
  sparse_i8 s = {malloc(sizeof(int32_t) * (nb + 1)),
                 malloc(sizeof(int32_t) * (nb * G + 1)),
                 malloc((size_t)(nb * G * R * 4 + 1)), 0};
  s.ptr[0] = 0;
  for (int64_t c = 0; c < nb; ++c) {
    for (int64_t g = 0; g < G; ++g) {
      int any = 0;
      for (int64_t r = 0; r < R && c * R + r < N; ++r)
        for (int64_t t = 0; t < 4 && 4 * g + t < K; ++t)
          any |= b[(4 * g + t) * N + c * R + r] != 0;
      if (!any)
        continue;
      s.kidx[s.blocks] = (int32_t)g;
      for (int64_t r = 0; r < R; ++r)
        for (int64_t t = 0; t < 4; ++t)
          s.val[(s.blocks * R + r) * 4 + t] =
              c * R + r < N && 4 * g + t < K ? b[(4 * g + t) * N + c * R + r]
                                             : 0;
      ++s.blocks;
    }
    s.ptr[c + 1] = (int32_t)s.blocks;
  }
  return s;
}

static int8_t qrand(void) { return (int8_t)(rand() % 255 - 127); }

int main(int argc, char **argv) {
  int64_t shapes[][3] = {{128, 768, 768},  {128, 3072, 768},
                         {128, 768, 3072}, {3136, 64, 256},
                         {784, 512, 128},  {196, 256, 1024}};
  size_t nshapes = sizeof shapes / sizeof shapes[0];
  if (argc == 4) {
    for (int i = 0; i < 3; ++i)
      shapes[0][i] = atoll(argv[i + 1]);
    nshapes = 1;
  }
  const int64_t blocks[] = {1, 4};
  /* Density of the quads (quads = 1) or of single weights (quads = 0). */
  const struct { double d; int quads; } cases[] = {
      {0.5, 1}, {0.3, 1}, {0.2, 1}, {0.1, 1}, {0.2, 0}, {0.1, 0}, {0.05, 0}};
  int bad = 0;
  for (size_t s = 0; s < nshapes; ++s) {
    const int64_t M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
    uint8_t *a = malloc((size_t)(M * K));
    int8_t *b = malloc((size_t)(K * N));
    uint8_t *c0 = malloc((size_t)(M * N)), *c1 = malloc((size_t)(M * N));
    float *scale = malloc(sizeof(float) * N), *bias = malloc(sizeof(float) * N);
    int32_t *colsum = malloc(sizeof(int32_t) * N);
    for (int64_t i = 0; i < M * K; ++i)
      a[i] = (uint8_t)(rand() % 256);
    for (int64_t n = 0; n < N; ++n)
      scale[n] = 1e-4f * (1 + n % 7), bias[n] = (float)(n % 5) - 2;
    const int64_t G = (K + 3) / 4;
    for (size_t ri = 0; ri < sizeof blocks / sizeof blocks[0]; ++ri)
      for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ++ci) {
        const int64_t R = blocks[ri];
        const double d = cases[ci].d;
        if (!cases[ci].quads && R != 1)
          continue;
        for (int64_t g = 0; g < G; ++g)
          for (int64_t n0 = 0; n0 < N; n0 += R) {
            const int keep = (double)rand() / RAND_MAX < d;
            for (int64_t k = 4 * g; k < 4 * g + 4 && k < K; ++k)
              for (int64_t n = n0; n < n0 + R && n < N; ++n)
                b[k * N + n] = cases[ci].quads
                                   ? (keep ? qrand() : 0)
                                   : ((double)rand() / RAND_MAX < d ? qrand()
                                                                    : 0);
          }
        int8_t *bp = pack_dense_i8(b, K, N);
        sparse_i8 sp = pack_quads(b, K, N, R);
        /* The column sums, as the compiler passes them (column_sums). */
        for (int64_t n = 0; n < N; ++n) {
          colsum[n] = 0;
          for (int64_t k = 0; k < K; ++k)
            colsum[n] += b[k * N + n];
        }
        const int32_t a_zp = 3;
#define EPI                                                                    \
  NULL, 0, 0, 0, -INFINITY, INFINITY, scale, bias, 0.0f, INFINITY, 0.05f,     \
      0.0f, 0.0f, 255.0f, NULL, 0.0f, 0.0f, -INFINITY, INFINITY,              \
      TESSEL_KERNEL_QUANTIZE
#define DENSE                                                                  \
  tessel_kernel_matmul_u8s8_requant(1, M, N, K, a, 0, K, a_zp, bp, 0, colsum,  \
                                    0, c0, 0, N, 1, EPI)
#define SPARSE                                                                 \
  tessel_kernel_sparse_matmul_u8s8_requant(1, M, N, K, a, 0, K, a_zp, R,       \
                                           sp.ptr, sp.kidx, sp.val, colsum, 0, \
                                           c1, 0, N, 1, EPI)
        DENSE;
        SPARSE;
        const int same = memcmp(c0, c1, (size_t)(M * N)) == 0;
        bad |= !same;
        const int iters = (int)(2e8 / (double)(M * N * K)) + 1;
        double td, ts;
        TIME(td, 5, iters, DENSE);
        TIME(ts, 5, iters, SPARSE);
        printf("sparse_gemm_i8: M=%lld N=%lld K=%lld R=%lld %s=%.2f "
               "quad_density=%.3f dense_ms=%.3f sparse_ms=%.3f speedup=%.2f "
               "same=%d\n",
               (long long)M, (long long)N, (long long)K, (long long)R,
               cases[ci].quads ? "quads" : "weights", d,
               (double)sp.blocks * R / (double)(G * N), td * 1e3, ts * 1e3,
               td / ts, same);
        fflush(stdout);
        free(bp);
        free(sp.ptr), free(sp.kidx), free(sp.val);
      }
    free(a), free(b), free(c0), free(c1), free(scale), free(bias), free(colsum);
  }
  return bad;
}
