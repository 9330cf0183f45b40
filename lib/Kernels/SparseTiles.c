/* SparseTiles.c - the products and stores of the sparse f32 kernels
 * (SparseTiles.h).
 *
 * The work is vectorized over the virtual rows, as XNNPACK's SpMM is over
 * pixels: each nonzero block loads one vector of TK_VW rows' k-th values
 * and runs R FMAs with its values broadcast; nothing is spent on zeros
 * and no index is read per row. A tile is up to 12 vectors of rows x up
 * to 4 columns of one block column, its accumulators in registers (the
 * block's row vectors loaded once for its columns); the tiles of a group
 * of 16 output columns gather in a buffer, which is transposed in
 * registers and written as whole output rows with the epilogue (or, for a
 * channel-major output, stored a column at a time as it is).
 *
 * With R = 1 and 2 each row vector a block loads serves one or two FMAs,
 * so where they come from decides the speed: the products go in chunks
 * of k, every column of two groups reading a chunk's rows of a tile (8
 * vectors) while they are in L1, the sums kept in the group buffers
 * between chunks (tk_sparse_chunk_k sizes them). Unchunked, each block's
 * rows came from L2: 784 x 128 x 576 at 20%, R = 1, 1.1x slower; at 50%
 * 1.3x.
 *
 * Measured (bench/sparse_gemm.c, Intel Sapphire Rapids, one thread), each
 * step on its own: the activations cache-line aligned (a vector load
 * that straddles two lines costs two, and R = 1 is one load per FMA):
 * R = 1 at 20% 0.92x -> 1.3x the dense kernel; the next blocks' rows
 * prefetched: another ~1.1x; whole output rows instead of one column
 * at a time: R = 1 at 10% 2.3x -> 3.2x.
 */
#include "SparseTiles.h"
#include "ThreadPool.h"
#include "TransposeBlock.h"
#include "Vector.h"

#if defined(__AVX__)
#include <immintrin.h>
#endif

#include <stdlib.h>
#include <string.h>

/* Rows of a tile at most: 12 vectors. The group buffer holds a tile of
 * GROUP columns, column-major with this stride. */
#define TROWS (12 * TK_VW)
#define GROUP TK_SPARSE_GROUP

/* The epilogue of a vector of sums v: the old output at `old` (with acc,
 * accumulate), the bias b, then the clamp. Its arguments are locals: the
 * callers keep the view's fields in registers (the output's stores could
 * alias them as far as the compiler knows). */
TK_INLINE tk_vec epilogue(tk_vec v, int acc, const float *old, tk_vec b,
                          int clamp, tk_vec lo, tk_vec hi) {
  if (acc)
    v += tk_load(old);
  v += b;
  return clamp ? tk_min(tk_max(v, lo), hi) : v;
}

/* store_group's rows into a channel-major output (virtual rows of a
 * column contiguous, c_sc = 1): straight from the group buffer's columns,
 * a vector of rows at a time where they stay within one output row (or
 * the rows follow each other, c_sr = wq), else one at a time. */
static void store_columns(const tk_sparse_view *j, int64_t m0, int64_t rows,
                          int64_t n0, int64_t width, const float *gbuf,
                          int64_t cs) {
  const int clamp = tk_has_clamp(j->lo, j->hi);
  const tk_vec lo = tk_splat(j->lo), hi = tk_splat(j->hi);
  const int linear = j->c_sr == j->wq && j->owc == j->wq;
  for (int64_t r0 = 0; r0 < rows; r0 += TK_VW) {
    const int64_t m = m0 + r0, nr = rows - r0 < TK_VW ? rows - r0 : TK_VW;
    const int64_t mq = m / j->wq, mr = m % j->wq;
    float *out = j->c + mq * j->c_sr + mr + n0 * j->c_sn;
    /* Whole vectors: all nr rows kept and contiguous. */
    const int whole =
        nr == TK_VW && (linear ? m + TK_VW <= j->nr * j->wq
                               : mr + TK_VW <= j->owc && mq < j->nr);
    for (int64_t c = 0; c < width; ++c) {
      const float *src = gbuf + c * cs + r0;
      const float b = j->bias ? j->bias[n0 + c] : 0.0f;
      if (whole) {
        float *o = out + c * j->c_sn;
        tk_store(o, epilogue(tk_load(src), j->accumulate, o, tk_splat(b),
                             clamp, lo, hi));
        continue;
      }
      /* Runs of rows within one output row (a convolution's padding
       * columns dropped): each through a vector, copied in and out. */
      int64_t q = mq, rr = mr;
      for (int64_t r = 0; r < nr;) {
        const int64_t run = nr - r < j->wq - rr ? nr - r : j->wq - rr;
        const int64_t keep =
            q >= j->nr || rr >= j->owc ? 0 : run < j->owc - rr ? run
                                                                 : j->owc - rr;
        if (keep > 0) {
          float *o = j->c + q * j->c_sr + rr + (n0 + c) * j->c_sn;
          float t[TK_VW] = {0}, old[TK_VW] = {0};
          memcpy(t, src + r, (size_t)keep * sizeof(float));
          if (j->accumulate)
            memcpy(old, o, (size_t)keep * sizeof(float));
          tk_store(t, epilogue(tk_load(t), j->accumulate, old, tk_splat(b),
                               clamp, lo, hi));
          memcpy(o, t, (size_t)keep * sizeof(float));
        }
        r += run;
        if ((rr += run) == j->wq)
          rr = 0, ++q;
      }
    }
  }
}

