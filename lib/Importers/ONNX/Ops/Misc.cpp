//===- Misc.cpp - Constant, Identity, Cast, windows ------------------------===//
#include "Common.h"
#include "RunTimeShapes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tessel::onnx_import;

namespace {

LogicalResult convertConstant(NodeContext &ctx) {
  auto scalarOr1D = [&](Type elem, auto values, bool scalar) {
    SmallVector<int64_t> shape;
    if (!scalar)
      shape.push_back(static_cast<int64_t>(values.size()));
    return RankedTensorType::get(shape, elem);
  };
  OpBuilder &b = ctx.builder();
  if (ctx.hasAttr("value")) {
    FailureOr<DenseElementsAttr> v = ctx.tensorAttr("value");
    if (failed(v))
      return failure();
    ctx.setConstantOutput(0, *v);
  } else if (ctx.hasAttr("value_float")) {
    FailureOr<float> v = ctx.floatAttr("value_float");
    if (failed(v))
      return failure();
    SmallVector<double> d{*v};
    ctx.setConstantOutput(0, doublesAttr(scalarOr1D(b.getF32Type(), d, true), d));
  } else if (ctx.hasAttr("value_floats")) {
    FailureOr<SmallVector<float>> v = ctx.floatsAttr("value_floats");
    if (failed(v))
      return failure();
    SmallVector<double> d(v->begin(), v->end());
    ctx.setConstantOutput(0, doublesAttr(scalarOr1D(b.getF32Type(), d, false), d));
  } else if (ctx.hasAttr("value_int")) {
    FailureOr<int64_t> v = ctx.intAttr("value_int");
    if (failed(v))
      return failure();
    SmallVector<int64_t> d{*v};
    ctx.setConstantOutput(0, intsAttr(scalarOr1D(b.getI64Type(), d, true), d));
  } else if (ctx.hasAttr("value_ints")) {
    FailureOr<SmallVector<int64_t>> v = ctx.intsAttr("value_ints");
    if (failed(v))
      return failure();
    ctx.setConstantOutput(0, intsAttr(scalarOr1D(b.getI64Type(), *v, false), *v));
  } else {
    for (StringRef unsupportedAttr : {"sparse_value", "value_string", "value_strings"})
      if (ctx.hasAttr(unsupportedAttr))
        return ctx.attrError(unsupportedAttr, "is not supported yet");
    ctx.emitError() << "has no value attribute";
    return failure();
  }
  return success();
}

LogicalResult convertIdentity(NodeContext &ctx) {
  // A large weight passes through unread (DeferredWeights.h).
  if (ctx.isDeferredInput(0))
    ctx.setOutput(0, ctx.input(0));
  else if (DenseElementsAttr c = ctx.constantInput(0))
    ctx.setConstantOutput(0, c);
  else
    ctx.setOutput(0, ctx.input(0));
  return success();
}

Value castTensor(NodeContext &ctx, Value x, Type to);

} // namespace

Value mlir::tessel::onnx_import::castScalar(OpBuilder &b, Location loc, Value e,
                                           Type from, Type to) {
  if (from == to)
    return e;
  auto signless = [&](Type t) -> Type {
    auto it = dyn_cast<IntegerType>(t);
    return it && !it.isSignless() ? b.getIntegerType(it.getWidth()) : t;
  };
  bool fromUnsigned = from.isUnsignedInteger() || from.isInteger(1);
  Type sFrom = signless(from), sTo = signless(to);
  if (sFrom != from)
    e = reinterpret(b, loc, e, sFrom);
  Value r;
  if (to.isInteger(1)) {
    r = isa<FloatType>(sFrom)
            ? Value(arith::CmpFOp::create(
                  b, loc, arith::CmpFPredicate::UNE, e,
                  arith::ConstantOp::create(b, loc, b.getFloatAttr(sFrom, 0))))
            : Value(arith::CmpIOp::create(
                  b, loc, arith::CmpIPredicate::ne, e,
                  arith::ConstantOp::create(b, loc,
                                            b.getIntegerAttr(sFrom, 0))));
  } else if (isa<FloatType>(sFrom) && isa<FloatType>(sTo)) {
    r = sFrom.getIntOrFloatBitWidth() < sTo.getIntOrFloatBitWidth()
            ? Value(arith::ExtFOp::create(b, loc, sTo, e))
            : Value(arith::TruncFOp::create(b, loc, sTo, e));
  } else if (isa<FloatType>(sFrom)) {
    r = to.isUnsignedInteger() ? Value(arith::FPToUIOp::create(b, loc, sTo, e))
                               : Value(arith::FPToSIOp::create(b, loc, sTo, e));
  } else if (isa<FloatType>(sTo)) {
    r = fromUnsigned ? Value(arith::UIToFPOp::create(b, loc, sTo, e))
                     : Value(arith::SIToFPOp::create(b, loc, sTo, e));
  } else {
    unsigned fw = sFrom.getIntOrFloatBitWidth(),
             tw = sTo.getIntOrFloatBitWidth();
    r = fw == tw  ? e
        : fw < tw ? (fromUnsigned ? Value(arith::ExtUIOp::create(b, loc, sTo, e))
                                  : Value(arith::ExtSIOp::create(b, loc, sTo, e)))
                  : Value(arith::TruncIOp::create(b, loc, sTo, e));
  }
  return sTo != to ? reinterpret(b, loc, r, to) : r;
}

