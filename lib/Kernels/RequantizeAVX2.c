/* RequantizeAVX2.c - the int8 kernels' requantizing epilogue on CPUs with
 * AVX2 but no AVX-512 VNNI (AMD Zen 3, Intel client cores before AVX10),
 * which otherwise finish every tile in scalar C (Requantize.h says what
 * each step is).
 *
 * 8-bit outputs (the activations between a QDQ model's layers) are
 * computed in integers, 32 columns at a time (tk_q8_plan_t): 4 vectors of
 * 8 f32 rounded to nearest even and converted (vroundps, vcvttps2dq, not
 * the MXCSR's rounding) -> vpackssdw, vpaddsw zp,
 * [qmin, qmax] -> vpackuswb / vpacksswb -> vpermd for the packs' lane
 * order. An 8-bit table is looked up on those 32 bytes with vpshufb, 16
 * entries at a time (lookup_table32). f32 outputs, dequantized outputs and
 * residual adds take the float-domain steps of the portable epilogue, 8
 * columns at a time, one f32 operation per step in the same order, hence
 * `fp contract(off)` (and -ffp-contract=off for this file). An f32 table
 * has no form here (portable). */
#include "Requantize.h"

#include <string.h>

#pragma clang fp contract(off)

#if defined(__x86_64__) && !defined(TESSEL_KERNELS_NO_ASM)
#include <immintrin.h>

#define MR TK_RQ_MR
#define NR TK_RQ_NR
#define TK_AVX2 __attribute__((target("avx2,fma")))
#define TK_AVX2_INLINE TK_AVX2 static inline __attribute__((always_inline))

/* The tile's per-column values, zero past its width, so every vector of
 * the tile loads whole. */
typedef struct {
  float scale[NR], bias[NR];
  int32_t cz[NR]; /* a_zp * colsum[n] */
} columns_t;

TK_AVX2 static void load_columns(const struct epilogue *e,
                                 const int32_t *colsum, int32_t a_zp,
                                 int64_t n0, int64_t width, columns_t *c) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i azp = _mm256_set1_epi32(a_zp);
  for (int64_t n = 0; n < NR; n += 8) {
    const __m256i m = _mm256_cmpgt_epi32(
        _mm256_set1_epi32((int)(width - n < 0 ? 0 : width - n)), lane);
    _mm256_storeu_ps(c->scale + n, _mm256_maskload_ps(e->scale + n0 + n, m));
    _mm256_storeu_ps(c->bias + n, e->bias
                                      ? _mm256_maskload_ps(e->bias + n0 + n, m)
                                      : _mm256_setzero_ps());
    _mm256_storeu_si256(
        (__m256i *)(c->cz + n),
        colsum ? _mm256_mullo_epi32(
                     _mm256_maskload_epi32((const int *)colsum + n, m), azp)
               : _mm256_setzero_si256());
  }
}

/* 32 bytes through a 256-entry byte table. d[k] holds table row k (entries
 * 16k .. 16k + 15) XOR row k - 1 (row 0 itself), in both 128-bit lanes:
 * for a byte x < 128, vpshufb of d[k] by x - 16k is d[k][x & 15] for k <=
 * x >> 4 and 0 past it (bit 7 of x - 16k set), so the XOR of those for k =
 * 0..7 telescopes to row x >> 4's entry x & 15. Bytes >= 128 take rows 8..15
 * the same way from x - 128, and bit 7 of x picks between the two. */
TK_AVX2_INLINE __m256i lookup_table32(const __m256i d[16], __m256i x) {
  const __m256i step = _mm256_set1_epi8(16);
  __m256i y = x, lo = _mm256_shuffle_epi8(d[0], x);
  for (int k = 1; k < 8; ++k) {
    y = _mm256_sub_epi8(y, step);
    lo = _mm256_xor_si256(lo, _mm256_shuffle_epi8(d[k], y));
  }
  const __m256i xh = _mm256_xor_si256(x, _mm256_set1_epi8((char)0x80));
  __m256i hi = _mm256_shuffle_epi8(d[8], xh);
  y = xh;
  for (int k = 1; k < 8; ++k) {
    y = _mm256_sub_epi8(y, step);
    hi = _mm256_xor_si256(hi, _mm256_shuffle_epi8(d[8 + k], y));
  }
  return _mm256_blendv_epi8(lo, hi, x);
}

