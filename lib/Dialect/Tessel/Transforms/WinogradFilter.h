//===- WinogradFilter.h - compile-time Winograd filters -------*- C++ -*-===//
//
// The filter half of Winograd's F(2x2, 3x3) and F(4x4, 3x3) convolutions,
// and the choice between them, done once by the
// compiler on constant weights (the kernel library does the input and
// output transforms at run time; docs/pipeline/kernels.md).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_DIALECT_TESSEL_TRANSFORMS_WINOGRADFILTER_H
#define TESSEL_DIALECT_TESSEL_TRANSFORMS_WINOGRADFILTER_H

#include "mlir/IR/BuiltinAttributes.h"

namespace mlir::tessel {

/// `filter` is a constant F x 3 x 3 x C f32 tensor, `tile` 2 (F(2x2, 3x3))
/// or 4 (F(4x4, 3x3)). Returns the transformed filter U = G g G^T packed in
/// panels of `nr` output channels per transform position: an A x
/// ceil(F/nr) x C x nr tensor (A = (tile + 2)^2: 16 or 36) with
/// result[a][p][c][j] = U[a][c][p*nr + j] (zero for p*nr + j >= F), the
/// `packed_filter` of `tessel.packed_conv2d {winograd}`.
DenseElementsAttr winogradPackedFilter(DenseElementsAttr filter, int64_t nr,
                                       int64_t tile);
/// The Winograd output tile, 2 (F(2x2, 3x3)) or 4 (F(4x4, 3x3)), for a 3x3,
/// stride-1, dilation-1 f32 convolution of `c` input and `f` output
/// channels onto `oh` x `ow` outputs (dynamic: unknown), or 0 where the
/// implicit GEMM runs it: fewer than `minChannels` of either (0: never
/// Winograd). F(4x4, 3x3) on images of 36 or more 4x4 tiles (counted over
/// `grids` images of that size: a dilated convolution's sub-grids, which
/// the kernel runs together) that they cover about as well as 2x2 ones
/// (from about 24x24 for one), F(2x2, 3x3) on smaller ones and where the
/// size is unknown (measurements in the .cpp).
/// tessel-convert-to-kernels decides with it, tessel-sparsify-weights
/// prices the dense path with it.
int64_t preferredWinogradTile(int64_t c, int64_t f, int64_t oh, int64_t ow,
                              int64_t minChannels, int64_t grids = 1);
/// preferredWinogradTile for a kh x kw convolution (c -> f channels, oh x ow
/// outputs, either dynamic; `batch` images, dynamic counting as one, whose
/// tiles the kernel's GEMMs share): 0 unless 3x3 and stride 1; where it is
/// dilated, 0 unless static sizes with sub-grids (the kernel runs a
/// dilation d as d x d undilated convolutions on pixels d apart) of at
/// least 4 x 4, then preferredWinogradTile on the sub-grid's size. Smaller
/// sub-grids (an ASPP branch whose dilation nears the image) read mostly
/// padding, which the implicit GEMM skips.
int64_t winogradConvTile(int64_t kh, int64_t kw, ArrayRef<int64_t> strides,
                         ArrayRef<int64_t> dilations, int64_t c, int64_t f,
                         int64_t oh, int64_t ow, int64_t minChannels,
                         int64_t batch = 1);
} // namespace mlir::tessel

#endif // TESSEL_DIALECT_TESSEL_TRANSFORMS_WINOGRADFILTER_H