/* Rows m0 .. m0 + rows - 1 of the group's columns n0 .. n0 + GROUP - 1
 * (those below N) from the group buffer, with the epilogue: TK_VW x TK_VW
 * blocks transposed in registers, then whole output rows of GROUP
 * columns as vectors (the accumulators run down the rows; writing them
 * column by column would touch a cache line per element). */
static void store_group(const tk_sparse_view *j, int64_t m0, int64_t rows,
                        int64_t n0, const float *gbuf, int64_t cs) {
  enum { GV = GROUP / TK_VW };
  const int64_t width = j->N - n0 < GROUP ? j->N - n0 : GROUP;
  if (j->c_sc == 1 && j->c_sn != 1) {
    store_columns(j, m0, rows, n0, width, gbuf, cs);
    return;
  }
  /* Whole rows of a row-major output as vectors; a last, narrower group
   * or a strided output one element at a time. Both add the old value,
   * then the bias, then clamp. */
  const int whole = width == GROUP && j->c_sn == 1;
  const int clamp = tk_has_clamp(j->lo, j->hi);
  tk_vec bias[GV];
  for (int g = 0; g < GV; ++g)
    bias[g] = j->bias && whole ? tk_load(j->bias + n0 + g * TK_VW)
                               : (tk_vec){0};
  const tk_vec lo = tk_splat(j->lo), hi = tk_splat(j->hi);
  float tbuf[TK_VW * GROUP];
  /* The view's fields in locals: the stores to the output could alias
   * them as far as the compiler knows, and it reloaded them every row. */
  float *const c = j->c;
  const int64_t wq = j->wq, owc = j->owc, nrows = j->nr;
  const int64_t c_sr = j->c_sr, c_sc = j->c_sc, c_sn = j->c_sn;
  const int acc = j->accumulate;
  const float *const jb = j->bias;
  const float flo = j->lo, fhi = j->hi;
  /* Virtual row m is output row (mq, mr) = (m / wq, m % wq) of the view,
   * followed along without dividing. */
  int64_t mq = m0 / wq, mr = m0 % wq;
#if TK_VW == 16 && GROUP == 16 && defined(TK_HAVE_TRANSPOSE16)
  /* A whole group is one vector of a row: each block of rows transposed
   * in registers and stored from there, not through tbuf (3136 x 256 x 64
   * at 20%, Zen 4: 0.54 -> 0.48 ms). */
  if (whole) {
    for (int64_t r0 = 0; r0 < rows; r0 += TK_VW) {
      __m512 rv[16];
      for (int i = 0; i < 16; ++i)
        rv[i] = _mm512_loadu_ps(gbuf + i * cs + r0);
      transpose_regs16(rv);
      const int64_t nr = rows - r0 < TK_VW ? rows - r0 : TK_VW;
      for (int64_t r = 0; r < nr; ++r) {
        const int keep = mr < owc && mq < nrows;
        float *out = c + mq * c_sr + mr * c_sc + n0;
        if (++mr == wq)
          mr = 0, ++mq;
        if (!keep)
          continue; /* a padding column of a convolution's rows */
        tk_store(out, epilogue(rv[r], acc, out, bias[0], clamp, lo, hi));
      }
    }
    return;
  }
#endif
  for (int64_t r0 = 0; r0 < rows; r0 += TK_VW) {
    for (int g = 0; g < GV; ++g)
      transpose_block(gbuf + g * TK_VW * cs + r0, cs, tbuf + g * TK_VW,
                      GROUP);
    const int64_t nr = rows - r0 < TK_VW ? rows - r0 : TK_VW;
    for (int64_t r = 0; r < nr; ++r) {
      const int keep = mr < owc && mq < nrows;
      float *out = c + mq * c_sr + mr * c_sc + n0 * c_sn;
      if (++mr == wq)
        mr = 0, ++mq;
      if (!keep)
        continue; /* a padding column of a convolution's rows */
      if (whole) {
        for (int g = 0; g < GV; ++g)
          tk_store(out + g * TK_VW,
                   epilogue(tk_load(tbuf + r * GROUP + g * TK_VW), acc,
                            out + g * TK_VW, bias[g], clamp, lo, hi));
        continue;
      }
      for (int64_t cc = 0; cc < width; ++cc) {
        float v = tbuf[r * GROUP + cc];
        if (acc)
          v += out[cc * c_sn];
        if (jb)
          v += jb[n0 + cc];
        out[cc * c_sn] = tk_clamp_scalar(v, flo, fhi);
      }
    }
  }
}

