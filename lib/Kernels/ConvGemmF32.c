/* ConvGemmF32.c - NHWC convolution and batched matmul as one implicit GEMM.
 *
 * Rows of the GEMM are output pixels (or matmul rows), columns are output
 * channels in packed panels of NR, and the reduction runs over the filter
 * taps (kh, kw) and input channels c. There is no im2col buffer: the
 * micro-kernel reads each row's activations straight from the (padded)
 * input through a per-row base pointer plus a per-tap offset, broadcasting
 * one scalar per row and k against NR packed weights.
 *
 * Blocking (one core): the reduction is split into blocks of about KBLOCK
 * (taps x channels) so that one micro-kernel call's weights (KBLOCK x NR
 * floats) come from L2 and its MR activation rows stay in L1; a task covers
 * a chunk of rows and a block of FBLOCK panels, so one weight block is
 * reused from L2 by every row tile of the chunk. Tasks are independent
 * (disjoint outputs) and are spread over the thread pool.
 *
 * With bf16 weights (tessel_kernel_conv2d_nhwc_bf16) the same blocking runs
 * ConvGemmBF16.h's micro-kernel: a row tile's activations are rounded to
 * bf16 once per reduction block, into one contiguous row per output pixel
 * (the taps' channel runs, and a zero when the row's length is odd), and
 * reused by every panel of the task. Pairs of k must not straddle a
 * block: blocks have even channel counts, and an odd C is one block. */
#include "ConvGemmBF16.h"
#include "ConvStemF32.h"
#include "CpuFeatures.h"
#include "FlatTilesF32.h"
#include "ThreadPool.h"
#include "Vector.h"

#include <math.h>
#include <stdlib.h>

/* Reduction elements per micro-kernel call: the tile's rows of that many
 * activations stay in L1 across the panel's column groups. AVX2's 6 x 16
 * tile reads them 4 times per panel: 512 (12 KiB) measured 10-40% faster
 * than 1024 on Zen 3's 32 KiB L1. */
#if TK_VW == 8
#define KBLOCK 512
#else
#define KBLOCK 1024
#endif
#define FBLOCK 2 /* NR panels per task */
#define ROW_TILES 16 /* MR row tiles per task */
/* Full panels take the flat tiles (their broadcasts as vbroadcastss) up to
 * this reduction length, and where the asm 6 x 64 tile would take the
 * embedded-broadcast form (Zen 4) only under a short one: Zen 5 ran 64 x
 * 128 and 480 x 80 panels at 264 GFLOP/s flat, 239-246 in the asm tile,
 * whose prefetched weight stream (measured on Intel) is kept for the long
 * reductions of large layers. */
#define FLAT_KC_MAX 256
#define FLAT_KC_MAX_EMBEDDED 64

typedef struct {
  int64_t N, OH, OW, F, C, ntaps, KW, H, W, pad_top, pad_left, dil_h, dil_w;
  const float *zeros;      /* a zero "row" standing in for padding taps */
  int flat;                /* 1x1, unpadded, stride 1, rows evenly spaced in
                            * input and output: row r is at r * in_sw and
                            * r * out_sw (pointwise convs, matmuls) */
  int merge_kw;            /* one channel block of densely packed pixels:
                            * the KW taps of a filter row read one
                            * contiguous run of KW * C floats */
  const float *in;
  int64_t in_sn, in_sh, in_sw, in_sc, stride_h, stride_w;
  const float *wp;
  const uint16_t *wpb;     /* bf16 weights instead of wp: pairs of k */
  int64_t wp_sn, wp_panel; /* elements per packed panel: KH*KW*C*NR (bf16:
                            * KH*KW*C rounded up to even, times NR) */
  float *out;
  int64_t out_sn, out_sh, out_sw, out_sf;
  const float *bias;
  float lo, hi;
  int accumulate, clamp;
  int64_t cblock;          /* channels per reduction block */
  int64_t row_chunks;
  int64_t chunk_rows, fblock; /* rows and panels per task */
  int64_t f_blocks;
  int bands;               /* threads: tasks in bands of rows (see run_task) */
  int64_t flat_kc_max;     /* full panels take the flat tiles up to this
                            * reduction block (FLAT_KC_MAX*), once per call */
} job_t;

/* The epilogue of a micro-kernel call: (+ C) (+ bias) (clamp), stored. */
TK_INLINE void store_tile(const int mr, const int nv,
                          tk_vec acc[TK_MR_MAX][TK_NV], int nr,
                          float *const *crow, int64_t csf, int load_c,
                          int last, const float *bias, int clamp, float lo,
                          float hi) {
  if (csf == 1) {
    /* Whole vectors, then the panel's partial last one (F % 16 columns:
     * ShuffleNet's 24 and 48 channels) with masked moves. The loops run to
     * nv, a constant at the f32 micro-kernels' calls, so every acc index is
     * one there and the sums
     * stay in registers: indexed by the run-time nr / TK_VW they all went
     * through the stack (8 x 48 tiles at K = 16: a third of their time). */
    const int whole = nr / TK_VW, tail = nr % TK_VW;
    for (int i = 0; i < mr; ++i) {
      for (int v = 0; v < nv; ++v) {
        if (v >= whole)
          break;
        tk_vec r = acc[i][v];
        if (load_c)
          r += tk_load(crow[i] + v * TK_VW);
        if (last && bias)
          r += tk_load(bias + v * TK_VW);
        if (last && clamp)
          r = tk_min(tk_max(r, tk_splat(lo)), tk_splat(hi));
        tk_store(crow[i] + v * TK_VW, r);
      }
      for (int v = 0; v < nv; ++v) {
        if (v != whole || !tail)
          continue;
        float *c = crow[i] + whole * TK_VW;
        tk_vec r = acc[i][v];
        if (load_c)
          r += tk_load_n(c, tail);
        if (last && bias)
          r += tk_load_n(bias + whole * TK_VW, tail);
        if (last && clamp)
          r = tk_min(tk_max(r, tk_splat(lo)), tk_splat(hi));
        tk_store_n(c, r, tail);
      }
    }
    return;
  }
  for (int i = 0; i < mr; ++i) {
    float tmp[TK_NR];
    for (int v = 0; v < nv; ++v)
      tk_store(tmp + v * TK_VW, acc[i][v]);
    for (int j = 0; j < nr; ++j) {
      float r = tmp[j];
      if (load_c)
        r += crow[i][j * csf];
      if (last && bias)
        r += bias[j];
      if (last && clamp)
        r = tk_clamp_scalar(r, lo, hi);
      crow[i][j * csf] = r;
    }
  }
}

