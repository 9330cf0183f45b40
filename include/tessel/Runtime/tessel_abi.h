/*
 * tessel_abi.h - the artifact side of the contract in docs/artifact-abi.md.
 *
 * Kept apart from tessel_runtime.h so that anything implementing an artifact
 * (tessel-compile's output, hand-written test artifacts) can include it
 * without seeing the runtime API.
 */
#ifndef TESSEL_RUNTIME_TESSEL_ABI_H
#define TESSEL_RUNTIME_TESSEL_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Name of the NUL-terminated `const char[]` holding the manifest text. */
#define TESSEL_MANIFEST_SYMBOL "tessel_artifact_manifest"
/* First token of the manifest's first line, followed by the ABI version. */
#define TESSEL_MANIFEST_MAGIC "tessel-artifact"

/* Name of the writable array of entry-function pointers (one per `import`
 * record of the manifest, in order) that an artifact calling other
 * artifacts exports. The runtime fills it when it links a composition;
 * a NULL slot is an unresolved import. */
#define TESSEL_IMPORTS_SYMBOL "tessel_artifact_imports"

/* What an entry returns when an import it calls is not linked (it returns
 * before touching any buffer). */
#define TESSEL_ENTRY_UNRESOLVED_IMPORT (-2)

/* What an import call returns when the caller's buffers disagree on the
 * size of a named dimension (ABI v3): the import is not called. An entry
 * returns it too when its outputs or the operands of an elementwise op
 * have sizes that disagree at run time (tessel-check-result-dims,
 * tessel-check-broadcasts). */
#define TESSEL_ENTRY_SHAPE_MISMATCH (-3)

/* What an entry returns when an index input (of a gather or scatter) is out
 * of the range its model allows (tessel.check_indices); the access reads
 * and writes in bounds all the same. */
#define TESSEL_ENTRY_INDEX_OUT_OF_RANGE (-4)

/* What an entry returns when an integer division or remainder has a zero
 * divisor (tessel-check-divisors); the division is done by 1 instead, so
 * nothing traps. */
#define TESSEL_ENTRY_DIVISION_BY_ZERO (-5)

/* What an entry returns when it reads the value of an optional that holds
 * none (ONNX OptionalGetElement of an empty optional, ABI v7); the read
 * gives zeros, or an empty sequence, instead. */
#define TESSEL_ENTRY_EMPTY_OPTIONAL (-6)

/* What an output slot points at when the output has a run-time dimension
 * (ABI v6: `?` in the manifest, a size that follows from the data, such as
 * NonZero's count). The caller sets `sizes` to an array of the output's
 * rank; the entry writes the sizes there and sets `data` to the elements
 * (dense, row-major), in memory from aligned_alloc(64, ...) that the caller
 * releases with free(). The entry fills both even when it fails. */
typedef struct tessel_run_time_output {
  void *data;
  int64_t *sizes;
} tessel_run_time_output_t;

/* What the runtime passes as an entry's `context` argument. struct_size lets
 * later runtimes append fields without breaking version-1 entries. */
typedef struct tessel_invoke_context {
  uint32_t struct_size;
  uint32_t num_threads;
} tessel_invoke_context_t;

/* buffers: inputs then outputs, manifest order; then, for a function with
 * named dimensions (ABI v3), a pointer to an int64_t array holding their
 * sizes in the order of first appearance among the inputs. Returns 0 on
 * success. */
typedef int32_t (*tessel_entry_fn)(void **buffers, void *context);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TESSEL_RUNTIME_TESSEL_ABI_H */
