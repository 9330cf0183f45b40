/* WinogradConvF32.c - 3x3, stride-1 convolution by Winograd's F(2x2, 3x3)
 * or F(4x4, 3x3).
 *
 * Each m x m block of outputs ("tile", m = 2 or 4) comes from an
 * (m+2) x (m+2) patch d of the input:
 *   Y = A^T [ (G g G^T) .* (B^T d B) ] A
 * so per tile and channel pair the 9 m^2 multiplications of the direct
 * convolution become (m+2)^2 (m = 2: 36 -> 16; m = 4: 144 -> 36), and the
 * element-wise products summed over the input channels are (m+2)^2
 * independent GEMMs ("transform positions"):
 *   M[a][t][f] = sum_c V[a][t][c] * U[a][c][f]      (a = 0..(m+2)^2-1)
 * with V = B^T d B (the input transform, here at run time) and U = G g G^T
 * (the filter transform, done by the compiler: `tessel.packed_conv2d
 * {winograd}` carries U packed in NR-column panels per a). The GEMMs run on
 * the implicit-GEMM driver of ConvGemmF32.c (tessel_kernel_matmul_f32,
 * batch 16 or 36, one packed filter per batch entry), so they get its
 * micro-kernel, blocking and threads. The output transform applies the
 * epilogue (accumulate, bias, clamp) as it stores.
 *
 * F(2x2, 3x3) multiplies by 2.25x fewer; its transforms only add and
 * subtract, so rounding stays close to the direct convolution's. F(4x4,
 * 3x3) multiplies by 4x fewer and its transforms per output are fewer too,
 * but its constants (up to 8 and 1/24) amplify rounding (about 2e-6 of
 * the output's scale over 256 channels, against 1e-7) and its 4x4 tiles
 * overhang the 14x14 and 7x7 images of ImageNet CNNs; the compiler picks
 * it for larger images (lib/Dialect/Tessel/Transforms/WinogradFilter.cpp).
 *
 * The two scratch arrays (V: A x TB x C, M: A x TB x F floats for a
 * block of TB tiles, below) come from the library's caching allocator, so
 * after the first call no memory is mapped.
 *
 * On T threads a large image is cut into T bands of tiles, each taken
 * through all three steps by one thread (WINO_MIN_BAND); a small one has
 * each step split among the threads (the GEMMs by transform position). */
#include "ThreadPool.h"
#include "Vector.h"

#include <math.h>
#include <stdlib.h>

/* The tiles are transformed, multiplied and transformed back a block at a
 * time, so that the block's V and M (16 x (C + F) floats a tile) stay in
 * the core's L2 between the three steps instead of streaming through
 * memory: SqueezeNet's 32 -> 128 channels at 54x54 wrote and read back a
 * 6 MB M, and ran 1.8x slower in the model than alone (where M stayed in
 * the L3 from the previous call) and slower than the direct kernel. Per
 * block, 768 KiB a thread measured best on Zen 4 (SqueezeNet-1.0 15.2-15.8
 * -> 14.4 ms at one thread, ResNet-34 40.9 -> 39.8; 1.5 MiB: 14.8, 40.0);
 * at two threads a block half that size cost ResNet-34 6% in dispatches. */
#define WINO_BLOCK_BYTES (768 << 10) /* per thread: each core's L2 */
#define WINO_MIN_BLOCK 48  /* tiles: rows enough for the GEMM's tiles */
#define WINO_TASK_TILES 8  /* tiles per transform task */
/* Tiles a thread needs to take a band of them through all three steps
 * alone (wino_tiles), rather than sharing each step: split step by step,
 * the GEMMs by transform position, a thread wrote transformed tiles and
 * products that the other core read next. Two Zen 5 vCPUs 0.5 us apart
 * (bench/core_latency.c), ResNet-34's layers, one thread -> two: 56x56x64
 * F(4x4) 0.37 -> 0.30 ms split by step, 0.20 in bands; 28x28x128 F(4x4)
 * (bands of 24 and 25 tiles) 0.34 -> 0.24 / 0.20; 14x14x256 F(2x2)
 * 0.56 -> 0.34 / 0.33. Fewer (7x7 images: 16 tiles) would leave a GEMM
 * a row tile or two. */
