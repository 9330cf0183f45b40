/*
 * fake_linked_artifact.c - hand-written artifacts that import functions of
 * other artifacts (docs/artifact-abi.md, version 2), so linking can be
 * tested without the compiler. Built once per LINKED_* macro:
 *
 *   LINKED_IMPORTER        imports scale, ids, nthreads; exports twice
 *                          (2x+1 via scale), embed (via ids), threads_via
 *                          (the context seen by nthreads), plain (no import)
 *   LINKED_PROVIDER        exports scale (y = 2x), ids, nthreads
 *   LINKED_PROVIDER_ALT    the same interface, scale is y = 3x
 *   LINKED_PROVIDER_SHAPE  scale takes f32 [4]        (interface mismatch)
 *   LINKED_PROVIDER_DTYPE  scale returns i32          (interface mismatch)
 *   LINKED_PROVIDER_VOCAB  ids takes vocabulary 11    (interface mismatch)
 *   LINKED_CYCLE_A/B       ping imports pong, pong imports ping
 *   LINKED_NO_TABLE        declares an import but exports no table
 */
#include "tessel/Runtime/tessel_abi.h"

#include <stdint.h>

#define HEADER "tessel-artifact 2\ntarget x86_64-unknown-linux-gnu\n"

#if defined(LINKED_IMPORTER)
const char tessel_artifact_manifest[] =
    HEADER
    "import scale 0\n"
    "input x f32 [3]\n"
    "output y f32 [3]\n"
    "end\n"
    "import ids 1\n"
    "input s i32 [4] vocab=10\n"
    "output e f32 [4]\n"
    "end\n"
    "import nthreads 2\n"
    "output n i32 []\n"
    "end\n"
    "function twice tessel_entry_twice\n"
    "input x f32 [3]\n"
    "output y f32 [3]\n"
    "uses scale\n"
    "end\n"
    "function embed tessel_entry_embed\n"
    "input s i32 [4] vocab=10\n"
    "output e f32 [4]\n"
    "uses ids\n"
    "end\n"
    "function threads_via tessel_entry_threads_via\n"
    "output n i32 []\n"
    "uses nthreads\n"
    "end\n"
    "function plain tessel_entry_plain\n"
    "input x f32 []\n"
    "output y f32 []\n"
    "end\n";

tessel_entry_fn tessel_artifact_imports[3];

/* What compiled code does: an unresolved slot fails the entry up front. */
#define CALL(slot, buffers, context)                                          \
  (tessel_artifact_imports[slot]                                              \
       ? tessel_artifact_imports[slot](buffers, context)                      \
       : TESSEL_ENTRY_UNRESOLVED_IMPORT)

int32_t tessel_entry_twice(void **buffers, void *context) {
  int32_t rc = CALL(0, buffers, context); /* y = scale(x) */
  float *y = (float *)buffers[1];
  for (int i = 0; i < 3; ++i)
    y[i] += 1;
  return rc;
}

int32_t tessel_entry_embed(void **buffers, void *context) {
  return CALL(1, buffers, context);
}

int32_t tessel_entry_threads_via(void **buffers, void *context) {
  return CALL(2, buffers, context);
}

int32_t tessel_entry_plain(void **buffers, void *context) {
  (void)context;
  *(float *)buffers[1] = *(const float *)buffers[0] + 1;
  return 0;
}

#elif defined(LINKED_PROVIDER) || defined(LINKED_PROVIDER_ALT) ||            \
    defined(LINKED_PROVIDER_SHAPE) || defined(LINKED_PROVIDER_DTYPE) ||       \
    defined(LINKED_PROVIDER_VOCAB) || defined(LINKED_PROVIDER_RUN_TIME)
#if defined(LINKED_PROVIDER_RUN_TIME)
/* scale's output size follows from the data (ABI v6): no import can take
 * it, as the import's caller allocates the outputs. */
#undef HEADER
#define HEADER "tessel-artifact 6\ntarget x86_64-unknown-linux-gnu\n"
#define SCALE_SHAPE "[?]"
#else
#define SCALE_SHAPE "[3]"
#endif
#if defined(LINKED_PROVIDER_SHAPE)
#define SCALE_IN "[4]"
#else
#define SCALE_IN "[3]"
#endif
#if defined(LINKED_PROVIDER_DTYPE)
#define SCALE_OUT "i32"
#else
#define SCALE_OUT "f32"
#endif
#if defined(LINKED_PROVIDER_VOCAB)
#define VOCAB "11"
#else
#define VOCAB "10"
#endif
#if defined(LINKED_PROVIDER_ALT)
#define FACTOR 3
#else
#define FACTOR 2
#endif
const char tessel_artifact_manifest[] =
    HEADER
    "function scale tessel_entry_scale\n"
    "input x f32 " SCALE_IN "\n"
    "output y " SCALE_OUT " " SCALE_SHAPE "\n"
    "end\n"
    "function ids tessel_entry_ids\n"
    "input s i32 [4] vocab=" VOCAB "\n"
    "output e f32 [4]\n"
    "end\n"
    "function nthreads tessel_entry_nthreads\n"
    "output n i32 []\n"
    "end\n";

int32_t tessel_entry_scale(void **buffers, void *context) {
  (void)context;
  const float *x = (const float *)buffers[0];
  float *y = (float *)buffers[1];
  for (int i = 0; i < 3; ++i)
    y[i] = FACTOR * x[i];
  return 0;
}

int32_t tessel_entry_ids(void **buffers, void *context) {
  (void)context;
  const int32_t *s = (const int32_t *)buffers[0];
  float *e = (float *)buffers[1];
  for (int i = 0; i < 4; ++i)
    e[i] = (float)s[i] + 0.5f;
  return 0;
}

int32_t tessel_entry_nthreads(void **buffers, void *context) {
  const tessel_invoke_context_t *ctx = (const tessel_invoke_context_t *)context;
  *(int32_t *)buffers[0] = ctx ? (int32_t)ctx->num_threads : -1;
  return 0;
}

#elif defined(LINKED_CYCLE_A) || defined(LINKED_CYCLE_B)
#if defined(LINKED_CYCLE_A)
#define MINE "ping"
#define THEIRS "pong"
#define ENTRY tessel_entry_ping
#else
#define MINE "pong"
#define THEIRS "ping"
#define ENTRY tessel_entry_pong
#endif
const char tessel_artifact_manifest[] =
    HEADER
    "import " THEIRS " 0\n"
    "output o f32 []\n"
    "end\n"
    "function " MINE " tessel_entry_" MINE "\n"
    "output o f32 []\n"
    "uses " THEIRS "\n"
    "end\n";

tessel_entry_fn tessel_artifact_imports[1];

int32_t ENTRY(void **buffers, void *context) {
  return tessel_artifact_imports[0](buffers, context);
}

#elif defined(LINKED_NO_TABLE)
const char tessel_artifact_manifest[] =
    HEADER
    "import scale 0\n"
    "input x f32 [3]\n"
    "output y f32 [3]\n"
    "end\n"
    "function f tessel_entry_f\n"
    "output o f32 []\n"
    "end\n";

int32_t tessel_entry_f(void **buffers, void *context) {
  (void)buffers;
  (void)context;
  return 0;
}

#else
#error "define one LINKED_* variant"
#endif
