//===- FuseGathers.h - gathers computed where their consumer reads them ---===//
//
// The pattern tessel-fuse-elementwise adds for gathers (FuseGathers.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_DIALECT_TESSEL_TRANSFORMS_FUSEGATHERS_H
#define TESSEL_DIALECT_TESSEL_TRANSFORMS_FUSEGATHERS_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::tessel {

/// A gather (a parallel linalg.generic whose body reads another tensor with
/// tensor.extract) read by one elementwise consumer through reshapes, one
/// consumer point per gathered element, is computed in the consumer's body:
/// the gathered tensor is never written.
void populateFuseGatherPatterns(RewritePatternSet &patterns);

} // namespace mlir::tessel

#endif // TESSEL_DIALECT_TESSEL_TRANSFORMS_FUSEGATHERS_H
