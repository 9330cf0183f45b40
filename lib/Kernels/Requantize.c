/* Requantize.c - the int8 kernels' requantizing epilogue (Requantize.h).
 *
 * Each step is one f32 operation in the order of the arith ops it
 * replaces, never a fused multiply-add unless the compiler proved the
 * sequence exact (TESSEL_KERNEL_RECIPROCAL_FMA), hence `fp contract(off)`. */
#include "Requantize.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#pragma clang fp contract(off)

#define MR TK_RQ_MR
#define NR TK_RQ_NR


/* y, clamped, as the arith ops do it: minimumf then maximumf (a NaN stays
 * NaN). */
static inline float clampf(float y, float lo, float hi) {
  y = y > hi ? hi : y;
  return y < lo ? lo : y;
}

/* roundeven(y / out_scale) as the epilogue's division sequence computes
 * it (proven to be the division's within the plan's [L, H]). */
static inline float rounded_quotient(const struct epilogue *e, float y) {
  float q;
  if (e->division == 1) {
    q = y * e->recip;
  } else if (e->division == 2) {
    const float q1 = y * e->recip;
    const float r = __builtin_fmaf(-q1, e->out_scale, y);
    q = __builtin_fmaf(r, e->recip, q1);
  } else {
    q = y / e->out_scale;
  }
  return __builtin_roundevenf(q);
}

/* The 8-bit pattern of the quantized y (NaN: 0, what x86's conversion of
 * NaN to int32 truncates to). */
static inline uint8_t quantize_scalar(const struct epilogue *e, float y) {
  float q = rounded_quotient(e, y) + e->out_zp;
  q = clampf(q, e->qmin, e->qmax);
  return q == q ? (uint8_t)(int32_t)q : 0;
}

/* Columns [n0, n0 + width) of one output row from its int32 values. */
void tk_finish_row_portable(const struct epilogue *e, const int32_t *v,
                                int32_t row_off, const int32_t *colsum,
                                int32_t a_zp, int64_t n0, int64_t width,
                                char *out, int64_t out_sn, const float *res) {
  for (int64_t n = 0; n < width; ++n) {
    const int32_t x = v[n] + row_off - (colsum ? a_zp * colsum[n] : 0);
    float y = (float)x * e->scale[n0 + n];
    if (e->bias)
      y = y + e->bias[n0 + n];
    y = clampf(y, e->lo, e->hi);
    if (e->quantize && !e->out_f32) {
      const uint8_t q = quantize_scalar(e, y);
      ((uint8_t *)out)[n * out_sn] =
          e->table ? ((const uint8_t *)e->table)[q] : q;
      continue;
    }
    if (e->quantize) {
      uint8_t q = quantize_scalar(e, y);
      if (e->dequantize) {
        if (e->table)
          q = ((const uint8_t *)e->table)[q];
        float f = e->dq_signed ? (float)(int8_t)q : (float)q;
        f = f - e->dq_zp;
        f = f * e->dq_scale;
        y = clampf(f, e->dq_lo, e->dq_hi);
      } else {
        y = ((const float *)e->table)[q];
      }
    }
    if (res)
      y = clampf(y + res[n * e->res_sn], e->res_lo, e->res_hi);
    ((float *)out)[n * out_sn] = y;
  }
}



int tk_q8_packable(const struct epilogue *e) {
  const float zp = e->out_zp, a = e->qmin, b = e->qmax;
  /* The narrowing needs q monotone in y: a positive, finite scale (ONNX's
   * are; anything else takes the float body, whatever it computes). */
  if (!(zp == rintf(zp) && a == rintf(a) && b == rintf(b) && a <= b &&
        fabsf(zp) <= 1024.0f && e->out_scale > 0.0f &&
        isfinite(e->out_scale) && isfinite(e->recip)))
    return 0;
  return a >= 0.0f ? b <= 255.0f : a >= -128.0f && b <= 127.0f;
}

