//===- tessel-compile.cpp - Model -> artifact driver -----------------------===//
//
//   tessel-compile MODEL.mlir -o model.so [-O0..-O3] [--emit=mlir|llvm|obj|lib]
//                 [--mcpu=native|NAME] [--compile-to=PHASE] [--mlir-timing]
//
// Flags follow iree-compile / onnx-mlir; see docs/cli.md.
//
//===----------------------------------------------------------------------===//
#include "tessel/Compiler/Compiler.h"
#include "tessel/InitAll.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
using namespace llvm;

static cl::OptionCategory category("tessel-compile options");
static cl::opt<std::string> inputPath(cl::Positional, cl::Required,
                                      cl::desc("<model.mlir>"),
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
                          "the shared-library artifact")),
    cl::init(tessel::EmitKind::Library), cl::cat(category));
static cl::opt<std::string>
    mcpu("mcpu", cl::desc("Target CPU: native (default) or an LLVM CPU name"),
         cl::init("native"), cl::cat(category));
static cl::opt<std::string>
    mtriple("mtriple", cl::desc("Target triple (default: the host's)"),
            cl::init(""), cl::cat(category));
static cl::opt<std::string> compileTo(
    "compile-to",
    cl::desc("Stop after PHASE and write its MLIR: input, linalg, "
             "bufferized, llvm"),
    cl::value_desc("phase"), cl::init(""), cl::cat(category));

int main(int argc, char **argv) {
  InitLLVM y(argc, argv);
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  cl::ParseCommandLineOptions(argc, argv,
                              "Tessel compiler: model IR -> artifact\n");

  tessel::CompileOptions options;
  options.optLevel = optLevel;
  options.emit = emit;
  options.mcpu = mcpu;
  options.targetTriple = mtriple;
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

  std::string err;
  std::unique_ptr<MemoryBuffer> file = openInputFile(inputPath, &err);
  if (!file) {
    errs() << "tessel-compile: error: " << err << "\n";
    return 1;
  }
  SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(file), SMLoc());
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);

  DefaultTimingManager tm;
  applyDefaultTimingManagerCLOptions(tm);
  TimingScope timing = tm.getRootScope();

  OwningOpRef<ModuleOp> module;
  {
    TimingScope parseTiming = timing.nest("Parse input");
    module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  }
  if (!module) {
    errs() << "tessel-compile: error: cannot parse '" << inputPath << "'\n";
    return 1;
  }
  if (failed(tessel::compileModule(*module, options, outputPath, timing))) {
    errs() << "tessel-compile: error: compilation of '" << inputPath
           << "' failed\n";
    return 1;
  }
  return 0;
}
