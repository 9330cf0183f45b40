//===- FloatCast.h - elementwise float casts of tensors ---------*- C++ -*-===//
//
// The bf16 passes (ComputeInBF16.cpp, ConvertToKernels.cpp) round tensors
// to bf16 and widen them back with the same elementwise linalg.generic.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_DIALECT_TESSEL_TRANSFORMS_FLOATCAST_H
#define TESSEL_DIALECT_TESSEL_TRANSFORMS_FLOATCAST_H

#include "mlir/IR/Builders.h"

namespace mlir::tessel {

/// `v` (a ranked float tensor) with every element converted to `to`: an
/// all-parallel linalg.generic of `arith.truncf` (to a narrower type,
/// nearest even) or `arith.extf` (to a wider one).
Value castFloatElements(OpBuilder &b, Location loc, Value v, FloatType to);

} // namespace mlir::tessel

#endif // TESSEL_DIALECT_TESSEL_TRANSFORMS_FLOATCAST_H