/* Nonzero blocks per block column and k-chunk (tk_sparse_chunk_k). */
#ifndef TK_SPARSE_CHUNK_NNZ
#define TK_SPARSE_CHUNK_NNZ 13
#endif
/* Column groups that share each pass over the k-chunks. */
#ifndef TK_SPARSE_CBG
#define TK_SPARSE_CBG 2
#endif
#define CBG TK_SPARSE_CBG

/* With chunks, a block column comes back for its next chunk after every
 * other column of its groups has run this one: its next blocks' indices
 * and values, a line or two past e0, are fetched as it starts a chunk.
 * Weights larger than L2 otherwise miss there on every pass, and the pass
 * waits on its first index (512 x 4608 at 50%, 49 rows: 2.3x slower). */
static inline void prefetch_next_chunk(const tk_sparse_view *j, int64_t e0,
                                       int64_t e1, int64_t R) {
  for (int64_t p = 16; p <= 32; p += 16)
    if (e0 + p < e1) {
      __builtin_prefetch(j->kidx + e0 + p, 0, 3);
      __builtin_prefetch(j->val + (e0 + p) * R, 0, 3);
    }
}

/* Row vectors of the next tile when `left` remain, tiles of at most
 * tmax: as many tiles as tmax makes, of even sizes (13 vectors as 7 + 6
 * rather than 8 + 5: each tile is a pass over every nonzero, and the
 * overhead of a nonzero is spread over the tile's vectors). */
static inline int64_t balanced_tile(int64_t left, int64_t tmax) {
  const int64_t tiles = (left + tmax - 1) / tmax;
  return tiles > 0 ? (left + tiles - 1) / tiles : 0;
}

/* TM vectors of rows from m0 x columns c0 .. c0 + CW - 1 of one block
 * column, its nonzero blocks from e0 below e1 and (with chunks, CH) below
 * k1: those of one k-chunk, as k ascends. TM and CW are compile-time
 * constants once inlined, so the TM x CW accumulators stay in registers
 * (TM * CW <= 12: with the row vectors and a broadcast they fill AVX2's
 * 16). Each nonzero block loads TM row vectors and broadcasts CW values:
 * TM * CW FMAs. The sums start at zero (the first chunk) or at the group
 * buffer's columns gc .. gc + CW - 1, and go back there. Returns where
 * the next chunk's blocks start. */
TK_INLINE int64_t block_tile(const tk_sparse_view *j, int64_t e0, int64_t e1,
                             const int CH, int64_t k1, const int R,
                             const int c0, const int CW, int64_t m0,
                             const int TM, float *gbuf, int64_t gc,
                             int first) {
  tk_vec acc[12][4];
  for (int t = 0; t < TM; ++t)
    for (int c = 0; c < CW; ++c)
      acc[t][c] = first ? (tk_vec){0}
                        : tk_load(gbuf + (gc + c) * TROWS + t * TK_VW);
  const float *at = j->at + m0;
  const int32_t *kidx = j->kidx;
  const float *val = j->val;
  const int64_t *koff = j->koff;
  /* Indices, not pointers: with no blocks at all, val and kidx may be
   * null, and no offset may be applied to them. */
  int64_t e = e0;
  for (; e < e1 && (!CH || kidx[e] < k1); ++e) {
    const float *v = val + e * R + c0;
    const float *x = at + koff[kidx[e]];
    /* One base register, the row vectors at constant displacements: left
     * to itself the compiler added each t * TK_VW to the index anew, an
     * lea per FMA (with the view's fields in locals, not reloaded per
     * block: 784 x 512 x 128 at 20%, Zen 4, 0.49 -> 0.43 ms). */
    __asm__("" : "+r"(x));
    /* With the rows in L2 (no chunks), the first line of the block 4
     * ahead: a column's k jumps, which the hardware prefetchers do not
     * follow. A line per row vector loaded the load ports instead: R = 1
     * ran 1.1-1.25x slower. From L1 (chunks), prefetches only cost. */
    if (!CH && e + 4 < e1)
      __builtin_prefetch(at + koff[kidx[e + 4]], 0, 3);
    tk_vec xv[12];
    for (int t = 0; t < TM; ++t)
      xv[t] = tk_load(x + t * TK_VW);
    for (int c = 0; c < CW; ++c) {
      const tk_vec s = tk_splat(v[c]);
      for (int t = 0; t < TM; ++t)
        acc[t][c] += s * xv[t];
    }
  }
  for (int t = 0; t < TM; ++t)
    for (int c = 0; c < CW; ++c)
      tk_store(gbuf + (gc + c) * TROWS + t * TK_VW, acc[t][c]);
  return e;
}