#define WINO_MIN_BAND 16

/* One undilated convolution's geometry: the whole image, or (dilated) one
 * sub-grid of the pixels dil_h rows and dil_w columns apart, read and
 * written in place through multiplied strides. */
typedef struct {
  int64_t TH, TW, OH, OW, H, W, pad_top, pad_left;
  const float *in;
  int64_t in_sh, in_sw;
  float *out;
  int64_t out_sh, out_sw;
  int64_t t_begin; /* its first tile in the order of all grids' tiles */
} wino_grid_t;

typedef struct {
  int64_t mt; /* output tile side: 2 (F(2x2, 3x3)) or 4 */
  const wino_grid_t *grids;
  int64_t ngrids;
  int64_t N, C, F;
  int64_t in_sn, in_sc;
  float *v;          /* A x TB x C: the block's transformed inputs */
  float *m;          /* A x TB x F: the block's GEMM results */
  int64_t t0, TB;    /* the block: tiles [t0, t0 + TB) of all grids' */
  int64_t per_task;  /* tiles per transform task */
  int64_t out_sn, out_sf;
  const float *bias;
  float lo, hi;
  int accumulate, clamp;
} wino_t;

/* B^T d B for one 4x4 patch (F(2x2, 3x3)), any element type with + and
 * -. */
#define WINO_INPUT_2(T, d, r)                                                  \
  do {                                                                         \
    T t_[4][4];                                                                \
    for (int j_ = 0; j_ < 4; ++j_) {                                           \
      t_[0][j_] = d[0][j_] - d[2][j_];                                         \
      t_[1][j_] = d[1][j_] + d[2][j_];                                         \
      t_[2][j_] = d[2][j_] - d[1][j_];                                         \
      t_[3][j_] = d[1][j_] - d[3][j_];                                         \
    }                                                                          \
    for (int i_ = 0; i_ < 4; ++i_) {                                           \
      r[i_][0] = t_[i_][0] - t_[i_][2];                                        \
      r[i_][1] = t_[i_][1] + t_[i_][2];                                        \
      r[i_][2] = t_[i_][2] - t_[i_][1];                                        \
      r[i_][3] = t_[i_][1] - t_[i_][3];                                        \
    }                                                                          \
  } while (0)

/* A^T m A for one 4x4 block of GEMM results: the 2x2 outputs. */
#define WINO_OUTPUT_2(T, m, y)                                                 \
  do {                                                                         \
    T s_[2][4];                                                                \
    for (int j_ = 0; j_ < 4; ++j_) {                                           \
      s_[0][j_] = m[0][j_] + m[1][j_] + m[2][j_];                              \
      s_[1][j_] = m[1][j_] - m[2][j_] - m[3][j_];                              \
    }                                                                          \
    for (int i_ = 0; i_ < 2; ++i_) {                                           \
      y[i_][0] = s_[i_][0] + s_[i_][1] + s_[i_][2];                            \
      y[i_][1] = s_[i_][1] - s_[i_][2] - s_[i_][3];                            \
    }                                                                          \
  } while (0)

/* F(4x4, 3x3) with interpolation points 0, 1, -1, 2, -2 and infinity
 * (Lavin and Gray): one row of B^T x, six inputs x0..x5 to six outputs
 * (B^T's rows: [4 0 -5 0 1 0], [0 -4 -4 1 1 0], [0 4 -4 -1 1 0],
 * [0 -2 -1 2 1 0], [0 2 -1 -2 1 0], [0 4 0 -5 0 1]), sharing the sums the
 * rows have in common. */
#define WINO_B6(x0, x1, x2, x3, x4, x5, r0, r1, r2, r3, r4, r5)                \
  do {                                                                         \
    const __typeof__(x0) p_ = x4 - 4.0f * x2, q_ = x3 - 4.0f * x1;             \
    const __typeof__(x0) s_ = x4 - x2, u_ = 2.0f * (x3 - x1);                  \
    r0 = 4.0f * x0 - 5.0f * x2 + x4;                                           \
    r1 = p_ + q_;                                                              \
    r2 = p_ - q_;                                                              \
    r3 = s_ + u_;                                                              \
    r4 = s_ - u_;                                                              \
    r5 = 4.0f * x1 - 5.0f * x3 + x5;                                           \
  } while (0)

