//===- Manifest.h - the artifact manifest (docs/artifact-abi.md) -*- C++ -*-===//
//
// Parsed separately from dlopen so the grammar can be unit-tested on strings.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_RUNTIME_MANIFEST_H
#define TESSEL_LIB_RUNTIME_MANIFEST_H

#include "tessel/Runtime/tessel_runtime.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tessel::rt::detail {

struct ManifestValue {
  std::string name;
  tessel_dtype_t dtype = TESSEL_DTYPE_INVALID;
  /// The static size of each dimension; -1 at a named or run-time one.
  std::vector<int64_t> dims;
  /// The name of each dimension ("" at a static one). Dimensions of one
  /// name have one run-time size, bound from the inputs (version 3).
  std::vector<std::string> dimNames;
  /// C strings of dimNames (NULL at static dimensions) for the C API;
  /// filled by fillDimNamePointers once the value no longer moves.
  std::vector<const char *> dimNamePtrs;
  /// The vocabulary of a symbol-typed value (its elements are i32 ids in
  /// [0, vocab)); 0 for a plain tensor. Version 2 manifests only.
  int64_t vocab = 0;
  /// What the value is a part of (version 7): a graph value that is no
  /// tensor crosses the ABI as several tensors, each naming its role and
  /// its owner ("sizes:seq", "data:seq", "present:opt"); "" for a plain
  /// tensor. Clients (tessel-run, Python) group the parts back.
  std::string part;
};

/// Whether `v` (an output) has a run-time dimension ("?", version 6): a
/// size that follows from the data, which the entry returns.
inline bool hasRunTimeDim(const ManifestValue &v) {
  for (const std::string &n : v.dimNames)
    if (n == "?")
      return true;
  return false;
}

/// An entry point (`function` record) or an import (`import` record; no
/// symbol, no uses: its interface is what a provider must export).
struct ManifestFunction {
  std::string name;
  std::string symbol;
  std::vector<ManifestValue> inputs;
  std::vector<ManifestValue> outputs;
  /// Slots (indices into Manifest::imports) of the imports this entry
  /// calls (`uses` lines).
  std::vector<size_t> uses;
  /// The function's named dimensions in the order of the sizes array an
  /// entry call passes after its buffers: first appearance among the
  /// inputs. Every name an output uses is among them.
  std::vector<std::string> dimOrder;
};

struct Manifest {
  uint32_t version = 0;
  std::string target;
  /// CPU features the code needs (`requires` record, version 4): names from
  /// include/tessel/Runtime/CpuFeatures.def.
  std::vector<std::string> requiredFeatures;
  /// `device KIND ARCH` record (version 5): where the kernels run
  /// ("cuda", "sm_90"); empty kind: the CPU.
  std::string deviceKind, deviceArch;
  /// `ranks N` record (version 8): the artifact runs on N MPI processes
  /// (--expert-parallel); 0: one process.
  int ranks = 0;
  /// In slot order: imports[i] is filled from tessel_artifact_imports[i].
  std::vector<ManifestFunction> imports;
  std::vector<ManifestFunction> functions;
};

/// The manifest spelling of a value's shape: "[T,256]".
std::string shapeString(const ManifestValue &v);

/// Points v.dimNamePtrs into v.dimNames for every value of `f`.
void fillDimNamePointers(ManifestFunction &f);

/// Parses manifest text; throws Error (TESSEL_INVALID_ARTIFACT, or
/// TESSEL_UNSUPPORTED for a newer version) whose message
/// starts with "<source>: " and names the 1-based line.
Manifest parseManifest(const std::string &text, const std::string &source);

} // namespace tessel::rt::detail

#endif // TESSEL_LIB_RUNTIME_MANIFEST_H