static float clamp_to(float v, float lo, float hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

tk_q8_plan_t tk_q8_plan(const struct epilogue *e) {
  tk_q8_plan_t p;
  /* q(L) is about qmin - zp - 2, q(H) about qmax - zp + 2. Clamping twice
   * is clamping once to the clamped bounds. An infinite L or H (a huge
   * out_scale) leaves that side unclamped: q is small anyway. */
  const float L = (e->qmin - e->out_zp - 2.0f) * e->out_scale;
  const float H = (e->qmax - e->out_zp + 2.0f) * e->out_scale;
  p.lo = clamp_to(e->lo, L, H);
  p.hi = clamp_to(e->hi, L, H);
  p.zp = (int16_t)e->out_zp;
  p.qmin = (int16_t)e->qmin;
  p.qmax = (int16_t)e->qmax;
  p.is_signed = e->qmin < 0.0f;
  p.clamp16 = p.is_signed ? (p.qmin != -128 || p.qmax != 127)
                          : (p.qmin != 0 || p.qmax != 255);
  /* INT_MIN saturates to qmin: byte 0 only for an unsigned qmin of 0. */
  p.nan_fix = p.is_signed || p.qmin != 0;
  return p;
}

/* table[v] read as the affine map's output (signed or unsigned bytes),
 * v clamped to [qmin, qmax] first. */
static int32_t table_at(const uint8_t *t, int32_t v, int32_t qmin,
                        int32_t qmax, int out_signed) {
  const uint8_t b = t[(uint8_t)(v < qmin ? qmin : v > qmax ? qmax : v)];
  return out_signed ? (int32_t)(int8_t)b : (int32_t)b;
}

/* Whether clamp((v * m + 256 * k) >> shift, lo, hi) is table_at(v) for
 * every v in [v0, v1]. */
static int affine_matches(const uint8_t *t, int32_t qmin, int32_t qmax,
                          int out_signed, int32_t v0, int32_t v1, int32_t m,
                          int32_t k, int shift, int32_t lo, int32_t hi) {
  for (int32_t v = v0; v <= v1; ++v) {
    int32_t f = (v * m + 256 * k) >> shift; /* arithmetic: floor */
    f = f < lo ? lo : f > hi ? hi : f;
    if (f != table_at(t, v, qmin, qmax, out_signed))
      return 0;
  }
  return 1;
}

/* The range of k (in units, not 256ths) with floor((v * m + k) / 2^shift)
 * = table_at(v) over the rising part [a, b]; *v_lo / *v_hi: the v that
 * bound it from below and above (which way m must move when it is empty). */
static void k_range(const uint8_t *t, int32_t qmin, int32_t qmax,
                    int out_signed, int32_t a, int32_t b, int32_t m,
                    int shift, int64_t *klo, int64_t *khi, int32_t *v_lo,
                    int32_t *v_hi) {
  *klo = INT64_MIN, *khi = INT64_MAX, *v_lo = *v_hi = a;
  for (int32_t v = a; v <= b; ++v) {
    const int64_t y = table_at(t, v, qmin, qmax, out_signed);
    const int64_t l = y * ((int64_t)1 << shift) - (int64_t)v * m,
                  h = (y + 1) * ((int64_t)1 << shift) - (int64_t)v * m - 1;
    if (l > *klo)
      *klo = l, *v_lo = v;
    if (h < *khi)
      *khi = h, *v_hi = v;
  }
}

/* Finds the map: the ends give lo and hi; on the rising part in between,
 * the m that admit a k form an interval (the constraints are half-planes
 * in (m, k)), found by bisection: an empty k range says which way m must
 * move. Near the m found, the first whose k range holds a multiple of 256
 * (k enters vpmaddwd as a 16-bit pair with 256), proven on every value.
 * Non-decreasing tables only (a requantization with a positive ratio of
 * scales); anything else keeps the lookup. */
void tk_affine_table(struct epilogue *e) {
  e->aff.ok = 0;
  if (!e->table || !e->quantize || e->out_f32 || !tk_q8_packable(e))
    return;
  const uint8_t *t = (const uint8_t *)e->table;
  const int32_t qmin = (int32_t)e->qmin, qmax = (int32_t)e->qmax;
  for (int out_signed = 0; out_signed < 2; ++out_signed) {
    const int32_t lo = table_at(t, qmin, qmin, qmax, out_signed),
                  hi = table_at(t, qmax, qmin, qmax, out_signed);
    /* The rising part: the first value above lo, the last below hi. */
    int32_t a = qmax + 1, b = qmin - 1, rising = 1;
    for (int32_t v = qmin; v <= qmax; ++v) {
      const int32_t y = table_at(t, v, qmin, qmax, out_signed);
      if (v > qmin && y < table_at(t, v - 1, qmin, qmax, out_signed))
        rising = 0;
      if (y > lo && a > qmax)
        a = v;
      if (y < hi)
        b = v;
    }
    if (!rising || lo >= hi || a > b)
      continue;
    /* The slope is below (rise + 1) / run; the largest shift that keeps m
     * in int16 for it (v * m + 256 k stays far inside int32). */
    const int32_t rise = table_at(t, b, qmin, qmax, out_signed) -
                         table_at(t, a, qmin, qmax, out_signed);
    const double slope_max = (double)(rise + 1) / (double)(b > a ? b - a : 1);
    int shift = 0;
    while (shift < 22 && slope_max * (double)(1 << (shift + 1)) <= 32767.0)
      ++shift;
    int32_t m_lo = 1, m_hi = 32767, m = 0;
    while (m_lo <= m_hi) {
      const int32_t mid = m_lo + (m_hi - m_lo) / 2;
      int64_t klo, khi;
      int32_t v_lo, v_hi;
      k_range(t, qmin, qmax, out_signed, a, b, mid, shift, &klo, &khi, &v_lo,
              &v_hi);
      if (klo <= khi) {
        m = mid;
        break;
      }
      /* klo - khi grows with m by v_hi - v_lo. */
      if (v_hi > v_lo)
        m_hi = mid - 1;
      else
        m_lo = mid + 1;
    }
    if (!m)
      continue;
    for (int32_t d = 0; d <= 64; ++d)
      for (int sign = -1; sign <= 1; sign += 2) {
        const int32_t mm = m + sign * d;
        if (mm <= 0 || mm > 32767 || (d == 0 && sign > 0))
          continue;
        int64_t klo, khi;
        int32_t v_lo, v_hi;
        k_range(t, qmin, qmax, out_signed, a, b, mm, shift, &klo, &khi, &v_lo,
                &v_hi);
        /* The smallest multiple of 256 at or above klo. */
        const int64_t k = klo >= 0 ? (klo + 255) / 256 : -((-klo) / 256);
        if (klo > khi || 256 * k > khi || k < INT16_MIN || k > INT16_MAX ||
            !affine_matches(t, qmin, qmax, out_signed, qmin - 4, qmax + 4, mm,
                            (int32_t)k, shift, lo, hi))
          continue;
        e->aff.ok = 1;
        e->aff.out_signed = out_signed;
        e->aff.m = (int16_t)mm;
        e->aff.k = (int16_t)k;
        e->aff.shift = shift;
        e->aff.lo = (int16_t)lo;
        e->aff.hi = (int16_t)hi;
        return;
      }
  }
}

void tk_epilogue_init(struct epilogue *e, const float *scale,
                      const float *bias, float lo, float hi, float out_scale,
                      float out_zp, float qmin, float qmax, const void *table,
                      float dq_scale, float dq_zp, float dq_lo, float dq_hi,
                      int32_t flags) {
  memset(e, 0, sizeof *e);
  e->scale = scale;
  e->bias = bias;
  e->lo = lo;
  e->hi = hi;
  e->out_scale = out_scale;
  e->out_zp = out_zp;
  e->qmin = qmin;
  e->qmax = qmax;
  e->table = table;
  e->quantize = (flags & TESSEL_KERNEL_QUANTIZE) != 0;
  e->out_f32 = (flags & TESSEL_KERNEL_OUT_F32) != 0;
  e->dequantize = (flags & TESSEL_KERNEL_DEQUANTIZE) != 0;
  e->dq_signed = (flags & TESSEL_KERNEL_DQ_SIGNED) != 0;
  e->dq_scale = dq_scale;
  e->dq_zp = dq_zp;
  e->dq_lo = dq_lo;
  e->dq_hi = dq_hi;
  /* The corrected reciprocal is three dependent operations: it pays only
   * where the vector division is slow (on Zen 5 it costs 5% more than
   * dividing), which tk_division_is_slow measures once. */
  e->division = (flags & TESSEL_KERNEL_RECIPROCAL)          ? 1
                : (flags & TESSEL_KERNEL_RECIPROCAL_FMA) &&
                        tk_division_is_slow()               ? 2
                                                            : 0;
  e->recip = 1.0f / out_scale;
  if (e->quantize && tk_q8_packable(e))
    e->q8 = tk_q8_plan(e);
  /* Only the AVX2 epilogue reads the affine form: proving it (a few
   * microseconds per call) is skipped where another epilogue runs. */
  if (!tk_has_vnni() && tk_has_avx2())
    tk_affine_table(e);
}

void tk_epilogue_set_residual(struct epilogue *e, const float *res,
                              int64_t res_sb, int64_t res_sm, int64_t res_sn,
                              float res_lo, float res_hi) {
  e->res = res;
  e->res_sb = res_sb;
  e->res_sm = res_sm;
  e->res_sn = res_sn;
  e->res_lo = res_lo;
  e->res_hi = res_hi;
}

void tk_epilogue_bound(struct epilogue *e, int64_t n, int64_t k,
                       int32_t a_zp, int32_t b_zp) {
  tk_q8_plan_t *p = &e->q8;
  p->fast = p->dq_fast = 0;
  if (!e->quantize || !tk_q8_packable(e) || !(p->lo <= p->hi))
    return;
  double smax = 0.0, bmax = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const float s = e->scale[i], b = e->bias ? e->bias[i] : 0.0f;
    if (!isfinite(s) || !isfinite(b))
      return;
    smax = fabs(s) > smax ? fabs(s) : smax;
    bmax = fabs(b) > bmax ? fabs(b) : bmax;
  }
  /* |y| <= |acc| * max|scale| + max|bias|, with room for the f32
   * roundings of the conversion, product and sum; its quotient must stay
   * far inside int32 (the conversion's INT_MIN would read as qmin). Each
   * product is (a - a_zp) (b - b_zp), a in [0, 255] (signed A flipped),
   * b in [-128, 127]; an int32 sum wraps, so never past 2^31. */
  double amax = (double)k * (255.0 + fabs((double)a_zp)) *
                (128.0 + fabs((double)b_zp));
  amax = amax < 2147483648.0 ? amax : 2147483648.0;
  const double ymax = (amax * smax + bmax) * 1.01;
  if (!(ymax / (double)e->out_scale < 1073741824.0))
    return;
  const int32_t qlo = (int32_t)rounded_quotient(e, p->lo) + p->zp,
                qhi = (int32_t)rounded_quotient(e, p->hi) + p->zp;
  const int32_t a = qlo > p->qmin ? qlo : p->qmin,
                b = qhi < p->qmax ? qhi : p->qmax;
  if (a > b)
    return;
  p->fmin = (int16_t)a;
  p->fmax = (int16_t)b;
  p->fclamp16 = p->is_signed ? (a != -128 || b != 127) : (a != 0 || b != 255);
  p->fast = 1;
  /* The byte read back as it was written: signed only when q's range is. */
  p->dq_fast = tk_finish_kind(e) == TK_OUT_DEQUANT && !e->table &&
               e->dq_zp == e->out_zp && e->dq_signed == p->is_signed;
}

