//===- StaticQuantization.h - what static int8 quantization quantizes -*- C++ -*-===//
//
// Static (post-training) quantization has three steps that must agree on
// which ops are quantized and which of their operands are activations:
// `tessel-expose-calibration-taps` returns those activations so a float
// artifact can be run on calibration samples, the compiler driver turns
// the observed values into ranges (`tessel.calibrated_ranges` on each op),
// and `tessel-quantize-static` inserts the quantize/dequantize pairs that
// `tessel-fold-qdq` runs on integers. This header is the one definition of
// a quantization site they share (docs/quantization.md).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_QUANTIZATION_STATICQUANTIZATION_H
#define TESSEL_QUANTIZATION_STATICQUANTIZATION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Operation.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir::tessel {

/// The discardable attribute holding a site's calibrated activation ranges:
/// `array<f64: lo0, hi0, lo1, hi1, ...>`, one pair per activation operand
/// in `QuantizationSite::activations` order. Sites without it stay float.
inline constexpr llvm::StringLiteral kCalibratedRangesAttr =
    "tessel.calibrated_ranges";

/// An op with an int8 form: its float activation operands (quantized per
/// tensor, uint8, from calibrated ranges) and its constant weight operand
/// (quantized per output channel, symmetric int8, here).
struct QuantizationSite {
  Operation *op = nullptr;
  /// Operand numbers of the run-time float operands, in range order.
  SmallVector<unsigned, 2> activations;
  /// Operand number of the constant weights; -1 if both are activations.
  int weightOperand = -1;
  /// The weight operand's output-channel dimension (per-channel scales).
  int64_t weightAxis = -1;
};

/// An op static quantization leaves in float, and why (for the report).
struct SkippedSite {
  Operation *op = nullptr;
  std::string reason;
};

/// The quantization sites of `fn` in walk order (the order taps, ranges and
/// reports are numbered in): f32 `tosa.matmul`s (constant second operand or
/// two run-time operands) and single-group `tessel.conv2d` / `tosa.conv2d`s
/// with constant weights. Convolutions and matmuls that have no int8 form
/// are added to `skipped` if given.
SmallVector<QuantizationSite>
findQuantizationSites(func::FuncOp fn,
                      SmallVectorImpl<SkippedSite> *skipped = nullptr);

/// The node name an op was imported from (its NameLoc), or "" if none.
std::string nodeName(Operation *op);

/// The f32 values of `v` (row-major, in `v`'s shape) if it is a constant
/// seen through `tosa.reshape` / `tosa.transpose`, how importers hand
/// weights to a matmul or convolution (2-D to 3-D, Gemm's transB, OIHW to
/// OHWI).
std::optional<std::vector<float>> constantValues(Value v);

/// Symmetric int8 scales of `values` (in `shape`) per index of `axis`:
/// max |w| / 127 over the other dimensions, 1 where that is 0 or not
/// finite.
std::vector<float> symmetricScales(ArrayRef<float> values,
                                   ArrayRef<int64_t> shape, int64_t axis);

/// `w / scale` rounded half to even and saturated to [-127, 127] (NaN to
/// 0): a symmetric int8 weight, as static and dynamic quantization store
/// them.
inline int8_t quantizeSymmetricInt8(float w, float scale) {
  float r = std::nearbyint(w / scale);
  return int8_t(std::isnan(r) ? 0.0f : std::clamp(r, -127.0f, 127.0f));
}

/// uint8 scale and zero point for values in [lo, hi], the range widened to
/// hold 0 so that zero (padding, ReLU's floor) is exact.
struct ActivationQuantization {
  double scale = 1.0;
  int64_t zeroPoint = 0;
};
ActivationQuantization activationQuantization(double lo, double hi);

} // namespace mlir::tessel

#endif // TESSEL_QUANTIZATION_STATICQUANTIZATION_H
