//===- CompilerFacade.cpp - The compiler behind plain C++ types -----------===//
//
// One MLIRContext per module keeps modules independent (a Python user may
// hold many, from different threads); diagnostics are collected into the
// returned Status instead of going to stderr, so Python raises them.
//
//===----------------------------------------------------------------------===//
#include "CompilerFacade.h"

#include "tessel/Compiler/Compiler.h"
#include "tessel/Importers/ONNX/ONNXImporter.h"
#include "tessel/InitAll.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/Timing.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "tessel/Support/GuardedParse.h"
#include "tessel/Support/InputLimits.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <mutex>

using namespace mlir;
using ::tessel::python::Status;

namespace {

/// Registration is global and must happen once, before any pipeline is
/// parsed.
void initializeOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    ::mlir::tessel::registerAllPasses();
    // compileModule applies the pass-manager command-line options (as
    // tessel-compile does); registered here they keep their defaults.
    mlir::registerPassManagerCLOptions();
  });
}

std::unique_ptr<MLIRContext> makeContext() {
  initializeOnce();
  DialectRegistry registry;
  ::mlir::tessel::registerAllDialects(registry);
  ::mlir::tessel::registerAllTranslations(registry);
  auto context = std::make_unique<MLIRContext>(registry);
  context->loadAllAvailableDialects();
  // Python callers may use several modules from several threads; each has
  // its own context, and a private thread pool per context would multiply
  // threads for nothing on small machines.
  context->disableMultithreading();
  return context;
}

/// Collects every diagnostic as "LOC: SEVERITY: MESSAGE" lines (notes
/// indented below their diagnostic) while it is alive.
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(MLIRContext *context)
      : handler(context, [this](Diagnostic &diag) {
          append(diag, "");
          return success();
        }) {}
  std::string take() { return std::move(text); }

private:
  void append(Diagnostic &diag, llvm::StringRef indent) {
    llvm::raw_string_ostream os(text);
    os << indent;
    if (!llvm::isa<UnknownLoc>(diag.getLocation()))
      os << diag.getLocation() << ": ";
    switch (diag.getSeverity()) {
    case DiagnosticSeverity::Error:
      os << "error: ";
      break;
    case DiagnosticSeverity::Warning:
      os << "warning: ";
      break;
    case DiagnosticSeverity::Note:
      os << "note: ";
      break;
    case DiagnosticSeverity::Remark:
      os << "remark: ";
      break;
    }
    os << diag << "\n";
    for (Diagnostic &note : diag.getNotes())
      append(note, "  ");
  }
  std::string text;
  ScopedDiagnosticHandler handler;
};

} // namespace

namespace tessel::python {
using ::mlir::tessel::parsePhase;

struct IRModule::Impl {
  std::unique_ptr<MLIRContext> context;
  OwningOpRef<ModuleOp> module;
};

IRModule::IRModule(std::unique_ptr<Impl> impl) : impl(std::move(impl)) {}
IRModule::~IRModule() {
  // The module's operations belong to the context: destroy them first.
  if (impl)
    impl->module = nullptr;
}

std::unique_ptr<IRModule> IRModule::parse(const std::string &text,
                                          const std::string &name,
                                          Status &status) {
  std::string tooDeep;
  if (!mlir::tessel::checkMLIRNesting(text, tooDeep)) {
    status = Status::failure("cannot parse '" + name + "'", tooDeep);
    return nullptr;
  }
  auto impl = std::make_unique<Impl>();
  impl->context = makeContext();
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, name), llvm::SMLoc());
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  // Parse errors print with the offending source line and a caret.
  SourceMgrDiagnosticHandler handler(sourceMgr, impl->context.get(), os);
  bool crashed = false;
  impl->module = mlir::tessel::parseModuleGuarded(
      sourceMgr, impl->context.get(), crashed);
  if (crashed) {
    // The context may be half-built: leak it rather than destroy it.
    (void)impl->module.release();
    (void)impl->context.release();
    status = Status::failure(mlir::tessel::parserCrashMessage(name),
                             diagnostics);
    return nullptr;
  }
  if (!impl->module) {
    status = Status::failure("cannot parse '" + name + "'", diagnostics);
    return nullptr;
  }
  if (failed(mlir::verify(*impl->module))) {
    status = Status::failure("'" + name + "' does not verify", diagnostics);
    return nullptr;
  }
  status = Status();
  return std::unique_ptr<IRModule>(new IRModule(std::move(impl)));
}

