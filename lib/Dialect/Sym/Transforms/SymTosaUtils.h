//===- SymTosaUtils.h - TOSA building blocks for sym rewrites ---*- C++ -*-===//
//
// Shared by tessel-lower-sym and tessel-simplify-sym: reshapes that work
// with dynamic sizes, and the nearest-codeword scores of sym.quantize.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_DIALECT_SYM_TRANSFORMS_SYMTOSAUTILS_H
#define TESSEL_LIB_DIALECT_SYM_TRANSFORMS_SYMTOSAUTILS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir::tessel::sym {

/// The sizes of ranked tensor `v` (constants where static, tensor.dim
/// otherwise).
SmallVector<OpFoldResult> mixedSizes(OpBuilder &b, Location loc, Value v);

/// The product of `sizes` (arith.muli on index values if any is dynamic).
OpFoldResult product(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes);

/// `v` reshaped (row-major, same element count) to `sizes`. Static shapes
/// use tosa.reshape; dynamic ones go through a 1-D tensor with
/// tensor.collapse_shape + tensor.expand_shape, since tosa.reshape's shape
/// is a constant with at most one inferred size.
Value reshape(OpBuilder &b, Location loc, Value v,
              ArrayRef<OpFoldResult> sizes);

/// The nearest-codeword scores of sym.quantize, `[1, M, V]` f32:
/// `scores[0, m, j] = x[m] . c[j] - |c[j]|^2 / 2`, where `x` is the input
/// flattened to `[1, M, D]` and widened to f32, `codebookT` is the
/// `[1, D, V]` f32 transposed codebook and `halfNorms` is `[1, 1, V]` f32.
/// `argmax_j scores = argmin_j |x - c[j]|^2`: the two differ by `|x|^2 / 2`,
/// constant per row, and a factor -1/2.
Value nearestCodewordScores(OpBuilder &b, Location loc, Value input,
                            Value codebookT, Value halfNorms);

} // namespace mlir::tessel::sym

#endif // TESSEL_LIB_DIALECT_SYM_TRANSFORMS_SYMTOSAUTILS_H
