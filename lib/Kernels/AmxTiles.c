/* AmxTiles.c - the int8 matmul's AMX strip: 16 rows x 64 columns. */
#define _GNU_SOURCE /* syscall() */
#include "AmxTiles.h"
#include "CpuFeatures.h"

#include <string.h>

void tk_amx_tail(void *tail, const void *panel, int64_t steps, int64_t have) {
  memcpy(tail, (const char *)panel + steps * TK_AMX_ROWS * 256,
         (size_t)(have * 256));
  memset((char *)tail + have * 256, 0, (size_t)((TK_AMX_ROWS - have) * 256));
}

#if defined(__x86_64__) && !defined(TESSEL_KERNELS_NO_ASM) &&                 \
    defined(__linux__)
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>

#define TK_AMX_TARGET __attribute__((target("amx-tile,amx-int8")))
#define TK_AMX_BF16_TARGET __attribute__((target("amx-tile,amx-bf16")))

/* Linux keeps the 8 KiB tile state off until a process asks for it
 * (arch_prctl ARCH_REQ_XCOMP_PERM for XFEATURE_XTILEDATA); a tile
 * instruction before that is a SIGILL. */
#define TK_ARCH_REQ_XCOMP_PERM 0x1023
#define TK_XFEATURE_XTILEDATA 18

/* The tile state, asked for once (every AMX path needs it). */
static int probe_tiles(void) {
  __builtin_cpu_init();
  if (tk_env_flag("TESSEL_KERNELS_NO_AMX") ||
      !__builtin_cpu_supports("amx-tile"))
    return 0;
  return syscall(SYS_arch_prctl, TK_ARCH_REQ_XCOMP_PERM,
                 TK_XFEATURE_XTILEDATA) == 0;
}

static int tiles(void) {
  static int slot = -1;
  return tk_cached(&slot, probe_tiles);
}

static int probe_amx(void) {
  return __builtin_cpu_supports("amx-int8") && tk_has_vnni() && tiles();
}

int tk_has_amx(void) {
  static int slot = -1;
  return tk_cached(&slot, probe_amx);
}

static int probe_amx_bf16(void) {
  __builtin_cpu_init();
  return __builtin_cpu_supports("amx-bf16") && tk_has_avx512bf16() &&
         tiles();
}

int tk_has_amx_bf16(void) {
  static int slot = -1;
  return tk_cached(&slot, probe_amx_bf16);
}

/* The 64-byte tile configuration (palette 1): tiles 0-3 the 16 x 16 int32
 * sums (64 bytes a row), 4 the A rows (16 x 64 bytes), 5 and 6 the B
 * tiles, alternated so that one loads while the other multiplies. */
typedef struct {
  uint8_t palette, start_row, reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
} tile_config_t;

TK_AMX_TARGET void tk_amx_configure(void) {
  tile_config_t cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.palette = 1;
  for (int t = 0; t < 7; ++t) {
    cfg.rows[t] = TK_AMX_ROWS;
    cfg.colsb[t] = 64;
  }
  _tile_loadconfig(&cfg);
}

/* One step: A's 16 x 64 bytes, then each 16-column quarter of the panel's
 * 16 groups of k (256 bytes apart), DP being the product instruction;
 * A and B are byte pointers. */
#define TK_AMX_STEP(DP, A, B)                                                  \
  do {                                                                         \
    _tile_loadd(4, (A), lda);                                                  \
    _tile_loadd(5, (B), 256);                                                  \
    DP(0, 4, 5);                                                               \
    _tile_loadd(6, (B) + 64, 256);                                             \
    DP(1, 4, 6);                                                               \
    _tile_loadd(5, (B) + 128, 256);                                            \
    DP(2, 4, 5);                                                               \
    _tile_loadd(6, (B) + 192, 256);                                            \
    DP(3, 4, 6);                                                               \
  } while (0)

/* A strip's body: zero the sums, the steps, the tail step, store. */
#define TK_AMX_STRIP(DP)                                                       \
  do {                                                                         \
    const char *ab = (const char *)a, *pb = (const char *)panel;               \
    _tile_zero(0);                                                             \
    _tile_zero(1);                                                             \
    _tile_zero(2);                                                             \
    _tile_zero(3);                                                             \
    for (int64_t s = 0; s < steps; ++s)                                        \
      TK_AMX_STEP(DP, ab + s * TK_AMX_KSTEP, pb + s * TK_AMX_ROWS * 256);      \
    if (tail_b)                                                                \
      TK_AMX_STEP(DP, ab + steps * TK_AMX_KSTEP, (const char *)tail_b);        \
    _tile_stored(0, c, 256);                                                   \
    _tile_stored(1, c + 16, 256);                                              \
    _tile_stored(2, c + 32, 256);                                              \
    _tile_stored(3, c + 48, 256);                                              \
  } while (0)

TK_AMX_TARGET void tk_amx_strip_u8s8(const uint8_t *a, int64_t lda,
                                     int64_t steps, const int8_t *panel,
                                     const int8_t *tail_b, int32_t *c) {
  TK_AMX_STRIP(_tile_dpbusd);
}

/* The same strip in bf16: A's 16 rows x 32 bf16 (64 bytes) per step
 * against 16 pairs of k x 16 columns (a pair per column: 64 bytes a row,
 * 256 bytes apart in the panel), f32 sums (`tdpbf16ps`). */
TK_AMX_BF16_TARGET void tk_amx_strip_bf16(const uint16_t *a, int64_t lda,
                                          int64_t steps, const uint16_t *panel,
                                          const uint16_t *tail_b, float *c) {
  TK_AMX_STRIP(_tile_dpbf16ps);
}

TK_AMX_TARGET void tk_amx_release(void) { _tile_release(); }

#else
int tk_has_amx(void) { return 0; }
int tk_has_amx_bf16(void) { return 0; }
void tk_amx_configure(void) {}
void tk_amx_strip_bf16(const uint16_t *a, int64_t lda, int64_t steps,
                       const uint16_t *panel, const uint16_t *tail_b,
                       float *c) {
  (void)a, (void)lda, (void)steps, (void)panel, (void)tail_b, (void)c;
}
void tk_amx_strip_u8s8(const uint8_t *a, int64_t lda, int64_t steps,
                       const int8_t *panel, const int8_t *tail_b, int32_t *c) {
  (void)a, (void)lda, (void)steps, (void)panel, (void)tail_b, (void)c;
}
void tk_amx_release(void) {}
#endif
