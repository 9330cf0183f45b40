/* SparseLanesF32.c - the f32 sparse matmul in the lane order
 * (TESSEL_KERNEL_LANES, Kernels.td; docs/sparsity.md).
 *
 * C = A x B with B (K x N) mostly zeros. The other sparse kernels
 * (SparseTiles.c) vectorize over A's rows, one vector load of activations
 * per FMA plus the transposes of A and C: on CPUs whose dense kernel
 * keeps both FMA pipes busy (Zen 5) 2:4 ran at about the dense speed and
 * ResNet-50's pointwise layers at 80% zeros stayed dense. This one
 * vectorizes over 16 output columns, as the dense kernel does, and loads
 * a row's 16 k's (a "quad") once: a permute (vpermps) then picks each
 * column's input for each of its nonzeros in the quad. 2:4 runs 8 FMAs
 * and 8 permutes where the dense kernel runs 16 FMAs; unstructured
 * weights run as many slots per quad as the 16 columns' most nonzeros
 * there (at 20% density about 6 of 16: the others store zeros). On Zen 5
 * the permutes mostly run beside the FMAs (8 FMAs alone took 1.05 ns,
 * with 8 permutes 1.42); on Intel they share port 5 with an FMA unit,
 * so the compiler uses this order only where they do not.
 *
 * Unit u = v * Q + q (column vector v, quad q, Q = ceil(K / 16)) holds
 * slots [ptr[u], ptr[u + 1]), 16 entries each, entry 16 s + l column
 * 16 v + l's: the k's low 4 bits are the permute's lanes. A and C are
 * read and written in place: no transposes.
 *
 * Loop order: A's rows in bands; in each, work units of a panel of 32
 * columns and a chunk of quads whose values and indices stay in L2
 * (about 96 KiB), each swept down the band in tiles of 8 rows x 32
 * columns (16 accumulators, 8 row vectors), the sums going through C
 * between a panel's chunks; the band's rows over a chunk also stay in L2
 * (about 384 KiB). The next work unit's weights are prefetched
 * meanwhile. Threads take (band, run of panels) tasks. */
#include "SparseLanes.h"
#include "ThreadPool.h"
#include "Vector.h"
#include "tessel/Kernels/tessel_kernels.h"

#include <stdlib.h>
#include <string.h>

#define LANES TESSEL_KERNEL_LANE_COLUMNS
#define TILE_ROWS 8
/* Floats of a band of A's rows over a chunk of k (about 384 KiB), and
 * bytes of a work unit's weights (a panel's values and indices over the
 * chunk, about 96 KiB): both stay in L2 while the tiles read them. */
#define BAND_FLOATS (96 * 1024)
#define UNIT_BYTES (96 * 1024)

typedef struct {
  int64_t M, N, K, Q;
  /* N:M: slots per whole quad and in a last short one; 0: per unit. */
  int64_t S, S_last;
  const float *a;
  int64_t a_sm, a_sk;
  const int32_t *ptr, *kidx;
  const float *val;
  float *c;
  int64_t c_sm, c_sn;
  const float *bias;
  float lo, hi;
  int accumulate;
  int64_t band, nbands, npanels, pchunks;
  int64_t chunk_quads; /* quads per work unit (panels) */
} lanes_job;

/* C's vector at (row, col): TK_VW columns. */
static tk_vec load_vector(const lanes_job *j, int64_t row, int64_t col) {
  const float *o = j->c + row * j->c_sm + col * j->c_sn;
  if (j->c_sn == 1)
    return tk_load(o);
  float t[TK_VW];
  for (int l = 0; l < TK_VW; ++l)
    t[l] = o[l * j->c_sn];
  return tk_load(t);
}

/* Stores y at (row, col), plus C's value there where `add_c`, through
 * the bias and clamp where `final`. */
static void finish_vector(const lanes_job *j, int64_t row, int64_t col,
                          tk_vec y, int add_c, int final) {
  if (add_c)
    y += load_vector(j, row, col);
  if (final && j->bias)
    y += tk_load(j->bias + col);
  if (final && tk_has_clamp(j->lo, j->hi))
    y = tk_min(tk_max(y, tk_splat(j->lo)), tk_splat(j->hi));
  float *o = j->c + row * j->c_sm + col * j->c_sn;
  if (j->c_sn == 1) {
    tk_store(o, y);
    return;
  }
  float t[TK_VW];
  tk_store(t, y);
  for (int l = 0; l < TK_VW; ++l)
    o[l * j->c_sn] = t[l];
}

