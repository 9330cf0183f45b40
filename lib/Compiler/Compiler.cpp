//===- Compiler.cpp - Model IR to a runnable artifact ----------------------===//
#include "tessel/Compiler/Compiler.h"

#include "Calibration.h"
#include "KernelLibrary.h"
#include "Linker.h"
#include "NativeCodegen.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::tessel;

static LogicalResult writeText(ModuleOp module, StringRef path,
                               llvm::function_ref<void(raw_ostream &)> print) {
  std::string err;
  std::unique_ptr<llvm::ToolOutputFile> out = openOutputFile(path, &err);
  if (!out)
    return module.emitError() << err;
  print(out->os());
  out->keep();
  return success();
}

/// The PTX of every kernel module (gpu.binary objects in "isa" format),
/// one after the other, each headed by a comment naming its module.
static LogicalResult writePTX(ModuleOp module, StringRef path) {
  std::string text;
  for (auto binary : module.getOps<gpu::BinaryOp>())
    for (Attribute a : binary.getObjects()) {
      auto object = dyn_cast<gpu::ObjectAttr>(a);
      if (!object || object.getFormat() != gpu::CompilationTarget::Assembly)
        continue;
      text += "// ---- kernel module " + binary.getName().str() + "\n";
      text += object.getObject().getValue().str();
      text += "\n";
    }
  return writeText(module, path, [&](raw_ostream &os) { os << text; });
}

