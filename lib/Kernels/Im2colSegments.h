/* Im2colSegments.h - where an int8 convolution's im2col row lies in its
 * input (MatmulU8S8.c, SparseMatmulU8S8.c).
 *
 * The row of output pixel p (K = KH*KW*C bytes, k = (kh*KW + kw)*C + c)
 * is made of segments at fixed offsets from the pixel's first tap: one
 * per filter row when a row's KW taps are adjacent (dilation 1, pixels of
 * exactly C bytes: KW*C bytes), else one per tap (C bytes). */
#ifndef TESSEL_KERNELS_IM2COL_SEGMENTS_H
#define TESSEL_KERNELS_IM2COL_SEGMENTS_H

#include <stdint.h>
#include <stdlib.h>

/* The segments' offsets (malloc'd, *nseg of them, each *seg_len bytes):
 * free them with free(). */
static inline int64_t *tk_im2col_segments(int64_t KH, int64_t KW, int64_t C,
                                          int64_t in_sh, int64_t in_sw,
                                          int64_t dil_h, int64_t dil_w,
                                          int64_t *nseg, int64_t *seg_len) {
  const int adjacent = dil_w == 1 && in_sw == C;
  *nseg = adjacent ? KH : KH * KW;
  *seg_len = adjacent ? KW * C : C;
  int64_t *off = (int64_t *)malloc((size_t)*nseg * sizeof(int64_t));
  if (!off)
    abort(); /* out of memory: nothing sane to return */
  for (int64_t s = 0; s < *nseg; ++s)
    off[s] = adjacent ? s * dil_h * in_sh
                      : (s / KW) * dil_h * in_sh + (s % KW) * dil_w * in_sw;
  return off;
}

#endif
