//===- SizeNames.h - symbolic names of run-time sizes -----------*- C++ -*-===//
//
// A run-time size is named where it is provably a graph input's named
// dimension (ONNX dim_param, `tessel.dim_names` on the function's
// arguments): equal names are equal sizes on every call that has not
// failed. The ONNX importer uses them to keep sizes static and to type
// reshapes; tessel-check-broadcasts to check two sizes of one name for
// equality rather than for broadcasting.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_DIALECT_TESSEL_UTILS_SIZENAMES_H
#define TESSEL_DIALECT_TESSEL_UTILS_SIZENAMES_H

#include "mlir/IR/Value.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir::tessel {

/// The attribute naming the entries of a Shape's tensor.from_elements, and
/// the dimensions of a run-time Reshape's result.
inline constexpr llvm::StringLiteral kSizeNamesAttr = "tessel.size_names";

/// The symbolic name of dimension `d` of `v` where it is provably a graph
/// input's named dimension (followed through elementwise ops, convolutions
/// and pooling, transposes, concatenations, reductions, slices, matmuls,
/// checks, and reshapes that recorded their names), else empty. Equal
/// names are equal sizes.
std::string sizeNameOf(Value v, int64_t d);
/// The same for the index (or integer) scalar `size`: a `tensor.dim`.
std::string sizeNameOf(Value size);

} // namespace mlir::tessel

#endif
