/* Requantize.h - the int8 kernels' requantizing epilogue (internal).
 *
 * The int8 matmul and depthwise kernels accumulate tiles of MR rows (output
 * pixels) x NR columns (output channels) of int32 and finish them here:
 * zero-point corrections, dequantize (scale, bias), clamp, requantize, and
 * an optional 256-entry table (tessel_kernel_matmul_u8s8_requant in
 * Kernels.td says what each step is). One f32 operation per step, in the
 * order of the arith ops the compiler fused, so the bytes are those of the
 * unfused code. Also the CPU checks the int8 kernels choose paths by. */
#ifndef TESSEL_KERNELS_REQUANTIZE_H
#define TESSEL_KERNELS_REQUANTIZE_H

#include "CpuFeatures.h"
#include "tessel/Kernels/tessel_kernels.h"

#include <stdint.h>

#define TK_RQ_MR 6
#define TK_RQ_NR TESSEL_KERNEL_NR

/* The VNNI paths: x86-64 with intrinsics, chosen at run time by CPUID. */
#if defined(__x86_64__) && !defined(TESSEL_KERNELS_NO_ASM)
#include <immintrin.h>
#define TK_HAVE_VNNI_PATH 1
#define TK_VNNI_TARGET                                                         \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))
/* The AVX2 tiles and epilogues (CPUs without VNNI), also chosen by CPUID
 * (tk_has_avx2 implies FMA). */
#define TK_AVX2_TARGET __attribute__((target("avx2,fma")))

/* The AVX2 tiles' products: u8 and s8 widened to 16 bits, `vpmaddwd`
 * against 4 columns (or channels) x 4 k, so each int32 lane holds one
 * column's sum over a pair of k. These are the 8 column sums of one
 * accumulator pair (columns j..j+3 and j+4..j+7), in column order. */
TK_AVX2_TARGET static inline __attribute__((always_inline)) __m256i
tk_pair_sums_avx2(__m256i lo, __m256i hi) {
  /* hadd: [j, j+1, j+4, j+5 | j+2, j+3, j+6, j+7] */
  return _mm256_permute4x64_epi64(_mm256_hadd_epi32(lo, hi),
                                  _MM_SHUFFLE(3, 1, 2, 0));
}
#endif

/* An 8-bit output computed in integers (the vector paths): y is clamped to
 * [lo, hi], the epilogue's clamp narrowed to [L, H], where L and H quantize
 * two steps past qmin and qmax (outside them the byte is qmin or qmax
 * either way: the division sequences are monotone to within 2^-21; inside
 * them q fits int16 exactly); then q rounded to nearest even in one
 * conversion to int32, + zp and [qmin, qmax] on saturating 16-bit lanes.
 * A NaN y converts to INT_MIN, -32768 on 16 bits, while every other q is
 * within 300 of zero: where that would not already give byte 0 (the float
 * body's truncation of NaN), a row with a NaN is redone by the portable
 * epilogue (nan_fix). Requires an integral out_zp and integral qmin <= qmax
 * within one byte's range (tk_q8_packable). */
typedef struct {
  float lo, hi;
  int16_t zp, qmin, qmax;
  int clamp16;   /* [qmin, qmax] is not the byte pack's saturation range */
  int is_signed; /* qmin < 0: signed saturation to bytes */
  int nan_fix;   /* a NaN would not give byte 0 by itself */
  /* Set by tk_epilogue_bound when every y of the call is finite and
   * quantizes inside int32 (from the scales, biases and the reduction
   * length): then the float clamp is skipped. q is monotone in y, so
   * q(clamp(y, lo, hi)) = clamp(q(y), q(lo), q(hi)): the clamp becomes the
   * 16-bit one, [fmin, fmax] = [qmin, qmax] narrowed by q(lo) + zp and
   * q(hi) + zp (fclamp16: not the byte pack's own range), and no NaN can
   * occur. Two vector operations fewer per 16 outputs. */
  int fast;
  int16_t fmin, fmax;
  int fclamp16;
  /* Also set by tk_epilogue_bound: a dequantized output (TK_OUT_DEQUANT)
   * whose dequantization undoes the quantization's zero point, without a
   * table: then (v - dq_zp) is q(y) clamped to [fmin - zp, fmax - zp],
   * exact in f32, and the round trip through 8 bits is skipped. */
  int dq_fast;
} tk_q8_plan_t;



