//===- CompilerFacade.h - The compiler, behind plain C++ types ---*- C++ -*-===//
//
// What the Python extension needs from the compiler (parse, import, print,
// run pass pipelines, compile to an artifact), with nothing but standard
// library types in the interface. The facade is compiled like the rest of
// the compiler (no RTTI, as LLVM is built); the pybind11 module, which needs
// RTTI, includes only this header, never an MLIR one.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_PYTHON_COMPILERFACADE_H
#define TESSEL_PYTHON_COMPILERFACADE_H

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace tessel::python {

/// Success, or a one-line message plus the MLIR diagnostics (with their
/// locations) that explain it.
struct Status {
  bool ok = true;
  std::string message;
  std::string diagnostics;
  static Status failure(std::string message, std::string diagnostics = {}) {
    return {false, std::move(message), std::move(diagnostics)};
  }
};

struct CompileOptions {
  unsigned optLevel = 3;
  std::string mcpu = "native";
  std::string targetTriple;
  bool kernels = true;
  /// compose.route lowering: "grouped" or "dense".
  std::string routeLowering = "grouped";
  /// MPI processes each route's experts are spread over, and how many each
  /// holds (tessel-compile --expert-parallel, --expert-placement).
  int64_t expertParallel = 1;
  std::vector<int64_t> expertPlacement;
  /// Non-empty: compile only this compose.component, as the entry point.
  std::string component;
  /// "cpu" or "cuda" (tessel-compile --target), and the GPU architecture.
  std::string target = "cpu";
  std::string cudaArch = "sm_80";
  /// target="cuda": "auto", "ptx" or "fatbin" (--cuda-binary).
  std::string cudaBinary = "auto";
  /// "lib" (the artifact), "obj", "llvm", "mlir" or "ptx".
  std::string emit = "lib";
  /// Empty, or a phase name: stop there and write its MLIR.
  std::string compileTo;
  /// "f32" or "bf16" (tessel-compile --precision).
  std::string precision = "f32";
  /// "auto" or "off" (tessel-compile --sparsity).
  std::string sparsity = "auto";
  /// Non-empty: the sparsity analysis is written here
  /// (tessel-compile --sparsity-report).
  std::string sparsityReport;
  /// "none", "int8" or "int8-dynamic" (tessel-compile --quantize).
  std::string quantize = "none";
  /// quantize == "int8": each model input's samples, stacked on a new
  /// leading axis (tessel-compile --calibration-data).
  struct Samples {
    std::string dtype; ///< ABI name: "f32", "i64", ...
    std::vector<int64_t> dims;
    std::string bytes; ///< row-major
  };
  std::vector<Samples> calibration;
  std::string calibrationMethod = "minmax";
  double calibrationPercentile = 99.99;
  std::vector<std::string> quantizeExclude;
  std::string quantizeReport;
};

struct PassInfo {
  std::string name;
  std::string description;
  bool isPipeline;
};

/// One MLIR module with its own context (all Tessel dialects loaded).
class IRModule {
public:
  ~IRModule();
  IRModule(const IRModule &) = delete;
  IRModule &operator=(const IRModule &) = delete;

  /// Parses MLIR text (or bytecode); `name` is the buffer's name in
  /// locations. Null with `status` set on failure.
  static std::unique_ptr<IRModule> parse(const std::string &text,
                                         const std::string &name,
                                         Status &status);
  /// Imports a serialized ONNX ModelProto. `shapes` pins input shapes
  /// (as tessel-compile --shape does); `raiseMoE` is --raise-moe.
  static std::unique_ptr<IRModule>
  importONNX(const std::string &bytes, const std::string &name,
             const std::vector<std::pair<std::string, std::vector<int64_t>>>
                 &shapes,
             bool raiseMoE, Status &status);

  std::unique_ptr<IRModule> clone() const;
  std::string str(bool debugInfo, bool generic) const;
  Status verify() const;
  /// Runs a textual pass pipeline ("builtin.module(canonicalize,cse)" or
  /// the short form "canonicalize,cse", which is nested under the module).
  Status runPipeline(const std::string &pipeline);
  /// Compiles in place (the module ends in the LLVM dialect) and writes
  /// the result to `outputPath`.
  Status compile(const CompileOptions &options, const std::string &outputPath);
  /// Names of the module's public functions.
  std::vector<std::string> functionNames() const;

private:
  struct Impl;
  explicit IRModule(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl;
};

/// Every registered pass and pass pipeline, sorted by name.
std::vector<PassInfo> registeredPasses();

/// The phase names `compileTo` accepts.
std::vector<std::string> phaseNames();

} // namespace tessel::python

#endif // TESSEL_PYTHON_COMPILERFACADE_H
