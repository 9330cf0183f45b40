/* SparseLanesF32.c - the N:M f32 sparse matmul in the lane order
 * (TESSEL_KERNEL_NM_LANES, Kernels.td; docs/sparsity.md).
 *
 * C = A x B where every column of B (K x N) stores n of each aligned
 * group of m k's. The chunk-major N:M kernel (SparseTiles.c) vectorizes
 * over A's rows, one vector load of activations per FMA: on CPUs whose
 * dense kernel keeps both FMA pipes busy (Zen 5, Sapphire Rapids) that
 * runs 2:4 at about the dense speed. This one vectorizes over 16 output
 * columns, as the dense kernel does, and loads a row's 16 k's (a "quad")
 * once: a permute (vpermps) then picks each column's input for each of
 * its nonzeros in the quad, so 2:4 runs 8 FMAs and 8 permutes where the
 * dense kernel runs 16 FMAs. On Zen 5 the permutes mostly run beside the
 * FMAs: 128 x 768 x 768 at 2:4 1.38x the dense kernel (a probe of this
 * loop; 8 FMAs alone took 1.05 ns, with 8 permutes 1.42). On Intel the
 * permutes share port 5 with an FMA unit, so the compiler keeps the
 * chunk-major order there.
 *
 * The entries of 16 columns at one nonzero rank i sit together (entry
 * (c / 16) * 16 * P + i * 16 + c % 16, P = K / m * n); their k's low 4
 * bits are the permute's lanes, since rank i of every column lies in the
 * same quad. A and C are read and written in place: no transposes.
 *
 * Loop order: A's rows in bands; in each, units of a panel of 32 columns
 * and a chunk of k whose values and indices stay in L2 (about 96 KiB),
 * each swept down the band in tiles of 8 rows x 32 columns (16
 * accumulators, 8 row vectors), the sums going through C between a
 * panel's chunks; the band's rows over a chunk also stay in L2 (about
 * 384 KiB). The next unit's weights are prefetched meanwhile. Threads
 * take (band, run of panels) tasks. */
#include "SparseLanes.h"
#include "ThreadPool.h"
#include "Vector.h"
#include "tessel/Kernels/tessel_kernels.h"

#include <stdlib.h>
#include <string.h>

#define LANES TESSEL_KERNEL_NM_LANE_COLUMNS
#define TILE_ROWS 8
/* Floats of a band of A's rows over a chunk of k (about 384 KiB), and
 * bytes of a unit's weights (a panel's values and indices over the
 * chunk, about 96 KiB): both stay in L2 while the tiles read them. */
#define BAND_FLOATS (96 * 1024)
#define UNIT_BYTES (96 * 1024)

