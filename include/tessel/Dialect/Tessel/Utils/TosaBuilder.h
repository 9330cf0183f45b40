//===- TosaBuilder.h - Terse construction of TOSA 1.0 ops -------*- C++ -*-===//
//
// TOSA 1.0 ops need zero-point and shift operands and !tosa.shape values;
// decompositions and importers build many of them, so this wraps the
// boilerplate and computes broadcast result types.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_DIALECT_TESSEL_UTILS_TOSABUILDER_H
#define TESSEL_DIALECT_TESSEL_UTILS_TOSABUILDER_H

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::tessel {

/// `v` with type `type`: itself, or a tensor.cast between compatible tensor
/// types (when only static-ness differs). Shared by the passes that move
/// values across component, call and lowering boundaries.
Value castTo(OpBuilder &b, Location loc, Value v, Type type);

class TosaBuilder {
public:
  TosaBuilder(OpBuilder &builder, Location loc) : b(builder), loc(loc) {}

  /// A rank-`rank` constant of all-ones shape holding `value`.
  Value scalar(Type elemTy, double value, int64_t rank);
  /// A constant with the given shape and values.
  Value constant(RankedTensorType type, ArrayRef<float> values);
  Value shape(ArrayRef<int64_t> dims);

  Value add(Value x, Value y);
  Value sub(Value x, Value y);
  Value mul(Value x, Value y);
  Value maximum(Value x, Value y);

  Value exp(Value x);
  Value log(Value x);
  Value tanh(Value x);
  Value erf(Value x);
  Value rsqrt(Value x);
  Value reciprocal(Value x);

  Value reduceSum(Value x, int64_t axis);
  Value reduceMax(Value x, int64_t axis);

  /// tosa.cast to another element type, same shape.
  Value cast(Value x, Type elemTy);
  /// f16/bf16 widened to f32 (for accumulation); other types unchanged.
  Value widen(Value x);
  /// `x` cast back to `elemTy` if widen() changed it.
  Value narrow(Value x, Type elemTy);

  Value reshape(Value x, ArrayRef<int64_t> dims);
  Value transpose(Value x, ArrayRef<int32_t> perms);
  Value slice(Value x, ArrayRef<int64_t> start, ArrayRef<int64_t> size);
  Value concat(ValueRange xs, int64_t axis);
  /// A zero point for conv/matmul inputs of `elemTy`.
  Value zeroPoint(Type elemTy);

private:
  /// The numpy-style broadcast of two equal-rank tensor types.
  RankedTensorType broadcastType(Value x, Value y);
  template <typename OpT> Value binary(Value x, Value y) {
    return OpT::create(b, loc, broadcastType(x, y), x, y);
  }
  template <typename OpT> Value unary(Value x) {
    return OpT::create(b, loc, x.getType(), x);
  }

  OpBuilder &b;
  Location loc;
};

} // namespace mlir::tessel

#endif // TESSEL_DIALECT_TESSEL_UTILS_TOSABUILDER_H
