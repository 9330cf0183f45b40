//===- Reduction.cpp - ONNX reductions, arg-reductions, softmax, TopK ------===//
//
// TOSA reductions take one axis and keep it with size 1, so a multi-axis
// ONNX reduction is a chain of them followed (keepdims = 0) by a reshape.
// Sums of f16/bf16 accumulate in f32. ArgMin, select_last_index and
// largest = 0 are rewritten onto tosa.argmax / tosa.reduce_max with
// order-reversing maps that are exact (0 - x for floats, -1 - x for
// integers, which cannot overflow) and tosa.reverse.
//
//===----------------------------------------------------------------------===//
#include "Common.h"
#include "RunTimeShapes.h"

#include "tessel/Dialect/Tessel/IR/TesselDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"

#include <limits>

using namespace mlir;
using namespace mlir::tessel::onnx_import;

namespace {

bool isFloat(Value v) { return isa<FloatType>(elemOf(v)); }

/// An order-reversing map that is exact: -x for floats, -1 - x (= ~x) for
/// integers (no overflow at the minimum). It is its own inverse.
Value reverseOrder(NodeContext &ctx, Value x) {
  return ctx.tosa().sub(scalarLike(ctx, x, isFloat(x) ? 0.0 : -1.0), x);
}

/// `x` with the (size-1) dims in `axes` removed.
Value dropAxes(NodeContext &ctx, Value x, ArrayRef<int64_t> axes) {
  SmallVector<int64_t> shape;
  for (auto [d, n] : llvm::enumerate(typeOf(x).getShape()))
    if (!llvm::is_contained(axes, static_cast<int64_t>(d)))
      shape.push_back(n);
  return ctx.tosa().reshape(x, shape);
}

/// An i32 constant [0, n) laid along `axis` of a rank-`rank` shape of 1s.
Value iotaAlong(NodeContext &ctx, int64_t n, int64_t axis, int64_t rank) {
  SmallVector<int64_t> shape(rank, 1), values;
  shape[axis] = n;
  for (int64_t i = 0; i < n; ++i)
    values.push_back(i);
  return ctx.materializeConstant(intsAttr(
      RankedTensorType::get(shape, ctx.builder().getI32Type()), values));
}

/// tosa.argmax along `axis` as i32, the axis kept with size 1.
Value argmaxKeep(NodeContext &ctx, Value x, int64_t axis) {
  SmallVector<int64_t> removed(typeOf(x).getShape());
  removed.erase(removed.begin() + axis);
  Value idx = tosa::ArgMaxOp::create(
      ctx.builder(), ctx.loc(),
      RankedTensorType::get(removed, ctx.builder().getI32Type()), x,
      static_cast<uint32_t>(axis));
  SmallVector<int64_t> kept(typeOf(x).getShape());
  kept[axis] = 1;
  return ctx.tosa().reshape(idx, kept);
}

Value toI64(NodeContext &ctx, Value x) {
  return arith::ExtSIOp::create(
      ctx.builder(), ctx.loc(),
      withElementType(typeOf(x), ctx.builder().getI64Type()), x);
}

//===----------------------------------------------------------------------===//
// Reduce*
//===----------------------------------------------------------------------===//

enum class Reduce { Sum, Mean, Max, Min, Prod, L1, L2, LogSum, LogSumExp, SumSquare };

/// The reduced axes (normalized, sorted, unique); empty means none
/// (noop_with_empty_axes), and absent axes mean all.
FailureOr<SmallVector<int64_t>> reductionAxes(NodeContext &ctx,
                                              bool axesFromInput) {
  int64_t rank = ctx.inputType(0).getRank();
  FailureOr<int64_t> noop = ctx.intAttr("noop_with_empty_axes", 0);
  if (failed(noop))
    return failure();
  std::optional<SmallVector<int64_t>> axes;
  if (axesFromInput) {
    RankedTensorType axesType = ctx.hasInput(1) ? ctx.inputType(1) : nullptr;
    if (axesType && axesType.hasStaticShape() &&
        axesType.getNumElements() == 0) {
      axes = SmallVector<int64_t>(); // empty, whatever its source
    } else if (ctx.hasInput(1)) {
      FailureOr<SmallVector<int64_t>> a = ctx.constantInts(1, "axes");
      if (failed(a))
        return failure();
      axes = *a;
    }
  } else if (ctx.hasAttr("axes")) {
    FailureOr<SmallVector<int64_t>> a = ctx.intsAttr("axes");
    if (failed(a))
      return failure();
    axes = *a;
  }
  SmallVector<int64_t> out;
  if (!axes || axes->empty()) {
    if (!*noop)
      for (int64_t d = 0; d < rank; ++d)
        out.push_back(d);
    return out;
  }
  for (int64_t a : *axes) {
    FailureOr<int64_t> n = normalizeAxis(ctx, a, rank, "axes");
    if (failed(n))
      return failure();
    out.push_back(*n);
  }
  llvm::sort(out);
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

/// The reduction of input 0 over `axes`, with the reduced dimensions kept
/// (as 1s).
template <Reduce kind>
FailureOr<Value> reduceKeepingDims(NodeContext &ctx, ArrayRef<int64_t> axesList) {
  std::optional<SmallVector<int64_t>> axes(llvm::to_vector(axesList));
  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  tessel::TosaBuilder &tb = ctx.tosa();
  Value x = ctx.input(0);
  Type elemTy = elemOf(x);
  bool floatTy = isFloat(x);
  if (!floatTy && (kind == Reduce::L2 || kind == Reduce::LogSum ||
                   kind == Reduce::LogSumExp))
    return ctx.unsupported("this reduction of an integer tensor");
  bool accumulates = kind != Reduce::Max && kind != Reduce::Min;
  if (accumulates)
    x = tb.widen(x);

  // Elementwise part before the reduction.
  Value shift; // LogSumExp: the max, subtracted so exp cannot overflow
  switch (kind) {
  case Reduce::L1:
    x = tosa::AbsOp::create(b, loc, x.getType(), x);
    break;
  case Reduce::L2:
  case Reduce::SumSquare:
    x = tb.mul(x, x);
    break;
  case Reduce::LogSumExp:
    shift = x;
    for (int64_t a : *axes)
      shift = tb.reduceMax(shift, a);
    x = tb.exp(tb.sub(x, shift));
    break;
  default:
    break;
  }

  for (int64_t a : *axes) {
    switch (kind) {
    case Reduce::Max:
      x = tb.reduceMax(x, a);
      break;
    case Reduce::Min:
      x = tosa::ReduceMinOp::create(b, loc, x, static_cast<uint32_t>(a));
      break;
    case Reduce::Prod:
      x = tosa::ReduceProductOp::create(b, loc, x, static_cast<uint32_t>(a));
      break;
    case Reduce::Mean:
      if (floatTy) {
        SmallVector<int64_t> shape(typeOf(x).getShape());
        shape[a] = 1;
        x = tessel::ReduceMeanOp::create(b, loc, withShape(typeOf(x), shape),
                                         x, b.getI64IntegerAttr(a));
        break;
      }
      [[fallthrough]]; // integer mean: sum here, divide below
    default:
      x = tb.reduceSum(x, a);
    }
  }

  // Elementwise part after the reduction.
  switch (kind) {
  case Reduce::Mean:
    if (!floatTy) {
      // ONNX's integer mean truncates toward zero, like C division.
      int64_t count = 1;
      for (int64_t a : *axes)
        count *= ctx.inputType(0).getDimSize(a);
      x = arith::DivSIOp::create(b, loc, x,
                                 splatConstant(ctx, typeOf(x), count));
    }
    break;
  case Reduce::L2:
    x = math::SqrtOp::create(b, loc, x);
    break;
  case Reduce::LogSum:
    x = tb.log(x);
    break;
  case Reduce::LogSumExp:
    x = tb.add(tb.log(x), shift);
    break;
  default:
    break;
  }
  if (accumulates)
    x = tb.narrow(x, elemTy);
  return x;
}

template <Reduce kind> LogicalResult convertReduce(NodeContext &ctx) {
  // ReduceSum took axes as an input from opset 13, the others from 18.
  bool axesFromInput = ctx.opset() >= (kind == Reduce::Sum ? 13 : 18);
  FailureOr<int64_t> keepDims = ctx.intAttr("keepdims", 1);
  if (failed(keepDims))
    return failure();
  if (axesFromInput && isRunTimeOperand(ctx, 1) &&
      ctx.inputType(1).getNumElements() != 0) {
    // noop_with_empty_axes only matters for an empty axes list, which a
    // non-empty operand never is.
    if (failed(ctx.intAttr("noop_with_empty_axes", 0)))
      return failure();
    return reduceOverRunTimeAxes(ctx, *keepDims != 0,
                                 [&](ArrayRef<int64_t> axes) {
                                   return reduceKeepingDims<kind>(ctx, axes);
                                 });
  }
  FailureOr<SmallVector<int64_t>> axes = reductionAxes(ctx, axesFromInput);
  if (failed(axes))
    return failure();
  FailureOr<Value> x = reduceKeepingDims<kind>(ctx, *axes);
  if (failed(x))
    return failure();
  if (!*keepDims && !axes->empty())
    *x = dropAxes(ctx, *x, *axes);
  ctx.setOutput(0, *x);
  return success();
}

//===----------------------------------------------------------------------===//
// ArgMax, ArgMin
//===----------------------------------------------------------------------===//

template <bool isMin> LogicalResult convertArgReduce(NodeContext &ctx) {
  Value x = ctx.input(0);
  int64_t rank = typeOf(x).getRank();
  FailureOr<int64_t> axisAttr = ctx.intAttr("axis", 0);
  FailureOr<int64_t> keepDims = ctx.intAttr("keepdims", 1);
  FailureOr<int64_t> last = ctx.intAttr("select_last_index", 0);
  if (failed(axisAttr) || failed(keepDims) || failed(last))
    return failure();
  FailureOr<int64_t> axis = normalizeAxis(ctx, *axisAttr, rank);
  if (failed(axis))
    return failure();
  if (isMin)
    x = reverseOrder(ctx, x);
  // The last extreme is the first one of the reversed axis.
  if (*last)
    x = tosa::ReverseOp::create(ctx.builder(), ctx.loc(), x.getType(), x,
                                static_cast<uint32_t>(*axis));
  Value idx = argmaxKeep(ctx, x, *axis);
  if (*last)
    idx = ctx.tosa().sub(
        scalarLike(ctx, idx, typeOf(x).getDimSize(*axis) - 1), idx);
  if (!*keepDims)
    idx = dropAxes(ctx, idx, {*axis});
  ctx.setOutput(0, toI64(ctx, idx));
  return success();
}

//===----------------------------------------------------------------------===//
// Softmax, LogSoftmax, Hardmax
//===----------------------------------------------------------------------===//

enum class SoftmaxKind { Softmax, LogSoftmax, Hardmax };

/// One-hot of the first maximum along `axis`.
Value hardmax(NodeContext &ctx, Value x, int64_t axis) {
  Value idx = argmaxKeep(ctx, x, axis);
  int64_t rank = typeOf(x).getRank();
  Value hit = tosa::EqualOp::create(
      ctx.builder(), ctx.loc(),
      withElementType(typeOf(x), ctx.builder().getI1Type()), idx,
      iotaAlong(ctx, typeOf(x).getDimSize(axis), axis, rank));
  return tosa::SelectOp::create(ctx.builder(), ctx.loc(), x.getType(), hit,
                                scalarLike(ctx, x, 1.0),
                                scalarLike(ctx, x, 0.0));
}

template <SoftmaxKind kind> LogicalResult convertSoftmax(NodeContext &ctx) {
  Value x = ctx.input(0);
  RankedTensorType type = typeOf(x);
  int64_t rank = type.getRank();
  bool legacy = ctx.opset() < 13;
  FailureOr<int64_t> axisAttr = ctx.intAttr("axis", legacy ? 1 : -1);
  if (failed(axisAttr))
    return failure();
  FailureOr<int64_t> axis = normalizeAxis(ctx, *axisAttr, rank);
  if (failed(axis))
    return failure();
  if (kind != SoftmaxKind::Hardmax && !isFloat(x))
    return ctx.unsupported("Softmax of a non-float tensor");
  // Before opset 13 the input is coerced to 2-D, [0, axis) x [axis, rank),
  // and normalized over the whole second factor.
  if (legacy) {
    ArrayRef<int64_t> shape = type.getShape();
    x = ctx.tosa().reshape(x, {numElements(shape.take_front(*axis)),
                               numElements(shape.drop_front(*axis))});
    axis = 1;
  }
  Value y;
  OpBuilder &b = ctx.builder();
  if (kind == SoftmaxKind::Softmax)
    y = tessel::SoftmaxOp::create(b, ctx.loc(), x.getType(), x,
                                  b.getI64IntegerAttr(*axis));
  else if (kind == SoftmaxKind::LogSoftmax)
    y = tessel::LogSoftmaxOp::create(b, ctx.loc(), x.getType(), x,
                                     b.getI64IntegerAttr(*axis));
  else
    y = hardmax(ctx, x, *axis);
  if (legacy)
    y = ctx.tosa().reshape(y, type.getShape());
  ctx.setOutput(0, y);
  return success();
}

//===----------------------------------------------------------------------===//
// TopK
//===----------------------------------------------------------------------===//

/// tessel.top_k, kept whole for tessel-raise-moe; its decomposition costs
/// k passes over the axis, so k is capped.
constexpr int64_t kMaxTopK = 256;

LogicalResult convertTopK(NodeContext &ctx) {
  Value x = ctx.input(0);
  RankedTensorType type = typeOf(x);
  int64_t rank = type.getRank();
  FailureOr<int64_t> axisAttr = ctx.intAttr("axis", -1);
  FailureOr<int64_t> largest = ctx.intAttr("largest", 1);
  // sorted = 0 leaves the order unspecified; sorted order satisfies it.
  FailureOr<int64_t> sorted = ctx.intAttr("sorted", 1);
  if (failed(axisAttr) || failed(largest) || failed(sorted))
    return failure();
  FailureOr<int64_t> axis = normalizeAxis(ctx, *axisAttr, rank);
  if (failed(axis))
    return failure();
  int64_t k;
  int64_t n = type.getDimSize(*axis);
  // K read at run time: all n in order, then the first K of them.
  Value runTimeK;
  if (ctx.opset() >= 10 && isRunTimeOperand(ctx, 1)) {
    RankedTensorType kType = ctx.inputType(1);
    if (!kType || kType.getNumElements() != 1 ||
        !isa<IntegerType>(kType.getElementType()))
      return ctx.emitError() << "K must hold one integer";
    runTimeK = checkedRunTimeSize(ctx, 1, 0, n);
    k = n;
  } else if (ctx.opset() < 10) {
    FailureOr<int64_t> kAttr = ctx.intAttr("k");
    if (failed(kAttr))
      return failure();
    k = *kAttr;
  } else {
    FailureOr<SmallVector<int64_t>> kIn = ctx.constantInts(1, "K");
    if (failed(kIn))
      return failure();
    if (kIn->size() != 1) {
      ctx.emitError() << "K must hold one value";
      return failure();
    }
    k = kIn->front();
  }
  if ((k < 1 && !runTimeK) || k > n) {
    ctx.emitError() << "k = " << k << " is outside [1, " << n << "]";
    return failure();
  }
  if (k > kMaxTopK)
    return ctx.unsupported("TopK with k = " + std::to_string(k) + " (above " +
                           std::to_string(kMaxTopK) + ")");
  SmallVector<int64_t> outShape(type.getShape());
  outShape[*axis] = k;
  auto top = tessel::TopKOp::create(
      ctx.builder(), ctx.loc(), withShape(type, outShape),
      RankedTensorType::get(outShape, ctx.builder().getI64Type()), x,
      ctx.builder().getI64IntegerAttr(k), ctx.builder().getI64IntegerAttr(*axis),
      ctx.builder().getBoolAttr(*largest != 0));
  Value vals = top.getValues(), idxs = top.getIndices();
  if (runTimeK) {
    auto firstK = [&](Value v) -> Value {
      OpBuilder &b = ctx.builder();
      RankedTensorType t = typeOf(v);
      SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)),
          strides(rank, b.getIndexAttr(1)), sizes;
      SmallVector<int64_t> shape(t.getShape());
      for (int64_t d = 0; d < rank; ++d)
        sizes.push_back(d == *axis ? OpFoldResult(runTimeK)
                                   : OpFoldResult(b.getIndexAttr(shape[d])));
      shape[*axis] = ShapedType::kDynamic;
      return tensor::ExtractSliceOp::create(b, ctx.loc(), withShape(t, shape),
                                            v, offsets, sizes, strides);
    };
    vals = firstK(vals);
    idxs = firstK(idxs);
  }
  ctx.setOutput(0, vals);
  if (ctx.hasOutput(1))
    ctx.setOutput(1, idxs);
  return success();
}

