/*
 * fake_artifact.c - hand-written artifacts implementing docs/artifact-abi.md,
 * so the runtime can be tested without the compiler. Built several times by
 * CMakeLists.txt with one FAKE_* macro selecting the variant:
 *
 *   FAKE_MULTI          add / iota / fail / threads / cast (several functions)
 *   FAKE_SINGLE         one function 'main' (sum and product of two f32 [2,3])
 *   FAKE_NO_MANIFEST    a plain shared library (no manifest symbol)
 *   FAKE_BAD_MAGIC, FAKE_NEWER_VERSION, FAKE_DEVICE_WITHOUT_RUNTIME,
 *   FAKE_RANKS_WITHOUT_RUNTIME,
 *   FAKE_MISSING_ENTRY, FAKE_MALFORMED,
 *   FAKE_DYNAMIC_DIM    broken manifests, one defect each
 */
#include "tessel/Runtime/tessel_abi.h"

#include <stdint.h>
#include <string.h>

#define HEADER "tessel-artifact 1\ntarget x86_64-unknown-linux-gnu\n"

#if defined(FAKE_MULTI) || defined(FAKE_SINGLE)
/* out = x + y over 6 floats. */
static void add6(void **b, int out) {
  const float *x = (const float *)b[0], *y = (const float *)b[1];
  float *o = (float *)b[out];
  for (int i = 0; i < 6; ++i)
    o[i] = x[i] + y[i];
}
#endif

#if defined(FAKE_MULTI)
const char tessel_artifact_manifest[] =
    HEADER
    "function add tessel_entry_add\n"
    "input x f32 [2,3]\n"
    "input y f32 [2,3]\n"
    "output out0 f32 [2,3]\n"
    "end\n"
    "function iota tessel_entry_iota\n"
    "output out0 i64 [4]\n"
    "end\n"
    "function fail tessel_entry_fail\n"
    "input x f32 []\n"
    "output out0 f32 []\n"
    "end\n"
    "function threads tessel_entry_threads\n"
    "output n i32 []\n"
    "end\n"
    "function cast tessel_entry_cast\n"
    "input x i32 [3]\n"
    "output y f64 [3]\n"
    "output positive i1 [3]\n"
    "end\n"
    "function copy tessel_entry_copy\n"
    "input x f32 [3]\n"
    "output y f32 [3]\n"
    "end\n";

int32_t tessel_entry_add(void **buffers, void *context) {
  (void)context;
  add6(buffers, 2);
  return 0;
}

int32_t tessel_entry_iota(void **buffers, void *context) {
  (void)context;
  int64_t *o = (int64_t *)buffers[0];
  for (int i = 0; i < 4; ++i)
    o[i] = i;
  return 0;
}

int32_t tessel_entry_fail(void **buffers, void *context) {
  (void)buffers;
  (void)context;
  return 7;
}

/* Reports what the runtime passed in the context (-1: bad struct_size). */
int32_t tessel_entry_threads(void **buffers, void *context) {
  const tessel_invoke_context_t *ctx = (const tessel_invoke_context_t *)context;
  int32_t *o = (int32_t *)buffers[0];
  *o = ctx->struct_size == sizeof(tessel_invoke_context_t)
           ? (int32_t)ctx->num_threads
           : -1;
  return 0;
}

int32_t tessel_entry_cast(void **buffers, void *context) {
  (void)context;
  const int32_t *x = (const int32_t *)buffers[0];
  double *y = (double *)buffers[1];
  uint8_t *p = (uint8_t *)buffers[2];
  for (int i = 0; i < 3; ++i) {
    y[i] = (double)x[i] * 0.5;
    p[i] = x[i] > 0;
  }
  return 0;
}

int32_t tessel_entry_copy(void **buffers, void *context) {
  (void)context;
  memcpy(buffers[1], buffers[0], 3 * sizeof(float));
  return 0;
}

#elif defined(FAKE_SINGLE)
const char tessel_artifact_manifest[] =
    HEADER
    "function main tessel_entry_main\n"
    "input x f32 [2,3]\n"
    "input y f32 [2,3]\n"
    "output sum f32 [2,3]\n"
    "output prod f32 [2,3]\n"
    "end\n";

int32_t tessel_entry_main(void **buffers, void *context) {
  (void)context;
  add6(buffers, 2);
  const float *x = (const float *)buffers[0], *y = (const float *)buffers[1];
  float *p = (float *)buffers[3];
  for (int i = 0; i < 6; ++i)
    p[i] = x[i] * y[i];
  return 0;
}

#elif defined(FAKE_NO_MANIFEST)
int fake_not_an_artifact(void) { return 42; }

#else
/* Broken manifests: each variant has one defect; the entry exists unless the
 * defect is its absence. */
#if defined(FAKE_BAD_MAGIC)
const char tessel_artifact_manifest[] =
    "onnx-artifact 1\ntarget x\nfunction f tessel_entry_f\nend\n";
#elif defined(FAKE_NEWER_VERSION)
const char tessel_artifact_manifest[] =
    "tessel-artifact 9\ntarget x\nfunction f tessel_entry_f\nend\n";
#elif defined(FAKE_RANKS_WITHOUT_RUNTIME)
/* A `ranks 2` record but no MPI runtime part (__tessel_mpi_init). */
const char tessel_artifact_manifest[] = "tessel-artifact 8\ntarget x\nranks 2\n"
                                        "function f tessel_entry_f\nend\n";
#elif defined(FAKE_DEVICE_WITHOUT_RUNTIME)
/* A `device cuda` record but no device runtime (__tessel_cuda_check). */
const char tessel_artifact_manifest[] =
    "tessel-artifact 5\ntarget x\ndevice cuda sm_90\n"
    "function f tessel_entry_f\nend\n";
#elif defined(FAKE_MISSING_ENTRY)
const char tessel_artifact_manifest[] =
    HEADER "function g tessel_entry_g\noutput o f32 []\nend\n";
#elif defined(FAKE_MALFORMED)
const char tessel_artifact_manifest[] =
    HEADER "function f tessel_entry_f\ninput x f32 2,3\nend\n";
#elif defined(FAKE_DYNAMIC_DIM)
const char tessel_artifact_manifest[] =
    HEADER "function f tessel_entry_f\ninput x f32 [?,3]\nend\n";
#elif defined(FAKE_FOREIGN_ENTRY)
/* The entry symbol names libc's malloc, which dlsym finds through the
 * library's dependencies: it must not be called as an entry. */
const char tessel_artifact_manifest[] =
    HEADER "function f malloc\noutput o f32 []\nend\n";
#else
#error "define one FAKE_* variant"
#endif
int32_t tessel_entry_f(void **buffers, void *context) {
  (void)buffers;
  (void)context;
  return 0;
}
#endif
