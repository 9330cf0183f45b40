//===- TosaBuilder.cpp - Terse construction of TOSA 1.0 ops ----------------===//
#include "tessel/Dialect/Tessel/Utils/TosaBuilder.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/Utils/ConversionUtils.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

using namespace mlir;
using namespace mlir::tessel;

static RankedTensorType rankedType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

Value TosaBuilder::scalar(Type elemTy, double value, int64_t rank) {
  auto type = RankedTensorType::get(SmallVector<int64_t>(rank, 1), elemTy);
  auto attr = DenseElementsAttr::get(type, b.getFloatAttr(elemTy, value));
  return tosa::ConstOp::create(b, loc, type, attr);
}

Value TosaBuilder::constant(RankedTensorType type, ArrayRef<float> values) {
  SmallVector<Attribute> attrs;
  for (float v : values)
    attrs.push_back(b.getFloatAttr(type.getElementType(), v));
  return tosa::ConstOp::create(b, loc, type,
                               DenseElementsAttr::get(type, attrs));
}

Value TosaBuilder::shape(ArrayRef<int64_t> dims) {
  ImplicitLocOpBuilder ib(loc, b);
  return tosa::getTosaConstShape(ib, dims);
}

RankedTensorType TosaBuilder::broadcastType(Value x, Value y) {
  RankedTensorType xt = rankedType(x), yt = rankedType(y);
  SmallVector<int64_t> dims;
  for (auto [a, c] : llvm::zip(xt.getShape(), yt.getShape())) {
    if (a == 1)
      dims.push_back(c);
    else if (c == 1)
      dims.push_back(a);
    else if (ShapedType::isDynamic(a))
      dims.push_back(c);
    else
      dims.push_back(a);
  }
  return RankedTensorType::get(dims, xt.getElementType());
}

Value TosaBuilder::add(Value x, Value y) { return binary<tosa::AddOp>(x, y); }
Value TosaBuilder::sub(Value x, Value y) { return binary<tosa::SubOp>(x, y); }
Value TosaBuilder::maximum(Value x, Value y) {
  return binary<tosa::MaximumOp>(x, y);
}
Value TosaBuilder::mul(Value x, Value y) {
  auto shiftTy = RankedTensorType::get({1}, b.getI8Type());
  Value shift = tosa::ConstOp::create(
      b, loc, shiftTy, DenseElementsAttr::get(shiftTy, b.getI8IntegerAttr(0)));
  return tosa::MulOp::create(b, loc, broadcastType(x, y), x, y, shift);
}

Value TosaBuilder::exp(Value x) { return unary<tosa::ExpOp>(x); }
Value TosaBuilder::log(Value x) { return unary<tosa::LogOp>(x); }
Value TosaBuilder::tanh(Value x) { return unary<tosa::TanhOp>(x); }
Value TosaBuilder::erf(Value x) { return unary<tosa::ErfOp>(x); }
Value TosaBuilder::rsqrt(Value x) { return unary<tosa::RsqrtOp>(x); }
Value TosaBuilder::reciprocal(Value x) {
  return unary<tosa::ReciprocalOp>(x);
}

Value TosaBuilder::reduceSum(Value x, int64_t axis) {
  return tosa::ReduceSumOp::create(b, loc, x, static_cast<uint32_t>(axis));
}
Value TosaBuilder::reduceMax(Value x, int64_t axis) {
  return tosa::ReduceMaxOp::create(b, loc, x, static_cast<uint32_t>(axis));
}

Value TosaBuilder::cast(Value x, Type elemTy) {
  auto type = RankedTensorType::get(rankedType(x).getShape(), elemTy);
  return tosa::CastOp::create(b, loc, type, x);
}

Value TosaBuilder::widen(Value x) {
  Type et = rankedType(x).getElementType();
  return et.isF16() || et.isBF16() ? cast(x, b.getF32Type()) : x;
}

Value TosaBuilder::narrow(Value x, Type elemTy) {
  return rankedType(x).getElementType() == elemTy ? x : cast(x, elemTy);
}

Value TosaBuilder::reshape(Value x, ArrayRef<int64_t> dims) {
  auto type = RankedTensorType::get(dims, rankedType(x).getElementType());
  return tosa::ReshapeOp::create(b, loc, type, x, shape(dims));
}

Value TosaBuilder::transpose(Value x, ArrayRef<int32_t> perms) {
  RankedTensorType xt = rankedType(x);
  SmallVector<int64_t> dims;
  for (int32_t p : perms)
    dims.push_back(xt.getDimSize(p));
  return tosa::TransposeOp::create(
      b, loc, RankedTensorType::get(dims, xt.getElementType()), x,
      b.getDenseI32ArrayAttr(perms));
}

Value TosaBuilder::slice(Value x, ArrayRef<int64_t> start,
                         ArrayRef<int64_t> size) {
  auto type = RankedTensorType::get(size, rankedType(x).getElementType());
  return tosa::SliceOp::create(b, loc, type, x, shape(start), shape(size));
}

Value TosaBuilder::concat(ValueRange xs, int64_t axis) {
  RankedTensorType first = rankedType(xs.front());
  SmallVector<int64_t> dims(first.getShape());
  dims[axis] = 0;
  for (Value v : xs) {
    int64_t d = rankedType(v).getDimSize(axis);
    dims[axis] = ShapedType::isDynamic(d) || ShapedType::isDynamic(dims[axis])
                     ? ShapedType::kDynamic
                     : dims[axis] + d;
  }
  return tosa::ConcatOp::create(
      b, loc, RankedTensorType::get(dims, first.getElementType()), xs,
      b.getI32IntegerAttr(axis));
}

Value TosaBuilder::zeroPoint(Type elemTy) { return scalar(elemTy, 0.0, 1); }

Value mlir::tessel::castTo(OpBuilder &b, Location loc, Value v, Type type) {
  if (v.getType() == type)
    return v;
  return tensor::CastOp::create(b, loc, type, v);
}
