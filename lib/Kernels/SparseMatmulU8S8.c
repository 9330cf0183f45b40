/* SparseMatmulU8S8.c - int8 matmul and convolution with a sparse constant
 * weight, finished by the requantizing epilogue
 * (tessel_kernel_sparse_matmul_u8s8_requant,
 * tessel_kernel_sparse_conv2d_u8s8_requant) or stored as the exact int32
 * sums (tessel_kernel_sparse_{matmul,conv2d}_u8s8_i32; Kernels.td).
 *
 * The dense int8 kernel's vpdpbusd multiplies 4 consecutive k of a row by
 * 4 bytes of a column. Here those 4 k of one column ("a quad") are the unit
 * of sparsity: B is stored as blocks of 4 k x R columns (R = 1 or 4) that
 * hold a nonzero, and the work is vectorized over rows, as the f32 sparse
 * kernels' is (SparseTiles.c). A band of rows is laid out quad-major
 * (lay[g][m] = the 4 bytes of row m at k = 4g .. 4g + 3, one int32 lane),
 * and each nonzero block loads TM vectors of 16 rows' quads and runs R
 * vpdpbusd against its columns' 4 bytes broadcast: 64 multiply-adds each,
 * none spent on quads of zeros. A group of 16 columns' sums are
 * transposed to rows in registers and finished by the dense kernel's
 * epilogue (Requantize.h), zero-point corrections included: the outputs
 * are bit for bit the dense kernel's.
 *
 * A quad of an unstructured weight holds a nonzero with odds 1 - z^4 at
 * zero fraction z (0.59 at 80%, 0.34 at 90%): the gain is from weights
 * pruned in quads of inputs, or very sparse. The compiler's cost model
 * (SparsifyInt8Weights.cpp) decides.
 *
 * Without VNNI (checked at run time, as the dense kernel does) the same
 * layout runs through portable C: correct, not fast; the compiler chooses
 * these kernels for AVX-512 targets only.
 */
#include "Im2colSegments.h"
#include "Requantize.h"
#include "SparseTiles.h"
#include "ThreadPool.h"
#include "TransposeBlock.h"
#include "tessel/Kernels/tessel_kernels.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define KG TESSEL_KERNEL_KGROUP_I8
/* Output columns finished together: the epilogue's row of TK_RQ_NR. (16
 * at a time ran the epilogue's 64-column body on a quarter of its lanes:
 * half of a 3136 x 64 x 256 call's time.) */
#define GROUP TK_RQ_NR
/* Rows a tile holds at most: 8 vectors of 16. */
#define TMAX 8
#define TROWS (TMAX * 16)
/* Rows per band: the band's layout (K bytes a row) stays in L2. */
#define BAND_BYTES (256 * 1024)

typedef struct {
  int64_t M, N, K, G;
  /* Row m of image b: a + b*a_sb + m*a_sm (ow = 0), or the convolution's
   * im2col row of pixel (m / ow, m % ow) at a + b*a_sb + (m/ow)*a_sh +
   * (m%ow)*a_sw, nseg segments of seg_len bytes at seg_off[s]. */
  const uint8_t *a;
  int64_t a_sb, a_sm, ow, a_sh, a_sw;
  const int64_t *seg_off;
  int64_t nseg, seg_len;
  uint32_t flip;
  int32_t a_zp, b_zp; /* a_zp with the flip's 128 */
  int64_t R;
  const int32_t *ptr, *kidx;
  const int8_t *val;
  const int32_t *colsum; /* NULL when a_zp is 0 */
  char *c;
  int64_t c_sb, c_sm, c_sn, out_bytes;
  const struct epilogue *ep; /* NULL: the int32 sums, stored (tk_finish_i32) */
  tk_finish_fn finish;
  int accumulate; /* with no epilogue: the sums added to c */
  int64_t band, lstride, nbands, nsplit;
  const int64_t *bounds; /* nsplit + 1 column-group bounds */
  int vnni;
  int in_place; /* rows_in_place(), set by run_sparse */
} sjob_t;