/* One row of A^T x for F(4x4, 3x3): six GEMM results to four outputs
 * (A^T's rows: [1 1 1 1 1 0], [0 1 -1 2 -2 0], [0 1 1 4 4 0],
 * [0 1 -1 8 -8 1]). */
#define WINO_A6(x0, x1, x2, x3, x4, x5, y0, y1, y2, y3)                        \
  do {                                                                         \
    const __typeof__(x0) a_ = x1 + x2, b_ = x1 - x2;                           \
    const __typeof__(x0) c_ = x3 + x4, e_ = x3 - x4;                           \
    y0 = x0 + a_ + c_;                                                         \
    y1 = b_ + 2.0f * e_;                                                       \
    y2 = a_ + 4.0f * c_;                                                       \
    y3 = b_ + 8.0f * e_ + x5;                                                  \
  } while (0)

/* B^T d B for one 6x6 patch: columns, then rows. */
#define WINO_INPUT_4(T, d, r)                                                  \
  do {                                                                         \
    T t_[6][6];                                                                \
    for (int j_ = 0; j_ < 6; ++j_)                                             \
      WINO_B6(d[0][j_], d[1][j_], d[2][j_], d[3][j_], d[4][j_], d[5][j_],      \
              t_[0][j_], t_[1][j_], t_[2][j_], t_[3][j_], t_[4][j_],           \
              t_[5][j_]);                                                      \
    for (int i_ = 0; i_ < 6; ++i_)                                             \
      WINO_B6(t_[i_][0], t_[i_][1], t_[i_][2], t_[i_][3], t_[i_][4],           \
              t_[i_][5], r[i_][0], r[i_][1], r[i_][2], r[i_][3], r[i_][4],     \
              r[i_][5]);                                                       \
  } while (0)

/* A^T m A for one 6x6 block of GEMM results: the 4x4 outputs. */
#define WINO_OUTPUT_4(T, m, y)                                                 \
  do {                                                                         \
    T s_[4][6];                                                                \
    for (int j_ = 0; j_ < 6; ++j_)                                             \
      WINO_A6(m[0][j_], m[1][j_], m[2][j_], m[3][j_], m[4][j_], m[5][j_],      \
              s_[0][j_], s_[1][j_], s_[2][j_], s_[3][j_]);                     \
    for (int i_ = 0; i_ < 4; ++i_)                                             \
      WINO_A6(s_[i_][0], s_[i_][1], s_[i_][2], s_[i_][3], s_[i_][4],           \
              s_[i_][5], y[i_][0], y[i_][1], y[i_][2], y[i_][3]);              \
  } while (0)

/* The grid of tile t (of all grids' tiles) and *local, t's index in it. */
static inline const wino_grid_t *grid_of(const wino_t *w, int64_t t,
                                         int64_t *local) {
  int64_t lo = 0, hi = w->ngrids - 1;
  while (lo < hi) {
    const int64_t mid = (lo + hi + 1) / 2;
    if (w->grids[mid].t_begin <= t)
      lo = mid;
    else
      hi = mid - 1;
  }
  *local = t - w->grids[lo].t_begin;
  return &w->grids[lo];
}

/* The input transform of one tile for an output tile of MT x MT (patch
 * AL = MT + 2): V[a][t][c] for every channel. */
