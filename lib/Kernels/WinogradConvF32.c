/* WinogradConvF32.c - 3x3, stride-1 convolution by Winograd's F(2x2, 3x3).
 *
 * Each 2x2 block of outputs ("tile") comes from a 4x4 patch d of the input:
 *   Y = A^T [ (G g G^T) .* (B^T d B) ] A
 * so per tile and channel pair the 36 multiplications of the direct
 * convolution become 16, and the 16 element-wise products summed over the
 * input channels are 16 independent GEMMs:
 *   M[a][t][f] = sum_c V[a][t][c] * U[a][c][f]      (a = 0..15)
 * with V = B^T d B (the input transform, here at run time) and U = G g G^T
 * (the filter transform, done by the compiler: `tessel.packed_conv2d
 * {winograd}` carries U packed in NR-column panels per a). The GEMMs run on
 * the implicit-GEMM driver of ConvGemmF32.c (tessel_kernel_matmul_f32,
 * batch 16, one packed filter per batch entry), so they get its
 * micro-kernel, blocking and threads. The output transform applies the
 * epilogue (accumulate, bias, clamp) as it stores.
 *
 * F(2x2, 3x3) multiplies by 2.25x fewer; its transforms only add and
 * subtract, so rounding stays close to the direct convolution's (F(4x4,
 * 3x3) would save 4x but its constants amplify errors and its 6x6 tiles
 * waste more on the 7x7 and 14x14 images of ImageNet CNNs).
 *
 * The two scratch arrays (V: 16 x T x C, M: 16 x T x F floats) come from
 * the library's caching allocator, so after the first call no memory is
 * mapped. */
#include "ThreadPool.h"
#include "Vector.h"

#include <math.h>
#include <stdlib.h>

typedef struct {
  int64_t N, TH, TW, OH, OW, C, F, H, W, pad_top, pad_left;
  const float *in;
  int64_t in_sn, in_sh, in_sw, in_sc;
  float *v; /* 16 x T x C */
  float *m; /* 16 x T x F */
  float *out;
  int64_t out_sn, out_sh, out_sw, out_sf;
  const float *bias;
  float lo, hi;
  int accumulate, clamp;
} wino_t;

/* B^T d B for one 4x4 patch, any element type with + and -. */
#define WINO_INPUT(T, d, r)                                                    \
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
#define WINO_OUTPUT(T, m, y)                                                   \
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

/* Task: one row of tiles (n, th): V[a][t][c] for its TW tiles. */
static void input_task(void *arg, int64_t task) {
  const wino_t *w = (const wino_t *)arg;
  const int64_t n = task / w->TH, th = task % w->TH;
  const int64_t T = w->N * w->TH * w->TW, C = w->C;
  const float *in_n = w->in + n * w->in_sn;
  const int vec = w->in_sc == 1;
  for (int64_t tw = 0; tw < w->TW; ++tw) {
    const int64_t t = (n * w->TH + th) * w->TW + tw;
    const int64_t ih0 = th * 2 - w->pad_top, iw0 = tw * 2 - w->pad_left;
    /* The patch's pixels, NULL where they fall into the padding. */
    const float *px[4][4];
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) {
        const int64_t ih = ih0 + i, iw = iw0 + j;
        px[i][j] = ih >= 0 && ih < w->H && iw >= 0 && iw < w->W
                       ? in_n + ih * w->in_sh + iw * w->in_sw
                       : NULL;
      }
    float *vt = w->v + t * C;
    int64_t c = 0;
    if (vec)
      for (; c + TK_VW <= C; c += TK_VW) {
        tk_vec d[4][4], r[4][4];
        for (int i = 0; i < 4; ++i)
          for (int j = 0; j < 4; ++j)
            d[i][j] = px[i][j] ? tk_load(px[i][j] + c) : tk_splat(0.0f);
        WINO_INPUT(tk_vec, d, r);
        for (int i = 0; i < 4; ++i)
          for (int j = 0; j < 4; ++j)
            tk_store(vt + (i * 4 + j) * T * C + c, r[i][j]);
      }
    for (; c < C; ++c) {
      float d[4][4], r[4][4];
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j)
          d[i][j] = px[i][j] ? px[i][j][c * w->in_sc] : 0.0f;
      WINO_INPUT(float, d, r);
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j)
          vt[(i * 4 + j) * T * C + c] = r[i][j];
    }
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