/* Row m's bytes, K of them then zeros up to G quads, flipped. */
static void gather_row(const sjob_t *j, const uint8_t *img, int64_t m,
                       uint8_t *row) {
  const int64_t kp = j->G * KG;
  if (m >= j->M) {
    memset(row, 0, (size_t)kp);
    return;
  }
  const uint8_t *src =
      j->ow ? img + (m / j->ow) * j->a_sh + (m % j->ow) * j->a_sw
            : img + m * j->a_sm;
  for (int64_t s = 0; s < j->nseg; ++s)
    memcpy(row + s * j->seg_len, src + j->seg_off[s], (size_t)j->seg_len);
  if (j->flip)
    for (int64_t k = 0; k < j->K; ++k)
      row[k] ^= 0x80;
  memset(row + j->K, 0, (size_t)(kp - j->K));
}

/* Whether rows can be laid out straight from where they lie (the job's
 * in_place, once per call): one segment of whole quads, 4-byte aligned at
 * 4-byte strides, and no row sums to take on the way. */
static int rows_in_place(const sjob_t *j) {
  const int64_t step = j->ow ? j->a_sw : j->a_sm;
  return j->nseg == 1 && j->K % KG == 0 && !j->b_zp && step % KG == 0 &&
         (j->ow == 0 || j->a_sh % KG == 0) && j->a_sb % KG == 0 &&
         j->seg_off[0] % KG == 0 && (uintptr_t)j->a % KG == 0;
}

/* Band rows [m0, m0 + rpad) of image img quad-major into lay (rpad lanes
 * a quad row, rows past M zero), and each row's byte sum into rsum when
 * the weights' zero point needs it. In place, the runs of rows at one
 * stride (a matmul's band; a convolution's pixels of one output row) are
 * transposed from the input; else each row is gathered first. */
static void lay_out_band(const sjob_t *j, const uint8_t *img, int64_t m0,
                         int64_t rpad, int32_t *lay, uint8_t *rows,
                         int32_t *rsum) {
  const int64_t kp = j->G * KG;
  if (j->in_place) {
    const int64_t end = j->M - m0 < rpad ? j->M - m0 : rpad;
    for (int64_t r = 0; r < end;) {
      const int64_t m = m0 + r;
      const uint8_t *src;
      int64_t run, step;
      if (j->ow) {
        src = img + (m / j->ow) * j->a_sh + (m % j->ow) * j->a_sw +
              j->seg_off[0];
        run = j->ow - m % j->ow, step = j->a_sw;
      } else {
        src = img + m * j->a_sm, run = end - r, step = j->a_sm;
      }
      run = run < end - r ? run : end - r;
      /* Bits moved as floats: the transpose only loads, shuffles and
       * stores. */
      tk_sparse_transpose(run, j->G, (const float *)(const void *)src,
                          step / KG, 1, (float *)(void *)(lay + r),
                          j->lstride);
      r += run;
    }
    for (int64_t g = 0; g < j->G; ++g) {
      uint32_t *q = (uint32_t *)(lay + g * j->lstride);
      for (int64_t r = end; r < rpad; ++r)
        q[r] = 0;
      if (j->flip)
        for (int64_t r = 0; r < rpad; ++r)
          q[r] ^= j->flip;
    }
    return;
  }
  for (int64_t r = 0; r < rpad; ++r) {
    uint8_t *row = rows + r * kp;
    gather_row(j, img, m0 + r, row);
    if (rsum) {
      int32_t s = 0;
      for (int64_t k = 0; k < j->K; ++k)
        s += row[k];
      rsum[r] = s;
    }
  }
  tk_sparse_transpose(rpad, j->G, (const float *)(const void *)rows, kp / KG,
                      1, (float *)(void *)lay, j->lstride);
}

/* Tile sums: gbuf[c * TROWS + r] for the group's columns c and the tile's
 * rows r. */

/* Portable products of block column b's blocks over tm vectors of rows
 * from lay + m0, into gbuf's columns gc .. gc + R - 1. */
static void blocks_portable(const sjob_t *j, const int32_t *lay, int64_t b,
                            int64_t tm, int32_t *gbuf, int64_t gc) {
  const int64_t R = j->R, rows = tm * 16;
  for (int64_t c = 0; c < R; ++c)
    memset(gbuf + (gc + c) * TROWS, 0, (size_t)rows * sizeof(int32_t));
  for (int64_t e = j->ptr[b]; e < j->ptr[b + 1]; ++e) {
    const uint8_t *x = (const uint8_t *)(lay + j->kidx[e] * j->lstride);
    for (int64_t c = 0; c < R && b * R + c < j->N; ++c) {
      const int8_t *w = j->val + (e * R + c) * KG;
      int32_t *acc = gbuf + (gc + c) * TROWS;
      for (int64_t r = 0; r < rows; ++r)
        for (int t = 0; t < KG; ++t)
          acc[r] += (int32_t)x[r * KG + t] * w[t];
    }
  }
}