TK_AVX2 static void table_rows(const uint8_t *t8, __m256i d[16]) {
  for (int k = 0; k < 16; ++k) {
    __m128i row = _mm_loadu_si128((const __m128i *)(t8 + 16 * k));
    if (k % 8)
      row = _mm_xor_si128(
          row, _mm_loadu_si128((const __m128i *)(t8 + 16 * (k - 1))));
    d[k] = _mm256_broadcastsi128_si256(row);
  }
}

/* y / out_scale as the epilogue's division flag says (Requantize.h). */
TK_AVX2_INLINE __m256 quotient(__m256 y, __m256 s, __m256 rs,
                               const int division) {
  if (division == 1)
    return _mm256_mul_ps(y, rs);
  if (division == 2) {
    const __m256 q1 = _mm256_mul_ps(y, rs);
    return _mm256_fmadd_ps(_mm256_fnmadd_ps(q1, s, y), rs, q1);
  }
  return _mm256_div_ps(y, s);
}

/* y of 8 columns: (acc + row_off - cz) * scale (+ bias). */
TK_AVX2_INLINE __m256 dequantized(const int32_t *acc, const columns_t *c,
                                  int64_t n, __m256i roff, int bias) {
  const __m256i x = _mm256_sub_epi32(
      _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(acc + n)), roff),
      _mm256_loadu_si256((const __m256i *)(c->cz + n)));
  __m256 y = _mm256_mul_ps(_mm256_cvtepi32_ps(x), _mm256_loadu_ps(c->scale + n));
  if (bias)
    y = _mm256_add_ps(y, _mm256_loadu_ps(c->bias + n));
  return y;
}

/* min(a, b) is a < b ? a : b: a NaN y passes, as in the portable clamp. */
TK_AVX2_INLINE __m256 clamp8(__m256 y, __m256 lo, __m256 hi) {
  return _mm256_max_ps(lo, _mm256_min_ps(hi, y));
}

/* The table as its affine map (e->aff) on 16 quantized values:
 * (v * m + 256 * k) >> shift from vpmaddwd of the pairs (v, 256) and
 * (m, k), clamped. The packs keep the lanes' order. */
TK_AVX2_INLINE __m256i affine16(__m256i w, __m256i mk, __m128i shift,
                                __m256i lo, __m256i hi) {
  const __m256i c256 = _mm256_set1_epi16(256);
  const __m256i a = _mm256_sra_epi32(
      _mm256_madd_epi16(_mm256_unpacklo_epi16(w, c256), mk), shift);
  const __m256i b = _mm256_sra_epi32(
      _mm256_madd_epi16(_mm256_unpackhi_epi16(w, c256), mk), shift);
  return _mm256_min_epi16(_mm256_max_epi16(_mm256_packs_epi32(a, b), lo), hi);
}