int64_t tk_epilogue_out_bytes(const struct epilogue *e) {
  return e->out_f32 || !e->quantize ? 4 : 1;
}

#ifdef TK_HAVE_VNNI_PATH
/* Times vector divisions against the corrected reciprocal's multiply and
 * two FMAs, as the epilogue runs them: throughput over independent inputs
 * (each quotient only feeds a max, and the inputs step by an add), not
 * the latency of a chain of quotients, where the two are alike. The
 * lesser of a few tries, once per process (a few microseconds). One body
 * for the AVX-512 and the AVX2 epilogues' vector widths. */
#define TK_DEFINE_TIME_DIVISION(NAME, TARGET, LANES, V, SET1, LOADU, MUL,      \
                                FMADD, FNMADD, DIV, ADD, MAX, STOREU)          \
  TARGET static uint64_t NAME(int corrected) {                                 \
    float init[LANES];                                                         \
    for (int i = 0; i < LANES; ++i)                                            \
      init[i] = 1.0f + (float)i / 16.0f;                                       \
    V x[8], m[8];                                                              \
    for (int i = 0; i < 8; ++i)                                                \
      m[i] = x[i] = LOADU(init);                                               \
    const V s = SET1(1.0001f), r = SET1(0.9999f), d = SET1(0.5f);             \
    uint64_t best = UINT64_MAX;                                                \
    for (int attempt = 0; attempt < 5; ++attempt) {                            \
      const uint64_t t0 = __rdtsc();                                           \
      for (int it = 0; it < 64; ++it)                                          \
        for (int i = 0; i < 8; ++i) {                                          \
          V y;                                                                 \
          if (corrected) {                                                     \
            const V q = MUL(x[i], r);                                          \
            y = FMADD(FNMADD(q, s, x[i]), r, q);                               \
          } else {                                                             \
            y = DIV(x[i], s);                                                  \
          }                                                                    \
          m[i] = MAX(m[i], y);                                                 \
          x[i] = ADD(x[i], d);                                                 \
        }                                                                      \
      const uint64_t t = __rdtsc() - t0;                                       \
      best = t < best ? t : best;                                              \
    }                                                                          \
    float sink[LANES];                                                         \
    STOREU(sink, ADD(m[0], m[7]));                                             \
    __asm__ volatile("" : : "r"(sink) : "memory");                             \
    return best;                                                               \
  }