#ifdef TK_HAVE_VNNI_PATH
/* TM vectors of rows x CW columns of block column b (TM, CW compile-time
 * constants once inlined: TM * CW accumulators in registers). Each block
 * loads TM vectors of quads once for its CW columns. */
TK_VNNI_TARGET static inline __attribute__((always_inline)) void
blocks_vnni(const sjob_t *j, const int32_t *lay, int64_t b, const int TM,
            const int CW, int32_t *gbuf, int64_t gc) {
  __m512i acc[TMAX][4];
  for (int t = 0; t < TM; ++t)
    for (int c = 0; c < CW; ++c)
      acc[t][c] = _mm512_setzero_si512();
  const int32_t *kidx = j->kidx;
  const int32_t *val = (const int32_t *)(const void *)j->val;
  const int64_t ls = j->lstride;
  const int64_t e1 = j->ptr[b + 1];
  for (int64_t e = j->ptr[b]; e < e1; ++e) {
    const int32_t *x = lay + kidx[e] * ls;
    /* The rows of the block 4 ahead: a column's quads jump, which the
     * hardware prefetchers do not follow. */
    if (e + 4 < e1)
      __builtin_prefetch(lay + kidx[e + 4] * ls, 0, 3);
    __m512i xv[TMAX];
    for (int t = 0; t < TM; ++t)
      xv[t] = _mm512_load_si512(x + 16 * t);
    for (int c = 0; c < CW; ++c) {
      int32_t w;
      memcpy(&w, val + e * CW + c, sizeof w);
      const __m512i s = _mm512_set1_epi32(w);
      for (int t = 0; t < TM; ++t)
        acc[t][c] = _mm512_dpbusd_epi32(acc[t][c], xv[t], s);
    }
  }
  for (int t = 0; t < TM; ++t)
    for (int c = 0; c < CW; ++c)
      _mm512_store_si512(gbuf + (gc + c) * TROWS + 16 * t, acc[t][c]);
}

#define TK_SPARSE_I8_TILES(CW)                                                 \
  switch (tm) {                                                                \
  case 1: blocks_vnni(j, lay, b, 1, CW, gbuf, gc); break;                      \
  case 2: blocks_vnni(j, lay, b, 2, CW, gbuf, gc); break;                      \
  case 3: blocks_vnni(j, lay, b, 3, CW, gbuf, gc); break;                      \
  case 4: blocks_vnni(j, lay, b, 4, CW, gbuf, gc); break;                      \
  case 5: blocks_vnni(j, lay, b, 5, CW, gbuf, gc); break;                      \
  case 6: blocks_vnni(j, lay, b, 6, CW, gbuf, gc); break;                      \
  case 7: if (CW < 4) blocks_vnni(j, lay, b, 7, CW, gbuf, gc); break;          \
  default: if (CW < 4) blocks_vnni(j, lay, b, 8, CW, gbuf, gc); break;         \
  }

/* R = 1 runs up to 8 vectors of rows, R = 4 up to 6 (24 accumulators). */
TK_VNNI_TARGET static void run_blocks_vnni(const sjob_t *j,
                                           const int32_t *lay, int64_t b,
                                           int64_t tm, int32_t *gbuf,
                                           int64_t gc) {
  if (j->R == 1)
    TK_SPARSE_I8_TILES(1)
  else
    TK_SPARSE_I8_TILES(4)
}
#undef TK_SPARSE_I8_TILES

/* 16 rows of the tile from r0 x 16 columns from c0 of its int32 sums
 * (column c at gbuf + c * TROWS) to rows of out (row stride TK_RQ_NR, from
 * column c0), in registers. */
TK_VNNI_TARGET static void rows_from_columns_vnni(const int32_t *gbuf,
                                                  int64_t r0, int c0,
                                                  int32_t out[16][TK_RQ_NR]) {
  __m512 r[16];
  for (int i = 0; i < 16; ++i)
    r[i] = _mm512_castsi512_ps(
        _mm512_load_si512(gbuf + (c0 + i) * TROWS + r0));
  transpose_regs16(r);
  for (int i = 0; i < 16; ++i)
    _mm512_storeu_ps((float *)(void *)(out[i] + c0), r[i]);
}
#endif

