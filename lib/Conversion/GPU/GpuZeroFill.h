//===- GpuZeroFill.h - The zero init a product kernel can fold -*- C++ -*-===//
//
// A contraction accumulates into its output, which bufferization zeroes
// with a `linalg.fill` just before: a kernel that knows it may store its
// sums instead (and the fill, a kernel of its own, goes). Shared by the
// tiled, tensor-core and Hopper kernels of tessel-gpu-tile-matmul.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_CONVERSION_GPU_GPUZEROFILL_H
#define TESSEL_LIB_CONVERSION_GPU_GPUZEROFILL_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::tessel {

/// The `linalg.fill` of zero into `out` (the same value) that `op` follows
/// with only ops that touch no memory between them, or null.
inline linalg::FillOp zeroFillBefore(Operation *op, Value out) {
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    if (auto fill = dyn_cast<linalg::FillOp>(prev)) {
      Value v = fill.getInputs()[0];
      if (fill.getOutputs()[0] == out &&
          (matchPattern(v, m_AnyZeroFloat()) || matchPattern(v, m_Zero())))
        return fill;
      return {};
    }
    if (!isMemoryEffectFree(prev))
      return {};
  }
  return {};
}

} // namespace mlir::tessel

#endif
