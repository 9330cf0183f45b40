/* AttentionF32.c - fused scaled-dot-product attention (online softmax).
 *
 *   out[b,i,:] = sum_j softmax_j(scale * q[b,i,:].k[b,j,:] + mask[b,i,j])
 *                * v[b,j,:]
 *
 * FlashAttention's schedule on a CPU core: a task owns AR query rows of one
 * batch entry and walks the keys in blocks of NB. Per block it computes the
 * AR x NB scores in registers (broadcast q[i,d] against a vector of NB
 * transposed keys), folds them into a running row maximum m and sum l
 * (rescaling the partial output by exp(m_old - m_new) when the maximum
 * grows), and accumulates p * v into an AR x Dv partial output that stays
 * in L1. The B x M x N score matrix is never written to memory; the output
 * is divided by l once at the end.
 *
 * Keys are transposed once per batch entry (kt[d][n], zero beyond N) so the
 * score tile is a small GEMM with contiguous vector loads, and values are
 * copied to rows of whole vectors; both packings cost O(N * D) against the
 * O(M * N * D) of the products. */
#include "ThreadPool.h"
#include "TransposeBlock.h"
#include "Vector.h"

#include <math.h>
#include <stdlib.h>

#define NB_V 4                 /* key block, in vectors */
#define NB (NB_V * TK_VW)      /* keys per block: 64 with AVX-512 */
#if TK_VW == 16
#define AR 6 /* query rows per task: 6 x 4 zmm score accumulators */
#else
#define AR 3
#endif

typedef struct {
  int64_t M, N, D, Dv, Np, Dvp;
  const float *q;
  int64_t q_sb, q_sm, q_sd;
  const float *k;
  int64_t k_sb, k_sn, k_sd;
  const float *v;
  int64_t v_sb, v_sn, v_sd;
  const float *mask;
  int64_t m_sb, m_sm, m_sn; /* 0 along broadcast dims */
  float scale;
  float *out;
  int64_t o_sb, o_sm, o_sd;
  float *kt; /* [B][D][Np] */
  float *vp; /* [B][N][Dvp] */
  int64_t row_tiles;
} att_job_t;

static void pack_batch(void *arg, int64_t b) {
  const att_job_t *j = (const att_job_t *)arg;
  float *kt = j->kt + b * j->D * j->Np;
  const float *k = j->k + b * j->k_sb;
  if (j->k_sd == 1) {
    /* Keys along rows: TK_VW x TK_VW blocks transposed in registers, the
     * keys past N written as zeros with them. One scattered store per
     * element (kt's rows are Np floats apart) took 0.7 ms of ViT-B/16's
     * 1.7 ms attention layer. */
    for (int64_t n0 = 0; n0 < j->Np; n0 += TK_VW) {
      const int64_t left = j->N - n0;
      const int cols = left <= 0 ? 0 : left < TK_VW ? (int)left : TK_VW;
      for (int64_t d0 = 0; d0 < j->D; d0 += TK_VW) {
        const int rows = j->D - d0 < TK_VW ? (int)(j->D - d0) : TK_VW;
        transpose_block_part(k + n0 * j->k_sn + d0, j->k_sn, 0, cols, rows,
                             kt + d0 * j->Np + n0, j->Np, TK_VW);
      }
    }
  } else {
    for (int64_t d = 0; d < j->D; ++d) {
      for (int64_t n = 0; n < j->N; ++n)
        kt[d * j->Np + n] = k[n * j->k_sn + d * j->k_sd];
      for (int64_t n = j->N; n < j->Np; ++n)
        kt[d * j->Np + n] = 0.0f;
    }
  }
  if (!j->vp)
    return; /* the values are read where they are */
  float *vp = j->vp + b * j->N * j->Dvp;
  const float *v = j->v + b * j->v_sb;
  for (int64_t n = 0; n < j->N; ++n) {
    for (int64_t e = 0; e < j->Dv; ++e)
      vp[n * j->Dvp + e] = v[n * j->v_sn + e * j->v_sd];
    for (int64_t e = j->Dv; e < j->Dvp; ++e)
      vp[n * j->Dvp + e] = 0.0f;
  }
}

