//===- CompilerFuzzContext.h - an MLIRContext for compiler fuzz targets ---===//
//
// A new context per input, as each tessel-compile run has: no state carries
// from one input to the next, so every crash reproduces from its input
// alone, and memory does not grow over a long run. Dialects are registered,
// not loaded: the parser and importer load the ones an input names, which
// keeps a run at thousands of inputs per second. Diagnostics are swallowed
// (a rejected input is the expected outcome, not news).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_TEST_FUZZ_COMPILERFUZZCONTEXT_H
#define TESSEL_TEST_FUZZ_COMPILERFUZZCONTEXT_H

#include "tessel/InitAll.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"

#include <memory>

namespace tessel_fuzz {

inline std::unique_ptr<mlir::MLIRContext> newContext() {
  static const mlir::DialectRegistry *registry = [] {
    auto *r = new mlir::DialectRegistry();
    mlir::tessel::registerAllDialects(*r);
    return r;
  }();
  auto context = std::make_unique<mlir::MLIRContext>(
      *registry, mlir::MLIRContext::Threading::DISABLED);
  context->getDiagEngine().registerHandler(
      [](mlir::Diagnostic &) { return mlir::success(); });
  return context;
}

} // namespace tessel_fuzz

#endif