/* Finishes rows [m0, m0 + rows) of image b x the group's columns
 * [n0, n0 + width) from their sums in gbuf. */
static void finish_rows(const sjob_t *j, int64_t b, int64_t m0, int64_t rows,
                        int64_t n0, int64_t width, const int32_t *gbuf,
                        const int32_t *rsum) {
  const int32_t kzz = (int32_t)j->K * j->a_zp * j->b_zp;
  const struct epilogue *ep = j->ep;
  const int64_t bytes = j->out_bytes;
  const int32_t *colsum = j->colsum ? j->colsum + n0 : NULL;
  /* Zeroed once: the vector epilogues read whole vectors of a row. */
  int32_t tb[16][TK_RQ_NR] __attribute__((aligned(64))) = {{0}};
  for (int64_t r0 = 0; r0 < rows; r0 += 16) {
    for (int c0 = 0; c0 < width; c0 += 16) {
#ifdef TK_HAVE_VNNI_PATH
      if (j->vnni) {
        rows_from_columns_vnni(gbuf, r0, c0, tb);
        continue;
      }
#endif
      for (int i = 0; i < 16; ++i)
        for (int c = c0; c < c0 + 16; ++c)
          tb[i][c] = gbuf[c * TROWS + r0 + i];
    }
    const int64_t n16 = rows - r0 < 16 ? rows - r0 : 16;
    for (int64_t i = 0; i < n16; i += TK_RQ_MR) {
      const int mr = (int)(n16 - i < TK_RQ_MR ? n16 - i : TK_RQ_MR);
      int32_t row_off[TK_RQ_MR];
      for (int r = 0; r < mr; ++r)
        row_off[r] = kzz - (rsum ? j->b_zp * rsum[r0 + i + r] : 0);
      const int64_t m = m0 + r0 + i;
      const int64_t at = b * j->c_sb + m * j->c_sm + n0 * j->c_sn;
      if (!ep) {
        tk_finish_i32((int32_t(*)[TK_RQ_NR])tb[i], mr, row_off, colsum,
                      j->a_zp, width, (int32_t *)j->c + at, j->c_sm, j->c_sn,
                      j->accumulate);
        continue;
      }
      const float *res = ep->res ? ep->res + b * ep->res_sb +
                                       m * ep->res_sm + n0 * ep->res_sn
                                 : NULL;
      j->finish(ep, (int32_t(*)[TK_RQ_NR])tb[i], mr, row_off, colsum,
                j->a_zp, n0, width, j->c + at * bytes, j->c_sm * bytes,
                j->c_sn, res, ep->res_sm);
    }
  }
}

/* Task t: band t / nsplit of the images' bands (image-major), column
 * groups of range t % nsplit. */
