//===- NativeCodegen.h - LLVM IR to optimized object code -------*- C++ -*-===//
#ifndef TESSEL_LIB_TARGET_HOST_NATIVECODEGEN_H
#define TESSEL_LIB_TARGET_HOST_NATIVECODEGEN_H

#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"
#include "llvm/Target/TargetMachine.h"

#include <memory>
#include <string>

namespace mlir::tessel {

/// A target machine for `triple` (empty: host) and `cpu` ("native": the
/// host CPU with its detected features). Errors on unknown targets/CPUs.
llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(const std::string &triple, const std::string &cpu,
                    unsigned optLevel);

/// The instruction-set extensions of the target CPU that the runtime can
/// check (include/tessel/Runtime/CpuFeatures.def), comma-separated; empty
/// for a target other than x86.
std::string requiredCpuFeatures(const llvm::TargetMachine &tm);

/// The widest vector register the target's features allow, in bits:
/// 512 (AVX-512), 256 (AVX), else 128.
unsigned vectorRegisterBits(const llvm::TargetMachine &tm);

/// The width of the target CPU's FMA datapath in bits, which sets how fast
/// its widest FMAs run against its loads: AMD Zen 4 (znver4) runs AVX-512
/// on 256-bit units, a 512-bit FMA in two halves; every other CPU is taken
/// at its vector width (Intel's AVX-512 servers and Zen 5 run it at full
/// width).
unsigned fmaDatapathBits(const llvm::TargetMachine &tm);

/// Whether the target's 512-bit permutes run beside its FMAs rather than
/// taking an FMA's slot (AMD Zen 5: 8 FMAs and 8 vpermps in 1.35x the
/// time of the FMAs alone; Intel's share port 5 with an FMA unit), which
/// the N:M lane-order sparse kernel needs to pay (docs/sparsity.md).
bool permutesBesideFma(const llvm::TargetMachine &tm);

/// Runs LLVM's standard -O<optLevel> pipeline on `module`.
void optimizeModule(llvm::Module &module, llvm::TargetMachine &tm,
                    unsigned optLevel);

/// Writes `module` as an object file to `path`.
llvm::Error writeObjectFile(llvm::Module &module, llvm::TargetMachine &tm,
                            llvm::StringRef path);

} // namespace mlir::tessel

#endif