/* acc[i][v] (+)= sum over taps t and k of atap[t][i][k*ask] * b[t][k][...]
 * then the epilogue. mr (rows), nv (vectors of the panel actually used) and
 * unit_ask are compile-time constants at every call site, so each instance
 * keeps its mr x nv accumulators in registers. A panel narrower than NR
 * (the last one when F % NR != 0) only computes the vectors it needs. */
TK_INLINE void micro_kernel(const int mr, const int nv, const int unit_ask,
                            int nr, int64_t ntaps, int64_t kc, int64_t ask,
                            const float *const *atap, const float *b,
                            int64_t b_tap_stride,
                            float *const *crow, int64_t csf, int load_c,
                            int last, const float *bias, int clamp, float lo,
                            float hi) {
  tk_vec acc[TK_MR_MAX][TK_NV];
  for (int i = 0; i < mr; ++i)
    for (int v = 0; v < nv; ++v)
      acc[i][v] = tk_splat(0.0f);
  for (int64_t t = 0; t < ntaps; ++t) {
    const float *bt = b + t * b_tap_stride;
    const float *const *ap = atap + t * TK_MR_MAX;
#if TK_VW == 8
    /* AVX2's 16 registers hold 12 accumulators, 2 B vectors and a
     * broadcast, no more: unrolled, the loop loads the next k's B vectors
     * early and spills accumulators to the stack. */
#pragma clang loop unroll(disable)
#endif
    for (int64_t k = 0; k < kc; ++k) {
      tk_vec bv[TK_NV];
      for (int v = 0; v < nv; ++v)
        bv[v] = tk_load(bt + k * TK_NR + v * TK_VW);
      for (int i = 0; i < mr; ++i) {
        const tk_vec a = tk_splat(unit_ask ? ap[i][k] : ap[i][k * ask]);
        for (int v = 0; v < nv; ++v)
          acc[i][v] += a * bv[v];
      }
    }
  }
  store_tile(mr, nv, acc, nr, crow, csf, load_c, last, bias, clamp, lo, hi);
}

#if defined(__x86_64__) && !defined(TESSEL_KERNELS_NO_ASM)
/* What the asm tiles below share: per tap, its six row pointers (atap:
 * TK_MR_MAX per tap) and its weight block (bts floats apart); per k, the
 * panel's next row of TK_NR floats (256 bytes); the accumulators stored to
 * acc[TK_MR_MAX][TK_NV] for store_tile. The body between TK_ASM_TAP_BEGIN
 * and TK_ASM_TAP_END is one k step. */
#define TK_ASM_TILE_LOCALS                                                     \
  tk_vec acc[TK_MR_MAX][TK_NV];                                                \
  const float *const *tap = atap;                                              \
  const float *bt = b;                                                         \
  int64_t taps = ntaps;                                                        \
  const int64_t bts_bytes = bts * (int64_t)sizeof(float);                      \
  const float *a0, *a1, *a2, *a3, *a4, *a5, *bp;                               \
  int64_t k;
#define TK_ASM_TAP_BEGIN                                                       \
  "1:\n\t"                                                                     \
  "mov 0(%[tap]), %[a0]\n\t"                                                   \
  "mov 8(%[tap]), %[a1]\n\t"                                                   \
  "mov 16(%[tap]), %[a2]\n\t"                                                  \
  "mov 24(%[tap]), %[a3]\n\t"                                                  \
  "mov 32(%[tap]), %[a4]\n\t"                                                  \
  "mov 40(%[tap]), %[a5]\n\t"                                                  \
  "mov %[bt], %[bp]\n\t"                                                       \
  "xor %[k], %[k]\n\t"
/* TAP_BYTES: 8 * TK_MR_MAX, as a string. */
#define TK_ASM_TAP_END(TAP_BYTES)                                              \
  "add $256, %[bp]\n\t"                                                        \
  "inc %[k]\n\t"                                                               \
  "cmp %[kc], %[k]\n\t"                                                        \
  "jne 2b\n\t"                                                                 \
  "add $" TAP_BYTES ", %[tap]\n\t"                                             \
  "add %[bts], %[bt]\n\t"                                                      \
  "dec %[taps]\n\t"                                                            \
  "jnz 1b\n\t"
#define TK_ASM_TILE_OUTPUTS                                                    \
  [tap] "+r"(tap), [bt] "+r"(bt), [taps] "+r"(taps), [a0] "=&r"(a0),           \
      [a1] "=&r"(a1), [a2] "=&r"(a2), [a3] "=&r"(a3), [a4] "=&r"(a4),          \
      [a5] "=&r"(a5), [bp] "=&r"(bp), [k] "=&r"(k)
#define TK_ASM_TILE_INPUTS                                                     \
  [kc] "r"(kc), [bts] "r"(bts_bytes), [acc] "r"(&acc[0][0])
#endif

#if TK_VW == 16 && defined(__x86_64__) && !defined(TESSEL_KERNELS_NO_ASM)
/* The 6 x 64 AVX-512 tile, the one that carries nearly all of a CNN's
 * FLOPs, in two forms with the same contract as micro_kernel(6, 4, 1, ...):
 * 24 accumulators, 4 weight vectors per k, then per row either
 *  - micro_kernel_6x64: 4 FMAs taking the row's activation as an embedded
 *    broadcast memory operand ({1to16}): no separate vbroadcastss, whose
 *    shuffle uop competes with the FMAs for a vector pipe on AMD Zen 4 (the
 *    compiled C tile runs at ~90% of the FMA peak there, this one ~95%); or
 *  - micro_kernel_6x64_bcast: one vbroadcastss and 4 register FMAs, the
 *    weight stream prefetched 8 steps ahead: on Intel cores an FMA with an
 *    embedded-broadcast memory operand is two uops and the first form runs
 *    at ~68% of the FMA peak (Sapphire Rapids), this one at ~90% (weights
 *    in L1; the prefetch measured 5-10% on top). Zen 5's full-width units
 *    want this form too: 1024^3 ran at 116 GFLOP/s in the first, 166-193
 *    in this one (peak 206). tk_f32_embedded_broadcast() chooses. */