static void run_task(void *arg, int64_t t) {
  const sjob_t *j = (const sjob_t *)arg;
  const int64_t split = t % j->nsplit, band = t / j->nsplit;
  const int64_t b = band / j->nbands, m0 = band % j->nbands * j->band;
  const int64_t rows = j->M - m0 < j->band ? j->M - m0 : j->band;
  const int64_t rpad = (rows + 15) / 16 * 16;
  const int64_t g_lo = j->bounds[split], g_hi = j->bounds[split + 1];
  if (g_lo >= g_hi)
    return;
  const int64_t kp = j->G * KG;
  /* (A line more than the quads need: K = 0 still gets buffers.) */
  int32_t *lay = (int32_t *)_mlir_memref_to_llvm_aligned_alloc(
      64, (size_t)(j->G * j->lstride + 16) * sizeof(int32_t));
  uint8_t *tmp =
      j->in_place ? NULL : (uint8_t *)malloc((size_t)(rpad * kp + 1));
  int32_t *rsum = j->b_zp ? (int32_t *)malloc((size_t)rpad * sizeof(int32_t))
                          : NULL;
  int32_t *gbuf = (int32_t *)_mlir_memref_to_llvm_aligned_alloc(
      64, (size_t)(GROUP * TROWS) * sizeof(int32_t));
  if (!lay || (!tmp && !j->in_place) || (j->b_zp && !rsum) || !gbuf)
    abort(); /* out of memory: nothing sane to return */
  lay_out_band(j, j->a + b * j->a_sb, m0, rpad, lay, tmp, rsum);
  free(tmp);
  const int64_t R = j->R, tmax = R == 1 ? 8 : 6;
  for (int64_t g = g_lo; g < g_hi; ++g) {
    const int64_t n0 = g * GROUP;
    const int64_t width = j->N - n0 < GROUP ? j->N - n0 : GROUP;
    const int64_t b_lo = n0 / R, b_hi = (n0 + width + R - 1) / R;
    for (int64_t v0 = 0; v0 < rpad / 16;) {
      /* Even tiles: 10 vectors as 5 + 5, not 8 + 2. */
      const int64_t left = rpad / 16 - v0, tiles = (left + tmax - 1) / tmax;
      const int64_t tm = (left + tiles - 1) / tiles;
      const int32_t *lt = lay + v0 * 16;
      if (width < GROUP) /* columns past N: finished as zeros */
        memset(gbuf, 0, (size_t)(GROUP * TROWS) * sizeof(int32_t));
      for (int64_t bc = b_lo; bc < b_hi; ++bc) {
#ifdef TK_HAVE_VNNI_PATH
        if (j->vnni) {
          run_blocks_vnni(j, lt, bc, tm, gbuf, bc * R - n0);
          continue;
        }
#endif
        blocks_portable(j, lt, bc, tm, gbuf, bc * R - n0);
      }
      const int64_t trows =
          rows - v0 * 16 < tm * 16 ? rows - v0 * 16 : tm * 16;
      finish_rows(j, b, m0 + v0 * 16, trows, n0, width, gbuf,
                  rsum ? rsum + v0 * 16 : NULL);
      v0 += tm;
    }
  }
  _mlir_memref_to_llvm_free(gbuf);
  _mlir_memref_to_llvm_free(lay);
  free(rsum);
}

/* Runs the job over `batch` images: the column sums, the bands, the
 * threads. */
static void run_sparse(sjob_t *j, int64_t batch, int32_t a_zp, int a_signed,
                       int64_t R, const int32_t *ptr, const int32_t *kidx,
                       const int8_t *val, const int32_t *b_colsum,
                       int32_t b_zp) {
  if (batch <= 0 || j->M <= 0 || j->N <= 0)
    return;
  j->G = (j->K + KG - 1) / KG;
  if (R != 1 && R != 4)
    abort(); /* the compiler packs only these block sizes */
  j->R = R, j->ptr = ptr, j->kidx = kidx, j->val = val;
  j->a_zp = a_zp + (a_signed ? 128 : 0);
  j->b_zp = b_zp;
  j->flip = a_signed ? 0x80808080u : 0u;
  /* Column sums: the caller's, or from the blocks when a_zp needs them. */
  int32_t *sums = NULL;
  if (!b_colsum && j->a_zp != 0) {
    sums = (int32_t *)calloc((size_t)j->N, sizeof(int32_t));
    if (!sums)
      abort(); /* out of memory: nothing sane to return */
    for (int64_t bc = 0; bc < (j->N + R - 1) / R; ++bc)
      for (int64_t e = ptr[bc]; e < ptr[bc + 1]; ++e)
        for (int64_t c = 0; c < R && bc * R + c < j->N; ++c)
          for (int t = 0; t < KG; ++t)
            sums[bc * R + c] += val[(e * R + c) * KG + t];
    b_colsum = sums;
  }
  j->colsum = j->a_zp ? b_colsum : NULL;
#ifdef TK_HAVE_VNNI_PATH
  j->vnni = tk_has_vnni();
#endif
  j->in_place = rows_in_place(j);
  j->out_bytes = j->ep ? tk_epilogue_out_bytes(j->ep) : 4;
  j->finish = j->ep ? tk_choose_finish(j->ep, j->c_sn) : NULL;
  /* Bands of whole vectors whose layout fits BAND_BYTES. */
  int64_t band = BAND_BYTES / (j->G > 0 ? j->G * KG : KG) / 16 * 16;
  band = band < 16 ? 16 : band;
  band = band > (j->M + 15) / 16 * 16 ? (j->M + 15) / 16 * 16 : band;
  j->band = band;
  j->nbands = (j->M + band - 1) / band;
  j->lstride = tk_sparse_row_stride(band);
  /* Column ranges of equal nonzero counts, as many as the threads need
   * beside the bands. */
  const int64_t nonzeros = ptr[(j->N + R - 1) / R];
  const int threads =
      tk_threads_for(batch * j->M * (nonzeros * R * KG + j->N));
  const int64_t units = batch * j->nbands, groups = (j->N + GROUP - 1) / GROUP;
  int64_t nsplit = (2 * threads + units - 1) / units;
  nsplit = nsplit > groups ? groups : nsplit < 1 ? 1 : nsplit;
  int64_t bounds[2 * 64 + 1];
  if (nsplit > 2 * 64)
    nsplit = 2 * 64;
  tk_sparse_balance(j->N, R, ptr, GROUP, nsplit, bounds);
  j->nsplit = nsplit;
  j->bounds = bounds;
  tk_parallel_for_on(threads, units * nsplit, run_task, j);
  free(sums);
}

