//===- GeneralizeTokenDim.h - static token count -> dynamic -----*- C++ -*-===//
//
// A component imported from a graph with a fixed token count (ONNX, torch)
// has interface `T x D -> T x Do`; an expert of compose.route must accept any
// number of rows (`? x D -> ? x Do`), because the grouped lowering calls it
// on just the tokens routed to it. generalizeTokenDim rewrites such a body
// when it is provably token-wise: every op handles the rows independently
// (elementwise with token-free operands, matmuls by constant-free right
// operands, reshapes and transposes that keep the token dim whole,
// reductions and softmax/layer norm over other dims).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_DIALECT_COMPOSE_TRANSFORMS_GENERALIZETOKENDIM_H
#define TESSEL_DIALECT_COMPOSE_TRANSFORMS_GENERALIZETOKENDIM_H

#include "tessel/Dialect/Compose/IR/ComposeDialect.h"

#include <string>

namespace mlir::tessel::compose {

/// Makes dim 0 of every argument and result of `component` dynamic, retyping
/// its body. All arguments must share one static dim 0 (the token count).
/// On failure the component is unchanged and `why` names the op (with its
/// location) that is not known to treat tokens independently.
LogicalResult generalizeTokenDim(ComponentOp component, std::string &why);

} // namespace mlir::tessel::compose

#endif // TESSEL_DIALECT_COMPOSE_TRANSFORMS_GENERALIZETOKENDIM_H
