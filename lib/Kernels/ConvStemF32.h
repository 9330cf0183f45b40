/* ConvStemF32.h - the f32 convolution of a network's stem (internal).
 *
 * A stem has few input channels (RGB) and few filters: a 3x3 stride-2
 * convolution of 3 channels into 16 to 32 is 27 multiply-adds per output,
 * too short a reduction for the GEMM tiles (ConvGemmF32.c), whose per-tile
 * costs (tap tables, the epilogue) then dominate, and whose 64-column
 * panels are a quarter empty for 24 filters. This path vectorizes over 16
 * output pixels of a row instead: each of the KH x KW x C products is one
 * vector of the input (its columns deinterleaved by stride phase first)
 * against one broadcast weight per filter, two vectors of pixels by up to 12
 * filters in registers; the tile is transposed to NHWC on the way out.
 */
#ifndef TESSEL_KERNELS_CONVSTEMF32_H
#define TESSEL_KERNELS_CONVSTEMF32_H

#include <stdint.h>

/* tessel_kernel_conv2d_nhwc_f32's arguments (one weight panel: F <= 64).
 * Runs the convolution and returns 1 where this path applies (AVX-512,
 * C <= 4, KH * KW * C <= 64, F <= 64, strides 1 or 2, no dilation, dense
 * NHWC input and output channels, no accumulation); else returns 0 and
 * does nothing. */
int tk_conv_stem_f32(int64_t N, int64_t OH, int64_t OW, int64_t F, int64_t KH,
                     int64_t KW, int64_t C, int64_t H, int64_t W,
                     int64_t pad_top, int64_t pad_left, const float *in,
                     int64_t in_sn, int64_t in_sh, int64_t in_sw,
                     int64_t in_sc, int64_t stride_h, int64_t stride_w,
                     int64_t dil_h, int64_t dil_w, const float *wp,
                     int64_t wp_sn, float *out, int64_t out_sn, int64_t out_sh,
                     int64_t out_sw, int64_t out_sf, const float *bias,
                     float lo, float hi, int accumulate);

#endif /* TESSEL_KERNELS_CONVSTEMF32_H */