/* s[i][0 : nv vectors) = scale * q_i . kt[:, block] for AR rows (rows
 * past the last valid one repeat it, so the register tile keeps a fixed
 * shape); nv = the block's key vectors, fewer in the last block (ViT's 197
 * keys: 3 blocks of 4 and one of 1, not 4 blocks of 4). */
TK_INLINE void score_tile(const int nv, const float *const qrow[AR],
                          int64_t q_sd, const float *ktb, int64_t Np, int64_t D,
                          float scale, float s[AR][NB]) {
  tk_vec acc[AR][NB_V];
  TK_UNROLL for (int i = 0; i < AR; ++i) TK_UNROLL for (int c = 0; c < nv; ++c)
      acc[i][c] = tk_splat(0.0f);
  for (int64_t d = 0; d < D; ++d) {
    tk_vec kv[NB_V];
    TK_UNROLL for (int c = 0; c < nv; ++c) kv[c] =
        tk_load(ktb + d * Np + c * TK_VW);
    TK_UNROLL for (int i = 0; i < AR; ++i) {
      const tk_vec qb = tk_splat(qrow[i][d * q_sd]);
      TK_UNROLL for (int c = 0; c < nv; ++c) acc[i][c] += qb * kv[c];
    }
  }
  const tk_vec sc = tk_splat(scale);
  TK_UNROLL for (int i = 0; i < AR; ++i) TK_UNROLL for (int c = 0; c < nv; ++c)
      tk_store(&s[i][c * TK_VW], acc[i][c] * sc);
}

/* o[i][0 : nv vectors) = alpha[i] * o[i] + sum_{j < nk} p[i][j] * v_j
 * (v_j at vb + j * vs): the partial output rescaled to the new running
 * maximum on its way into registers (a pass of its own stored it in halves
 * that the next full-width load could not forward from). */
TK_INLINE void pv_tile(const int nv, float s[AR][NB], const float *vb,
                       int64_t vs, int64_t nk, const float alpha[AR], float *o,
                       int64_t ostride) {
  tk_vec acc[AR][NB_V];
  TK_UNROLL for (int i = 0; i < AR; ++i) {
    const tk_vec a = tk_splat(alpha[i]);
    TK_UNROLL for (int c = 0; c < nv; ++c) acc[i][c] =
        tk_load(o + i * ostride + c * TK_VW) * a;
  }
  for (int64_t jj = 0; jj < nk; ++jj) {
    tk_vec vv[NB_V];
    TK_UNROLL for (int c = 0; c < nv; ++c) vv[c] =
        tk_load(vb + jj * vs + c * TK_VW);
    TK_UNROLL for (int i = 0; i < AR; ++i) {
      const tk_vec pb = tk_splat(s[i][jj]);
      TK_UNROLL for (int c = 0; c < nv; ++c) acc[i][c] += pb * vv[c];
    }
  }
  TK_UNROLL for (int i = 0; i < AR; ++i) TK_UNROLL for (int c = 0; c < nv; ++c)
      tk_store(o + i * ostride + c * TK_VW, acc[i][c]);
}

/* Row i's scores of a block (nv vectors, nk keys valid) become the
 * block's exponentials, folded into the running maximum m and sum l;
 * *alpha is what the partial output is to be multiplied by. */
TK_INLINE void softmax_row(const int nv, float *si, int64_t nk,
                           const float *mrow, int64_t m_sn, float *m, float *l,
                           float *alpha) {
  *alpha = 1.0f;
  if (mrow)
    for (int64_t jj = 0; jj < nk; ++jj)
      si[jj] += mrow[jj * m_sn];
  for (int64_t jj = nk; jj < nv * TK_VW; ++jj)
    si[jj] = -INFINITY;
  tk_vec mv = tk_load(si);
  TK_UNROLL for (int c = 1; c < nv; ++c) mv =
      tk_max(mv, tk_load(si + c * TK_VW));
  const float mx = tk_reduce_max(mv);
  const float mnew = mx > *m ? mx : *m;
  if (mnew == -INFINITY) { /* every score so far masked out */
    for (int64_t jj = 0; jj < nv * TK_VW; ++jj)
      si[jj] = 0.0f;
    return;
  }
  const tk_vec mb = tk_splat(mnew);
  tk_vec sum = tk_splat(0.0f);
  TK_UNROLL for (int c = 0; c < nv; ++c) {
    const tk_vec p = tk_exp(tk_load(si + c * TK_VW) - mb);
    tk_store(si + c * TK_VW, p);
    sum += p;
  }
  const float bsum = tk_reduce_add(sum);
  if (mnew != *m) {
    *alpha = *m == -INFINITY ? 0.0f : expf(*m - mnew);
    *l *= *alpha;
    *m = mnew;
  }
  *l += bsum;
}