#define WINO_INPUT_TILE(MT, AL, w, lt)                                         \
  do {                                                                         \
    const int64_t T_ = (w)->TB, C_ = (w)->C;                                   \
    int64_t t_;                                                                \
    const wino_grid_t *g_ = grid_of((w), (w)->t0 + (lt), &t_);                 \
    const int64_t tw_ = t_ % g_->TW, th_ = t_ / g_->TW % g_->TH;               \
    const float *in_n_ = g_->in + t_ / (g_->TW * g_->TH) * (w)->in_sn;         \
    const int64_t ih0_ = th_ * MT - g_->pad_top;                               \
    const int64_t iw0_ = tw_ * MT - g_->pad_left;                              \
    /* The patch's pixels, NULL where they fall into the padding. */           \
    const float *px_[AL][AL];                                                  \
    for (int i = 0; i < AL; ++i)                                               \
      for (int j = 0; j < AL; ++j) {                                           \
        const int64_t ih = ih0_ + i, iw = iw0_ + j;                            \
        px_[i][j] = ih >= 0 && ih < g_->H && iw >= 0 && iw < g_->W             \
                        ? in_n_ + ih * g_->in_sh + iw * g_->in_sw              \
                        : NULL;                                                \
      }                                                                        \
    float *vt_ = (w)->v + (lt)*C_;                                             \
    int64_t c = 0;                                                             \
    if ((w)->in_sc == 1)                                                       \
      for (; c + TK_VW <= C_; c += TK_VW) {                                    \
        tk_vec d[AL][AL], r[AL][AL];                                           \
        for (int i = 0; i < AL; ++i)                                           \
          for (int j = 0; j < AL; ++j)                                         \
            d[i][j] = px_[i][j] ? tk_load(px_[i][j] + c) : tk_splat(0.0f);     \
        WINO_INPUT_##MT(tk_vec, d, r);                                         \
        for (int i = 0; i < AL; ++i)                                           \
          for (int j = 0; j < AL; ++j)                                         \
            tk_store(vt_ + (i * AL + j) * T_ * C_ + c, r[i][j]);               \
      }                                                                        \
    for (; c < C_; ++c) {                                                      \
      float d[AL][AL], r[AL][AL];                                              \
      for (int i = 0; i < AL; ++i)                                             \
        for (int j = 0; j < AL; ++j)                                           \
          d[i][j] = px_[i][j] ? px_[i][j][c * (w)->in_sc] : 0.0f;              \
      WINO_INPUT_##MT(float, d, r);                                            \
      for (int i = 0; i < AL; ++i)                                             \
        for (int j = 0; j < AL; ++j)                                           \
          vt_[(i * AL + j) * T_ * C_ + c] = r[i][j];                           \
    }                                                                          \
  } while (0)

/* Task: per_task tiles of the block: V[a][t - t0][c]. */
static void input_task(void *arg, int64_t task) {
  const wino_t *w = (const wino_t *)arg;
  const int64_t lt0 = task * w->per_task;
  const int64_t lt1 = lt0 + w->per_task < w->TB ? lt0 + w->per_task : w->TB;
  for (int64_t lt = lt0; lt < lt1; ++lt) {
    if (w->mt == 4)
      WINO_INPUT_TILE(4, 6, w, lt);
    else
      WINO_INPUT_TILE(2, 4, w, lt);
  }
}

/* The epilogue of one output value (scalar path). */
static inline float finish(const wino_t *w, float y, const float *o,
                           int64_t f) {
  if (w->accumulate)
    y += *o;
  if (w->bias)
    y += w->bias[f];
  return w->clamp ? tk_clamp_scalar(y, w->lo, w->hi) : y;
}

/* The output transform of one tile: its up to MT x MT outputs (patch AL),
 * through the epilogue. */