struct epilogue {
  const float *scale, *bias;
  float lo, hi, out_scale, out_zp, qmin, qmax;
  const void *table;
  int quantize, out_f32;
  int dequantize, dq_signed; /* f32 out = (v - dq_zp) * dq_scale */
  float dq_scale, dq_zp, dq_lo, dq_hi;
  /* How y / out_scale is computed: 0 divide, 1 y * recip, 2 y * recip
   * corrected by its residual (TESSEL_KERNEL_RECIPROCAL[_FMA]: the compiler
   * proved either gives the division's result for this out_scale and clamp,
   * tessel/Support/QuantizeDivision.h). recip = 1 / out_scale. */
  int division;
  float recip;
  /* The residual (NULL: none), f32 and shaped as the output (strides in
   * elements): out = clamp(out + res, res_lo, res_hi) on an f32 output. */
  const float *res;
  int64_t res_sb, res_sm, res_sn;
  float res_lo, res_hi;
  /* An 8-bit table that is a clamped affine map of the quantized value v,
   * proven for every v the epilogue can produce (tk_affine_table):
   *   table[v] = clamp((v * aff.m + 256 * aff.k) >> aff.shift, lo, hi)
   * read as signed bytes when aff.out_signed. A requantization between two
   * scales (Q -> DQ -> Clip -> Q in a QDQ model) is one: then the vector
   * epilogues compute it in a few 16/32-bit lane operations instead of a
   * 256-entry lookup. */
  struct {
    int ok, out_signed;
    int16_t m, k, lo, hi;
    int shift;
  } aff;
  /* The integer 8-bit output's plan (tk_q8_plan), once per call; valid
   * when tk_q8_packable. */
  tk_q8_plan_t q8;
};

/* The epilogue of a call from its kernel arguments (the requant kernels'
 * common tail: scale ... dq_hi and flags). */
void tk_epilogue_init(struct epilogue *e, const float *scale,
                      const float *bias, float lo, float hi, float out_scale,
                      float out_zp, float qmin, float qmax, const void *table,
                      float dq_scale, float dq_zp, float dq_lo, float dq_hi,
                      int32_t flags);

/* Adds the residual operand (tessel_kernel_matmul_u8s8_requant's res ...
 * res_hi) to an epilogue. */
void tk_epilogue_set_residual(struct epilogue *e, const float *res,
                              int64_t res_sb, int64_t res_sm, int64_t res_sn,
                              float res_lo, float res_hi);

/* Bounds the call's values: n columns of scale and bias, sums of k
 * products (a - a_zp) (b - b_zp) of an unsigned activation byte (signed
 * ones flipped, a_zp with them) and a signed weight byte; sets
 * e->q8.fast where they allow it. */
void tk_epilogue_bound(struct epilogue *e, int64_t n, int64_t k,
                       int32_t a_zp, int32_t b_zp);

/* Bytes per output element: 4 (f32) or 1. */
int64_t tk_epilogue_out_bytes(const struct epilogue *e);

/* Finishes one tile without an epilogue (the int32 kernels): rows r < mr,
 * columns j < width get acc[r][j] + row_off[r] - a_zp * colsum[j] (colsum
 * NULL: no such term), stored at out0 (rows out_rs, columns out_sn
 * elements apart) or, with accumulate, added there. The dense and sparse
 * int8 kernels share it: their int32 results are the same by
 * construction. */