TK_DEFINE_TIME_DIVISION(time_division, TK_VNNI_TARGET, 16, __m512,
                        _mm512_set1_ps, _mm512_loadu_ps, _mm512_mul_ps,
                        _mm512_fmadd_ps, _mm512_fnmadd_ps, _mm512_div_ps,
                        _mm512_add_ps, _mm512_max_ps, _mm512_storeu_ps)
TK_DEFINE_TIME_DIVISION(time_division_avx2, TK_AVX2_TARGET, 8, __m256,
                        _mm256_set1_ps, _mm256_loadu_ps, _mm256_mul_ps,
                        _mm256_fmadd_ps, _mm256_fnmadd_ps, _mm256_div_ps,
                        _mm256_add_ps, _mm256_max_ps, _mm256_storeu_ps)
#undef TK_DEFINE_TIME_DIVISION

/* TESSEL_KERNELS_FORCE_RECIPROCAL_FMA=1: the corrected sequence wherever
 * it is allowed (its tests, on any CPU). Otherwise timed with the vectors
 * of the epilogue this CPU runs: AVX-512 with VNNI, else AVX2 (Zen 3's
 * 256-bit division takes several times the three operations). */
static int probe_division(void) {
  if (tk_env_flag("TESSEL_KERNELS_FORCE_RECIPROCAL_FMA"))
    return 1;
  if (tk_has_vnni())
    return time_division(1) < time_division(0);
  return tk_has_avx2() && time_division_avx2(1) < time_division_avx2(0);
}

int tk_division_is_slow(void) {
  static int slot = -1;
  return tk_cached(&slot, probe_division);
}

#else
int tk_division_is_slow(void) {
  return tk_env_flag("TESSEL_KERNELS_FORCE_RECIPROCAL_FMA");
}
#endif

#ifdef TK_HAVE_VNNI_PATH
/* The epilogue on 16 columns at a time, output columns contiguous. The
 * table of an 8-bit output is four zmm of 64 entries: with AVX-512 VBMI,
 * two vpermi2b pick from the low and high 128 and bit 7 blends them;
 * without, it is read per byte.
 *
 * The body is instantiated per output kind and division sequence (the
 * constants `kind` and `division`, folded after inlining), and every field
 * of the epilogue is read into a local first: the stores through `out`
 * may alias it, which otherwise reloads and re-tests each field per
 * vector. */

/* y / out_scale as the epilogue's division flag says (Requantize.h). */
TK_VNNI_TARGET static inline __attribute__((always_inline)) __m512
tk_quotient16(__m512 y, __m512 s, __m512 rs, const int division) {
  if (division == 1)
    return _mm512_mul_ps(y, rs);
  if (division == 2) {
    const __m512 q1 = _mm512_mul_ps(y, rs);
    return _mm512_fmadd_ps(_mm512_fnmadd_ps(q1, s, y), rs, q1);
  }
  return _mm512_div_ps(y, s);
}

/* Stores the f32 vector V to row r's columns [n, n + 16) under mask m,
 * after the residual's add and clamp when there is one (res0). */
#define TK_STORE_F32(V)                                                        \
  do {                                                                         \
    __m512 v_ = (V);                                                           \
    if (res0)                                                                  \
      v_ = _mm512_max_ps(                                                      \
          rlo, _mm512_min_ps(rhi, _mm512_add_ps(v_, _mm512_maskz_loadu_ps(     \
                                                   m, res0 + r * res_rs + n)))); \
    _mm512_mask_storeu_ps((float *)out + n, m, v_);                            \
  } while (0)


