/* int8_conv.c: the int8 implicit-GEMM convolution kernel against an im2col
 * copy followed by the int8 matmul kernel (what the compiler emitted
 * before the convolution form), one thread (kernel level).
 *
 *   cc -O2 -I build/include bench/int8_conv.c \
 *      build/lib/libtessel_kernels_x86-64-v4.a -lpthread -lm -o /tmp/int8_conv
 *   /tmp/int8_conv [H W C F K stride]...   (default: ResNet-50's KxK layers)
 *
 * H x W x C is the already padded input, F the output channels, K x K the
 * filter. Prints per layer the best-of-trials time of both ways with the
 * epilogue a QDQ model gives them (per-channel scale, bias, ReLU, quantized
 * to u8 out), in G multiply-adds/s, and the speed-up of the implicit form.
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

static void run(long H, long W, long C, long F, long K, long S) {
  const long OH = (H - K) / S + 1, OW = (W - K) / S + 1, M = OH * OW,
             KK = K * K * C, NR = TESSEL_KERNEL_NR,
             KG = TESSEL_KERNEL_KGROUP_I8, P = (F + NR - 1) / NR,
             G = (KK + KG - 1) / KG;
  unsigned char *x = malloc(H * W * C), *cols = malloc(M * KK),
                *y = malloc(M * F);
  /* 64-byte aligned, as the compiler's packed constants are. */
  signed char *bp = aligned_alloc(64, P * G * NR * KG);
  memset(bp, 0, P * G * NR * KG);
  int *colsum = calloc(F, sizeof(int));
  float *scale = malloc(sizeof(float) * F), *bias = malloc(sizeof(float) * F);
  for (long i = 0; i < H * W * C; ++i)
    x[i] = (unsigned char)(rand() & 255);
  for (long k = 0; k < KK; ++k)
    for (long f = 0; f < F; ++f) {
      signed char v = (signed char)((rand() & 255) - 128);
      bp[((f / NR * G + k / KG) * NR + f % NR) * KG + k % KG] = v;
      colsum[f] += v;
    }
  for (long f = 0; f < F; ++f) {
    scale[f] = 1e-4f;
    bias[f] = 0.01f * (float)(f % 7);
  }
  const float inf = __builtin_inff();
  const double macs = (double)M * F * KK;
  int reps = (int)(1e9 / macs) + 1;
  double best_im2col = 1e30, best_implicit = 1e30;
  for (int trial = 0; trial < 7; ++trial) {
    double t0 = now_s();
    for (int r = 0; r < reps; ++r) {
      for (long oh = 0; oh < OH; ++oh)
        for (long ow = 0; ow < OW; ++ow)
          for (long kh = 0; kh < K; ++kh)
            memcpy(cols + (oh * OW + ow) * KK + kh * K * C,
                   x + ((oh * S + kh) * W + ow * S) * C, K * C);
      tessel_kernel_matmul_u8s8_requant(
          1, M, F, KK, cols, M * KK, KK, 3, bp, 0, colsum, 0, y, M * F, F, 1,
          NULL, 0, 0, 0, -inf, inf, scale, bias, 0.0f, inf, 0.05f, 0.0f, 0.0f, 255.0f, NULL, 1.0f, 0.0f,
          -inf, inf, TESSEL_KERNEL_QUANTIZE);
    }
    double t1 = now_s();
    for (int r = 0; r < reps; ++r)
      tessel_kernel_conv2d_u8s8_requant(
          1, OH, OW, F, K, K, C, x, H * W * C, W * C, C, S, S, 1, 1, 3, bp,
          colsum, 0, y, M * F, F, 1, NULL, 0, 0, 0, -inf, inf, scale, bias, 0.0f, inf, 0.05f, 0.0f, 0.0f,
          255.0f, NULL, 1.0f, 0.0f, -inf, inf, TESSEL_KERNEL_QUANTIZE);
    double t2 = now_s();
    if ((t1 - t0) / reps < best_im2col)
      best_im2col = (t1 - t0) / reps;
    if ((t2 - t1) / reps < best_implicit)
      best_implicit = (t2 - t1) / reps;
  }
  printf("conv: H=%ld W=%ld C=%ld F=%ld K=%ld stride=%ld im2col_gmacs=%.1f "
         "implicit_gmacs=%.1f speedup=%.2f\n",
         H, W, C, F, K, S, macs / best_im2col * 1e-9,
         macs / best_implicit * 1e-9, best_im2col / best_implicit);
  free(x), free(cols), free(y), free(bp), free(colsum), free(scale),
      free(bias);
}

int main(int argc, char **argv) {
  if (argc > 1) {
    for (int i = 1; i + 5 < argc; i += 6)
      run(atol(argv[i]), atol(argv[i + 1]), atol(argv[i + 2]),
          atol(argv[i + 3]), atol(argv[i + 4]), atol(argv[i + 5]));
    return 0;
  }
  /* ResNet-50: the stem, the 3x3 layer of each stage (stride 1) and the
   * stride-2 3x3 and 1x1 layers entering stages 2-4. */
  run(229, 229, 3, 64, 7, 2);
  run(58, 58, 64, 64, 3, 1);
  run(30, 30, 128, 128, 3, 1);
  run(16, 16, 256, 256, 3, 1);
  run(9, 9, 512, 512, 3, 1);
  run(57, 57, 128, 128, 3, 2);
  run(55, 55, 256, 512, 1, 2);
  return 0;
}