namespace {

} // namespace

/// ONNX Cast semantics: float->int truncates toward zero, ->bool is != 0.
Value mlir::tessel::onnx_import::castValue(NodeContext &ctx, Value x,
                                           Type to) {
  Type from = cast<RankedTensorType>(x.getType()).getElementType();
  if (from != to && (from.isUnsignedInteger() || to.isUnsignedInteger()))
    // Unsigned tensors only lower element by element (see mapScalars).
    return mapScalars(ctx, x, to, [&](OpBuilder &b, Location loc, Value e) {
      return castScalar(b, loc, e, from, to);
    });
  return castTensor(ctx, x, to);
}

namespace {

/// castValue for signless/float/bool tensors: whole-tensor ops.
Value castTensor(NodeContext &ctx, Value x, Type to) {
  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  auto inTy = cast<RankedTensorType>(x.getType());
  Type from = inTy.getElementType();
  auto outTy = withElementType(inTy, to);
  if (from == to)
    return x;
  if (to.isInteger(1)) {
    auto boolTy = withElementType(inTy, b.getI1Type());
    // A broadcast zero: the sizes may be known only at run time.
    Value zero = splatConstant(
        ctx, withShape(inTy, SmallVector<int64_t>(inTy.getRank(), 1)), 0.0);
    Value eq = tosa::EqualOp::create(b, loc, boolTy, x, zero);
    return tosa::LogicalNotOp::create(b, loc, boolTy, eq);
  }
  bool fromFloat = isa<FloatType>(from), toFloat = isa<FloatType>(to);
  bool fromUnsigned = from.isUnsignedInteger() || from.isInteger(1);
  if (fromFloat && toFloat)
    return from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth()
               ? Value(arith::ExtFOp::create(b, loc, outTy, x))
               : Value(arith::TruncFOp::create(b, loc, outTy, x));
  if (fromFloat)
    return to.isUnsignedInteger()
               ? Value(arith::FPToUIOp::create(b, loc, outTy, x))
               : Value(arith::FPToSIOp::create(b, loc, outTy, x));
  if (toFloat)
    return fromUnsigned ? Value(arith::UIToFPOp::create(b, loc, outTy, x))
                        : Value(arith::SIToFPOp::create(b, loc, outTy, x));
  // Integer to integer; arith works on signless types, so go through them.
  unsigned fw = from.getIntOrFloatBitWidth(), tw = to.getIntOrFloatBitWidth();
  if (fw == tw) // same width, other signedness: reinterpret bits
    return tosa::CastOp::create(b, loc, outTy, x);
  if (fw < tw)
    return fromUnsigned ? Value(arith::ExtUIOp::create(b, loc, outTy, x))
                        : Value(arith::ExtSIOp::create(b, loc, outTy, x));
  return arith::TruncIOp::create(b, loc, outTy, x);
}

/// Cast of a compile-time constant, so shape arithmetic keeps folding.
DenseElementsAttr castConstant(DenseElementsAttr c, Type to) {
  auto type = withElementType(cast<RankedTensorType>(c.getType()), to);
  if (to.isInteger(1)) {
    SmallVector<bool> bits;
    for (double v : toDoubles(c))
      bits.push_back(v != 0);
    return DenseElementsAttr::get(type, ArrayRef<bool>(bits));
  }
  if (isa<FloatType>(to))
    return doublesAttr(type, toDoubles(c));
  return intsAttr(type, toInts(c)); // toInts truncates floats toward zero
}

LogicalResult convertCast(NodeContext &ctx) {
  FailureOr<int64_t> to = ctx.intAttr("to");
  if (failed(to))
    return failure();
  if (ctx.hasAttr("saturate"))
    ctx.ignoreAttr("saturate"); // only affects float8 targets
  Type toTy = convertElementType(static_cast<int32_t>(*to), ctx.context());
  if (!toTy)
    return ctx.attrError(
        "to", "= " + std::to_string(*to) + " (" +
                  onnx::TensorProto_DataType_Name(
                      static_cast<onnx::TensorProto_DataType>(*to)) +
                  ") names a data type Tessel does not support");
  Type fromTy = ctx.inputType(0).getElementType();
  if (DenseElementsAttr c = ctx.constantInput(0)) {
    ctx.setConstantOutput(0, castConstant(c, toTy));
    return success();
  }
  ctx.setOutput(0, castValue(ctx, ctx.input(0), toTy));
  return success();
}

LogicalResult convertCastLike(NodeContext &ctx) {
  Type toTy = ctx.inputType(1).getElementType();
  if (DenseElementsAttr c = ctx.constantInput(0)) {
    ctx.setConstantOutput(0, castConstant(c, toTy));
    return success();
  }
  ctx.setOutput(0, castValue(ctx, ctx.input(0), toTy));
  return success();
}

/// Hann, Hamming and Blackman windows (opset 17), computed element by
/// element: of static length when `size` is a constant, else of the length
/// the input holds at run time (checked: 1 to 2^24).
enum class Window { Hann, Hamming, Blackman };
template <Window kind> LogicalResult convertWindow(NodeContext &ctx) {
  FailureOr<int64_t> periodic = ctx.intAttr("periodic", 1);
  FailureOr<int64_t> dtype = ctx.intAttr("output_datatype",
                                         onnx::TensorProto::FLOAT);
  if (failed(periodic) || failed(dtype))
    return failure();
  Type elem = convertElementType(static_cast<int32_t>(*dtype), ctx.context());
  if (!elem)
    return ctx.attrError("output_datatype",
                         "= " + std::to_string(*dtype) +
                             " names a data type Tessel does not support");
  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  int64_t staticSize;
  FailureOr<Value> checkedSize = constantOrRunTimeSize(
      ctx, 0, "size", 1, int64_t(1) << 24, staticSize);
  if (failed(checkedSize))
    return failure();
  Value size = *checkedSize;
  auto f64 = b.getF64Type();
  auto toF64 = [&](OpBuilder &nb, Location l, Value index) -> Value {
    return indexToF64(nb, l, index);
  };
  // Symmetric windows span size - 1 intervals, periodic ones size.
  Value intervals = toF64(b, loc, size);
  if (!*periodic)
    intervals = arith::SubFOp::create(
        b, loc, intervals,
        arith::ConstantOp::create(b, loc, f64, b.getF64FloatAttr(1.0)));
  SmallVector<Value> dynamicSize;
  if (ShapedType::isDynamic(staticSize))
    dynamicSize.push_back(size);
  auto type = RankedTensorType::get({staticSize}, elem);
  auto window = tensor::GenerateOp::create(
      b, loc, type, dynamicSize, [&](OpBuilder &nb, Location l, ValueRange iv) {
        auto c = [&](double v) {
          return arith::ConstantOp::create(nb, l, f64, nb.getF64FloatAttr(v));
        };
        // x = 2 pi n / intervals (0 for a one-point symmetric window).
        Value x = arith::DivFOp::create(
            nb, l, arith::MulFOp::create(nb, l, c(2.0 * M_PI), toF64(nb, l, iv[0])),
            intervals);
        x = arith::SelectOp::create(
            nb, l,
            arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OGT, intervals, c(0)),
            x, c(0));
        auto cosOf = [&](double k) {
          return math::CosOp::create(nb, l, arith::MulFOp::create(nb, l, c(k), x));
        };
        auto minus = [&](Value a, double k, Value t) {
          return arith::SubFOp::create(nb, l, a,
                                       arith::MulFOp::create(nb, l, c(k), t));
        };
        Value v;
        switch (kind) {
        case Window::Hann: v = minus(c(0.5), 0.5, cosOf(1)); break;
        case Window::Hamming: v = minus(c(25.0 / 46.0), 21.0 / 46.0, cosOf(1)); break;
        case Window::Blackman:
          v = arith::AddFOp::create(nb, l, minus(c(0.42), 0.5, cosOf(1)),
                                    arith::MulFOp::create(nb, l, c(0.08), cosOf(2)));
          break;
        }
        tensor::YieldOp::create(nb, l, castScalar(nb, l, v, f64, elem));
      });
  ctx.setOutput(0, window);
  return success();
}

} // namespace

void mlir::tessel::onnx_import::registerMiscConverters(ConverterMap &m) {
  m["HannWindow"] = convertWindow<Window::Hann>;
  m["HammingWindow"] = convertWindow<Window::Hamming>;
  m["BlackmanWindow"] = convertWindow<Window::Blackman>;
  m["Constant"] = convertConstant;
  m["Identity"] = convertIdentity;
  m["Cast"] = convertCast;
  m["CastLike"] = convertCastLike;
}
