//===- Quantization.cpp - ONNX quantization converters --------------------===//
//---------------------===//
//
// QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, MatMulInteger,
// ConvInteger, QLinearMatMul and QLinearConv.
//
// Integer products run on tosa.matmul / tosa.conv2d with i8 operands and i32
// accumulation. Zero points are often graph inputs, and TOSA lowering needs
// constant ones, so they are applied afterwards by expanding
//   sum (a - za)(b - zb) = sum ab - zb sum a - za sum b + K za zb.
// uint8 data is shifted by -128 into int8 first (zero points shifted alike),
// which leaves every difference, so the result, unchanged.
//
// QuantizeLinear / DequantizeLinear with constant scales and zero points
// become upstream quant casts on !quant.uniform tensors (per tensor or per
// axis), so passes see the quantization; tessel-lower-quant gives them their
// meaning (docs/quantization.md). With parameters computed at run time they
// are expanded here. Float math (divide, round half to even, clamp,
// convert) uses arith/math ops on whole tensors. Unsigned tensors go through toI32 / fromI32 only, as
// the first and last op: TOSA ops on them do not lower (see mapScalars).
//
//===----------------------------------------------------------------------===//
#include "Common.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Quant/IR/Quant.h"
#include "mlir/Dialect/Quant/IR/QuantTypes.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"

using namespace mlir;
using namespace mlir::tessel::onnx_import;

