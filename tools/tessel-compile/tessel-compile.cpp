//===- tessel-compile.cpp - Model -> artifact driver -----------------------===//
//
//   tessel-compile MODEL.{mlir,onnx} -o model.so [-O0..-O3]
//                 [--emit=mlir|llvm|obj|lib] [--mcpu=native|NAME]
//                 [--compile-to=PHASE] [--shape=NAME:DIMS] [--mlir-timing]
//                 [--kernels=true|false] [--target=cpu|cuda]
//                 [--cuda-arch=sm_NN] [--emit=ptx]
//
// Flags follow iree-compile / onnx-mlir; see docs/cli.md.
//
//===----------------------------------------------------------------------===//
#include "tessel/Compiler/Compiler.h"
#include "tessel/Dialect/Compose/Transforms/Passes.h"
#include "tessel/Importers/ONNX/ONNXImporter.h"
#include "tessel/InitAll.h"
#include "tessel/Support/GuardedParse.h"
#include "tessel/Support/InputLimits.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
using namespace llvm;

static cl::OptionCategory category("tessel-compile options");
static cl::opt<std::string> inputPath(cl::Positional, cl::Required,
                                      cl::desc("<model.mlir|model.onnx>"),
                                      cl::cat(category));
static cl::opt<std::string> outputPath("o", cl::desc("Output file"),
                                       cl::value_desc("path"), cl::Required,
                                       cl::cat(category));
namespace {
enum OptLevel : unsigned { O0 = 0, O1, O2, O3 };
}
static cl::opt<OptLevel>
    optLevel(cl::desc("Optimization level:"),
             cl::values(clEnumValN(O0, "O0", "no optimization, simplest code"),
                        clEnumValN(O1, "O1", "light optimization"),
                        clEnumValN(O2, "O2", "default optimization"),
                        clEnumValN(O3, "O3", "aggressive optimization")),
             cl::init(O2), cl::cat(category));
static cl::opt<tessel::EmitKind> emit(
    "emit", cl::desc("What to write (default: lib)"),
    cl::values(clEnumValN(tessel::EmitKind::MLIR, "mlir",
                          "the LLVM-dialect MLIR"),
               clEnumValN(tessel::EmitKind::LLVM, "llvm",
                          "optimized LLVM IR (.ll)"),
               clEnumValN(tessel::EmitKind::Object, "obj", "an object file"),
               clEnumValN(tessel::EmitKind::Library, "lib",
                          "the shared-library artifact"),
               clEnumValN(tessel::EmitKind::PTX, "ptx",
                          "--target=cuda: the kernels' PTX")),
    cl::init(tessel::EmitKind::Library), cl::cat(category));
static cl::opt<unsigned> codegenThreads(
    "codegen-threads",
    cl::desc("Threads (and parts of the module) for LLVM's optimization and "
             "code generation (0, the default: one per hardware thread, at "
             "most 8, for a large model; one for a small one)"),
    cl::init(0), cl::cat(category));
static cl::opt<std::string>
    mcpu("mcpu", cl::desc("Target CPU: native (default) or an LLVM CPU name"),
         cl::init("native"), cl::cat(category));
static cl::opt<std::string>
    mtriple("mtriple", cl::desc("Target triple (default: the host's)"),
            cl::init(""), cl::cat(category));
static cl::opt<std::string> target(
    "target",
    cl::desc("Where the model runs: cpu (default) or cuda (NVIDIA GPUs: the "
             "kernels' PTX in the artifact, run by the CUDA driver)"),
    cl::value_desc("cpu|cuda"), cl::init("cpu"), cl::cat(category));
static cl::opt<std::string> cudaArch(
    "cuda-arch",
    cl::desc("--target=cuda: the least GPU architecture the artifact runs on "
             "(default sm_80; sm_90 for H100/H200)"),
    cl::value_desc("sm_NN"), cl::init("sm_80"), cl::cat(category));
static cl::opt<std::string> cudaBinary(
    "cuda-binary",
    cl::desc("--target=cuda: how the kernels are embedded in the artifact: "
             "auto (default: a cubin for --cuda-arch plus the PTX where the "
             "CUDA toolkit's ptxas and fatbinary are installed, else the PTX "
             "alone), ptx (the driver compiles it at load), fatbin (a cubin "
             "and the PTX; needs the toolkit)"),
    cl::value_desc("auto|ptx|fatbin"), cl::init("auto"), cl::cat(category));
