/* int8_gemm.c: the int8 matmul kernel against the fp32 one, same shapes,
 * one thread (kernel level: no model, no quantize/dequantize around it).
 *
 *   cc -O2 -I build/include bench/int8_gemm.c \
 *      build/lib/libtessel_kernels_x86-64-v4.a -lpthread -lm -o /tmp/int8_gemm
 *   /tmp/int8_gemm [M N K]...     (default: the BERT-style and ResNet shapes)
 *
 * Prints per shape the best-of-trials time of tessel_kernel_matmul_f32 and
 * tessel_kernel_matmul_u8s8_i32 (a_zp 128, per-tensor), their rates in
 * G multiply-adds/s and the int8 speed-up. Weights are packed beforehand,
 * as the compiler does at compile time.
 */
#include "tessel/Kernels/tessel_kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

#define NR TESSEL_KERNEL_NR
#define KG TESSEL_KERNEL_KGROUP_I8

static void run(long M, long N, long K) {
  const long panels = (N + NR - 1) / NR, groups = (K + KG - 1) / KG;
  float *a = malloc(sizeof(float) * M * K), *bp = calloc(panels * K * NR, 4),
        *c = malloc(sizeof(float) * M * N);
  unsigned char *a8 = malloc(M * K);
  /* 64-byte aligned, as the compiler's packed constants are (AMX loads a
   * B tile row per cache line). */
  signed char *bp8 = aligned_alloc(64, panels * groups * NR * KG);
  memset(bp8, 0, panels * groups * NR * KG);
  int *c32 = malloc(sizeof(int) * M * N), *colsum = calloc(N, sizeof(int));
  for (long i = 0; i < M * K; ++i) {
    a8[i] = (unsigned char)(rand() & 255);
    a[i] = a8[i] / 255.0f;
  }
  for (long k = 0; k < K; ++k)
    for (long n = 0; n < N; ++n) {
      signed char w = (signed char)((rand() & 255) - 128);
      bp[(n / NR * K + k) * NR + n % NR] = w / 128.0f;
      bp8[((n / NR * groups + k / KG) * NR + n % NR) * KG + k % KG] = w;
      colsum[n] += w;
    }
  double best32 = 1e30, best8 = 1e30;
  const double macs = (double)M * N * K;
  int reps = (int)(2e9 / macs) + 1;
  for (int trial = 0; trial < 5; ++trial) {
    double t0 = now_s();
    for (int r = 0; r < reps; ++r)
      tessel_kernel_matmul_f32(1, M, N, K, a, 0, K, 1, bp, 0, c, 0, N, 1, NULL,
                               -__builtin_inff(), __builtin_inff(), 0);
    double t1 = now_s();
    for (int r = 0; r < reps; ++r)
      tessel_kernel_matmul_u8s8_i32(1, M, N, K, a8, 0, K, 128, bp8, 0, colsum,
                                    0, c32, 0, N, 1, 0);
    double t2 = now_s();
    if ((t1 - t0) / reps < best32)
      best32 = (t1 - t0) / reps;
    if ((t2 - t1) / reps < best8)
      best8 = (t2 - t1) / reps;
  }
  printf("int8_gemm: M=%ld N=%ld K=%ld f32_ms=%.4f i8_ms=%.4f "
         "f32_gmacs=%.1f i8_gmacs=%.1f speedup=%.2f\n",
         M, N, K, best32 * 1e3, best8 * 1e3, macs / best32 * 1e-9,
         macs / best8 * 1e-9, best32 / best8);
  free(a); free(bp); free(c); free(a8); free(bp8); free(c32); free(colsum);
}

int main(int argc, char **argv) {
  if (argc > 1) {
    for (int i = 1; i + 2 < argc; i += 3)
      run(atol(argv[i]), atol(argv[i + 1]), atol(argv[i + 2]));
    return 0;
  }
  run(128, 768, 768);   /* BERT-style projection, seq 128 */
  run(128, 3072, 768);  /* BERT-style FFN up */
  run(3136, 64, 576);   /* ResNet-50 3x3 conv, 56x56 (im2col view) */
  run(196, 256, 2304);  /* ResNet-50 3x3 conv, 14x14 */
  run(1, 768, 768);     /* one token */
  return 0;
}
