//===- Common.cpp - Helpers shared by the ONNX op converters ---------------===//
#include "Common.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "tessel/Dialect/Tessel/IR/TesselDialect.h"

using namespace mlir;
using namespace mlir::tessel::onnx_import;

FailureOr<int64_t> mlir::tessel::onnx_import::normalizeAxis(
    NodeContext &ctx, int64_t axis, int64_t rank, StringRef attrName) {
  if (axis < -rank || axis >= rank) {
    (void)ctx.attrError(attrName, "= " + std::to_string(axis) +
                                      " is out of range for rank " +
                                      std::to_string(rank));
    return failure();
  }
  return axis < 0 ? axis + rank : axis;
}

FailureOr<int64_t> mlir::tessel::onnx_import::readAxis(NodeContext &ctx,
                                                      StringRef name,
                                                      int64_t dflt,
                                                      int64_t rank) {
  FailureOr<int64_t> axis = ctx.intAttr(name, dflt);
  if (failed(axis))
    return failure();
  return normalizeAxis(ctx, *axis, rank, name);
}

RankedTensorType mlir::tessel::onnx_import::withShape(RankedTensorType t,
                                                      ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, t.getElementType());
}

RankedTensorType mlir::tessel::onnx_import::withElementType(RankedTensorType t,
                                                            Type elem) {
  return RankedTensorType::get(t.getShape(), elem);
}

LogicalResult mlir::tessel::onnx_import::checkShape(NodeContext &ctx,
                                                   ArrayRef<int64_t> shape,
                                                   StringRef what) {
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return ctx.emitError() << what << " has a negative dimension ([" << shape
                             << "])";
    if (d != 0 && count > kMaxElements / d)
      return ctx.emitError() << what << " [" << shape << "] has more than "
                             << kMaxElements << " elements";
    count *= d;
  }
  return success();
}

int64_t mlir::tessel::onnx_import::numElements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

int64_t mlir::tessel::onnx_import::staticNumElements(ArrayRef<int64_t> shape) {
  return llvm::any_of(shape, ShapedType::isDynamic) ? ShapedType::kDynamic
                                                    : numElements(shape);
}

Value mlir::tessel::onnx_import::expandRank(NodeContext &ctx, Value v,
                                            int64_t rank) {
  auto t = cast<RankedTensorType>(v.getType());
  if (t.getRank() >= rank)
    return v;
  SmallVector<int64_t> dims(rank - t.getRank(), 1);
  llvm::append_range(dims, t.getShape());
  if (t.hasStaticShape())
    return ctx.tosa().reshape(v, dims);
  // Sizes known only at run time (RunTimeShapes.cpp): the leading 1s join
  // the first dimension's group.
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d < t.getRank(); ++d)
    groups.push_back({d + rank - t.getRank()});
  for (int64_t d = rank - t.getRank() - 1; d >= 0; --d)
    groups.front().insert(groups.front().begin(), d);
  SmallVector<OpFoldResult> sizes;
  for (int64_t d = 0; d < rank; ++d)
    sizes.push_back(ShapedType::isDynamic(dims[d])
                        ? OpFoldResult(tensor::DimOp::create(
                              ctx.builder(), ctx.loc(), v,
                              d - (rank - t.getRank())).getResult())
                        : OpFoldResult(ctx.builder().getIndexAttr(dims[d])));
  return tensor::ExpandShapeOp::create(ctx.builder(), ctx.loc(),
                                       withShape(t, dims), v, groups, sizes);
}

