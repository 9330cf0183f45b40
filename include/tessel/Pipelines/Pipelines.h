//===- Pipelines.h - Tessel's named pass pipelines --------------*- C++ -*-===//
//
// The compilation is split into phases; each phase is a named pipeline that
// tessel-opt exposes and tessel-compile strings together (see
// docs/pipeline.md):
//
//   input ──tessel-model-to-linalg──▶ linalg
//         ──tessel-linalg-to-buffers──▶ bufferized
//         ──tessel-buffers-to-llvm──▶ llvm (LLVM dialect + artifact ABI)
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_PIPELINES_PIPELINES_H
#define TESSEL_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include <optional>
#include <string>

namespace mlir::tessel {

/// How the model is quantized by the compiler (docs/quantization.md).
enum class QuantizeMode {
  None,        // as written: QDQ models still run their int8 parts on int8
  Int8Dynamic, // matmuls with constant weights: int8, activations at run time
  Int8,        // static: calibrated sites (tessel.calibrated_ranges) on int8
};

/// What f32 convolutions and matmuls compute in (docs/quantization.md#bf16).
enum class Precision {
  F32,  // as written
  BF16, // bf16 products (operands rounded to nearest even), f32 sums
  F16,  // f16 products, f32 sums (GPU targets: the tensor cores)
};

/// Where the compiled code runs (docs/pipeline/targets.md).
enum class Target {
  CPU,  // x86-64 (or the host): kernel library, thread pool, allocator
  CUDA, // NVIDIA GPUs: kernels as PTX in the artifact, host code on the CPU
};

/// How a CUDA artifact embeds its kernels.
enum class CudaBinary { Auto, PTX, Fatbin };

struct PipelineOptions : public PassPipelineOptions<PipelineOptions> {
  Option<Target> target{
      *this, "target",
      llvm::cl::desc("Where the code runs: cpu (default) or cuda (NVIDIA "
                     "GPUs; the host part runs on the CPU)"),
      llvm::cl::init(Target::CPU),
      llvm::cl::values(clEnumValN(Target::CPU, "cpu", "the CPU"),
                       clEnumValN(Target::CUDA, "cuda", "NVIDIA GPUs"))};
  Option<std::string> cudaArch{
      *this, "cuda-arch",
      llvm::cl::desc("--target=cuda: the GPU architecture (sm_80, sm_90, "
                     "...): the PTX needs at least this"),
      llvm::cl::init("sm_80")};
  Option<std::string> cudaToolkit{
      *this, "cuda-toolkit",
      llvm::cl::desc("--target=cuda: the CUDA toolkit (libdevice for math "
                     "functions); empty: $CUDA_HOME, else /usr/local/cuda"),
      llvm::cl::init("")};
  Option<CudaBinary> cudaBinary{
      *this, "cuda-binary",
      llvm::cl::desc("--target=cuda: how the kernels are embedded: ptx "
                     "(compiled by the driver at load), fatbin (a cubin for "
                     "--cuda-arch, from the toolkit's ptxas, with the PTX "
                     "for newer GPUs), auto (fatbin where the toolkit has "
                     "ptxas and fatbinary, else ptx)"),
      llvm::cl::init(CudaBinary::Auto),
      llvm::cl::values(
          clEnumValN(CudaBinary::Auto, "auto", "fatbin where possible"),
          clEnumValN(CudaBinary::PTX, "ptx", "PTX only"),
          clEnumValN(CudaBinary::Fatbin, "fatbin", "cubin and PTX"))};
  Option<unsigned> optLevel{*this, "opt-level",
                            llvm::cl::desc("Optimization level 0..3"),
                            llvm::cl::init(2)};
  Option<std::string> targetTriple{
      *this, "target-triple",
      llvm::cl::desc("Triple recorded in the artifact manifest"),
      llvm::cl::init("")};
  Option<std::string> cpuFeatures{
      *this, "cpu-features",
      llvm::cl::desc("CPU features the artifact requires, recorded in its "
                     "manifest (tessel-compile sets them from --mcpu)"),
      llvm::cl::init("")};
  Option<bool> kernels{
      *this, "kernels",
      llvm::cl::desc("Call the kernel library (include/tessel/Kernels) for "
                     "convolutions and matmuls at -O2 and above; the caller "
                     "links it (tessel-compile does)"),
      llvm::cl::init(true)};
  Option<unsigned> vectorBits{
      *this, "vector-bits",
      llvm::cl::desc("Vector register width of the target in bits, for the "
                     "tiles of generated loops (tessel-compile sets it from "
                     "--mcpu)"),
      llvm::cl::init(512)};
  Option<unsigned> fmaBits{
      *this, "fma-bits",
      llvm::cl::desc("Width of the target's FMA datapath in bits (0: "
                     "vector-bits), for the sparsity cost model: 256 with "
                     "512-bit registers is AMD Zen 4 (tessel-compile sets it "
                     "from --mcpu)"),
      llvm::cl::init(0)};
  Option<bool> laneOrder{
      *this, "lane-order",
      llvm::cl::desc("N:M sparse weights of matmuls in the lane order, "
                     "vectorized over output columns (tessel-sparsify-"
                     "weights' lane-order; tessel-compile sets it for CPUs "
                     "whose 512-bit permutes run beside the FMAs: AMD Zen 5)"),
      llvm::cl::init(false)};
  Option<std::string> routeLowering{
      *this, "route-lowering",
      llvm::cl::desc("How compose.route is lowered: grouped (each expert on "
                     "its own tokens) or dense (every expert on every token, "
                     "the reference)"),
      llvm::cl::init("grouped")};
  Option<int64_t> expertParallel{
      *this, "expert-parallel",
      llvm::cl::desc("MPI processes each compose.route's experts are spread "
                     "over (1: one process; docs/scale-out.md)"),
      llvm::cl::init(1)};
  ListOption<int64_t> expertPlacement{
      *this, "expert-placement",
      llvm::cl::desc("Experts on each process, in rank order (empty: as even "
                     "as possible)")};
  Option<QuantizeMode> quantize{
      *this, "quantize",
      llvm::cl::desc("Quantize the model: none, int8-dynamic (int8 "
                     "weights, activations quantized per row at run time) or "
                     "int8 (static: the ops calibration annotated with "
                     "tessel.calibrated_ranges)"),
      llvm::cl::init(QuantizeMode::None),
      llvm::cl::values(
          clEnumValN(QuantizeMode::None, "none", "no quantization"),
          clEnumValN(QuantizeMode::Int8Dynamic, "int8-dynamic",
                     "dynamic int8 for matmuls with constant weights"),
          clEnumValN(QuantizeMode::Int8, "int8",
                     "static int8 from calibrated ranges"))};
  Option<Precision> precision{
      *this, "precision",
      llvm::cl::desc("What f32 convolutions and matmuls compute in: f32, or "
                     "bf16 (operands rounded to bf16, sums in f32: "
                     "AVX512_BF16's vdpbf16ps)"),
      llvm::cl::init(Precision::F32),
      llvm::cl::values(
          clEnumValN(Precision::F32, "f32", "f32 products and sums"),
          clEnumValN(Precision::BF16, "bf16",
                     "bf16 products, f32 sums"),
          clEnumValN(Precision::F16, "f16",
                     "f16 products, f32 sums (--target=cuda)"))};
  Option<bool> sparsity{
      *this, "sparsity",
      llvm::cl::desc("Run matmuls whose constant weights are mostly zeros "
                     "on the sparse kernel where the cost model predicts a "
                     "gain (-O2 and up, with the kernel library)"),
      llvm::cl::init(true)};
  Option<std::string> sparsityReport{
      *this, "sparsity-report",
      llvm::cl::desc("File that gets the per-matmul sparsity analysis"),
      llvm::cl::init("")};
  Option<std::string> component{
      *this, "component",
      llvm::cl::desc("Compile only this compose.component, as the entry "
                     "point (separate compilation)"),
      llvm::cl::init("")};
};

/// Parses a --quantize value (none|int8-dynamic|int8).
std::optional<QuantizeMode> parseQuantizeMode(llvm::StringRef name);
/// Parses a --precision value (f32|bf16|f16).
std::optional<Precision> parsePrecision(llvm::StringRef name);

/// The phases of the CPU pipeline, in order.
enum class Phase { Input, Linalg, Bufferized, LLVM };

/// Parses a phase name (input|linalg|bufferized|llvm).
std::optional<Phase> parsePhase(llvm::StringRef name);
llvm::StringRef phaseName(Phase phase);

/// Model-level IR (tosa + tessel + elementwise math/arith on tensors) to
/// linalg on tensors; records the entry-point signature first.
void buildModelToLinalgPipeline(OpPassManager &pm,
                                const PipelineOptions &options);
/// linalg on tensors to loops-ready memrefs with out-param results.
void buildLinalgToBuffersPipeline(OpPassManager &pm,
                                  const PipelineOptions &options);
/// Parses a --target value (cpu|cuda).
std::optional<Target> parseTarget(llvm::StringRef name);
/// Parses a --cuda-binary value (auto|ptx|fatbin).
std::optional<CudaBinary> parseCudaBinary(llvm::StringRef name);
/// Whether `arch` names a CUDA architecture the backend knows (sm_NN).
bool isKnownCudaArch(llvm::StringRef arch);

/// Adds every phase after `from` up to and including `to`.
void buildPipeline(OpPassManager &pm, const PipelineOptions &options,
                   Phase from, Phase to);

/// Registers the named pipelines with the global pass registry.
void registerTesselPipelines();

} // namespace mlir::tessel

#endif // TESSEL_PIPELINES_PIPELINES_H