#define TK_DEFINE_FINISH(NAME, TARGET, LUT8)                                   \
  TARGET static inline __attribute__((always_inline)) void NAME##_body(        \
      const struct epilogue *e, int32_t acc[MR][NR], int mr,                   \
      const int32_t *row_off, const int32_t *colsum, int32_t a_zp,             \
      int64_t n0, int64_t width, char *out0, int64_t out_rs,                   \
      const float *res0, int64_t res_rs, const int kind, const int division) { \
    const float *const scale = e->scale + n0;                                  \
    const float *const bias = e->bias ? e->bias + n0 : NULL;                   \
    const int dq_signed = e->dq_signed;                                        \
    const __m512 lo = _mm512_set1_ps(e->lo), hi = _mm512_set1_ps(e->hi);       \
    const __m512 s = _mm512_set1_ps(e->out_scale);                             \
    const __m512 rs = _mm512_set1_ps(e->recip);                                \
    const __m512 zp = _mm512_set1_ps(e->out_zp);                               \
    const __m512 qlo = _mm512_set1_ps(e->qmin), qhi = _mm512_set1_ps(e->qmax); \
    const __m512 dqs = _mm512_set1_ps(e->dq_scale);                            \
    const __m512 dqz = _mm512_set1_ps(e->dq_zp);                               \
    const __m512 dql = _mm512_set1_ps(e->dq_lo);                               \
    const __m512 dqh = _mm512_set1_ps(e->dq_hi);                               \
    const __m512i azp = _mm512_set1_epi32(a_zp);                               \
    const __m512 rlo = _mm512_set1_ps(e->res_lo);                              \
    const __m512 rhi = _mm512_set1_ps(e->res_hi);                              \
    const float *const tf = (const float *)e->table;                           \
    const uint8_t *const t8 =                                                  \
        kind == TK_OUT_F32_TABLE ? NULL : (const uint8_t *)e->table;           \
    __m512i t0 = _mm512_setzero_si512(), t1 = t0, t2 = t0, t3 = t0;            \
    if (t8) {                                                                  \
      t0 = _mm512_loadu_si512(t8);                                             \
      t1 = _mm512_loadu_si512(t8 + 64);                                        \
      t2 = _mm512_loadu_si512(t8 + 128);                                       \
      t3 = _mm512_loadu_si512(t8 + 192);                                       \
    }                                                                          \
    (void)t0; (void)t1; (void)t2; (void)t3; (void)tf;                          \
    __m512i roff[MR];                                                          \
    for (int r = 0; r < mr; ++r)                                               \
      roff[r] = _mm512_set1_epi32(row_off[r]);                                 \
    for (int64_t n = 0; n < width; n += 16) {                                  \
      const int64_t rem = width - n;                                           \
      const __mmask16 m = rem >= 16 ? (__mmask16)0xFFFF                        \
                                    : (__mmask16)((1u << rem) - 1);            \
      const __m512 sc = _mm512_maskz_loadu_ps(m, scale + n);                   \
      const __m512 bi =                                                        \
          bias ? _mm512_maskz_loadu_ps(m, bias + n) : _mm512_setzero_ps();     \
      const __m512i cz =                                                       \
          colsum ? _mm512_mullo_epi32(_mm512_maskz_loadu_epi32(m, colsum + n), \
                                      azp)                                     \
                 : _mm512_setzero_si512();                                     \
      /* rows inner: mr independent chains in flight */                        \
      for (int r = 0; r < mr; ++r) {                                           \
        char *out = out0 + r * out_rs;                                         \
        const __m512i x = _mm512_sub_epi32(                                    \
            _mm512_add_epi32(_mm512_maskz_loadu_epi32(m, acc[r] + n),          \
                             roff[r]),                                         \
            cz);                                                               \
        __m512 y = _mm512_mul_ps(_mm512_cvtepi32_ps(x), sc);                   \
        if (bias)                                                              \
          y = _mm512_add_ps(y, bi);                                            \
        /* min(a, b) is a < b ? a : b: a NaN y passes, as in clampf */         \
        y = _mm512_max_ps(lo, _mm512_min_ps(hi, y));                           \
        if (kind == TK_OUT_F32) {                                              \
          TK_STORE_F32(y);                                                     \
          continue;                                                            \
        }                                                                      \
        __m512 q = tk_quotient16(y, s, rs, division);                          \
        q = _mm512_roundscale_ps(q, _MM_FROUND_TO_NEAREST_INT |                \
                                        _MM_FROUND_NO_EXC);                    \
        q = _mm512_add_ps(q, zp);                                              \
        q = _mm512_max_ps(qlo, _mm512_min_ps(qhi, q));                         \
        const __m512i qi = _mm512_cvttps_epi32(q);                             \
        if (kind == TK_OUT_F32_TABLE) {                                        \
          const __m512i idx = _mm512_and_si512(qi, _mm512_set1_epi32(0xFF));   \
          TK_STORE_F32(                                                        \
              _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, idx, tf, 4));   \
          continue;                                                            \
        }                                                                      \
        __m128i b = _mm512_cvtepi32_epi8(qi);                                  \
        if (t8) {                                                              \
          LUT8;                                                                \
        }                                                                      \
        if (kind == TK_OUT_DEQUANT) {                                          \
          const __m512i vi = dq_signed ? _mm512_cvtepi8_epi32(b)               \
                                       : _mm512_cvtepu8_epi32(b);              \
          __m512 f = _mm512_sub_ps(_mm512_cvtepi32_ps(vi), dqz);               \
          f = _mm512_mul_ps(f, dqs);                                           \
          f = _mm512_max_ps(dql, _mm512_min_ps(dqh, f));                       \
          TK_STORE_F32(f);                                                     \
          continue;                                                            \
        }                                                                      \
        _mm_mask_storeu_epi8((uint8_t *)out + n, m, b);                        \
      }                                                                        \
    }                                                                          \
  }                                                                            \
  TARGET static void NAME(const struct epilogue *e, int32_t acc[MR][NR],      \
                          int mr, const int32_t *row_off,                      \
                          const int32_t *colsum, int32_t a_zp, int64_t n0,     \
                          int64_t width, char *out0, int64_t out_rs,           \
                          int64_t out_sn, const float *res0, int64_t res_rs) { \
    (void)out_sn;                                                              \
    const int kind = tk_finish_kind(e);                                           \
    _Pragma("clang diagnostic push")                                           \
    _Pragma("clang diagnostic ignored \"-Wunused-value\"")                     \
    switch (kind * 3 + e->division) {                                          \
    TK_FINISH_CASES(NAME, TK_OUT_F32)                                          \
    TK_FINISH_CASES(NAME, TK_OUT_Q8)                                           \
    TK_FINISH_CASES(NAME, TK_OUT_F32_TABLE)                                    \
    TK_FINISH_CASES(NAME, TK_OUT_DEQUANT)                                      \
    }                                                                          \
    _Pragma("clang diagnostic pop")                                            \
  }

#define TK_FINISH_CASE(NAME, KIND, DIV)                                        \
  case KIND * 3 + DIV:                                                         \
    if (res0) /* known non-null in this copy, NULL in the other */             \
      NAME##_body(e, acc, mr, row_off, colsum, a_zp, n0, width, out0, out_rs,  \
                  res0, res_rs, KIND, DIV);                                    \
    else                                                                       \
      NAME##_body(e, acc, mr, row_off, colsum, a_zp, n0, width, out0, out_rs,  \
                  NULL, 0, KIND, DIV);                                         \
    break;
#define TK_FINISH_CASES(NAME, KIND)                                            \
  TK_FINISH_CASE(NAME, KIND, 0)                                                \
  TK_FINISH_CASE(NAME, KIND, 1)                                                \
  TK_FINISH_CASE(NAME, KIND, 2)

TK_DEFINE_FINISH(finish_tile_avx512, TK_VNNI_TARGET, {
  uint8_t bytes[16];
  _mm_storeu_si128((__m128i *)bytes, b);
  for (int i = 0; i < 16; ++i)
    bytes[i] = t8[bytes[i]];
  b = _mm_loadu_si128((const __m128i *)bytes);
})

