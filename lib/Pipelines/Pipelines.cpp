//===- Pipelines.cpp - Tessel's named pass pipelines ------------------------===//
#include "tessel/Pipelines/Pipelines.h"

#include "tessel/Conversion/Passes.h"
#include "tessel/Dialect/Compose/Transforms/Passes.h"
#include "tessel/Dialect/Sym/Transforms/Passes.h"
#include "tessel/Dialect/Tessel/Transforms/Passes.h"
#include "tessel/Quantization/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/TosaToLinalg/TosaToLinalg.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Tosa/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace mlir::tessel;

std::optional<Phase> mlir::tessel::parsePhase(StringRef name) {
  return llvm::StringSwitch<std::optional<Phase>>(name)
      .Case("input", Phase::Input)
      .Case("linalg", Phase::Linalg)
      .Case("bufferized", Phase::Bufferized)
      .Case("llvm", Phase::LLVM)
      .Default(std::nullopt);
}

StringRef mlir::tessel::phaseName(Phase phase) {
  switch (phase) {
  case Phase::Input: return "input";
  case Phase::Linalg: return "linalg";
  case Phase::Bufferized: return "bufferized";
  case Phase::LLVM: return "llvm";
  }
  llvm_unreachable("unknown phase");
}

std::optional<QuantizeMode>
mlir::tessel::parseQuantizeMode(llvm::StringRef name) {
  if (name == "none")
    return QuantizeMode::None;
  if (name == "int8-dynamic")
    return QuantizeMode::Int8Dynamic;
  if (name == "int8")
    return QuantizeMode::Int8;
  return std::nullopt;
}

std::optional<Precision> mlir::tessel::parsePrecision(llvm::StringRef name) {
  if (name == "f32")
    return Precision::F32;
  if (name == "bf16")
    return Precision::BF16;
  return std::nullopt;
}

std::optional<Target> mlir::tessel::parseTarget(llvm::StringRef name) {
  if (name == "cpu")
    return Target::CPU;
  if (name == "cuda")
    return Target::CUDA;
  return std::nullopt;
}

bool mlir::tessel::isKnownCudaArch(llvm::StringRef arch) {
  return llvm::is_contained({"sm_75", "sm_80", "sm_86", "sm_89", "sm_90",
                             "sm_90a", "sm_100", "sm_120"},
                            arch);
}

/// The least PTX ISA version that NVPTX accepts for `arch`: 8.0 (CUDA 12.0)
/// up to Hopper, the version that introduced the architecture after it.
static StringRef ptxFeatures(StringRef arch) {
  if (arch == "sm_100")
    return "+ptx86";
  if (arch == "sm_120")
    return "+ptx87";
  return "+ptx80";
}

/// Kernel-library codegen is the -O2/-O3 path on the CPU; -O0/-O1 stay
/// plain loops, and other targets have no kernel library.
static bool useKernels(const PipelineOptions &options) {
  return options.target == Target::CPU && options.kernels &&
         options.optLevel >= 2;
}