/* The column block's work for a tile of T row vectors from m0: chunk by
 * chunk of k, every block column of every group, CW of its R columns at a
 * time; cur[b - b_lo] is where block column b's next chunk starts. */
#define SPARSE_TILE(T, R, CW, TMAX)                                            \
  case T:                                                                      \
    if (T <= TMAX)                                                             \
      for (int64_t ch = 0; ch < nch; ++ch)                                     \
        for (int64_t b = b_lo; b < b_hi; ++b) {                                \
          const int64_t n0 = b * R / GROUP * GROUP, e1 = j->ptr[b + 1];        \
          float *gb = gbuf[n0 / GROUP - g_lo];                                 \
          int64_t next = e1;                                                   \
          for (int c0 = 0; c0 < R && b * R + c0 < j->N; c0 += CW)              \
            next = nch == 1                                                    \
                       ? block_tile(j, cur[b - b_lo], e1, 0, 0, R, c0, CW, m0, \
                                    T <= TMAX ? T : 1, gb, b * R + c0 - n0, 1) \
                       : (prefetch_next_chunk(j, cur[b - b_lo], e1, R),        \
                          block_tile(j, cur[b - b_lo], e1, 1, (ch + 1) * kc, R, \
                                    c0, CW, m0, T <= TMAX ? T : 1, gb,         \
                                    b * R + c0 - n0, ch == 0));                \
          cur[b - b_lo] = next;                                                \
        }                                                                      \
    break;
/* Rows [m_lo, m_hi) of column groups [g_lo, g_hi) (at most CBG), in tiles
 * of up to TMAX row vectors (the last tile's count a constant too), each
 * stored after its last chunk. Columns of a group past N are left out of
 * its buffer (the store does not read them). */
#define SPARSE_COLS_FN(R, CW, TMAX)                                            \
  static void cols_r##R(const tk_sparse_view *j, int64_t g_lo, int64_t g_hi,  \
                        int64_t m_lo, int64_t m_hi) {                          \
    const int64_t kc = j->kc, nch = j->K > kc ? (j->K + kc - 1) / kc : 1;      \
    const int64_t b_lo = g_lo * GROUP / R;                                     \
    const int64_t n_hi = j->N < g_hi * GROUP ? j->N : g_hi * GROUP;            \
    const int64_t b_hi = (n_hi + R - 1) / R;                                   \
    int64_t cur[CBG * GROUP];                                                  \
    float gbuf[CBG][GROUP * TROWS] __attribute__((aligned(64)));               \
    if (j->N - (g_hi - 1) * GROUP < GROUP)                                     \
      memset(gbuf[g_hi - 1 - g_lo], 0, sizeof gbuf[0]);                        \
    for (int64_t m0 = m_lo, tm; m0 < m_hi; m0 += tm * TK_VW) {                 \
      tm = balanced_tile((m_hi - m0) / TK_VW, TMAX);                           \
      for (int64_t b = b_lo; b < b_hi; ++b)                                    \
        cur[b - b_lo] = j->ptr[b];                                             \
      switch (tm) {                                                            \
        SPARSE_TILE(1, R, CW, TMAX)                                            \
        SPARSE_TILE(2, R, CW, TMAX)                                            \
        SPARSE_TILE(3, R, CW, TMAX)                                            \
        SPARSE_TILE(4, R, CW, TMAX)                                            \
        SPARSE_TILE(5, R, CW, TMAX)                                            \
        SPARSE_TILE(6, R, CW, TMAX)                                            \
        SPARSE_TILE(7, R, CW, TMAX)                                            \
        SPARSE_TILE(8, R, CW, TMAX)                                            \
        SPARSE_TILE(9, R, CW, TMAX)                                            \
        SPARSE_TILE(10, R, CW, TMAX)                                           \
        SPARSE_TILE(11, R, CW, TMAX)                                           \
        SPARSE_TILE(12, R, CW, TMAX)                                           \
      }                                                                        \
      const int64_t rows = m_hi - m0 < tm * TK_VW ? m_hi - m0 : tm * TK_VW;    \
      for (int64_t g = g_lo; g < g_hi; ++g)                                    \
        store_group(j, m0, rows, g * GROUP, gbuf[g - g_lo], TROWS);            \
    }                                                                          \
  }
/* R = 1: 8 row vectors a tile (a chunk's rows stay in L1 longer than
 * with 12, and 8 accumulators still cover the FMA latency). */
SPARSE_COLS_FN(1, 1, 8)
SPARSE_COLS_FN(2, 2, 6)
SPARSE_COLS_FN(4, 4, 3)
SPARSE_COLS_FN(8, 4, 3)
SPARSE_COLS_FN(16, 4, 3)
#undef SPARSE_COLS_FN
#undef SPARSE_TILE

