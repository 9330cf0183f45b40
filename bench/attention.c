/* attention.c - the fused attention kernel (tessel_kernel_attention_f32)
 * on the shapes of the broad set's transformers, one thread: GFLOP/s of
 * the two products (4 * B * M * N * D), best of 15 rounds. Each case is
 * checked against a double-precision reference first.
 *
 *   cc -O2 -I build/include -I bench bench/attention.c \
 *      build/lib/libtessel_kernels_x86-64-v4.a -lpthread -lm -o attention
 *   ./attention [CASE]
 *
 * Prints one `attention: key=value ...` line per case. */
#include "sparse_common.h"

#include <math.h>
#include <stdio.h>

static double check(int64_t B, int64_t M, int64_t N, int64_t D, const float *q,
                    const float *k, const float *v, const float *o,
                    float scale) {
  double err = 0;
  double *s = malloc(sizeof(double) * N);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < M; i += 7) {
      double mx = -INFINITY, sum = 0;
      for (int64_t j = 0; j < N; ++j) {
        double a = 0;
        for (int64_t d = 0; d < D; ++d)
          a += (double)q[(b * M + i) * D + d] * k[(b * N + j) * D + d];
        s[j] = a * scale;
        mx = s[j] > mx ? s[j] : mx;
      }
      for (int64_t j = 0; j < N; ++j)
        sum += (s[j] = exp(s[j] - mx));
      for (int64_t e = 0; e < D; ++e) {
        double r = 0;
        for (int64_t j = 0; j < N; ++j)
          r += s[j] / sum * v[(b * N + j) * D + e];
        err = fmax(err, fabs(r - o[(b * M + i) * D + e]));
      }
    }
  free(s);
  return err;
}

int main(int argc, char **argv) {
  const int only = argc > 1 ? atoi(argv[1]) : -1;
  /* B x M x N x D: ViT-B/16 (12 heads, 197 tokens), ViT-B/32 (50),
   * BERT-base at 128 tokens, Swin-T's first stage (64 windows x 3 heads of
   * 49 tokens, 32 wide), a decoder's 1-query step. */
  const int64_t cases[][4] = {{12, 197, 197, 64},
                              {12, 50, 50, 64},
                              {12, 128, 128, 64},
                              {192, 49, 49, 32},
                              {8, 1, 512, 64}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    if (only >= 0 && (size_t)only != c)
      continue;
    const int64_t B = cases[c][0], M = cases[c][1], N = cases[c][2],
                  D = cases[c][3];
    float *q = malloc(sizeof(float) * B * M * D);
    float *k = malloc(sizeof(float) * B * N * D);
    float *v = malloc(sizeof(float) * B * N * D);
    float *o = malloc(sizeof(float) * B * M * D);
    for (int64_t i = 0; i < B * M * D; ++i)
      q[i] = 2 * frand();
    for (int64_t i = 0; i < B * N * D; ++i)
      k[i] = 2 * frand(), v[i] = frand();
    const float scale = 1.0f / sqrtf((float)D);
#define CALL                                                                   \
  tessel_kernel_attention_f32(B, M, N, D, D, q, M *D, D, 1, k, N *D, D, 1, v,  \
                              N *D, D, 1, NULL, 1, 1, 1, 0, 0, 0, scale, o,    \
                              M *D, D, 1)
    CALL;
    const double err = check(B, M, N, D, q, k, v, o, scale);
    const int iters = (int)(2e8 / (4.0 * B * M * N * D)) + 1;
    double t;
    TIME(t, 15, iters, CALL);
#undef CALL
    printf("attention: B=%lld M=%lld N=%lld D=%lld max_err=%.1e ms=%.4f "
           "gflops=%.1f\n",
           (long long)B, (long long)M, (long long)N, (long long)D, err, t * 1e3,
           4.0 * B * M * N * D / t * 1e-9);
    free(q), free(k), free(v), free(o);
  }
  return 0;
}
