/*
 * tessel_runtime.h - C API of the Tessel runtime (libTesselRuntime).
 *
 * The runtime loads artifacts written by tessel-compile (see
 * docs/artifact-abi.md), checks arguments against the artifact's manifest and
 * calls its entry points. It depends on nothing but libc/libdl, so it can be
 * embedded anywhere the compiler (LLVM/MLIR) is not available.
 *
 * Error model: every fallible call returns a tessel_status_t*. NULL means
 * success; otherwise the caller owns the status and must release it with
 * tessel_status_free(). Out-parameters are only written on success.
 */
#ifndef TESSEL_RUNTIME_TESSEL_RUNTIME_H
#define TESSEL_RUNTIME_TESSEL_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TESSEL_RUNTIME_VERSION "0.1.0"
/* Newest artifact ABI version this runtime can load. */
#define TESSEL_ABI_VERSION 8

/* Version string of the loaded library (may differ from the header's). */
const char *tessel_runtime_version(void);

/* ---- Status ------------------------------------------------------------ */

typedef enum tessel_status_code {
  TESSEL_OK = 0,
  TESSEL_INVALID_ARGUMENT = 1,  /* caller passed something wrong */
  TESSEL_NOT_FOUND = 2,         /* file / function / symbol does not exist */
  TESSEL_IO_ERROR = 3,          /* file unreadable, truncated, write failed */
  TESSEL_INVALID_ARTIFACT = 4,  /* not a (valid) Tessel artifact */
  TESSEL_UNSUPPORTED = 5,       /* valid input this runtime cannot handle */
  TESSEL_EXECUTION_FAILED = 6,  /* an entry point returned non-zero */
  TESSEL_OUT_OF_MEMORY = 7,
  TESSEL_INTERNAL = 8
} tessel_status_code_t;

typedef struct tessel_status tessel_status_t;

/* Both accept NULL (== OK): code TESSEL_OK, message "OK". */
tessel_status_code_t tessel_status_code(const tessel_status_t *status);
const char *tessel_status_message(const tessel_status_t *status);
void tessel_status_free(tessel_status_t *status);
/* "OK", "INVALID_ARGUMENT", ... */
const char *tessel_status_code_name(tessel_status_code_t code);

/* ---- Element types ----------------------------------------------------- */

typedef enum tessel_dtype {
  TESSEL_DTYPE_INVALID = 0,
  TESSEL_DTYPE_F32,
  TESSEL_DTYPE_F16,
  TESSEL_DTYPE_BF16,
  TESSEL_DTYPE_F64,
  TESSEL_DTYPE_I64,
  TESSEL_DTYPE_I32,
  TESSEL_DTYPE_I16,
  TESSEL_DTYPE_I8,
  TESSEL_DTYPE_U8,
  TESSEL_DTYPE_I1, /* bool, one byte per element holding 0 or 1 */
  TESSEL_DTYPE_U16,
  TESSEL_DTYPE_U32,
  TESSEL_DTYPE_U64
} tessel_dtype_t;

/* Manifest spelling ("f32", "i1", ...); "invalid" for unknown values. */
const char *tessel_dtype_name(tessel_dtype_t dtype);
/* Bytes per element; 0 for TESSEL_DTYPE_INVALID. */
size_t tessel_dtype_size(tessel_dtype_t dtype);
/* Inverse of tessel_dtype_name; also accepts "bool" for i1. Returns
 * TESSEL_DTYPE_INVALID for unknown names. */
tessel_dtype_t tessel_dtype_from_name(const char *name);

/* ---- Tensors ----------------------------------------------------------- */

/* A dense row-major tensor. Owning tensors hold 64-byte aligned storage;
 * views describe memory the caller owns and must keep alive. */
typedef struct tessel_tensor tessel_tensor_t;

/* New zero-filled owning tensor. dims may be NULL when rank == 0. */
tessel_status_t *tessel_tensor_allocate(tessel_dtype_t dtype, size_t rank,
                                        const int64_t *dims,
                                        tessel_tensor_t **out);
