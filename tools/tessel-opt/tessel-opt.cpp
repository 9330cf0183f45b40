//===- tessel-opt.cpp - mlir-opt with Tessel's dialects and passes ---------===//
//
// mlir-opt's driver, with Tessel's input checks in front of the parser
// (include/tessel/Support/InputLimits.h): a device is not read without end
// and too deeply nested text is refused instead of overflowing the stack.
//
//===----------------------------------------------------------------------===//
#include "tessel/InitAll.h"
#include "tessel/Support/InputLimits.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  mlir::tessel::installToolErrorHandlers("tessel-opt");
  mlir::DialectRegistry registry;
  mlir::tessel::registerAllDialects(registry);
  // gpu-module-to-binary translates kernel modules to LLVM IR.
  mlir::tessel::registerAllTranslations(registry);
  mlir::tessel::registerAllPasses();
  auto [inputPath, outputPath] = mlir::registerAndParseCLIOptions(
      argc, argv, "Tessel optimizer driver\n", registry);
  mlir::MlirOptMainConfig config =
      mlir::MlirOptMainConfig::createFromCLOptions();
  // These print registries and read no input.
  if (config.shouldShowDialects() || config.shouldListPasses())
    return mlir::asMainReturnCode(
        mlir::MlirOptMain(argc, argv, inputPath, outputPath, registry));

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input =
      mlir::tessel::readModelInput(inputPath, error);
  if (!input || !mlir::tessel::checkMLIRNesting(input->getBuffer(), error)) {
    llvm::errs() << "tessel-opt: error: "
                 << (input ? "cannot parse '" + inputPath + "': " : "") << error
                 << "\n";
    return 1;
  }
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(outputPath, &error);
  if (!output) {
    llvm::errs() << "tessel-opt: error: " << error << "\n";
    return 1;
  }
  if (mlir::failed(
          mlir::MlirOptMain(output->os(), std::move(input), registry, config)))
    return 1;
  output->keep();
  return 0;
}