#if defined(__AVX512F__) && TK_VW == LANES
#include <immintrin.h>

/* One slot: its 16 values and indices at w / ix, for the tile's rows. */
TK_INLINE void slot(__m512 acc[TILE_ROWS][2], int v, const __m512 *x,
                    const float *w, const int32_t *ix) {
  const __m512 wv = _mm512_loadu_ps(w);
  const __m512i iv = _mm512_loadu_si512(ix);
  for (int r = 0; r < TILE_ROWS; ++r)
    acc[r][v] = _mm512_fmadd_ps(_mm512_permutexvar_ps(iv, x[r]), wv, acc[r][v]);
}

/* One quad's slots for `nv` column vectors, vector v's `n[v]` at w[v] /
 * ix[v]. Equal counts (N:M: a constant at each call, so that the loop
 * unrolls) go slot by slot through both vectors, twice the independent
 * sums at a time. */
TK_INLINE void quad(__m512 acc[TILE_ROWS][2], const __m512 *x, int nv,
                    const int64_t *n, int equal, const float *const *w,
                    const int32_t *const *ix) {
  if (equal) {
    for (int64_t s = 0; s < n[0]; ++s)
      for (int v = 0; v < nv; ++v)
        slot(acc, v, x, w[v] + s * LANES, ix[v] + s * LANES);
    return;
  }
  for (int v = 0; v < nv; ++v)
    for (int64_t s = 0; s < n[v]; ++s)
      slot(acc, v, x, w[v] + s * LANES, ix[v] + s * LANES);
}

/* The tile's sums to rows of C in place (c_sn 1), with the epilogue
 * inline: a call per vector cost a quarter of a tile of 4 quads. */
TK_INLINE void store_rows(const lanes_job *j, __m512 acc[TILE_ROWS][2],
                          int64_t m0, int rows, int64_t v0, int nv, int load_c,
                          int final) {
  __m512 bias[2] = {_mm512_setzero_ps(), _mm512_setzero_ps()};
  for (int v = 0; v < nv; ++v)
    if (final && j->bias)
      bias[v] = _mm512_loadu_ps(j->bias + (v0 + v) * LANES);
  const int clamp = final && tk_has_clamp(j->lo, j->hi);
  const __m512 lo = _mm512_set1_ps(j->lo), hi = _mm512_set1_ps(j->hi);
  for (int r = 0; r < TILE_ROWS; ++r)
    for (int v = 0; v < nv; ++v) {
      if (r >= rows)
        continue;
      float *o = j->c + (m0 + r) * j->c_sm + (v0 + v) * LANES;
      __m512 y = _mm512_add_ps(acc[r][v], bias[v]);
      if (load_c)
        y = _mm512_add_ps(y, _mm512_loadu_ps(o));
      if (clamp)
        y = (__m512)tk_min(tk_max((tk_vec)y, (tk_vec)lo), (tk_vec)hi);
      _mm512_storeu_ps(o, y);
    }
}

/* The next work unit's weights: up to two column vectors' values and
 * indices, bytes[i] from p[i]; a tile's share of each prefetched into L2,
 * a few lines a quad. A unit's weights come from memory on its first
 * tile (a model's do not stay in L3) and stalled there: 128 x 3072 x 768
 * at 2:4, 12 weights in turn, 1.26x the dense kernel against 1.33x with
 * the prefetches. */
typedef struct {
  const char *p[4];
  int64_t bytes[4];
  int np;
  /* Per pointer: bytes a tile takes, and of those, bytes a quad. */
  int64_t tile_bytes[4], quad_bytes[4];
} prefetch_t;