#define TK_6X64_ZERO                                                           \
  "vpxord %%zmm0, %%zmm0, %%zmm0\n\t"                                          \
  "vmovaps %%zmm0, %%zmm1\n\t" "vmovaps %%zmm0, %%zmm2\n\t"                    \
  "vmovaps %%zmm0, %%zmm3\n\t" "vmovaps %%zmm0, %%zmm4\n\t"                    \
  "vmovaps %%zmm0, %%zmm5\n\t" "vmovaps %%zmm0, %%zmm6\n\t"                    \
  "vmovaps %%zmm0, %%zmm7\n\t" "vmovaps %%zmm0, %%zmm8\n\t"                    \
  "vmovaps %%zmm0, %%zmm9\n\t" "vmovaps %%zmm0, %%zmm10\n\t"                   \
  "vmovaps %%zmm0, %%zmm11\n\t" "vmovaps %%zmm0, %%zmm12\n\t"                  \
  "vmovaps %%zmm0, %%zmm13\n\t" "vmovaps %%zmm0, %%zmm14\n\t"                  \
  "vmovaps %%zmm0, %%zmm15\n\t" "vmovaps %%zmm0, %%zmm16\n\t"                  \
  "vmovaps %%zmm0, %%zmm17\n\t" "vmovaps %%zmm0, %%zmm18\n\t"                  \
  "vmovaps %%zmm0, %%zmm19\n\t" "vmovaps %%zmm0, %%zmm20\n\t"                  \
  "vmovaps %%zmm0, %%zmm21\n\t" "vmovaps %%zmm0, %%zmm22\n\t"                  \
  "vmovaps %%zmm0, %%zmm23\n\t"
#define TK_6X64_WEIGHTS                                                        \
  "vmovups 0(%[bp]), %%zmm24\n\t"                                              \
  "vmovups 64(%[bp]), %%zmm25\n\t"                                             \
  "vmovups 128(%[bp]), %%zmm26\n\t"                                            \
  "vmovups 192(%[bp]), %%zmm27\n\t"
#define TK_6X64_STORE                                                          \
  "vmovups %%zmm0, 0(%[acc])\n\t" "vmovups %%zmm1, 64(%[acc])\n\t"             \
  "vmovups %%zmm2, 128(%[acc])\n\t" "vmovups %%zmm3, 192(%[acc])\n\t"          \
  "vmovups %%zmm4, 256(%[acc])\n\t" "vmovups %%zmm5, 320(%[acc])\n\t"          \
  "vmovups %%zmm6, 384(%[acc])\n\t" "vmovups %%zmm7, 448(%[acc])\n\t"          \
  "vmovups %%zmm8, 512(%[acc])\n\t" "vmovups %%zmm9, 576(%[acc])\n\t"          \
  "vmovups %%zmm10, 640(%[acc])\n\t" "vmovups %%zmm11, 704(%[acc])\n\t"        \
  "vmovups %%zmm12, 768(%[acc])\n\t" "vmovups %%zmm13, 832(%[acc])\n\t"        \
  "vmovups %%zmm14, 896(%[acc])\n\t" "vmovups %%zmm15, 960(%[acc])\n\t"        \
  "vmovups %%zmm16, 1024(%[acc])\n\t" "vmovups %%zmm17, 1088(%[acc])\n\t"      \
  "vmovups %%zmm18, 1152(%[acc])\n\t" "vmovups %%zmm19, 1216(%[acc])\n\t"      \
  "vmovups %%zmm20, 1280(%[acc])\n\t" "vmovups %%zmm21, 1344(%[acc])\n\t"      \
  "vmovups %%zmm22, 1408(%[acc])\n\t" "vmovups %%zmm23, 1472(%[acc])\n\t"
/* Row R's 4 FMAs into accumulators 4R..4R+3, one form or the other. */
#define TK_FMA_EMB(R, V, ACC)                                                  \
  "vfmadd231ps (%[a" #R "],%[k],4)%{1to16%}, %%zmm2" #V ", %%zmm" #ACC "\n\t"
#define TK_ROW_EMB(R, T, C0, C1, C2, C3)                                       \
  TK_FMA_EMB(R, 4, C0) TK_FMA_EMB(R, 5, C1) TK_FMA_EMB(R, 6, C2)              \
  TK_FMA_EMB(R, 7, C3)
#define TK_FMA_REG(T, V, ACC)                                                  \
  "vfmadd231ps %%zmm" #T ", %%zmm2" #V ", %%zmm" #ACC "\n\t"
#define TK_ROW_BCAST(R, T, C0, C1, C2, C3)                                     \
  "vbroadcastss (%[a" #R "],%[k],4), %%zmm" #T "\n\t"                          \
  TK_FMA_REG(T, 4, C0) TK_FMA_REG(T, 5, C1) TK_FMA_REG(T, 6, C2)              \
  TK_FMA_REG(T, 7, C3)
#define TK_PREFETCH_NONE ""
#define TK_PREFETCH_8_STEPS                                                    \
  "prefetcht0 2048(%[bp])\n\t" "prefetcht0 2112(%[bp])\n\t"                    \
  "prefetcht0 2176(%[bp])\n\t" "prefetcht0 2240(%[bp])\n\t"
#define TK_DEFINE_6X64(NAME, ROW, PREFETCH)                                    \
  static void NAME(int nr, int64_t ntaps, int64_t kc,                          \
                   const float *const *atap, const float *b, int64_t bts,     \
                   float *const *crow, int64_t csf, int load_c, int last,     \
                   const float *bias, int clamp, float lo, float hi) {        \
    TK_ASM_TILE_LOCALS                                                         \
    __asm__ volatile(                                                          \
        TK_6X64_ZERO TK_ASM_TAP_BEGIN                                          \
        "2:\n\t" /* per k: 4 weight vectors, 24 FMAs */                        \
        TK_6X64_WEIGHTS PREFETCH                                               \
        ROW(0, 28, 0, 1, 2, 3) ROW(1, 29, 4, 5, 6, 7)                          \
        ROW(2, 28, 8, 9, 10, 11) ROW(3, 29, 12, 13, 14, 15)                    \
        ROW(4, 28, 16, 17, 18, 19) ROW(5, 29, 20, 21, 22, 23)                  \
        TK_ASM_TAP_END("96") /* 12 pointers per tap */                         \
        TK_6X64_STORE                                                          \
        : TK_ASM_TILE_OUTPUTS                                                  \
        : TK_ASM_TILE_INPUTS                                                   \
        : "memory", "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5",      \
          "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12",          \
          "xmm13", "xmm14", "xmm15", "xmm16", "xmm17", "xmm18", "xmm19",      \
          "xmm20", "xmm21", "xmm22", "xmm23", "xmm24", "xmm25", "xmm26",      \
          "xmm27", "xmm28", "xmm29");                                          \
    store_tile(6, 4, acc, nr, crow, csf, load_c, last, bias, clamp, lo, hi);   \
  }