//===----------------------------------------------------------------------===//
// CumSum
//===----------------------------------------------------------------------===//

/// `x` shifted by `s` toward higher indices along `axis`, zero-filled.
Value shiftAlong(NodeContext &ctx, Value x, int64_t axis, int64_t s) {
  RankedTensorType t = typeOf(x);
  int64_t rank = t.getRank();
  // Shifting everything out leaves zeros (TOSA has no empty slices).
  if (s >= t.getDimSize(axis))
    return splatConstant(ctx, t, 0.0);
  SmallVector<int64_t> start(rank, 0), size(t.getShape());
  size[axis] -= s;
  Value kept = ctx.tosa().slice(x, start, size);
  SmallVector<int64_t> padding(2 * rank, 0);
  padding[2 * axis] = s;
  auto scalarTy = RankedTensorType::get({1}, t.getElementType());
  return tosa::PadOp::create(ctx.builder(), ctx.loc(), t, kept,
                             ctx.tosa().shape(padding),
                             splatConstant(ctx, scalarTy, 0.0));
}

/// The cumulative sum of `x` along `axis` (a static one).
Value cumSumAlong(NodeContext &ctx, Value x, int64_t axis, bool exclusive,
                  bool reverse) {
  RankedTensorType type = typeOf(x);
  int64_t n = type.getDimSize(axis);
  x = ctx.tosa().widen(x);
  if (reverse)
    x = tosa::ReverseOp::create(ctx.builder(), ctx.loc(), x.getType(), x,
                                static_cast<uint32_t>(axis));
  if (exclusive && n > 0)
    x = shiftAlong(ctx, x, axis, 1);
  // Hillis-Steele scan: after the step with shift s, each element holds
  // the sum of the 2s elements ending at it; log2(n) steps.
  for (int64_t s = 1; s < n; s *= 2)
    x = ctx.tosa().add(x, shiftAlong(ctx, x, axis, s));
  if (reverse)
    x = tosa::ReverseOp::create(ctx.builder(), ctx.loc(), x.getType(), x,
                                static_cast<uint32_t>(axis));
  return ctx.tosa().narrow(x, type.getElementType());
}

