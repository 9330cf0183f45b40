//===- VectorizeGathers.h - vector tiles of generics that load buffers ----===//
//
// tessel-vectorize-linalg's vectorizer for the tiles whose body reads
// buffers with memref.load (gathers: Resize, Gather), which upstream's
// linalg::vectorize does not take (VectorizeGathers.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_DIALECT_TESSEL_TRANSFORMS_VECTORIZEGATHERS_H
#define TESSEL_DIALECT_TESSEL_TRANSFORMS_VECTORIZEGATHERS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tessel {

/// Whether `op`'s body reads buffers with memref.load.
bool bodyLoadsBuffers(linalg::LinalgOp op);

/// Why a generic whose body loads buffers cannot be vectorized by
/// vectorizeLoadingTile (nullopt: it can): every loop parallel, the body
/// of linalg.index, affine.apply, arith, math and memref.load of buffers
/// whose innermost stride is 1.
std::optional<StringRef> loadingBodyRejectReason(linalg::LinalgOp op);

/// Vectorizes `tile`, a generic on buffers every loop of which has extent 1
/// but the innermost (static), whose body loads buffers: the innermost
/// loop's iterations become the lanes of vectors, a load whose indices do
/// not depend on the lane stays a scalar, one whose last index walks the
/// lanes one by one becomes a vector load, any other a vector.gather, or
/// with `avx512Permutes`, from a row of at most 32 f32, AVX-512 permutes
/// of the row in two registers. On success the vector code is before
/// `tile`, which is erased.
LogicalResult vectorizeLoadingTile(RewriterBase &rewriter,
                                   linalg::GenericOp tile, bool avx512Permutes);

} // namespace mlir::tessel

#endif // TESSEL_DIALECT_TESSEL_TRANSFORMS_VECTORIZEGATHERS_H