TK_DEFINE_6X64(micro_kernel_6x64, TK_ROW_EMB, TK_PREFETCH_NONE)
TK_DEFINE_6X64(micro_kernel_6x64_bcast, TK_ROW_BCAST, TK_PREFETCH_8_STEPS)
#define TK_HAVE_ASM_6X64 1
#endif

#if TK_VW == 8 && defined(__x86_64__) && defined(__AVX2__) &&                 \
    defined(__FMA__) && !defined(TESSEL_KERNELS_NO_ASM)
/* The 6 x 16 AVX2 tile (12 ymm accumulators, 2 B vectors, a broadcast),
 * written out because clang's allocation of the C version spills
 * accumulators to the stack inside the k loop (AVX2 has 16 registers, the
 * tile needs 15). Same contract as micro_kernel(6, 2, 1, ...): b is the
 * group's first column within the panel (rows of TK_NR floats). */
static void micro_kernel_6x16(int nr, int64_t ntaps, int64_t kc,
                              const float *const *atap, const float *b,
                              int64_t bts, float *const *crow, int64_t csf,
                              int load_c, int last, const float *bias,
                              int clamp, float lo, float hi) {
  TK_ASM_TILE_LOCALS
  __asm__ volatile(
      "vxorps %%ymm0, %%ymm0, %%ymm0\n\t"
      "vxorps %%ymm1, %%ymm1, %%ymm1\n\t" "vxorps %%ymm2, %%ymm2, %%ymm2\n\t"
      "vxorps %%ymm3, %%ymm3, %%ymm3\n\t" "vxorps %%ymm4, %%ymm4, %%ymm4\n\t"
      "vxorps %%ymm5, %%ymm5, %%ymm5\n\t" "vxorps %%ymm6, %%ymm6, %%ymm6\n\t"
      "vxorps %%ymm7, %%ymm7, %%ymm7\n\t" "vxorps %%ymm8, %%ymm8, %%ymm8\n\t"
      "vxorps %%ymm9, %%ymm9, %%ymm9\n\t" "vxorps %%ymm10, %%ymm10, %%ymm10\n\t"
      "vxorps %%ymm11, %%ymm11, %%ymm11\n\t"
      TK_ASM_TAP_BEGIN
      "2:\n\t" /* per k: 2 weight vectors, 12 FMAs */
      "vmovups 0(%[bp]), %%ymm12\n\t"
      "vmovups 32(%[bp]), %%ymm13\n\t"
      "vbroadcastss (%[a0],%[k],4), %%ymm14\n\t"
      "vbroadcastss (%[a1],%[k],4), %%ymm15\n\t"
      "vfmadd231ps %%ymm12, %%ymm14, %%ymm0\n\t"
      "vfmadd231ps %%ymm13, %%ymm14, %%ymm1\n\t"
      "vfmadd231ps %%ymm12, %%ymm15, %%ymm2\n\t"
      "vfmadd231ps %%ymm13, %%ymm15, %%ymm3\n\t"
      "vbroadcastss (%[a2],%[k],4), %%ymm14\n\t"
      "vbroadcastss (%[a3],%[k],4), %%ymm15\n\t"
      "vfmadd231ps %%ymm12, %%ymm14, %%ymm4\n\t"
      "vfmadd231ps %%ymm13, %%ymm14, %%ymm5\n\t"
      "vfmadd231ps %%ymm12, %%ymm15, %%ymm6\n\t"
      "vfmadd231ps %%ymm13, %%ymm15, %%ymm7\n\t"
      "vbroadcastss (%[a4],%[k],4), %%ymm14\n\t"
      "vbroadcastss (%[a5],%[k],4), %%ymm15\n\t"
      "vfmadd231ps %%ymm12, %%ymm14, %%ymm8\n\t"
      "vfmadd231ps %%ymm13, %%ymm14, %%ymm9\n\t"
      "vfmadd231ps %%ymm12, %%ymm15, %%ymm10\n\t"
      "vfmadd231ps %%ymm13, %%ymm15, %%ymm11\n\t"
      TK_ASM_TAP_END("48") /* 6 pointers per tap */
      /* acc[i][v] at i * TK_NV * 32 + v * 32 */
      "vmovups %%ymm0, 0(%[acc])\n\t" "vmovups %%ymm1, 32(%[acc])\n\t"
      "vmovups %%ymm2, 256(%[acc])\n\t" "vmovups %%ymm3, 288(%[acc])\n\t"
      "vmovups %%ymm4, 512(%[acc])\n\t" "vmovups %%ymm5, 544(%[acc])\n\t"
      "vmovups %%ymm6, 768(%[acc])\n\t" "vmovups %%ymm7, 800(%[acc])\n\t"
      "vmovups %%ymm8, 1024(%[acc])\n\t" "vmovups %%ymm9, 1056(%[acc])\n\t"
      "vmovups %%ymm10, 1280(%[acc])\n\t" "vmovups %%ymm11, 1312(%[acc])\n\t"
      : TK_ASM_TILE_OUTPUTS
      : TK_ASM_TILE_INPUTS
      : "memory", "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5",
        "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13",
        "xmm14", "xmm15");
  store_tile(6, 2, acc, nr, crow, csf, load_c, last, bias, clamp, lo, hi);
}
#define TK_HAVE_ASM_6X16 1
#endif

/* Strided activations (not produced by Tessel's own pipeline, which keeps
 * channels contiguous): one generic instance, rows and vectors at run
 * time. */
static void micro_kernel_strided(int mr, int nr, int64_t ntaps, int64_t kc,
                                 int64_t ask, const float *const *atap,
                                 const float *b, int64_t bts,
                                 float *const *crow, int64_t csf, int load_c,
                                 int last, const float *bias, int clamp,
                                 float lo, float hi) {
  micro_kernel(1, TK_NV, 0, nr, ntaps, kc, ask, atap, b, bts, crow, csf,
               load_c, last, bias, clamp, lo, hi);
  if (mr > 1)
    micro_kernel_strided(mr - 1, nr, ntaps, kc, ask, atap + 1, b, bts,
                         crow + 1, csf, load_c, last, bias, clamp, lo, hi);
}

#define MK_ARGS                                                                \
  nr, ntaps, kc, ask, atap, b, bts, crow, csf, load_c, last, bias, clamp, lo,  \
      hi
#define MK_CASE(MR, NV)                                                        \
  case MR:                                                                     \
    micro_kernel(MR, NV, 1, MK_ARGS);                                          \
    return;