std::unique_ptr<IRModule> IRModule::importONNX(
    const std::string &bytes, const std::string &name,
    const std::vector<std::pair<std::string, std::vector<int64_t>>> &shapes,
    bool raiseMoE, Status &status) {
  auto impl = std::make_unique<Impl>();
  impl->context = makeContext();
  ::mlir::tessel::onnx_import::ImportOptions options;
  options.raiseMixtureOfExperts = raiseMoE;
  for (const auto &[input, dims] : shapes)
    options.shapes[input] = llvm::SmallVector<int64_t>(dims.begin(), dims.end());
  DiagnosticCollector collector(impl->context.get());
  impl->module = ::mlir::tessel::onnx_import::importONNXBuffer(
      impl->context.get(), bytes, name, options);
  std::string diagnostics = collector.take();
  if (!impl->module) {
    status = Status::failure("cannot import ONNX model '" + name + "'",
                             diagnostics);
    return nullptr;
  }
  status = Status();
  return std::unique_ptr<IRModule>(new IRModule(std::move(impl)));
}

std::unique_ptr<IRModule> IRModule::clone() const {
  // Through text: the copy gets its own context, so the two never share
  // state (a pass run on one cannot touch the other's uniqued attributes).
  Status status;
  std::unique_ptr<IRModule> copy = parse(str(/*debugInfo=*/true, false),
                                         "clone", status);
  return copy;
}

std::string IRModule::str(bool debugInfo, bool generic) const {
  std::string text;
  llvm::raw_string_ostream os(text);
  OpPrintingFlags flags;
  if (debugInfo)
    flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
  if (generic)
    flags.printGenericOpForm();
  impl->module->print(os, flags);
  return text;
}

Status IRModule::verify() const {
  DiagnosticCollector collector(impl->context.get());
  if (failed(mlir::verify(*impl->module)))
    return Status::failure("the module does not verify", collector.take());
  return Status();
}

Status IRModule::runPipeline(const std::string &pipeline) {
  MLIRContext *context = impl->context.get();
  // parsePassPipeline(text, pm) reads `text` as nested under pm's anchor
  // (builtin.module), so the full form "builtin.module(a,b)" is unwrapped
  // to "a,b"; the short form is already that.
  llvm::StringRef text = llvm::StringRef(pipeline).trim();
  if (text.starts_with("builtin.module(") && text.ends_with(")"))
    text = text.drop_front(strlen("builtin.module(")).drop_back().trim();
  std::string parseErrors;
  llvm::raw_string_ostream errs(parseErrors);
  PassManager pm(context, ModuleOp::getOperationName());
  if (failed(parsePassPipeline(text, pm, errs)))
    return Status::failure("invalid pass pipeline '" + pipeline + "'",
                           parseErrors);
  DiagnosticCollector collector(context);
  if (failed(pm.run(*impl->module)))
    return Status::failure("pass pipeline '" + pipeline + "' failed",
                           collector.take());
  return Status();
}

