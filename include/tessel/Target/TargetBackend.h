//===- TargetBackend.h - Where compiled code runs ----------------*- C++ -*-===//
//
// The compiler's pipeline splits in two (docs/pipeline/targets.md): the
// target-independent part (import -> model IR -> quantization, sparsity,
// composition decisions -> fusion -> linalg -> buffers) and per-target
// code generation. A TargetBackend owns the second part, as IREE's HAL
// target backends do: the passes from buffers to the LLVM dialect and the
// artifact ABI, and the serialization of that module into the artifact
// (object emission, linking, what is linked in). The target-independent
// pipeline asks a backend only for its capabilities.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_TARGET_TARGETBACKEND_H
#define TESSEL_TARGET_TARGETBACKEND_H

#include "tessel/Pipelines/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/LogicalResult.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace llvm {
class TargetMachine;
} // namespace llvm

namespace mlir::tessel {

/// What tessel-compile writes.
enum class EmitKind {
  MLIR,    ///< the LLVM-dialect module (or the --compile-to phase's IR)
  LLVM,    ///< textual LLVM IR after LLVM optimization
  Object,  ///< a relocatable object file
  Library, ///< the shared-library artifact (default)
  PTX,     ///< --target=cuda: the kernels' PTX
};

/// What the target-independent pipeline may rely on. Each is a separate
/// capability: a target may have a thread pool without a kernel library.
struct TargetCapabilities {
  /// Calls into Tessel's kernel library (lib/Kernels: convolutions,
  /// matmuls, attention, int8 and sparse kernels) at -O2 and up.
  bool kernelLibrary = false;
  /// Loop nests run on the kernel library's thread pool.
  bool threadPool = false;
  /// Buffers come from the kernel library's caching allocator.
  bool cachingAllocator = false;
  /// The host may read values computed by the model (grouped mixture-of-
  /// experts routing sizes each expert's batch from the router's counts).
  bool hostReadsResults = true;
  /// --precision=bf16: the target's codegen rounds the operands of every
  /// f32 convolution (conv_2d_nhwc_fhwc), matmul and batch matmul to bf16
  /// itself (the CUDA target's tensor-core tiles, as they stage them), so
  /// the target-independent rounding pass (tessel-compute-in-bf16) does not
  /// run: its truncations would hide those ops from the target's patterns.
  bool roundsBF16Contractions = false;
  /// Routes run expert-parallel across MPI processes (--expert-parallel):
  /// the target links Tessel's MPI runtime part (lib/RuntimeMPI) and the
  /// system's libmpi. The CPU has it where the build found MPI.
  bool mpi = false;
};

/// How a lowered module becomes the output file.
struct SerializeOptions {
  EmitKind emit = EmitKind::Library;
  std::string outputPath;
  unsigned optLevel = 2;
  /// Threads for LLVM's optimization and code generation of a large module
  /// (emit=lib), each on a part of the module: 0 one per hardware thread (at
  /// most 8) for a large module, one for a small one; N > 0: N.
  unsigned codegenThreads = 0;
  /// Link the kernel library (the CPU at -O2/-O3 with --kernels).
  bool kernelLibrary = false;
  /// What the artifact links (emit=lib): the backend's linkArchives,
  /// found by the driver before any work.
  std::vector<std::string> archives;
  /// MPI processes the artifact runs on (--expert-parallel); above 1 it
  /// links the MPI runtime part.
  int64_t mpiRanks = 1;
};

class TargetBackend {
public:
  virtual ~TargetBackend() = default;

  /// The --target name: "cpu", "cuda".
  virtual llvm::StringRef name() const = 0;

  /// Capabilities with this host CPU (the CPU's kernel library exists for
  /// x86-64 hosts only); null: what the target has on some host.
  virtual TargetCapabilities
  capabilities(const llvm::TargetMachine *host) const = 0;

  /// Why `options` cannot be compiled for this target on this machine (a
  /// tool it needs is missing), or nothing.
  virtual std::optional<std::string>
  unsupported(const PipelineOptions &options) const {
    return std::nullopt;
  }

  /// The target's passes on buffers before they are planned into one arena
  /// (tessel-plan-buffers): a kernel formed here of several ops keeps every
  /// buffer it touches live across it, where the planner would otherwise
  /// let buffers whose ops run one after the other share bytes.
  virtual void buildBufferPipeline(OpPassManager &pm,
                                   const PipelineOptions &options) const {}

  /// Bufferized IR (tessel-linalg-to-buffers' output) to the LLVM dialect
  /// with the artifact ABI (entries and manifest).
  virtual void buildCodegenPipeline(OpPassManager &pm,
                                    const PipelineOptions &options) const = 0;

  /// The static archives an artifact (emit=lib) links, looked up before
  /// any work is done so that a missing library fails fast.
  virtual llvm::Expected<std::vector<std::string>>
  linkArchives(const llvm::TargetMachine &host,
               const SerializeOptions &options) const = 0;

  /// Writes the codegen pipeline's module as `options.emit` says (an
  /// artifact linked with `options.archives`).
  virtual LogicalResult serialize(ModuleOp module, llvm::TargetMachine &host,
                                  const SerializeOptions &options,
                                  TimingScope &timing) const = 0;
};

/// The backend of `target`.
const TargetBackend &getTargetBackend(Target target);

} // namespace mlir::tessel

#endif // TESSEL_TARGET_TARGETBACKEND_H
