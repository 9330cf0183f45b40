//===- QuantizedToKernels.h - int8 linalg ops -> Tessel's int8 kernel ops -===//
//
// The patterns tessel-convert-to-kernels uses for the integer ops that
// tessel-fold-qdq and tosa-to-linalg leave (docs/quantization.md), and the
// helpers they share.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_DIALECT_TESSEL_TRANSFORMS_QUANTIZEDTOKERNELS_H
#define TESSEL_DIALECT_TESSEL_TRANSFORMS_QUANTIZEDTOKERNELS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

#include <optional>
#include <vector>

namespace mlir::tessel {

/// i8 x i8 -> i32 batch matmuls and convolutions with constant weights
/// (linalg.quantized_batch_matmul, linalg.batch_matmul,
/// linalg.conv_2d_nhwc_fhwc[_q]) become tessel.packed_matmul_i8, the
/// weights packed at compile time in panels of `nr` columns
/// (QuantizedMatmulToKernel.cpp).
void populateQuantizedMatmulToKernelPatterns(RewritePatternSet &patterns,
                                             int64_t nr);

/// int8 depthwise convolutions with constant symmetric weights
/// (linalg.depthwise_conv_2d_nhwc_hwcm[_q], multiplier 1) become
/// tessel.depthwise_conv2d_i8 (QuantizedDepthwiseToKernel.cpp).
void populateQuantizedDepthwiseToKernelPatterns(RewritePatternSet &patterns);

/// The amounts [top, bottom, left, right] of an NHWC `pad` that pads H
/// and W only, by static amounts; none otherwise (whatever the padding
/// value: the caller checks it). Shared with the f32 kernel patterns
/// (ConvertToKernels.cpp), whose kernels pad implicitly too.
std::optional<SmallVector<int64_t>> staticSpatialPad(tensor::PadOp pad);

/// What every int8 kernel pattern requires of a linalg op: statically
/// shaped i8 x i8 -> i32 operands (inputs 0 and 1, output 0) and constant
/// zero points (`za`, `zb`); a match failure naming the missing one.
LogicalResult matchInt8Product(linalg::LinalgOp op, PatternRewriter &rewriter,
                               int64_t &za, int64_t &zb);

/// The 8-bit values (row-major) of a constant: dense elements or a readable
/// dense resource, seen through reshapes and transposes.
std::optional<std::vector<int8_t>> constantInt8Values(Value v);

/// The kernel's init for the linalg op's `init`: a zero fill, or a
/// broadcast of zeros, is overwritten (returns the empty tensor beneath,
/// `accumulate` false); anything else is accumulated into.
Value kernelInit(Value init, bool &accumulate);

} // namespace mlir::tessel

#endif
