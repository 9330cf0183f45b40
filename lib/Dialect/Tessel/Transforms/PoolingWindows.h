//===- PoolingWindows.h - pooling as a reduction over a window view -*- C++
//-*-===//
//
// A sliding-window pooling op on buffers rewritten so that
// tessel-vectorize-linalg can tile and vectorize it like any reduction over
// outer dimensions.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_DIALECT_TESSEL_TRANSFORMS_POOLINGWINDOWS_H
#define TESSEL_DIALECT_TESSEL_TRANSFORMS_POOLINGWINDOWS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tessel {

/// If `op` is a `linalg.pooling_nhwc_{max,min,sum}` on buffers whose input
/// has a static strided layout, replaces it by a `linalg.generic` over
/// (n, oh, ow, kh, kw, c) that reads an N x OH x KH x OW x KW x C view of
/// the input (`memref.reinterpret_cast` with the strides
/// [sn, stride_h * sh, dil_h * sh, stride_w * sw, dil_w * sw, sc]: the
/// windows overlap in memory, no copy) and combines into the output with
/// the pooling op's own body: every indexing map a projected permutation,
/// the window a reduction over outer dimensions, the channels innermost.
/// The same values combine in the same order as the pooling op's loops.
/// Returns the generic, or failure (nothing changed).
FailureOr<linalg::GenericOp> poolingAsWindowReduction(RewriterBase &rewriter,
                                                      linalg::LinalgOp op);

} // namespace mlir::tessel

#endif // TESSEL_DIALECT_TESSEL_TRANSFORMS_POOLINGWINDOWS_H