FailureOr<SmallVector<int64_t>> mlir::tessel::onnx_import::broadcastShape(
    NodeContext &ctx, ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    // A size known only at run time (RunTimeShapes.cpp) takes the other's
    // unless that is 1; tessel-check-broadcasts checks it at run time.
    if (ShapedType::isDynamic(da) || ShapedType::isDynamic(db)) {
      out[i] = da == 1 ? db : db == 1 ? da
               : ShapedType::isDynamic(da) ? db : da;
      continue;
    }
    if (da != db && da != 1 && db != 1) {
      ctx.emitError() << "inputs of shapes [" << a << "] and [" << b
                      << "] cannot be broadcast together";
      return failure();
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

FailureOr<std::pair<Value, Value>>
mlir::tessel::onnx_import::equalizeRanks(NodeContext &ctx, Value a, Value b) {
  auto ta = cast<RankedTensorType>(a.getType());
  auto tb = cast<RankedTensorType>(b.getType());
  if (failed(broadcastShape(ctx, ta.getShape(), tb.getShape())))
    return failure();
  int64_t rank = std::max(ta.getRank(), tb.getRank());
  return std::make_pair(expandRank(ctx, a, rank), expandRank(ctx, b, rank));
}

Value mlir::tessel::onnx_import::broadcastTo(NodeContext &ctx, Value v,
                                             ArrayRef<int64_t> shape) {
  auto t = cast<RankedTensorType>(v.getType());
  if (t.getShape() == shape)
    return v;
  v = expandRank(ctx, v, shape.size());
  t = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> multiples;
  for (auto [have, want] : llvm::zip(t.getShape(), shape))
    multiples.push_back(have == want ? 1 : want);
  return tosa::TileOp::create(ctx.builder(), ctx.loc(), withShape(t, shape), v,
                              ctx.tosa().shape(multiples));
}

Value mlir::tessel::onnx_import::toNHWC(NodeContext &ctx, Value nchw) {
  return ctx.tosa().transpose(nchw, {0, 2, 3, 1});
}

Value mlir::tessel::onnx_import::toNCHW(NodeContext &ctx, Value nhwc) {
  return ctx.tosa().transpose(nhwc, {0, 3, 1, 2});
}

std::optional<SmallVector<std::optional<int64_t>>>
mlir::tessel::onnx_import::knownInts(Value v, SmallVectorImpl<std::string> *names) {
  using Known = SmallVector<std::optional<int64_t>>;
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || !type.hasStaticShape() || type.getNumElements() > 64 ||
      !isa<IntegerType>(type.getElementType()))
    return std::nullopt;
  DenseElementsAttr c;
  if (matchPattern(v, m_Constant(&c))) {
    Known out;
    for (int64_t x : toInts(c)) {
      out.push_back(x);
      if (names)
        names->push_back({});
    }
    return out;
  }
  Operation *op = v.getDefiningOp();
  if (!op)
    return std::nullopt;
  if (auto fe = dyn_cast<tensor::FromElementsOp>(op)) {
    Known out;
    auto given = fe->getAttrOfType<ArrayAttr>(kSizeNamesAttr);
    for (auto [i, e] : llvm::enumerate(fe.getElements())) {
      while (auto cast = e.getDefiningOp<arith::IndexCastOp>())
        e = cast.getIn();
      APInt x;
      bool known = matchPattern(e, m_ConstantInt(&x));
      out.push_back(known ? std::optional<int64_t>(x.getSExtValue())
                          : std::nullopt);
      if (!names)
        continue;
      std::string name;
      if (!known && given && i < given.size())
        if (auto s = dyn_cast<StringAttr>(given[i]))
          name = s.str();
      if (!known && name.empty())
        name = sizeNameOf(e);
      names->push_back(name);
    }
    return out;
  }
  if (isa<tosa::ReshapeOp, tensor::ReshapeOp, tensor::ExpandShapeOp,
          tensor::CollapseShapeOp>(op))
    return knownInts(op->getOperand(0), names);
  if (auto cast = dyn_cast<tosa::CastOp>(op)) {
    // Sizes and shape entries fit any integer type they are cast to.
    auto from = dyn_cast<RankedTensorType>(cast.getInput().getType());
    if (!from || !isa<IntegerType>(from.getElementType()) ||
        from.getElementType().getIntOrFloatBitWidth() < 32 ||
        type.getElementType().getIntOrFloatBitWidth() < 32)
      return std::nullopt;
    return knownInts(cast.getInput(), names);
  }
  if (auto concat = dyn_cast<tosa::ConcatOp>(op)) {
    if (type.getRank() != 1 || concat.getAxis() != 0)
      return std::nullopt;
    // A part not followed (a product of run-time sizes: batch * heads)
    // leaves its entries unknown, not the others: the head size beside it
    // stays static.
    Known out;
    for (Value part : concat.getInput1()) {
      size_t mark = names ? names->size() : 0;
      if (std::optional<Known> k = knownInts(part, names)) {
        out.append(k->begin(), k->end());
        continue;
      }
      auto partType = dyn_cast<RankedTensorType>(part.getType());
      if (!partType || partType.getRank() != 1 ||
          partType.isDynamicDim(0))
        return std::nullopt;
      out.append(partType.getDimSize(0), std::nullopt);
      if (names)
        names->resize(mark + partType.getDimSize(0));
    }
    return out;
  }
  return std::nullopt;
}

SmallVector<int64_t> mlir::tessel::onnx_import::toInts(DenseElementsAttr a) {
  SmallVector<int64_t> out;
  if (isa<IntegerType>(a.getElementType())) {
    bool isUnsigned = a.getElementType().isUnsignedInteger();
    for (const APInt &v : a.getValues<APInt>())
      out.push_back(isUnsigned || v.getBitWidth() == 1 ? v.getZExtValue()
                                                       : v.getSExtValue());
  } else {
    for (const APFloat &v : a.getValues<APFloat>())
      out.push_back(static_cast<int64_t>(v.convertToDouble()));
  }
  return out;
}

SmallVector<double> mlir::tessel::onnx_import::toDoubles(DenseElementsAttr a) {
  SmallVector<double> out;
  if (isa<FloatType>(a.getElementType())) {
    for (const APFloat &v : a.getValues<APFloat>())
      out.push_back(v.convertToDouble());
  } else {
    for (int64_t v : toInts(a))
      out.push_back(static_cast<double>(v));
  }
  return out;
}

DenseElementsAttr mlir::tessel::onnx_import::intsAttr(RankedTensorType type,
                                                      ArrayRef<int64_t> values) {
  Type et = type.getElementType();
  if (isa<FloatType>(et)) {
    SmallVector<double> d(values.begin(), values.end());
    return doublesAttr(type, d);
  }
  auto it = cast<IntegerType>(et);
  SmallVector<APInt> apints;
  for (int64_t v : values)
    apints.push_back(APInt(it.getWidth(), static_cast<uint64_t>(v),
                           /*isSigned=*/it.getWidth() > 1 && !it.isUnsigned(),
                           /*implicitTrunc=*/true));
  return DenseElementsAttr::get(type, apints);
}

DenseElementsAttr mlir::tessel::onnx_import::doublesAttr(RankedTensorType type,
                                                         ArrayRef<double> values) {
  Type et = type.getElementType();
  if (auto ft = dyn_cast<FloatType>(et)) {
    SmallVector<APFloat> apf;
    for (double v : values) {
      APFloat f(v);
      bool lost;
      f.convert(ft.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      apf.push_back(f);
    }
    return DenseElementsAttr::get(type, apf);
  }
  SmallVector<int64_t> ints;
  for (double v : values)
    ints.push_back(static_cast<int64_t>(v));
  return intsAttr(type, ints);
}

Value mlir::tessel::onnx_import::splatConstant(NodeContext &ctx,
                                               RankedTensorType type,
                                               double value) {
  // A splat attribute: one element's storage whatever the shape.
  auto one = RankedTensorType::get({1}, type.getElementType());
  Attribute element = *doublesAttr(one, {value}).getValues<Attribute>().begin();
  return ctx.materializeConstant(DenseElementsAttr::get(type, element));
}

Value mlir::tessel::onnx_import::mapScalars(
    NodeContext &ctx, Value x, Type outElem,
    function_ref<Value(OpBuilder &, Location, Value)> fn) {
  auto outTy = withElementType(cast<RankedTensorType>(x.getType()), outElem);
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < outTy.getRank(); ++d)
    if (outTy.isDynamicDim(d))
      sizes.push_back(tensor::DimOp::create(ctx.builder(), ctx.loc(), x, d));
  return tensor::GenerateOp::create(
      ctx.builder(), ctx.loc(), outTy, sizes,
      [&](OpBuilder &b, Location loc, ValueRange ivs) {
        Value e = tensor::ExtractOp::create(b, loc, x, ivs);
        tensor::YieldOp::create(b, loc, fn(b, loc, e));
      });
}

Value mlir::tessel::onnx_import::reinterpret(OpBuilder &b, Location loc,
                                             Value v, Type to) {
  return UnrealizedConversionCastOp::create(b, loc, TypeRange{to},
                                            ValueRange{v})
      .getResult(0);
}

/// How an op takes 64-bit unsigned inputs, which no wider signed type
/// holds: as the same bits in i64 where that is exact (wrapping
/// arithmetic, bitwise ops, equality, selection; BitShift's shifts are
/// logical and its amount compared unsigned), or with the sign bit flipped
/// where it orders them (x ^ 2^63 orders signed as x does unsigned: max,
/// min, comparisons, clip, pooling; values flipped back after). Division
/// and remainder take u64 as it is and divide unsigned: Native.
enum class U64Form { None, Bits, Flipped, Native };
static U64Form u64Form(StringRef op) {
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Sum" ||
      op == "BitwiseAnd" || op == "BitwiseOr" || op == "BitwiseXor" ||
      op == "Equal" || op == "Where" || op == "BitShift")
    return U64Form::Bits;
  if (op == "Max" || op == "Min" || op == "Greater" ||
      op == "GreaterOrEqual" || op == "Less" || op == "LessOrEqual" ||
      op == "ReduceMax" || op == "ReduceMin" || op == "ArgMax" ||
      op == "ArgMin" || op == "Clip" || op == "MaxPool")
    return U64Form::Flipped;
  if (op == "Div" || op == "Mod")
    return U64Form::Native;
  return U64Form::None;
}