static void micro_dispatch(int mr, int nv, int nr, int64_t ntaps,
                           int64_t kc, int64_t ask, const float *const *atap,
                           const float *b, int64_t bts, float *const *crow,
                           int64_t csf, int load_c, int last,
                           const float *bias, int clamp, float lo, float hi) {
  if (ask != 1) {
    micro_kernel_strided(mr, nr, ntaps, kc, ask, atap, b, bts, crow, csf,
                         load_c, last, bias, clamp, lo, hi);
    return;
  }
#ifdef TK_HAVE_ASM_6X64
  if (mr == 6 && nv == 4) {
    (tk_f32_embedded_broadcast() ? micro_kernel_6x64 : micro_kernel_6x64_bcast)(
        nr, ntaps, kc, atap, b, bts, crow, csf, load_c, last, bias, clamp, lo,
        hi);
    return;
  }
#endif
#if TK_MR_MAX >= 12
  TK_SWITCH_TILES(mr, nv, MK_CASE)
#elif TK_GV < TK_NV
  _Static_assert(TK_GV == 2 && TK_NV == 8, "AVX2: 8 vectors a panel");
  /* Column groups, all rows of the tile each (the rows' activations come
   * again from L1 for each group): 6 rows x 2 vectors, or for the short
   * tiles at the end of a row range as many vectors as keep 8 or more
   * independent accumulators (1 row x 8, 2 x 4), since one chain of FMAs
   * waits 4 cycles per step. */
  const int gvec = mr == 1 ? 8 : mr == 2 ? 4 : TK_GV;
  for (int v0 = 0; v0 < nv; v0 += gvec) {
    const int64_t c0 = (int64_t)v0 * TK_VW;
    const int gv = nv - v0 < gvec ? nv - v0 : gvec;
    const int gnr = nr - c0 < gv * TK_VW ? (int)(nr - c0) : gv * TK_VW;
    float *grow[TK_MR_MAX];
    for (int i = 0; i < mr; ++i)
      grow[i] = crow[i] + c0 * csf;
    const float *gb = b + c0, *gbias = bias ? bias + c0 : NULL;
#ifdef TK_HAVE_ASM_6X16
    if (mr == 6 && gv == 2) {
      micro_kernel_6x16(gnr, ntaps, kc, atap, gb, bts, grow, csf, load_c, last,
                        gbias, clamp, lo, hi);
      continue;
    }
#endif
#define MK_G(MR, GV)                                                           \
  case GV:                                                                     \
    micro_kernel(MR, GV, 1, gnr, ntaps, kc, ask, atap, gb, bts, grow, csf,     \
                 load_c, last, gbias, clamp, lo, hi);                          \
    break;
#define MK_GR(MR, GV)                                                          \
  case MR:                                                                     \
    micro_kernel(MR, GV, 1, gnr, ntaps, kc, ask, atap, gb, bts, grow, csf,     \
                 load_c, last, gbias, clamp, lo, hi);                          \
    break;
    if (mr == 1)
      switch (gv) {
        MK_G(1, 1) MK_G(1, 2) MK_G(1, 3) MK_G(1, 4) MK_G(1, 5) MK_G(1, 6)
        MK_G(1, 7) MK_G(1, 8)
      }
    else if (mr == 2)
      switch (gv) { MK_G(2, 1) MK_G(2, 2) MK_G(2, 3) MK_G(2, 4) }
    else if (gv == 2)
      switch (mr) { MK_GR(3, 2) MK_GR(4, 2) MK_GR(5, 2) MK_GR(6, 2) }
    else
      switch (mr) { MK_GR(3, 1) MK_GR(4, 1) MK_GR(5, 1) MK_GR(6, 1) }
#undef MK_GR
#undef MK_G
  }
#else
  (void)nv;
  micro_kernel(1, TK_NV, 1, MK_ARGS);
  if (mr > 1)
    micro_dispatch(mr - 1, nv, nr, ntaps, kc, ask, atap + 1, b, bts, crow + 1,
                   csf, load_c, last, bias, clamp, lo, hi);
#endif
}

/* The runs [live[2r], live[2r + 1]) of taps that some of the tile's mr
 * rows read from the image (a tap whose every row points at `zeros` is in
 * the padding: a dilated ASPP branch at 28x28 with dilation 36 reads only
 * its centre tap); their count, at least 1 (a tile all in the padding
 * keeps its first tap, which writes the zeros and the epilogue). */
static int live_runs(const float *const *atap, int64_t ntaps, int mr,
                     const float *zeros, int64_t *live) {
  int n = 0;
  for (int64_t t = 0; t < ntaps; ++t) {
    int used = 0;
    for (int i = 0; i < mr && !used; ++i)
      used = atap[t * TK_MR_MAX + i] != zeros;
    if (!used)
      continue;
    if (n > 0 && live[2 * n - 1] == t)
      live[2 * n - 1] = t + 1;
    else {
      live[2 * n] = t;
      live[2 * n + 1] = t + 1;
      ++n;
    }
  }
  if (n == 0) {
    live[0] = 0;
    live[1] = 1;
    n = 1;
  }
  return n;
}

/* Columns of packed panel p: TK_NR, or F % TK_NR for the last. */
TK_INLINE int panel_width(const job_t *j, int64_t p) {
  return (p + 1) * TK_NR <= j->F ? TK_NR : (int)(j->F - p * TK_NR);
}