/* New view of caller memory; byte_size must equal the tensor's byte size.
 * Freeing the view never frees data. */
tessel_status_t *tessel_tensor_wrap(tessel_dtype_t dtype, size_t rank,
                                    const int64_t *dims, void *data,
                                    size_t byte_size, tessel_tensor_t **out);
void tessel_tensor_free(tessel_tensor_t *tensor); /* NULL is fine */

tessel_dtype_t tessel_tensor_dtype(const tessel_tensor_t *tensor);
size_t tessel_tensor_rank(const tessel_tensor_t *tensor);
const int64_t *tessel_tensor_dims(const tessel_tensor_t *tensor);
size_t tessel_tensor_num_elements(const tessel_tensor_t *tensor);
size_t tessel_tensor_byte_size(const tessel_tensor_t *tensor);
void *tessel_tensor_data(tessel_tensor_t *tensor);
const void *tessel_tensor_const_data(const tessel_tensor_t *tensor);
int tessel_tensor_is_view(const tessel_tensor_t *tensor);
/* Element `index` (row-major flat index) converted to double; used for
 * printing and tolerance comparison. NaN when index is out of range. */
double tessel_tensor_element_as_double(const tessel_tensor_t *tensor,
                                       size_t index);

/* .npy files (NPY 1.0/2.0/3.0 read, 1.0 written; little-endian, C order). */
tessel_status_t *tessel_npy_read(const char *path, tessel_tensor_t **out);
tessel_status_t *tessel_npy_write(const char *path,
                                  const tessel_tensor_t *tensor);

/* Inline text tensors, IREE style: "2x3xf32=1 2 3 4 5 6", "f32=5". */
tessel_status_t *tessel_tensor_parse(const char *text, tessel_tensor_t **out);
/* "2x3xf32=[1 2 3][4 5 6]"; NULL on out-of-memory. Release with free(). */
char *tessel_tensor_format(const tessel_tensor_t *tensor);

/* ---- Artifacts and functions ------------------------------------------- */

typedef struct tessel_artifact tessel_artifact_t;
typedef struct tessel_function tessel_function_t;

/* dlopen()s `path` (RTLD_NOW | RTLD_LOCAL), parses its manifest and resolves
 * every entry symbol. */
tessel_status_t *tessel_artifact_load(const char *path,
                                      tessel_artifact_t **out);
/* As tessel_artifact_load, on a chosen device: "cpu", "cuda" or "cuda:N"
 * (the N-th CUDA device; instead of TESSEL_CUDA_DEVICE); NULL or "" for the
 * artifact's own. An artifact compiled for another device fails with
 * TESSEL_UNSUPPORTED saying what it was compiled for; an unknown device
 * string with TESSEL_INVALID_ARGUMENT. */
tessel_status_t *tessel_artifact_load_on(const char *path, const char *device,
                                         tessel_artifact_t **out);
/* Unloads the library; every function/pointer obtained from it dies too. */
void tessel_artifact_free(tessel_artifact_t *artifact);

const char *tessel_artifact_path(const tessel_artifact_t *artifact);
/* The manifest's `target` triple. */
const char *tessel_artifact_target(const tessel_artifact_t *artifact);
/* Where the artifact's kernels run: "cpu", or for a --target=cuda artifact
 * "cuda" followed by the device it runs on ("cuda NVIDIA H100 ... sm_90"). */
const char *tessel_artifact_device(const tessel_artifact_t *artifact);
/* Expert-parallel artifacts (tessel-compile --expert-parallel=N, ABI v8):
 * the MPI processes the artifact runs on (1 for every other artifact) and
 * this process's rank in them (0 otherwise). Loading one starts MPI and
 * fails unless the job has exactly N processes (mpirun -np N). Every
 * process calls each function, in the same order; rank 0's inputs are
 * used (broadcast to the others), and every process gets the outputs. */
int tessel_artifact_ranks(const tessel_artifact_t *artifact);
int tessel_artifact_rank(const tessel_artifact_t *artifact);
/* The largest `value` over an expert-parallel artifact's processes, on
 * every process (each must call it; a benchmark's slowest time); `value`
 * itself for other artifacts. */