LogicalResult convertCumSum(NodeContext &ctx) {
  Value x = ctx.input(0);
  RankedTensorType type = typeOf(x);
  FailureOr<int64_t> exclusive = ctx.intAttr("exclusive", 0);
  FailureOr<int64_t> reverse = ctx.intAttr("reverse", 0);
  if (failed(exclusive) || failed(reverse))
    return failure();
  int64_t rank = type.getRank();
  if (DenseElementsAttr c = ctx.constantInput(1)) {
    FailureOr<SmallVector<int64_t>> axisIn = ctx.constantInts(1, "axis");
    if (failed(axisIn))
      return failure();
    FailureOr<int64_t> axis = normalizeAxis(ctx, axisIn->front(), rank, "axis");
    if (failed(axis))
      return failure();
    ctx.setOutput(0, cumSumAlong(ctx, x, *axis, *exclusive, *reverse));
    return success();
  }
  // An axis known only at run time (it does not change the shape): one
  // sum per possible axis, the one taken chosen by an scf.index_switch.
  // The axis is checked to lie in [-rank, rank) (the call fails if not).
  RankedTensorType axisType = ctx.inputType(1);
  if (!axisType || !isa<IntegerType>(axisType.getElementType()) ||
      !axisType.hasStaticShape() || axisType.getNumElements() != 1 || rank < 1)
    return ctx.emitError() << "axis must be a one-element integer tensor and "
                              "the input of rank >= 1";
  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  Value checked = tessel::CheckIndicesOp::create(b, loc, axisType,
                                                 ctx.input(1), -rank, rank);
  SmallVector<Value> zeros(axisType.getRank(),
                           arith::ConstantIndexOp::create(b, loc, 0));
  Value axis = arith::IndexCastOp::create(
      b, loc, b.getIndexType(), tensor::ExtractOp::create(b, loc, checked, zeros));
  Value rankIndex = arith::ConstantIndexOp::create(b, loc, rank);
  Value negative = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::slt, axis,
      arith::ConstantIndexOp::create(b, loc, 0));
  axis = arith::SelectOp::create(
      b, loc, negative, arith::AddIOp::create(b, loc, axis, rankIndex), axis);
  SmallVector<int64_t> cases = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  auto sw = scf::IndexSwitchOp::create(b, loc, TypeRange{type}, axis, cases,
                                       rank);
  {
    OpBuilder::InsertionGuard guard(b);
    // Unreachable once the axis is checked: zeros.
    b.setInsertionPointToStart(&sw.getDefaultRegion().emplaceBlock());
    scf::YieldOp::create(b, loc, splatConstant(ctx, type, 0.0));
    for (int64_t k = 0; k < rank; ++k) {
      b.setInsertionPointToStart(&sw.getCaseRegions()[k].emplaceBlock());
      scf::YieldOp::create(b, loc,
                           cumSumAlong(ctx, x, k, *exclusive, *reverse));
    }
  }
  ctx.setOutput(0, sw.getResult(0));
  return success();
}

} // namespace