/* Task: one row of tiles (n, th): its up to 2 x 2*TW outputs. */
static void output_task(void *arg, int64_t task) {
  const wino_t *w = (const wino_t *)arg;
  const int64_t n = task / w->TH, th = task % w->TH;
  const int64_t T = w->N * w->TH * w->TW, F = w->F;
  float *out_n = w->out + n * w->out_sn;
  const int vec = w->out_sf == 1;
  const tk_vec vlo = tk_splat(w->lo), vhi = tk_splat(w->hi);
  for (int64_t tw = 0; tw < w->TW; ++tw) {
    const int64_t t = (n * w->TH + th) * w->TW + tw;
    const float *mt = w->m + t * F;
    float *po[2][2];
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j) {
        const int64_t oh = th * 2 + i, ow = tw * 2 + j;
        po[i][j] = oh < w->OH && ow < w->OW
                       ? out_n + oh * w->out_sh + ow * w->out_sw
                       : NULL;
      }
    int64_t f = 0;
    if (vec)
      for (; f + TK_VW <= F; f += TK_VW) {
        tk_vec m[4][4], y[2][2];
        for (int i = 0; i < 4; ++i)
          for (int j = 0; j < 4; ++j)
            m[i][j] = tk_load(mt + (i * 4 + j) * T * F + f);
        WINO_OUTPUT(tk_vec, m, y);
        const tk_vec b = w->bias ? tk_load(w->bias + f) : tk_splat(0.0f);
        for (int i = 0; i < 2; ++i)
          for (int j = 0; j < 2; ++j) {
            if (!po[i][j])
              continue;
            tk_vec r = y[i][j] + b;
            if (w->accumulate)
              r += tk_load(po[i][j] + f);
            if (w->clamp)
              r = tk_min(tk_max(r, vlo), vhi);
            tk_store(po[i][j] + f, r);
          }
      }
    for (; f < F; ++f) {
      float m[4][4], y[2][2];
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j)
          m[i][j] = mt[(i * 4 + j) * T * F + f];
      WINO_OUTPUT(float, m, y);
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j)
          if (po[i][j]) {
            float *o = po[i][j] + f * w->out_sf;
            *o = finish(w, y[i][j], o, f);
          }
    }
  }
}

void tessel_kernel_conv2d_winograd_nhwc_f32(
    int64_t N, int64_t OH, int64_t OW, int64_t F, int64_t C, int64_t H,
    int64_t W, int64_t pad_top, int64_t pad_left, const float *in,
    int64_t in_sn, int64_t in_sh, int64_t in_sw, int64_t in_sc,
    const float *up, float *out, int64_t out_sn, int64_t out_sh,
    int64_t out_sw, int64_t out_sf, const float *bias, float lo, float hi,
    int32_t flags) {
  if (N <= 0 || OH <= 0 || OW <= 0 || F <= 0)
    return;
  const int64_t TH = (OH + 1) / 2, TW = (OW + 1) / 2, T = N * TH * TW;
  const int64_t npanels = (F + TK_NR - 1) / TK_NR;
  float *v = (float *)_mlir_memref_to_llvm_alloc(
      (size_t)(16 * T * (C > 0 ? C : 1)) * sizeof(float));
  float *m = (float *)_mlir_memref_to_llvm_alloc((size_t)(16 * T * F) *
                                                 sizeof(float));
  if (!v || !m)
    abort(); /* out of memory for the scratch: nothing sane to return */
  wino_t w = {N,      TH,     TW,     OH,     OW,       C,        F,
              H,      W,      pad_top, pad_left, in,    in_sn,    in_sh,
              in_sw,  in_sc,  v,      m,      out,      out_sn,   out_sh,
              out_sw, out_sf, bias,   lo,     hi,
              (flags & TESSEL_KERNEL_ACCUMULATE) != 0, tk_has_clamp(lo, hi)};
  /* The transforms: a 4x4 patch per tile and channel, about 64 operations
   * (times 4 for the strided reads and writes). */
  tk_parallel_for_on(tk_threads_for(T * C * 256), N * TH, input_task, &w);
  tessel_kernel_matmul_f32(16, T, F, C, v, T * C, C, 1, up, npanels * C * TK_NR,
                           m, T * F, F, 1, NULL, -INFINITY, INFINITY, 0);
  tk_parallel_for_on(tk_threads_for(T * F * 256), N * TH, output_task, &w);
  _mlir_memref_to_llvm_free(m);
  _mlir_memref_to_llvm_free(v);
}
