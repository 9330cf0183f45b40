/* TransposeBlock.h - a TK_VW x TK_VW block of floats transposed in
 * registers (AVX-512: 16 x 16; AVX: 8 x 8; otherwise element by element),
 * for the kernels that move data between row-major and column-major: the
 * sparse kernels' activations and results (SparseTiles.c) and the
 * general transpose (TransposeF32.c). */
#ifndef TESSEL_KERNELS_TRANSPOSE_BLOCK_H
#define TESSEL_KERNELS_TRANSPOSE_BLOCK_H

#include "Vector.h"

#include <stdint.h>

#if defined(__x86_64__) && !defined(TESSEL_KERNELS_NO_ASM)
#include <immintrin.h>
#define TK_HAVE_TRANSPOSE16 1
/* The 16 x 16 block in r (r[c] holds column c's 16 rows) transposed in
 * registers: three rounds of interleaves (pairs of floats, pairs of
 * doubles, then 128-bit lanes twice), after which r[i] is row i.
 * AVX-512F by its target attribute, so that every variant's code paths
 * chosen at run time (the int8 kernels' VNNI ones) can use it too. */
__attribute__((target("avx512f"))) static inline void
transpose_regs16(__m512 r[16]) {
  __m512 t[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {
    r[i] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t[i]),
                                               _mm512_castps_pd(t[i + 2])));
    r[i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(
        _mm512_castps_pd(t[i]), _mm512_castps_pd(t[i + 2])));
    r[i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(
        _mm512_castps_pd(t[i + 1]), _mm512_castps_pd(t[i + 3])));
    r[i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(
        _mm512_castps_pd(t[i + 1]), _mm512_castps_pd(t[i + 3])));
  }
  for (int i = 0; i < 16; i += 8)
    for (int k = 0; k < 4; ++k) {
      t[i + k] = _mm512_shuffle_f32x4(r[i + k], r[i + k + 4], 0x88);
      t[i + k + 4] = _mm512_shuffle_f32x4(r[i + k], r[i + k + 4], 0xdd);
    }
  for (int k = 0; k < 8; ++k) {
    r[k] = _mm512_shuffle_f32x4(t[k], t[k + 8], 0x88);
    r[k + 8] = _mm512_shuffle_f32x4(t[k], t[k + 8], 0xdd);
  }
}
#endif

#if TK_VW == 8 && defined(__AVX__)
#include <immintrin.h>
/* transpose_regs16's 8 x 8 counterpart in 256-bit registers: floats,
 * pairs, then 128-bit halves. */
static inline void transpose_regs8(__m256 r[8]) {
  __m256 t[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    r[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
    r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xee);
    r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xee);
  }
  for (int k = 0; k < 4; ++k) {
    t[k] = _mm256_permute2f128_ps(r[k], r[k + 4], 0x20);
    t[k + 4] = _mm256_permute2f128_ps(r[k], r[k + 4], 0x31);
  }
  for (int i = 0; i < 8; ++i)
    r[i] = t[i];
}
#endif

/* Part of a block, the rest as zeros: columns [a, b) of the TK_VW x TK_VW
 * block (column c's first n rows at in + (c - a)*is, 0 <= a <= b <=
 * TK_VW, 0 < n <= TK_VW) into out's first n rows, w floats each (out[r*os
 * + c] for r < n, c < w <= TK_VW). Columns outside [a, b) and rows from
 * n come out as zeros, so an edge block's padding is written with it,
 * in vector moves: the sparse kernels' layouts of 14- and 28-wide
 * feature maps went through a zeroed copy per block (memset and memcpy
 * took 60% of their time). */
static inline void transpose_block_part(const float *in, int64_t is, int a,
                                        int b, int n, float *out, int64_t os,
                                        int w) {
#if (TK_VW == 16 && defined(TK_HAVE_TRANSPOSE16)) ||                           \
    (TK_VW == 8 && defined(__AVX__))
#if TK_VW == 16
  typedef __m512 treg;
#else
  typedef __m256 treg;
#endif
  treg r[TK_VW];
  for (int c = 0; c < TK_VW; ++c)
    r[c] =
        (treg)(c >= a && c < b ? (n == TK_VW ? tk_load(in + (c - a) * is)
                                             : tk_load_n(in + (c - a) * is, n))
                               : (tk_vec){0});
#if TK_VW == 16
  transpose_regs16(r);
#else
  transpose_regs8(r);
#endif
  for (int i = 0; i < n; ++i) {
    if (w == TK_VW)
      tk_store(out + i * os, (tk_vec)r[i]);
    else
      tk_store_n(out + i * os, (tk_vec)r[i], w);
  }
#else
  for (int i = 0; i < n; ++i)
    for (int c = 0; c < w; ++c)
      out[i * os + c] = c >= a && c < b ? in[(c - a) * is + i] : 0.0f;
#endif
}

/* The TK_VW x TK_VW block at in (in[c*is + r] is row r of column c) into
 * out, row-major (out[r*os + c]): transpose_block_part whole, its masks
 * folded away. */
static inline void transpose_block(const float *in, int64_t is, float *out,
                                   int64_t os) {
  transpose_block_part(in, is, 0, TK_VW, TK_VW, out, os, TK_VW);
}

#endif