/* 8-bit outputs, 32 columns a step; `affine`: the table by e->aff. */
TK_AVX2_INLINE void finish_q8_body(const struct epilogue *e,
                                   int32_t acc[MR][NR], int mr,
                                   const int32_t *row_off,
                                   const int32_t *colsum, int32_t a_zp,
                                   int64_t n0, int64_t width, char *out0,
                                   int64_t out_rs, const tk_q8_plan_t *pp,
                                   const int division, const int nan_fix,
                                   const int affine) {
  const tk_q8_plan_t p = *pp;
  columns_t c;
  load_columns(e, colsum, a_zp, n0, width, &c);
  const int bias = e->bias != NULL;
  __m256i d[16];
  if (e->table && !affine)
    table_rows((const uint8_t *)e->table, d);
  const __m256i aff_mk = _mm256_set1_epi32(
      (int32_t)(((uint32_t)(uint16_t)e->aff.k << 16) | (uint16_t)e->aff.m));
  const __m128i aff_shift = _mm_cvtsi32_si128(e->aff.shift);
  const __m256i aff_lo = _mm256_set1_epi16(e->aff.lo),
                aff_hi = _mm256_set1_epi16(e->aff.hi);
  const __m256 lo = _mm256_set1_ps(p.lo), hi = _mm256_set1_ps(p.hi);
  const __m256 s = _mm256_set1_ps(e->out_scale), rs = _mm256_set1_ps(e->recip);
  const __m256i zp = _mm256_set1_epi16(p.zp);
  const __m256i qlo = _mm256_set1_epi16(p.qmin), qhi = _mm256_set1_epi16(p.qmax);
  const __m256i int16_min = _mm256_set1_epi16(INT16_MIN);
  /* After the packs, dword 4L + v of 32 bytes (128-bit lane L, vector v)
   * holds columns [8v + 4L, 8v + 4L + 4): it goes to 2v + L. */
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  for (int64_t n = 0; n < width; n += 32) {
    for (int r = 0; r < mr; ++r) {
      const __m256i roff = _mm256_set1_epi32(row_off[r]);
      __m256i qi[4];
      for (int v = 0; v < 4; ++v) {
        const __m256 y = clamp8(dequantized(acc[r], &c, n + 8 * v, roff, bias),
                                lo, hi);
        qi[v] = _mm256_cvttps_epi32(
            _mm256_round_ps(quotient(y, s, rs, division),
                            _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
      }
      __m256i w0 = _mm256_packs_epi32(qi[0], qi[1]);
      __m256i w1 = _mm256_packs_epi32(qi[2], qi[3]);
      int nan = 0;
      if (nan_fix)
        nan = _mm256_movemask_epi8(
                  _mm256_or_si256(_mm256_cmpeq_epi16(w0, int16_min),
                                  _mm256_cmpeq_epi16(w1, int16_min))) != 0;
      w0 = _mm256_adds_epi16(w0, zp);
      w1 = _mm256_adds_epi16(w1, zp);
      if (p.clamp16) {
        w0 = _mm256_min_epi16(_mm256_max_epi16(w0, qlo), qhi);
        w1 = _mm256_min_epi16(_mm256_max_epi16(w1, qlo), qhi);
      }
      int out_signed = p.is_signed;
      if (affine) {
        w0 = affine16(w0, aff_mk, aff_shift, aff_lo, aff_hi);
        w1 = affine16(w1, aff_mk, aff_shift, aff_lo, aff_hi);
        out_signed = e->aff.out_signed;
      }
      __m256i b = out_signed ? _mm256_packs_epi16(w0, w1)
                             : _mm256_packus_epi16(w0, w1);
      b = _mm256_permutevar8x32_epi32(b, order);
      if (e->table && !affine)
        b = lookup_table32(d, b);
      uint8_t *out = (uint8_t *)out0 + r * out_rs + n;
      if (width - n >= 32) {
        _mm256_storeu_si256((__m256i *)out, b);
      } else {
        uint8_t bytes[32];
        _mm256_storeu_si256((__m256i *)bytes, b);
        memcpy(out, bytes, (size_t)(width - n));
      }
      if (nan) /* a NaN y: rare, its 32 columns redone by the portable code */
        tk_finish_row_portable(e, acc[r] + n, row_off[r],
                               colsum ? colsum + n : NULL, a_zp, n0 + n,
                               width - n < 32 ? width - n : 32, (char *)out, 1,
                               NULL);
    }
  }
}

TK_AVX2 static void finish_q8(const struct epilogue *e, int32_t acc[MR][NR],
                              int mr, const int32_t *row_off,
                              const int32_t *colsum, int32_t a_zp, int64_t n0,
                              int64_t width, char *out0, int64_t out_rs,
                              int64_t out_sn, const float *res0,
                              int64_t res_rs) {
  (void)out_sn, (void)res0, (void)res_rs;
  const tk_q8_plan_t p = e->q8; /* planned once per call */
#define TK_Q8_BODY(DIV, NAN, AFF)                                              \
  finish_q8_body(e, acc, mr, row_off, colsum, a_zp, n0, width, out0, out_rs,   \
                 &p, DIV, NAN, AFF)
#define TK_Q8_CASE(DIV)                                                        \
  if (e->division == DIV) {                                                    \
    if (e->aff.ok)                                                             \
      p.nan_fix ? TK_Q8_BODY(DIV, 1, 1) : TK_Q8_BODY(DIV, 0, 1);               \
    else                                                                       \
      p.nan_fix ? TK_Q8_BODY(DIV, 1, 0) : TK_Q8_BODY(DIV, 0, 0);               \
    return;                                                                    \
  }
  TK_Q8_CASE(0)
  TK_Q8_CASE(1)
  TK_Q8_CASE(2)
#undef TK_Q8_CASE
#undef TK_Q8_BODY
}

/* f32 outputs, plain or dequantized from the 8-bit value, 8 columns a step
 * with the float-domain steps of the portable epilogue; then the
 * residual's add and clamp. dequant 2: the dequantization undoes the
 * quantization (the plan's dq_fast, as finish_dq in Requantize.c does it):
 * v - zp is q(y) clamped to integer bounds, rounded by adding and
 * subtracting 1.5 * 2^23 (no -0, which v - zp never is). */
TK_AVX2_INLINE void finish_f32_body(const struct epilogue *e,
                                    int32_t acc[MR][NR], int mr,
                                    const int32_t *row_off,
                                    const int32_t *colsum, int32_t a_zp,
                                    int64_t n0, int64_t width, char *out0,
                                    int64_t out_rs, const float *res0,
                                    int64_t res_rs, const int dequant,
                                    const int division) {
  columns_t c;
  load_columns(e, colsum, a_zp, n0, width, &c);
  const int bias = e->bias != NULL, dq_signed = e->dq_signed;
  const uint8_t *const t8 = (const uint8_t *)e->table;
  const __m256 lo = _mm256_set1_ps(e->lo), hi = _mm256_set1_ps(e->hi);
  const __m256 s = _mm256_set1_ps(e->out_scale), rs = _mm256_set1_ps(e->recip);
  const __m256 zp = _mm256_set1_ps(e->out_zp);
  const __m256 qlo = _mm256_set1_ps(e->qmin), qhi = _mm256_set1_ps(e->qmax);
  const __m256 dqs = _mm256_set1_ps(e->dq_scale), dqz = _mm256_set1_ps(e->dq_zp);
  const __m256 dql = _mm256_set1_ps(e->dq_lo), dqh = _mm256_set1_ps(e->dq_hi);
  const __m256 rlo = _mm256_set1_ps(e->res_lo), rhi = _mm256_set1_ps(e->res_hi);
  const __m256 vlo = _mm256_set1_ps((float)(e->q8.fmin - e->q8.zp));
  const __m256 vhi = _mm256_set1_ps((float)(e->q8.fmax - e->q8.zp));
  const __m256 magic = _mm256_set1_ps(12582912.0f);
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  for (int64_t n = 0; n < width; n += 8) {
    const __m256i m = _mm256_cmpgt_epi32(
        _mm256_set1_epi32((int)(width - n < 8 ? width - n : 8)), lane);
    for (int r = 0; r < mr; ++r) {
      __m256 y = dequantized(acc[r], &c, n, _mm256_set1_epi32(row_off[r]), bias);
      if (dequant == 2) {
        const __m256 q = _mm256_min_ps(
            vhi, _mm256_max_ps(vlo, quotient(y, s, rs, division)));
        y = _mm256_mul_ps(_mm256_sub_ps(_mm256_add_ps(q, magic), magic), dqs);
        y = _mm256_max_ps(dql, _mm256_min_ps(dqh, y));
      } else if (dequant) {
        y = clamp8(y, lo, hi);
        __m256 q = _mm256_round_ps(quotient(y, s, rs, division),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        q = _mm256_max_ps(qlo, _mm256_min_ps(qhi, _mm256_add_ps(q, zp)));
        /* The 8-bit pattern (a NaN truncates to INT_MIN: byte 0), through
         * the table, read back as the dequantization's type. */
        __m256i v = _mm256_and_si256(_mm256_cvttps_epi32(q),
                                     _mm256_set1_epi32(0xFF));
        if (t8) {
          int32_t b[8];
          _mm256_storeu_si256((__m256i *)b, v);
          for (int i = 0; i < 8; ++i)
            b[i] = t8[b[i]];
          v = _mm256_loadu_si256((const __m256i *)b);
        }
        if (dq_signed)
          v = _mm256_srai_epi32(_mm256_slli_epi32(v, 24), 24);
        y = _mm256_mul_ps(_mm256_sub_ps(_mm256_cvtepi32_ps(v), dqz), dqs);
        y = _mm256_max_ps(dql, _mm256_min_ps(dqh, y));
      } else {
        y = clamp8(y, lo, hi);
      }
      if (res0)
        y = _mm256_max_ps(
            rlo, _mm256_min_ps(rhi, _mm256_add_ps(
                                        y, _mm256_maskload_ps(
                                               res0 + r * res_rs + n, m))));
      _mm256_maskstore_ps((float *)(out0 + r * out_rs) + n, m, y);
    }
  }
}

TK_AVX2 static void finish_f32(const struct epilogue *e, int32_t acc[MR][NR],
                               int mr, const int32_t *row_off,
                               const int32_t *colsum, int32_t a_zp, int64_t n0,
                               int64_t width, char *out0, int64_t out_rs,
                               int64_t out_sn, const float *res0,
                               int64_t res_rs) {
  (void)out_sn;
  const int dequant = tk_finish_kind(e) != TK_OUT_DEQUANT ? 0
                      : e->q8.dq_fast                      ? 2
                                                           : 1;
  /* Instantiated per output kind and division sequence, with and without a
   * residual (constants once inlined). */
#define TK_F32_CASE(DQ, DIV)                                                   \
  if (dequant == DQ && (DQ == 0 || e->division == DIV)) {                      \
    if (res0)                                                                  \
      finish_f32_body(e, acc, mr, row_off, colsum, a_zp, n0, width, out0,      \
                      out_rs, res0, res_rs, DQ, DIV);                          \
    else                                                                       \
      finish_f32_body(e, acc, mr, row_off, colsum, a_zp, n0, width, out0,      \
                      out_rs, NULL, 0, DQ, DIV);                               \
    return;                                                                    \
  }
  TK_F32_CASE(0, 0)
  TK_F32_CASE(1, 0)
  TK_F32_CASE(1, 1)
  TK_F32_CASE(1, 2)
  TK_F32_CASE(2, 0)
  TK_F32_CASE(2, 1)
  TK_F32_CASE(2, 2)
#undef TK_F32_CASE
}

tk_finish_fn tk_choose_finish_avx2(const struct epilogue *e) {
  switch (tk_finish_kind(e)) {
  case TK_OUT_Q8:
    return tk_q8_packable(e) ? finish_q8 : NULL;
  case TK_OUT_F32:
  case TK_OUT_DEQUANT:
    return finish_f32;
  default: /* an f32 table: a gather per 8 values, not worth a form here */
    return NULL;
  }
}

#else
tk_finish_fn tk_choose_finish_avx2(const struct epilogue *e) {
  (void)e;
  return NULL;
}
#endif