static cl::opt<bool> kernels(
    "kernels",
    cl::desc("At -O2/-O3, compile convolutions and matmuls to calls into "
             "Tessel's kernel library, linked into the artifact (default "
             "true; x86-64 only)"),
    cl::init(true), cl::cat(category));
static cl::opt<std::string> routeLowering(
    "route-lowering",
    cl::desc("How compose.route (mixture of experts) is lowered: grouped "
             "(default; each expert runs on just its tokens) or dense "
             "(every expert on every token, the reference)"),
    cl::value_desc("grouped|dense"), cl::init("grouped"), cl::cat(category));
static cl::opt<int64_t> expertParallel(
    "expert-parallel",
    cl::desc("Spread each mixture of experts (compose.route) over N MPI "
             "processes: run the artifact with mpirun -np N "
             "(docs/scale-out.md)"),
    cl::value_desc("N"), cl::init(1), cl::cat(category));
static cl::list<int64_t> expertPlacement(
    "expert-placement",
    cl::desc("With --expert-parallel: how many experts each process holds, "
             "in rank order (default: as even as possible)"),
    cl::value_desc("n0,n1,..."), cl::CommaSeparated, cl::cat(category));
static cl::opt<std::string> componentName(
    "component",
    cl::desc("Compile only this compose.component (separate compilation): "
             "it becomes the artifact's entry point, named after it"),
    cl::value_desc("name"), cl::init(""), cl::cat(category));
static cl::opt<std::string> quantize(
    "quantize",
    cl::desc("Quantize while compiling: none (default), int8 (static: "
             "calibrated on --calibration-data; convolutions and matmuls "
             "run on int8) or int8-dynamic (matmuls with constant weights "
             "run on int8: weights quantized per column at compile time, "
             "activations per row at run time). QDQ models "
             "(tessel.quantize_onnx, ONNX Runtime's quantizer) run their "
             "int8 parts on int8 without this"),
    cl::value_desc("none|int8|int8-dynamic"), cl::init("none"),
    cl::cat(category));
static cl::opt<std::string> precision(
    "precision",
    cl::desc("What f32 convolutions and matmuls compute in: f32 (default), "
             "bf16 (operands rounded to bf16, sums and results in f32; "
             "AVX512_BF16's vdpbf16ps where the CPU has it, the tensor cores "
             "on --target=cuda) or f16 (--target=cuda: tensor cores, f32 "
             "sums)"),
    cl::value_desc("f32|bf16|f16"), cl::init("f32"), cl::cat(category));
static cl::list<std::string> calibrationData(
    "calibration-data",
    cl::desc("--quantize=int8: the calibration samples of one model input, "
             "a .npy of shape [K, *input shape] (repeat once per input, in "
             "order)"),
    cl::value_desc("@samples.npy"), cl::cat(category));
static cl::opt<std::string> calibrationMethod(
    "calibration-method",
    cl::desc("--quantize=int8: how activation ranges are chosen: minmax "
             "(default; the observed range), percentile (the central "
             "--calibration-percentile % of values) or entropy (the "
             "clipping threshold of least KL divergence)"),
    cl::value_desc("minmax|percentile|entropy"), cl::init("minmax"),
    cl::cat(category));
static cl::opt<double> calibrationPercentile(
    "calibration-percentile",
    cl::desc("--calibration-method=percentile: the % of values kept "
             "(default 99.99)"),
    cl::value_desc("p"), cl::init(99.99), cl::cat(category));
static cl::list<std::string> quantizeExclude(
    "quantize-exclude",
    cl::desc("--quantize=int8: nodes (ONNX node names) kept in float"),
    cl::value_desc("node,..."), cl::CommaSeparated, cl::cat(category));
static cl::opt<std::string> quantizeReport(
    "quantize-report",
    cl::desc("--quantize=int8: write a JSON report: per layer the ranges, "
             "scales and zero points chosen and the SQNR (dB) of its output "
             "against float on the calibration data"),
    cl::value_desc("file.json"), cl::init(""), cl::cat(category));
