//===- GuardedParse.cpp - MLIR's parser, its crashes caught ---------------===//
#include "tessel/Support/GuardedParse.h"

#include "mlir/Parser/Parser.h"
#include "llvm/Support/CrashRecoveryContext.h"

using namespace mlir;

std::string mlir::tessel::parserCrashMessage(llvm::StringRef name) {
  return ("cannot parse '" + name +
          "': MLIR's parser crashed on this malformed input (an upstream "
          "defect; the diagnostics before this locate the text)")
      .str();
}

OwningOpRef<ModuleOp>
mlir::tessel::parseModuleGuarded(llvm::SourceMgr &sourceMgr,
                                 MLIRContext *context, bool &crashed) {
  llvm::CrashRecoveryContext::Enable();
  llvm::CrashRecoveryContext recovery;
  ModuleOp parsed;
  crashed = !recovery.RunSafely([&] {
    parsed = parseSourceFile<ModuleOp>(sourceMgr, context).release();
  });
  if (crashed)
    return {};
  return OwningOpRef<ModuleOp>(parsed);
}
