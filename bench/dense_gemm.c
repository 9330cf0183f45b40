/* dense_gemm.c - the dense f32 matmul kernel (tessel_kernel_matmul_f32) on
 * one shape, one thread: GFLOP/s (best of 5 rounds of ITERS calls).
 *
 *   cc -O2 -I build/include -I bench bench/dense_gemm.c \
 *      build/lib/libtessel_kernels_x86-64-v4.a -lpthread -lm -o dense_gemm
 *   ./dense_gemm M N K [ITERS]
 *
 * Narrow shapes (N of 16-48, the channel counts of MnasNet's or GoogLeNet's
 * pointwise layers as matmuls) show the kernel's narrow tiles; compare with
 * bench/fma_peak.c's figure from the same run. */
#include "sparse_common.h"

#include <math.h>
#include <stdio.h>

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: dense_gemm M N K [ITERS]\n");
    return 2;
  }
  int64_t M = atoll(argv[1]), N = atoll(argv[2]), K = atoll(argv[3]);
  int iters = argc > 4 ? atoi(argv[4]) : 10;
  if (M <= 0 || N <= 0 || K <= 0 || iters <= 0) {
    fprintf(stderr, "dense_gemm: M, N, K and ITERS must be positive\n");
    return 2;
  }
  float *a = malloc(sizeof(float) * M * K), *b = malloc(sizeof(float) * K * N);
  float *c = malloc(sizeof(float) * M * N);
  for (int64_t i = 0; i < M * K; ++i)
    a[i] = (float)(i % 7) * 0.1f;
  for (int64_t i = 0; i < K * N; ++i)
    b[i] = (float)(i % 5) * 0.1f;
  float *bp = pack_dense(b, K, N);
  double t;
  TIME(t, 5, iters,
       tessel_kernel_matmul_f32(1, M, N, K, a, 0, K, 1, bp, 0, c, 0, N, 1, NULL,
                                -INFINITY, INFINITY, 0));
  printf("dense_gemm: M=%lld N=%lld K=%lld gflops=%.1f\n", (long long)M,
         (long long)N, (long long)K, 2.0 * M * N * K / t * 1e-9);
  free(a);
  free(b);
  free(c);
  free(bp);
  return 0;
}
