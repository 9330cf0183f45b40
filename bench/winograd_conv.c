/* winograd_conv.c - the dense 3x3 convolution kernels against each other:
 * the implicit GEMM (tessel_kernel_conv2d_nhwc_f32) and Winograd F(2x2,
 * 3x3) and F(4x4, 3x3) (tessel_kernel_conv2d_winograd_nhwc_f32), stride 1,
 * "same" padding, one thread, over input/output channels 32-256 and images
 * 7x7-112x112: the data behind prefersWinograd
 * (lib/Dialect/Tessel/Transforms/WinogradFilter.h). Prints one
 * `winograd_conv: key=value ...` line per case (weights' values do not
 * matter to the time). Build: cc -O2 -I build/include bench/winograd_conv.c
 * build/lib/libtessel_kernels_x86-64-v4.a -lpthread -lm */
#include "sparse_common.h"
#include "tessel/Kernels/tessel_kernels.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  const int64_t NR = TESSEL_KERNEL_NR;
  const int64_t cs[] = {32, 64, 128, 256}, hs[] = {7, 14, 28, 56, 112};
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b)
      for (int h = 0; h < 5; ++h) {
        const int64_t C = cs[a], F = cs[b], H = hs[h];
        if (C * F * H * H > 256LL * 256 * 56 * 56)
          continue; /* a few hundred ms a case: enough */
        const int64_t P = (F + NR - 1) / NR, K = 9 * C;
        float *in = aligned_alloc(64, sizeof(float) * H * H * C);
        float *out = aligned_alloc(64, sizeof(float) * (H * H * F + 16));
        float *wp = calloc((size_t)(P * K * NR), sizeof(float));
        float *up = calloc((size_t)(36 * P * C * NR), sizeof(float));
        for (int64_t i = 0; i < H * H * C; ++i)
          in[i] = frand();
        const int iters = C * F * H * H > 50000000 ? 3 : 20;
        double td, tw, t4;
        TIME(td, 3, iters,
             tessel_kernel_conv2d_nhwc_f32(1, H, H, F, 3, 3, C, H, H, 1, 1, in,
                                           0, H * C, C, 1, 1, 1, 1, 1, wp, 0,
                                           out, 0, H * F, F, 1, NULL,
                                           -INFINITY, INFINITY, 0));
        TIME(tw, 3, iters,
             tessel_kernel_conv2d_winograd_nhwc_f32(
                 1, H, H, F, C, H, H, 1, 1, 1, 1, 16, in, 0, H * C, C, 1, up,
                 out, 0, H * F, F, 1, NULL, -INFINITY, INFINITY, 0));
        TIME(t4, 3, iters,
             tessel_kernel_conv2d_winograd_nhwc_f32(
                 1, H, H, F, C, H, H, 1, 1, 1, 1, 36, in, 0, H * C, C, 1, up,
                 out, 0, H * F, F, 1, NULL, -INFINITY, INFINITY, 0));
        printf("winograd_conv: C=%lld F=%lld H=%lld direct_ms=%.3f "
               "f2_ms=%.3f f4_ms=%.3f f2_speedup=%.2f f4_speedup=%.2f\n",
               (long long)C, (long long)F, (long long)H, td * 1e3, tw * 1e3,
               t4 * 1e3, td / tw, td / t4);
        free(in), free(out), free(wp), free(up);
      }
  return 0;
}