/* N:M weights (view nm_n, nm_m): every column has n nonzeros in each
 * group of m k's, stored chunk-major (TESSEL_KERNEL_NM_CHUNK_K k's a
 * chunk, the chunk's columns one after another), so that a
 * chunk's nonzeros are read as one stream. Two columns run their chunk
 * in lockstep, TM x 2 accumulators, a loop whose trip count is the same
 * for every column (a count that differs per column, as unstructured
 * weights have, mispredicts every exit). On a 2:4 weight
 * (bench/sparse_gemm.c 128 768 768, Sapphire Rapids, one thread), against
 * the dense kernel: the general R = 1 tile 0.85x; fixed counts 1.1x;
 * chunk outside the columns (cols_nm) 1.2x; the nonzeros chunk-major
 * rather than column-major 1.3x (a probe: group-major 1.3x, chunk-major
 * 1.4x). Columns of the group buffers ga and gb (gb unused without TWO),
 * nonzeros from ea and eb, nz each. */
TK_INLINE void nm_tile(const tk_sparse_view *j, int64_t ea, int64_t eb,
                       int64_t nz, const int TWO, int64_t m0, const int TM,
                       const int LIN, float *ga, float *gb, int first) {
  tk_vec acc[2][8];
  for (int t = 0; t < TM; ++t) {
    acc[0][t] = first ? (tk_vec){0} : tk_load(ga + t * TK_VW);
    if (TWO)
      acc[1][t] = first ? (tk_vec){0} : tk_load(gb + t * TK_VW);
  }
  const float *at = j->at + m0;
  const int32_t *ka = j->kidx + ea, *kb = j->kidx + (TWO ? eb : ea);
  const float *va = j->val + ea, *vb = j->val + (TWO ? eb : ea);
  /* LIN (a compile-time constant): row k at k * kstep, one dependent
   * load fewer per nonzero. (The general tiles, whose trip counts vary
   * per column, gained nothing from it: 0.96-1.09x, R = 1.) */
  const int64_t ks = j->kstep;
  for (int64_t q = 0; q < nz; ++q) {
    const float *xa = at + (LIN ? ka[q] * ks : j->koff[ka[q]]);
    const tk_vec sa = tk_splat(va[q]);
    for (int t = 0; t < TM; ++t)
      acc[0][t] += sa * tk_load(xa + t * TK_VW);
    if (TWO) {
      const float *xb = at + (LIN ? kb[q] * ks : j->koff[kb[q]]);
      const tk_vec sb = tk_splat(vb[q]);
      for (int t = 0; t < TM; ++t)
        acc[1][t] += sb * tk_load(xb + t * TK_VW);
    }
  }
  for (int t = 0; t < TM; ++t) {
    tk_store(ga + t * TK_VW, acc[0][t]);
    if (TWO)
      tk_store(gb + t * TK_VW, acc[1][t]);
  }
}

/* Row vectors of an N:M tile: 8 x 2 accumulators fill half of AVX-512's
 * 32 registers; AVX2's 16 take 6 x 2. */
#define NM_TMAX (TK_VW == 16 ? 8 : 6)

/* Column groups an N:M pass takes (768 columns: their sums, 384 KiB, stay
 * in L2 between chunks). 8 to 192 groups ran the same within this
 * machine's noise on 128 x 3072 x 768. */
#ifndef NM_GROUPS
#define NM_GROUPS 48
#endif
/* Rows of a column in the N:M buffer. */
#define NM_ROWS (NM_TMAX * TK_VW)

#define NM_CHUNKS(T, LIN)                                                      \
  for (int64_t ch = 0; ch < nch; ++ch) {                                       \
    const int64_t k0 = ch * kc, kn = K - k0 < kc ? K - k0 : kc;                \
    const int64_t base = k0 / j->nm_m * j->nm_n * j->N;                        \
    const int64_t nz = kn / j->nm_m * j->nm_n;                                 \
    for (int64_t c = c_lo; c < n_hi; c += 2) {                                 \
      float *cb = buf + (c - c_lo) * NM_ROWS;                                  \
      if (c + 1 < n_hi)                                                        \
        nm_tile(j, base + c * nz, base + (c + 1) * nz, nz, 1, m0,              \
                T <= NM_TMAX ? T : 1, LIN, cb, cb + NM_ROWS, ch == 0);         \
      else                                                                     \
        nm_tile(j, base + c * nz, 0, nz, 0, m0, T <= NM_TMAX ? T : 1, LIN,     \
                cb, cb, ch == 0);                                              \
    }                                                                          \
  }

#define NM_TILE(T)                                                             \
  case T:                                                                      \
    if (T <= NM_TMAX) {                                                        \
      if (j->kstep)                                                            \
        NM_CHUNKS(T, 1)                                                        \
      else                                                                     \
        NM_CHUNKS(T, 0)                                                        \
    }                                                                          \
    break;

