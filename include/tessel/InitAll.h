//===- InitAll.h - Register everything Tessel's tools use -------*- C++ -*-===//
//
// One place that lists the dialects, passes and pipelines tessel-opt,
// tessel-compile and the Python bindings register, so the three agree.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_INITALL_H
#define TESSEL_INITALL_H

namespace mlir {
class DialectRegistry;
}

namespace mlir::tessel {

/// Upstream dialects (+ their interface/extension implementations) and
/// Tessel's own dialects.
void registerAllDialects(DialectRegistry &registry);
/// Upstream passes, Tessel's passes and Tessel's named pipelines.
void registerAllPasses();
/// LLVM IR translations needed to go from the LLVM dialect to llvm::Module.
void registerAllTranslations(DialectRegistry &registry);

} // namespace mlir::tessel

#endif // TESSEL_INITALL_H
