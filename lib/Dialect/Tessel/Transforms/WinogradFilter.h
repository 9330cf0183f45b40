//===- WinogradFilter.h - compile-time Winograd F(2x2,3x3) filters -*- C++ -*-===//
//
// The filter half of Winograd's F(2x2, 3x3) convolution, done once by the
// compiler on constant weights (the kernel library does the input and
// output transforms at run time; docs/pipeline/kernels.md).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_DIALECT_TESSEL_TRANSFORMS_WINOGRADFILTER_H
#define TESSEL_DIALECT_TESSEL_TRANSFORMS_WINOGRADFILTER_H

#include "mlir/IR/BuiltinAttributes.h"

namespace mlir::tessel {

/// `filter` is a constant F x 3 x 3 x C f32 tensor. Returns the transformed
/// filter U = G g G^T packed in panels of `nr` output channels per
/// transform position: a 16 x ceil(F/nr) x C x nr tensor with
/// result[a][p][c][j] = U[a][c][p*nr + j] (zero for p*nr + j >= F), the
/// `packed_filter` of `tessel.packed_conv2d {winograd}`.
DenseElementsAttr winogradPackedFilter(DenseElementsAttr filter, int64_t nr);

} // namespace mlir::tessel

#endif // TESSEL_DIALECT_TESSEL_TRANSFORMS_WINOGRADFILTER_H
