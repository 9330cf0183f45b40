//===- Artifact.h - tessel_artifact_t / tessel_function_t -------*- C++ -*-===//
#ifndef TESSEL_LIB_RUNTIME_ARTIFACT_H
#define TESSEL_LIB_RUNTIME_ARTIFACT_H

#include "Manifest.h"
#include "tessel/Runtime/tessel_abi.h"

#include <memory>
#include <string>
#include <vector>

struct tessel_function {
  tessel::rt::detail::ManifestFunction info;
  tessel_entry_fn entry = nullptr;
  const tessel_artifact *artifact = nullptr;
};

struct tessel_artifact {
  std::string path;
  void *handle = nullptr; // dlopen handle, closed by tessel_artifact_free
  /// The memfd the library was loaded from; kept open while the library
  /// is, so its /proc/self/fd name is never reused for another library
  /// (dlopen would match it by name).
  int privateFd = -1;
  uint32_t version = 0;
  std::string target;
  // Built once at load time and never resized: tessel_function_t pointers
  // handed to callers stay valid for the artifact's lifetime.
  std::vector<tessel_function> functions;
  /// The manifest's import records, in slot order.
  std::vector<tessel::rt::detail::ManifestFunction> imports;
  /// The artifact's exported TESSEL_IMPORTS_SYMBOL (imports.size() slots);
  /// null when it has no imports.
  tessel_entry_fn *importTable = nullptr;
  /// The function each slot is linked to; null while unresolved. Written
  /// together with importTable by the linker.
  std::vector<const tessel_function *> providers;
  /// `device` record: "cuda" and its architecture; empty on the CPU.
  std::string deviceKind, deviceArch;
  /// A device artifact's "first device error since the last call" query
  /// (lib/DeviceRuntime): (message, size) -> nonzero on an error.
  int (*takeDeviceError)(char *, size_t) = nullptr;
  /// The device's name ("NVIDIA H100 80GB HBM3 sm_90").
  const char *(*deviceName)() = nullptr;
  /// Kernel timing: on/off, and the kernels' time of the calling thread's
  /// last call (ms, -1 without timing).
  void (*deviceTiming)(int) = nullptr;
  double (*lastKernelMs)() = nullptr;
  /// tessel_artifact_device's text ("cuda NVIDIA H100 ... sm_90").
  std::string deviceText;
  /// `ranks` record (ABI v8): the MPI processes the artifact runs on (0:
  /// one process), this process's rank, and the artifact's MPI runtime
  /// part (lib/RuntimeMPI): rank 0's bytes to every process, the largest
  /// value over the processes.
  int ranks = 0, rank = 0;
  void (*mpiBroadcast)(void *, int64_t) = nullptr;
  double (*mpiMax)(double) = nullptr;
  void (*mpiAbort)(int32_t) = nullptr;
};

namespace tessel::rt::detail {

/// An artifact freed with tessel_artifact_free's logic.
using ArtifactPtr =
    std::unique_ptr<tessel_artifact, void (*)(tessel_artifact *)>;

/// Loads `path` (docs/runtime.md, "Load errors"): checks the ELF magic and
/// the seal (include/tessel/Runtime/ArtifactSeal.h), then dlopens a private,
/// sealed memfd copy of the bytes it checked. Every load is its own
/// instance of the library: two compositions linking the same importer to
/// different providers keep separate import tables, and a file replaced or
/// truncated after loading changes nothing in the process.
ArtifactPtr loadArtifact(const std::string &path);

} // namespace tessel::rt::detail

#endif // TESSEL_LIB_RUNTIME_ARTIFACT_H
