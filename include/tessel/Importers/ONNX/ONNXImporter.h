//===- ONNXImporter.h - ONNX model -> Tessel model-level IR -----*- C++ -*-===//
//
// Loads an .onnx file with Debian's libonnx (protobuf), runs the ONNX checker
// and shape inference, and maps every node to Tessel's model-level IR
// (TOSA + tessel + math/arith on tensors). See docs/importers/onnx.md.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_IMPORTERS_ONNX_ONNXIMPORTER_H
#define TESSEL_IMPORTERS_ONNX_ONNXIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include <string>

namespace mlir::tessel::onnx_import {

struct ImportOptions {
  /// Input name -> static shape; pins symbolic ("N") or unknown dims.
  llvm::StringMap<llvm::SmallVector<int64_t>> shapes;
  /// Input name -> .npy file: the input becomes a compile-time constant
  /// (specializes the model, e.g. for shape operands fed as graph inputs).
  llvm::StringMap<std::string> boundInputs;
  /// Name of the entry function.
  std::string entryName = "main";
  /// Recognize top-k gated mixtures of experts and import them as
  /// compose.route over one component per expert (docs/importers/onnx.md).
  bool raiseMixtureOfExperts = true;
  /// Initializers with at least this many raw bytes are copied out of the
  /// model once, in the layout their users read (DeferredWeights.h). Tests
  /// and the fuzz target lower it to send every initializer that way.
  size_t deferredWeightMinBytes = 64 * 1024;
};

/// Parses a `--bind-input` value: "name=@file.npy".
LogicalResult parseBindOption(llvm::StringRef text, ImportOptions &options,
                              std::string &error);

/// Parses `--shape` values: "name:1x3x224x224" (several separated by ',').
LogicalResult parseShapeOption(llvm::StringRef text, ImportOptions &options,
                               std::string &error);

/// True if `path` looks like an ONNX model (by extension).
bool isONNXPath(llvm::StringRef path);

/// Imports the model at `path` into a new module. Errors (unreadable or
/// malformed files, checker and shape-inference failures, unsupported ops
/// or attributes with node name, op type, opset and attribute) are reported
/// as diagnostics on `context` and yield a null module.
OwningOpRef<ModuleOp> importONNXFile(MLIRContext *context,
                                     llvm::StringRef path,
                                     const ImportOptions &options);

/// Imports a serialized ModelProto held in memory (the Python package's
/// door: torch.fx exports and onnx.ModelProto objects); `name` stands for
/// the file name in locations and messages. External data, if any, is read
/// relative to the current directory.
OwningOpRef<ModuleOp> importONNXBuffer(MLIRContext *context,
                                       llvm::StringRef bytes,
                                       llvm::StringRef name,
                                       const ImportOptions &options);

} // namespace mlir::tessel::onnx_import

#endif // TESSEL_IMPORTERS_ONNX_ONNXIMPORTER_H