/* Rows [m_lo, m_hi) of column groups [g_lo, g_hi) for N:M weights: each
 * chunk of k (kc a multiple of m) for all the columns while its rows of
 * a tile stay in L1, the sums of every column in a buffer between chunks
 * (in L2: NM_ROWS floats a column). Columns first and chunks inside, as
 * cols_r1 goes, read every row of the tile from L2 once per column pair
 * and ran 1.3x slower (128 x 768 x 768 at 2:4). */
static void cols_nm(const tk_sparse_view *j, int64_t g_lo, int64_t g_hi,
                    int64_t m_lo, int64_t m_hi) {
  const int64_t K = j->K, kc = j->kc, nch = (K + kc - 1) / kc;
  const int64_t c_lo = g_lo * GROUP;
  const int64_t n_hi = j->N < g_hi * GROUP ? j->N : g_hi * GROUP;
  const size_t bytes = (size_t)((g_hi - g_lo) * GROUP * NM_ROWS) * sizeof(float);
  float *buf = (float *)_mlir_memref_to_llvm_aligned_alloc(64, bytes);
  if (!buf)
    abort(); /* out of memory: nothing sane to return */
  if (j->N - (g_hi - 1) * GROUP < GROUP)
    memset(buf + (g_hi - 1 - g_lo) * GROUP * NM_ROWS, 0,
           (size_t)(GROUP * NM_ROWS) * sizeof(float));
  for (int64_t m0 = m_lo; m0 < m_hi; m0 += NM_ROWS) {
    const int64_t left = (m_hi - m0) / TK_VW;
    const int tm = left < NM_TMAX ? (int)left : NM_TMAX;
    switch (tm) {
      NM_TILE(1)
      NM_TILE(2)
      NM_TILE(3)
      NM_TILE(4)
      NM_TILE(5)
      NM_TILE(6)
      NM_TILE(7)
      NM_TILE(8)
    }
    /* TK_VW rows of every group at a time: each output row is written
     * along its length, as the prefetchers follow; a group's rows at a
     * time touch one line per row, each a miss (the rows of a wide
     * output are a page apart): the stores took 10% of a 2:4 BERT's time
     * (perf), now 4%, and the model ran 1.06x faster. The general tiles'
     * two groups gained nothing from it. */
    const int64_t rows = m_hi - m0 < tm * TK_VW ? m_hi - m0 : tm * TK_VW;
    for (int64_t r0 = 0; r0 < rows; r0 += TK_VW)
      for (int64_t g = g_lo; g < g_hi; ++g)
        store_group(j, m0 + r0, rows - r0 < TK_VW ? rows - r0 : TK_VW,
                    g * GROUP, buf + (g - g_lo) * GROUP * NM_ROWS + r0,
                    NM_ROWS);
  }
  _mlir_memref_to_llvm_free(buf);
}
#undef NM_TILE
#undef NM_CHUNKS
#undef NM_ROWS

typedef void (*cols_fn)(const tk_sparse_view *, int64_t, int64_t, int64_t,
                        int64_t);

int64_t tk_sparse_groups(int64_t N) { return (N + GROUP - 1) / GROUP; }

int64_t tk_sparse_chunk_k(int64_t K, int64_t R, int64_t nblocks,
                          int64_t nnz) {
  /* Each chunk costs every block column a pass: its sums loaded and
   * stored, a loop entered and left (a branch mispredicted). About
   * TK_SPARSE_CHUNK_NNZ blocks per column and chunk pay for it; fewer k's
   * than that would keep more of the chunk's rows in L1 but lose more to
   * the passes (bench/sparse_gemm.c, 784 x 128 x 576, R = 1: 32 k's per
   * chunk fastest at 50% density, 64 at 20%, 128 at 10%; one chunk, the
   * rows in L2, 1.1-1.6x slower). Blocks of 4 and more columns load each
   * row vector for 4 FMAs: from L2 they run as fast, and the passes would
   * cost them 1.1-1.2x. */
  if (R >= 4)
    return K;
  const int64_t kc =
      nnz > 0 ? (TK_SPARSE_CHUNK_NNZ * K * nblocks + nnz - 1) / nnz : K;
  /* Past about 160 k's, a tile's rows of a chunk (8 vectors each) overflow
   * L1 anyway: at 5% density chunks ran 1.15x slower than none. */
  return kc < 16 ? 16 : kc > 160 || kc > K ? K : kc;
}

int tk_sparse_k_ascending(int64_t nblocks, const int32_t *ptr,
                          const int32_t *kidx) {
  int bad = 0;
  for (int64_t b = 0; b < nblocks; ++b)
    for (int64_t e = (int64_t)ptr[b] + 1; e < ptr[b + 1]; ++e)
      bad |= kidx[e] <= kidx[e - 1];
  return !bad;
}

