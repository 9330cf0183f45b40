//===- GpuWgmmaMatmul.h - 16-bit matmuls on Hopper's TMA and wgmma -*- C++ -*-===//
//
// Part of tessel-gpu-tile-matmul (option `wgmma`): the Hopper kernel for
// matmuls whose operands are f16 in memory.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_CONVERSION_GPU_GPUWGMMAMATMUL_H
#define TESSEL_LIB_CONVERSION_GPU_GPUWGMMAMATMUL_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::tessel {

/// Replaces `op` (a linalg.matmul or linalg.batch_matmul on buffers, default
/// indexing maps, f16 operands) by a TMA + wgmma kernel and returns
/// true; returns false, changing nothing, when the op is not one the kernel
/// computes (other types, layouts or alignments).
bool rewriteAsWgmmaGemm(linalg::LinalgOp op);

} // namespace mlir::tessel

#endif