namespace {

int64_t rankOf(Value v) { return typeOf(v).getRank(); }

//===----------------------------------------------------------------------===//
// Element type conversions
//===----------------------------------------------------------------------===//

/// An integer tensor as i32, by value (unsigned types zero-extended).
Value toI32(NodeContext &ctx, Value x) {
  OpBuilder &b = ctx.builder();
  auto it = cast<IntegerType>(elemOf(x));
  Type i32 = b.getI32Type();
  auto outTy = withElementType(typeOf(x), i32);
  if (it.isUnsigned()) {
    Type signless = b.getIntegerType(it.getWidth());
    return mapScalars(ctx, x, i32, [&](OpBuilder &nb, Location loc, Value e) {
      return arith::ExtUIOp::create(nb, loc, i32,
                                    reinterpret(nb, loc, e, signless));
    });
  }
  if (it.getWidth() == 32)
    return x;
  if (it.getWidth() < 32)
    return arith::ExtSIOp::create(b, ctx.loc(), outTy, x);
  return arith::TruncIOp::create(b, ctx.loc(), outTy, x);
}

/// i32 values that fit integer type `elem`, narrowed to it.
Value fromI32(NodeContext &ctx, Value x, Type elem) {
  auto it = cast<IntegerType>(elem);
  if (it.isSignless() && it.getWidth() == 32)
    return x;
  if (it.isUnsigned()) {
    Type signless = ctx.builder().getIntegerType(it.getWidth());
    return mapScalars(ctx, x, elem, [&](OpBuilder &b, Location loc, Value e) {
      Value t = arith::TruncIOp::create(b, loc, signless, e);
      return reinterpret(b, loc, t, elem);
    });
  }
  return arith::TruncIOp::create(ctx.builder(), ctx.loc(),
                                 withElementType(typeOf(x), elem), x);
}

/// An integer or float tensor as f32, by value.
Value toF32(NodeContext &ctx, Value x) {
  OpBuilder &b = ctx.builder();
  Type et = elemOf(x);
  auto f32Ty = withElementType(typeOf(x), b.getF32Type());
  if (et.isF32())
    return x;
  if (isa<FloatType>(et))
    return et.getIntOrFloatBitWidth() < 32
               ? Value(arith::ExtFOp::create(b, ctx.loc(), f32Ty, x))
               : Value(arith::TruncFOp::create(b, ctx.loc(), f32Ty, x));
  return arith::SIToFPOp::create(b, ctx.loc(), f32Ty, toI32(ctx, x));
}

/// The value range of integer type `t`.
std::pair<double, double> intRange(IntegerType t) {
  unsigned w = t.getWidth();
  if (t.isUnsigned())
    return {0.0, std::ldexp(1.0, w) - 1};
  return {-std::ldexp(1.0, w - 1), std::ldexp(1.0, w - 1) - 1};
}

Value divF(NodeContext &ctx, Value x, Value y) {
  // Exact division (not a rounded reciprocal) on equal shapes.
  ArrayRef<int64_t> shape = typeOf(x).getShape();
  return arith::DivFOp::create(ctx.builder(), ctx.loc(), x,
                               broadcastTo(ctx, y, shape));
}

/// saturate(round_half_even(v) + zp) converted to integer type `elem`. `v`
/// is f32; `zp` (f32, broadcastable) may be null.
Value roundSaturate(NodeContext &ctx, Value v, Value zp, IntegerType elem) {
  OpBuilder &b = ctx.builder();
  Value r = math::RoundEvenOp::create(b, ctx.loc(), v);
  if (zp)
    r = ctx.tosa().add(r, zp);
  auto [lo, hi] = intRange(elem);
  r = clampF(ctx, r, lo, hi);
  Value i = arith::FPToSIOp::create(
      b, ctx.loc(), withElementType(typeOf(r), b.getI32Type()), r);
  return fromI32(ctx, i, elem);
}

//===----------------------------------------------------------------------===//
// (De)QuantizeLinear parameters
//===----------------------------------------------------------------------===//

/// A scale or zero point shaped to broadcast against `x` at x's rank:
/// per-tensor (one element) or per-axis (1-D, x.shape[axis] elements).
FailureOr<Value> alignParam(NodeContext &ctx, Value p, RankedTensorType x,
                            int64_t axis, StringRef name) {
  int64_t rank = x.getRank();
  ArrayRef<int64_t> ps = typeOf(p).getShape();
  SmallVector<int64_t> dims(rank, 1);
  if (numElements(ps) == 1 && ps.size() <= 1)
    return ctx.tosa().reshape(p, dims);
  FailureOr<int64_t> ax = normalizeAxis(ctx, axis, std::max<int64_t>(rank, 1));
  if (failed(ax))
    return failure();
  if (ps.size() != 1 || rank == 0 || ps[0] != x.getDimSize(*ax)) {
    ctx.emitError() << name << " of shape [" << ps
                    << "] is neither per-tensor nor per-axis along axis " << *ax
                    << " of an input of shape [" << x.getShape() << "]";
    return failure();
  }
  dims[*ax] = ps[0];
  return ctx.tosa().reshape(p, dims);
}

/// Attributes of the opset-19/21 (De)QuantizeLinear that Tessel does not
/// implement: block quantization and float8 targets.
LogicalResult checkNewQuantAttrs(NodeContext &ctx) {
  if (ctx.hasAttr("block_size")) {
    FailureOr<int64_t> bs = ctx.intAttr("block_size");
    if (failed(bs))
      return failure();
    if (*bs != 0)
      return ctx.attrError("block_size",
                           "!= 0 (blocked quantization) is not supported");
  }
  if (ctx.hasAttr("saturate") && failed(ctx.intAttr("saturate")))
    return failure(); // only affects float8 outputs, which are unsupported
  return success();
}

/// The integer type QuantizeLinear produces: the zero point's, else
/// output_dtype's, else uint8.
FailureOr<IntegerType> quantizedType(NodeContext &ctx) {
  FailureOr<int64_t> dtype = ctx.intAttr("output_dtype", 0);
  if (failed(dtype))
    return failure();
  Type t = ctx.hasInput(2) ? elemOf(ctx.input(2))
           : *dtype != 0
               ? convertElementType(static_cast<int32_t>(*dtype), ctx.context())
               : IntegerType::get(ctx.context(), 8, IntegerType::Unsigned);
  auto it = dyn_cast_or_null<IntegerType>(t);
  if (!it || it.getWidth() < 8 || it.getWidth() > 16)
    return ctx.unsupported("quantizing to a type other than int8, uint8 and "
                           "int16");
  if (*dtype != 0 && ctx.hasInput(2) &&
      convertElementType(static_cast<int32_t>(*dtype), ctx.context()) != t)
    return ctx.attrError("output_dtype", "differs from the zero point's type");
  return it;
}

//===----------------------------------------------------------------------===//
// Quantized types
//===----------------------------------------------------------------------===//

/// The !quant.uniform element type of (scale, zero point) inputs 1 and 2
/// for data of shape `xt` with storage `storage`, when both are constants
/// the quant dialect can hold: a per-tensor or per-axis positive finite
/// scale. Otherwise null, and the caller expands the arithmetic (a scale
/// computed at run time has no type).
Type uniformType(NodeContext &ctx, RankedTensorType xt, IntegerType storage,
                 FloatType expressed, int64_t axis) {
  DenseElementsAttr scale = ctx.constantInput(1);
  DenseElementsAttr zp = ctx.hasInput(2) ? ctx.constantInput(2) : nullptr;
  if (!scale || (ctx.hasInput(2) && !zp) || !storage ||
      storage.getWidth() > 16 || !expressed ||
      !isa<FloatType>(scale.getElementType()))
    return nullptr;
  ArrayRef<int64_t> ps = scale.getType().getShape();
  int64_t n = scale.getNumElements();
  int64_t rank = xt.getRank();
  bool perTensor = n == 1 && ps.size() <= 1;
  if (!perTensor) {
    if (rank == 0 || ps.size() != 1 || axis < -rank || axis >= rank)
      return nullptr;
    axis = axis < 0 ? axis + rank : axis;
    if (xt.isDynamicDim(axis) || xt.getDimSize(axis) != n)
      return nullptr;
  }
  SmallVector<double> scales;
  for (APFloat v : scale.getValues<APFloat>()) {
    bool lost;
    v.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
    double d = v.convertToDouble();
    if (!(d > 0) || !std::isfinite(d))
      return nullptr;
    scales.push_back(d);
  }
  SmallVector<int64_t> zeroPoints =
      zp ? toInts(zp) : SmallVector<int64_t>(n, 0);
  if (int64_t(zeroPoints.size()) != n)
    return nullptr;
  bool isSigned = !storage.isUnsigned();
  unsigned width = storage.getWidth();
  int64_t lo = quant::QuantizedType::getDefaultMinimumForInteger(isSigned, width);
  int64_t hi = quant::QuantizedType::getDefaultMaximumForInteger(isSigned, width);
  for (int64_t z : zeroPoints)
    if (z < lo || z > hi)
      return nullptr;
  unsigned flags = isSigned ? quant::QuantizationFlags::Signed : 0;
  Type signless = IntegerType::get(ctx.context(), width);
  if (perTensor)
    return quant::UniformQuantizedType::get(flags, signless, expressed,
                                            scales[0], zeroPoints[0], lo, hi);
  return quant::UniformQuantizedPerAxisType::get(
      flags, signless, expressed, scales, zeroPoints, int32_t(axis), lo, hi);
}

/// The signless tensor `x` was reinterpreted from by fromSignless, if it
/// was: QuantizeLinear -> DequantizeLinear on uint8 then needs no
/// reinterpretation loop in either direction.
Value reinterpretedFrom(Value x) {
  auto gen = x.getDefiningOp<tensor::GenerateOp>();
  if (!gen || gen.getBody().front().getOperations().size() != 3)
    return nullptr;
  Block &body = gen.getBody().front();
  auto extract = dyn_cast<tensor::ExtractOp>(&body.front());
  auto cast = dyn_cast<UnrealizedConversionCastOp>(*std::next(body.begin()));
  if (!extract || !cast || cast.getOperand(0) != extract.getResult() ||
      extract.getIndices() != ValueRange(body.getArguments()))
    return nullptr;
  Value src = extract.getTensor();
  return elemOf(src).isSignlessInteger() ? src : nullptr;
}

/// Integer data reinterpreted between its ONNX type (ui8, i8, ...) and the
/// signless type of the same width quant.scast takes.
Value toSignless(NodeContext &ctx, Value x) {
  auto it = cast<IntegerType>(elemOf(x));
  if (it.isSignless())
    return x;
  if (Value src = reinterpretedFrom(x))
    return src;
  Type signless = ctx.builder().getIntegerType(it.getWidth());
  return mapScalars(ctx, x, signless, [&](OpBuilder &b, Location loc, Value e) {
    return reinterpret(b, loc, e, signless);
  });
}
Value fromSignless(NodeContext &ctx, Value x, IntegerType to) {
  if (to.isSignless())
    return x;
  return mapScalars(ctx, x, to, [&](OpBuilder &b, Location loc, Value e) {
    return reinterpret(b, loc, e, to);
  });
}

/// y = saturate(round(x / scale) + zero_point), per tensor or per axis.
LogicalResult convertQuantizeLinear(NodeContext &ctx) {
  FailureOr<int64_t> axis = ctx.intAttr("axis", 1);
  if (failed(axis) || failed(checkNewQuantAttrs(ctx)))
    return failure();
  FailureOr<IntegerType> outElem = quantizedType(ctx);
  if (failed(outElem))
    return failure();
  Value x = ctx.input(0);
  RankedTensorType xt = typeOf(x);
  // Constant parameters: a quantized type, lowered by tessel-lower-quant.
  if (Type q = uniformType(ctx, xt, *outElem, dyn_cast<FloatType>(elemOf(x)),
                           *axis);
      q && elemOf(ctx.input(1)) == elemOf(x)) {
    OpBuilder &b = ctx.builder();
    Value quantized = quant::QuantizeCastOp::create(
        b, ctx.loc(), withElementType(xt, q), x);
    Value stored = quant::StorageCastOp::create(
        b, ctx.loc(),
        withElementType(xt, b.getIntegerType(outElem->getWidth())), quantized);
    ctx.setOutput(0, fromSignless(ctx, stored, *outElem));
    return success();
  }
  auto scale = alignParam(ctx, toF32(ctx, ctx.input(1)), xt, *axis, "y_scale");
  if (failed(scale))
    return failure();
  Value zp;
  if (ctx.hasInput(2)) {
    auto z =
        alignParam(ctx, toF32(ctx, ctx.input(2)), xt, *axis, "y_zero_point");
    if (failed(z))
      return failure();
    zp = *z;
  }
  Value q = divF(ctx, toF32(ctx, x), *scale);
  ctx.setOutput(0, roundSaturate(ctx, q, zp, *outElem));
  return success();
}

/// y = (x - zero_point) * scale, per tensor or per axis, in the scale's type.
LogicalResult convertDequantizeLinear(NodeContext &ctx) {
  FailureOr<int64_t> axis = ctx.intAttr("axis", 1);
  if (failed(axis) || failed(checkNewQuantAttrs(ctx)))
    return failure();
  if (ctx.hasAttr("output_dtype") && failed(ctx.intAttr("output_dtype")))
    return failure();
  Value x = ctx.input(0);
  RankedTensorType xt = typeOf(x);
  if (!isa<IntegerType>(xt.getElementType()))
    return ctx.unsupported("dequantizing non-integer (float8) data");
  // Constant parameters: a quantized type, lowered by tessel-lower-quant.
  if (Type q = uniformType(ctx, xt, cast<IntegerType>(xt.getElementType()),
                           dyn_cast<FloatType>(elemOf(ctx.input(1))), *axis)) {
    OpBuilder &b = ctx.builder();
    Value quantized = quant::StorageCastOp::create(
        b, ctx.loc(), withElementType(xt, q), toSignless(ctx, x));
    ctx.setOutput(0, quant::DequantizeCastOp::create(
                         b, ctx.loc(),
                         withElementType(xt, elemOf(ctx.input(1))), quantized));
    return success();
  }
  auto scale = alignParam(ctx, ctx.input(1), xt, *axis, "x_scale");
  if (failed(scale))
    return failure();
  Value xi = toI32(ctx, x);
  if (ctx.hasInput(2)) {
    auto z =
        alignParam(ctx, toI32(ctx, ctx.input(2)), xt, *axis, "x_zero_point");
    if (failed(z))
      return failure();
    xi = ctx.tosa().sub(xi, *z);
  }
  Type outElem = elemOf(ctx.input(1));
  Value y = ctx.tosa().mul(toF32(ctx, xi), toF32(ctx, *scale));
  if (!outElem.isF32())
    y = arith::TruncFOp::create(ctx.builder(), ctx.loc(),
                                withElementType(typeOf(y), outElem), y);
  ctx.setOutput(0, y);
  return success();
}

/// uint8 quantization with scale and zero point from x's range (widened to
/// include 0): scale = (max - min) / 255, zero point =
/// round(saturate(0 - min / scale)).
LogicalResult convertDynamicQuantizeLinear(NodeContext &ctx) {
  tessel::TosaBuilder &tb = ctx.tosa();
  Value x = ctx.input(0);
  if (!elemOf(x).isF32())
    return ctx.unsupported("DynamicQuantizeLinear of non-f32 input");
  int64_t n = numElements(typeOf(x).getShape());
  Value flat = tb.reshape(x, {1, n});
  Value zero = tb.scalar(elemOf(x), 0.0, 2);
  Value lo = tosa::MinimumOp::create(
      ctx.builder(), ctx.loc(), zero.getType(), zero,
      tosa::ReduceMinOp::create(ctx.builder(), ctx.loc(), flat,
                                static_cast<uint32_t>(1)));
  Value hi = tb.maximum(zero, tb.reduceMax(flat, 1));
  Value scale = divF(ctx, tb.sub(hi, lo), tb.scalar(elemOf(x), 255.0, 2));
  Value zpF = math::RoundEvenOp::create(
      ctx.builder(), ctx.loc(),
      clampF(ctx, tb.sub(zero, divF(ctx, lo, scale)), 0.0, 255.0));
  auto u8 = IntegerType::get(ctx.context(), 8, IntegerType::Unsigned);
  SmallVector<int64_t> ones(rankOf(x), 1);
  Value q = divF(ctx, x, tb.reshape(scale, ones));
  ctx.setOutput(0, roundSaturate(ctx, q, tb.reshape(zpF, ones), u8));
  ctx.setOutput(1, tb.reshape(scale, {}));
  ctx.setOutput(2, roundSaturate(ctx, tb.reshape(zpF, {}), Value(), u8));
  return success();
}

//===----------------------------------------------------------------------===//
// Integer products
//===----------------------------------------------------------------------===//

/// An int8/uint8 operand moved into int8 range: uint8 values minus 128.
struct ShiftedOperand {
  Value i8;          // for tosa.matmul / tosa.conv2d
  Value i32;         // the same values, for sums
  int64_t shift = 0; // what was subtracted
};

FailureOr<ShiftedOperand> shiftToI8(NodeContext &ctx, Value x, StringRef name) {
  auto it = dyn_cast<IntegerType>(elemOf(x));
  if (!it || it.getWidth() != 8) {
    ctx.emitError() << name << " must be int8 or uint8, not " << elemOf(x);
    return failure();
  }
  ShiftedOperand s;
  s.shift = it.isUnsigned() ? 128 : 0;
  s.i32 = toI32(ctx, x);
  if (!s.shift) {
    s.i8 = x;
    return s;
  }
  s.i32 = ctx.tosa().sub(
      s.i32,
      splatConstant(ctx,
                    RankedTensorType::get(SmallVector<int64_t>(rankOf(x), 1),
                                          ctx.builder().getI32Type()),
                    128));
  s.i8 = fromI32(ctx, s.i32, ctx.builder().getI8Type());
  return s;
}

/// Input `input`, the zero point of an operand shifted by `shift`, shifted
/// alike, as i32 of shape `shape`; null when it is zero.
Value shiftedZeroPoint(NodeContext &ctx, unsigned input, int64_t shift,
                       ArrayRef<int64_t> shape) {
  auto i32Ty = RankedTensorType::get(shape, ctx.builder().getI32Type());
  if (!ctx.hasInput(input))
    return shift ? splatConstant(ctx, i32Ty, -static_cast<double>(shift))
                 : Value();
  Value z = ctx.tosa().reshape(toI32(ctx, ctx.input(input)), shape);
  return shift ? ctx.tosa().sub(z, splatConstant(ctx, i32Ty, shift)) : z;
}

Value i32Scalar(NodeContext &ctx, int64_t rank, double v) {
  return splatConstant(ctx,
                       RankedTensorType::get(SmallVector<int64_t>(rank, 1),
                                             ctx.builder().getI32Type()),
                       v);
}

/// sum (a - za)(b - zb) from s = sum ab, sa = sum a (broadcast over b's
/// axis), sb = sum b, K terms: s - zb sa - za sb + K za zb. Null zero
/// points are zero. All operands i32 of equal rank (broadcastable).
Value applyZeroPoints(NodeContext &ctx, Value s, Value sa, Value sb, Value za,
                      Value zb, int64_t k) {
  tessel::TosaBuilder &tb = ctx.tosa();
  int64_t rank = rankOf(s);
  if (zb)
    s = tb.sub(s, tb.mul(zb, sa));
  if (za)
    s = tb.sub(s, tb.mul(za, sb));
  if (za && zb)
    s = tb.add(s, tb.mul(i32Scalar(ctx, rank, static_cast<double>(k)),
                         tb.mul(za, zb)));
  return s;
}

/// Shapes a MatMulInteger zero point to broadcast against [..., M, N]:
/// one element (per tensor), 1-D per row of A (`perRow`: [M] -> [M, 1]) or
/// per column of B ([N] -> [1, N]), or N-D as given.
SmallVector<int64_t> matmulZpShape(Value zp, bool perRow, int64_t rank) {
  ArrayRef<int64_t> s = typeOf(zp).getShape();
  SmallVector<int64_t> dims;
  if (numElements(s) == 1 && s.size() <= 1)
    dims.assign(rank, 1);
  else if (s.size() == 1)
    dims =
        perRow ? SmallVector<int64_t>{s[0], 1} : SmallVector<int64_t>{1, s[0]};
  else
    dims.assign(s.begin(), s.end());
  while (static_cast<int64_t>(dims.size()) < rank)
    dims.insert(dims.begin(), 1);
  return dims;
}

/// (A - a_zp) @ (B - b_zp) in i32 with numpy matmul semantics, from the
/// node's inputs `ia` (A), `ib` (B), `iza` (a_zp), `izb` (b_zp).
FailureOr<Value> integerMatMul(NodeContext &ctx, unsigned ia, unsigned ib,
                               unsigned iza, unsigned izb) {
  tessel::TosaBuilder &tb = ctx.tosa();
  auto a = shiftToI8(ctx, ctx.input(ia), "A");
  auto b = shiftToI8(ctx, ctx.input(ib), "B");
  if (failed(a) || failed(b))
    return failure();
  int64_t ra = rankOf(a->i8), rb = rankOf(b->i8);
  if (ra == 0 || rb == 0)
    return ctx.emitError() << "operands must have rank >= 1";
  bool dropM = ra == 1, dropN = rb == 1;
  auto promote = [&](ShiftedOperand &o, ArrayRef<int64_t> dims) {
    o.i8 = tb.reshape(o.i8, dims);
    o.i32 = tb.reshape(o.i32, dims);
  };
  if (dropM)
    promote(*a, {1, typeOf(a->i8).getDimSize(0)});
  if (dropN)
    promote(*b, {typeOf(b->i8).getDimSize(0), 1});
  ArrayRef<int64_t> sa = typeOf(a->i8).getShape(),
                    sb = typeOf(b->i8).getShape();
  int64_t m = sa[sa.size() - 2], k = sa.back(), n = sb.back();
  if (sb[sb.size() - 2] != k)
    return ctx.emitError() << "inner dimensions differ: [" << sa << "] x ["
                           << sb << "]";
  auto batch = broadcastShape(ctx, sa.drop_back(2), sb.drop_back(2));
  if (failed(batch))
    return failure();
  int64_t nb = numElements(*batch);
  SmallVector<int64_t> fullA(*batch), fullB(*batch), outShape(*batch);
  fullA.append({m, k});
  fullB.append({k, n});
  outShape.append({m, n});
  Value a3 = tb.reshape(broadcastTo(ctx, a->i8, fullA), {nb, m, k});
  Value b3 = tb.reshape(broadcastTo(ctx, b->i8, fullB), {nb, k, n});
  Value i8zp = ctx.materializeConstant(DenseElementsAttr::get(
      RankedTensorType::get({1}, ctx.builder().getI8Type()),
      ctx.builder().getI8IntegerAttr(0)));
  Value s = tosa::MatMulOp::create(
      ctx.builder(), ctx.loc(),
      RankedTensorType::get({nb, m, n}, ctx.builder().getI32Type()), a3, b3,
      i8zp, i8zp);
  int64_t rank = outShape.size();
  s = tb.reshape(s, outShape);
  auto zpShape = [&](unsigned i, bool perRow) {
    return ctx.hasInput(i) ? matmulZpShape(ctx.input(i), perRow, rank)
                           : SmallVector<int64_t>(rank, 1);
  };
  Value za = shiftedZeroPoint(ctx, iza, a->shift, zpShape(iza, true));
  Value zb = shiftedZeroPoint(ctx, izb, b->shift, zpShape(izb, false));
  // Row sums of A [..., M, 1] and column sums of B [..., 1, N].
  Value rowA = expandRank(ctx, tb.reduceSum(a->i32, rankOf(a->i32) - 1), rank);
  Value colB = expandRank(ctx, tb.reduceSum(b->i32, rankOf(b->i32) - 2), rank);
  Value y = applyZeroPoints(ctx, s, rowA, colB, za, zb, k);
  SmallVector<int64_t> finalShape(*batch);
  if (!dropM)
    finalShape.push_back(m);
  if (!dropN)
    finalShape.push_back(n);
  return tb.reshape(y, finalShape);
}

LogicalResult convertMatMulInteger(NodeContext &ctx) {
  FailureOr<Value> y = integerMatMul(ctx, 0, 1, 2, 3);
  if (failed(y))
    return failure();
  ctx.setOutput(0, *y);
  return success();
}

//===----------------------------------------------------------------------===//
// Integer convolution
//===----------------------------------------------------------------------===//

/// Window geometry of a 2-D convolution (1-D ones get a unit H).
struct ConvGeometry {
  SmallVector<int64_t, 2> strides, dilations, lo, hi, out;
};

LogicalResult checkList(NodeContext &ctx, StringRef name, ArrayRef<int64_t> v,
                        size_t want, int64_t min) {
  if (v.size() != want)
    return ctx.attrError(name, "has " + std::to_string(v.size()) +
                                   " values, expected " + std::to_string(want));
  if (llvm::any_of(v, [&](int64_t x) { return x < min; }))
    return ctx.attrError(name, "must have values >= " + std::to_string(min));
  return success();
}

/// Reads strides, dilations, pads, auto_pad, kernel_shape and group (which
/// must be 1) for spatial input `in` and kernel `kernel`.
FailureOr<ConvGeometry> readConvGeometry(NodeContext &ctx, ArrayRef<int64_t> in,
                                         ArrayRef<int64_t> kernel) {
  size_t n = in.size();
  auto strides = ctx.intsAttr("strides", SmallVector<int64_t>(n, 1));
  auto dilations = ctx.intsAttr("dilations", SmallVector<int64_t>(n, 1));
  auto pads = ctx.intsAttr("pads", SmallVector<int64_t>(2 * n, 0));
  auto autoPad = ctx.stringAttr("auto_pad", std::string("NOTSET"));
  auto group = ctx.intAttr("group", 1);
  auto kshape = ctx.intsAttr("kernel_shape", SmallVector<int64_t>(kernel));
  if (failed(strides) || failed(dilations) || failed(pads) || failed(autoPad) ||
      failed(group) || failed(kshape) ||
      failed(checkList(ctx, "strides", *strides, n, 1)) ||
      failed(checkList(ctx, "dilations", *dilations, n, 1)) ||
      failed(checkList(ctx, "pads", *pads, 2 * n, 0)))
    return failure();
  if (*group != 1)
    return ctx.attrError("group", "= " + std::to_string(*group) +
                                      " is not supported (only 1)");
  if (ArrayRef<int64_t>(*kshape) != kernel)
    return ctx.attrError("kernel_shape", "differs from the weight's shape");
  ConvGeometry g;
  g.strides.assign(strides->begin(), strides->end());
  g.dilations.assign(dilations->begin(), dilations->end());
  g.lo.assign(pads->begin(), pads->begin() + n);
  g.hi.assign(pads->begin() + n, pads->end());
  bool same = *autoPad == "SAME_UPPER" || *autoPad == "SAME_LOWER";
  if (*autoPad != "NOTSET" && *autoPad != "VALID" && !same)
    return ctx.attrError("auto_pad", "= '" + *autoPad +
                                         "' is not NOTSET, SAME_UPPER, "
                                         "SAME_LOWER or VALID");
  if (*autoPad != "NOTSET" &&
      llvm::any_of(*pads, [](int64_t p) { return p != 0; }))
    return ctx.attrError("pads", "cannot be combined with auto_pad");
  for (size_t i = 0; i < n; ++i) {
    int64_t eff = g.dilations[i] * (kernel[i] - 1) + 1;
    if (same) {
      int64_t out = (in[i] + g.strides[i] - 1) / g.strides[i];
      int64_t total =
          std::max<int64_t>(0, (out - 1) * g.strides[i] + eff - in[i]);
      g.lo[i] = *autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      g.hi[i] = total - g.lo[i];
    }
    int64_t span = in[i] + g.lo[i] + g.hi[i] - eff;
    if (span < 0)
      return ctx.emitError() << "kernel is larger than the padded input";
    g.out.push_back(span / g.strides[i] + 1);
  }
  return g;
}

/// Pads NHWC `x` spatially by lo/hi with `padValue` ([1]), dropping the
/// trailing rows/cols no window reaches (tosa.conv2d wants them gone).
Value padForConv(NodeContext &ctx, Value x, const ConvGeometry &g,
                 ArrayRef<int64_t> kernel, Value padValue) {
  tessel::TosaBuilder &tb = ctx.tosa();
  SmallVector<int64_t> shape(typeOf(x).getShape());
  SmallVector<int64_t> pads{0, 0};
  SmallVector<int64_t> keep(shape);
  for (size_t i = 0; i < 2; ++i) {
    int64_t eff = g.dilations[i] * (kernel[i] - 1) + 1;
    int64_t need = (g.out[i] - 1) * g.strides[i] + eff;
    int64_t hi = need - shape[i + 1] - g.lo[i]; // may be negative: crop
    keep[i + 1] = shape[i + 1] + std::min<int64_t>(hi, 0);
    pads.append({g.lo[i], std::max<int64_t>(hi, 0)});
  }
  pads.append({0, 0});
  if (keep != shape)
    x = tb.slice(x, {0, 0, 0, 0}, keep);
  if (llvm::all_of(pads, [](int64_t p) { return p == 0; }))
    return x;
  SmallVector<int64_t> padded(keep);
  for (size_t i = 0; i < 4; ++i)
    padded[i] += pads[2 * i] + pads[2 * i + 1];
  return tosa::PadOp::create(ctx.builder(), ctx.loc(),
                             withShape(typeOf(x), padded), x, tb.shape(pads),
                             padValue);
}

/// tosa.conv2d of i8 NHWC `x` and OHWI `w`, unpadded, i32 result.
Value conv2dI8(NodeContext &ctx, Value x, Value w, const ConvGeometry &g) {
  OpBuilder &b = ctx.builder();
  int64_t o = typeOf(w).getDimSize(0);
  Type i32 = b.getI32Type(), i8 = b.getI8Type();
  Value bias = splatConstant(ctx, RankedTensorType::get({o}, i32), 0);
  Value zp = splatConstant(ctx, RankedTensorType::get({1}, i8), 0);
  auto outTy = RankedTensorType::get(
      {typeOf(x).getDimSize(0), g.out[0], g.out[1], o}, i32);
  return tosa::Conv2DOp::create(
      b, ctx.loc(), outTy, x, w, bias, zp, zp,
      b.getDenseI64ArrayAttr({0, 0, 0, 0}), b.getDenseI64ArrayAttr(g.strides),
      b.getDenseI64ArrayAttr(g.dilations), TypeAttr::get(i32));
}

/// conv(x - x_zp, w - w_zp) in i32, NCHW (or NCW) like ONNX. Inputs x, w,
/// x_zp, w_zp are the node's inputs at the given indices. Padding holds
/// x_zp, i.e. contributes nothing.
FailureOr<Value> integerConv(NodeContext &ctx, unsigned ix, unsigned iw,
                             unsigned izx, unsigned izw) {
  tessel::TosaBuilder &tb = ctx.tosa();
  Value xIn = ctx.input(ix), wIn = ctx.input(iw);
  int64_t rank = rankOf(xIn);
  if ((rank != 3 && rank != 4) || rankOf(wIn) != rank)
    return ctx.unsupported("integer convolution other than 1-D and 2-D");
  auto x = shiftToI8(ctx, xIn, "x");
  auto w = shiftToI8(ctx, wIn, "w");
  if (failed(x) || failed(w))
    return failure();
  ArrayRef<int64_t> xs = typeOf(xIn).getShape(), ws = typeOf(wIn).getShape();
  SmallVector<int64_t> inSp(xs.drop_front(2)), kSp(ws.drop_front(2));
  auto geom = readConvGeometry(ctx, inSp, kSp);
  if (failed(geom))
    return failure();
  if (ws[1] != xs[1])
    return ctx.emitError() << "w has " << ws[1] << " input channels, x has "
                           << xs[1];
  if (rank == 3) { // 1-D: a 2-D convolution with unit H
    geom->strides.insert(geom->strides.begin(), 1);
    geom->dilations.insert(geom->dilations.begin(), 1);
    geom->lo.insert(geom->lo.begin(), 0);
    geom->hi.insert(geom->hi.begin(), 0);
    geom->out.insert(geom->out.begin(), 1);
    inSp.insert(inSp.begin(), 1);
    kSp.insert(kSp.begin(), 1);
  }
  int64_t nBatch = xs[0], c = xs[1], mOut = ws[0];
  auto zpSize = [&](unsigned i) {
    return ctx.hasInput(i) ? numElements(typeOf(ctx.input(i)).getShape()) : 1;
  };
  if (zpSize(izx) != 1)
    return ctx.emitError() << "x_zero_point must have one element";
  if (zpSize(izw) != 1 && zpSize(izw) != mOut)
    return ctx.emitError() << "w_zero_point must have 1 or " << mOut
                           << " (output channels) elements";
  Value x4 = tb.reshape(x->i8, {nBatch, c, inSp[0], inSp[1]});
  Value w4 = tb.reshape(w->i8, {mOut, c, kSp[0], kSp[1]});
  Value wI32 = tb.reshape(w->i32, {mOut, c, kSp[0], kSp[1]});
  // x's zero point (per tensor), shifted like x: the padding value.
  Value za = shiftedZeroPoint(ctx, izx, x->shift, {1, 1, 1, 1});
  Value padValue =
      za ? fromI32(ctx, tb.reshape(za, {1}), ctx.builder().getI8Type())
         : splatConstant(
               ctx, RankedTensorType::get({1}, ctx.builder().getI8Type()), 0);
  Value xp = padForConv(ctx, toNHWC(ctx, x4), *geom, kSp, padValue);
  Value wOHWI = tb.transpose(w4, {0, 2, 3, 1});
  Value s = conv2dI8(ctx, xp, wOHWI, *geom);          // [N, OH, OW, M]
  SmallVector<int64_t> zwShape{1, 1, 1, zpSize(izw)}; // per tensor/channel
  Value zw = shiftedZeroPoint(ctx, izw, w->shift, zwShape);
  // Window sums of x (a conv with ones) and per-channel sums of w.
  Value sx;
  if (zw) {
    auto onesTy = RankedTensorType::get({1, kSp[0], kSp[1], c},
                                        ctx.builder().getI8Type());
    sx = conv2dI8(ctx, xp, splatConstant(ctx, onesTy, 1), *geom);
  }
  Value sw;
  if (za) {
    Value flat = tb.reshape(wI32, {mOut, c * kSp[0] * kSp[1]});
    sw = tb.reshape(tb.reduceSum(flat, 1), {1, 1, 1, mOut});
  }
  Value y = applyZeroPoints(ctx, s, sx, sw, za, zw, c * kSp[0] * kSp[1]);
  y = toNCHW(ctx, y);
  if (rank == 3)
    y = tb.reshape(y, {nBatch, mOut, geom->out[1]});
  return y;
}

LogicalResult convertConvInteger(NodeContext &ctx) {
  FailureOr<Value> y = integerConv(ctx, 0, 1, 2, 3);
  if (failed(y))
    return failure();
  ctx.setOutput(0, *y);
  return success();
}

//===----------------------------------------------------------------------===//
// QLinear ops: integer product, then requantization
//===----------------------------------------------------------------------===//

/// A per-tensor scale as an f32 tensor of rank `rank` (all dims 1), or a
/// 1-D one placed at dim `axis`.
FailureOr<Value> scaleAt(NodeContext &ctx, unsigned input, int64_t rank,
                         int64_t axis, int64_t axisSize, StringRef name) {
  Value s = toF32(ctx, ctx.input(input));
  ArrayRef<int64_t> shape = typeOf(s).getShape();
  SmallVector<int64_t> dims(rank, 1);
  if (numElements(shape) == 1 && shape.size() <= 1)
    return ctx.tosa().reshape(s, dims);
  if (shape.size() != 1 || shape[0] != axisSize)
    return ctx.emitError() << name << " of shape [" << shape
                           << "] is neither per-tensor nor 1-D of " << axisSize
                           << " elements";
  dims[axis] = axisSize;
  return ctx.tosa().reshape(s, dims);
}

/// saturate(round(acc * (sa * sb / sy)) + y_zp) into y_zp's type (uint8
/// when absent), with the multiplier computed in f32 as ONNX Runtime does.
LogicalResult requantize(NodeContext &ctx, Value acc, Value sa, Value sb,
                         Value sy, unsigned izy) {
  tessel::TosaBuilder &tb = ctx.tosa();
  Value mult = tb.mul(sa, sb);
  mult = divF(ctx, mult, sy);
  int64_t rank = rankOf(acc);
  Value zp;
  Type outElem = IntegerType::get(ctx.context(), 8, IntegerType::Unsigned);
  if (ctx.hasInput(izy)) {
    Value z = ctx.input(izy);
    outElem = elemOf(z);
    if (numElements(typeOf(z).getShape()) != 1)
      return ctx.emitError() << "y_zero_point must have one element";
    zp = ctx.tosa().reshape(toF32(ctx, z), SmallVector<int64_t>(rank, 1));
  } else if (RankedTensorType t = ctx.inferredOutputType(0)) {
    outElem = t.getElementType();
  }
  auto it = dyn_cast<IntegerType>(outElem);
  if (!it || it.getWidth() != 8)
    return ctx.emitError() << "output must be int8 or uint8";
  // Scales have rank >= 1; a rank-0 product takes them as scalars.
  mult = rank == 0 ? tb.reshape(mult, {}) : expandRank(ctx, mult, rank);
  Value v = tb.mul(toF32(ctx, acc), mult);
  ctx.setOutput(0, roundSaturate(ctx, v, zp, it));
  return success();
}

/// Inputs: a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp.
LogicalResult convertQLinearMatMul(NodeContext &ctx) {
  FailureOr<Value> acc = integerMatMul(ctx, 0, 3, 2, 5);
  if (failed(acc))
    return failure();
  int64_t rank = rankOf(*acc);
  int64_t n = rank >= 1 && rankOf(ctx.input(3)) >= 2
                  ? typeOf(*acc).getDimSize(rank - 1)
                  : 1;
  auto sa = scaleAt(ctx, 1, std::max<int64_t>(rank, 1), 0, 1, "a_scale");
  auto sb = scaleAt(ctx, 4, std::max<int64_t>(rank, 1),
                    std::max<int64_t>(rank, 1) - 1, n, "b_scale");
  auto sy = scaleAt(ctx, 6, std::max<int64_t>(rank, 1), 0, 1, "y_scale");
  if (failed(sa) || failed(sb) || failed(sy))
    return failure();
  return requantize(ctx, *acc, *sa, *sb, *sy, 7);
}

/// Inputs: x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B (int32).
LogicalResult convertQLinearConv(NodeContext &ctx) {
  FailureOr<Value> acc = integerConv(ctx, 0, 3, 2, 5);
  if (failed(acc))
    return failure();
  tessel::TosaBuilder &tb = ctx.tosa();
  int64_t rank = rankOf(*acc), m = typeOf(*acc).getDimSize(1);
  Value y = *acc;
  if (ctx.hasInput(8)) {
    Value bias = ctx.input(8);
    if (!elemOf(bias).isInteger(32) || rankOf(bias) != 1 ||
        typeOf(bias).getDimSize(0) != m)
      return ctx.emitError() << "B must be int32 of shape [" << m << "]";
    SmallVector<int64_t> dims(rank, 1);
    dims[1] = m;
    y = tb.add(y, tb.reshape(bias, dims));
  }
  auto sx = scaleAt(ctx, 1, rank, 1, 1, "x_scale");
  auto sw = scaleAt(ctx, 4, rank, 1, m, "w_scale");
  auto sy = scaleAt(ctx, 6, rank, 1, 1, "y_scale");
  if (failed(sx) || failed(sw) || failed(sy))
    return failure();
  return requantize(ctx, y, *sx, *sw, *sy, 7);
}

} // namespace

void mlir::tessel::onnx_import::registerQuantizationConverters(
    ConverterMap &map) {
  map["QuantizeLinear"] = convertQuantizeLinear;
  map["DequantizeLinear"] = convertDequantizeLinear;
  map["DynamicQuantizeLinear"] = convertDynamicQuantizeLinear;
  map["MatMulInteger"] = convertMatMulInteger;
  map["ConvInteger"] = convertConvInteger;
  map["QLinearMatMul"] = convertQLinearMatMul;
  map["QLinearConv"] = convertQLinearConv;
}
