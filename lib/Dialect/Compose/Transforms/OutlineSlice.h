//===- OutlineSlice.h - a slice of a function as a component ---*- C++ -*-===//
//
// tessel-raise-moe outlines each expert of a mixture into a component, and
// its densify step outlines a candidate expert to test it the same way.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_DIALECT_COMPOSE_TRANSFORMS_OUTLINESLICE_H
#define TESSEL_LIB_DIALECT_COMPOSE_TRANSFORMS_OUTLINESLICE_H

#include "tessel/Dialect/Compose/IR/ComposeDialect.h"

namespace mlir::tessel::compose {

/// A new `compose.component @name(x) -> y` at `b`'s insertion point (in a
/// module) computing `y` as `ops` do (in order, every operand either `x`,
/// a result of an earlier op of `ops` or a constant, which is copied).
ComponentOp outlineSlice(OpBuilder &b, Location loc, StringRef name,
                         ArrayRef<Operation *> ops, Value x, Value y);

} // namespace mlir::tessel::compose

#endif // TESSEL_LIB_DIALECT_COMPOSE_TRANSFORMS_OUTLINESLICE_H
