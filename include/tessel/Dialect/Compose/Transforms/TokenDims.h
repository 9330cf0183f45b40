//===- TokenDims.h - the token dimension of a component interface -*- C++ -*-===//
//
// A component's interface may leave its token dimension dynamic (`?`): a
// route expert runs on however many tokens reach it. Every `?` of one
// interface is that one token dimension, one run-time size for all of its
// arguments and results. When such an interface crosses the artifact ABI
// (a component compiled on its own, or imported from another artifact) the
// manifest names that size `T`.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_DIALECT_COMPOSE_TRANSFORMS_TOKENDIMS_H
#define TESSEL_DIALECT_COMPOSE_TRANSFORMS_TOKENDIMS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::tessel::compose {

/// The manifest name of a component's token dimension.
inline constexpr llvm::StringLiteral kTokenDimName = "T";

/// Tags every argument and result of `fn` (a component turned into an entry
/// point or an import declaration) that has a dynamic dimension with
/// `tessel.dim_names`, naming each `?` the token dimension. Fails, with an
/// error at `fn`, when a result is dynamic but no argument is: the caller
/// could not know the result's size.
LogicalResult nameTokenDims(func::FuncOp fn);

} // namespace mlir::tessel::compose

#endif // TESSEL_DIALECT_COMPOSE_TRANSFORMS_TOKENDIMS_H