TK_DEFINE_FINISH(
    finish_tile_vbmi,
    __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx512vbmi"))),
    {
      const __m512i i = _mm512_castsi128_si512(b);
      const __m512i low = _mm512_permutex2var_epi8(t0, i, t1);
      const __m512i high = _mm512_permutex2var_epi8(t2, i, t3);
      b = _mm512_castsi512_si128(
          _mm512_mask_blend_epi8(_mm512_movepi8_mask(i), low, high));
    })


/* The 8-bit output (TK_OUT_Q8) a row of 64 columns at a time, in integers
 * (tk_q8_plan_t says how) and saturated by packs: about half the
 * operations of the float-domain body per 16 outputs, and the table
 * looked up once per 64 bytes: vpackssdw, vpaddsw, vpmaxsw/vpminsw (skipped
 * when the pack's own saturation is the clamp), the pack to bytes
 * (vpackuswb for qmin >= 0, vpacksswb below) and one vpermd for the packs'
 * lane order. */
#define TK_DEFINE_FINISH_Q8(NAME, TARGET, LUT64)                               \
  TARGET static inline __attribute__((always_inline)) void NAME##_body(        \
      const struct epilogue *e, int32_t acc[MR][NR], int mr,                   \
      const int32_t *row_off, const int32_t *colsum, int32_t a_zp,             \
      int64_t n0, int64_t width, char *out0, int64_t out_rs,                   \
      const tk_q8_plan_t *pp, const int division, const int nan_fix,           \
      const int fast) {                                                        \
    const tk_q8_plan_t p = *pp;                                                \
    const float *const scale = e->scale + n0;                                  \
    const float *const bias = e->bias ? e->bias + n0 : NULL;                   \
    const uint8_t *const t8 = (const uint8_t *)e->table;                       \
    const __m512 lo = _mm512_set1_ps(p.lo), hi = _mm512_set1_ps(p.hi);        \
    const __m512 s = _mm512_set1_ps(e->out_scale);                             \
    const __m512 rs = _mm512_set1_ps(e->recip);                                \
    const __m512i zp = _mm512_set1_epi16(p.zp);                                \
    const __m512i qlo = _mm512_set1_epi16(fast ? p.fmin : p.qmin);             \
    const __m512i qhi = _mm512_set1_epi16(fast ? p.fmax : p.qmax);             \
    const int clamp16 = fast ? p.fclamp16 : p.clamp16;                         \
    const __m512i int16_min = _mm512_set1_epi16(INT16_MIN);                    \
    /* After the packs, dword 4L + v of the 64 bytes holds columns            \
     * [16v + 4L, 16v + 4L + 4): put it at 4v + L. */                          \
    const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6,   \
                                            10, 14, 3, 7, 11, 15);             \
    __m512i t0 = _mm512_setzero_si512(), t1 = t0, t2 = t0, t3 = t0;            \
    if (t8) {                                                                  \
      t0 = _mm512_loadu_si512(t8);                                             \
      t1 = _mm512_loadu_si512(t8 + 64);                                        \
      t2 = _mm512_loadu_si512(t8 + 128);                                       \
      t3 = _mm512_loadu_si512(t8 + 192);                                       \
    }                                                                          \
    (void)t0; (void)t1; (void)t2; (void)t3;                                    \
    /* The columns' vectors, once per tile; a_zp * colsum folded in. */        \
    __m512 sc[4], bi[4];                                                       \
    __m512i cz[4];                                                             \
    __mmask16 mv[4]; /* the tile's columns; past them acc is not written */    \
    const __m512i azp = _mm512_set1_epi32(a_zp);                               \
    for (int v = 0; v < 4; ++v) {                                              \
      const int64_t rem = width - 16 * v;                                      \
      const __mmask16 m = rem >= 16  ? (__mmask16)0xFFFF                       \
                          : rem <= 0 ? (__mmask16)0                            \
                                     : (__mmask16)((1u << rem) - 1);           \
      mv[v] = m;                                                               \
      sc[v] = _mm512_maskz_loadu_ps(m, scale + 16 * v);                        \
      bi[v] = bias ? _mm512_maskz_loadu_ps(m, bias + 16 * v)                   \
                   : _mm512_setzero_ps();                                      \
      cz[v] = colsum ? _mm512_mullo_epi32(                                     \
                           _mm512_maskz_loadu_epi32(m, colsum + 16 * v), azp)  \
                     : _mm512_setzero_si512();                                 \
    }                                                                          \
    const __mmask64 mstore =                                                   \
        width >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << width) - 1);           \
    int any_off = 0;                                                           \
    for (int r = 0; r < mr; ++r)                                               \
      any_off |= row_off[r] != 0;                                              \
    for (int r = 0; r < mr; ++r) {                                             \
      const __m512i roff = _mm512_set1_epi32(row_off[r]);                      \
      __m512i qi[4];                                                           \
      for (int v = 0; v < 4; ++v) {                                            \
        __m512i x = _mm512_maskz_loadu_epi32(mv[v], acc[r] + 16 * v);         \
        if (colsum)                                                            \
          x = _mm512_sub_epi32(x, cz[v]);                                      \
        if (any_off)                                                           \
          x = _mm512_add_epi32(x, roff);                                       \
        __m512 y = _mm512_mul_ps(_mm512_cvtepi32_ps(x), sc[v]);                \
        if (bias)                                                              \
          y = _mm512_add_ps(y, bi[v]);                                         \
        if (!fast) /* NaN passes */                                            \
          y = _mm512_max_ps(lo, _mm512_min_ps(hi, y));                         \
        __m512 q = tk_quotient16(y, s, rs, division);                          \
        qi[v] = _mm512_cvt_roundps_epi32(                                      \
            q, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);                 \
      }                                                                        \
      __m512i w0 = _mm512_packs_epi32(qi[0], qi[1]);                           \
      __m512i w1 = _mm512_packs_epi32(qi[2], qi[3]);                           \
      __mmask32 nan = 0;                                                       \
      if (nan_fix)                                                             \
        nan = _mm512_cmpeq_epi16_mask(w0, int16_min) |                         \
              _mm512_cmpeq_epi16_mask(w1, int16_min);                          \
      w0 = _mm512_adds_epi16(w0, zp);                                          \
      w1 = _mm512_adds_epi16(w1, zp);                                          \
      if (clamp16) {                                                           \
        w0 = _mm512_min_epi16(_mm512_max_epi16(w0, qlo), qhi);                 \
        w1 = _mm512_min_epi16(_mm512_max_epi16(w1, qlo), qhi);                 \
      }                                                                        \
      __m512i b = p.is_signed ? _mm512_packs_epi16(w0, w1)                     \
                              : _mm512_packus_epi16(w0, w1);                   \
      b = _mm512_permutexvar_epi32(order, b);                                  \
      if (t8) {                                                                \
        LUT64;                                                                 \
      }                                                                        \
      char *out = out0 + r * out_rs;                                           \
      _mm512_mask_storeu_epi8(out, mstore, b);                                 \
      if (nan_fix && nan) /* a NaN y: rare, redone one element at a time */    \
        tk_finish_row_portable(e, acc[r], row_off[r], colsum, a_zp, n0, width,    \
                            out, 1, NULL);                                     \
    }                                                                          \
  }                                                                            \
  TARGET static void NAME(const struct epilogue *e, int32_t acc[MR][NR],      \
                          int mr, const int32_t *row_off,                      \
                          const int32_t *colsum, int32_t a_zp, int64_t n0,     \
                          int64_t width, char *out0, int64_t out_rs,           \
                          int64_t out_sn, const float *res0, int64_t res_rs) { \
    (void)out_sn; (void)res0; (void)res_rs;                                    \
    const tk_q8_plan_t *p = &e->q8; /* once per call */                        \
    const int mode = p->fast ? 2 : p->nan_fix;                                 \
    switch (e->division * 3 + mode) {                                          \
    TK_FINISH_Q8_CASES(NAME, 0)                                                \
    TK_FINISH_Q8_CASES(NAME, 1)                                                \
    TK_FINISH_Q8_CASES(NAME, 2)                                                \
    }                                                                          \
  }

