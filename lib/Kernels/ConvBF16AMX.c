/* ConvBF16AMX.c - the bf16 convolution on AMX-BF16 (internal).
 *
 * On Intel cores `vdpbf16ps` issues at half the rate of fp32 FMAs (one
 * every two cycles on a Sapphire Rapids-class Xeon), so the bf16 tile of
 * ConvGemmBF16.c ran 1.6x slower than fp32 there. Where the CPU has
 * AMX-BF16, `tdpbf16ps` multiplies 16 rows x 32 bf16 by 32 x 16 (16 x 16
 * f32 sums, 8,192 multiply-adds) per instruction. The packed weights'
 * pairs of k (b[k/2][64 columns][2], 256 bytes per pair) are already what
 * a B tile wants, loaded in place; each task rounds 48 im2col rows of the
 * input to bf16 (zero-padded to whole 32-element steps, 64-byte aligned),
 * runs them 16 at a time against every panel (AmxTiles.c's strip) and
 * finishes the f32 sums as the fp32 kernel does: (+ C) (+ bias) (clamp,
 * NaN kept). */
#include "ConvGemmBF16.h"
#include "AmxTiles.h"
#include "ThreadPool.h"

#include <stdlib.h>
#include <string.h>

#if TK_VW == 16 && defined(__x86_64__) && !defined(TESSEL_KERNELS_NO_ASM)
#define TASK_ROWS 48 /* 3 strips of 16 */
#define STEP 32      /* bf16 elements of k per tile step (64 bytes) */

typedef struct {
  const tk_bf16_conv_t *p;
  int64_t M, K, kpad, pairs, steps; /* M: rows per image */
  int64_t tasks;                    /* per image */
} amx_job_t;

/* Row m of image n's im2col matrix (k = (kh * KW + kw) * C + c), in
 * bf16. */
static void gather_row(const amx_job_t *j, int64_t n, int64_t m,
                       uint16_t *dst) {
  const tk_bf16_conv_t *p = j->p;
  const int64_t oh = m / p->OW, ow = m % p->OW;
  uint16_t *d = dst;
  for (int64_t kh = 0; kh < p->KH; ++kh) {
    const int64_t ih = oh * p->stride_h - p->pad_top + kh * p->dil_h;
    for (int64_t kw = 0; kw < p->KW; ++kw, d += p->C) {
      const int64_t iw = ow * p->stride_w - p->pad_left + kw * p->dil_w;
      if (ih < 0 || ih >= p->H || iw < 0 || iw >= p->W) {
        memset(d, 0, (size_t)p->C * sizeof *d);
        continue;
      }
      tk_bf16_round_run(
          d, p->in + n * p->in_sn + ih * p->in_sh + iw * p->in_sw, p->C,
          p->in_sc);
    }
  }
  memset(dst + j->K, 0, (size_t)(j->kpad - j->K) * sizeof *dst);
}

/* The fp32 kernel's epilogue for output row m of image n, one panel. */
static void finish_row(const tk_bf16_conv_t *p, int64_t n, int64_t m,
                       int64_t f0, int64_t width, const float *sums) {
  float *o = p->out + n * p->out_sn + (m / p->OW) * p->out_sh +
             (m % p->OW) * p->out_sw + f0 * p->out_sf;
  const float *bias = p->bias ? p->bias + f0 : NULL;
  int64_t f = 0;
  if (p->out_sf == 1)
    for (; f + TK_VW <= width; f += TK_VW) {
      tk_vec v = tk_load(sums + f);
      if (p->accumulate)
        v += tk_load(o + f);
      if (bias)
        v += tk_load(bias + f);
      if (p->clamp)
        v = tk_min(tk_max(v, tk_splat(p->lo)), tk_splat(p->hi));
      tk_store(o + f, v);
    }
  for (; f < width; ++f) {
    float v = sums[f];
    if (p->accumulate)
      v += o[f * p->out_sf];
    if (bias)
      v += bias[f];
    if (p->clamp)
      v = tk_clamp_scalar(v, p->lo, p->hi);
    o[f * p->out_sf] = v;
  }
}

static void amx_task(void *arg, int64_t task) {
  const amx_job_t *j = (const amx_job_t *)arg;
  const tk_bf16_conv_t *p = j->p;
  const int64_t n = task / j->tasks, m0 = task % j->tasks * TASK_ROWS;
  const int64_t rows = j->M - m0 < TASK_ROWS ? j->M - m0 : TASK_ROWS;
  const int64_t strips = (rows + TK_AMX_ROWS - 1) / TK_AMX_ROWS;
  /* 64-byte aligned rows: a tile row across two cache lines halves the
   * loads' speed. */
  uint16_t *a = (uint16_t *)aligned_alloc(
      64, (size_t)(strips * TK_AMX_ROWS * j->kpad) * sizeof(uint16_t));
  if (!a)
    abort(); /* out of memory: nothing sane to return */
  for (int64_t r = 0; r < strips * TK_AMX_ROWS; ++r) {
    if (r < rows)
      gather_row(j, n, m0 + r, a + r * j->kpad);
    else
      memset(a + r * j->kpad, 0, (size_t)j->kpad * sizeof *a);
  }
  _Alignas(64) uint16_t tail_b[TK_AMX_ROWS * TK_NR * 2];
  _Alignas(64) float sums[TK_AMX_ROWS][TK_NR];
  const int64_t tail = j->pairs - j->steps * TK_AMX_ROWS; /* < 16 */
  tk_amx_configure();
  for (int64_t pn = 0; pn * TK_NR < p->F; ++pn) {
    const uint16_t *panel = p->wpb + n * p->wp_sn + pn * p->wp_panel;
    const int64_t f0 = pn * TK_NR;
    const int64_t width = p->F - f0 < TK_NR ? p->F - f0 : TK_NR;
    if (tail)
      tk_amx_tail(tail_b, panel, j->steps, tail);
    for (int64_t st = 0; st < strips; ++st) {
      tk_amx_strip_bf16(a + st * TK_AMX_ROWS * j->kpad,
                        j->kpad * (int64_t)sizeof(uint16_t), j->steps, panel,
                        tail ? tail_b : NULL, &sums[0][0]);
      for (int64_t r = 0; r < TK_AMX_ROWS && st * TK_AMX_ROWS + r < rows; ++r)
        finish_row(p, n, m0 + st * TK_AMX_ROWS + r, f0, width, sums[r]);
    }
  }
  tk_amx_release();
  free(a);
}

int tk_bf16_conv_amx(const tk_bf16_conv_t *p) {
  const int64_t M = p->OH * p->OW, K = p->KH * p->KW * p->C;
  /* A reduction of at least one step and a strip's worth of rows per
   * image (tasks stay within an image: its weights, wp_sn apart). */
  if (K < STEP || M < TK_AMX_ROWS || !tk_has_amx_bf16())
    return 0;
  const int64_t tasks = (M + TASK_ROWS - 1) / TASK_ROWS;
  amx_job_t j = {p, M, K, (K + STEP - 1) / STEP * STEP, (K + 1) / 2,
                 K / STEP, tasks};
  /* AMX-BF16 runs ~8x the f32 rate: its work counts an eighth. */
  tk_parallel_for_on(tk_threads_for(p->N * M * p->F * K / 8), p->N * tasks,
                     amx_task, &j);
  return 1;
}

#else
int tk_bf16_conv_amx(const tk_bf16_conv_t *p) {
  (void)p;
  return 0;
}
#endif
