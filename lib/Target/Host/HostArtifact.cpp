//===- HostArtifact.cpp - The host part of every artifact -------------------===//
#include "HostArtifact.h"

#include "Linker.h"
#include "NativeCodegen.h"
#include "ExternalWeights.h"
#include "ParallelCodegen.h"

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
  // Temporary files, removed when this function returns.
  llvm::SmallVector<std::string, 2> temporaries;
  llvm::scope_exit removeTemporaries([&] {
    for (const std::string &path : temporaries)
      llvm::sys::fs::remove(path);
  });
  auto temporaryFile = [&](StringRef prefix,
                           StringRef suffix) -> llvm::Expected<std::string> {
    llvm::SmallString<128> path;
    if (std::error_code ec =
            llvm::sys::fs::createTemporaryFile(prefix, suffix, path))
      return llvm::createStringError(
          ec, "cannot create a temporary file: " + ec.message());
    temporaries.push_back(path.str().str());
    return temporaries.back();
  };
  // What the shared library links: the model's objects, and the weights.
  std::vector<std::string> objects;

  // The library's weights bypass LLVM (an object or .ll file stays whole).
  if (options.emit == EmitKind::Library) {
    TimingScope weightsTiming = timing.nest("Write weights");
    llvm::Expected<std::string> dataPath = temporaryFile("tessel-weights", "bin");
    if (!dataPath)
      return module.emitError() << llvm::toString(dataPath.takeError());
    llvm::Expected<std::string> asmPath = temporaryFile("tessel-weights", "s");
    if (!asmPath)
      return module.emitError() << llvm::toString(asmPath.takeError());
    FailureOr<bool> moved = externalizeWeights(module, *dataPath, *asmPath);
    if (failed(moved))
      return failure();
    if (*moved)
      objects.push_back(*asmPath);
  }

  auto llvmContext = std::make_unique<llvm::LLVMContext>();
  TimingScope translateTiming = timing.nest("Translate to LLVM IR");
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, *llvmContext, "tessel_model");
  translateTiming.stop();
  if (!llvmModule)
    return module.emitError() << "translation to LLVM IR failed";
  llvmModule->setTargetTriple(host.getTargetTriple());
  llvmModule->setDataLayout(host.createDataLayout());

  // A large module is optimized and compiled in parts, on threads.
  unsigned parts = options.emit == EmitKind::Library
                       ? codegenParts(*llvmModule, options.codegenThreads)
                       : 1;
  if (parts > 1) {
    TimingScope partsTiming =
        timing.nest("LLVM optimization and code generation, in parts");
    llvm::Expected<std::vector<std::string>> compiled = compileInParts(
        std::move(llvmContext), std::move(llvmModule), host,
        options.optLevel, parts,
        [&](unsigned) { return temporaryFile("tessel-model", "o"); });
    if (!compiled)
      return module.emitError() << llvm::toString(compiled.takeError());
    objects.insert(objects.end(), compiled->begin(), compiled->end());
  } else {
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
    llvm::Expected<std::string> objectPath =
        temporaryFile("tessel-model", "o");
    if (!objectPath)
      return module.emitError() << llvm::toString(objectPath.takeError());
    if (llvm::Error e = writeObjectFile(*llvmModule, host, *objectPath))
      return module.emitError() << llvm::toString(std::move(e));
    objects.push_back(*objectPath);
  }
  TimingScope linkTiming = timing.nest("Link");
  if (outputPath != "-") {
    if (llvm::Error e = linkSharedLibrary(objects, archives, outputPath))
      return module.emitError() << llvm::toString(std::move(e));
    return success();
  }
  // "-o -": the linker needs a file; link to a temporary one and copy its
  // bytes to stdout (as iree-compile does with its module).
  llvm::Expected<std::string> libraryPath =
      temporaryFile("tessel-artifact", "so");
  if (!libraryPath)
    return module.emitError() << llvm::toString(libraryPath.takeError());
  if (llvm::Error e = linkSharedLibrary(objects, archives, *libraryPath))
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