/* Division sequence DIV x (float clamp and NaN check, the same with the
 * NaN fix, fast: neither). */
#define TK_FINISH_Q8_CASE(NAME, DIV, NAN_FIX, FAST)                            \
  case DIV * 3 + (FAST ? 2 : NAN_FIX):                                         \
    NAME##_body(e, acc, mr, row_off, colsum, a_zp, n0, width, out0, out_rs, p, \
                DIV, NAN_FIX, FAST);                                           \
    break;
#define TK_FINISH_Q8_CASES(NAME, DIV)                                          \
  TK_FINISH_Q8_CASE(NAME, DIV, 0, 0)                                           \
  TK_FINISH_Q8_CASE(NAME, DIV, 1, 0)                                           \
  TK_FINISH_Q8_CASE(NAME, DIV, 0, 1)

TK_DEFINE_FINISH_Q8(finish_q8_avx512, TK_VNNI_TARGET, {
  uint8_t bytes[64];
  _mm512_storeu_si512(bytes, b);
  for (int i = 0; i < 64; ++i)
    bytes[i] = t8[bytes[i]];
  b = _mm512_loadu_si512(bytes);
})

TK_DEFINE_FINISH_Q8(
    finish_q8_vbmi,
    __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx512vbmi"))),
    {
      const __m512i low = _mm512_permutex2var_epi8(t0, b, t1);
      const __m512i high = _mm512_permutex2var_epi8(t2, b, t3);
      b = _mm512_mask_blend_epi8(_mm512_movepi8_mask(b), low, high);
    })

#endif

#ifdef TK_HAVE_VNNI_PATH
/* A dequantized output (with or without a residual) where the plan's
 * dq_fast holds: (v - zp) * dq_scale with v - zp = clamp(q(y), fmin - zp,
 * fmax - zp), all small integers in f32, so the value is the float body's
 * to the bit with no conversion to 8 bits and back: cvt, scale, bias,
 * quotient, clamp, round, scale per 16 outputs, then the clamps and the
 * residual (a clamp to an infinite bound, or a NaN one, is a no-op there
 * and skipped). */
