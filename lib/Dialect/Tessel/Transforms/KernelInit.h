//===- KernelInit.h - what a kernel op makes of a contraction's init -----===//
//
// tosa-to-linalg gives each conv/matmul an init that is either a zero fill
// or a per-output-channel bias broadcast; the kernel ops (packed_conv2d,
// sparse_matmul) take the bias as an operand and write their output
// instead. Shared by tessel-convert-to-kernels and
// tessel-sparsify-weights.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_DIALECT_TESSEL_TRANSFORMS_KERNELINIT_H
#define TESSEL_DIALECT_TESSEL_TRANSFORMS_KERNELINIT_H

#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace mlir::tessel {

/// What the kernel needs to know about a contraction's `init`.
struct InitEpilogue {
  Value init;      // the op's new init
  Value bias;      // 1-D per-output-channel bias, or null
  bool accumulate; // whether `init`'s values are added
};

/// Recognizes the two inits tosa-to-linalg builds for conv/matmul: a fill
/// with zero and a broadcast of a 1-D bias along the last dimension. Either
/// way the old init is write-only for the kernel. Anything else is added
/// (accumulate).
InitEpilogue analyzeInit(Value init);

/// When `input` is a zero tensor.pad of H and W only, by static amounts
/// (what tosa-to-linalg puts before a padded convolution): the amounts
/// [top, bottom, left, right], and `input` becomes the pad's source, for a
/// kernel that pads implicitly. Otherwise none, `input` unchanged.
std::optional<llvm::SmallVector<int64_t>> absorbZeroPad(Value &input);

} // namespace mlir::tessel

#endif // TESSEL_DIALECT_TESSEL_TRANSFORMS_KERNELINIT_H
