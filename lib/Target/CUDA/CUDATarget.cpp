//===- CUDATarget.cpp - The CUDA target backend ------------------------===//
//
// Kernels run on NVIDIA GPUs, the rest of the artifact on the host CPU:
// buffers live in device memory, each loop nest is a kernel (matmuls tiled
// kernels), the kernels are PTX in gpu.binary ops that the artifact's
// constructors load, and the device runtime (lib/DeviceRuntime) is linked
// into the artifact. See docs/pipeline/cuda.md.
//
//===----------------------------------------------------------------------===//
#include "CUDATarget.h"

#include "../Host/HostArtifact.h"
#include "../Host/KernelLibrary.h"

#include "tessel/Conversion/Passes.h"
#include "tessel/Dialect/Tessel/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/Support/FileSystem.h"

#include <cstdlib>

using namespace mlir;
using namespace mlir::tessel;

StringRef CUDATargetBackend::name() const { return "cuda"; }

TargetCapabilities
CUDATargetBackend::capabilities(const llvm::TargetMachine *) const {
  TargetCapabilities caps;
  // Values the kernels compute stay in device memory until the outputs are
  // copied back: the host cannot size a grouped route's batches from them.
  caps.hostReadsResults = false;
  // tessel-gpu-tile-matmul takes every f32 conv_2d_nhwc_fhwc, matmul and
  // batch matmul and, with precision=bf16, rounds their operands as it
  // stages them for mma.sync: what tessel-compute-in-bf16 would make
  // explicit, on the tensor cores instead of the CUDA cores.
  caps.roundsBF16Contractions = true;
  return caps;
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

/// The CUDA toolkit: the option, else $CUDA_HOME, else /usr/local/cuda.
static std::string cudaToolkitPath(const PipelineOptions &options) {
  if (!options.cudaToolkit.empty())
    return options.cudaToolkit;
  if (const char *home = std::getenv("CUDA_HOME"))
    return home;
  return "/usr/local/cuda";
}

/// Whether the toolkit has what a fatbin takes: ptxas and fatbinary.
static bool hasFatbinTools(const PipelineOptions &options) {
  std::string bin = cudaToolkitPath(options) + "/bin/";
  return llvm::sys::fs::can_execute(bin + "ptxas") &&
         llvm::sys::fs::can_execute(bin + "fatbinary");
}

/// Whether the kernels are embedded as a fatbin with a cubin (the
/// cuda-binary option; auto: where the toolkit has the tools).
static bool embedsCubin(const PipelineOptions &options) {
  if (options.cudaBinary != CudaBinary::Auto)
    return options.cudaBinary == CudaBinary::Fatbin;
  return hasFatbinTools(options);
}

std::optional<std::string>
CUDATargetBackend::unsupported(const PipelineOptions &options) const {
  if (options.cudaBinary == CudaBinary::Fatbin && !hasFatbinTools(options))
    return "--cuda-binary=fatbin needs the CUDA toolkit's ptxas and "
           "fatbinary, not found in '" +
           cudaToolkitPath(options) +
           "/bin' (set CUDA_HOME, or use --cuda-binary=ptx)";
  return std::nullopt;
}

void CUDATargetBackend::buildBufferPipeline(
    OpPassManager &pm, const PipelineOptions &) const {
  // A matmul's zero init: a fill of its output (folded into its kernel by
  // tessel-gpu-tile-matmul), not a fill kernel and a device copy.
  pm.addNestedPass<func::FuncOp>(createTesselGpuFoldFillCopies());
  // Reductions over middle dims (a global average pool): every parallel
  // loop outside, so each output element gets a thread (or a block).
  pm.addNestedPass<func::FuncOp>(createTesselGpuParallelLoopsFirst());
  // Softmax's and the norms' runs of row reductions: one kernel of a block
  // per row. Before the arena is planned: the run's buffers stay apart.
  pm.addNestedPass<func::FuncOp>(createTesselGpuFuseRows());
}

void CUDATargetBackend::buildCodegenPipeline(
    OpPassManager &pm, const PipelineOptions &options) const {
  if (options.optLevel >= 2)
    pm.addPass(createTesselApproximateMath());
  pm.addNestedPass<func::FuncOp>(createTesselStridedCopyToLinalg());
  // f32 matmuls: tiled kernels with shared-memory staging.
  TesselGpuTileMatmulOptions tile;
  tile.precision = options.precision == Precision::F16    ? "f16"
                   : options.precision == Precision::BF16 ? "bf16"
                                                          : "f32";
  // Hopper's TMA and wgmma are in sm_90a's PTX only (architecture-specific:
  // such PTX runs on compute capability 9.0 alone).
  tile.wgmma = options.cudaArch == "sm_90a";
  pm.addNestedPass<func::FuncOp>(createTesselGpuTileMatmul(tile));
  // Every other linalg op becomes a loop nest: its parallel dimensions one
  // scf.parallel, its reductions scf.for inside (one thread per output
  // element).
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  pm.addNestedPass<func::FuncOp>(createTesselGpuPlaceBuffers());
  pm.addNestedPass<func::FuncOp>(createTesselGpuMapParallelLoops());
  pm.addPass(createConvertBufferizationToMemRefPass());
  // nvgpu before outlining, as upstream's gpu-lower-to-nvvm-pipeline: a TMA
  // descriptor crosses into the kernel as the pointer it lowers to (the
  // gpu.func signature conversion has no rule for nvgpu's types).
  pm.addPass(createConvertNVGPUToNVVMPass());
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
  pm.addNestedPass<gpu::GPUModuleOp>(createTesselGpuExternDynamicShared());
  pm.addNestedPass<gpu::GPUModuleOp>(LLVM::createNVVMOptimizeForTargetPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createCanonicalizerPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createCSEPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createReconcileUnrealizedCastsPass());
  pm.addPass(createGpuToLLVMConversionPass());
  pm.addPass(createCanonicalizerPass());
  // Weights cross the bus once: device copies cached by the runtime.
  pm.addPass(createTesselGpuResidentConstants());
  GpuModuleToBinaryPassOptions binary;
  // A fatbin: the cubin ptxas made for --cuda-arch (loads without the
  // driver's compiler, which on ResNet-50's 248 kernel modules is seconds at
  // each load) and the PTX, which the driver compiles on a newer GPU. PTX
  // alone where the toolkit is absent.
  binary.compilationTarget = embedsCubin(options) ? "fatbin" : "isa";
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


/// The PTX of every kernel module (gpu.binary objects in "isa" format),
/// one after the other, each headed by a comment naming its module.
static LogicalResult writePTX(ModuleOp module, StringRef path) {
  std::string text;
  for (auto binary : module.getOps<gpu::BinaryOp>())
    for (Attribute a : binary.getObjects()) {
      auto object = dyn_cast<gpu::ObjectAttr>(a);
      if (!object || object.getFormat() != gpu::CompilationTarget::Assembly)
        continue;
      text += "// ---- kernel module " + binary.getName().str() + "\n";
      text += object.getObject().getValue().str();
      text += "\n";
    }
  return writeTextFile(module, path, [&](raw_ostream &os) { os << text; });
}

/// The device runtime: the CUDA driver calls of the host code.
llvm::Expected<std::vector<std::string>>
CUDATargetBackend::linkArchives(const llvm::TargetMachine &,
                                const SerializeOptions &) const {
  llvm::Expected<std::string> archive = findCudaDeviceArchive();
  if (!archive)
    return archive.takeError();
  return std::vector<std::string>{*archive};
}

LogicalResult CUDATargetBackend::serialize(ModuleOp module,
                                           llvm::TargetMachine &host,
                                           const SerializeOptions &options,
                                           TimingScope &timing) const {
  if (options.emit == EmitKind::PTX)
    return writePTX(module, options.outputPath);
  return writeHostArtifact(module, host, options, timing);
}
