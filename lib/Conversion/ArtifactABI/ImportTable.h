//===- ImportTable.h - the import table of an artifact ----------*- C++ -*-===//
#ifndef TESSEL_LIB_CONVERSION_ARTIFACTABI_IMPORTTABLE_H
#define TESSEL_LIB_CONVERSION_ARTIFACTABI_IMPORTTABLE_H

#include "mlir/IR/BuiltinOps.h"

namespace mlir::tessel {

/// Artifact-internal thread-locals that carry state from a running entry to
/// its import calls: the entry's invoke context, and the first import
/// failure (which the entry returns).
inline constexpr llvm::StringLiteral kContextGlobal = "__tessel_invoke_context";
inline constexpr llvm::StringLiteral kStatusGlobal = "__tessel_import_status";

/// With `numImports` > 0: the exported table TESSEL_IMPORTS_SYMBOL, the
/// two thread-locals, and the body of `__tessel_call_import` if the module
/// declares it. Without imports, a declared helper is an error. The
/// thread-locals and the body of `__tessel_set_status` also come with a
/// declaration of that helper (run-time shape guards). Returns whether
/// entries must return the status thread-local.
FailureOr<bool> emitImportTable(ModuleOp module, size_t numImports);

} // namespace mlir::tessel

#endif // TESSEL_LIB_CONVERSION_ARTIFACTABI_IMPORTTABLE_H
