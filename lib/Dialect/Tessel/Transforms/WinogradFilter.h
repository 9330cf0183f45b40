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

/// Whether a 3x3, stride-1, dilation-1 f32 convolution of `c` input and `f`
/// output channels onto `oh` x `ow` outputs (dynamic: unknown) runs as
/// Winograd rather than the implicit GEMM: at least `minChannels` of each
/// (0: never), except few channels on a large image, where the transforms
/// stream through memory (bench/winograd_conv.c, one thread, Sapphire
/// Rapids: 32 -> 32 channels at 56x56 0.83x the direct kernel, at
/// 112x112 0.75x; 32 -> 64 and 64 -> 32 at 56x56 0.89x; 64 -> 64 1.14x),
/// and at most 96 input channels with a GEMM output past 8 MiB (AMD Zen 5:
/// see the .cpp).
/// tessel-convert-to-kernels decides with it, tessel-sparsify-weights
/// prices the dense path with it.
bool prefersWinograd(int64_t c, int64_t f, int64_t oh, int64_t ow,
                     int64_t minChannels);

/// Whether a kh x kw convolution (c -> f channels, oh x ow outputs, either
/// dynamic) runs as Winograd F(2x2, 3x3): 3x3, stride 1, and where it is
/// dilated, static sizes with sub-grids (the kernel runs a dilation d as
/// d x d undilated convolutions on pixels d apart) of at least 4 x 4;
/// then prefersWinograd on the sub-grid's size. Smaller sub-grids (an ASPP
/// branch whose dilation nears the image) read mostly padding, which the
/// implicit GEMM skips.
bool winogradConv(int64_t kh, int64_t kw, ArrayRef<int64_t> strides,
                  ArrayRef<int64_t> dilations, int64_t c, int64_t f,
                  int64_t oh, int64_t ow, int64_t minChannels);

} // namespace mlir::tessel

#endif // TESSEL_DIALECT_TESSEL_TRANSFORMS_WINOGRADFILTER_H