/* One block of nk keys from j0 (nv = its key vectors): scores, softmax,
 * and the products with the values into o. */
TK_INLINE void key_block(const int nv, const att_job_t *j, int64_t b,
                         int64_t i0, int64_t rows, const float *const qrow[AR],
                         const float *ktb, const float *vb, int64_t vs,
                         int64_t j0, int64_t nk, float s[AR][NB], float *m,
                         float *l, float *o) {
  const int64_t Dvp = j->Dvp;
  score_tile(nv, qrow, j->q_sd, ktb + j0, j->Np, j->D, j->scale, s);
  float alpha[AR];
  for (int i = 0; i < AR; ++i) {
    const int64_t row = i0 + (i < rows ? i : rows - 1);
    const float *mrow =
        j->mask ? j->mask + b * j->m_sb + row * j->m_sm + j0 * j->m_sn : 0;
    softmax_row(nv, s[i], nk, mrow, j->m_sn, &m[i], &l[i], &alpha[i]);
  }
  const float *vj = vb + j0 * vs;
  int64_t e0 = 0;
  for (; e0 + NB <= Dvp; e0 += NB)
    pv_tile(NB_V, s, vj + e0, vs, nk, alpha, o + e0, Dvp);
  switch ((Dvp - e0) / TK_VW) {
  case 3:
    pv_tile(3, s, vj + e0, vs, nk, alpha, o + e0, Dvp);
    break;
  case 2:
    pv_tile(2, s, vj + e0, vs, nk, alpha, o + e0, Dvp);
    break;
  case 1:
    pv_tile(1, s, vj + e0, vs, nk, alpha, o + e0, Dvp);
    break;
  default:
    break;
  }
}

static void run_tile(void *arg, int64_t task) {
  const att_job_t *j = (const att_job_t *)arg;
  const int64_t b = task / j->row_tiles;
  const int64_t i0 = (task % j->row_tiles) * AR;
  const int64_t rows = j->M - i0 < AR ? j->M - i0 : AR;
  const float *qrow[AR];
  for (int i = 0; i < AR; ++i)
    qrow[i] = j->q + b * j->q_sb + (i0 + (i < rows ? i : rows - 1)) * j->q_sm;

  const int64_t Dvp = j->Dvp;
  float o_stack[AR * 256];
  float *o = AR * Dvp <= AR * 256 ? o_stack
                                  : (float *)malloc(sizeof(float) * AR * Dvp);
  if (!o)
    abort(); /* out of memory: no way to report it from a kernel */
  for (int64_t x = 0; x < AR * Dvp; ++x)
    o[x] = 0.0f;
  float m[AR], l[AR];
  for (int i = 0; i < AR; ++i) {
    m[i] = -INFINITY;
    l[i] = 0.0f;
  }
  float s[AR][NB] __attribute__((aligned(64)));
  const float *ktb = j->kt + b * j->D * j->Np;
  /* Values packed to rows of Dvp, or read in place. */
  const float *vb = j->vp ? j->vp + b * j->N * Dvp : j->v + b * j->v_sb;
  const int64_t vs = j->vp ? Dvp : j->v_sn;

  for (int64_t j0 = 0; j0 < j->N; j0 += NB) {
    const int64_t nk = j->N - j0 < NB ? j->N - j0 : NB;
    switch ((nk + TK_VW - 1) / TK_VW) {
    case 1:
      key_block(1, j, b, i0, rows, qrow, ktb, vb, vs, j0, nk, s, m, l, o);
      break;
    case 2:
      key_block(2, j, b, i0, rows, qrow, ktb, vb, vs, j0, nk, s, m, l, o);
      break;
    case 3:
      key_block(3, j, b, i0, rows, qrow, ktb, vb, vs, j0, nk, s, m, l, o);
      break;
    default:
      key_block(NB_V, j, b, i0, rows, qrow, ktb, vb, vs, j0, nk, s, m, l, o);
      break;
    }
  }

  for (int64_t i = 0; i < rows; ++i) {
    /* l is 0 only when the whole row was masked: 0/0 = NaN, as softmax. */
    const float inv = 1.0f / l[i];
    float *dst = j->out + b * j->o_sb + (i0 + i) * j->o_sm;
    const float *oi = o + i * Dvp;
    if (j->o_sd == 1 && l[i] != 0.0f) {
      /* Whole vectors, as pv_tile stored them (half-width loads of its
       * stores do not forward). */
      const tk_vec vinv = tk_splat(inv);
      int64_t e = 0;
      for (; e + TK_VW <= j->Dv; e += TK_VW)
        tk_store(dst + e, tk_load(oi + e) * vinv);
      if (e < j->Dv)
        tk_store_n(dst + e, tk_load(oi + e) * vinv, (int)(j->Dv - e));
      continue;
    }
    for (int64_t e = 0; e < j->Dv; ++e)
      dst[e * j->o_sd] = l[i] == 0.0f ? NAN : oi[e] * inv;
  }
  if (o != o_stack)
    free(o);
}