#define WINO_OUTPUT_TILE(MT, AL, w, lt)                                        \
  do {                                                                         \
    const int64_t T_ = (w)->TB, F_ = (w)->F;                                   \
    int64_t t_;                                                                \
    const wino_grid_t *g_ = grid_of((w), (w)->t0 + (lt), &t_);                 \
    const int64_t tw_ = t_ % g_->TW, th_ = t_ / g_->TW % g_->TH;               \
    float *out_n_ = g_->out + t_ / (g_->TW * g_->TH) * (w)->out_sn;            \
    const float *mt_ = (w)->m + (lt)*F_;                                       \
    float *po_[MT][MT];                                                        \
    for (int i = 0; i < MT; ++i)                                               \
      for (int j = 0; j < MT; ++j) {                                           \
        const int64_t oh = th_ * MT + i, ow = tw_ * MT + j;                    \
        po_[i][j] = oh < g_->OH && ow < g_->OW                                 \
                        ? out_n_ + oh * g_->out_sh + ow * g_->out_sw           \
                        : NULL;                                                \
      }                                                                        \
    int64_t f = 0;                                                             \
    if ((w)->out_sf == 1) {                                                    \
      const tk_vec vlo_ = tk_splat((w)->lo), vhi_ = tk_splat((w)->hi);         \
      for (; f + TK_VW <= F_; f += TK_VW) {                                    \
        tk_vec m[AL][AL], y[MT][MT];                                           \
        for (int i = 0; i < AL; ++i)                                           \
          for (int j = 0; j < AL; ++j)                                         \
            m[i][j] = tk_load(mt_ + (i * AL + j) * T_ * F_ + f);               \
        WINO_OUTPUT_##MT(tk_vec, m, y);                                        \
        const tk_vec b_ = (w)->bias ? tk_load((w)->bias + f) : tk_splat(0.0f); \
        for (int i = 0; i < MT; ++i)                                           \
          for (int j = 0; j < MT; ++j) {                                       \
            if (!po_[i][j])                                                    \
              continue;                                                        \
            tk_vec r_ = y[i][j] + b_;                                          \
            if ((w)->accumulate)                                               \
              r_ += tk_load(po_[i][j] + f);                                    \
            if ((w)->clamp)                                                    \
              r_ = tk_min(tk_max(r_, vlo_), vhi_);                             \
            tk_store(po_[i][j] + f, r_);                                       \
          }                                                                    \
      }                                                                        \
    }                                                                          \
    for (; f < F_; ++f) {                                                      \
      float m[AL][AL], y[MT][MT];                                              \
      for (int i = 0; i < AL; ++i)                                             \
        for (int j = 0; j < AL; ++j)                                           \
          m[i][j] = mt_[(i * AL + j) * T_ * F_ + f];                           \
      WINO_OUTPUT_##MT(float, m, y);                                           \
      for (int i = 0; i < MT; ++i)                                             \
        for (int j = 0; j < MT; ++j)                                           \
          if (po_[i][j]) {                                                     \
            float *o_ = po_[i][j] + f * (w)->out_sf;                           \
            *o_ = finish(w, y[i][j], o_, f);                                   \
          }                                                                    \
    }                                                                          \
  } while (0)

/* Task: per_task tiles of the block: their up to MT x MT outputs each. */
static void output_task(void *arg, int64_t task) {
  const wino_t *w = (const wino_t *)arg;
  const int64_t lt0 = task * w->per_task;
  const int64_t lt1 = lt0 + w->per_task < w->TB ? lt0 + w->per_task : w->TB;
  for (int64_t lt = lt0; lt < lt1; ++lt) {
    if (w->mt == 4)
      WINO_OUTPUT_TILE(4, 6, w, lt);
    else
      WINO_OUTPUT_TILE(2, 4, w, lt);
  }
}

/* Tiles per block of T tiles on `threads` threads: the block's V and M
 * within about WINO_BLOCK_BYTES a thread, whole row tiles of the GEMM's
 * micro-kernel, at least WINO_MIN_BLOCK. */
static int64_t block_tiles(int64_t T, int64_t npos, int64_t C, int64_t F,
                           int threads) {
  int64_t TB = (int64_t)WINO_BLOCK_BYTES * threads /
               (npos * (C + F) * (int64_t)sizeof(float));
  if (TB < WINO_MIN_BLOCK)
    TB = WINO_MIN_BLOCK;
  /* As many blocks as whole budgets fit (a last block of a few tiles
   * would run its GEMM on a few rows), evened out. */
  const int64_t nblocks = T / TB > 1 ? T / TB : 1;
  TB = ((T + nblocks - 1) / nblocks + TK_MR - 1) / TK_MR * TK_MR;
  return TB > T ? T : TB;
}

/* Floats of scratch for blocks of TB tiles: V, then M. */
static int64_t scratch_floats(int64_t TB, int64_t npos, int64_t C, int64_t F) {
  return npos * TB * ((C > 0 ? C : 1) + F);
}

/* Tiles [t_begin, t_end) of w's grids in blocks of TB, on the threads
 * tk_num_threads() allows (the caller's alone inside a band task):
 * input transform, the npos GEMMs, output transform; `scratch` holds
 * scratch_floats(TB, ...). */