/* Rows [m0, m0 + rows) (rows <= TILE_ROWS; the missing rows repeat the
 * last, not stored) of column vectors [v0, v0 + nv), quads [q0, q1) of
 * k (the last of all, when short, with masked loads), the rows at a (row
 * stride lda, k contiguous). S: N:M's slots per whole quad, a constant at
 * each call so that the slot loop unrolls (0: the units' own counts).
 * The sums add C's values where `load_c` (an earlier chunk's, or the
 * accumulated init) and go back to C, through the bias and clamp where
 * `final`. Tile t prefetches its share of pf meanwhile. */
TK_INLINE void tile(const lanes_job *j, const float *a, int64_t lda, int64_t m0,
                    int rows, int64_t v0, int nv, int S, int64_t q0, int64_t q1,
                    int load_c, int final, const prefetch_t *pf, int64_t t) {
  const float *xr[TILE_ROWS];
  for (int r = 0; r < TILE_ROWS; ++r)
    xr[r] = a + (r < rows ? r : rows - 1) * lda;
  /* The sums start at 0 and C is added at the end: loading C into them
   * here put them on the stack, stored at every FMA (1.4x slower). */
  __m512 acc[TILE_ROWS][2];
  for (int r = 0; r < TILE_ROWS; ++r)
    acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  const float *w[2];
  const int32_t *ix[2];
  const int32_t *up[2]; /* the vectors' unit offsets from quad q0 */
  for (int v = 0; v < nv; ++v) {
    up[v] = j->ptr + (v0 + v) * j->Q + q0;
    w[v] = j->val + (int64_t)up[v][0] * LANES;
    ix[v] = j->kidx + (int64_t)up[v][0] * LANES;
  }
  const char *pfp[4];
  for (int i = 0; i < pf->np; ++i)
    pfp[i] = pf->p[i] + t * pf->tile_bytes[i];
  const int64_t whole = j->K / LANES;
  const int64_t q_end = q1 < whole ? q1 : whole;
  __m512 x[TILE_ROWS];
  int64_t n[2];
  for (int64_t q = q0; q < q_end; ++q) {
    /* Not for unstructured weights: there the loop's branches cost
     * 10-15% (3136 x 256 x 64, 128 x 768 x 768 at 20%). */
    for (int i = 0; i < (S ? pf->np : 0); ++i) {
      if (pfp[i] >= pf->p[i] + pf->bytes[i])
        continue;
      for (int64_t o = 0; o < pf->quad_bytes[i]; o += 64)
        _mm_prefetch(pfp[i] + o, _MM_HINT_T1);
      pfp[i] += pf->quad_bytes[i];
    }
    for (int r = 0; r < TILE_ROWS; ++r)
      x[r] = _mm512_loadu_ps(xr[r] + q * LANES);
    /* Whole quads apart from a short last one: S stays a constant. */
    for (int v = 0; v < nv; ++v)
      n[v] = S ? S : up[v][q - q0 + 1] - up[v][q - q0];
    quad(acc, x, nv, n, S != 0, w, ix);
    for (int v = 0; v < nv; ++v)
      w[v] += n[v] * LANES, ix[v] += n[v] * LANES;
  }
  if (q1 > whole) { /* the short last quad, masked */
    const __mmask16 mask = (__mmask16)((1u << (j->K - whole * LANES)) - 1);
    for (int r = 0; r < TILE_ROWS; ++r)
      x[r] = _mm512_maskz_loadu_ps(mask, xr[r] + whole * LANES);
    for (int v = 0; v < nv; ++v)
      n[v] = S ? j->S_last : up[v][whole - q0 + 1] - up[v][whole - q0];
    quad(acc, x, nv, n, S != 0, w, ix);
  }
  if (j->c_sn != 1) {
    for (int r = 0; r < rows; ++r)
      for (int v = 0; v < nv; ++v)
        finish_vector(j, m0 + r, (v0 + v) * LANES, (tk_vec)acc[r][v], load_c,
                      final);
    return;
  }
  store_rows(j, acc, m0, rows, v0, nv, load_c, final);
}

/* The unstructured tiles on their own: inlined into panels with the
 * others, their slot loops had the sums and rows spilled around every
 * loop (3136 x 256 x 64 at 20%: 0.46 against 0.41 ms). The N:M ones stay
 * inline (their own functions ran a BERT-style encoder 3% slower). */
