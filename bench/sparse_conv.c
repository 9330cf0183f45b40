/* sparse_conv.c - the sparse f32 convolution kernel against the dense
 * ones (implicit GEMM, and Winograd F(2x2, 3x3) where the compiler would
 * use it: 3x3, stride 1, at least 64 channels), one thread, on ResNet-50's
 * convolution shapes, unstructured (R = 1) and 4x1 blocks across
 * densities. Prints one `sparse_conv: key=value ...` line per case; the
 * speed-up is the faster dense time / sparse time. Build: cc -O2
 * -I build/include bench/sparse_conv.c
 * build/lib/libtessel_kernels_x86-64-v4.a -lpthread -lm */
#include "sparse_common.h"
#include "tessel/Kernels/tessel_kernels.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  const int64_t NR = TESSEL_KERNEL_NR;
  /* H(=W), C, F, KH(=KW), stride: ResNet-50's 3x3s, a strided 3x3 and a
   * downsampling 1x1. */
  const int64_t shapes[][5] = {
      {56, 64, 64, 3, 1},   {28, 128, 128, 3, 1}, {14, 256, 256, 3, 1},
      {7, 512, 512, 3, 1},  {56, 128, 128, 3, 2}, {56, 256, 512, 1, 2},
      {56, 64, 256, 1, 1},  {56, 256, 64, 1, 1},  {28, 512, 128, 1, 1},
      {28, 128, 512, 1, 1}, {14, 1024, 256, 1, 1}, {7, 512, 2048, 1, 1}};
  const int64_t blocks[] = {1, 4};
  const double densities[] = {0.5, 0.3, 0.2, 0.1};
  /* `sparse_conv DENSITY`: that density only. */
  const size_t ndens = argc == 2 ? 1 : sizeof densities / sizeof densities[0];
  double dens1 = argc == 2 ? atof(argv[1]) : 0;
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
    const int64_t H = shapes[s][0], C = shapes[s][1], F = shapes[s][2],
                  KS = shapes[s][3], st = shapes[s][4], pad = KS / 2;
    const int64_t OH = (H + 2 * pad - KS) / st + 1, K = KS * KS * C;
    float *in = malloc(sizeof(float) * H * H * C);
    float *out = malloc(sizeof(float) * OH * OH * F);
    float *b = malloc(sizeof(float) * K * F);
    for (int64_t i = 0; i < H * H * C; ++i)
      in[i] = frand();
    const int64_t P = (F + NR - 1) / NR;
    /* Dense: the packed filter and (values irrelevant to the time) a
     * Winograd-sized one. */
    float *wp = calloc((size_t)(P * K * NR), sizeof(float));
    float *up = calloc((size_t)(16 * P * C * NR), sizeof(float));
    double td, tw = 1e30;
    TIME(td, 5, 3,
         tessel_kernel_conv2d_nhwc_f32(1, OH, OH, F, KS, KS, C, H, H, pad,
                                       pad, in, 0, H * C, C, 1, st, st, 1, 1,
                                       wp, 0, out, 0, OH * F, F, 1, NULL,
                                       -INFINITY, INFINITY, 0));
    if (KS == 3 && st == 1 && C >= 64 && F >= 64)
      TIME(tw, 5, 3,
           tessel_kernel_conv2d_winograd_nhwc_f32(
               1, OH, OH, F, C, H, H, pad, pad, 1, 1, 16, in, 0, H * C, C, 1,
               up, out, 0, OH * F, F, 1, NULL, -INFINITY, INFINITY, 0));
    const double dense = td < tw ? td : tw;
    for (size_t ri = 0; ri < sizeof blocks / sizeof blocks[0]; ++ri)
      for (size_t di = 0; di < ndens; ++di) {
        const int64_t R = blocks[ri];
        random_blocks(b, K, F, R, argc == 2 ? dens1 : densities[di]);
        sparse_b sp = pack_blocks(b, K, F, R);
        /* NHWC, and channel-major (NCHW in and out: what consecutive
         * sparse layers pass each other, no transposes). */
        double ts, tc;
        TIME(ts, 5, 3,
             tessel_kernel_sparse_conv2d_f32(
                 1, OH, OH, F, KS, KS, C, H, H, pad, pad, in, 0, H * C, C, 1,
                 st, st, 1, 1, R, sp.ptr, sp.kidx, sp.val, out, 0, OH * F, F, 1, NULL,
                 -INFINITY, INFINITY, 0));
        TIME(tc, 5, 3,
             tessel_kernel_sparse_conv2d_f32(
                 1, OH, OH, F, KS, KS, C, H, H, pad, pad, in, 0, H, 1, H * H,
                 st, st, 1, 1, R, sp.ptr, sp.kidx, sp.val, out, 0, OH, 1,
                 OH * OH, NULL, -INFINITY, INFINITY, 0));
        printf("sparse_conv: H=%lld C=%lld F=%lld K=%lldx%lld stride=%lld "
               "R=%lld density=%.2f gemm_ms=%.3f winograd_ms=%.3f "
               "sparse_ms=%.3f nchw_ms=%.3f speedup=%.2f nchw_speedup=%.2f\n",
               (long long)H, (long long)C, (long long)F, (long long)KS,
               (long long)KS, (long long)st, (long long)R,
               (double)sp.blocks * R / (double)(K * F), td * 1e3,
               tw < 1e29 ? tw * 1e3 : NAN, ts * 1e3, tc * 1e3, dense / ts,
               dense / tc);
        free_blocks(&sp);
      }
    free(in), free(out), free(b), free(wp), free(up);
  }
  return 0;
}