static cl::opt<std::string> sparsity(
    "sparsity",
    cl::desc("auto (default): at -O2 and up, matmuls and convolutions whose "
             "constant weights are mostly zeros run on the sparse kernels "
             "where the cost model predicts a gain (docs/sparsity.md); off: "
             "all dense"),
    cl::value_desc("auto|off"), cl::init("auto"), cl::cat(category));
static cl::opt<std::string> sparsityReport(
    "sparsity-report",
    cl::desc("Write the sparsity analysis: per matmul or convolution with "
             "constant weights, its shape, zero fraction, best block size, predicted "
             "speed-up and choice"),
    cl::value_desc("file.txt"), cl::init(""), cl::cat(category));
static cl::opt<std::string> compileTo(
    "compile-to",
    cl::desc("Stop after PHASE and write its MLIR: input, linalg, "
             "bufferized, llvm"),
    cl::value_desc("phase"), cl::init(""), cl::cat(category));

static cl::list<std::string> shapes(
    "shape",
    cl::desc("Pin an input's shape (ONNX): NAME:D0xD1x... (repeatable, or "
             "comma-separated)"),
    cl::value_desc("name:dims"), cl::cat(category));

static cl::list<std::string> bindInputs(
    "bind-input",
    cl::desc("ONNX: make an input a compile-time constant from a .npy file "
             "(NAME=@FILE.npy, repeatable)"),
    cl::value_desc("name=@file.npy"), cl::cat(category));

static cl::opt<bool> raiseMoE(
    "raise-moe",
    cl::desc("Raise top-k gated mixtures of experts in the model (ONNX or "
             "MLIR) to compose.route over one component per expert "
             "(tessel-raise-moe; default true; false keeps the dense graph)"),
    cl::init(true), cl::cat(category));

// For tests: which initializers take DeferredWeights' one-copy path.
static cl::opt<size_t> deferredWeightMinBytes(
    "onnx-deferred-weight-min-bytes",
    cl::desc("ONNX: initializers of at least N raw bytes are copied out of "
             "the model once, in the layout their users read (default "
             "65536)"),
    cl::init(64 * 1024), cl::Hidden, cl::cat(category));

/// Reads the model: ONNX by extension, otherwise MLIR (text or bytecode).
static OwningOpRef<ModuleOp> loadModel(MLIRContext &context,
                                       SourceMgr &sourceMgr) {
  if (tessel::onnx_import::isONNXPath(inputPath)) {
    tessel::onnx_import::ImportOptions options;
    options.raiseMixtureOfExperts = raiseMoE;
    options.deferredWeightMinBytes = deferredWeightMinBytes;
    for (const std::string &s : shapes) {
      std::string error;
      if (failed(tessel::onnx_import::parseShapeOption(s, options, error))) {
        errs() << "tessel-compile: error: " << error << "\n";
        return {};
      }
    }
    for (const std::string &s : bindInputs) {
      std::string error;
      if (failed(tessel::onnx_import::parseBindOption(s, options, error))) {
        errs() << "tessel-compile: error: " << error << "\n";
        return {};
      }
    }
    OwningOpRef<ModuleOp> module =
        tessel::onnx_import::importONNXFile(&context, inputPath, options);
    if (!module)
      errs() << "tessel-compile: error: cannot import '" << inputPath
             << "'\n";
    return module;
  }
  if (!shapes.empty() || !bindInputs.empty()) {
    errs() << "tessel-compile: error: --shape and --bind-input apply to ONNX "
              "models; MLIR models carry their shapes in their types\n";
    return {};
  }
  std::string err;
  std::unique_ptr<MemoryBuffer> file = tessel::readModelInput(inputPath, err);
  if (!file || !tessel::checkMLIRNesting(file->getBuffer(), err)) {
    errs() << "tessel-compile: error: "
           << (file ? "cannot parse '" + inputPath + "': " : "") << err << "\n";
    return {};
  }
  sourceMgr.AddNewSourceBuffer(std::move(file), SMLoc());
  bool crashed = false;
  OwningOpRef<ModuleOp> module =
      tessel::parseModuleGuarded(sourceMgr, &context, crashed);
  if (crashed) {
    // The context may be half-built: stop here, without its destructor.
    errs() << "tessel-compile: error: " << tessel::parserCrashMessage(inputPath)
           << "\n";
    errs().flush();
    std::_Exit(1);
  }
  if (!module) {
    errs() << "tessel-compile: error: cannot parse '" << inputPath << "'\n";
    return module;
  }
  // MLIR written densely (by hand, a builder or another front end) is
  // raised like an imported graph.
  if (raiseMoE && failed(tessel::compose::raiseMixturesOfExperts(*module)))
    return {};
  return module;
}

