//===- HostArtifact.cpp - The host part of every artifact -------------------===//
#include "HostArtifact.h"

#include "Linker.h"
#include "NativeCodegen.h"

#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/ScopeExit.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
using namespace mlir::tessel;

LogicalResult
mlir::tessel::writeTextFile(ModuleOp module, StringRef path,
                            llvm::function_ref<void(raw_ostream &)> print) {
  std::string err;
  std::unique_ptr<llvm::ToolOutputFile> out = openOutputFile(path, &err);
  if (!out)
    return module.emitError() << err;
  print(out->os());
  out->keep();
  return success();
}

LogicalResult mlir::tessel::writeHostArtifact(ModuleOp module,
                                              llvm::TargetMachine &host,
                                              const SerializeOptions &options,
                                              TimingScope &timing) {
  StringRef outputPath = options.outputPath;
  ArrayRef<std::string> archives = options.archives;
  llvm::LLVMContext llvmContext;
  TimingScope translateTiming = timing.nest("Translate to LLVM IR");
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, "tessel_model");
  translateTiming.stop();
  if (!llvmModule)
    return module.emitError() << "translation to LLVM IR failed";
  llvmModule->setTargetTriple(host.getTargetTriple());
  llvmModule->setDataLayout(host.createDataLayout());

  TimingScope optTiming = timing.nest("LLVM optimization");
  optimizeModule(*llvmModule, host, options.optLevel);
  optTiming.stop();
  if (options.emit == EmitKind::LLVM)
    return writeTextFile(module, outputPath, [&](raw_ostream &os) {
      llvmModule->print(os, nullptr);
    });

  TimingScope codegenTiming = timing.nest("Code generation");
  if (options.emit == EmitKind::Object) {
    // ToolOutputFile writes "-" to stdout.
    if (llvm::Error e = writeObjectFile(*llvmModule, host, outputPath))
      return module.emitError() << llvm::toString(std::move(e));
    return success();
  }
  // A temporary file, removed when this function returns.
  llvm::SmallVector<llvm::SmallString<128>, 2> temporaries;
  llvm::scope_exit removeTemporaries([&] {
    for (const llvm::SmallString<128> &path : temporaries)
      llvm::sys::fs::remove(path);
  });
  auto temporaryFile =
      [&](StringRef prefix,
          StringRef suffix) -> FailureOr<llvm::SmallString<128>> {
    llvm::SmallString<128> path;
    if (std::error_code ec =
            llvm::sys::fs::createTemporaryFile(prefix, suffix, path))
      return module.emitError()
             << "cannot create a temporary file: " << ec.message();
    temporaries.push_back(path);
    return path;
  };
  FailureOr<llvm::SmallString<128>> objectPath = temporaryFile("tessel-model", "o");
  if (failed(objectPath))
    return failure();
  if (llvm::Error e = writeObjectFile(*llvmModule, host, *objectPath))
    return module.emitError() << llvm::toString(std::move(e));
  codegenTiming.stop();
  TimingScope linkTiming = timing.nest("Link");
  if (outputPath != "-") {
    if (llvm::Error e = linkSharedLibrary(*objectPath, archives, outputPath))
      return module.emitError() << llvm::toString(std::move(e));
    return success();
  }
  // "-o -": the linker needs a file; link to a temporary one and copy its
  // bytes to stdout (as iree-compile does with its module).
  FailureOr<llvm::SmallString<128>> libraryPath = temporaryFile("tessel-artifact", "so");
  if (failed(libraryPath))
    return failure();
  if (llvm::Error e = linkSharedLibrary(*objectPath, archives, *libraryPath))
    return module.emitError() << llvm::toString(std::move(e));
  auto bytes = llvm::MemoryBuffer::getFile(*libraryPath, /*IsText=*/false,
                                           /*RequiresNullTerminator=*/false);
  if (!bytes)
    return module.emitError() << "cannot read the linked artifact: "
                              << bytes.getError().message();
  return writeTextFile(module, "-", [&](raw_ostream &os) {
    os << (*bytes)->getBuffer();
  });
}
