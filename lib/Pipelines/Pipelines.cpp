//===- Pipelines.cpp - Tessel's named pass pipelines ------------------------===//
#include "tessel/Pipelines/Pipelines.h"

#include "tessel/Conversion/Passes.h"
#include "tessel/Dialect/Compose/Transforms/Passes.h"
#include "tessel/Dialect/Sym/Transforms/Passes.h"
#include "tessel/Dialect/Tessel/Transforms/Passes.h"
#include "tessel/Quantization/Passes.h"
#include "tessel/Target/TargetBackend.h"

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
  if (name == "f16")
    return Precision::F16;
  return std::nullopt;
}

std::optional<Target> mlir::tessel::parseTarget(llvm::StringRef name) {
  if (name == "cpu")
    return Target::CPU;
  if (name == "cuda")
    return Target::CUDA;
  return std::nullopt;
}

std::optional<CudaBinary>
mlir::tessel::parseCudaBinary(llvm::StringRef name) {
  if (name == "auto")
    return CudaBinary::Auto;
  if (name == "ptx")
    return CudaBinary::PTX;
  if (name == "fatbin")
    return CudaBinary::Fatbin;
  return std::nullopt;
}

bool mlir::tessel::isKnownCudaArch(llvm::StringRef arch) {
  return llvm::is_contained({"sm_75", "sm_80", "sm_86", "sm_89", "sm_90",
                             "sm_90a", "sm_100", "sm_120"},
                            arch);
}