double tessel_artifact_max_over_ranks(const tessel_artifact_t *artifact,
                                      double value);
/* Ends every process of an expert-parallel artifact's job with exit status
 * `code` (MPI_Abort) and does not return: a process that fails must not
 * leave the others waiting in a collective. No effect on other artifacts. */
void tessel_artifact_abort_ranks(const tessel_artifact_t *artifact, int code);
/* Device artifacts: time the kernels of each call (off by default; timing
 * records two events per call). No effect on CPU artifacts. */
void tessel_artifact_set_device_timing(tessel_artifact_t *artifact, int on);
/* With timing on: the kernels' time in ms of the calling thread's last call
 * (first launch to last kernel's end: copies in and out excluded); else -1.
 */
double tessel_artifact_last_kernel_ms(const tessel_artifact_t *artifact);
uint32_t tessel_artifact_abi_version(const tessel_artifact_t *artifact);
size_t tessel_artifact_num_functions(const tessel_artifact_t *artifact);
/* NULL when index is out of range. Owned by the artifact. */
const tessel_function_t *
tessel_artifact_function_at(const tessel_artifact_t *artifact, size_t index);
/* TESSEL_NOT_FOUND (listing the available names) when absent. */
tessel_status_t *tessel_artifact_lookup_function(
    const tessel_artifact_t *artifact, const char *name,
    const tessel_function_t **out);

/* One input or output of a function; all pointers are owned by the
 * artifact. */
typedef struct tessel_value_info {
  const char *name;
  tessel_dtype_t dtype;
  size_t rank;
  const int64_t *dims; /* `rank` entries; -1 at a named (dynamic) one */
  /* `rank` entries: the name of each dynamic dimension ("T"), NULL at a
   * static one. Dimensions of one name have one size per invocation, bound
   * from the inputs (ABI version 3). An output's "?" is a run-time
   * dimension (ABI version 6): its size follows from the data and is known
   * only from the output the call returns. */
  const char *const *dim_names;
} tessel_value_info_t;

const char *tessel_function_name(const tessel_function_t *function);
const char *tessel_function_symbol(const tessel_function_t *function);
size_t tessel_function_num_inputs(const tessel_function_t *function);
size_t tessel_function_num_outputs(const tessel_function_t *function);
/* TESSEL_INVALID_ARGUMENT when index is out of range. */
tessel_status_t *tessel_function_input(const tessel_function_t *function,
                                       size_t index, tessel_value_info_t *out);
tessel_status_t *tessel_function_output(const tessel_function_t *function,
                                        size_t index,
                                        tessel_value_info_t *out);

/* Vocabulary of a symbol-typed input/output (its i32 elements are symbol
 * ids in [0, vocab)); 0 for a plain tensor or an index out of range. */
int64_t tessel_function_input_vocab(const tessel_function_t *function,
                                    size_t index);
int64_t tessel_function_output_vocab(const tessel_function_t *function,
                                     size_t index);
/* What a tensor is part of (ABI v7), as "ROLE:OWNER": a graph value that is
 * no tensor crosses the ABI as several. A sequence OWNER is "sizes:OWNER"
 * (i64 [count, rank]: each element's shape) and "data:OWNER" (its elements'
 * contents, one after another, row-major); an optional OWNER adds
 * "present:OWNER" (an i1 scalar) before its value's parts ("value:OWNER"
 * for a tensor: zeros when the optional is empty). NULL for a plain
 * tensor or an index out of range. Owned by the function. */
const char *tessel_function_input_part(const tessel_function_t *function,
                                       size_t index);
const char *tessel_function_output_part(const tessel_function_t *function,
                                        size_t index);
/* The artifact the function belongs to. */
const tessel_artifact_t *
tessel_function_artifact(const tessel_function_t *function);

/* ---- Imports and compositions -------------------------------------------
 *
 * An artifact may import functions that other artifacts export (separately
 * compiled components, docs/artifact-abi.md). A composition loads a set of
 * artifacts and links every import to the one function of the set exported
 * under its name, checking dtypes, shapes and symbol vocabularies. A
 * function whose imports are not linked (its artifact loaded alone) fails
 * to invoke with TESSEL_NOT_FOUND naming the import. */

