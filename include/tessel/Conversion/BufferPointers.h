//===- BufferPointers.h - memrefs handed to C as raw pointers ---*- C++ -*-===//
//
// Calls that leave MLIR (another artifact's entry, the MPI runtime part)
// take a buffer as the address of its first element and walk it densely.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_CONVERSION_BUFFERPOINTERS_H
#define TESSEL_CONVERSION_BUFFERPOINTERS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir::tessel {

/// Whether the elements of a `type` buffer are dense and row-major from
/// its first element on (any offset; a dynamic size only where no stride
/// depends on it).
bool isContiguousRowMajor(MemRefType type);

/// A new dense row-major buffer of `memref`'s shape and element type (its
/// dynamic sizes read from `memref`), for a strided buffer's copy.
Value allocDenseLike(OpBuilder &b, Location loc, Value memref);

/// `!llvm.ptr` to the first element of a contiguous buffer.
Value firstElement(OpBuilder &b, Location loc, Value memref);

} // namespace mlir::tessel

#endif // TESSEL_CONVERSION_BUFFERPOINTERS_H