#define TILE_FN(name, NV, S)                                                   \
  static __attribute__((noinline)) void name(                                  \
      const lanes_job *j, const float *a, int64_t lda, int64_t m0, int rows,   \
      int64_t v0, int64_t q0, int64_t q1, int load_c, int final,               \
      const prefetch_t *pf, int64_t t) {                                       \
    tile(j, a, lda, m0, rows, v0, NV, S, q0, q1, load_c, final, pf, t);        \
  }
TILE_FN(tile_2_var, 2, 0)
TILE_FN(tile_1_var, 1, 0)
#undef TILE_FN

/* A whole tile (8 rows, two vectors, whole quads) of unstructured
 * weights: the rows from one pointer and its row stride, each vector's
 * slots from its own pointers. */
static __attribute__((noinline)) void
tile_2_var_whole(const lanes_job *j, const float *a, int64_t lda, int64_t m0,
                 int64_t v0, int64_t q0, int64_t q1, int load_c, int final) {
  __m512 acc[TILE_ROWS][2];
  for (int r = 0; r < TILE_ROWS; ++r)
    acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  const int32_t *u0 = j->ptr + v0 * j->Q, *u1 = u0 + j->Q;
  for (int64_t q = q0; q < q1; ++q) {
    __m512 x[TILE_ROWS];
    for (int r = 0; r < TILE_ROWS; ++r)
      x[r] = _mm512_loadu_ps(a + r * lda + q * LANES);
    const float *w0 = j->val + (int64_t)u0[q] * LANES;
    const float *w1 = j->val + (int64_t)u1[q] * LANES;
    const int32_t *i0 = j->kidx + (int64_t)u0[q] * LANES;
    const int32_t *i1 = j->kidx + (int64_t)u1[q] * LANES;
    const int n0 = u0[q + 1] - u0[q], n1 = u1[q + 1] - u1[q];
    for (int s = 0; s < n0; ++s)
      slot(acc, 0, x, w0 + s * LANES, i0 + s * LANES);
    for (int s = 0; s < n1; ++s)
      slot(acc, 1, x, w1 + s * LANES, i1 + s * LANES);
  }
  /* Through calls: the inline epilogue (store_rows) spilled the sums in
   * the slot loops here (1.5x slower). */
  for (int r = 0; r < TILE_ROWS; ++r)
    for (int v = 0; v < 2; ++v)
      finish_vector(j, m0 + r, (v0 + v) * LANES, (tk_vec)acc[r][v], load_c,
                    final);
}

/* Column vectors [v_lo, v_hi) of rows [m_lo, m_hi): work units of two
 * vectors (a panel) and a chunk of quads, each swept down the rows in
 * tiles; the sums go through C between a panel's chunks. */