TK_VNNI_TARGET static inline __attribute__((always_inline)) void
finish_dq_body(const struct epilogue *e, int32_t acc[MR][NR], int mr,
               const int32_t *row_off, const int32_t *colsum, int32_t a_zp,
               int64_t n0, int64_t width, char *out0, int64_t out_rs,
               const float *res0, int64_t res_rs, const int division) {
  const tk_q8_plan_t *p = &e->q8;
  const float *const scale = e->scale + n0;
  const float *const bias = e->bias ? e->bias + n0 : NULL;
  const __m512 s = _mm512_set1_ps(e->out_scale);
  const __m512 rs = _mm512_set1_ps(e->recip);
  const __m512 vlo = _mm512_set1_ps((float)(p->fmin - p->zp));
  const __m512 vhi = _mm512_set1_ps((float)(p->fmax - p->zp));
  const __m512 dqs = _mm512_set1_ps(e->dq_scale);
  const __m512 magic = _mm512_set1_ps(12582912.0f); /* 1.5 * 2^23 */
  const __m512 dql = _mm512_set1_ps(e->dq_lo), dqh = _mm512_set1_ps(e->dq_hi);
  const __m512 rlo = _mm512_set1_ps(e->res_lo), rhi = _mm512_set1_ps(e->res_hi);
  const int dq_lo = e->dq_lo > -INFINITY, dq_hi = e->dq_hi < INFINITY;
  const int r_lo = e->res_lo > -INFINITY, r_hi = e->res_hi < INFINITY;
  const __m512i azp = _mm512_set1_epi32(a_zp);
  __m512i roff[MR];
  int any_off = 0;
  for (int r = 0; r < mr; ++r) {
    roff[r] = _mm512_set1_epi32(row_off[r]);
    any_off |= row_off[r] != 0;
  }
  for (int64_t n = 0; n < width; n += 16) {
    const int64_t rem = width - n;
    const __mmask16 m =
        rem >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << rem) - 1);
    const __m512 sc = _mm512_maskz_loadu_ps(m, scale + n);
    const __m512 bi =
        bias ? _mm512_maskz_loadu_ps(m, bias + n) : _mm512_setzero_ps();
    const __m512i cz =
        colsum ? _mm512_mullo_epi32(_mm512_maskz_loadu_epi32(m, colsum + n),
                                    azp)
               : _mm512_setzero_si512();
    for (int r = 0; r < mr; ++r) { /* rows inner: mr chains in flight */
      __m512i x = _mm512_maskz_loadu_epi32(m, acc[r] + n);
      if (colsum)
        x = _mm512_sub_epi32(x, cz);
      if (any_off)
        x = _mm512_add_epi32(x, roff[r]);
      __m512 y = _mm512_mul_ps(_mm512_cvtepi32_ps(x), sc);
      if (bias)
        y = _mm512_add_ps(y, bi);
      /* Clamped to integer bounds, then rounded: the same as rounding
       * first (rounding is monotone, the bounds are its fixed points).
       * Within +-2^22, adding and subtracting 1.5 * 2^23 rounds to
       * nearest even and, unlike vrndscaleps, never leaves a -0: the
       * float body's v - zp is +0 there. */
      __m512 f = _mm512_min_ps(
          vhi, _mm512_max_ps(vlo, tk_quotient16(y, s, rs, division)));
      f = _mm512_sub_ps(_mm512_add_ps(f, magic), magic);
      f = _mm512_mul_ps(f, dqs);
      if (dq_hi)
        f = _mm512_min_ps(dqh, f);
      if (dq_lo)
        f = _mm512_max_ps(dql, f);
      if (res0) {
        f = _mm512_add_ps(f, _mm512_maskz_loadu_ps(m, res0 + r * res_rs + n));
        if (r_hi)
          f = _mm512_min_ps(rhi, f);
        if (r_lo)
          f = _mm512_max_ps(rlo, f);
      }
      _mm512_mask_storeu_ps((float *)(out0 + r * out_rs) + n, m, f);
    }
  }
}

TK_VNNI_TARGET static void finish_dq(const struct epilogue *e,
                                     int32_t acc[MR][NR], int mr,
                                     const int32_t *row_off,
                                     const int32_t *colsum, int32_t a_zp,
                                     int64_t n0, int64_t width, char *out0,
                                     int64_t out_rs, int64_t out_sn,
                                     const float *res0, int64_t res_rs) {
  (void)out_sn;
  switch (e->division) {
  case 0:
    finish_dq_body(e, acc, mr, row_off, colsum, a_zp, n0, width, out0, out_rs,
                   res0, res_rs, 0);
    break;
  case 1:
    finish_dq_body(e, acc, mr, row_off, colsum, a_zp, n0, width, out0, out_rs,
                   res0, res_rs, 1);
    break;
  default:
    finish_dq_body(e, acc, mr, row_off, colsum, a_zp, n0, width, out0, out_rs,
                   res0, res_rs, 2);
    break;
  }
}
#endif

static void finish_tile_portable(const struct epilogue *e,
                                 int32_t acc[TK_RQ_MR][TK_RQ_NR], int mr,
                                 const int32_t *row_off, const int32_t *colsum,
                                 int32_t a_zp, int64_t n0, int64_t width,
                                 char *out0, int64_t out_rs, int64_t out_sn,
                                 const float *res0, int64_t res_rs) {
  for (int r = 0; r < mr; ++r)
    tk_finish_row_portable(e, acc[r], row_off[r], colsum, a_zp, n0, width,
                        out0 + r * out_rs, out_sn,
                        res0 ? res0 + r * res_rs : NULL);
}

#ifdef TK_HAVE_VNNI_PATH
/* 8-bit outputs through the integer body on AVX-512 (finish_q8_*), the
 * twin of RequantizeAVX2.c's: bit-exact with the float body in the int8
 * kernel tests and on MobileNetV2's, ResNet-50's and the BERT encoder's
 * QDQ outputs, and faster (Intel Sapphire Rapids: MobileNetV2 1.24x,
 * ResNet-50 1.09x end to end). TESSEL_KERNELS_NO_INT_Q8_AVX512=1 keeps
 * the float body, so that it stays tested (ctest -R FloatQ8Avx512). */
static int probe_int_q8_avx512(void) {
  return !tk_env_flag("TESSEL_KERNELS_NO_INT_Q8_AVX512");
}
static int int_q8_avx512(void) {
  static int slot = -1;
  return tk_cached(&slot, probe_int_q8_avx512);
}
#endif

/* The vector epilogue needs contiguous output (and residual) columns. */
tk_finish_fn tk_choose_finish(const struct epilogue *e, int64_t out_sn) {
  if (out_sn == 1 && (!e->res || e->res_sn == 1)) {
#ifdef TK_HAVE_VNNI_PATH
    if (tk_has_vnni()) {
      const int vbmi = tk_has_vbmi();
      if (tk_finish_kind(e) == TK_OUT_Q8 && tk_q8_packable(e) &&
          int_q8_avx512())
        return vbmi ? finish_q8_vbmi : finish_q8_avx512;
      if (tk_finish_kind(e) == TK_OUT_DEQUANT && tk_q8_packable(e) &&
          e->q8.dq_fast && int_q8_avx512())
        return finish_dq;
      return vbmi ? finish_tile_vbmi : finish_tile_avx512;
    }
#endif
    if (tk_has_avx2()) {
      const tk_finish_fn f = tk_choose_finish_avx2(e);
      if (f)
        return f;
    }
  }
  return finish_tile_portable;
}
