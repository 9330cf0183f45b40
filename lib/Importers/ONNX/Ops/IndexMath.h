//===- IndexMath.h - IndexMath at an ONNX node ------------------*- C++ -*-===//
//
// tessel/Dialect/Tessel/Utils/IndexMath.h's arithmetic, built at the node
// being converted.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_IMPORTERS_ONNX_OPS_INDEXMATH_H
#define TESSEL_LIB_IMPORTERS_ONNX_OPS_INDEXMATH_H

#include "../NodeContext.h"
#include "tessel/Dialect/Tessel/Utils/IndexMath.h"

namespace mlir::tessel::onnx_import {

/// Scalar index (and i1) arithmetic at the node's location.
class IndexMath : public tessel::IndexMath {
public:
  using tessel::IndexMath::IndexMath;
  explicit IndexMath(NodeContext &ctx)
      : tessel::IndexMath(ctx.builder(), ctx.loc()) {}
};

using tessel::required;

} // namespace mlir::tessel::onnx_import

#endif