static void panels(const lanes_job *j, const float *a, int64_t lda,
                   int64_t m_lo, int64_t m_hi, int64_t v_lo, int64_t v_hi) {
  const int64_t Q = j->Q, cq = j->chunk_quads;
  const int64_t chunks = Q > 0 ? (Q + cq - 1) / cq : 1;
  const int64_t tiles = (m_hi - m_lo + TILE_ROWS - 1) / TILE_ROWS;
  for (int64_t v0 = v_lo; v0 < v_hi; v0 += 2) {
    const int nv = v_hi - v0 < 2 ? 1 : 2;
    for (int64_t ch = 0; ch < chunks; ++ch) {
      const int64_t q0 = ch * cq, q1 = q0 + cq < Q ? q0 + cq : Q;
      const int last = ch == chunks - 1;
      /* The next work unit: this panel's next chunk, or the next
       * panel's first. */
      prefetch_t pf = {{NULL, NULL, NULL, NULL},
                       {0, 0, 0, 0},
                       0,
                       {0, 0, 0, 0},
                       {0, 0, 0, 0}};
      const int64_t nv0 = last ? v0 + 2 : v0;
      const int64_t nq0 = last ? 0 : q1;
      const int64_t nq1 = nq0 + cq < Q ? nq0 + cq : Q;
      for (int64_t v = nv0; v < nv0 + 2 && v < v_hi; ++v) {
        const int64_t e0 = (int64_t)j->ptr[v * Q + nq0] * LANES;
        const int64_t e1 = (int64_t)j->ptr[v * Q + nq1] * LANES;
        const int64_t bytes = (e1 - e0) * (int64_t)sizeof(float);
        pf.p[pf.np] = (const char *)(j->val + e0);
        pf.bytes[pf.np++] = bytes;
        pf.p[pf.np] = (const char *)(j->kidx + e0);
        pf.bytes[pf.np++] = bytes;
      }
      for (int i = 0; i < pf.np; ++i) {
        pf.tile_bytes[i] = (pf.bytes[i] + tiles - 1) / tiles;
        pf.quad_bytes[i] =
            (pf.tile_bytes[i] / (q1 > q0 ? q1 - q0 : 1) + 63) / 64 * 64;
      }
      for (int64_t m0 = m_lo; m0 < m_hi; m0 += TILE_ROWS) {
        const int rows = m_hi - m0 < TILE_ROWS ? (int)(m_hi - m0) : TILE_ROWS;
        const float *at = a + (m0 - m_lo) * lda;
        const int64_t t = (m0 - m_lo) / TILE_ROWS;
        const int load_c = ch > 0 || j->accumulate;
        /* N:M's common slot counts as constants: 2:4, 4:8 and 1:2 (8),
         * 1:4 and 2:8 (4), 1:8 (2). */
#define TILE_CASE(s)                                                           \
  case s:                                                                      \
    if (nv == 2)                                                               \
      tile(j, at, lda, m0, rows, v0, 2, s, q0, q1, load_c, last, &pf, t);      \
    else                                                                       \
      tile(j, at, lda, m0, rows, v0, 1, s, q0, q1, load_c, last, &pf, t);      \
    break;
        switch (j->S) {
          TILE_CASE(8)
          TILE_CASE(4)
          TILE_CASE(2)
        case 0:
          if (nv == 2 && rows == TILE_ROWS && q1 <= j->K / LANES)
            tile_2_var_whole(j, at, lda, m0, v0, q0, q1, load_c, last);
          else
            (nv == 2 ? tile_2_var : tile_1_var)(j, at, lda, m0, rows, v0, q0,
                                                q1, load_c, last, &pf, t);
          break;
        default:
          tile(j, at, lda, m0, rows, v0, nv, (int)j->S, q0, q1, load_c, last,
               &pf, t);
        }
#undef TILE_CASE
      }
    }
  }
}

#else

/* Without 512-bit vectors: the same products one output at a time, in
 * the same order. The compiler picks the lane order only for 512-bit
 * targets; this keeps every build of the library correct for it. */
static void panels(const lanes_job *j, const float *a, int64_t lda,
                   int64_t m_lo, int64_t m_hi, int64_t v_lo, int64_t v_hi) {
  for (int64_t m = m_lo; m < m_hi; ++m)
    for (int64_t v = v_lo; v < v_hi; ++v)
      for (int64_t l0 = 0; l0 < LANES; l0 += TK_VW) {
        float t[TK_VW];
        for (int l = 0; l < TK_VW; ++l) {
          float s = 0.0f;
          for (int64_t e = j->ptr[v * j->Q] * LANES + l0 + l;
               e < j->ptr[(v + 1) * j->Q] * LANES; e += LANES)
            s += a[(m - m_lo) * lda + j->kidx[e]] * j->val[e];
          t[l] = s;
        }
        finish_vector(j, m, v * LANES + l0, tk_load(t), j->accumulate, 1);
      }
}

#endif

/* Task t: band t / pchunks, its share t % pchunks of the panels. A with
 * strided k is copied into rows first (the permutes need a row's k's
 * together). */
