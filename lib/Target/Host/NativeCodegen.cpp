//===- NativeCodegen.cpp - LLVM IR to optimized object code ----------------===//
#include "NativeCodegen.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/MC/MCSubtargetInfo.h"

using namespace llvm;

Expected<std::unique_ptr<TargetMachine>>
mlir::tessel::createTargetMachine(const std::string &tripleName,
                                  const std::string &cpu, unsigned optLevel) {
  static bool initialized = [] {
    InitializeAllTargetInfos();
    InitializeAllTargets();
    InitializeAllTargetMCs();
    InitializeAllAsmPrinters();
    return true;
  }();
  (void)initialized;
  Triple triple(tripleName.empty() ? sys::getDefaultTargetTriple()
                                   : tripleName);
  std::string error;
  const llvm::Target *target = TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return createStringError(inconvertibleErrorCode(),
                             "unknown target triple '" + triple.str() +
                                 "': " + error);
  std::string cpuName = cpu, features;
  if (cpu == "native") {
    cpuName = sys::getHostCPUName().str();
    SubtargetFeatures f;
    for (auto &feature : sys::getHostCPUFeatures())
      f.AddFeature(feature.first(), feature.second);
    features = f.getString();
  } else {
    // LLVM only warns on an unknown CPU and silently falls back to a
    // generic one; a user asking for a CPU must get it or an error.
    std::unique_ptr<MCSubtargetInfo> sti(
        target->createMCSubtargetInfo(triple, cpuName, ""));
    if (!sti || !sti->isCPUStringValid(cpuName))
      return createStringError(inconvertibleErrorCode(),
                               "unknown CPU '" + cpuName + "' for target '" +
                                   triple.str() +
                                   "' (use --mcpu=native or an LLVM CPU "
                                   "name such as x86-64-v3, skylake-avx512)");
  }
  // Generated loops whose innermost dimension is short (16-64 channels)
  // are fully unrolled before LLVM's loop vectorizer runs, which then
  // vectorizes the next loop out with gathers and scatters at the channel
  // stride; on AMD Zen 4 those are slower than the scalar code. Without
  // them the SLP vectorizer packs the unrolled channels into contiguous
  // vector loads and stores instead.
  if (triple.isX86())
    features += std::string(features.empty() ? "" : ",") +
                "+prefer-no-gather,+prefer-no-scatter";
  TargetOptions options;
  CodeGenOptLevel level = optLevel == 0   ? CodeGenOptLevel::None
                          : optLevel == 1 ? CodeGenOptLevel::Less
                          : optLevel == 2 ? CodeGenOptLevel::Default
                                          : CodeGenOptLevel::Aggressive;
  std::unique_ptr<TargetMachine> tm(target->createTargetMachine(
      triple, cpuName, features, options, Reloc::PIC_, std::nullopt, level));
  if (!tm)
    return createStringError(inconvertibleErrorCode(),
                             "cannot create a target machine for '" +
                                 triple.str() + "'");
  return tm;
}

std::string mlir::tessel::requiredCpuFeatures(const TargetMachine &tm) {
  if (!tm.getTargetTriple().isX86())
    return "";
  const MCSubtargetInfo *sti = tm.getMCSubtargetInfo();
  llvm::StringSet<> known;
  for (const SubtargetFeatureKV &kv : sti->getAllProcessorFeatures())
    known.insert(kv.Key);
  std::string out;
  for (const char *name : {
#define TESSEL_CPU_FEATURE(NAME, ...) NAME,
#include "tessel/Runtime/CpuFeatures.def"
       })
    if (known.contains(name) && sti->checkFeatures(std::string("+") + name))
      out += (out.empty() ? "" : ",") + std::string(name);
  return out;
}

unsigned mlir::tessel::vectorRegisterBits(const TargetMachine &tm) {
  const MCSubtargetInfo *sti = tm.getMCSubtargetInfo();
  if (!tm.getTargetTriple().isX86())
    return 128;
  if (sti->checkFeatures("+avx512f"))
    return 512;
  if (sti->checkFeatures("+avx"))
    return 256;
  return 128;
}

unsigned mlir::tessel::fmaDatapathBits(const TargetMachine &tm) {
  unsigned bits = vectorRegisterBits(tm);
  if (bits == 512 && tm.getTargetCPU() == "znver4")
    return 256;
  return bits;
}

bool mlir::tessel::permutesBesideFma(const TargetMachine &tm) {
  return vectorRegisterBits(tm) == 512 && tm.getTargetCPU() == "znver5";
}

void mlir::tessel::optimizeModule(Module &module, TargetMachine &tm,
                                  unsigned optLevel) {
  LoopAnalysisManager lam;
  FunctionAnalysisManager fam;
  CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam; // (mlir has one too)
  PipelineTuningOptions tuning;
  tuning.LoopVectorization = optLevel >= 2;
  tuning.SLPVectorization = optLevel >= 2;
  PassBuilder pb(&tm, tuning);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  OptimizationLevel level = optLevel == 0   ? OptimizationLevel::O0
                            : optLevel == 1 ? OptimizationLevel::O1
                            : optLevel == 2 ? OptimizationLevel::O2
                                            : OptimizationLevel::O3;
  ModulePassManager mpm = optLevel == 0
                              ? pb.buildO0DefaultPipeline(level)
                              : pb.buildPerModuleDefaultPipeline(level);
  mpm.run(module, mam);
}

Error mlir::tessel::writeObjectFile(Module &module, TargetMachine &tm,
                                    StringRef path) {
  std::error_code ec;
  ToolOutputFile out(path, ec, sys::fs::OF_None);
  if (ec)
    return createStringError(ec, "cannot open '" + path + "': " +
                                     ec.message());
  legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, out.os(), nullptr,
                             CodeGenFileType::ObjectFile))
    return createStringError(inconvertibleErrorCode(),
                             "the target cannot emit object files");
  pm.run(module);
  out.keep();
  return Error::success();
}