static void wino_tiles(wino_t w, const float *up, int64_t npos, int64_t t_begin,
                       int64_t t_end, int64_t TB, float *scratch) {
  const int64_t C = w.C, F = w.F, npanels = (F + TK_NR - 1) / TK_NR;
  w.v = scratch;
  w.m = scratch + npos * TB * (C > 0 ? C : 1);
  for (int64_t t0 = t_begin; t0 < t_end; t0 += TB) {
    w.t0 = t0;
    w.TB = t_end - t0 < TB ? t_end - t0 : TB;
    const int64_t ntasks = (w.TB + WINO_TASK_TILES - 1) / WINO_TASK_TILES;
    /* The transforms: a patch per tile and channel, about 4 operations a
     * transform position (times 4 for the strided reads and writes). */
    tk_parallel_for_on(tk_threads_for(w.TB * C * npos * 16), ntasks, input_task,
                       &w);
    tessel_kernel_matmul_f32(npos, w.TB, F, C, w.v, w.TB * C, C, 1, up,
                             npanels * C * TK_NR, w.m, w.TB * F, F, 1, NULL,
                             -INFINITY, INFINITY, 0);
    tk_parallel_for_on(tk_threads_for(w.TB * F * npos * 16), ntasks,
                       output_task, &w);
  }
}

/* Bands of tiles, one a thread, each run alone through all three steps
 * (wino_tiles) in its own part of one scratch allocation: band b, and so
 * thread b, gets the same part on every call (from the shared caching
 * allocator, a band's scratch was often the other thread's last time). */
typedef struct {
  const wino_t *w;
  const float *up;
  int64_t npos, T, TB;
  int bands;
  float *scratch;
  int64_t part; /* floats of scratch a band owns, 64-byte aligned */
} wino_bands_t;

static void band_task(void *arg, int64_t b) {
  const wino_bands_t *j = (const wino_bands_t *)arg;
  wino_tiles(*j->w, j->up, j->npos, b * j->T / j->bands,
             (b + 1) * j->T / j->bands, j->TB, j->scratch + b * j->part);
}

/* The convolution over `ngrids` grids (their t_begin set here), all their
 * tiles in one sequence of blocks, so that the GEMMs of a dilated
 * convolution's sub-grids share rows (16 sub-grids of 7x7: 16 tiles each
 * alone, 256 together) and each block's filter pass; `npos` transform
 * positions: 16 for F(2x2, 3x3), 36 for F(4x4, 3x3). */
static void winograd(int64_t npos, wino_grid_t *grids, int64_t ngrids,
                     int64_t N, int64_t F, int64_t C, int64_t in_sn,
                     int64_t in_sc, const float *up, int64_t out_sn,
                     int64_t out_sf, const float *bias, float lo, float hi,
                     int32_t flags) {
  if (N <= 0 || F <= 0)
    return;
  const int64_t mt = npos == 36 ? 4 : 2;
  int64_t T = 0, used = 0;
  for (int64_t i = 0; i < ngrids; ++i) {
    wino_grid_t g = grids[i];
    if (g.OH <= 0 || g.OW <= 0)
      continue;
    g.TH = (g.OH + mt - 1) / mt;
    g.TW = (g.OW + mt - 1) / mt;
    g.t_begin = T;
    T += N * g.TH * g.TW;
    grids[used++] = g;
  }
  if (T == 0)
    return;
  wino_t w = {.mt = mt,
              .grids = grids,
              .ngrids = used,
              .N = N,
              .C = C,
              .F = F,
              .in_sn = in_sn,
              .in_sc = in_sc,
              .per_task = WINO_TASK_TILES,
              .out_sn = out_sn,
              .out_sf = out_sf,
              .bias = bias,
              .lo = lo,
              .hi = hi,
              .accumulate = (flags & TESSEL_KERNEL_ACCUMULATE) != 0,
              .clamp = tk_has_clamp(lo, hi)};
  const int threads = tk_threads_for(T * npos * C * F);
  const int bands = threads > 1 && T >= threads * WINO_MIN_BAND ? threads : 1;
  /* Bands: blocks for one thread of the largest band. */
  const int64_t TB = block_tiles((T + bands - 1) / bands, npos, C, F,
                                 bands > 1 ? 1 : tk_num_threads());
  /* Parts 64-byte aligned: a band's lines are its own. */
  const int64_t part = (scratch_floats(TB, npos, C, F) + 15) / 16 * 16;
  float *scratch = (float *)_mlir_memref_to_llvm_alloc((size_t)(bands * part) *
                                                       sizeof(float));
  if (!scratch)
    abort(); /* out of memory for the scratch: nothing sane to return */
  if (bands > 1) {
    wino_bands_t j = {&w, up, npos, T, TB, bands, scratch, part};
    tk_parallel_for_on(bands, bands, band_task, &j);
  } else {
    wino_tiles(w, up, npos, 0, T, TB, scratch);
  }
  _mlir_memref_to_llvm_free(scratch);
}