size_t tessel_artifact_num_imports(const tessel_artifact_t *artifact);
/* "" when index is out of range. */
const char *tessel_artifact_import_name(const tessel_artifact_t *artifact,
                                        size_t index);
/* The function the import is linked to; NULL while unresolved. */
const tessel_function_t *
tessel_artifact_import_provider(const tessel_artifact_t *artifact,
                                size_t index);

typedef struct tessel_composition tessel_composition_t;

/* Loads the artifacts at `paths` and links them. Errors: a load error of
 * one artifact; TESSEL_NOT_FOUND for an import no artifact exports;
 * TESSEL_INVALID_ARGUMENT for a name two artifacts export, an interface
 * mismatch or a cycle of imports. An artifact that has imports is loaded
 * as a private instance, so it can be part of several compositions (and
 * loaded alone) at once. */
tessel_status_t *tessel_composition_link(const char *const *paths, size_t n,
                                         tessel_composition_t **out);
/* Reads a composition file ("tessel-composition 1", then "artifact PATH"
 * lines, relative paths resolved against the file's folder, an optional
 * "entry NAME") and links its artifacts. Syntax errors are
 * TESSEL_INVALID_ARGUMENT with the line number. */
tessel_status_t *tessel_composition_load(const char *path,
                                         tessel_composition_t **out);
/* Unloads every artifact; functions obtained from it die too. NULL is
 * fine. */
void tessel_composition_free(tessel_composition_t *composition);

/* The composition file ("" when linked from a list) and its `entry` ("" when
 * it names none). */
const char *tessel_composition_path(const tessel_composition_t *composition);
const char *tessel_composition_entry(const tessel_composition_t *composition);
size_t
tessel_composition_num_artifacts(const tessel_composition_t *composition);
/* Owned by the composition; NULL when index is out of range. */
const tessel_artifact_t *
tessel_composition_artifact_at(const tessel_composition_t *composition,
                               size_t index);
/* A function exported by any artifact of the composition. TESSEL_NOT_FOUND
 * (listing the names) when absent. */
tessel_status_t *tessel_composition_lookup_function(
    const tessel_composition_t *composition, const char *name,
    const tessel_function_t **out);
/* The function to run by default: the file's `entry`, else the only
 * function no artifact imports, else 'main'; TESSEL_INVALID_ARGUMENT
 * (listing the candidates) otherwise. */
tessel_status_t *tessel_composition_default_function(
    const tessel_composition_t *composition, const tessel_function_t **out);

/* 1 if the file at `path` starts with "tessel-composition", else 0. */
int tessel_is_composition_file(const char *path);

/* ---- Invocation -------------------------------------------------------- */

typedef struct tessel_invoke_options {
  uint32_t struct_size; /* sizeof(tessel_invoke_options_t); for evolution */
  uint32_t num_threads; /* 0 means the default, 1 */
} tessel_invoke_options_t;

void tessel_invoke_options_init(tessel_invoke_options_t *options);

/* Runs `function`.
 * - inputs: n_inputs tensors in manifest order; count, dtype and shape are
 *   checked against the manifest before anything runs. A named dimension
 *   takes its size from the first input that has it; every other input and
 *   output with that name must agree, and outputs are allocated with it.
 * - outputs: an array of n_outputs slots (n_outputs must equal the function's
 *   output count). A NULL slot receives a newly allocated tensor the caller
 *   then owns; a non-NULL slot is checked like an input and written in place.
 *   On error the slots are left exactly as the caller passed them.
 * - options: may be NULL (defaults). */
tessel_status_t *tessel_function_invoke(const tessel_function_t *function,
                                        tessel_tensor_t *const *inputs,
                                        size_t n_inputs,
                                        tessel_tensor_t **outputs,
                                        size_t n_outputs,
                                        const tessel_invoke_options_t *options);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TESSEL_RUNTIME_TESSEL_RUNTIME_H */