static void run_task(void *arg, int64_t task) {
  const job_t *j = (const job_t *)arg;
  /* One thread: task = (fb * N + n) * row_chunks + rc, consecutive tasks
   * share one weight block. On T threads the row chunks u = n *
   * row_chunks + rc are cut into T bands (tk_parallel_for_bands), band b
   * holding units [b U / T, (b + 1) U / T) and their tasks in the same
   * order within the band: thread b computes the same rows of every
   * layer. */
  int64_t u = task, fb = 0;
  if (j->bands > 1) {
    const int64_t U = j->N * j->row_chunks, T = j->bands;
    int64_t b = task / j->f_blocks * T / U;
    while (b + 1 < T && (b + 1) * U / T * j->f_blocks <= task)
      ++b;
    while (b > 0 && b * U / T * j->f_blocks > task)
      --b;
    const int64_t u0 = b * U / T, len = (b + 1) * U / T - u0;
    const int64_t t = task - u0 * j->f_blocks;
    fb = t / len;
    u = u0 + t % len;
  } else {
    fb = task / (j->row_chunks * j->N);
    u = task % (j->row_chunks * j->N);
  }
  const int64_t rc = u % j->row_chunks;
  const int64_t n = u / j->row_chunks;
  const int64_t rows = j->OH * j->OW;
  const int64_t r0 = rc * j->chunk_rows;
  const int64_t r1 = r0 + j->chunk_rows < rows ? r0 + j->chunk_rows
                                                   : rows;
  const int64_t p0 = fb * j->fblock;
  const int64_t npanels = (j->F + TK_NR - 1) / TK_NR;
  const int64_t p1 = p0 + j->fblock < npanels ? p0 + j->fblock : npanels;
  const float *in_n = j->in + n * j->in_sn;
  float *out_n = j->out + n * j->out_sn;
  /* f32 weights only (the bf16 ones are wpb, indexed where used). */
  const float *wp_n = j->wp ? j->wp + n * j->wp_sn : NULL;
  const int64_t nblocks = (j->C + j->cblock - 1) / j->cblock;

  /* Output rows of the chunk (pixels: a row tile may cross image rows). */
  int64_t r_oh[ROW_TILES * TK_MR], r_ow[ROW_TILES * TK_MR];
  if (!j->flat) {
    /* One division per task, not per row (a narrow layer's task is only
     * a few thousand FMAs). */
    int64_t oh = r0 / j->OW, ow = r0 % j->OW;
    for (int64_t r = r0; r < r1; ++r) {
      r_oh[r - r0] = oh;
      r_ow[r - r0] = ow;
      if (++ow == j->OW) {
        ow = 0;
        ++oh;
      }
    }
  }
  /* Per tap and row of a tile, where its activations start: the input
   * pixel, or the zero row when the tap falls into the padding. */
  const float *atap_small[64 * TK_MR_MAX];
  const float **atap = j->ntaps <= 64
                           ? atap_small
                           : (const float **)malloc(sizeof(float *) *
                                                    j->ntaps * TK_MR_MAX);
  /* Runs of taps that read the image for some row of the tile (begin,
   * end pairs): a tap in the padding for every row adds nothing. */
  int64_t live_small[2 * 64];
  int64_t *live = j->ntaps <= 64
                      ? live_small
                      : (int64_t *)malloc(sizeof(int64_t) * 2 * j->ntaps);
  if (!atap || !live)
    abort(); /* out of memory for a pointer table: nothing sane to return */
  /* bf16: the row tile's activations, rounded (row i at i * arow_len). */
  const int64_t arow_len = j->ntaps * j->cblock + 1;
  uint16_t *abuf = NULL;
  if (j->wpb) {
    abuf = (uint16_t *)malloc(sizeof(uint16_t) * TK_MR_MAX * arow_len);
    if (!abuf)
      abort(); /* out of memory for a row tile: nothing sane to return */
  }
  /* Full-width panels share one row step; a narrower last panel (F % NR)
   * has its own. The tap table of a row tile is built once per step. */
  const int64_t full_end = j->F / TK_NR < p1 ? j->F / TK_NR : p1;
  for (int64_t cb = 0; cb < nblocks; ++cb) {
    const int64_t c0 = cb * j->cblock;
    const int64_t kc = c0 + j->cblock < j->C ? j->cblock : j->C - c0;
    const int load_c = j->accumulate || cb > 0;
    const int last = cb == nblocks - 1;
    for (int pass = 0; pass < 2; ++pass) {
      /* pass 0: full panels [p0, full_end); pass 1: the narrow one */
      const int64_t pa = pass == 0 ? p0 : (full_end > p0 ? full_end : p0);
      const int64_t pb = pass == 0 ? full_end : p1;
      if (pa >= pb)
        continue;
      const int nr0 = panel_width(j, pa);
      const int nv = (nr0 + TK_VW - 1) / TK_VW;
      const int step = TK_MR_FOR(nv);
#ifdef TK_HAVE_FLAT_TILES
      /* Pointwise rows at one stride, f32: FlatTilesF32.h's tiles, for
       * the narrow panels and under a short reduction, where the row
       * pointer table and the accumulators' trip through memory cost as
       * much as the FMAs, and for the rows left after the last full 6 x
       * 64 tile (ViT's 197 tokens: 5). */
      const int flat_tiles =
          j->flat && !abuf && j->in_sc == 1 && j->out_sf == 1;
      const int all_flat = flat_tiles && (nv < TK_NV || kc <= j->flat_kc_max);
#endif
      for (int64_t r = r0; r < r1; r += step) {
        const int mr = r + step <= r1 ? step : (int)(r1 - r);
#ifdef TK_HAVE_FLAT_TILES
        if (flat_tiles && (all_flat || mr < step)) {
          for (int64_t p = pa; p < pb; ++p)
            flat_dispatch(
                mr, nv, panel_width(j, p), kc, in_n + r * j->in_sw + c0,
                j->in_sw, wp_n + p * j->wp_panel + c0 * TK_NR,
                out_n + p * TK_NR + r * j->out_sw, j->out_sw, load_c, last,
                j->bias ? j->bias + p * TK_NR : NULL, j->clamp, j->lo, j->hi);
          continue;
        }
#endif
        for (int i = 0; i < mr && j->flat; ++i)
          atap[i] = in_n + (r + i) * j->in_sw + c0 * j->in_sc;
        /* Stems (few channels, wide filters): when every row of the tile
         * has its whole filter row inside the image, a filter row is one
         * tap of KW * C channels, matching the packed weights' (kw, c)
         * order, so the micro-kernel runs KH long taps instead of KH * KW
         * short ones. */
        int merged = j->merge_kw;
        for (int i = 0; i < mr && merged; ++i) {
          const int64_t iw0 = r_ow[r - r0 + i] * j->stride_w - j->pad_left;
          merged = iw0 >= 0 && iw0 + j->KW <= j->W;
        }
        for (int i = 0; i < mr && merged; ++i) {
          const int64_t ih0 = r_oh[r - r0 + i] * j->stride_h - j->pad_top;
          const int64_t iw0 = r_ow[r - r0 + i] * j->stride_w - j->pad_left;
          for (int64_t kh = 0; kh < j->ntaps / j->KW; ++kh) {
            const int64_t ih = ih0 + kh * j->dil_h;
            atap[kh * TK_MR_MAX + i] =
                ih >= 0 && ih < j->H ? in_n + ih * j->in_sh + iw0 * j->in_sw
                                     : j->zeros;
          }
        }
        for (int i = 0; i < mr && !j->flat && !merged; ++i) {
          const int64_t oh = r_oh[r - r0 + i], ow = r_ow[r - r0 + i];
          const int64_t ih0 = oh * j->stride_h - j->pad_top;
          const int64_t iw0 = ow * j->stride_w - j->pad_left;
          int64_t t = 0;
          for (int64_t kh = 0; kh < j->ntaps / j->KW; ++kh) {
            const int64_t ih = ih0 + kh * j->dil_h;
            const int row_ok = ih >= 0 && ih < j->H;
            const float *rowp = in_n + ih * j->in_sh + c0 * j->in_sc;
            for (int64_t kw = 0; kw < j->KW; ++kw, ++t) {
              const int64_t iw = iw0 + kw * j->dil_w;
              atap[t * TK_MR_MAX + i] = row_ok && iw >= 0 && iw < j->W
                                            ? rowp + iw * j->in_sw
                                            : j->zeros;
            }
          }
        }
        if (abuf)
          tk_bf16_round_rows(abuf, arow_len, atap, TK_MR_MAX, mr,
                             merged ? j->ntaps / j->KW : j->ntaps,
                             merged ? j->KW * kc : kc, j->in_sc);
        const int64_t ntaps = merged ? j->ntaps / j->KW : j->ntaps;
        const int nlive = live_runs(atap, ntaps, mr, j->zeros, live);
        for (int64_t p = pa; p < pb; ++p) {
          const int nr = panel_width(j, p);
          float *crow[TK_MR_MAX];
          float *out_p = out_n + p * TK_NR * j->out_sf;
          for (int i = 0; i < mr; ++i)
            crow[i] = j->flat ? out_p + (r + i) * j->out_sw
                              : out_p + r_oh[r - r0 + i] * j->out_sh +
                                    r_ow[r - r0 + i] * j->out_sw;
          if (abuf) {
            /* One reduction block of all channels: the rows and the
             * panel's weights are each one run over every tap. */
            const int whole = kc == j->C;
            tk_vec acc[TK_MR_MAX][TK_NV];
            tk_bf16_tile(mr, nv, whole ? 1 : j->ntaps,
                         whole ? (j->ntaps * kc + 1) / 2 : kc / 2, abuf,
                         arow_len, kc,
                         j->wpb + n * j->wp_sn + p * j->wp_panel + c0 * TK_NR,
                         j->C * TK_NR, acc);
            store_tile(mr, nv, acc, nr, crow, j->out_sf, load_c, last,
                       j->bias ? j->bias + p * TK_NR : NULL, j->clamp, j->lo,
                       j->hi);
            continue;
          }
          /* One call per run of live taps, the first storing as the
           * block would, the others adding, the last the epilogue. */
          const int64_t bts = (merged ? j->KW : 1) * j->C * TK_NR;
          const float *bp = wp_n + p * j->wp_panel + c0 * TK_NR;
          for (int run = 0; run < nlive; ++run) {
            const int64_t t0 = live[2 * run], t1 = live[2 * run + 1];
            micro_dispatch(mr, nv, nr, t1 - t0, merged ? j->KW * kc : kc,
                           j->in_sc, atap + t0 * TK_MR_MAX, bp + t0 * bts,
                           bts, crow, j->out_sf, load_c || run > 0,
                           last && run == nlive - 1,
                           j->bias ? j->bias + p * TK_NR : NULL, j->clamp,
                           j->lo, j->hi);
          }
        }
      }
    }
  }
  if (atap != atap_small)
    free(atap);
  if (live != live_small)
    free(live);
  free(abuf);
}

