//===- Compiler.cpp - Model IR to a runnable artifact ----------------------===//
//
// The target-independent driver: checks the options, calibrates, runs the
// pipeline (whose last phase is the target backend's code generation) and
// hands the lowered module to the backend to serialize.
//
//===----------------------------------------------------------------------===//
#include "tessel/Compiler/Compiler.h"

#include "Calibration.h"
#include "../Target/Host/HostArtifact.h"
#include "../Target/Host/NativeCodegen.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::tessel;

LogicalResult mlir::tessel::compileModule(ModuleOp module,
                                          const CompileOptions &options,
                                          StringRef outputPath,
                                          TimingScope &timing) {
  if (options.optLevel > 3)
    return emitError(module.getLoc())
           << "optimization level must be 0..3, got " << options.optLevel;
  // Check the host first: an unknown --mcpu must fail before any work.
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> tm =
      createTargetMachine(options.targetTriple, options.mcpu,
                          options.optLevel);
  if (!tm)
    return emitError(module.getLoc()) << llvm::toString(tm.takeError());
  const TargetBackend &backend = getTargetBackend(options.target);
  if (options.precision == Precision::F16 && options.target != Target::CUDA)
    return emitError(module.getLoc())
           << "--precision=f16 needs --target=cuda (the CPU computes in f32 "
              "or bf16)";
  TargetCapabilities caps = backend.capabilities(tm->get());

  if (options.expertParallel < 1)
    return emitError(module.getLoc())
           << "--expert-parallel must be at least 1, got "
           << options.expertParallel;
  if (options.expertParallel > 1 && !caps.mpi)
    return emitError(module.getLoc())
           << "--expert-parallel needs MPI, which the " << backend.name()
           << " target "
           << (options.target == Target::CPU
                   ? "of this Tessel lacks: it was built without MPI "
                     "(install libopenmpi-dev and rebuild)"
                   : "does not support yet");
  if (!options.expertPlacement.empty() && options.expertParallel < 2)
    return emitError(module.getLoc())
           << "--expert-placement needs --expert-parallel=N with N > 1";

  SerializeOptions serialize;
  serialize.mpiRanks = options.expertParallel;
  serialize.emit = options.emit;
  serialize.outputPath = outputPath.str();
  serialize.optLevel = options.optLevel;
  serialize.codegenThreads = options.codegenThreads;
  serialize.kernelLibrary =
      options.kernels && caps.kernelLibrary && options.optLevel >= 2;
  // What gets linked must exist before any work is done.
  if (!options.compileTo && options.emit == EmitKind::Library) {
    llvm::Expected<std::vector<std::string>> archives =
        backend.linkArchives(**tm, serialize);
    if (!archives)
      return emitError(module.getLoc()) << llvm::toString(archives.takeError());
    serialize.archives = std::move(*archives);
  }

  // Static int8: calibrate first (the module gets its ranges), then the
  // pipeline quantizes what was calibrated.
  if (!options.calibration.empty()) {
    if (options.quantize != QuantizeMode::Int8)
      return emitError(module.getLoc())
             << "calibration data is for static int8 quantization "
                "(--quantize=int8)";
    if (failed(calibrateModule(module, options, timing)))
      return failure();
  }

  PipelineOptions pipelineOptions;
  pipelineOptions.optLevel = options.optLevel;
  pipelineOptions.routeLowering = options.routeLowering;
  pipelineOptions.expertParallel = options.expertParallel;
  pipelineOptions.expertPlacement = options.expertPlacement;
  // Grouped routing sizes each expert's batch from the router's counts on
  // the host; where the host cannot read them (a GPU's device memory),
  // every expert runs on every token (the same result; docs/pipeline/
  // targets.md).
  if (!caps.hostReadsResults)
    pipelineOptions.routeLowering = "dense";
  pipelineOptions.component = options.component;
  pipelineOptions.quantize = options.quantize;
  pipelineOptions.precision = options.precision;
  pipelineOptions.sparsity = options.sparsity;
  pipelineOptions.sparsityReport = options.sparsityReport;
  // The pass appends a line per matmul: start the report empty.
  if (!options.sparsityReport.empty()) {
    std::error_code ec;
    llvm::raw_fd_ostream fresh(options.sparsityReport, ec);
    if (ec)
      return emitError(module.getLoc())
             << "cannot write the sparsity report '" << options.sparsityReport
             << "': " << ec.message();
  }
  pipelineOptions.kernels = serialize.kernelLibrary;
  pipelineOptions.target = options.target;
  pipelineOptions.cudaArch = options.cudaArch;
  pipelineOptions.cudaBinary = options.cudaBinary;
  // --emit=ptx writes the kernels' PTX: keep it in the binaries.
  if (options.emit == EmitKind::PTX)
    pipelineOptions.cudaBinary = CudaBinary::PTX;
  if (std::optional<std::string> why =
          getTargetBackend(options.target).unsupported(pipelineOptions))
    return emitError(module.getLoc()) << *why;
  pipelineOptions.targetTriple = (*tm)->getTargetTriple().str();
  pipelineOptions.vectorBits = vectorRegisterBits(**tm);
  pipelineOptions.fmaBits = fmaDatapathBits(**tm);
  pipelineOptions.laneOrder = permutesBesideFma(**tm);
  pipelineOptions.cpuFeatures = requiredCpuFeatures(**tm);
  Phase last = options.compileTo.value_or(Phase::LLVM);
  {
    PassManager pm(module.getContext());
    if (failed(applyPassManagerCLOptions(pm)))
      return emitError(module.getLoc())
             << "invalid pass-manager options (or "
                "mlir::registerPassManagerCLOptions() was not called)";
    TimingScope mlirTiming = timing.nest("MLIR pipeline");
    pm.enableTiming(mlirTiming);
    buildPipeline(pm, pipelineOptions, Phase::Input, last);
    if (failed(pm.run(module)))
      return failure();
  }
  if (options.compileTo || options.emit == EmitKind::MLIR)
    return writeTextFile(module, outputPath,
                         [&](raw_ostream &os) { module.print(os); });
  return backend.serialize(module, **tm, serialize, timing);
}
