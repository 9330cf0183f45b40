//===- GroupedConvToKernel.h - grouped conv -> tessel.grouped_conv2d ------===//
//
// The pattern tessel-convert-to-kernels uses for the grouped convolutions
// tessel-decompose-graph-ops keeps whole (GroupedConvToKernel.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_DIALECT_TESSEL_TRANSFORMS_GROUPEDCONVTOKERNEL_H
#define TESSEL_DIALECT_TESSEL_TRANSFORMS_GROUPEDCONVTOKERNEL_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::tessel {

/// f32 linalg.conv_2d_nhwgc_gfhwc with a constant filter, collapsed back to
/// NHWC, becomes tessel.grouped_conv2d: square groups of 2, 4 or 8
/// channels (at most `rotatedMaxWidth`) packed rotated, of 16 c-major, any
/// others in panels of `nr` output channels per group.
void populateGroupedConvToKernelPatterns(RewritePatternSet &patterns,
                                         int64_t nr, int64_t rotatedMaxWidth);

} // namespace mlir::tessel

#endif // TESSEL_DIALECT_TESSEL_TRANSFORMS_GROUPEDCONVTOKERNEL_H