/* The job of a matmul's rows (a: batch x M x K bytes) into c. */
static sjob_t matmul_job(int64_t M, int64_t N, int64_t K, const uint8_t *a,
                         int64_t a_sb, int64_t a_sm, void *c, int64_t c_sb,
                         int64_t c_sm, int64_t c_sn,
                         const struct epilogue *ep) {
  static const int64_t whole_row[1] = {0};
  sjob_t j = {0};
  j.M = M, j.N = N, j.K = K;
  j.a = a, j.a_sb = a_sb, j.a_sm = a_sm;
  j.seg_off = whole_row, j.nseg = 1, j.seg_len = K;
  j.c = (char *)c, j.c_sb = c_sb, j.c_sm = c_sm, j.c_sn = c_sn;
  j.ep = ep;
  return j;
}

/* The job of a convolution's implicit im2col rows into out; *off (the
 * segments' offsets) is the caller's to free. */
static sjob_t conv_job(int64_t OH, int64_t OW, int64_t F, int64_t KH,
                       int64_t KW, int64_t C, const uint8_t *in,
                       int64_t in_sn, int64_t in_sh, int64_t in_sw,
                       int64_t stride_h, int64_t stride_w, int64_t dil_h,
                       int64_t dil_w, void *out, int64_t out_sn,
                       int64_t out_sm, int64_t out_sf,
                       const struct epilogue *ep, int64_t **off) {
  int64_t nseg, seg_len;
  *off = tk_im2col_segments(KH, KW, C, in_sh, in_sw, dil_h, dil_w, &nseg,
                            &seg_len);
  sjob_t j = {0};
  j.M = OH * OW, j.N = F, j.K = KH * KW * C;
  j.a = in, j.a_sb = in_sn;
  j.ow = OW, j.a_sh = stride_h * in_sh, j.a_sw = stride_w * in_sw;
  j.seg_off = *off, j.nseg = nseg, j.seg_len = seg_len;
  j.c = (char *)out, j.c_sb = out_sn, j.c_sm = out_sm, j.c_sn = out_sf;
  j.ep = ep;
  return j;
}

void tessel_kernel_sparse_matmul_u8s8_i32(
    int64_t batch, int64_t M, int64_t N, int64_t K, const uint8_t *a,
    int64_t a_sb, int64_t a_sm, int32_t a_zp, int64_t R, const int32_t *ptr,
    const int32_t *kidx, const int8_t *val, const int32_t *b_colsum,
    int32_t b_zp, int32_t *c, int64_t c_sb, int64_t c_sm, int64_t c_sn,
    int32_t flags) {
  sjob_t j = matmul_job(M, N, K, a, a_sb, a_sm, c, c_sb, c_sm, c_sn, NULL);
  j.accumulate = (flags & TESSEL_KERNEL_ACCUMULATE) != 0;
  run_sparse(&j, batch, a_zp, (flags & TESSEL_KERNEL_A_SIGNED) != 0, R, ptr,
             kidx, val, b_colsum, b_zp);
}

