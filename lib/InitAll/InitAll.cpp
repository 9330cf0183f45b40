//===- InitAll.cpp - Register everything Tessel's tools use ----------------===//
#include "tessel/InitAll.h"

#include "tessel/Conversion/Passes.h"
#include "tessel/Dialect/Compose/IR/ComposeDialect.h"
#include "tessel/Dialect/Compose/Transforms/Passes.h"
#include "tessel/Dialect/Sym/IR/SymDialect.h"
#include "tessel/Dialect/Sym/Transforms/Passes.h"
#include "tessel/Dialect/Tessel/IR/TesselDialect.h"
#include "tessel/Dialect/Tessel/Transforms/Passes.h"
#include "tessel/Pipelines/Pipelines.h"
#include "tessel/Quantization/Passes.h"

#include "mlir/Conversion/MPIToLLVM/MPIToLLVM.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

void mlir::tessel::registerAllDialects(DialectRegistry &registry) {
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  registry.insert<TesselDialect, compose::ComposeDialect, sym::SymDialect>();
  registerBufferizableOpInterfaceExternalModels(registry);
  // convert-to-llvm lowers upstream's mpi ops (expert parallelism's
  // communicator and rank); upstream's extension list leaves it out.
  mpi::registerConvertMPIToLLVMInterface(registry);
}

void mlir::tessel::registerAllPasses() {
  mlir::registerAllPasses();
  registerTesselTransformsPasses();
  compose::registerComposeTransformsPasses();
  sym::registerSymTransformsPasses();
  registerTesselConversionPasses();
  registerTesselQuantizationPasses();
  registerTesselPipelines();
}

void mlir::tessel::registerAllTranslations(DialectRegistry &registry) {
  mlir::registerAllToLLVMIRTranslations(registry);
}
