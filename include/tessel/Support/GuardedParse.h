//===- GuardedParse.h - MLIR's parser, its crashes caught --------*- C++ -*-===//
//
// Upstream MLIR 22's parser crashes on some malformed text instead of
// reporting it (e.g. `linalg.transpose ... permutation = [1,, 0]`: the op's
// parser sets a null attribute after its own error; mlir-opt crashes too;
// found by test/fuzz/FuzzMlirText.cpp). The compiler's front doors parse
// user text through this guard: a crash on the parsing thread is caught
// (llvm::CrashRecoveryContext) and becomes an error, after the diagnostics
// the parser printed before it.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_SUPPORT_GUARDEDPARSE_H
#define TESSEL_SUPPORT_GUARDEDPARSE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/SourceMgr.h"

namespace mlir::tessel {

/// The message for a crash of the parser on `name`.
std::string parserCrashMessage(llvm::StringRef name);

/// parseSourceFile<ModuleOp>(sourceMgr, context), with a crash inside it
/// caught: then `crashed` is set, the result is null, and `context` may hold
/// half-built state (the caller reports parserCrashMessage and should not
/// destroy or reuse the context).
OwningOpRef<ModuleOp> parseModuleGuarded(llvm::SourceMgr &sourceMgr,
                                         MLIRContext *context, bool &crashed);

} // namespace mlir::tessel

#endif
