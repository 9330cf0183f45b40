//===- ExternalWeights.h - Weights next to the LLVM IR, not in it -*- C++ -*-===//
#ifndef TESSEL_LIB_TARGET_HOST_EXTERNALWEIGHTS_H
#define TESSEL_LIB_TARGET_HOST_EXTERNALWEIGHTS_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace mlir::tessel {

/// Constant globals of at least this many bytes leave the LLVM IR.
constexpr int64_t kMinExternalWeightBytes = 16 * 1024;

/// Moves the data of every large constant `llvm.mlir.global` of the
/// LLVM-dialect `module` (dense integer or float elements, at least
/// kMinExternalWeightBytes) out of the IR: the bytes go to the file
/// `dataPath`, an assembly file `asmPath` defines each global in .rodata
/// with `.incbin` of its bytes (hidden, aligned as the global was and to at
/// least 64 bytes), and the
/// global becomes a hidden external declaration. LLVM then neither copies,
/// optimizes nor emits the weights, and the assembler streams them from
/// the file. Returns false, writing nothing, if no global qualifies.
FailureOr<bool> externalizeWeights(ModuleOp module, llvm::StringRef dataPath,
                                   llvm::StringRef asmPath);

} // namespace mlir::tessel

#endif
