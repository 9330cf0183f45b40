/* ConvGemmBF16.h - the bf16 micro-kernel of the implicit-GEMM convolution
 * (internal; tessel_kernel_conv2d_nhwc_bf16 in Kernels.td).
 *
 * Products of bf16 values summed in f32, the arithmetic of AVX512_BF16's
 * `vdpbf16ps`. Weights come packed in pairs of consecutive reduction
 * elements per column, b[k/2][j][k%2] within a panel of NR columns;
 * activations are rounded once per row tile into rows of bf16 (ConvGemmF32.c
 * does the blocking and the epilogue). */
#ifndef TESSEL_KERNELS_CONV_GEMM_BF16_H
#define TESSEL_KERNELS_CONV_GEMM_BF16_H

#include "Vector.h"

#include <stdint.h>

/* Rounds a row tile's activations to bf16 (nearest even, as
 * `vcvtneps2bf16`: NaN stays NaN, f32 denormals become zero): row i < mr
 * of dst (at i * dst_rs) is the ntaps runs of n values src[t * src_ts +
 * i][c * sc], one after the other, then a zero when ntaps * n is odd. */
void tk_bf16_round_rows(uint16_t *dst, int64_t dst_rs,
                        const float *const *src, int64_t src_ts, int mr,
                        int64_t ntaps, int64_t n, int64_t sc);

/* dst[c] = src[c * sc] rounded to bf16 (the same rounding), c < n. */
void tk_bf16_round_run(uint16_t *dst, const float *src, int64_t n,
                       int64_t sc);

/* acc[r][v] = sum over taps t < ntaps and pairs k < kpairs of
 *   a[r * a_rs + t * a_ts + 2k + e] * b[t * b_ts + (k * NR + j) * 2 + e]
 * (e = 0, 1; j = v * VW + lane), rows r < mr, vectors v < nv (the panel's
 * columns that exist). */
void tk_bf16_tile(int mr, int nv, int64_t ntaps, int64_t kpairs,
                  const uint16_t *a, int64_t a_rs, int64_t a_ts,
                  const uint16_t *b, int64_t b_ts,
                  tk_vec acc[TK_MR_MAX][TK_NV]);

/* The whole bf16 convolution (tessel_kernel_conv2d_nhwc_bf16's
 * arguments), for the AMX path. */
typedef struct {
  int64_t N, OH, OW, F, KH, KW, C, H, W, pad_top, pad_left;
  const float *in;
  int64_t in_sn, in_sh, in_sw, in_sc, stride_h, stride_w, dil_h, dil_w;
  const uint16_t *wpb;
  int64_t wp_sn, wp_panel; /* elements per image (0: shared) and panel */
  float *out;
  int64_t out_sn, out_sh, out_sw, out_sf;
  const float *bias;
  float lo, hi;
  int accumulate, clamp;
} tk_bf16_conv_t;

/* Runs the convolution on AMX-BF16 (ConvBF16AMX.c) where the CPU has it
 * and it applies (K >= 32, 16 rows or more per image); returns 0,
 * having done nothing, otherwise. */
int tk_bf16_conv_amx(const tk_bf16_conv_t *p);

#endif /* TESSEL_KERNELS_CONV_GEMM_BF16_H */