/// x ^ 2^63 (i64).
static Value flipSign(NodeContext &ctx, Value x) {
  auto t = cast<RankedTensorType>(x.getType());
  auto one = RankedTensorType::get(SmallVector<int64_t>(t.getRank(), 1),
                                   t.getElementType());
  Value bit = ctx.materializeConstant(DenseElementsAttr::get(
      one, APInt::getSignedMinValue(64)));
  return tosa::BitwiseXorOp::create(ctx.builder(), ctx.loc(), t, x, bit);
}

LogicalResult mlir::tessel::onnx_import::convertViaSignless(NodeContext &ctx,
                                                           Converter convert) {
  Type unsignedTy, widened;
  bool flipped = false;
  for (unsigned i = 0; i < ctx.numInputs(); ++i) {
    RankedTensorType t = ctx.inputType(i);
    if (!t || !t.getElementType().isUnsignedInteger())
      continue;
    unsigned width = t.getElementType().getIntOrFloatBitWidth();
    if (width == 64 && u64Form(ctx.opType()) == U64Form::Native)
      continue;
    unsignedTy = t.getElementType();
    // u8 and u16 in i32, u32 in i64 (every value, non-negative), u64 as
    // its bits in i64, flipped or not (u64Form).
    widened = ctx.builder().getIntegerType(width <= 16 ? 32 : 64);
    Value v = castValue(ctx, ctx.input(i), widened);
    if (width == 64) {
      U64Form form = u64Form(ctx.opType());
      if (form == U64Form::None)
        return ctx.unsupported(ctx.opType() + " of unsigned 64-bit integers "
                                              "(it needs unsigned 64-bit "
                                              "division)");
      if (form == U64Form::Flipped) {
        v = flipSign(ctx, v);
        flipped = true;
      }
    }
    ctx.replaceInput(i, v);
  }
  if (failed(convert(ctx)))
    return failure();
  if (!unsignedTy)
    return success();
  // Outputs of the widened type are the unsigned result widened (ArgMax's
  // and ArgMin's i64 are indices, not values).
  bool indices = ctx.opType() == "ArgMax" || ctx.opType() == "ArgMin";
  for (unsigned i = 0; i < ctx.numOutputs() && !indices; ++i) {
    Value v = ctx.output(i);
    if (v && cast<RankedTensorType>(v.getType()).getElementType() == widened)
      ctx.setOutput(i, castValue(ctx, flipped ? flipSign(ctx, v) : v,
                                 unsignedTy));
  }
  return success();
}