void tk_sparse_run(const tk_sparse_view *v, int64_t g0, int64_t g1) {
  const int64_t R = v->R;
  cols_fn fn = v->nm_n   ? cols_nm
               : R == 1  ? cols_r1
               : R == 2  ? cols_r2
               : R == 4  ? cols_r4
               : R == 8  ? cols_r8
               : R == 16 ? cols_r16
                         : NULL;
  if (!fn)
    abort(); /* the compiler packs only these block sizes */
  const int64_t K = v->K;
  /* About 256 KiB of the activations per chunk of rows, whole tiles of 12
   * vectors (the largest), at least one: each column block reads it. */
  const int64_t tile = 12 * TK_VW;
  int64_t chunk = (65536 / K) / tile * tile;
  if (chunk < tile)
    chunk = tile;
  /* As many chunks as that makes, of even sizes in whole vectors: 13
   * vectors went as 12 + 1, the last a pass over every nonzero for one
   * vector of rows (196 x 1024 x 256 at 20%, Zen 4: 0.48 -> 0.44 ms; 196 x
   * 256 x 1024: 0.53 -> 0.48). */
  const int64_t nchunks = (v->band_m + chunk - 1) / chunk;
  if (nchunks > 0) {
    const int64_t vecs = (v->band_m + TK_VW - 1) / TK_VW;
    chunk = (vecs + nchunks - 1) / nchunks * TK_VW;
  }
  const int64_t step = v->nm_n ? NM_GROUPS : v->kc < K ? CBG : 1;
  for (int64_t m_lo = 0; m_lo < v->band_m; m_lo += chunk) {
    const int64_t m_hi = m_lo + chunk < v->band_m ? m_lo + chunk : v->band_m;
    /* Unchunked, each group alone: its tiles' rows stay in L1 across its
     * columns (two groups at a time ran 1.05-1.15x slower). */
    for (int64_t ga = g0; ga < g1; ga += step)
      fn(v, ga, ga + step < g1 ? ga + step : g1, m_lo, m_hi);
  }
}

void tk_sparse_balance(int64_t N, int64_t R, const int32_t *ptr,
                       int64_t group, int64_t ntasks, int64_t *bounds) {
  const int64_t ngroups = (N + group - 1) / group;
  const int64_t nblocks = (N + R - 1) / R;
  /* A group's work: its nonzero blocks times R, plus its stores. */
  int64_t total = 0;
  for (int64_t g = 0; g < ngroups; ++g) {
    const int64_t b1 = (g + 1) * group / R < nblocks ? (g + 1) * group / R
                                                      : nblocks;
    total += ((int64_t)ptr[b1] - ptr[g * group / R]) * R + group;
  }
  bounds[0] = 0;
  int64_t t = 1, work = 0;
  for (int64_t g = 0; g < ngroups && t < ntasks; ++g) {
    const int64_t b1 = (g + 1) * group / R < nblocks ? (g + 1) * group / R
                                                      : nblocks;
    work += ((int64_t)ptr[b1] - ptr[g * group / R]) * R + group;
    if (work * ntasks >= t * total)
      bounds[t++] = g + 1;
  }
  while (t <= ntasks)
    bounds[t++] = ngroups;
}

void tk_sparse_transpose(int64_t rows, int64_t cols, const float *src,
                         int64_t s_r, int64_t s_c, float *dst, int64_t d_r) {
  if (s_r == 1) {
    /* Already column-major (a channel-major input): row copies. */
    for (int64_t c = 0; c < cols; ++c)
      memcpy(dst + c * d_r, src + c * s_c, (size_t)rows * sizeof(float));
    return;
  }
  if (s_c != 1) {
    for (int64_t c = 0; c < cols; ++c)
      for (int64_t r = 0; r < rows; ++r)
        dst[c * d_r + r] = src[r * s_r + c * s_c];
    return;
  }
  /* Along dst's rows: each block's stores continue the TK_VW sequential
   * streams of the block before. Edge blocks load and store their part
   * with masks (transpose_block_part), the rest of the block untouched. */
  for (int64_t c0 = 0; c0 < cols; c0 += TK_VW)
    for (int64_t r0 = 0; r0 < rows; r0 += TK_VW) {
      const int64_t nc = cols - c0 < TK_VW ? cols - c0 : TK_VW;
      const int64_t nr = rows - r0 < TK_VW ? rows - r0 : TK_VW;
      if (nc == TK_VW && nr == TK_VW)
        transpose_block(src + r0 * s_r + c0, s_r, dst + c0 * d_r + r0, d_r);
      else
        transpose_block_part(src + r0 * s_r + c0, s_r, 0, (int)nr, (int)nc,
                             dst + c0 * d_r + r0, d_r, (int)nr);
    }
}

int tk_sparse_too_few_bands(int64_t nbands) {
  return nbands < 2 * (int64_t)tk_num_threads();
}

