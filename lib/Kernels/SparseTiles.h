/* SparseTiles.h - the products and stores shared by the sparse f32
 * kernels (SparseMatmulF32.c, SparseConvF32.c).
 *
 * Both multiply an implicit K x M matrix of activations, vectorized over
 * its M "virtual rows" (tokens, pixels), by the sparse constant weights in
 * R x 1 blocks (Kernels.td, tessel_kernel_sparse_matmul_f32). The kernels
 * differ only in how they lay out that matrix: a matmul transposes A's
 * rows, a convolution its input's channel planes, where the row of
 * filter element (kh, kw, c) sits at a fixed offset. So the row of k is
 * wherever koff[k] says, and virtual row m is stored wherever the view's
 * row mapping says (a convolution computes a few padding columns per
 * output row and drops them). */
#ifndef TESSEL_KERNELS_SPARSETILES_H
#define TESSEL_KERNELS_SPARSETILES_H

#include <stddef.h>
#include <stdint.h>

/* Output columns accumulated together: a multiple of every R. */
#define TK_SPARSE_GROUP 16

typedef struct {
  /* The weights: block column b of R columns has blocks [ptr[b],
   * ptr[b+1]) at k = kidx[e], values val[e*R ...]. */
  int64_t N, R;
  const int32_t *ptr, *kidx;
  const float *val;
  /* The activations of one band: row k of the implicit K x band_m matrix
   * at at + koff[k], 64-byte aligned where koff[k] is a multiple of 16,
   * readable for band_m floats (a multiple of the vector width). */
  const float *at;
  const int64_t *koff;
  int64_t band_m;
  /* Virtual row m goes to c + (m / wq) * c_sr + (m % wq) * c_sc, column n
   * at n * c_sn; rows with m % wq >= owc or m / wq >= nr are dropped. */
  float *c;
  int64_t wq, owc, nr, c_sr, c_sc, c_sn;
  const float *bias;
  float lo, hi;
  int accumulate;
  /* The products go in chunks of kc k's (tk_sparse_chunk_k), K (at least
   * 1) in all: set by tk_sparse_run_bands. */
  int64_t kc, K;
  /* nm_n of every nm_m k's of each column are stored (R = 1, K a multiple
   * of nm_m, k ascending; kc then a multiple of nm_m): the products run
   * a fixed count of nonzeros per column and chunk, two columns at a
   * time. 0: not so. Set by tk_sparse_run_bands from the flags. */
  int64_t nm_n, nm_m;
  /* Nonzero where koff[k] = k * kstep for every k (a matmul's rows): the
   * N:M tiles then multiply instead of loading koff[k], one dependent load
   * fewer per nonzero (2:4 at 128 x 768 x 768 on a Zen 4: 1.1x). Last, so
   * that the initializers that leave it out leave it 0. */
  int64_t kstep;
} tk_sparse_view;

/* k's per chunk for nnz blocks of R in nblocks block columns of K: the
 * products go chunk by chunk of k, every column of a column block reading
 * the chunk's rows of a tile while they are in L1, the sums kept in the
 * group buffers between chunks. */
int64_t tk_sparse_chunk_k(int64_t K, int64_t R, int64_t nblocks,
                          int64_t nnz);

/* Whether every block column's k ascend, as chunks need. */
int tk_sparse_k_ascending(int64_t nblocks, const int32_t *ptr,
                          const int32_t *kidx);

/* Column groups [g0, g1) of the view over all its rows, the rows in
 * chunks whose part of the activations (K x chunk) stays in L2 while the
 * groups read it. Aborts on a block size the compiler does not pack. */
void tk_sparse_run(const tk_sparse_view *v, int64_t g0, int64_t g1);

/* ceil(N / TK_SPARSE_GROUP). */
int64_t tk_sparse_groups(int64_t N);

/* Splits the groups of `group` columns (a multiple of R) into ntasks
 * ranges of about equal work (their nonzero blocks times R, plus their
 * stores): bounds gets ntasks + 1 group boundaries. Unevenly pruned
 * columns still balance. */
void tk_sparse_balance(int64_t N, int64_t R, const int32_t *ptr,
                       int64_t group, int64_t ntasks, int64_t *bounds);

/* dst[c * d_r + r] = src[r * s_r + c * s_c] for r < rows, c < cols:
 * register blocks where s_c is 1, one element at a time otherwise. */
void tk_sparse_transpose(int64_t rows, int64_t cols, const float *src,
                         int64_t s_r, int64_t s_c, float *dst, int64_t d_r);

/* The distance in floats between the rows of k of a band's layout for
 * rows of `floats`: whole cache lines, an odd number of them. A tile
 * reads the same columns of a chunk's rows; rows a power of two of lines
 * apart map them to the same few L1 sets (a 56 x 56 1x1 convolution's
 * planes were 8 KiB apart: 12 rows of a 65-row chunk fit), an odd count
 * spreads them over all the sets. */
static inline int64_t tk_sparse_row_stride(int64_t floats) {
  const int64_t lines = (floats + 15) / 16;
  return (lines | 1) * 16;
}

/* Floats of activations per band that stay in L2 with room to spare:
 * about 512 KiB. */
#define TK_SPARSE_BAND_FLOATS (128 * 1024)

/* A kernel's activations as bands, each laid out just before its
 * products so that its layout stays in L2. */
typedef struct {
  int64_t nbands, K;
  size_t band_floats; /* of a band's layout */
  /* Lays band b out into at (64-byte aligned, band_floats) and makes the
   * view that multiplies it. */
  void (*view)(const void *ctx, int64_t b, float *at, tk_sparse_view *v);
  const void *ctx;
} tk_sparse_bands;

/* Whether nbands bands are too few to share out among the threads (fewer
 * than 2 each): then each is better laid out once, whole, and the threads
 * split its output columns. */
int tk_sparse_too_few_bands(int64_t nbands);

/* Every band's products (flags: the kernel's; TESSEL_KERNEL_K_ASCENDING
 * spares the check of the k order that chunks need; an N:M count in the
 * bits at TESSEL_KERNEL_NM_SHIFT selects the fixed-count products where
 * the arrays bear it out): with
 * tk_sparse_too_few_bands, one band at a time,
 * the threads splitting the output columns into ranges of equal nonzero
 * counts; else the threads take runs of whole bands, each laid out by the
 * thread that multiplies it. Layouts come from the artifacts' caching
 * allocator: a model asks for the same sizes on every call, and fresh
 * pages would be faulted in every time. */
void tk_sparse_run_bands(const tk_sparse_bands *bands, int64_t N, int64_t R,
                         const int32_t *ptr, const int32_t *kidx,
                         int32_t flags);

#endif
