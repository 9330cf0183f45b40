/* grouped_conv.c - the grouped f32 convolution kernel
 * (tessel_kernel_grouped_conv2d_nhwc_f32) against what grouped
 * convolutions ran on before it: one dense convolution kernel call per
 * group on the group's channel slice. One thread, ResNeXt-50 32x4d's 3x3
 * layers (groups of 4, 8, 16 channels) and RegNet-like shapes; each case
 * is checked against a direct reference first. Prints one `grouped_conv:
 * key=value ...` line per case. Build: cc -O2 -I build/include
 * bench/grouped_conv.c build/lib/libtessel_kernels_x86-64-v4.a -lpthread -lm */
#include "sparse_common.h"
#include "tessel/Kernels/tessel_kernels.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define L TESSEL_KERNEL_GROUP_LANES

/* W[f][kh][kw][j] in the kernel's layout (Kernels.td): rotated for
 * narrow groups, c-major for wide ones. */
static void pack(const float *W, int64_t F, int64_t G, int64_t taps,
                 float *wp) {
  const int64_t fg = F / G, nb = (F + L - 1) / L;
  const int64_t fgp = (fg + L - 1) / L * L;
  memset(wp, 0, sizeof(float) * (fg < L ? taps * nb * fg * L : taps * G * fg * fgp));
  if (fg >= L) {
    for (int64_t t = 0; t < taps; ++t)
      for (int64_t f = 0; f < F; ++f)
        for (int64_t c = 0; c < fg; ++c)
          wp[((t * G + f / fg) * fg + c) * fgp + f % fg] =
              W[(f * taps + t) * fg + c];
    return;
  }
  for (int64_t t = 0; t < taps; ++t)
    for (int64_t ch = 0; ch < F; ++ch)
      for (int64_t r = 0; r < fg; ++r) {
        const int64_t g = ch / fg, j = ch % fg;
        wp[((t * nb + ch / L) * fg + r) * L + ch % L] =
            W[((g * fg + (j + r) % fg) * taps + t) * fg + j];
      }
}

int main(void) {
  const int64_t NR = TESSEL_KERNEL_NR;
  /* H(=W), C(=F), groups, stride, dilation */
  const int64_t shapes[][5] = {
      {56, 128, 32, 1, 1}, {56, 256, 32, 2, 1}, {28, 256, 32, 1, 1},
      {28, 512, 32, 2, 1}, {14, 512, 32, 1, 1}, {14, 1024, 32, 2, 1},
      {7, 1024, 32, 1, 1}, {7, 200, 25, 1, 1}, {56, 168, 7, 2, 1},
      {28, 168, 7, 1, 1}, {28, 408, 17, 2, 1}, {14, 408, 17, 1, 1},
      {14, 912, 38, 2, 1}, {7, 912, 38, 1, 1},
      {14, 208, 26, 1, 1}, {9, 24, 12, 1, 2}};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
    const int64_t H = shapes[s][0], C = shapes[s][1], G = shapes[s][2],
                  st = shapes[s][3], dl = shapes[s][4], KS = 3, pad = dl;
    const int64_t F = C, fg = F / G, taps = KS * KS, K = taps * fg;
    const int64_t OH = (H + 2 * pad - dl * (KS - 1) - 1) / st + 1;
    float *in = aligned_alloc(64, sizeof(float) * H * H * C);
    float *out = aligned_alloc(64, sizeof(float) * (OH * OH * F + 16));
    float *ref = malloc(sizeof(float) * OH * OH * F);
    float *W = malloc(sizeof(float) * F * K), *bias = malloc(sizeof(float) * F);
    const int64_t nb = (F + L - 1) / L;
    const int64_t wfloats =
        fg < L ? taps * nb * fg * L : taps * G * fg * ((fg + L - 1) / L * L);
    float *wp = aligned_alloc(64, sizeof(float) * wfloats);
    for (int64_t i = 0; i < H * H * C; ++i)
      in[i] = frand();
    for (int64_t i = 0; i < F * K; ++i)
      W[i] = frand();
    for (int64_t i = 0; i < F; ++i)
      bias[i] = frand();
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OH; ++ow)
        for (int64_t f = 0; f < F; ++f) {
          double a = bias[f];
          const int64_t g = f / fg;
          for (int64_t kh = 0; kh < KS; ++kh)
            for (int64_t kw = 0; kw < KS; ++kw) {
              const int64_t ih = oh * st + kh * dl - pad,
                            iw = ow * st + kw * dl - pad;
              if (ih < 0 || ih >= H || iw < 0 || iw >= H)
                continue;
              for (int64_t j = 0; j < fg; ++j)
                a += in[(ih * H + iw) * C + g * fg + j] *
                     W[(f * taps + kh * KS + kw) * fg + j];
            }
          ref[(oh * OH + ow) * F + f] = a > 0 ? (float)a : 0.0f;
        }
    pack(W, F, G, taps, wp);
    const int64_t packing = fg < L ? TESSEL_KERNEL_GROUPED_ROTATED
                                   : TESSEL_KERNEL_GROUPED_CMAJOR;
    tessel_kernel_grouped_conv2d_nhwc_f32(
        1, OH, OH, F, KS, KS, C, H, H, pad, pad, in, 0, H * C, C, 1, st, st,
        dl, dl, G, packing, wp, out, 0, OH * F, F, 1, bias, 0.0f, INFINITY, 0);
    double err = 0;
    for (int64_t i = 0; i < OH * OH * F; ++i)
      err = fmax(err, fabs(out[i] - ref[i]));
    /* Per group: the dense kernel on the group's fg channels (weights'
     * values do not matter to its time). */
    float *wd = calloc((size_t)(((fg + NR - 1) / NR) * K * NR), sizeof(float));
    double tp, tg;
    TIME(tp, 5, 3,
         for (int64_t g = 0; g < G; ++g) tessel_kernel_conv2d_nhwc_f32(
             1, OH, OH, fg, KS, KS, fg, H, H, pad, pad, in + g * fg, 0, H * C,
             C, 1, st, st, dl, dl, wd, 0, out + g * fg, 0, OH * F, F, 1, NULL,
             0.0f, INFINITY, 0));
    TIME(tg, 5, 3,
         tessel_kernel_grouped_conv2d_nhwc_f32(
             1, OH, OH, F, KS, KS, C, H, H, pad, pad, in, 0, H * C, C, 1, st,
             st, dl, dl, G, packing, wp, out, 0, OH * F, F, 1, bias, 0.0f, INFINITY, 0));
    const double gflop = 2.0 * OH * OH * F * K / 1e9;
    printf("grouped_conv: H=%lld C=%lld groups=%lld width=%lld stride=%lld "
           "dilation=%lld max_err=%.1e per_group_ms=%.3f grouped_ms=%.3f "
           "grouped_gflops=%.0f speedup=%.2f\n",
           (long long)H, (long long)C, (long long)G, (long long)fg,
           (long long)st, (long long)dl, err, tp * 1e3, tg * 1e3, gflop / tg,
           tp / tg);
    free(in), free(out), free(ref), free(W), free(bias), free(wp), free(wd);
  }
  return 0;
}