/// The static-quantization flags into `options`: they apply with
/// --quantize=int8 only, which needs calibration data.
static LogicalResult readQuantizationOptions(tessel::CompileOptions &options) {
  bool isStatic = options.quantize == tessel::QuantizeMode::Int8;
  for (const char *flag : {"calibration-data", "calibration-method",
                           "calibration-percentile", "quantize-exclude",
                           "quantize-report"}) {
    auto &opts = cl::getRegisteredOptions();
    if (!isStatic && opts.count(flag) && opts[flag]->getNumOccurrences()) {
      errs() << "tessel-compile: error: --" << flag
             << " applies with --quantize=int8 (static quantization)\n";
      return failure();
    }
  }
  if (!isStatic)
    return success();
  if (calibrationData.empty()) {
    errs() << "tessel-compile: error: --quantize=int8 needs calibration "
              "samples: --calibration-data=@samples.npy (shape [K, *input "
              "shape]) once per model input\n";
    return failure();
  }
  std::optional<tessel::CalibrationMethod> method =
      tessel::parseCalibrationMethod(calibrationMethod);
  if (!method) {
    errs() << "tessel-compile: error: unknown --calibration-method '"
           << calibrationMethod << "' (expected minmax, percentile or "
           << "entropy)\n";
    return failure();
  }
  if (!tessel::isValidCalibrationPercentile(calibrationPercentile)) {
    errs() << "tessel-compile: error: --calibration-percentile must be in "
              "[50, 100], got "
           << calibrationPercentile << "\n";
    return failure();
  }
  options.calibrationMethod = *method;
  options.calibrationPercentile = calibrationPercentile;
  for (const std::string &arg : calibrationData) {
    StringRef path = StringRef(arg).starts_with("@") ? StringRef(arg).drop_front()
                                                      : StringRef(arg);
    std::string error;
    std::optional<tessel::CalibrationSamples> samples =
        tessel::readCalibrationSamples(path, error);
    if (!samples) {
      errs() << "tessel-compile: error: --calibration-data: " << error
             << "\n";
      return failure();
    }
    options.calibration.push_back(std::move(*samples));
  }
  options.quantizeExclude.assign(quantizeExclude.begin(),
                                 quantizeExclude.end());
  options.quantizeReport = quantizeReport;
  return success();
}

