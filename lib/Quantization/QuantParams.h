//===- QuantParams.h - the parameters of a !quant.uniform type --*- C++ -*-===//
#ifndef TESSEL_LIB_QUANTIZATION_QUANTPARAMS_H
#define TESSEL_LIB_QUANTIZATION_QUANTPARAMS_H

#include "mlir/Dialect/Quant/IR/QuantTypes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"

#include <optional>

namespace mlir::tessel {

/// Scales, zero points and storage of a uniform quantized element type,
/// per tensor or per axis, in one shape for the passes that read them.
struct QuantParams {
  SmallVector<double> scales;
  SmallVector<int64_t> zeroPoints;
  /// The quantized dimension; -1 per tensor.
  int64_t axis = -1;
  IntegerType storage; // signless
  bool isSigned = true;
  int64_t min = 0, max = 0;
  FloatType expressed;
};

/// The parameters of `elem` if it is a uniform quantized type with integer
/// storage and a float expressed type.
/// A zero-point operand (of tosa.matmul) that is a constant zero.
inline bool isZeroConstant(Value v) {
  return matchPattern(v, m_Zero()) || matchPattern(v, m_AnyZeroFloat());
}

inline std::optional<QuantParams> quantParamsOf(Type elem) {
  QuantParams p;
  if (auto t = dyn_cast<quant::UniformQuantizedType>(elem)) {
    p.scales = {t.getScale()};
    p.zeroPoints = {t.getZeroPoint()};
  } else if (auto t = dyn_cast<quant::UniformQuantizedPerAxisType>(elem)) {
    p.scales.assign(t.getScales().begin(), t.getScales().end());
    p.zeroPoints.assign(t.getZeroPoints().begin(), t.getZeroPoints().end());
    p.axis = t.getQuantizedDimension();
  } else {
    return std::nullopt;
  }
  auto q = cast<quant::QuantizedType>(elem);
  p.storage = dyn_cast<IntegerType>(q.getStorageType());
  p.expressed = dyn_cast<FloatType>(q.getExpressedType());
  if (!p.storage || !p.expressed)
    return std::nullopt;
  p.isSigned = q.isSigned();
  p.min = q.getStorageTypeMin();
  p.max = q.getStorageTypeMax();
  return p;
}

} // namespace mlir::tessel

#endif // TESSEL_LIB_QUANTIZATION_QUANTPARAMS_H
