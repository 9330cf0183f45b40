//===- ModelLoader.h - Read, check and shape-infer an ONNX model -*- C++ -*-===//
#ifndef TESSEL_LIB_IMPORTERS_ONNX_MODELLOADER_H
#define TESSEL_LIB_IMPORTERS_ONNX_MODELLOADER_H

#include "tessel/Importers/ONNX/ONNXImporter.h"

#include "onnx/onnx_pb.h"

#include <string>

namespace mlir::tessel::onnx_import {

/// The domain of ONNX's training operators.
inline constexpr llvm::StringLiteral kTrainingDomain = "ai.onnx.preview.training";

struct LoadedModel {
  onnx::ModelProto model;
  /// Opset of the default ("" / "ai.onnx") domain.
  int64_t opset = 0;
  /// Opset of ai.onnx.preview.training (its optimizers), 0 when not imported.
  int64_t trainingOpset = 0;
  /// Set when a non-fatal step (shape inference) was skipped.
  std::string warning;
};

/// Reads `path` (external data relative to its folder), applies --shape
/// pins, runs the ONNX checker and shape inference (with data propagation).
/// On failure returns false and sets `error` to a message naming the file.
bool loadModel(llvm::StringRef path, const ImportOptions &options,
               LoadedModel &out, std::string &error);

/// The same for a serialized ModelProto already in memory: `path` names it
/// in messages, external data is looked up relative to `dir` (empty: the
/// current directory).
bool loadModelBytes(llvm::StringRef bytes, llvm::StringRef path,
                    llvm::StringRef dir, const ImportOptions &options,
                    LoadedModel &out, std::string &error);

} // namespace mlir::tessel::onnx_import

#endif
