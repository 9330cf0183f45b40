//===- QuantizedMatmulToKernel.h - int8 matmuls -> tessel.packed_matmul_i8 -===//
#ifndef TESSEL_DIALECT_TESSEL_TRANSFORMS_QUANTIZEDMATMULTOKERNEL_H
#define TESSEL_DIALECT_TESSEL_TRANSFORMS_QUANTIZEDMATMULTOKERNEL_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::tessel {

/// i8 x i8 -> i32 batch matmuls with constant weights
/// (linalg.quantized_batch_matmul, linalg.batch_matmul) become
/// tessel.packed_matmul_i8, the weights packed at compile time in panels of
/// `nr` columns.
void populateQuantizedMatmulToKernelPatterns(RewritePatternSet &patterns,
                                             int64_t nr);

} // namespace mlir::tessel

#endif
