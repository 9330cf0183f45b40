//===- HostArtifact.h - The host part of every artifact ---------*- C++ -*-===//
//
// Every target's artifact is a shared library of host code (the CPU
// target's kernels are host code; a GPU target's host code launches its
// kernels): translated to LLVM IR, optimized for the host CPU, emitted as an
// object and linked with the target's archives.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_TARGET_HOST_HOSTARTIFACT_H
#define TESSEL_LIB_TARGET_HOST_HOSTARTIFACT_H

#include "tessel/Target/TargetBackend.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::tessel {

/// Writes `path` ("-": stdout) with `print`.
LogicalResult writeTextFile(ModuleOp module, llvm::StringRef path,
                            llvm::function_ref<void(llvm::raw_ostream &)> print);

/// The LLVM-dialect `module` as `options.emit` says: optimized LLVM IR, an
/// object, or the artifact (the object linked with `options.archives`).
LogicalResult writeHostArtifact(ModuleOp module, llvm::TargetMachine &host,
                                const SerializeOptions &options,
                                TimingScope &timing);

} // namespace mlir::tessel

#endif // TESSEL_LIB_TARGET_HOST_HOSTARTIFACT_H