Status IRModule::compile(const CompileOptions &options,
                         const std::string &outputPath) {
  ::mlir::tessel::CompileOptions opts;
  opts.optLevel = options.optLevel;
  opts.mcpu = options.mcpu;
  opts.targetTriple = options.targetTriple;
  opts.kernels = options.kernels;
  opts.routeLowering = options.routeLowering;
  opts.expertParallel = options.expertParallel;
  opts.expertPlacement = options.expertPlacement;
  opts.component = options.component;
  if (std::optional<::mlir::tessel::QuantizeMode> q =
          ::mlir::tessel::parseQuantizeMode(options.quantize))
    opts.quantize = *q;
  else
    return Status::failure(
        "quantize must be 'none', 'int8' or 'int8-dynamic', got '" +
        options.quantize + "'");
  if (std::optional<::mlir::tessel::Precision> p =
          ::mlir::tessel::parsePrecision(options.precision))
    opts.precision = *p;
  else
    return Status::failure("precision must be 'f32', 'bf16' or 'f16', got '" +
                           options.precision + "'");
  if (options.sparsity != "auto" && options.sparsity != "off")
    return Status::failure("sparsity must be 'auto' or 'off', got '" +
                           options.sparsity + "'");
  opts.sparsity = options.sparsity == "auto";
  opts.sparsityReport = options.sparsityReport;
  std::optional<::mlir::tessel::CalibrationMethod> method =
      ::mlir::tessel::parseCalibrationMethod(options.calibrationMethod);
  if (!method)
    return Status::failure("calibration_method must be 'minmax', "
                           "'percentile' or 'entropy', got '" +
                           options.calibrationMethod + "'");
  opts.calibrationMethod = *method;
  opts.calibrationPercentile = options.calibrationPercentile;
  for (size_t i = 0; i < options.calibration.size(); ++i) {
    const CompileOptions::Samples &s = options.calibration[i];
    ::mlir::tessel::CalibrationSamples samples;
    samples.source = "calibration_data input " + std::to_string(i);
    samples.dtype = s.dtype;
    samples.dims = s.dims;
    samples.data.assign(s.bytes.begin(), s.bytes.end());
    opts.calibration.push_back(std::move(samples));
  }
  opts.quantizeExclude = options.quantizeExclude;
  opts.quantizeReport = options.quantizeReport;
  if (options.emit == "lib")
    opts.emit = ::mlir::tessel::EmitKind::Library;
  else if (options.emit == "obj")
    opts.emit = ::mlir::tessel::EmitKind::Object;
  else if (options.emit == "llvm")
    opts.emit = ::mlir::tessel::EmitKind::LLVM;
  else if (options.emit == "mlir")
    opts.emit = ::mlir::tessel::EmitKind::MLIR;
  else if (options.emit == "ptx")
    opts.emit = ::mlir::tessel::EmitKind::PTX;
  else
    return Status::failure("unknown emit kind '" + options.emit +
                           "' (expected lib, obj, llvm, mlir or ptx)");
  if (std::optional<::mlir::tessel::Target> t =
          ::mlir::tessel::parseTarget(options.target))
    opts.target = *t;
  else
    return Status::failure("target must be 'cpu' or 'cuda', got '" +
                           options.target + "'");
  if (!::mlir::tessel::isKnownCudaArch(options.cudaArch))
    return Status::failure("unknown cuda_arch '" + options.cudaArch +
                           "' (expected sm_75, sm_80, sm_86, sm_89, sm_90, "
                           "sm_90a, sm_100 or sm_120)");
  opts.cudaArch = options.cudaArch;
  if (std::optional<::mlir::tessel::CudaBinary> b =
          ::mlir::tessel::parseCudaBinary(options.cudaBinary))
    opts.cudaBinary = *b;
  else
    return Status::failure("cuda_binary must be 'auto', 'ptx' or 'fatbin', "
                           "got '" + options.cudaBinary + "'");
  if (options.cudaBinary != "auto" &&
      opts.target != ::mlir::tessel::Target::CUDA)
    return Status::failure("cuda_binary needs target='cuda'");
  if (opts.emit == ::mlir::tessel::EmitKind::PTX &&
      opts.target != ::mlir::tessel::Target::CUDA)
    return Status::failure("emit='ptx' needs target='cuda'");
  if (!options.compileTo.empty()) {
    opts.compileTo = ::mlir::tessel::parsePhase(options.compileTo);
    if (!opts.compileTo)
      return Status::failure("unknown compile_to phase '" + options.compileTo +
                             "' (expected input, linalg, bufferized, llvm)");
  }
  DiagnosticCollector collector(impl->context.get());
  DefaultTimingManager tm;
  TimingScope timing = tm.getRootScope();
  if (failed(::mlir::tessel::compileModule(*impl->module, opts, outputPath,
                                         timing)))
    return Status::failure("compilation failed", collector.take());
  return Status();
}

std::vector<std::string> IRModule::functionNames() const {
  std::vector<std::string> names;
  for (auto fn : impl->module->getOps<func::FuncOp>())
    if (fn.isPublic() && !fn.isExternal())
      names.push_back(fn.getSymName().str());
  return names;
}

std::vector<PassInfo> registeredPasses() {
  initializeOnce();
  // MLIR has no iterator over its pass registries. The pass-pipeline
  // command-line parser, created with no argument name as mlir-opt and
  // tessel-opt do (what makes `--canonicalize` a flag there), registers
  // every pass and pipeline name as a command-line option name; created
  // once (never parsed), it lets us enumerate them, and the registries give
  // each name's description.
  static mlir::PassPipelineCLParser *parser =
      new mlir::PassPipelineCLParser("", "passes known to the Python package");
  (void)parser;
  std::vector<PassInfo> result;
  for (auto &entry : llvm::cl::getRegisteredOptions()) {
    llvm::StringRef name = entry.first;
    if (const mlir::PassInfo *info = mlir::PassInfo::lookup(name))
      result.push_back({name.str(), info->getPassDescription().str(), false});
    else if (const mlir::PassPipelineInfo *info =
                 mlir::PassPipelineInfo::lookup(name))
      result.push_back({name.str(), info->getPassDescription().str(), true});
  }
  std::sort(result.begin(), result.end(),
            [](const PassInfo &a, const PassInfo &b) { return a.name < b.name; });
  return result;
}

std::vector<std::string> phaseNames() {
  return {"input", "linalg", "bufferized", "llvm"};
}

} // namespace tessel::python