int main(int argc, char **argv) {
  InitLLVM y(argc, argv);
  mlir::tessel::installToolErrorHandlers("tessel-compile");
  // Before the pass-manager options: --mlir-print-ir-before/after=<pass>
  // take their list of pass names from the registry when created.
  tessel::registerAllPasses();
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  // libLLVM registers hundreds of backend options (AMDGPU, AArch64, ...);
  // --help lists tessel-compile's own, --help-hidden all of them (the
  // --mlir-* debugging options keep working either way).
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "Tessel compiler: model IR -> artifact\n\n"
      "  MLIR debugging options (--mlir-print-ir-after=PASS, --mlir-timing,\n"
      "  --mlir-elide-elementsattrs-if-larger=N, ...) are listed by\n"
      "  --help-hidden.\n");

  // Never replace the model with the compiler's output.
  if (outputPath != "-" && inputPath != "-") {
    bool same = outputPath == inputPath;
    if (!same && sys::fs::exists(outputPath))
      sys::fs::equivalent(inputPath, outputPath, same);
    if (same) {
      errs() << "tessel-compile: error: the output '" << outputPath
             << "' is the input file; choose another -o\n";
      return 1;
    }
  }

  tessel::CompileOptions options;
  options.optLevel = optLevel;
  options.codegenThreads = codegenThreads;
  options.emit = emit;
  options.mcpu = mcpu;
  options.targetTriple = mtriple;
  options.kernels = kernels;
  if (std::optional<tessel::Target> t = tessel::parseTarget(target)) {
    options.target = *t;
  } else {
    errs() << "tessel-compile: error: unknown --target value '" << target
           << "' (expected cpu or cuda)\n";
    return 1;
  }
  if (!tessel::isKnownCudaArch(cudaArch)) {
    errs() << "tessel-compile: error: unknown --cuda-arch value '" << cudaArch
           << "' (expected sm_75, sm_80, sm_86, sm_89, sm_90, sm_90a, "
              "sm_100 or sm_120)\n";
    return 1;
  }
  if (cudaArch.getNumOccurrences() && options.target != tessel::Target::CUDA) {
    errs() << "tessel-compile: error: --cuda-arch needs --target=cuda\n";
    return 1;
  }
  options.cudaArch = cudaArch;
  if (cudaBinary.getNumOccurrences() &&
      options.target != tessel::Target::CUDA) {
    errs() << "tessel-compile: error: --cuda-binary needs --target=cuda\n";
    return 1;
  }
  if (std::optional<tessel::CudaBinary> b =
          tessel::parseCudaBinary(cudaBinary)) {
    options.cudaBinary = *b;
  } else {
    errs() << "tessel-compile: error: unknown --cuda-binary value '"
           << cudaBinary << "' (expected auto, ptx or fatbin)\n";
    return 1;
  }
  if (emit == tessel::EmitKind::PTX && options.target != tessel::Target::CUDA) {
    errs() << "tessel-compile: error: --emit=ptx needs --target=cuda\n";
    return 1;
  }
  if (routeLowering != "grouped" && routeLowering != "dense") {
    errs() << "tessel-compile: error: --route-lowering must be 'grouped' or "
              "'dense', got '"
           << routeLowering << "'\n";
    return 1;
  }
  options.routeLowering = routeLowering;
  options.expertParallel = expertParallel;
  options.expertPlacement.assign(expertPlacement.begin(),
                                 expertPlacement.end());
  options.component = componentName;
  if (std::optional<tessel::QuantizeMode> q =
          tessel::parseQuantizeMode(quantize)) {
    options.quantize = *q;
  } else {
    errs() << "tessel-compile: error: unknown --quantize value '" << quantize
           << "' (expected none, int8 or int8-dynamic)\n";
    return 1;
  }
  if (failed(readQuantizationOptions(options)))
    return 1;
  if (std::optional<tessel::Precision> p = tessel::parsePrecision(precision)) {
    options.precision = *p;
  } else {
    errs() << "tessel-compile: error: unknown --precision value '"
           << precision << "' (expected f32, bf16 or f16)\n";
    return 1;
  }
  if (sparsity != "auto" && sparsity != "off") {
    errs() << "tessel-compile: error: unknown --sparsity value '" << sparsity
           << "' (expected auto or off)\n";
    return 1;
  }
  options.sparsity = sparsity == "auto";
  options.sparsityReport = sparsityReport;
  if (!sparsityReport.empty() && !options.sparsity) {
    errs() << "tessel-compile: error: --sparsity-report needs --sparsity=auto\n";
    return 1;
  }
  if (!compileTo.empty()) {
    options.compileTo = tessel::parsePhase(compileTo);
    if (!options.compileTo) {
      errs() << "tessel-compile: error: unknown --compile-to phase '"
             << compileTo << "' (expected input, linalg, bufferized, llvm)\n";
      return 2;
    }
  }

  DialectRegistry registry;
  tessel::registerAllDialects(registry);
  tessel::registerAllTranslations(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();

  SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);

  DefaultTimingManager tm;
  applyDefaultTimingManagerCLOptions(tm);
  TimingScope timing = tm.getRootScope();

  OwningOpRef<ModuleOp> module;
  {
    TimingScope parseTiming = timing.nest(
        tessel::onnx_import::isONNXPath(inputPath) ? "Import ONNX"
                                                   : "Parse input");
    module = loadModel(context, sourceMgr);
  }
  if (!module)
    return 1;
  if (failed(tessel::compileModule(*module, options, outputPath, timing))) {
    errs() << "tessel-compile: error: compilation of '" << inputPath
           << "' failed\n";
    return 1;
  }
  return 0;
}