static void run_task(void *arg, int64_t t) {
  const lanes_job *j = (const lanes_job *)arg;
  const int64_t b = t / j->pchunks, p = t % j->pchunks;
  const int64_t m_lo = b * j->band;
  const int64_t m_hi = j->M - m_lo < j->band ? j->M : m_lo + j->band;
  const int64_t vecs = j->N / LANES;
  const int64_t pan_lo = p * j->npanels / j->pchunks;
  const int64_t pan_hi = (p + 1) * j->npanels / j->pchunks;
  const int64_t v_lo = 2 * pan_lo, v_hi = 2 * pan_hi < vecs ? 2 * pan_hi : vecs;
  if (j->a_sk == 1) {
    panels(j, j->a + m_lo * j->a_sm, j->a_sm, m_lo, m_hi, v_lo, v_hi);
    return;
  }
  float *rows = (float *)_mlir_memref_to_llvm_aligned_alloc(
      64, (size_t)((m_hi - m_lo) * (j->K > 0 ? j->K : 1)) * sizeof(float));
  if (!rows)
    abort(); /* out of memory: nothing sane to return */
  for (int64_t m = m_lo; m < m_hi; ++m)
    for (int64_t k = 0; k < j->K; ++k)
      rows[(m - m_lo) * j->K + k] = j->a[m * j->a_sm + k * j->a_sk];
  panels(j, rows, j->K, m_lo, m_hi, v_lo, v_hi);
  _mlir_memref_to_llvm_free(rows);
}

void tk_sparse_lanes(int64_t M, int64_t N, int64_t K, const float *a,
                     int64_t a_sm, int64_t a_sk, const int32_t *ptr,
                     const int32_t *kidx, const float *val, float *c,
                     int64_t c_sm, int64_t c_sn, const float *bias, float lo,
                     float hi, int32_t flags) {
  const int64_t n = (flags >> TESSEL_KERNEL_NM_SHIFT) & 0xff;
  const int64_t m = (flags >> (TESSEL_KERNEL_NM_SHIFT + 8)) & 0x7f;
  /* The compiler says the lane order only of such weights; the counts
   * keep every read within the arrays. */
  if (N % LANES != 0 ||
      ((n || m) && (n <= 0 || m <= n || LANES % m != 0 || K % m != 0)))
    abort();
  const int64_t Q = (K + LANES - 1) / LANES, units = N / LANES * Q;
  const int64_t S = n ? LANES / m * n : 0;
  const int64_t S_last = n ? (K - (Q - 1) * LANES) / m * n : 0;
  if (ptr[0] != 0)
    abort();
  for (int64_t u = 0; u < units; ++u) {
    const int64_t q = u % Q;
    const int64_t want = q < K / LANES ? S : S_last;
    if (ptr[u + 1] < ptr[u] || (n && ptr[u + 1] - ptr[u] != want))
      abort();
  }
  lanes_job j = {M,
                 N,
                 K,
                 Q,
                 S,
                 S_last,
                 a,
                 a_sm,
                 a_sk,
                 ptr,
                 kidx,
                 val,
                 c,
                 c_sm,
                 c_sn,
                 bias,
                 lo,
                 hi,
                 (flags & TESSEL_KERNEL_ACCUMULATE) != 0,
                 0,
                 0,
                 0,
                 0,
                 0};
  /* Quads per work unit: about UNIT_BYTES of a panel's values and
   * indices, from the average slots per unit. */
  const int64_t slots = units > 0 ? ptr[units] : 0;
  const int64_t per_quad =
      units > 0 ? (2 * slots * LANES * 8 + units - 1) / units : 1;
  j.chunk_quads = UNIT_BYTES / (per_quad > 0 ? per_quad : 1);
  if (j.chunk_quads < 1)
    j.chunk_quads = 1;
  const int64_t kc = K < j.chunk_quads * LANES ? K : j.chunk_quads * LANES;
  j.band = BAND_FLOATS / (kc > 0 ? kc : 1) / TILE_ROWS * TILE_ROWS;
  if (j.band < TILE_ROWS)
    j.band = TILE_ROWS;
  j.nbands = (M + j.band - 1) / j.band;
  j.npanels = (N / LANES + 1) / 2;
  const int threads = tk_threads_for(M * slots * LANES);
  /* Enough tasks for every thread to take several: whole bands where
   * there are many, else each band's panels split. */
  int64_t pchunks = 1;
  if (j.nbands < 4 * threads)
    pchunks = (4 * threads + j.nbands - 1) / j.nbands;
  j.pchunks = pchunks < j.npanels ? pchunks : j.npanels;
  if (j.pchunks < 1)
    j.pchunks = 1;
  tk_parallel_for_on(threads, j.nbands * j.pchunks, run_task, &j);
}
