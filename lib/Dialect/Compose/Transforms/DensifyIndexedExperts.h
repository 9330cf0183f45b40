//===- DensifyIndexedExperts.h - index_select MoE -> dense -----*- C++ -*-===//
//
// The first step of tessel-raise-moe for mixtures that route with indices
// (DensifyIndexedExperts.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_DIALECT_COMPOSE_TRANSFORMS_DENSIFYINDEXEDEXPERTS_H
#define TESSEL_LIB_DIALECT_COMPOSE_TRANSFORMS_DENSIFYINDEXEDEXPERTS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::tessel::compose {

/// Rewrites each expert of `fn` that runs on the rows of its tokens,
/// gathered by the positions where the top-k indices name it and summed
/// back into zeros, into the dense term `gate * expert(x)` the raiser
/// reads. Returns how many it rewrote.
int densifyIndexedExperts(func::FuncOp fn);

} // namespace mlir::tessel::compose

#endif // TESSEL_LIB_DIALECT_COMPOSE_TRANSFORMS_DENSIFYINDEXEDEXPERTS_H
