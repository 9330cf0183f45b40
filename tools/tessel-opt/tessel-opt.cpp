//===- tessel-opt.cpp - mlir-opt with Tessel's dialects and passes ---------===//
#include "tessel/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::tessel::registerAllDialects(registry);
  mlir::tessel::registerAllPasses();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "Tessel optimizer driver\n", registry));
}
