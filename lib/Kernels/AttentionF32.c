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
  for (int64_t n = 0; n < j->N; ++n)
    for (int64_t d = 0; d < j->D; ++d)
      kt[d * j->Np + n] = k[n * j->k_sn + d * j->k_sd];
  for (int64_t d = 0; d < j->D; ++d)
    for (int64_t n = j->N; n < j->Np; ++n)
      kt[d * j->Np + n] = 0.0f;
  float *vp = j->vp + b * j->N * j->Dvp;
  const float *v = j->v + b * j->v_sb;
  for (int64_t n = 0; n < j->N; ++n) {
    for (int64_t e = 0; e < j->Dv; ++e)
      vp[n * j->Dvp + e] = v[n * j->v_sn + e * j->v_sd];
    for (int64_t e = j->Dv; e < j->Dvp; ++e)
      vp[n * j->Dvp + e] = 0.0f;
  }
}

/* s[i][:] = q_i . kt[:, block] for AR rows (rows past the last valid one
 * repeat it, so the register tile keeps a fixed shape). */
TK_INLINE void score_tile(const float *const qrow[AR], int64_t q_sd,
                          const float *ktb, int64_t Np, int64_t D,
                          float s[AR][NB]) {
  tk_vec acc[AR][NB_V];
  for (int i = 0; i < AR; ++i)
    for (int c = 0; c < NB_V; ++c)
      acc[i][c] = tk_splat(0.0f);
  for (int64_t d = 0; d < D; ++d) {
    tk_vec kv[NB_V];
    for (int c = 0; c < NB_V; ++c)
      kv[c] = tk_load(ktb + d * Np + c * TK_VW);
    for (int i = 0; i < AR; ++i) {
      const tk_vec qb = tk_splat(qrow[i][d * q_sd]);
      for (int c = 0; c < NB_V; ++c)
        acc[i][c] += qb * kv[c];
    }
  }
  for (int i = 0; i < AR; ++i)
    for (int c = 0; c < NB_V; ++c)
      tk_store(&s[i][c * TK_VW], acc[i][c]);
}

/* o[i][0 : nv vectors) += sum_{j < nk} p[i][j] * vrow_j. */
TK_INLINE void pv_tile(const int nv, float s[AR][NB], const float *vb,
                       int64_t Dvp, int64_t nk, float *o, int64_t ostride) {
  tk_vec acc[AR][NB_V];
  for (int i = 0; i < AR; ++i)
    for (int c = 0; c < nv; ++c)
      acc[i][c] = tk_load(o + i * ostride + c * TK_VW);
  for (int64_t jj = 0; jj < nk; ++jj) {
    tk_vec vv[NB_V];
    for (int c = 0; c < nv; ++c)
      vv[c] = tk_load(vb + jj * Dvp + c * TK_VW);
    for (int i = 0; i < AR; ++i) {
      const tk_vec pb = tk_splat(s[i][jj]);
      for (int c = 0; c < nv; ++c)
        acc[i][c] += pb * vv[c];
    }
  }
  for (int i = 0; i < AR; ++i)
    for (int c = 0; c < nv; ++c)
      tk_store(o + i * ostride + c * TK_VW, acc[i][c]);
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
  const float *vpb = j->vp + b * j->N * Dvp;

  for (int64_t j0 = 0; j0 < j->N; j0 += NB) {
    const int64_t nk = j->N - j0 < NB ? j->N - j0 : NB;
    score_tile(qrow, j->q_sd, ktb + j0, j->Np, j->D, s);
    for (int i = 0; i < AR; ++i) {
      const int64_t row = i0 + (i < rows ? i : rows - 1);
      const float *mrow =
          j->mask ? j->mask + b * j->m_sb + row * j->m_sm + j0 * j->m_sn : 0;
      for (int64_t jj = 0; jj < nk; ++jj) {
        float x = s[i][jj] * j->scale;
        if (mrow)
          x += mrow[jj * j->m_sn];
        s[i][jj] = x;
      }
      for (int64_t jj = nk; jj < NB; ++jj)
        s[i][jj] = -INFINITY;
      /* running maximum and the block's exponentials */
      tk_vec mv = tk_load(&s[i][0]);
      for (int c = 1; c < NB_V; ++c)
        mv = tk_max(mv, tk_load(&s[i][c * TK_VW]));
      float mx = -INFINITY;
      for (int t = 0; t < TK_VW; ++t)
        mx = mv[t] > mx ? mv[t] : mx;
      const float mnew = mx > m[i] ? mx : m[i];
      if (mnew == -INFINITY) { /* every score so far masked out */
        for (int64_t jj = 0; jj < NB; ++jj)
          s[i][jj] = 0.0f;
        continue;
      }
      const tk_vec mb = tk_splat(mnew);
      tk_vec sum = tk_splat(0.0f);
      for (int c = 0; c < NB_V; ++c) {
        tk_vec p = tk_exp(tk_load(&s[i][c * TK_VW]) - mb);
        tk_store(&s[i][c * TK_VW], p);
        sum += p;
      }
      float bsum = 0.0f;
      for (int t = 0; t < TK_VW; ++t)
        bsum += sum[t];
      if (mnew != m[i]) {
        const float alpha = m[i] == -INFINITY ? 0.0f : expf(m[i] - mnew);
        l[i] *= alpha;
        float *orow = o + i * Dvp;
        for (int64_t e = 0; e < Dvp; ++e)
          orow[e] *= alpha;
        m[i] = mnew;
      }
      l[i] += bsum;
    }
    const float *vb = vpb + j0 * Dvp;
    int64_t e0 = 0;
    for (; e0 + NB <= Dvp; e0 += NB)
      pv_tile(NB_V, s, vb + e0, Dvp, nk, o + e0, Dvp);
    switch ((Dvp - e0) / TK_VW) {
    case 3: pv_tile(3, s, vb + e0, Dvp, nk, o + e0, Dvp); break;
    case 2: pv_tile(2, s, vb + e0, Dvp, nk, o + e0, Dvp); break;
    case 1: pv_tile(1, s, vb + e0, Dvp, nk, o + e0, Dvp); break;
    default: break;
    }
  }

  for (int64_t i = 0; i < rows; ++i) {
    /* l is 0 only when the whole row was masked: 0/0 = NaN, as softmax. */
    const float inv = 1.0f / l[i];
    float *dst = j->out + b * j->o_sb + (i0 + i) * j->o_sm;
    for (int64_t e = 0; e < j->Dv; ++e)
      dst[e * j->o_sd] = l[i] == 0.0f ? NAN : o[i * Dvp + e] * inv;
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
  const size_t vp_floats = (size_t)(B * N * job.Dvp);
  float *scratch = (float *)aligned_alloc(
      64, ((kt_floats + vp_floats) * sizeof(float) + 63) / 64 * 64 + 64);
  if (!scratch)
    abort();
  job.kt = scratch;
  job.vp = scratch + kt_floats;
  const int threads = tk_threads_for(B * M * N * (D + Dv));
  tk_parallel_for_on(threads, B, pack_batch, &job);
  tk_parallel_for_on(threads, B * job.row_tiles, run_tile, &job);
  free(scratch);
}
