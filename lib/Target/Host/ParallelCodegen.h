//===- ParallelCodegen.h - LLVM optimization and codegen on threads -*- C++ -*-===//
#ifndef TESSEL_LIB_TARGET_HOST_PARALLELCODEGEN_H
#define TESSEL_LIB_TARGET_HOST_PARALLELCODEGEN_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"
#include "llvm/Target/TargetMachine.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir::tessel {

/// How many parts `module` is compiled in: `requested`, or for 0 one per
/// hardware thread (at most 8), except 1 for a module too small to gain
/// from the split (fewer than 20,000 instructions).
unsigned codegenParts(const llvm::Module &module, unsigned requested);

/// Splits `module` into `parts` modules (llvm::SplitModule: functions and
/// globals spread by size, local symbols made hidden globals) and frees it
/// and its `context`, then optimizes each part at -O`optLevel` and writes
/// its object file on its own thread, in its own LLVMContext, with its own
/// copy of `host`. `objectPath` names a new temporary file for part i.
/// Returns the object files in part order.
llvm::Expected<std::vector<std::string>> compileInParts(
    std::unique_ptr<llvm::LLVMContext> context,
    std::unique_ptr<llvm::Module> module, const llvm::TargetMachine &host,
    unsigned optLevel, unsigned parts,
    llvm::function_ref<llvm::Expected<std::string>(unsigned)> objectPath);

} // namespace mlir::tessel

#endif
