/* int8_depthwise.c: the int8 depthwise kernel against the fp32 one on
 * MobileNetV2's depthwise layers, one thread (kernel level).
 *
 *   cc -O2 -I build/include bench/int8_depthwise.c \
 *      build/lib/libtessel_kernels_x86-64-v4.a -lpthread -lm -o /tmp/int8_dw
 *   /tmp/int8_dw [H W C stride]...   (default: MobileNetV2's 3x3 layers)
 *
 * Prints per layer the best-of-trials time of
 * tessel_kernel_depthwise_conv2d_nhwc_f32 (bias and ReLU6 clamp, f32 out)
 * and tessel_kernel_depthwise_conv2d_u8s8 with the epilogue a QDQ model
 * gives it (per-channel scale, bias, ReLU6, quantized to u8 out), their
 * rates in G multiply-adds/s and the int8 speed-up. Weights are packed
 * beforehand, as the compiler does.
 */
#include "tessel/Kernels/tessel_kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void run(long H, long W, long C, long S) {
  const long K = 3, P = 1, OH = (H + 2 * P - K) / S + 1,
             OW = (W + 2 * P - K) / S + 1, Cp = (C + 15) / 16 * 16;
  float *x = malloc(sizeof(float) * H * W * C), *w = malloc(sizeof(float) * 9 * C),
        *y = malloc(sizeof(float) * OH * OW * C), *bias = malloc(sizeof(float) * C),
        *scale = malloc(sizeof(float) * C);
  unsigned char *x8 = malloc(H * W * C), *y8 = malloc(OH * OW * C);
  signed char *wp = calloc(K * Cp * 4, 1);
  int *colsum = calloc(C, sizeof(int));
  for (long i = 0; i < H * W * C; ++i) {
    x8[i] = (unsigned char)(rand() & 255);
    x[i] = x8[i] / 255.0f;
  }
  for (long c = 0; c < C; ++c) {
    bias[c] = 0.01f * (float)(c % 7);
    scale[c] = 1e-4f;
  }
  for (long kh = 0; kh < K; ++kh)
    for (long kw = 0; kw < K; ++kw)
      for (long c = 0; c < C; ++c) {
        signed char v = (signed char)((rand() & 255) - 128);
        w[(kh * K + kw) * C + c] = v / 128.0f;
        wp[((kh / 4 * K + kw) * Cp + c) * 4 + kh % 4] = v;
        colsum[c] += v;
      }
  const float inf = __builtin_inff();
  double best32 = 1e30, best8 = 1e30;
  const double macs = (double)OH * OW * C * K * K;
  int reps = (int)(3e8 / macs) + 1;
  for (int trial = 0; trial < 7; ++trial) {
    double t0 = now_s();
    for (int r = 0; r < reps; ++r)
      tessel_kernel_depthwise_conv2d_nhwc_f32(
          1, OH, OW, C, K, K, H, W, P, P, x, H * W * C, W * C, C, 1, S, S, 1,
          1, w, K * C, C, 1, y, OH * OW * C, OW * C, C, 1, bias, 0.0f, 6.0f, 0);
    double t1 = now_s();
    for (int r = 0; r < reps; ++r)
      tessel_kernel_depthwise_conv2d_u8s8(
          1, OH, OW, C, K, K, H, W, P, P, x8, H * W * C, W * C, C, 0, S, S, 1,
          1, wp, colsum, y8, OH * OW * C, OW * C, C, scale, bias, 0.0f, 6.0f,
          0.0235f, 0.0f, 0.0f, 255.0f, NULL, 1.0f, 0.0f, -inf, inf,
          TESSEL_KERNEL_QUANTIZE);
    double t2 = now_s();
    if ((t1 - t0) / reps < best32)
      best32 = (t1 - t0) / reps;
    if ((t2 - t1) / reps < best8)
      best8 = (t2 - t1) / reps;
  }
  printf("int8_depthwise: H=%ld W=%ld C=%ld stride=%ld f32_ms=%.4f "
         "i8_ms=%.4f f32_gmacs=%.1f i8_gmacs=%.1f speedup=%.2f\n",
         H, W, C, S, best32 * 1e3, best8 * 1e3, macs / best32 * 1e-9,
         macs / best8 * 1e-9, best32 / best8);
  free(x); free(w); free(y); free(bias); free(scale); free(x8); free(y8);
  free(wp); free(colsum);
}

int main(int argc, char **argv) {
  if (argc > 1) {
    for (int i = 1; i + 3 < argc; i += 4)
      run(atol(argv[i]), atol(argv[i + 1]), atol(argv[i + 2]),
          atol(argv[i + 3]));
    return 0;
  }
  /* MobileNetV2's 3x3 depthwise layers (input H, W, C, stride) */
  run(112, 112, 32, 1);
  run(112, 112, 96, 2);
  run(56, 56, 144, 1);
  run(56, 56, 144, 2);
  run(28, 28, 192, 1);
  run(28, 28, 192, 2);
  run(14, 14, 384, 1);
  run(14, 14, 576, 1);
  run(14, 14, 576, 2);
  run(7, 7, 960, 1);
  return 0;
}