Value mlir::tessel::onnx_import::wrapIndices(NodeContext &ctx, Value indices,
                                            int64_t dim, bool checked) {
  Type i32 = ctx.builder().getI32Type();
  RankedTensorType t = cast<RankedTensorType>(indices.getType());
  if (checked)
    indices = tessel::CheckIndicesOp::create(ctx.builder(), ctx.loc(), t,
                                             indices, -dim, dim);
  if (t.getElementType() != i32)
    indices = ctx.tosa().cast(indices, i32);
  auto ones = RankedTensorType::get(SmallVector<int64_t>(t.getRank(), 1), i32);
  Value zero = splatConstant(ctx, ones, 0);
  Value negative = tosa::GreaterOp::create(
      ctx.builder(), ctx.loc(), withElementType(cast<RankedTensorType>(indices.getType()), ctx.builder().getI1Type()),
      zero, indices);
  Value wrapped = ctx.tosa().add(indices, splatConstant(ctx, ones, dim));
  return tosa::SelectOp::create(ctx.builder(), ctx.loc(), cast<RankedTensorType>(indices.getType()),
                                negative, wrapped, indices);
}

Value mlir::tessel::onnx_import::indexToF64(OpBuilder &b, Location loc,
                                            Value index) {
  return arith::SIToFPOp::create(
      b, loc, b.getF64Type(),
      arith::IndexCastOp::create(b, loc, b.getI64Type(), index));
}

Value mlir::tessel::onnx_import::clampF(NodeContext &ctx, Value x, double lo,
                                        double hi) {
  OpBuilder &b = ctx.builder();
  auto ft = cast<FloatType>(elemOf(x));
  return tosa::ClampOp::create(b, ctx.loc(), x.getType(), x,
                               b.getFloatAttr(ft, lo), b.getFloatAttr(ft, hi));
}

Value mlir::tessel::onnx_import::scalarLike(NodeContext &ctx, Value x,
                                            double v) {
  return splatConstant(
      ctx,
      RankedTensorType::get(SmallVector<int64_t>(typeOf(x).getRank(), 1),
                            elemOf(x)),
      v);
}