LogicalResult mlir::tessel::compileModule(ModuleOp module,
                                          const CompileOptions &options,
                                          StringRef outputPath,
                                          TimingScope &timing) {
  if (options.optLevel > 3)
    return module.emitError() << "optimization level must be 0..3, got "
                              << options.optLevel;
  // Check the target first: an unknown --mcpu must fail before any work.
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> tm =
      createTargetMachine(options.targetTriple, options.mcpu,
                          options.optLevel);
  if (!tm)
    return module.emitError() << llvm::toString(tm.takeError());

  // Kernel library: only where a variant exists for the target, and only
  // when something gets linked (an artifact) or the IR is asked for.
  bool onCpu = options.target == Target::CPU;
  std::optional<std::string> variant =
      options.kernels && onCpu ? kernelVariant(**tm) : std::nullopt;
  std::string kernelArchive;
  bool linking = !options.compileTo && options.emit == EmitKind::Library;
  if (variant && options.optLevel >= 2 && linking) {
    llvm::Expected<std::string> archive = findKernelArchive(*variant);
    if (!archive)
      return module.emitError() << llvm::toString(archive.takeError());
    kernelArchive = *archive;
  }
  // A CUDA artifact carries its device runtime (lib/DeviceRuntime).
  if (!onCpu && linking) {
    llvm::Expected<std::string> archive = findCudaDeviceArchive();
    if (!archive)
      return module.emitError() << llvm::toString(archive.takeError());
    kernelArchive = *archive;
  }

  // Static int8: calibrate first (the module gets its ranges), then the
  // pipeline quantizes what was calibrated.
  if (!options.calibration.empty()) {
    if (options.quantize != QuantizeMode::Int8)
      return module.emitError()
             << "calibration data is for static int8 quantization "
                "(--quantize=int8)";
    if (failed(calibrateModule(module, options, timing)))
      return failure();
  }

  PipelineOptions pipelineOptions;
  pipelineOptions.optLevel = options.optLevel;
  pipelineOptions.routeLowering = options.routeLowering;
  // Grouped routing sizes each expert's batch from the router's counts on
  // the host; on a GPU those counts live in device memory, so every expert
  // runs on every token (the same result; docs/pipeline/cuda.md).
  if (options.target == Target::CUDA)
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
      return module.emitError() << "cannot write the sparsity report '"
                                << options.sparsityReport
                                << "': " << ec.message();
  }
  pipelineOptions.kernels = variant.has_value() && options.optLevel >= 2;
  pipelineOptions.target = options.target;
  pipelineOptions.cudaArch = options.cudaArch;
  pipelineOptions.targetTriple = (*tm)->getTargetTriple().str();
  pipelineOptions.vectorBits = vectorRegisterBits(**tm);
  pipelineOptions.cpuFeatures = requiredCpuFeatures(**tm);
  Phase last = options.compileTo.value_or(Phase::LLVM);
  {
    PassManager pm(module.getContext());
    if (failed(applyPassManagerCLOptions(pm)))
      return module.emitError()
             << "invalid pass-manager options (or "
                "mlir::registerPassManagerCLOptions() was not called)";
    TimingScope mlirTiming = timing.nest("MLIR pipeline");
    pm.enableTiming(mlirTiming);
    buildPipeline(pm, pipelineOptions, Phase::Input, last);
    if (failed(pm.run(module)))
      return failure();
  }
  if (options.compileTo || options.emit == EmitKind::MLIR)
    return writeText(module, outputPath,
                     [&](raw_ostream &os) { module.print(os); });
  if (options.emit == EmitKind::PTX)
    return writePTX(module, outputPath);

  llvm::LLVMContext llvmContext;
  TimingScope translateTiming = timing.nest("Translate to LLVM IR");
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, "tessel_model");
  translateTiming.stop();
  if (!llvmModule)
    return module.emitError() << "translation to LLVM IR failed";
  llvmModule->setTargetTriple((*tm)->getTargetTriple());
  llvmModule->setDataLayout((*tm)->createDataLayout());

  TimingScope optTiming = timing.nest("LLVM optimization");
  optimizeModule(*llvmModule, **tm, options.optLevel);
  optTiming.stop();
  if (options.emit == EmitKind::LLVM)
    return writeText(module, outputPath,
                     [&](raw_ostream &os) { llvmModule->print(os, nullptr); });

  TimingScope codegenTiming = timing.nest("Code generation");
  if (options.emit == EmitKind::Object) {
    // ToolOutputFile writes "-" to stdout.
    if (llvm::Error e = writeObjectFile(*llvmModule, **tm, outputPath))
      return module.emitError() << llvm::toString(std::move(e));
    return success();
  }
  llvm::SmallString<128> objectPath;
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
          "tessel-model", "o", objectPath))
    return module.emitError() << "cannot create a temporary file: "
                              << ec.message();
  auto removeObject =
      llvm::make_scope_exit([&] { llvm::sys::fs::remove(objectPath); });
  if (llvm::Error e = writeObjectFile(*llvmModule, **tm, objectPath))
    return module.emitError() << llvm::toString(std::move(e));
  codegenTiming.stop();
  TimingScope linkTiming = timing.nest("Link");
  SmallVector<std::string> archives;
  if (!kernelArchive.empty())
    archives.push_back(kernelArchive);
  if (outputPath != "-") {
    if (llvm::Error e = linkSharedLibrary(objectPath, archives, outputPath))
      return module.emitError() << llvm::toString(std::move(e));
    return success();
  }
  // "-o -": the linker needs a file; link to a temporary one and copy its
  // bytes to stdout (as iree-compile does with its module).
  llvm::SmallString<128> libraryPath;
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
          "tessel-artifact", "so", libraryPath))
    return module.emitError() << "cannot create a temporary file: "
                              << ec.message();
  auto removeLibrary =
      llvm::make_scope_exit([&] { llvm::sys::fs::remove(libraryPath); });
  if (llvm::Error e = linkSharedLibrary(objectPath, archives, libraryPath))
    return module.emitError() << llvm::toString(std::move(e));
  auto bytes = llvm::MemoryBuffer::getFile(libraryPath, /*IsText=*/false,
                                           /*RequiresNullTerminator=*/false);
  if (!bytes)
    return module.emitError() << "cannot read the linked artifact: "
                              << bytes.getError().message();
  return writeText(module, "-", [&](raw_ostream &os) {
    os << (*bytes)->getBuffer();
  });
}