/* One dimension of a dilated convolution's sub-grid: outputs o = a + d o'
 * (o' < *n_out) read inputs i = (a - pad) + d (o' + k), i.e. the input
 * sub-grid of phase ph = (a - pad) mod d, rows i' = q + o' + k. Its first
 * row is moved past the image's start when q > 0 (then padding 0), else
 * q is padding; *n_in is the sub-grid's rows inside the image (may be 0:
 * every tap in the padding). */
static void sub_grid(int64_t a, int64_t d, int64_t pad, int64_t n_out_all,
                     int64_t n_in_all, int64_t *n_out, int64_t *first_in,
                     int64_t *n_in, int64_t *sub_pad) {
  *n_out = (n_out_all - a + d - 1) / d;
  const int64_t r0 = a - pad;
  const int64_t ph = ((r0 % d) + d) % d, q = (r0 - ph) / d;
  const int64_t rows = n_in_all > ph ? (n_in_all - ph + d - 1) / d : 0;
  const int64_t skip = q > 0 ? (q < rows ? q : rows) : 0;
  *first_in = ph + skip * d; /* in input rows */
  *n_in = rows - skip;
  *sub_pad = q > 0 ? q - skip : -q;
}

/* A dilation (dh, dw) convolution is dh x dw undilated ones on the
 * sub-grids of outputs and inputs dh rows and dw columns apart (as
 * space-to-batch does for atrous convolutions), each read in place
 * through strides: no copy, and Winograd's 2.25x or 4x fewer products for
 * DeepLab's and FCN's dilated 3x3 layers. The sub-grids' tiles run as one
 * convolution (winograd above). */
void tessel_kernel_conv2d_winograd_nhwc_f32(
    int64_t N, int64_t OH, int64_t OW, int64_t F, int64_t C, int64_t H,
    int64_t W, int64_t pad_top, int64_t pad_left, int64_t dil_h,
    int64_t dil_w, int64_t positions, const float *in, int64_t in_sn,
    int64_t in_sh, int64_t in_sw, int64_t in_sc, const float *up, float *out,
    int64_t out_sn, int64_t out_sh, int64_t out_sw, int64_t out_sf,
    const float *bias, float lo, float hi, int32_t flags) {
  if (OH <= 0 || OW <= 0)
    return;
  const int64_t gh = dil_h < OH ? dil_h : OH, gw = dil_w < OW ? dil_w : OW;
  wino_grid_t one, *grids = &one;
  if (gh * gw > 1) {
    grids = (wino_grid_t *)malloc((size_t)(gh * gw) * sizeof(wino_grid_t));
    if (!grids)
      abort(); /* out of memory: nothing sane to return */
  }
  int64_t n = 0;
  for (int64_t a = 0; a < gh; ++a)
    for (int64_t b = 0; b < gw; ++b) {
      wino_grid_t *g = &grids[n++];
      int64_t ih0, iw0;
      sub_grid(a, dil_h, pad_top, OH, H, &g->OH, &ih0, &g->H, &g->pad_top);
      sub_grid(b, dil_w, pad_left, OW, W, &g->OW, &iw0, &g->W, &g->pad_left);
      g->in = in + ih0 * in_sh + iw0 * in_sw;
      g->in_sh = in_sh * dil_h;
      g->in_sw = in_sw * dil_w;
      g->out = out + a * out_sh + b * out_sw;
      g->out_sh = out_sh * dil_h;
      g->out_sw = out_sw * dil_w;
    }
  winograd(positions, grids, n, N, F, C, in_sn, in_sc, up, out_sn, out_sf,
           bias, lo, hi, flags);
  if (grids != &one)
    free(grids);
}
