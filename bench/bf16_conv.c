/* bf16_conv.c - the bf16 implicit-GEMM convolution against the fp32 one,
 * one thread, on the layer shapes of ResNet-50 and a BERT-base encoder.
 * Prints one `bf16_conv: key=value ...` line per shape (bench/bf16_bench.py
 * parses them). Build: cc -O2 -I build/include bench/bf16_conv.c
 * build/lib/libtessel_kernels_x86-64-v4.a -lpthread -lm */
#include "tessel/Kernels/tessel_kernels.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static void run(int64_t H, int64_t W, int64_t C, int64_t F, int64_t KH,
                int reps) {
  const int64_t K = KH * KH * C, P = (F + 63) / 64, pad = KH / 2;
  float *in = malloc(sizeof(float) * H * W * C);
  float *wp = calloc((size_t)(P * K * 64), sizeof(float));
  uint16_t *wb = calloc((size_t)(P * (K + 1) / 2 * 128), sizeof(uint16_t));
  float *out = malloc(sizeof(float) * H * W * F);
  for (int64_t i = 0; i < H * W * C; ++i)
    in[i] = (float)(i % 7) * 0.1f;
  for (int64_t i = 0; i < P * K * 64; ++i)
    wp[i] = 0.01f;
  for (int64_t i = 0; i < P * (K + 1) / 2 * 128; ++i)
    wb[i] = 0x3c23; /* ~0.01 */
  double best32 = 1e9, best16 = 1e9;
  for (int r = 0; r < reps; ++r) {
    double t0 = now();
    tessel_kernel_conv2d_nhwc_f32(1, H, W, F, KH, KH, C, H, W, pad, pad, in,
                                  H * W * C, W * C, C, 1, 1, 1, 1, 1, wp, 0,
                                  out, H * W * F, W * F, F, 1, NULL,
                                  -INFINITY, INFINITY, 0);
    double t1 = now();
    tessel_kernel_conv2d_nhwc_bf16(1, H, W, F, KH, KH, C, H, W, pad, pad, in,
                                   H * W * C, W * C, C, 1, 1, 1, 1, 1, wb, 0,
                                   out, H * W * F, W * F, F, 1, NULL,
                                   -INFINITY, INFINITY, 0);
    double t2 = now();
    best32 = t1 - t0 < best32 ? t1 - t0 : best32;
    best16 = t2 - t1 < best16 ? t2 - t1 : best16;
  }
  const double flops = 2.0 * H * W * F * K;
  printf("bf16_conv: H=%lld W=%lld C=%lld F=%lld K=%lld f32_gflops=%.1f "
         "bf16_gflops=%.1f speedup=%.3f\n",
         (long long)H, (long long)W, (long long)C, (long long)F,
         (long long)KH, flops / best32 / 1e9, flops / best16 / 1e9,
         best32 / best16);
  free(in);
  free(wp);
  free(wb);
  free(out);
}

int main(void) {
  run(56, 56, 64, 256, 1, 30);  /* ResNet-50 stage 1, 1x1 expand */
  run(56, 56, 64, 64, 3, 30);   /* stage 1, 3x3 */
  run(14, 14, 256, 256, 3, 30); /* stage 3, 3x3 */
  run(7, 7, 2048, 512, 1, 30);  /* stage 4, 1x1 reduce */
  run(112, 112, 3, 64, 7, 10);  /* the 7x7 stem (C = 3: odd) */
  run(1, 128, 768, 768, 1, 30); /* BERT-base projection, 128 tokens */
  run(1, 128, 768, 3072, 1, 20); /* BERT-base FF up */
  return 0;
}