/* Both entry points: weights wp (f32) or wpb (bf16 pairs). */
static void conv_gemm(
    int64_t N, int64_t OH, int64_t OW, int64_t F, int64_t KH, int64_t KW,
    int64_t C, int64_t H, int64_t W, int64_t pad_top, int64_t pad_left,
    const float *in, int64_t in_sn, int64_t in_sh, int64_t in_sw,
    int64_t in_sc, int64_t stride_h, int64_t stride_w, int64_t dil_h,
    int64_t dil_w, const float *wp, const uint16_t *wpb, int64_t wp_sn,
    float *out, int64_t out_sn, int64_t out_sh, int64_t out_sw,
    int64_t out_sf, const float *bias, float lo, float hi, int32_t flags) {
  if (N <= 0 || OH <= 0 || OW <= 0 || F <= 0)
    return;
  const int accumulate = (flags & TESSEL_KERNEL_ACCUMULATE) != 0;
  const int clamp = tk_has_clamp(lo, hi);
  if (KH * KW * C == 0) { /* empty reduction: only the epilogue */
    for (int64_t n = 0; n < N; ++n)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow)
          for (int64_t f = 0; f < F; ++f) {
            float *o = out + n * out_sn + oh * out_sh + ow * out_sw +
                       f * out_sf;
            float r = (accumulate ? *o : 0.0f) + (bias ? bias[f] : 0.0f);
            *o = clamp ? tk_clamp_scalar(r, lo, hi) : r;
          }
    return;
  }
  /* Stems (few input channels): vectorized over output pixels. */
  if (!wpb && tk_conv_stem_f32(N, OH, OW, F, KH, KW, C, H, W, pad_top,
                               pad_left, in, in_sn, in_sh, in_sw, in_sc,
                               stride_h, stride_w, dil_h, dil_w, wp, wp_sn,
                               out, out_sn, out_sh, out_sw, out_sf, bias, lo,
                               hi, accumulate))
    return;
  if (wpb) {
    const tk_bf16_conv_t amx = {
        N, OH, OW, F, KH, KW, C, H, W, pad_top, pad_left, in, in_sn, in_sh,
        in_sw, in_sc, stride_h, stride_w, dil_h, dil_w, wpb, wp_sn,
        ((KH * KW * C + 1) & ~(int64_t)1) * TK_NR, out, out_sn, out_sh,
        out_sw, out_sf, bias, lo, hi, accumulate, clamp};
    if (tk_bf16_conv_amx(&amx))
      return;
  }
  /* The reduction block walks all taps for a slice of channels, so the
   * weights it touches per panel are KH*KW*cblock*NR floats. */
  int64_t cblock = KBLOCK / (KH * KW);
  if (cblock < 8)
    cblock = 8;
  if (cblock > C)
    cblock = C;
  /* Equal blocks (256 channels in 3x3 taps: 86+85+85, not 113+113+30). */
  const int64_t nblocks = (C + cblock - 1) / cblock;
  cblock = (C + nblocks - 1) / nblocks;
  /* bf16 pairs never straddle a block: blocks of an even channel count,
   * one block for an odd one. */
  if (wpb && cblock < C)
    cblock = C % 2 ? C : (cblock + 1) & ~(int64_t)1;

  const int64_t rows = OH * OW;
  /* Task size: ROW_TILES row tiles x FBLOCK panels, made smaller when that
   * leaves fewer than 4 tasks per thread (late, small layers), so that
   * every thread gets work and the last task does not run alone. */
  const int64_t npanels = (F + TK_NR - 1) / TK_NR;
  int64_t chunk_rows = ROW_TILES * TK_MR, fblock = FBLOCK;
  const int threads = tk_threads_for(N * rows * F * KH * KW * C);
  for (;;) {
    const int64_t tasks = N * ((rows + chunk_rows - 1) / chunk_rows) *
                          ((npanels + fblock - 1) / fblock);
    if (threads <= 1 || tasks >= 4 * (int64_t)threads)
      break;
    if (fblock > 1)
      fblock = 1;
    else if (chunk_rows > TK_MR)
      chunk_rows = (chunk_rows / 2 + TK_MR - 1) / TK_MR * TK_MR;
    else
      break;
  }
  const int64_t row_chunks = (rows + chunk_rows - 1) / chunk_rows;
  const int64_t f_blocks = (npanels + fblock - 1) / fblock;
  /* Padding taps read a zero row of kc channels at stride in_sc. */
  static const float zeros_small[KBLOCK];
  const int64_t zero_len = (cblock - 1) * (in_sc > 0 ? in_sc : 1) + 1;
  float *zeros_big = NULL;
  if (zero_len > KBLOCK) {
    zeros_big = (float *)calloc((size_t)zero_len, sizeof(float));
    if (!zeros_big)
      abort(); /* out of memory: nothing sane to return */
  }
  /* (One output row, as a matmul's: its row strides are never used.) */
  const int flat = KH == 1 && KW == 1 && pad_top == 0 && pad_left == 0 &&
                   stride_h == 1 && stride_w == 1 && H == OH && W == OW &&
                   (OH == 1 || (in_sh == OW * in_sw && out_sh == OW * out_sw));
  const int merge_kw = !flat && KW > 1 && cblock == C && in_sc == 1 &&
                       in_sw == C && dil_w == 1 && KW * C <= KBLOCK;
  job_t job = {N,
               OH,
               OW,
               F,
               C,
               KH * KW,
               KW,
               H,
               W,
               pad_top,
               pad_left,
               dil_h,
               dil_w,
               zeros_big ? zeros_big : zeros_small,
               flat,
               merge_kw,
               in,
               in_sn,
               in_sh,
               in_sw,
               in_sc,
               stride_h,
               stride_w,
               wp,
               wpb,
               wp_sn,
               (wpb ? (KH * KW * C + 1) & ~(int64_t)1 : KH * KW * C) * TK_NR,
               out,
               out_sn,
               out_sh,
               out_sw,
               out_sf,
               bias,
               lo,
               hi,
               accumulate,
               clamp,
               cblock,
               row_chunks,
               chunk_rows,
               fblock,
               f_blocks,
               0,
               tk_f32_embedded_broadcast() ? FLAT_KC_MAX_EMBEDDED
                                           : FLAT_KC_MAX};
  /* Bands of rows where there are rows for every thread (a matmul of one
   * row, a classifier's, is split by panels). */
  if (threads > 1 && N * row_chunks >= threads) {
    job.bands = threads;
    tk_parallel_for_bands(threads, N * row_chunks, f_blocks, run_task, &job);
  } else {
    tk_parallel_for_on(threads, f_blocks * N * row_chunks, run_task, &job);
  }
  free(zeros_big);
}

