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
#include "tessel/Target/TargetBackend.h"
#include "tessel/Quantization/Calibration.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"
#include "mlir/Support/Timing.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::tessel {

/// One model input's calibration samples, stacked on a new leading axis
/// (`[K, *input shape]`), row-major.
struct CalibrationSamples {
  std::string source; ///< where they came from, for messages
  std::string dtype;  ///< ABI dtype name: "f32", "i64", ...
  std::vector<int64_t> dims;
  std::vector<char> data;
};

/// Reads a .npy file of stacked samples; on failure returns std::nullopt
/// and sets `error`.
std::optional<CalibrationSamples> readCalibrationSamples(llvm::StringRef path,
                                                         std::string &error);

struct CompileOptions {
  unsigned optLevel = 2;
  /// Threads for LLVM's optimization and code generation of a large model
  /// (the library artifact), each on a part of the module: 0 one per
  /// hardware thread (at most 8) for a large model, one for a small one.
  unsigned codegenThreads = 0;
  /// "native" (the host CPU and its features) or an LLVM CPU name.
  std::string mcpu = "native";
  /// Empty: the host triple.
  std::string targetTriple;
  EmitKind emit = EmitKind::Library;
  /// Stop after this phase and write its MLIR.
  std::optional<Phase> compileTo;
  /// Where the model runs; a GPU target's host code runs on the CPU that
  /// mcpu/targetTriple name.
  Target target = Target::CPU;
  /// Target::CUDA: the least GPU architecture (sm_NN).
  std::string cudaArch = "sm_80";
  /// Target::CUDA: how the kernels are embedded (PipelineOptions'
  /// cuda-binary; --emit=ptx keeps PTX).
  CudaBinary cudaBinary = CudaBinary::Auto;
  /// Use the kernel library at -O2/-O3 (x86-64 targets only).
  bool kernels = true;
  /// compose.route lowering: "grouped" or "dense" (the reference).
  std::string routeLowering = "grouped";
  /// Run each compose.route's experts on this many MPI processes (1: one
  /// process; docs/scale-out.md).
  int64_t expertParallel = 1;
  /// Experts on each process, in rank order (empty: as even as possible).
  std::vector<int64_t> expertPlacement;
  /// Non-empty: compile only this compose.component, as the entry point.
  std::string component;
  /// What f32 convolutions and matmuls compute in.
  Precision precision = Precision::F32;
  /// Matmuls whose constant weights are mostly zeros run on the sparse
  /// kernel where the cost model predicts a gain (-O2 and up;
  /// docs/sparsity.md). false: --sparsity=off.
  bool sparsity = true;
  /// Non-empty: write the per-matmul sparsity analysis here.
  std::string sparsityReport;
  /// Quantization done by the compiler (QDQ models need none).
  QuantizeMode quantize = QuantizeMode::None;
  /// Static int8 (quantize == Int8): the samples of each model input, in
  /// order. Empty: the module is already calibrated (or has nothing to
  /// quantize).
  std::vector<CalibrationSamples> calibration;
  CalibrationMethod calibrationMethod = CalibrationMethod::MinMax;
  /// For CalibrationMethod::Percentile: the central % of values kept.
  double calibrationPercentile = 99.99;
  /// Node names (ONNX node names: the ops' NameLocs) kept in float.
  std::vector<std::string> quantizeExclude;
  /// Non-empty: write the per-layer quantization report (JSON) here.
  std::string quantizeReport;
};

/// Compiles `module` (model-level IR) in place and writes the result to
/// `outputPath` ("-" is stdout for textual outputs). Diagnostics go to the
/// context's handler; `timing` collects per-stage times.
LogicalResult compileModule(ModuleOp module, const CompileOptions &options,
                            llvm::StringRef outputPath, TimingScope &timing);

} // namespace mlir::tessel

#endif // TESSEL_COMPILER_COMPILER_H