void tessel_kernel_sparse_matmul_u8s8_requant(
    int64_t batch, int64_t M, int64_t N, int64_t K, const uint8_t *a,
    int64_t a_sb, int64_t a_sm, int32_t a_zp, int64_t R, const int32_t *ptr,
    const int32_t *kidx, const int8_t *val, const int32_t *b_colsum,
    int32_t b_zp, void *c, int64_t c_sb, int64_t c_sm, int64_t c_sn,
    const float *res, int64_t res_sb, int64_t res_sm, int64_t res_sn,
    float res_lo, float res_hi, const float *scale, const float *bias,
    float lo, float hi, float out_scale, float out_zp, float qmin, float qmax,
    const void *table, float dq_scale, float dq_zp, float dq_lo, float dq_hi,
    int32_t flags) {
  struct epilogue ep;
  tk_epilogue_init(&ep, scale, bias, lo, hi, out_scale, out_zp, qmin, qmax,
                   table, dq_scale, dq_zp, dq_lo, dq_hi, flags);
  tk_epilogue_set_residual(&ep, res, res_sb, res_sm, res_sn, res_lo, res_hi);
  tk_epilogue_bound(&ep, N, K,
                    a_zp + ((flags & TESSEL_KERNEL_A_SIGNED) ? 128 : 0), b_zp);
  sjob_t j = matmul_job(M, N, K, a, a_sb, a_sm, c, c_sb, c_sm, c_sn, &ep);
  run_sparse(&j, batch, a_zp, (flags & TESSEL_KERNEL_A_SIGNED) != 0, R, ptr,
             kidx, val, b_colsum, b_zp);
}

void tessel_kernel_sparse_conv2d_u8s8_i32(
    int64_t N, int64_t OH, int64_t OW, int64_t F, int64_t KH, int64_t KW,
    int64_t C, const uint8_t *in, int64_t in_sn, int64_t in_sh, int64_t in_sw,
    int64_t stride_h, int64_t stride_w, int64_t dil_h, int64_t dil_w,
    int32_t a_zp, int64_t R, const int32_t *ptr, const int32_t *kidx,
    const int8_t *val, const int32_t *b_colsum, int32_t b_zp, int32_t *out,
    int64_t out_sn, int64_t out_sm, int64_t out_sf, int32_t flags) {
  if (N <= 0 || OH <= 0 || OW <= 0 || F <= 0)
    return;
  int64_t *off;
  sjob_t j = conv_job(OH, OW, F, KH, KW, C, in, in_sn, in_sh, in_sw, stride_h,
                      stride_w, dil_h, dil_w, out, out_sn, out_sm, out_sf,
                      NULL, &off);
  j.accumulate = (flags & TESSEL_KERNEL_ACCUMULATE) != 0;
  run_sparse(&j, N, a_zp, (flags & TESSEL_KERNEL_A_SIGNED) != 0, R, ptr, kidx,
             val, b_colsum, b_zp);
  free(off);
}

void tessel_kernel_sparse_conv2d_u8s8_requant(
    int64_t N, int64_t OH, int64_t OW, int64_t F, int64_t KH, int64_t KW,
    int64_t C, const uint8_t *in, int64_t in_sn, int64_t in_sh, int64_t in_sw,
    int64_t stride_h, int64_t stride_w, int64_t dil_h, int64_t dil_w,
    int32_t a_zp, int64_t R, const int32_t *ptr, const int32_t *kidx,
    const int8_t *val, const int32_t *b_colsum, int32_t b_zp, void *out,
    int64_t out_sn, int64_t out_sm, int64_t out_sf, const float *res,
    int64_t res_sn, int64_t res_sm, int64_t res_sf, float res_lo,
    float res_hi, const float *scale, const float *bias, float lo, float hi,
    float out_scale, float out_zp, float qmin, float qmax, const void *table,
    float dq_scale, float dq_zp, float dq_lo, float dq_hi, int32_t flags) {
  if (N <= 0 || OH <= 0 || OW <= 0 || F <= 0)
    return;
  struct epilogue ep;
  tk_epilogue_init(&ep, scale, bias, lo, hi, out_scale, out_zp, qmin, qmax,
                   table, dq_scale, dq_zp, dq_lo, dq_hi, flags);
  tk_epilogue_set_residual(&ep, res, res_sn, res_sm, res_sf, res_lo, res_hi);
  tk_epilogue_bound(&ep, F, KH * KW * C,
                    a_zp + ((flags & TESSEL_KERNEL_A_SIGNED) ? 128 : 0), b_zp);
  int64_t *off;
  sjob_t j = conv_job(OH, OW, F, KH, KW, C, in, in_sn, in_sh, in_sw, stride_h,
                      stride_w, dil_h, dil_w, out, out_sn, out_sm, out_sf,
                      &ep, &off);
  run_sparse(&j, N, a_zp, (flags & TESSEL_KERNEL_A_SIGNED) != 0, R, ptr, kidx,
             val, b_colsum, b_zp);
  free(off);
}
