//===- DeferredWeights.h - Large initializers copied once -------*- C++ -*-===//
//
// MLIR never frees an attribute: a weight imported as a DenseElementsAttr
// and then reshaped or transposed by a folder (a MatMul's [K,N] -> [1,K,N],
// a Conv's OIHW -> OHWI) stays alive twice. ViT-B/16's 346 MB of weights
// cost 0.3 GB more this way, compile time and peak memory both.
//
// So large initializers are imported as placeholders: tosa.const ops whose
// dense_resource attribute aliases the ONNX tensor's bytes (no copy). When
// the graph has been imported, each placeholder whose only user is a chain
// of tosa.reshape / tosa.transpose ops becomes one constant of the chain's
// result, built from the ONNX bytes in a single copy; every other becomes
// the same DenseElementsAttr an eager import makes. A converter that asks
// for a placeholder's contents (NodeContext::constantInput) gets them at
// once, as before. The module never keeps an alias: after finalize() (and
// on every error path, in the destructor) no attribute points into the
// ONNX model, which is freed after the import.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_IMPORTERS_ONNX_DEFERREDWEIGHTS_H
#define TESSEL_LIB_IMPORTERS_ONNX_DEFERREDWEIGHTS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/MapVector.h"

#include "onnx/onnx_pb.h"

namespace mlir::tessel::onnx_import {

class DeferredWeights {
public:
  /// Initializers with fewer raw bytes than `minBytes` are imported at
  /// once (ImportOptions::deferredWeightMinBytes): the saving is in the
  /// large weights, and small ones feed shape arithmetic.
  explicit DeferredWeights(size_t minBytes) : minBytes(minBytes) {}
  DeferredWeights(const DeferredWeights &) = delete;
  DeferredWeights &operator=(const DeferredWeights &) = delete;
  ~DeferredWeights() { releaseAll(); }

  /// A placeholder constant for `t` (of `type`, already checked against
  /// the tensor's bytes), or null when `t` is imported eagerly (small, not
  /// raw little-endian bytes, bool, or unaligned).
  Value create(OpBuilder &b, Location loc, const onnx::TensorProto &t,
               RankedTensorType type);
  /// Whether `v` is a placeholder not materialized yet.
  bool isDeferred(Value v) const;
  /// The contents of placeholder `v`, now materialized in place; null when
  /// `v` is not a placeholder.
  DenseElementsAttr materialize(Value v);
  /// Folds each placeholder's reshape/transpose chain into one constant
  /// and materializes the rest; afterwards nothing aliases the ONNX model.
  void finalize();

private:
  struct Entry {
    const onnx::TensorProto *tensor;
    DenseResourceElementsAttr alias;
  };
  void release(Entry &e);
  void releaseAll();

  size_t minBytes;
  llvm::MapVector<Operation *, Entry> placeholders;
};

} // namespace mlir::tessel::onnx_import

#endif // TESSEL_LIB_IMPORTERS_ONNX_DEFERREDWEIGHTS_H
