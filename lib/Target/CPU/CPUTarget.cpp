//===- CPUTarget.cpp - The CPU target backend --------------------------===//
//
// Code runs on the host CPU: loop nests are vectorized for its vector width,
// convolutions and matmuls call the kernel library (lib/Kernels, linked
// into the artifact) at -O2 and up, large loop nests run on its thread pool
// and buffers come from its caching allocator.
//
//===----------------------------------------------------------------------===//
#include "CPUTarget.h"

#include "../Host/HostArtifact.h"
#include "../Host/KernelLibrary.h"

#include "tessel/Conversion/Passes.h"
#include "tessel/Dialect/Tessel/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::tessel;

StringRef CPUTargetBackend::name() const { return "cpu"; }

TargetCapabilities
CPUTargetBackend::capabilities(const llvm::TargetMachine *host) const {
  TargetCapabilities caps;
  // The kernel library is built for x86-64 (its variants per psABI level).
  caps.kernelLibrary = !host || kernelVariant(*host).has_value();
  caps.threadPool = caps.kernelLibrary;
  caps.cachingAllocator = caps.kernelLibrary;
  caps.hostReadsResults = true;
#ifdef TESSEL_MPI_LIBRARIES
  caps.mpi = true;
#endif
  return caps;
}

void CPUTargetBackend::buildCodegenPipeline(
    OpPassManager &pm, const PipelineOptions &options) const {
  // Kernel-library codegen is the -O2/-O3 path; -O0/-O1 stay plain loops.
  bool useKernels = options.kernels && options.optLevel >= 2;
  if (useKernels)
    pm.addPass(createTesselKernelsToCalls());
  pm.addPass(createTesselImportsToCalls());
#ifdef TESSEL_MPI_IMPLEMENTATION
  TesselMPIToCallsOptions mpiCalls;
  mpiCalls.implementation = TESSEL_MPI_IMPLEMENTATION;
  pm.addPass(createTesselMPIToCalls(mpiCalls));
#endif
  if (options.optLevel >= 2) {
    pm.addPass(createTesselApproximateMath());
    pm.addPass(createTesselReassociateReductions());
  }
  pm.addNestedPass<func::FuncOp>(createTesselStridedCopyToLinalg());
  if (options.optLevel >= 2) {
    TesselVectorizeLinalgOptions vectorize;
    vectorize.vectorBits = options.vectorBits;
    pm.addNestedPass<func::FuncOp>(createTesselVectorizeLinalg(vectorize));
  }
  if (useKernels) {
    // Parallel dimensions become scf.parallel, and the large nests run on
    // the kernel library's thread pool.
    pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
    pm.addPass(createTesselOutlineParallelLoops());
  } else {
    pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  }
  pm.addPass(createConvertBufferizationToMemRefPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createConvertVectorToSCFPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createConvertMathToLLVMPass());
  // What LLVM has no intrinsic for (erf, tanh, ...) becomes a libm call.
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createTesselExpandBF16());
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  // With the kernel library linked in, buffers come from its caching
  // allocator (lib/Kernels/Allocator.c) instead of malloc/free.
  memrefToLLVM.useGenericFunctions = useKernels;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
  TesselEmitArtifactABIOptions abi;
  abi.targetTriple = options.targetTriple;
  abi.cpuFeatures = options.cpuFeatures;
  pm.addPass(createTesselEmitArtifactABI(abi));
}


llvm::Expected<std::vector<std::string>>
CPUTargetBackend::linkArchives(const llvm::TargetMachine &host,
                               const SerializeOptions &options) const {
  std::vector<std::string> archives;
  if (options.kernelLibrary) {
    llvm::Expected<std::string> archive =
        findKernelArchive(*kernelVariant(host));
    if (!archive)
      return archive.takeError();
    archives.push_back(*archive);
  }
  if (options.mpiRanks > 1) {
    llvm::Expected<std::vector<std::string>> mpi = findMPIRuntime();
    if (!mpi)
      return mpi.takeError();
    archives.insert(archives.end(), mpi->begin(), mpi->end());
  }
  return archives;
}

LogicalResult CPUTargetBackend::serialize(ModuleOp module,
                                          llvm::TargetMachine &host,
                                          const SerializeOptions &options,
                                          TimingScope &timing) const {
  if (options.emit == EmitKind::PTX)
    return module.emitError() << "--emit=ptx needs --target=cuda";
  return writeHostArtifact(module, host, options, timing);
}
