/* sparse_gemm.c - the sparse f32 matmul kernel against the dense one, one
 * thread, on BERT-base projection shapes (M = 128 tokens), across block
 * sizes R (R x 1 blocks: R consecutive output columns at one k) and
 * densities. Prints one `sparse_gemm: key=value ...` line per case; the
 * speed-up is dense time / sparse time. Build: cc -O2 -I build/include
 * bench/sparse_gemm.c build/lib/libtessel_kernels_x86-64-v4.a -lpthread -lm */
#include "sparse_common.h"
#include "tessel/Kernels/tessel_kernels.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int64_t shapes[][3] = {{128, 768, 768}, {128, 3072, 768}, {128, 768, 3072}};
  size_t nshapes = sizeof shapes / sizeof shapes[0];
  /* `sparse_gemm M N K`: that one shape instead. */
  if (argc == 4) {
    for (int i = 0; i < 3; ++i)
      shapes[0][i] = atoll(argv[i + 1]);
    nshapes = 1;
  }
  const int64_t blocks[] = {1, 4, 16};
  /* 0: no nonzeros, only the moves into and out of the kernel's layout
   * (bench/sparse_ratios.py measures moved-element-cost from it). */
  const double densities[] = {0.5, 0.2, 0.1, 0.05, 0.0};
  for (size_t s = 0; s < nshapes; ++s) {
    const int64_t M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
    float *a = malloc(sizeof(float) * M * K), *c = malloc(sizeof(float) * M * N);
    float *b = malloc(sizeof(float) * K * N);
    for (int64_t i = 0; i < M * K; ++i)
      a[i] = frand();
    for (size_t ri = 0; ri < sizeof blocks / sizeof blocks[0]; ++ri)
      for (size_t di = 0; di < sizeof densities / sizeof densities[0]; ++di) {
        const int64_t R = blocks[ri];
        const double d = densities[di];
        random_blocks(b, K, N, R, d);
        float *bp = pack_dense(b, K, N);
        sparse_b sp = pack_blocks(b, K, N, R);
        double td, ts;
        TIME(td, 5, 5,
             tessel_kernel_matmul_f32(1, M, N, K, a, 0, K, 1, bp, 0, c, 0, N,
                                      1, NULL, -INFINITY, INFINITY, 0));
        TIME(ts, 5, 5,
             tessel_kernel_sparse_matmul_f32(M, N, K, a, K, 1, R, sp.ptr,
                                             sp.kidx, sp.val, c, N, 1, NULL, -INFINITY,
                                             INFINITY, TESSEL_KERNEL_K_ASCENDING));
        printf("sparse_gemm: M=%lld N=%lld K=%lld R=%lld density=%.2f "
               "dense_ms=%.3f sparse_ms=%.3f speedup=%.2f dense_gflops=%.1f\n",
               (long long)M, (long long)N, (long long)K, (long long)R,
               (double)sp.blocks * R / (double)(K * N), td * 1e3, ts * 1e3, td / ts,
               2.0 * M * N * K / td * 1e-9);
        /* R = 1 also in the lane order, where N allows. */
        if (R == 1 && N % TESSEL_KERNEL_LANE_COLUMNS == 0) {
          sparse_b sl = pack_lanes(b, K, N);
          double tl;
          TIME(tl, 5, 5,
               tessel_kernel_sparse_matmul_f32(
                   M, N, K, a, K, 1, 1, sl.ptr, sl.kidx, sl.val, c, N, 1,
                   NULL, -INFINITY, INFINITY, TESSEL_KERNEL_LANES));
          printf("sparse_gemm: M=%lld N=%lld K=%lld R=1 lanes density=%.2f "
                 "stored=%.3f dense_ms=%.3f sparse_ms=%.3f speedup=%.2f "
                 "dense_gflops=%.1f\n",
                 (long long)M, (long long)N, (long long)K,
                 (double)sp.blocks / (double)(K * N),
                 (double)sl.blocks / (double)(K * N), td * 1e3, tl * 1e3,
                 td / tl, 2.0 * M * N * K / td * 1e-9);
          free_blocks(&sl);
        }
        free(bp);
        free_blocks(&sp);
      }
    /* N:M (R = 1, the fixed-count kernel): 2:4, 1:4 and 1:8. */
    const int64_t nms[][2] = {{2, 4}, {1, 4}, {1, 8}};
    for (size_t i = 0; i < sizeof nms / sizeof nms[0]; ++i) {
      const int64_t n = nms[i][0], m = nms[i][1];
      if (K % m != 0)
        continue;
      random_n_of_m(b, K, N, n, m);
      float *bp = pack_dense(b, K, N);
      sparse_b sp = pack_n_of_m(b, K, N, n, m);
      const int32_t flags = TESSEL_KERNEL_K_ASCENDING |
                            (int32_t)((n | m << 8) << TESSEL_KERNEL_NM_SHIFT);
      double td, ts;
      TIME(td, 5, 5,
           tessel_kernel_matmul_f32(1, M, N, K, a, 0, K, 1, bp, 0, c, 0, N, 1,
                                    NULL, -INFINITY, INFINITY, 0));
      TIME(ts, 5, 5,
           tessel_kernel_sparse_matmul_f32(M, N, K, a, K, 1, 1, sp.ptr,
                                           sp.kidx, sp.val, c, N, 1, NULL,
                                           -INFINITY, INFINITY, flags));
      printf("sparse_gemm: M=%lld N=%lld K=%lld nm=%lld:%lld density=%.2f "
             "dense_ms=%.3f sparse_ms=%.3f speedup=%.2f dense_gflops=%.1f\n",
             (long long)M, (long long)N, (long long)K, (long long)n,
             (long long)m, (double)n / (double)m, td * 1e3, ts * 1e3,
             td / ts, 2.0 * M * N * K / td * 1e-9);
      /* The lane order (vectorized over output columns), where N allows. */
      if (N % TESSEL_KERNEL_LANE_COLUMNS == 0) {
        sparse_b sl = pack_lanes(b, K, N);
        double tl;
        TIME(tl, 5, 5,
             tessel_kernel_sparse_matmul_f32(
                 M, N, K, a, K, 1, 1, sl.ptr, sl.kidx, sl.val, c, N, 1, NULL,
                 -INFINITY, INFINITY, flags | TESSEL_KERNEL_LANES));
        printf("sparse_gemm: M=%lld N=%lld K=%lld nm=%lld:%lld lanes "
               "density=%.2f dense_ms=%.3f sparse_ms=%.3f speedup=%.2f "
               "dense_gflops=%.1f\n",
               (long long)M, (long long)N, (long long)K, (long long)n,
               (long long)m, (double)n / (double)m, td * 1e3, tl * 1e3,
               td / tl, 2.0 * M * N * K / td * 1e-9);
        free_blocks(&sl);
      }
      free(bp);
      free_blocks(&sp);
    }
    free(a), free(b), free(c);
  }
  return 0;
}