void tessel_kernel_conv2d_nhwc_f32(
    int64_t N, int64_t OH, int64_t OW, int64_t F, int64_t KH, int64_t KW,
    int64_t C, int64_t H, int64_t W, int64_t pad_top, int64_t pad_left,
    const float *in, int64_t in_sn, int64_t in_sh, int64_t in_sw,
    int64_t in_sc, int64_t stride_h, int64_t stride_w, int64_t dil_h,
    int64_t dil_w, const float *wp, int64_t wp_sn, float *out, int64_t out_sn,
    int64_t out_sh, int64_t out_sw, int64_t out_sf, const float *bias,
    float lo, float hi, int32_t flags) {
  conv_gemm(N, OH, OW, F, KH, KW, C, H, W, pad_top, pad_left, in, in_sn,
            in_sh, in_sw, in_sc, stride_h, stride_w, dil_h, dil_w, wp, NULL,
            wp_sn, out, out_sn, out_sh, out_sw, out_sf, bias, lo, hi, flags);
}

void tessel_kernel_conv2d_nhwc_bf16(
    int64_t N, int64_t OH, int64_t OW, int64_t F, int64_t KH, int64_t KW,
    int64_t C, int64_t H, int64_t W, int64_t pad_top, int64_t pad_left,
    const float *in, int64_t in_sn, int64_t in_sh, int64_t in_sw,
    int64_t in_sc, int64_t stride_h, int64_t stride_w, int64_t dil_h,
    int64_t dil_w, const uint16_t *wp, int64_t wp_sn, float *out,
    int64_t out_sn, int64_t out_sh, int64_t out_sw, int64_t out_sf,
    const float *bias, float lo, float hi, int32_t flags) {
  conv_gemm(N, OH, OW, F, KH, KW, C, H, W, pad_top, pad_left, in, in_sn,
            in_sh, in_sw, in_sc, stride_h, stride_w, dil_h, dil_w, NULL, wp,
            wp_sn, out, out_sn, out_sh, out_sw, out_sf, bias, lo, hi, flags);
}

void tessel_kernel_matmul_f32(int64_t batch, int64_t M, int64_t N, int64_t K,
                              const float *a, int64_t a_sb, int64_t a_sm,
                              int64_t a_sk, const float *bp, int64_t bp_sb,
                              float *c, int64_t c_sb, int64_t c_sm,
                              int64_t c_sn, const float *bias, float lo,
                              float hi, int32_t flags) {
  /* A matmul is a 1x1 convolution over a 1 x M "image" of K channels. */
  tessel_kernel_conv2d_nhwc_f32(batch, 1, M, N, 1, 1, K, 1, M, 0, 0, a, a_sb,
                                0, a_sm,
                                a_sk, 1, 1, 1, 1, bp, bp_sb, c, c_sb, 0, c_sm,
                                c_sn, bias, lo, hi, flags);
}