void mlir::tessel::onnx_import::registerReductionConverters(ConverterMap &m) {
  m["ReduceSum"] = convertReduce<Reduce::Sum>;
  m["ReduceMean"] = convertReduce<Reduce::Mean>;
  m["ReduceMax"] = convertReduce<Reduce::Max>;
  m["ReduceMin"] = convertReduce<Reduce::Min>;
  m["ReduceProd"] = convertReduce<Reduce::Prod>;
  m["ReduceL1"] = convertReduce<Reduce::L1>;
  m["ReduceL2"] = convertReduce<Reduce::L2>;
  m["ReduceLogSum"] = convertReduce<Reduce::LogSum>;
  m["ReduceLogSumExp"] = convertReduce<Reduce::LogSumExp>;
  m["ReduceSumSquare"] = convertReduce<Reduce::SumSquare>;
  m["ArgMax"] = convertArgReduce<false>;
  m["ArgMin"] = convertArgReduce<true>;
  m["Softmax"] = convertSoftmax<SoftmaxKind::Softmax>;
  m["LogSoftmax"] = convertSoftmax<SoftmaxKind::LogSoftmax>;
  m["Hardmax"] = convertSoftmax<SoftmaxKind::Hardmax>;
  m["TopK"] = convertTopK;
  m["CumSum"] = convertCumSum;
}