/// Kernel-library codegen is the -O2/-O3 path on the CPU; -O0/-O1 stay
/// plain loops, and other targets have no kernel library.
static bool useKernels(const PipelineOptions &options) {
  return options.kernels && options.optLevel >= 2 &&
         getTargetBackend(options.target).capabilities(nullptr).kernelLibrary;
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
  route.expertParallel = options.expertParallel;
  route.placement.assign(options.expertPlacement.begin(),
                         options.expertPlacement.end());
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
  pm.addPass(createTesselNameDynamicDims());
  pm.addPass(createTesselRecordSignature());

  // Before softmax is decomposed: attention chains become one fused kernel.
  if (useKernels(options))
    pm.addNestedPass<func::FuncOp>(createTesselFuseAttention());
  // Random draws: loops over the elements' positions (a module pass: the
  // unseeded ones share one call counter, a global the host keeps).
  TesselLowerRandomOptions lowerRandom;
  lowerRandom.unseeded =
      getTargetBackend(options.target).capabilities(nullptr).hostReadsResults;
  pm.addPass(createTesselLowerRandom(lowerRandom));
  // Grouped convolutions stay whole for the kernel library's grouped
  // kernel.
  TesselDecomposeGraphOpsOptions decompose;
  decompose.keepGrouped = useKernels(options);
  pm.addNestedPass<func::FuncOp>(createTesselDecomposeGraphOps(decompose));
  // Layout: ONNX graphs are NCHW while TOSA convolutions are NHWC, so every
  // conv comes wrapped in transposes; cancel them across elementwise ops.
  if (options.optLevel > 0) {
    pm.addNestedPass<func::FuncOp>(tosa::createTosaReduceTransposes());
    pm.addNestedPass<func::FuncOp>(createTesselSinkTransposes());
    pm.addPass(createCanonicalizerPass());
    // Dilated convolutions that read mostly padding (DeepLabV3's ASPP)
    // shrink to the taps they read.
    pm.addNestedPass<func::FuncOp>(createTesselTrimPaddedTaps());
  }
  // Transposed convolutions (after the layout passes, which cancel their
  // NCHW wrappers like any convolution's): one matmul where the windows do
  // not overlap.
  pm.addNestedPass<func::FuncOp>(createTesselDecomposeTransposeConv());
  // Upstream TOSA lowering: named ops (conv, matmul, pooling) to linalg
  // named ops, elementwise/reductions to linalg.generic, the rest to
  // arith/tensor/scf.
  TosaToLinalgOptions tosaToLinalg;
  TosaToLinalgNamedOptions tosaToNamed;
  tosaToNamed.preferConv2DKernelLayoutHWCF = false;
  // Dynamic sizes of elementwise operands are checked to broadcast before
  // tosa-to-linalg trusts them.
  pm.addPass(createTesselCheckBroadcasts());
  // Gather and scatter indices the importer marked (tessel.check_indices)
  // are checked at run time: one out of range fails the call.
  // (Clamped instead where the host cannot read device values: the GPU.)
  TesselLowerIndexChecksOptions indexChecks;
  indexChecks.report = getTargetBackend(options.target)
                           .capabilities(nullptr)
                           .hostReadsResults;
  pm.addPass(createTesselLowerIndexChecks(indexChecks));
  // Integer divisors: zero fails the call instead of trapping.
  TesselCheckDivisorsOptions divisorChecks;
  divisorChecks.report = indexChecks.report;
  pm.addPass(createTesselCheckDivisors(divisorChecks));
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
  // A run-time batch: the broadcast guards of operands that share it go.
  pm.addPass(createTesselDropUnitBroadcasts());
  // Named output dimensions (ABI v3) must equal their inputs', proven
  // while shapes are still in tensor form.
  pm.addPass(createTesselCheckResultDims());
  // --precision=bf16: the rounding of the operands is made explicit here,
  // at every -O level, so that the kernels and the loops agree; unless the
  // target's codegen rounds them itself (the CUDA tensor-core tiles).
  if (options.precision == Precision::BF16 && !getTargetBackend(options.target)
                                                   .capabilities(nullptr)
                                                   .roundsBF16Contractions)
    pm.addPass(createTesselComputeInBF16());
  if (useKernels(options)) {
    // Mostly-zero constant weights: the sparse kernel where it pays, before
    // the dense patterns take every matmul (docs/sparsity.md).
    if (options.sparsity && options.optLevel >= 2) {
      TesselSparsifyWeightsOptions sparsify;
      sparsify.report = options.sparsityReport;
      sparsify.vectorBits = options.vectorBits;
      sparsify.fmaBits = options.fmaBits;
      sparsify.laneOrder = options.laneOrder;
      pm.addPass(createTesselSparsifyWeights(sparsify));
    }
    // Before elementwise fusion, which would merge the bias/residual/clamp
    // epilogues into generics the kernel patterns no longer recognize.
    // Narrow square groups take the rotated vector layout up to a
    // vector's lanes.
    TesselConvertToKernelsOptions toKernels;
    toKernels.groupedRotatedMaxWidth =
        std::min<int64_t>(8, options.vectorBits / 32);
    pm.addPass(createTesselConvertToKernels(toKernels));
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
  if (useKernels(options)) {
    pm.addPass(createTesselFuseRequantize());
    // Mostly-zero int8 weights, once their epilogue is the op's.
    if (options.sparsity && options.optLevel >= 2) {
      TesselSparsifyInt8WeightsOptions sparsify;
      sparsify.report = options.sparsityReport;
      sparsify.vectorBits = options.vectorBits;
      pm.addPass(createTesselSparsifyInt8Weights(sparsify));
    }
  }
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
  // Concatenations built in place: each piece's producer writes into its
  // slice of the result (and DenseNet's concatenations of concatenations
  // share one tensor) instead of a buffer of its own copied afterwards.
  if (options.optLevel >= 1) {
    pm.addNestedPass<func::FuncOp>(createTesselShareConcatPrefixes());
    // Likewise a padded pooling input: computed into the padded buffer.
    pm.addNestedPass<func::FuncOp>(createTesselPadInPlace());
    pm.addPass(bufferization::createEmptyTensorEliminationPass());
  }
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // Fold reshape chains (collapse(expand(alloc))) first, so that a result
  // computed in a local buffer is recognized as that alloc and written to
  // the out-param directly instead of being copied there.
  pm.addPass(createCanonicalizerPass());
  // The runtime allocates outputs: results become trailing out-params,
  // except in an entry whose output sizes follow from the data (ABI v6).
  TesselResultsToOutParamsOptions outParams;
  outParams.runTimeResults = getTargetBackend(options.target)
                                 .capabilities(nullptr)
                                 .hostReadsResults;
  pm.addPass(createTesselResultsToOutParams(outParams));
  pm.addPass(createCanonicalizerPass());
  bufferization::BufferDeallocationPipelineOptions dealloc;
  bufferization::buildBufferDeallocationPipeline(pm, dealloc);
  getTargetBackend(options.target).buildBufferPipeline(pm, options);
  // Intermediates share one arena (one allocation per call).
  if (options.optLevel >= 1)
    pm.addNestedPass<func::FuncOp>(createTesselPlanBuffers());
}

void mlir::tessel::buildPipeline(OpPassManager &pm,
                                 const PipelineOptions &options, Phase from,
                                 Phase to) {
  if (from < Phase::Linalg && to >= Phase::Linalg)
    buildModelToLinalgPipeline(pm, options);
  if (from < Phase::Bufferized && to >= Phase::Bufferized)
    buildLinalgToBuffersPipeline(pm, options);
  if (from < Phase::LLVM && to >= Phase::LLVM)
    getTargetBackend(options.target).buildCodegenPipeline(pm, options);
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
      "memrefs to the LLVM dialect plus the artifact ABI: the target's code "
      "generation (target=cpu|cuda)",
      [](OpPassManager &pm, const PipelineOptions &options) {
        getTargetBackend(options.target).buildCodegenPipeline(pm, options);
      });
  PassPipelineRegistration<PipelineOptions>(
      "tessel-model-to-llvm", "The whole CPU pipeline: model IR to LLVM",
      [](OpPassManager &pm, const PipelineOptions &options) {
        buildPipeline(pm, options, Phase::Input, Phase::LLVM);
      });
}