static inline __attribute__((always_inline)) void
tk_finish_i32(int32_t acc[TK_RQ_MR][TK_RQ_NR], int mr, const int32_t *row_off,
              const int32_t *colsum, int32_t a_zp, int64_t width,
              int32_t *out0, int64_t out_rs, int64_t out_sn, int accumulate) {
  /* Zero-point corrections: simple loops over a local array, which the
   * compiler vectorizes (the colsum test hoisted out of them). */
  for (int r = 0; r < mr; ++r) {
    const int32_t off = row_off[r];
    int32_t *v = acc[r];
    if (colsum)
      for (int64_t n = 0; n < width; ++n)
        v[n] += off - a_zp * colsum[n];
    else if (off)
      for (int64_t n = 0; n < width; ++n)
        v[n] += off;
  }
  for (int r = 0; r < mr; ++r) {
    int32_t *crow = out0 + r * out_rs;
    if (out_sn == 1 && !accumulate) {
      for (int64_t n = 0; n < width; ++n)
        crow[n] = acc[r][n];
    } else if (out_sn == 1) {
      for (int64_t n = 0; n < width; ++n)
        crow[n] += acc[r][n];
    } else {
      for (int64_t n = 0; n < width; ++n) {
        int32_t *o = crow + n * out_sn;
        *o = accumulate ? *o + acc[r][n] : acc[r][n];
      }
    }
  }
}

/* Finishes one tile: rows r < mr, columns [n0, n0 + width) of the
 * epilogue's per-column vectors. The int32 value is acc[r][j] + row_off[r]
 * - a_zp * colsum[j] (colsum NULL: no such term); out0 is the tile's first
 * output element, out_rs the bytes between rows, out_sn the elements
 * between columns; res0 the tile's first residual element (NULL: none),
 * res_rs the elements between its rows (its columns are e->res_sn
 * apart). */
typedef void (*tk_finish_fn)(const struct epilogue *e,
                             int32_t acc[TK_RQ_MR][TK_RQ_NR], int mr,
                             const int32_t *row_off, const int32_t *colsum,
                             int32_t a_zp, int64_t n0, int64_t width,
                             char *out0, int64_t out_rs, int64_t out_sn,
                             const float *res0, int64_t res_rs);

/* What an epilogue writes: f32 (no quantization), the 8-bit value (through
 * an 8-bit table if any), an f32 table's entry, or the 8-bit value
 * dequantized to f32. */
enum { TK_OUT_F32, TK_OUT_Q8, TK_OUT_F32_TABLE, TK_OUT_DEQUANT };

static inline int tk_finish_kind(const struct epilogue *e) {
  if (!e->quantize)
    return TK_OUT_F32;
  if (e->dequantize)
    return TK_OUT_DEQUANT;
  return e->out_f32 ? TK_OUT_F32_TABLE : TK_OUT_Q8;
}

int tk_q8_packable(const struct epilogue *e);

/* Fills e->aff when e's 8-bit table is such a map for every v in
 * [qmin - 4, qmax + 4] (v past [qmin, qmax] reads table[clamp(v)]: the
 * vector epilogues' 16-bit values may lie up to two steps outside before
 * the byte pack saturates them). */
void tk_affine_table(struct epilogue *e);
tk_q8_plan_t tk_q8_plan(const struct epilogue *e);

/* The portable epilogue of one output row (any kind, any strides). */
void tk_finish_row_portable(const struct epilogue *e, const int32_t *v,
                            int32_t row_off, const int32_t *colsum,
                            int32_t a_zp, int64_t n0, int64_t width,
                            char *out, int64_t out_sn, const float *res);

/* The AVX2 finish for this epilogue (RequantizeAVX2.c), NULL where it has
 * none; callers check tk_has_avx2() and contiguous columns. */
tk_finish_fn tk_choose_finish_avx2(const struct epilogue *e);

/* The fastest finish for this CPU and epilogue (vector paths need out_sn ==
 * 1 and a residual's columns contiguous). */
tk_finish_fn tk_choose_finish(const struct epilogue *e, int64_t out_sn);

/* Whether the corrected reciprocal (TESSEL_KERNEL_RECIPROCAL_FMA) beats a
 * vector division on this CPU, measured once. */
int tk_division_is_slow(void);

#endif /* TESSEL_KERNELS_REQUANTIZE_H */
