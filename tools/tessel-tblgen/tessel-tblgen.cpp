//===- tessel-tblgen.cpp - Tessel's TableGen backends ----------------------===//
//
// mlir-tblgen's sibling for what upstream has no backend for: the kernel
// library's descriptions (include/tessel/Kernels/Kernels.td). The backends
// register themselves (KernelEmitters.cpp); this is TableGen's driver.
//
//===----------------------------------------------------------------------===//
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/TableGen/Main.h"

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  llvm::cl::ParseCommandLineOptions(argc, argv);
  // No main function: the registered backend chosen on the command line runs.
  return llvm::TableGenMain(argv[0], llvm::MultiFileTableGenMainFn());
}