void mlir::tessel::buildModelToLinalgPipeline(OpPassManager &pm,
                                              const PipelineOptions &options) {
  // Tensors too large to compile are an error here, not an out-of-memory
  // abort in a folder later.
  pm.addPass(createTesselCheckTensorSizes());
  // Quantization first, before any pass that folds: upstream folds
  // quant.dcast(quant.qcast(x)) to x, which would drop the rounding of a
  // quantize-dequantize pair. Products of dequantized values run on their
  // integers; then quantized values (quant casts of !quant.uniform tensors)
  // become integer and float arithmetic.
  // Static quantization writes the QDQ form the next two passes fold.
  if (options.quantize == QuantizeMode::Int8)
    pm.addNestedPass<func::FuncOp>(createTesselQuantizeStatic());
  pm.addNestedPass<func::FuncOp>(createTesselFoldQDQ());
  pm.addNestedPass<func::FuncOp>(createTesselLowerQuant());
  if (options.quantize == QuantizeMode::Int8Dynamic)
    pm.addNestedPass<func::FuncOp>(createTesselQuantizeDynamic());
  // A composition compiles as one function: routes become top-k selection
  // and expert calls, memory ops TOSA, and component calls are inlined.
  if (!options.component.empty()) {
    compose::ComposeExtractComponentOptions extract;
    extract.component = options.component;
    pm.addPass(compose::createComposeExtractComponent(extract));
  }
  compose::ComposeLowerRouteOptions route;
  route.mode = options.routeLowering;
  pm.addPass(compose::createComposeLowerRoute(route));
  pm.addPass(compose::createComposeLowerMemory());
  // External components are linked at load time: calls through imports.
  pm.addPass(compose::createComposeLowerExternalCalls());
  pm.addPass(compose::createComposeInlineComponents());
  // Exact rewrites that use the discreteness of symbols (one-hot matmul ->
  // gather, constant codebooks); -O2 and up, as the codebook rewrite
  // computes distances in another order.
  if (options.optLevel >= 2)
    pm.addPass(sym::createTesselSimplifySym());
  pm.addPass(sym::createTesselLowerSym()); // symbols -> i32 ids (+ sym.vocab)
  pm.addPass(createTesselRecordSignature());

  // Before softmax is decomposed: attention chains become one fused kernel.
  if (useKernels(options))
    pm.addNestedPass<func::FuncOp>(createTesselFuseAttention());
  pm.addNestedPass<func::FuncOp>(createTesselDecomposeGraphOps());
  // Layout: ONNX graphs are NCHW while TOSA convolutions are NHWC, so every
  // conv comes wrapped in transposes; cancel them across elementwise ops.
  if (options.optLevel > 0) {
    pm.addNestedPass<func::FuncOp>(tosa::createTosaReduceTransposes());
    pm.addNestedPass<func::FuncOp>(createTesselSinkTransposes());
    pm.addPass(createCanonicalizerPass());
  }
  // Upstream TOSA lowering: named ops (conv, matmul, pooling) to linalg
  // named ops, elementwise/reductions to linalg.generic, the rest to
  // arith/tensor/scf.
  TosaToLinalgOptions tosaToLinalg;
  TosaToLinalgNamedOptions tosaToNamed;
  tosaToNamed.preferConv2DKernelLayoutHWCF = false;
  // Control flow first: tosa-to-linalg is a full conversion and would
  // reject tosa.cond_if / tosa.while_loop bodies.
  pm.addNestedPass<func::FuncOp>(createTosaToSCFPass());
  tosa::addTosaToLinalgPasses(pm, tosaToLinalg, tosaToNamed,
                              /*validationOptions=*/std::nullopt);
  pm.addNestedPass<func::FuncOp>(createTosaToArithPass());
  pm.addNestedPass<func::FuncOp>(createTosaToTensorPass());
  // math/arith ops applied directly to tensors in the model.
  pm.addPass(createConvertElementwiseToLinalgPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Named output dimensions (ABI v3) must equal their inputs', proven
  // while shapes are still in tensor form.
  pm.addPass(createTesselCheckResultDims());
  // --precision=bf16: the rounding of the operands is made explicit here,
  // at every -O level, so that the kernels and the loops agree.
  if (options.precision == Precision::BF16)
    pm.addPass(createTesselComputeInBF16());
  if (useKernels(options)) {
    // Mostly-zero constant weights: the sparse kernel where it pays, before
    // the dense patterns take every matmul (docs/sparsity.md).
    if (options.sparsity && options.optLevel >= 2) {
      TesselSparsifyWeightsOptions sparsify;
      sparsify.report = options.sparsityReport;
      sparsify.vectorBits = options.vectorBits;
      pm.addPass(createTesselSparsifyWeights(sparsify));
    }
    // Before elementwise fusion, which would merge the bias/residual/clamp
    // epilogues into generics the kernel patterns no longer recognize.
    pm.addPass(createTesselConvertToKernels());
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
  }
  // After the kernel patterns (which pack constant filters): large splats
  // are filled at run time instead of stored in the artifact.
  pm.addPass(createTesselSplatsToFills());
  if (options.optLevel > 0) {
    pm.addPass(createTesselFuseElementwise());
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
  }
  // After elementwise fusion has gathered an int8 matmul's dequantize,
  // activation and requantize into the one generic that reads it.
  if (useKernels(options))
    pm.addPass(createTesselFuseRequantize());
  // The quantizes that stayed in loops: a proven reciprocal, not a vector
  // division per element.
  if (options.optLevel >= 2)
    pm.addPass(createTesselQuantizeWithoutDivision());
}

void mlir::tessel::buildLinalgToBuffersPipeline(
    OpPassManager &pm, const PipelineOptions &options) {
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  // Loop-carried tensors (tosa.while_loop) may yield fresh buffers; the
  // deallocation pipeline frees them.
  bufferize.allowReturnAllocsFromLoops = true;
  // A value returned twice would be one buffer for two out-params.
  pm.addPass(createTesselCopyRepeatedResults());
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // Fold reshape chains (collapse(expand(alloc))) first, so that a result
  // computed in a local buffer is recognized as that alloc and written to
  // the out-param directly instead of being copied there.
  pm.addPass(createCanonicalizerPass());
  // The runtime allocates outputs: results become trailing out-params.
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.hoistStaticAllocs = true;
  outParams.modifyPublicFunctions = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  pm.addPass(createCanonicalizerPass());
  bufferization::BufferDeallocationPipelineOptions dealloc;
  bufferization::buildBufferDeallocationPipeline(pm, dealloc);
  // Intermediates share one arena (one allocation per call).
  if (options.optLevel >= 1)
    pm.addNestedPass<func::FuncOp>(createTesselPlanBuffers());
}

void mlir::tessel::buildBuffersToLLVMPipeline(OpPassManager &pm,
                                              const PipelineOptions &options) {
  if (useKernels(options))
    pm.addPass(createTesselKernelsToCalls());
  pm.addPass(createTesselImportsToCalls());
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
  if (useKernels(options)) {
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
  memrefToLLVM.useGenericFunctions = useKernels(options);
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

/// The CUDA toolkit: the option, else $CUDA_HOME, else /usr/local/cuda.
static std::string cudaToolkitPath(const PipelineOptions &options) {
  if (!options.cudaToolkit.empty())
    return options.cudaToolkit;
  if (const char *home = std::getenv("CUDA_HOME"))
    return home;
  return "/usr/local/cuda";
}

void mlir::tessel::buildBuffersToCUDAPipeline(OpPassManager &pm,
                                              const PipelineOptions &options) {
  if (options.optLevel >= 2)
    pm.addPass(createTesselApproximateMath());
  pm.addNestedPass<func::FuncOp>(createTesselStridedCopyToLinalg());
  // Every linalg op becomes a loop nest: its parallel dimensions one
  // scf.parallel, its reductions scf.for inside (one thread per output
  // element).
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  pm.addNestedPass<func::FuncOp>(createTesselGpuPlaceBuffers());
  pm.addNestedPass<func::FuncOp>(createTesselGpuMapParallelLoops());
  pm.addPass(createConvertBufferizationToMemRefPass());
  pm.addPass(createGpuKernelOutliningPass());
  // Allocations, copies and launches become asynchronous operations on one
  // stream, in program order, with one wait at the end (gpu-to-llvm only
  // lowers the asynchronous forms of gpu.alloc and gpu.memcpy).
  pm.addNestedPass<func::FuncOp>(createGpuAsyncRegionPass());
  // As upstream's gpu-lower-to-nvvm-pipeline, with Tessel's host ABI last.
  pm.addPass(createConvertVectorToSCFPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertNVVMToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  GpuNVVMAttachTargetOptions nvvm;
  nvvm.chip = options.cudaArch;
  nvvm.features = ptxFeatures(options.cudaArch).str();
  nvvm.optLevel = std::min(options.optLevel.getValue(), 3u);
  pm.addPass(createGpuNVVMAttachTarget(nvvm));
  pm.addPass(createLowerAffinePass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertGpuOpsToNVVMOps());
  pm.addNestedPass<gpu::GPUModuleOp>(LLVM::createNVVMOptimizeForTargetPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createCanonicalizerPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createCSEPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createReconcileUnrealizedCastsPass());
  pm.addPass(createGpuToLLVMConversionPass());
  GpuModuleToBinaryPassOptions binary;
  // PTX: the driver compiles it for the device at load (any sm_NN at or
  // above the one it was written for).
  binary.compilationTarget = "isa";
  binary.toolkitPath = cudaToolkitPath(options);
  pm.addPass(createGpuModuleToBinaryPass(binary));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  TesselEmitArtifactABIOptions abi;
  abi.targetTriple = options.targetTriple;
  abi.device = "cuda " + options.cudaArch.getValue();
  pm.addPass(createTesselEmitArtifactABI(abi));
}

void mlir::tessel::buildPipeline(OpPassManager &pm,
                                 const PipelineOptions &options, Phase from,
                                 Phase to) {
  if (from < Phase::Linalg && to >= Phase::Linalg)
    buildModelToLinalgPipeline(pm, options);
  if (from < Phase::Bufferized && to >= Phase::Bufferized)
    buildLinalgToBuffersPipeline(pm, options);
  if (from < Phase::LLVM && to >= Phase::LLVM) {
    if (options.target == Target::CUDA)
      buildBuffersToCUDAPipeline(pm, options);
    else
      buildBuffersToLLVMPipeline(pm, options);
  }
}

void mlir::tessel::registerTesselPipelines() {
  PassPipelineRegistration<PipelineOptions>(
      "tessel-model-to-linalg",
      "Model-level IR (tosa/tessel/math on tensors) to linalg on tensors",
      buildModelToLinalgPipeline);
  PassPipelineRegistration<PipelineOptions>(
      "tessel-linalg-to-buffers",
      "linalg on tensors to memrefs with out-param results",
      buildLinalgToBuffersPipeline);
  PassPipelineRegistration<PipelineOptions>(
      "tessel-buffers-to-llvm",
      "memrefs to the LLVM dialect plus the artifact ABI",
      buildBuffersToLLVMPipeline);
  PassPipelineRegistration<PipelineOptions>(
      "tessel-model-to-llvm", "The whole CPU pipeline: model IR to LLVM",
      [](OpPassManager &pm, const PipelineOptions &options) {
        buildPipeline(pm, options, Phase::Input, Phase::LLVM);
      });
}