void tessel_kernel_attention_f32(
    int64_t B, int64_t M, int64_t N, int64_t D, int64_t Dv, const float *q,
    int64_t q_sb, int64_t q_sm, int64_t q_sd, const float *k, int64_t k_sb,
    int64_t k_sn, int64_t k_sd, const float *v, int64_t v_sb, int64_t v_sn,
    int64_t v_sd, const float *mask, int64_t mask_b, int64_t mask_m,
    int64_t mask_n, int64_t mask_sb, int64_t mask_sm, int64_t mask_sn,
    float scale, float *out, int64_t out_sb, int64_t out_sm,
    int64_t out_sd) {
  if (B <= 0 || M <= 0 || Dv <= 0)
    return;
  att_job_t job = {
      .M = M, .N = N, .D = D, .Dv = Dv,
      .Np = (N + NB - 1) / NB * NB,
      .Dvp = (Dv + TK_VW - 1) / TK_VW * TK_VW,
      .q = q, .q_sb = q_sb, .q_sm = q_sm, .q_sd = q_sd,
      .k = k, .k_sb = k_sb, .k_sn = k_sn, .k_sd = k_sd,
      .v = v, .v_sb = v_sb, .v_sn = v_sn, .v_sd = v_sd,
      .mask = mask,
      .m_sb = mask_b == 1 ? 0 : mask_sb,
      .m_sm = mask_m == 1 ? 0 : mask_sm,
      .m_sn = mask_n == 1 ? 0 : mask_sn,
      .scale = scale,
      .out = out, .o_sb = out_sb, .o_sm = out_sm, .o_sd = out_sd,
      .row_tiles = (M + AR - 1) / AR,
  };
  /* One allocation for both packings; 64-byte aligned rows. */
  const size_t kt_floats = (size_t)(B * D * job.Np);
  /* Values whose rows are whole vectors are read in place. */
  const int v_in_place = v_sd == 1 && Dv % TK_VW == 0;
  const size_t vp_floats = v_in_place ? 0 : (size_t)(B * N * job.Dvp);
  /* From the artifacts' caching allocator: ViT-B/16's 0.8 MB, from
   * malloc, was mapped afresh and page-faulted in on every call (a third of
   * the layer's time). */
  float *scratch = (float *)_mlir_memref_to_llvm_aligned_alloc(
      64, (kt_floats + vp_floats) * sizeof(float) + 64);
  if (!scratch)
    abort();
  job.kt = scratch;
  job.vp = v_in_place ? NULL : scratch + kt_floats;
  const int threads = tk_threads_for(B * M * N * (D + Dv));
  tk_parallel_for_on(threads, B, pack_batch, &job);
  tk_parallel_for_on(threads, B * job.row_tiles, run_tile, &job);
  _mlir_memref_to_llvm_free(scratch);
}
