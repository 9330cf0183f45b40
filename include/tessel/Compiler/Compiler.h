//===- Compiler.h - Model IR to a runnable artifact -------------*- C++ -*-===//
//
// The library behind tessel-compile (and, later, the Python package): runs
// the phase pipelines, translates to LLVM IR, optimizes, generates an object
// file for the target and links the single shared-library artifact.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_COMPILER_COMPILER_H
#define TESSEL_COMPILER_COMPILER_H

#include "tessel/Pipelines/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"
#include "mlir/Support/Timing.h"

#include <optional>
#include <string>

namespace mlir::tessel {

/// What tessel-compile writes.
enum class EmitKind {
  MLIR,    ///< the LLVM-dialect module (or the --compile-to phase's IR)
  LLVM,    ///< textual LLVM IR after LLVM optimization
  Object,  ///< a relocatable object file
  Library, ///< the shared-library artifact (default)
};

struct CompileOptions {
  unsigned optLevel = 2;
  /// "native" (the host CPU and its features) or an LLVM CPU name.
  std::string mcpu = "native";
  /// Empty: the host triple.
  std::string targetTriple;
  EmitKind emit = EmitKind::Library;
  /// Stop after this phase and write its MLIR.
  std::optional<Phase> compileTo;
  /// Use the kernel library at -O2/-O3 (x86-64 targets only).
  bool kernels = true;
  /// compose.route lowering: "grouped" or "dense" (the reference).
  std::string routeLowering = "grouped";
  /// Non-empty: compile only this compose.component, as the entry point.
  std::string component;
  /// Quantization done by the compiler (QDQ models need none).
  QuantizeMode quantize = QuantizeMode::None;
};

/// Compiles `module` (model-level IR) in place and writes the result to
/// `outputPath` ("-" is stdout for textual outputs). Diagnostics go to the
/// context's handler; `timing` collects per-stage times.
LogicalResult compileModule(ModuleOp module, const CompileOptions &options,
                            llvm::StringRef outputPath, TimingScope &timing);

} // namespace mlir::tessel

#endif // TESSEL_COMPILER_COMPILER_H
