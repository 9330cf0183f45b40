//===- FuzzOnnx.cpp - libFuzzer target: ONNX bytes through the importer ---===//
//
// Any bytes as a serialized ModelProto (tessel-compile M.onnx, the Python
// package's tessel.compile(bytes)): the importer must reject what is not a
// model it can import with diagnostics, never crash, hang or allocate
// without bound, and what it imports must verify.
//
//===----------------------------------------------------------------------===//
#include "CompilerFuzzContext.h"

#include "tessel/Importers/ONNX/ONNXImporter.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"

#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::unique_ptr<mlir::MLIRContext> context = tessel_fuzz::newContext();
  mlir::tessel::onnx_import::ImportOptions options;
  // Every initializer with raw bytes takes the placeholder path (inputs are
  // at most 64 KiB, the default threshold).
  options.deferredWeightMinBytes = 1;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::tessel::onnx_import::importONNXBuffer(
          context.get(), llvm::StringRef(reinterpret_cast<const char *>(data), size),
          "fuzz.onnx", options);
  // Imported IR that does not verify is an importer bug.
  if (module && mlir::failed(mlir::verify(*module)))
    std::abort();
  return 0;
}