typedef struct {
  const tk_sparse_bands *bands;
  int64_t kc, K; /* k's per chunk, in all (at least 1) */
  int64_t nm_n, nm_m; /* the view's */
  int64_t ntasks;
  tk_sparse_view v;      /* one band at a time: the band's view */
  const int64_t *bounds; /* and the tasks' column groups */
} bands_job_t;

static float *band_alloc(const tk_sparse_bands *bands) {
  float *at = (float *)_mlir_memref_to_llvm_aligned_alloc(
      64, bands->band_floats * sizeof(float));
  if (!at)
    abort(); /* out of memory: nothing sane to return */
  return at;
}

/* A task of a run of whole bands. */
static void run_bands(void *arg, int64_t t) {
  const bands_job_t *j = (const bands_job_t *)arg;
  const tk_sparse_bands *bands = j->bands;
  float *at = band_alloc(bands);
  for (int64_t b = t * bands->nbands / j->ntasks;
       b < (t + 1) * bands->nbands / j->ntasks; ++b) {
    tk_sparse_view v;
    bands->view(bands->ctx, b, at, &v);
    v.kc = j->kc, v.K = j->K, v.nm_n = j->nm_n, v.nm_m = j->nm_m;
    tk_sparse_run(&v, 0, tk_sparse_groups(v.N));
  }
  _mlir_memref_to_llvm_free(at);
}

/* A task of one band's column groups. */
static void run_columns(void *arg, int64_t t) {
  const bands_job_t *j = (const bands_job_t *)arg;
  tk_sparse_run(&j->v, j->bounds[t], j->bounds[t + 1]);
}

void tk_sparse_run_bands(const tk_sparse_bands *bands, int64_t N, int64_t R,
                         const int32_t *ptr, const int32_t *kidx,
                         int32_t flags) {
  const int64_t threads = tk_num_threads();
  bands_job_t j = {bands, 0, 0, 0, 0, 0, {0}, NULL};
  /* Chunks need each block column's k ascending (the compiler packs them
   * so and says so with TESSEL_KERNEL_K_ASCENDING; the kernels' contract
   * allows any order, checked here otherwise: a pass over every block
   * per call, up to a tenth of the products' time at 128 rows). */
  const int64_t nblocks = (N + R - 1) / R, K = bands->K > 0 ? bands->K : 1;
  j.K = K;
  j.kc = tk_sparse_chunk_k(K, R, nblocks, ptr[nblocks]);
  if (j.kc < K && !(flags & TESSEL_KERNEL_K_ASCENDING) &&
      !tk_sparse_k_ascending(nblocks, ptr, kidx))
    j.kc = K;
  /* N:M (nm_tile): chunks of TESSEL_KERNEL_NM_CHUNK_K k's, in which
   * order the compiler packs them. The arrays are not in the general
   * kernel's order, so a promise that the counts do not bear out
   * (block_ptr[b] = b * K / m * n, which keeps every read within the
   * arrays) is the caller's bug. */
  const int64_t nm_n = (flags >> TESSEL_KERNEL_NM_SHIFT) & 0xff;
  const int64_t nm_m = (flags >> (TESSEL_KERNEL_NM_SHIFT + 8)) & 0x7f;
  if (nm_n || nm_m) {
    if (R != 1 || nm_n <= 0 || nm_m <= nm_n ||
        TESSEL_KERNEL_NM_CHUNK_K % nm_m != 0 || K % nm_m != 0)
      abort(); /* the compiler says N:M only of such weights */
    for (int64_t b = 0; b <= nblocks; ++b)
      if (ptr[b] != b * (K / nm_m * nm_n))
        abort();
    j.kc = TESSEL_KERNEL_NM_CHUNK_K < K ? TESSEL_KERNEL_NM_CHUNK_K : K;
    j.nm_n = nm_n, j.nm_m = nm_m;
  }
  if (!tk_sparse_too_few_bands(bands->nbands)) {
    j.ntasks = bands->nbands < 4 * threads ? bands->nbands : 4 * threads;
    tk_parallel_for(j.ntasks, run_bands, &j);
    return;
  }
  const int64_t groups = tk_sparse_groups(N);
  j.ntasks = groups < 4 * threads ? groups : 4 * threads;
  int64_t *bounds = (int64_t *)malloc((size_t)(j.ntasks + 1) * sizeof(int64_t));
  if (!bounds)
    abort(); /* out of memory: nothing sane to return */
  tk_sparse_balance(N, R, ptr, GROUP, j.ntasks, bounds);
  j.bounds = bounds;
  float *at = band_alloc(bands);
  for (int64_t b = 0; b < bands->nbands; ++b) {
    bands->view(bands->ctx, b, at, &j.v);
    j.v.kc = j.kc, j.v.K = K, j.v.nm_n = j.nm_n, j.v.nm_m = j.nm_m;
    tk_parallel_for(j.ntasks, run_columns, &j);
  }
  _mlir_memref_to_llvm_free(at);
  free(bounds);
}
