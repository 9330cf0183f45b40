/* AmxTiles.h - the int8 matmul's AMX strip (internal).
 *
 * Intel AMX (Sapphire Rapids and later) multiplies 16 x 64-byte tiles of
 * u8 by 16 x (16 x 4)-byte tiles of s8 into 16 x 16 int32 tiles with one
 * `tdpbusd`: 16,384 multiply-adds, 16x what one AVX-512 `vpdpbusd` does.
 * The weights' VNNI packing (groups of 4 k per column, 64 columns per
 * panel: 256 bytes per group) is already what a B tile wants: 16 groups of
 * 16 columns are a tile at a 256-byte row stride, loaded in place. */
#ifndef TESSEL_KERNELS_AMX_TILES_H
#define TESSEL_KERNELS_AMX_TILES_H

#include <stdint.h>

/* Rows of A and bytes of k per AMX step. */
#define TK_AMX_ROWS 16
#define TK_AMX_KSTEP 64

/* Whether this CPU has AMX-INT8 and the OS let this process use it (Linux
 * asks for the tile state once per process; TESSEL_KERNELS_NO_AMX=1 turns
 * the path off). */
int tk_has_amx(void);

/* c[16][64] (int32, rows 64 apart) = the sums over `steps` 64-byte steps
 * of k of 16 rows of `a` (row stride lda bytes, already unsigned) by the
 * 64 columns of a packed panel, then one more step against `tail_b` (16
 * groups x 256 bytes, zero-padded) when it is not NULL, with the tiles
 * as tk_amx_configure() sets them (the configuration stays until
 * tk_amx_release(), which gives the tile state back: loading it per strip
 * measured 1.5x slower). */
void tk_amx_configure(void);
void tk_amx_strip_u8s8(const uint8_t *a, int64_t lda, int64_t steps,
                       const int8_t *panel, const int8_t *tail_b, int32_t *c);
void tk_amx_release(void);

/* A panel's last partial step, zero-padded for a B tile: the panel's
 * groups (int8: 4 k; bf16: a pair of k; 256 bytes each) from step `steps`
 * on, `have` of them (< 16), into tail[16][256 bytes]. */
void tk_amx_tail(void *tail, const void *panel, int64_t steps, int64_t have);

/* AMX-BF16 (and the tile state) for the bf16 convolution. */
int tk_has_amx_bf16(void);
/* c[16][64] (f32, rows 64 apart) = the same strip with bf16 operands:
 * `steps` of 32 bf16 of k (64 bytes) of 16 rows of `a` (row stride lda
 * bytes) by a panel of pairs of k (b[k/2][64 columns][2], 256 bytes per
 * pair of k), then a step against `tail_b` (16 pairs x 64 columns,
 * zero-padded) when it is not NULL. */
void tk_amx_strip_bf16(const uint16_t *a, int64_t lda, int64_t steps,
                       const uint16_t *panel, const uint16_t *tail_b,
                       float *c);

#endif /* TESSEL_KERNELS_AMX_TILES_H */