typedef struct {
  int64_t M, N, K, n, m, P;
  const float *a;
  int64_t a_sm, a_sk;
  const int32_t *kidx;
  const float *val;
  float *c;
  int64_t c_sm, c_sn;
  const float *bias;
  float lo, hi;
  int accumulate;
  int64_t band, nbands, npanels, pchunks;
  int64_t chunk_quads; /* quads of k per unit (SparseLanesF32.c's panels) */
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

/* One quad's products: `slots` nonzero ranks of `nv` column vectors for
 * the tile's rows, the indices and values of vector v at w[v] / x[v]. */
TK_INLINE void quad(__m512 acc[TILE_ROWS][2], const __m512 *x, int nv,
                    int slots, const float *const *w,
                    const int32_t *const *ix) {
  for (int s = 0; s < slots; ++s)
    for (int v = 0; v < nv; ++v) {
      const __m512 wv = _mm512_loadu_ps(w[v] + s * LANES);
      const __m512i iv = _mm512_loadu_si512(ix[v] + s * LANES);
      for (int r = 0; r < TILE_ROWS; ++r)
        acc[r][v] = _mm512_fmadd_ps(_mm512_permutexvar_ps(iv, x[r]), wv,
                                    acc[r][v]);
    }
}

/* The next unit's weights (SparseLanesF32.c's panels): up to two column
 * vectors' values and indices, `bytes` from each pointer, a tile's
 * share of them prefetched into L2 a few lines a quad. A unit's weights
 * come from memory on its first tile (a model's do not stay in L3) and
 * stalled there: 128 x 3072 x 768 at 2:4, 12 weights in turn, 1.26x the
 * dense kernel against 1.33x with the prefetches. */
typedef struct {
  const char *p[4];
  int np;
  int64_t bytes;
} prefetch_t;

TK_INLINE void prefetch_slice(const prefetch_t *pf, int64_t o0, int64_t o1) {
  for (int i = 0; i < pf->np; ++i)
    for (int64_t o = o0; o < o1; o += 64)
      _mm_prefetch(pf->p[i] + o, _MM_HINT_T1);
}

/* Rows [m0, m0 + rows) (rows <= TILE_ROWS; the missing rows repeat the
 * last, not stored) of column vectors [v0, v0 + nv), quads [q0, q1) of
 * k (and with `rest` the last, partial quad), the rows at a (row stride
 * lda, k contiguous). S: ranks per whole quad, a constant at each call so
 * that the slot loop unrolls. The sums add C's values where `load_c` (an
 * earlier chunk's, or the accumulated init) and go back to C, through
 * the bias and clamp where `final`. [pf_lo, pf_hi) of the next unit's
 * weights are prefetched meanwhile. */
TK_INLINE void tile(const lanes_job *j, const float *a, int64_t lda,
                    int64_t m0, int rows, int64_t v0, int nv, int S,
                    int64_t q0, int64_t q1, int rest, int load_c, int final,
                    const prefetch_t *pf, int64_t pf_lo, int64_t pf_hi) {
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
  for (int v = 0; v < nv; ++v) {
    w[v] = j->val + (v0 + v) * LANES * j->P + q0 * S * LANES;
    ix[v] = j->kidx + (v0 + v) * LANES * j->P + q0 * S * LANES;
  }
  const int64_t quads = q1 - q0;
  const int64_t pf_step =
      quads > 0 ? ((pf_hi - pf_lo) / quads + 63) / 64 * 64 : 0;
  __m512 x[TILE_ROWS];
  for (int64_t q = q0; q < q1; ++q) {
    const int64_t o = pf_lo + (q - q0) * pf_step;
    prefetch_slice(pf, o, o + pf_step < pf_hi ? o + pf_step : pf_hi);
    for (int r = 0; r < TILE_ROWS; ++r)
      x[r] = _mm512_loadu_ps(xr[r] + q * LANES);
    quad(acc, x, nv, S, w, ix);
    for (int v = 0; v < nv; ++v)
      w[v] += S * LANES, ix[v] += S * LANES;
  }
  if (rest) {
    const __mmask16 mask = (__mmask16)((1u << rest) - 1);
    for (int r = 0; r < TILE_ROWS; ++r)
      x[r] = _mm512_maskz_loadu_ps(mask, xr[r] + q1 * LANES);
    quad(acc, x, nv, (int)(rest / j->m * j->n), w, ix);
  }
  for (int r = 0; r < rows; ++r)
    for (int v = 0; v < nv; ++v)
      finish_vector(j, m0 + r, (v0 + v) * LANES, (tk_vec)acc[r][v], load_c,
                    final);
}

/* Column vectors [v_lo, v_hi) of rows [m_lo, m_hi): units of two vectors
 * (a panel) and a chunk of k whose weights stay in L2 (about 96 KiB),
 * each swept down the rows in tiles; the sums go through C between a
 * panel's chunks. */
static void panels(const lanes_job *j, const float *a, int64_t lda,
                   int64_t m_lo, int64_t m_hi, int64_t v_lo, int64_t v_hi) {
  const int S = (int)(LANES / j->m * j->n);
  const int64_t quads = j->K / LANES;
  const int rest = (int)(j->K - quads * LANES);
  const int64_t cq = j->chunk_quads;
  const int64_t chunks = quads > 0 ? (quads + cq - 1) / cq : 1;
  const int64_t tiles = (m_hi - m_lo + TILE_ROWS - 1) / TILE_ROWS;
  for (int64_t v0 = v_lo; v0 < v_hi; v0 += 2) {
    const int nv = v_hi - v0 < 2 ? 1 : 2;
    for (int64_t ch = 0; ch < chunks; ++ch) {
      const int64_t q0 = ch * cq, q1 = q0 + cq < quads ? q0 + cq : quads;
      const int last = ch == chunks - 1;
      /* The next unit: this panel's next chunk, or the next panel's
       * first. */
      prefetch_t pf = {{NULL, NULL, NULL, NULL}, 0, 0};
      const int64_t nv0 = last ? v0 + 2 : v0;
      const int64_t nq0 = last ? 0 : q1;
      if (nv0 < v_hi) {
        const int64_t nq1 = nq0 + cq < quads ? nq0 + cq : quads;
        for (int64_t v = nv0; v < nv0 + 2 && v < v_hi; ++v) {
          const int64_t e = v * LANES * j->P + nq0 * S * LANES;
          pf.p[pf.np++] = (const char *)(j->val + e);
          pf.p[pf.np++] = (const char *)(j->kidx + e);
        }
        pf.bytes = (nq1 - nq0) * S * LANES * (int64_t)sizeof(float);
      }
      for (int64_t m0 = m_lo; m0 < m_hi; m0 += TILE_ROWS) {
        const int rows =
            m_hi - m0 < TILE_ROWS ? (int)(m_hi - m0) : TILE_ROWS;
        const float *at = a + (m0 - m_lo) * lda;
        const int64_t t = (m0 - m_lo) / TILE_ROWS;
        const int64_t o0 = pf.bytes * t / tiles,
                      o1 = pf.bytes * (t + 1) / tiles;
        const int r = last ? rest : 0;
        const int load_c = ch > 0 || j->accumulate;
        /* The common rank counts as constants: 2:4, 4:8 and 1:2 (8), 1:4
         * and 2:8 (4), 1:8 (2). */
#define TILE_CASE(s)                                                           \
  case s:                                                                      \
    if (nv == 2)                                                               \
      tile(j, at, lda, m0, rows, v0, 2, s, q0, q1, r, load_c, last, &pf, o0,  \
           o1);                                                                \
    else                                                                       \
      tile(j, at, lda, m0, rows, v0, 1, s, q0, q1, r, load_c, last, &pf, o0,  \
           o1);                                                                \
    break;
        switch (S) {
          TILE_CASE(8)
          TILE_CASE(4)
          TILE_CASE(2)
        default:
          tile(j, at, lda, m0, rows, v0, nv, S, q0, q1, r, load_c, last, &pf,
               o0, o1);
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
          const int64_t e0 = v * LANES * j->P + l0 + l;
          float s = 0.0f;
          for (int64_t i = 0; i < j->P; ++i)
            s += a[(m - m_lo) * lda + j->kidx[e0 + i * LANES]] *
                 j->val[e0 + i * LANES];
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
      64, (size_t)((m_hi - m_lo) * j->K) * sizeof(float));
  if (!rows)
    abort(); /* out of memory: nothing sane to return */
  for (int64_t m = m_lo; m < m_hi; ++m)
    for (int64_t k = 0; k < j->K; ++k)
      rows[(m - m_lo) * j->K + k] = j->a[m * j->a_sm + k * j->a_sk];
  panels(j, rows, j->K, m_lo, m_hi, v_lo, v_hi);
  _mlir_memref_to_llvm_free(rows);
}

void tk_sparse_nm_lanes(int64_t M, int64_t N, int64_t K, const float *a,
                        int64_t a_sm, int64_t a_sk, const int32_t *ptr,
                        const int32_t *kidx, const float *val, float *c,
                        int64_t c_sm, int64_t c_sn, const float *bias,
                        float lo, float hi, int32_t flags) {
  const int64_t n = (flags >> TESSEL_KERNEL_NM_SHIFT) & 0xff;
  const int64_t m = (flags >> (TESSEL_KERNEL_NM_SHIFT + 8)) & 0x7f;
  /* The compiler says the lane order only of such weights; the counts
   * keep every read within the arrays. */
  if (n <= 0 || m <= n || LANES % m != 0 || K % m != 0 || N % LANES != 0)
    abort();
  const int64_t P = K / m * n;
  for (int64_t col = 0; col <= N; ++col)
    if (ptr[col] != col * P)
      abort();
  lanes_job j = {M,    N,    K,    n,    m,
                 P,    a,    a_sm, a_sk, kidx,
                 val,  c,    c_sm, c_sn, bias,
                 lo,   hi,   (flags & TESSEL_KERNEL_ACCUMULATE) != 0,
                 0,    0,    0,    0,    0};
  const int64_t S = LANES / m * n;
  j.chunk_quads = UNIT_BYTES / (2 * LANES * S * 8);
  if (j.chunk_quads < 1)
    j.chunk_quads = 1;
  const int64_t kc = K < j.chunk_quads * LANES ? K : j.chunk_quads * LANES;
  j.band = BAND_FLOATS / (kc > 0 ? kc : 1) / TILE_ROWS * TILE_ROWS;
  if (j.band < TILE_ROWS)
    j.band = TILE_ROWS;
  j.nbands = (M + j.band - 1) / j.band;
  j.npanels = (N / LANES + 1) / 2;
  const int threads = tk_threads_for(M * N * P);
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
