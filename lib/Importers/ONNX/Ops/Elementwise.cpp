//===- Elementwise.cpp - ONNX elementwise ops ------------------------------===//
//
// Binary ops broadcast with numpy rules (opset >= 7) or the legacy
// `broadcast`/`axis` attributes (opset < 7). Unary math that TOSA lacks uses
// `math` ops applied to tensors, which the pipeline turns into linalg.
//
//===----------------------------------------------------------------------===//
#include "Common.h"
#include "IndexMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"

#include <cmath>
#include <limits>
#include <optional>

using namespace mlir;
using namespace mlir::tessel::onnx_import;

namespace {

bool isFloat(Value v) {
  return isa<FloatType>(cast<RankedTensorType>(v.getType()).getElementType());
}

/// Folds a binary op on two small integer compile-time constants (the int64
/// shape arithmetic exporters emit: Shape -> Gather -> Div/Mul -> Slice),
/// broadcasting like numpy. Returns true if it set the output.
template <typename Fn>
bool foldIntBinary(NodeContext &ctx, Type resultElem, Fn fn) {
  // Integer inputs only: asking for a float weight's contents would copy
  // it out of the model early (DeferredWeights.h).
  RankedTensorType t0 = ctx.inputType(0), t1 = ctx.inputType(1);
  if (!t0 || !t1 || !isa<IntegerType>(t0.getElementType()) ||
      !isa<IntegerType>(t1.getElementType()))
    return false;
  DenseElementsAttr a = ctx.constantInput(0), b = ctx.constantInput(1);
  if (!a || !b || !isa<IntegerType>(a.getElementType()) ||
      a.getElementType() != b.getElementType() || a.getNumElements() > 4096 ||
      b.getNumElements() > 4096)
    return false;
  auto ta = cast<RankedTensorType>(a.getType());
  auto tb = cast<RankedTensorType>(b.getType());
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShape(ctx, ta.getShape(), tb.getShape());
  if (failed(shape))
    return false;
  SmallVector<int64_t> va = toInts(a), vb = toInts(b), out;
  int64_t rank = shape->size(), n = numElements(*shape);
  auto index = [&](ArrayRef<int64_t> dims, int64_t flat) {
    // Flat index into a (right-aligned, broadcast) operand of shape `dims`.
    int64_t idx = 0, stride = 1;
    for (int64_t d = rank - 1, k = dims.size() - 1; d >= 0; --d, --k) {
      int64_t coord = flat % (*shape)[d];
      flat /= (*shape)[d];
      if (k >= 0) {
        idx += (dims[k] == 1 ? 0 : coord) * stride;
        stride *= dims[k];
      }
    }
    return idx;
  };
  for (int64_t i = 0; i < n; ++i)
    out.push_back(fn(va[index(ta.getShape(), i)], vb[index(tb.getShape(), i)]));
  ctx.setConstantOutput(
      0, intsAttr(RankedTensorType::get(*shape, resultElem), out));
  return true;
}

/// foldIntBinary for division-like ops: a zero divisor among the constants
/// is an error. Returns the outcome when it folded, nullopt otherwise.
template <typename Fn>
std::optional<LogicalResult> foldIntDivision(NodeContext &ctx, StringRef what,
                                             Fn fn) {
  // u64 values past 2^63 read back negative: such constants are divided
  // at run time (unsignedBinary).
  if (RankedTensorType t = ctx.inputType(0);
      t && t.getElementType().isUnsignedInteger(64))
    return std::nullopt;
  bool byZero = false;
  if (!foldIntBinary(ctx, ctx.inputType(0).getElementType(),
                     [&](int64_t x, int64_t y) {
                       byZero |= y == 0;
                       return y == 0 ? 0 : fn(x, y);
                     }))
    return std::nullopt;
  if (byZero)
    return LogicalResult(ctx.emitError()
                         << "integer " << what
                         << " by zero in constant inputs");
  return success();
}

/// The two operands of a binary op, broadcast-ready (same rank).
FailureOr<std::pair<Value, Value>> binaryOperands(NodeContext &ctx) {
  Value a = ctx.input(0), b = ctx.input(1);
  if (!a || !b) {
    ctx.emitError() << "expects two inputs";
    return failure();
  }
  if (elemOf(a) != elemOf(b)) {
    ctx.emitError() << "input element types differ";
    return failure();
  }
  if (ctx.opset() < 7) {
    // Legacy broadcasting: B is broadcast onto A, aligned at `axis` (or at
    // the trailing dims when absent) only when `broadcast` = 1.
    FailureOr<int64_t> broadcast = ctx.intAttr("broadcast", 0);
    if (failed(broadcast))
      return failure();
    if (ctx.hasAttr("axis")) {
      FailureOr<int64_t> axis = ctx.intAttr("axis");
      if (failed(axis))
        return failure();
      int64_t rankA = typeOf(a).getRank(), rankB = typeOf(b).getRank();
      FailureOr<int64_t> ax = normalizeAxis(ctx, *axis, rankA);
      if (failed(ax))
        return failure();
      if (*broadcast && *ax + rankB <= rankA) {
        SmallVector<int64_t> dims(*ax, 1);
        llvm::append_range(dims, typeOf(b).getShape());
        dims.append(rankA - *ax - rankB, 1);
        b = ctx.tosa().reshape(b, dims);
      }
    }
    if (!*broadcast && typeOf(a).getShape() != typeOf(b).getShape()) {
      ctx.emitError() << "inputs differ in shape but attribute 'broadcast' "
                         "is 0";
      return failure();
    }
  }
  return equalizeRanks(ctx, a, b);
}

FailureOr<RankedTensorType> broadcastResult(NodeContext &ctx, Value a, Value b,
                                            Type elem) {
  auto shape = broadcastShape(ctx, typeOf(a).getShape(), typeOf(b).getShape());
  if (failed(shape))
    return failure();
  return RankedTensorType::get(*shape, elem);
}

template <typename TosaOp>
LogicalResult convertBinary(NodeContext &ctx) {
  if (ctx.opset() >= 7 && ctx.hasInput(0) && ctx.hasInput(1) &&
      foldIntBinary(ctx, ctx.inputType(0).getElementType(),
                    [](int64_t x, int64_t y) {
                      static_assert(std::is_same_v<TosaOp, tosa::AddOp> ||
                                    std::is_same_v<TosaOp, tosa::SubOp>);
                      return std::is_same_v<TosaOp, tosa::AddOp> ? x + y
                                                                 : x - y;
                    }))
    return success();
  auto ops = binaryOperands(ctx);
  if (failed(ops))
    return failure();
  auto [a, b] = *ops;
  auto type = broadcastResult(ctx, a, b, elemOf(a));
  if (failed(type))
    return failure();
  ctx.setOutput(0, TosaOp::create(ctx.builder(), ctx.loc(), *type, a, b));
  return success();
}

Value mulValues(NodeContext &ctx, Value a, Value b, RankedTensorType type) {
  auto shiftTy = RankedTensorType::get({1}, ctx.builder().getI8Type());
  Value shift = ctx.materializeConstant(
      DenseElementsAttr::get(shiftTy, ctx.builder().getI8IntegerAttr(0)));
  return tosa::MulOp::create(ctx.builder(), ctx.loc(), type, a, b, shift);
}

LogicalResult convertMul(NodeContext &ctx) {
  if (ctx.opset() >= 7 &&
      foldIntBinary(ctx, ctx.inputType(0).getElementType(),
                    [](int64_t x, int64_t y) { return x * y; }))
    return success();
  auto ops = binaryOperands(ctx);
  if (failed(ops))
    return failure();
  auto type = broadcastResult(ctx, ops->first, ops->second, elemOf(ops->first));
  if (failed(type))
    return failure();
  ctx.setOutput(0, mulValues(ctx, ops->first, ops->second, *type));
  return success();
}

/// `UnsignedOp` (arith.divui, remui) on unsigned tensors of one shape,
/// through their bits as signless integers.
template <typename UnsignedOp>
Value unsignedBinary(NodeContext &ctx, Value x, Value y) {
  Type elem = elemOf(x);
  Type bits = ctx.builder().getIntegerType(elem.getIntOrFloatBitWidth());
  Value r = UnsignedOp::create(ctx.builder(), ctx.loc(), castValue(ctx, x, bits),
                               castValue(ctx, y, bits));
  return castValue(ctx, r, elem);
}

/// a / b (floats), exactly, where the result has sizes known only at run
/// time: one linalg.generic that broadcasts each operand's static 1s. Two
/// run-time sizes facing each other must be equal (checked: a mismatch
/// fails the call and gives an empty result).
Value divideAtRunTime(NodeContext &ctx, Value a, Value b,
                      RankedTensorType type) {
  IndexMath m(ctx);
  int64_t rank = type.getRank();
  a = expandRank(ctx, a, rank);
  b = expandRank(ctx, b, rank);
  ArrayRef<int64_t> sa = typeOf(a).getShape(), sb = typeOf(b).getShape();
  Value ok = m.yes();
  SmallVector<Value> sizes;
  SmallVector<AffineExpr> ea, eb;
  for (int64_t d = 0; d < rank; ++d) {
    AffineExpr id = m.b.getAffineDimExpr(d), zero = m.b.getAffineConstantExpr(0);
    bool aOne = sa[d] == 1 && type.getDimSize(d) != 1;
    bool bOne = sb[d] == 1 && type.getDimSize(d) != 1;
    ea.push_back(aOne ? zero : id);
    eb.push_back(bOne ? zero : id);
    if (!aOne && !bOne)
      ok = m.both(ok, m.eq(m.dim(a, d), m.dim(b, d)));
    if (type.isDynamicDim(d))
      sizes.push_back(m.dim(aOne ? b : a, d));
  }
  // A mismatch: an empty result (its first run-time size 0).
  if (!sizes.empty())
    sizes.front() = m.select(ok, sizes.front(), m.c(0));
  Value init = tensor::EmptyOp::create(m.b, m.loc, type.getShape(),
                                       type.getElementType(), sizes);
  SmallVector<AffineMap> maps = {
      AffineMap::get(rank, 0, ea, m.b.getContext()),
      AffineMap::get(rank, 0, eb, m.b.getContext()),
      m.b.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  Value q = linalg::GenericOp::create(
                m.b, m.loc, TypeRange{init.getType()}, ValueRange{a, b},
                ValueRange{init}, maps, iterators,
                [](OpBuilder &nb, Location l, ValueRange args) {
                  linalg::YieldOp::create(
                      nb, l,
                      arith::DivFOp::create(nb, l, args[0], args[1])
                          .getResult());
                })
                .getResult(0);
  return required(m, ok, q, q, TESSEL_ENTRY_SHAPE_MISMATCH);
}

LogicalResult convertDiv(NodeContext &ctx) {
  if (ctx.opset() >= 7)
    if (std::optional<LogicalResult> folded = foldIntDivision(
            ctx, "division", [](int64_t x, int64_t y) {
              return x / y; // C truncation, as ONNX
            }))
      return *folded;
  auto ops = binaryOperands(ctx);
  if (failed(ops))
    return failure();
  auto [a, b] = *ops;
  auto type = broadcastResult(ctx, a, b, elemOf(a));
  if (failed(type))
    return failure();
  if (isFloat(a)) {
    if (!type->hasStaticShape() && (typeOf(a) != *type || typeOf(b) != *type)) {
      ctx.setOutput(0, divideAtRunTime(ctx, a, b, *type));
      return success();
    }
    // Broadcast both to the result shape, then divide exactly (arith.divf
    // on tensors), rather than multiplying by a rounded reciprocal.
    Value x = broadcastTo(ctx, a, type->getShape());
    Value y = broadcastTo(ctx, b, type->getShape());
    ctx.setOutput(0, arith::DivFOp::create(ctx.builder(), ctx.loc(), x, y));
    return success();
  }
  Value x = broadcastTo(ctx, a, type->getShape());
  Value y = broadcastTo(ctx, b, type->getShape());
  if (elemOf(a).isUnsignedInteger()) {
    // Only u64 arrives unsigned (convertViaSignless widens the others).
    ctx.setOutput(0, unsignedBinary<arith::DivUIOp>(ctx, x, y));
    return success();
  }
  // ONNX integer Div truncates toward zero, like C.
  ctx.setOutput(0, arith::DivSIOp::create(ctx.builder(), ctx.loc(), x, y));
  return success();
}

Value select(NodeContext &ctx, Value c, Value a, Value b) {
  return tosa::SelectOp::create(ctx.builder(), ctx.loc(), a.getType(), c, a, b);
}

//===--- Integer helpers: arith works on signless integers only -----------===//

/// A signless integer tensor holding `x`'s values (other types unchanged).
/// ONNX's unsigned types import as ui8 ... ui64, which arith rejects (and
/// tosa.cast does not lower faithfully), so an unsigned w-bit tensor is
/// zero-extended element by element (castValue) to 2w-bit signless; a u64
/// one, which no wider type holds, becomes its bits in i64 (its callers
/// here use only bitwise and logical operations on those).
Value exactSignless(NodeContext &ctx, Value x) {
  auto it = dyn_cast<IntegerType>(elemOf(x));
  if (!it || it.isSignless())
    return x;
  unsigned w = it.getWidth();
  return castValue(ctx, x, ctx.builder().getIntegerType(std::min(2 * w, 64u)));
}

/// A signless integer tensor as element type `elem` (narrowing truncates,
/// which is exact for the results of exactSignless operands).
Value toElementType(NodeContext &ctx, Value x, Type elem) {
  if (elemOf(x) == elem)
    return x;
  // Unsigned targets element by element (castValue; see exactSignless).
  return elem.isUnsignedInteger() ? castValue(ctx, x, elem)
                                  : ctx.tosa().cast(x, elem);
}

/// `x` converted to float type `ft`: integers by value, floats widened or
/// rounded.
Value toFloatType(NodeContext &ctx, Value x, FloatType ft) {
  OpBuilder &b = ctx.builder();
  Type e = elemOf(x);
  auto outTy = withElementType(typeOf(x), ft);
  if (e == ft)
    return x;
  if (auto eft = dyn_cast<FloatType>(e))
    return eft.getWidth() < ft.getWidth()
               ? Value(arith::ExtFOp::create(b, ctx.loc(), outTy, x))
               : Value(arith::TruncFOp::create(b, ctx.loc(), outTy, x));
  if (e.isInteger(1))
    return arith::UIToFPOp::create(b, ctx.loc(), outTy, x);
  if (e.isUnsignedInteger()) // every width by value, u64 too
    return castValue(ctx, x, ft);
  return arith::SIToFPOp::create(b, ctx.loc(), outTy, exactSignless(ctx, x));
}

/// Float `x` to integer type `elem`, truncating toward zero like numpy's
/// astype (ONNX reference ops compute in float and cast back this way).
Value truncToInt(NodeContext &ctx, Value x, Type elem) {
  OpBuilder &b = ctx.builder();
  // Unsigned results element by element (castValue: fptoui), every width.
  if (elem.isUnsignedInteger())
    return castValue(ctx, x, elem);
  auto signlessTy = withElementType(typeOf(x), elem);
  return arith::FPToSIOp::create(b, ctx.loc(), signlessTy, x);
}

LogicalResult convertPow(NodeContext &ctx) {
  Value a = ctx.input(0), b = ctx.input(1);
  auto type = broadcastShape(ctx, typeOf(a).getShape(), typeOf(b).getShape());
  if (failed(type))
    return failure();
  Value x = broadcastTo(ctx, a, *type), y = broadcastTo(ctx, b, *type);
  if (!isFloat(a)) {
    // Integer base: the reference computes np.power (in f64 when either
    // side is float, exactly for int ** int) and casts to the base type.
    // f64 pow is exact for integer results up to 2^53 and truncation
    // matches astype; larger int ** int results would wrap in numpy.
    FloatType f64 = ctx.builder().getF64Type();
    Value p = math::PowFOp::create(ctx.builder(), ctx.loc(),
                                   toFloatType(ctx, x, f64),
                                   toFloatType(ctx, y, f64));
    ctx.setOutput(0, truncToInt(ctx, p, elemOf(a)));
    return success();
  }
  // The exponent may have another type (opset 12+): compute in the base's.
  y = toFloatType(ctx, y, cast<FloatType>(elemOf(a)));
  ctx.setOutput(0, math::PowFOp::create(ctx.builder(), ctx.loc(), x, y));
  return success();
}

//===--- Mod ----------------------------------------------------------------===//

/// C's remainder (sign of the dividend) of constants turned into Python's
/// (sign of the divisor) unless `fmod`.
int64_t modInts(int64_t x, int64_t y, bool fmod) {
  if (y == -1) // INT64_MIN % -1 overflows in C++; the remainder is 0
    return 0;
  int64_t r = x % y;
  if (!fmod && r != 0 && ((r < 0) != (y < 0)))
    r += y;
  return r;
}

/// Runtime version of modInts' correction: r + y where r != 0 and the
/// signs of r and y differ.
Value floorRemainder(NodeContext &ctx, Value r, Value y) {
  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  auto boolTy = withElementType(typeOf(r), b.getI1Type());
  Value zero = scalarLike(ctx, r, 0.0);
  Value rNeg = tosa::GreaterOp::create(b, loc, boolTy, zero, r);
  Value yNeg = tosa::GreaterOp::create(b, loc, boolTy, zero, y);
  Value rZero = tosa::EqualOp::create(b, loc, boolTy, r, zero);
  Value signsDiffer = tosa::LogicalXorOp::create(b, loc, boolTy, rNeg, yNeg);
  Value fix = tosa::LogicalAndOp::create(
      b, loc, boolTy, signsDiffer,
      tosa::LogicalNotOp::create(b, loc, boolTy, rZero));
  return select(ctx, fix, ctx.tosa().add(r, y), r);
}

LogicalResult convertMod(NodeContext &ctx) {
  FailureOr<int64_t> fmod = ctx.intAttr("fmod", 0);
  if (failed(fmod))
    return failure();
  if (*fmod != 0 && *fmod != 1)
    return ctx.attrError("fmod", "= " + std::to_string(*fmod) +
                                     " must be 0 or 1");
  if (std::optional<LogicalResult> folded = foldIntDivision(
          ctx, "modulo",
          [&](int64_t x, int64_t y) { return modInts(x, y, *fmod); }))
    return *folded;
  auto ops = binaryOperands(ctx);
  if (failed(ops))
    return failure();
  auto type = broadcastResult(ctx, ops->first, ops->second, elemOf(ops->first));
  if (failed(type))
    return failure();
  Value x = broadcastTo(ctx, ops->first, type->getShape());
  Value y = broadcastTo(ctx, ops->second, type->getShape());
  OpBuilder &b = ctx.builder();
  if (isFloat(x)) {
    if (!*fmod)
      return ctx.attrError("fmod", "= 0 is invalid for floating-point inputs "
                                   "(ONNX requires fmod = 1)");
    // arith.remf is C fmod (sign of the dividend).
    ctx.setOutput(0, arith::RemFOp::create(b, ctx.loc(), x, y));
    return success();
  }
  // Unsigned values are non-negative, where both conventions agree; u64
  // arrives unsigned (convertViaSignless widens the others).
  Type elem = elemOf(x);
  if (elem.isUnsignedInteger(64)) {
    ctx.setOutput(0, unsignedBinary<arith::RemUIOp>(ctx, x, y));
    return success();
  }
  Value r = arith::RemSIOp::create(b, ctx.loc(), exactSignless(ctx, x),
                                   exactSignless(ctx, y));
  if (!*fmod && !elem.isUnsignedInteger())
    r = floorRemainder(ctx, r, y);
  ctx.setOutput(0, toElementType(ctx, r, elem));
  return success();
}

/// Max, Min, Sum, Mean: variadic with broadcasting.
template <typename TosaOp, bool isMean = false>
LogicalResult convertVariadic(NodeContext &ctx) {
  if (ctx.numInputs() == 0) {
    ctx.emitError() << "expects at least one input";
    return failure();
  }
  // Two integer constants (shape arithmetic): fold.
  if (!isMean && ctx.numInputs() == 2 &&
      foldIntBinary(ctx, ctx.inputType(0).getElementType(),
                    [](int64_t x, int64_t y) {
                      if constexpr (std::is_same_v<TosaOp, tosa::MaximumOp>)
                        return std::max(x, y);
                      else if constexpr (std::is_same_v<TosaOp,
                                                        tosa::MinimumOp>)
                        return std::min(x, y);
                      else
                        return x + y;
                    }))
    return success();
  Value acc = ctx.input(0);
  for (unsigned i = 1; i < ctx.numInputs(); ++i) {
    auto ops = equalizeRanks(ctx, acc, ctx.input(i));
    if (failed(ops))
      return failure();
    auto type = broadcastResult(ctx, ops->first, ops->second, elemOf(acc));
    if (failed(type))
      return failure();
    acc = TosaOp::create(ctx.builder(), ctx.loc(), *type, ops->first,
                         ops->second);
  }
  if (isMean) {
    if (!isFloat(acc))
      return ctx.unsupported("Mean of integer tensors");
    Value n = splatConstant(
        ctx, RankedTensorType::get(SmallVector<int64_t>(typeOf(acc).getRank(), 1),
                                   elemOf(acc)),
        1.0 / ctx.numInputs());
    acc = mulValues(ctx, acc, n, typeOf(acc));
  }
  ctx.setOutput(0, acc);
  return success();
}

/// Comparisons produce i1.
template <typename TosaOp, bool swap = false, bool negate = false>
LogicalResult convertCompare(NodeContext &ctx) {
  if (ctx.opset() >= 7 &&
      foldIntBinary(ctx, ctx.builder().getI1Type(), [](int64_t x, int64_t y) {
        if (swap)
          std::swap(x, y);
        bool r = std::is_same_v<TosaOp, tosa::EqualOp>     ? x == y
                 : std::is_same_v<TosaOp, tosa::GreaterOp> ? x > y
                                                           : x >= y;
        return static_cast<int64_t>(negate ? !r : r);
      }))
    return success();
  auto ops = binaryOperands(ctx);
  if (failed(ops))
    return failure();
  auto [a, b] = *ops;
  if (swap)
    std::swap(a, b);
  auto type = broadcastResult(ctx, a, b, ctx.builder().getI1Type());
  if (failed(type))
    return failure();
  Value r = TosaOp::create(ctx.builder(), ctx.loc(), *type, a, b);
  if (negate)
    r = tosa::LogicalNotOp::create(ctx.builder(), ctx.loc(), *type, r);
  ctx.setOutput(0, r);
  return success();
}

LogicalResult convertWhere(NodeContext &ctx) {
  Value c = ctx.input(0), a = ctx.input(1), b = ctx.input(2);
  // Shape subgraphs select between constant shape vectors: fold.
  DenseElementsAttr cc = ctx.constantInput(0), ca = ctx.constantInput(1),
                    cb = ctx.constantInput(2);
  if (cc && ca && cb && isa<IntegerType>(ca.getElementType()) &&
      ca.getType() == cb.getType() && cc.getType().getShape() ==
                                          ca.getType().getShape() &&
      ca.getNumElements() <= 4096) {
    SmallVector<int64_t> vc = toInts(cc), va = toInts(ca), vb = toInts(cb);
    for (size_t i = 0; i < va.size(); ++i)
      va[i] = vc[i] ? va[i] : vb[i];
    ctx.setConstantOutput(0, intsAttr(cast<RankedTensorType>(ca.getType()), va));
    return success();
  }
  auto ab = broadcastShape(ctx, typeOf(a).getShape(), typeOf(b).getShape());
  if (failed(ab))
    return failure();
  auto shape = broadcastShape(ctx, typeOf(c).getShape(), *ab);
  if (failed(shape))
    return failure();
  int64_t rank = shape->size();
  c = expandRank(ctx, c, rank);
  a = expandRank(ctx, a, rank);
  b = expandRank(ctx, b, rank);
  ctx.setOutput(0, tosa::SelectOp::create(
                       ctx.builder(), ctx.loc(),
                       RankedTensorType::get(*shape, elemOf(a)), c, a, b));
  return success();
}

template <typename TosaOp> LogicalResult convertTosaUnary(NodeContext &ctx) {
  Value x = ctx.input(0);
  ctx.setOutput(0, TosaOp::create(ctx.builder(), ctx.loc(), x.getType(), x));
  return success();
}

/// Unary math that TOSA lacks (sqrt, trigonometry...) on float tensors.
template <typename MathOp> LogicalResult convertMathUnary(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!isFloat(x)) {
    ctx.emitError() << "expects a floating-point input";
    return failure();
  }
  ctx.setOutput(0, MathOp::create(ctx.builder(), ctx.loc(), x));
  return success();
}

LogicalResult convertNeg(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (DenseElementsAttr c = ctx.constantInput(0);
      c && isa<IntegerType>(c.getElementType()) && c.getNumElements() <= 4096) {
    SmallVector<int64_t> v = toInts(c);
    for (int64_t &e : v)
      e = -e;
    ctx.setConstantOutput(0, intsAttr(cast<RankedTensorType>(c.getType()), v));
    return success();
  }
  Value zp = ctx.tosa().zeroPoint(elemOf(x));
  if (!isFloat(x)) {
    // Integer negate: 0 - x (TOSA negate on ints needs matching zero points).
    Value zero = splatConstant(ctx, typeOf(x), 0);
    ctx.setOutput(0, tosa::SubOp::create(ctx.builder(), ctx.loc(), typeOf(x),
                                         zero, x));
    return success();
  }
  ctx.setOutput(0, tosa::NegateOp::create(ctx.builder(), ctx.loc(), typeOf(x),
                                          x, zp, zp));
  return success();
}

/// clamp(x, lo, hi) with scalar bounds, for float or integer x.
Value clampScalar(NodeContext &ctx, Value x, double lo, double hi) {
  OpBuilder &b = ctx.builder();
  Type et = elemOf(x);
  Attribute loA, hiA;
  if (auto ft = dyn_cast<FloatType>(et)) {
    loA = b.getFloatAttr(ft, lo);
    hiA = b.getFloatAttr(ft, hi);
  } else {
    auto it = cast<IntegerType>(et);
    auto clampToType = [&](double v) {
      int64_t minV = it.isUnsigned() ? 0
                                     : -(int64_t(1) << (it.getWidth() - 1));
      double maxV = it.isUnsigned() ? std::ldexp(1.0, it.getWidth()) - 1
                                    : std::ldexp(1.0, it.getWidth() - 1) - 1;
      return static_cast<int64_t>(std::max<double>(minV, std::min(maxV, v)));
    };
    loA = b.getIntegerAttr(et, clampToType(lo));
    hiA = b.getIntegerAttr(et, clampToType(hi));
  }
  return tosa::ClampOp::create(b, ctx.loc(), x.getType(), x,
                               cast<TypedAttr>(loA), cast<TypedAttr>(hiA));
}

LogicalResult convertRelu(NodeContext &ctx) {
  ctx.setOutput(0, clampScalar(ctx, ctx.input(0), 0,
                               std::numeric_limits<float>::max()));
  return success();
}

LogicalResult convertClip(NodeContext &ctx) {
  Value x = ctx.input(0);
  double lowest = -std::numeric_limits<double>::infinity();
  double highest = std::numeric_limits<double>::infinity();
  if (!isFloat(x)) {
    lowest = -1e300;
    highest = 1e300;
  } else if (elemOf(x).isF32() || elemOf(x).isF16() || elemOf(x).isBF16()) {
    lowest = -std::numeric_limits<float>::max();
    highest = std::numeric_limits<float>::max();
  }
  if (ctx.opset() < 11) {
    FailureOr<float> lo = ctx.floatAttr("min", -std::numeric_limits<float>::max());
    FailureOr<float> hi = ctx.floatAttr("max", std::numeric_limits<float>::max());
    if (failed(lo) || failed(hi))
      return failure();
    ctx.setOutput(0, clampScalar(ctx, x, std::min(*lo, *hi), *hi));
    return success();
  }
  // opset 11+: bounds are optional scalar inputs; constant ones become a
  // clamp, others maximum/minimum.
  Value y = x;
  double lo = lowest, hi = highest;
  for (unsigned i : {1u, 2u}) {
    if (!ctx.hasInput(i))
      continue;
    if (DenseElementsAttr c = ctx.constantInput(i)) {
      (i == 1 ? lo : hi) = toDoubles(c).front();
      continue;
    }
    Value bound = expandRank(ctx, ctx.input(i), typeOf(x).getRank());
    y = i == 1 ? ctx.tosa().maximum(y, bound)
               : Value(tosa::MinimumOp::create(ctx.builder(), ctx.loc(),
                                               y.getType(), y, bound));
  }
  // min > max is valid ONNX: min(max(x, lo), hi) is then hi everywhere.
  if (lo > hi)
    lo = hi;
  if (lo != lowest || hi != highest)
    y = clampScalar(ctx, y, lo, hi);
  ctx.setOutput(0, y);
  return success();
}

Value greaterThanZero(NodeContext &ctx, Value x) {
  Value zero = scalarLike(ctx, x, 0.0);
  return tosa::GreaterOp::create(
      ctx.builder(), ctx.loc(),
      withElementType(typeOf(x), ctx.builder().getI1Type()), x, zero);
}

LogicalResult convertLeakyRelu(NodeContext &ctx) {
  FailureOr<float> alpha = ctx.floatAttr("alpha", 0.01f);
  if (failed(alpha))
    return failure();
  Value x = ctx.input(0);
  Value ax = mulValues(ctx, x, scalarLike(ctx, x, *alpha), typeOf(x));
  ctx.setOutput(0, select(ctx, greaterThanZero(ctx, x), x, ax));
  return success();
}

LogicalResult convertPRelu(NodeContext &ctx) {
  Value x = ctx.input(0), slope = ctx.input(1);
  if (ctx.opset() < 7) {
    // PRelu-6 and older predate numpy broadcasting: a 1-D slope of C
    // values is per channel (axis 1), as PyTorch exported it.
    ctx.ignoreAttr("consumed_inputs");
    RankedTensorType xt = typeOf(x), st = typeOf(slope);
    if (st.getRank() == 1 && xt.getRank() >= 2 && st.getDimSize(0) != 1 &&
        st.getDimSize(0) == xt.getDimSize(1)) {
      SmallVector<int64_t> dims(xt.getRank() - 1, 1);
      dims[0] = st.getDimSize(0);
      slope = ctx.tosa().reshape(slope, dims);
    }
  }
  auto ops = equalizeRanks(ctx, x, slope);
  if (failed(ops))
    return failure();
  Value sx = mulValues(ctx, ops->first, ops->second, typeOf(x));
  ctx.setOutput(0, select(ctx, greaterThanZero(ctx, x), x, sx));
  return success();
}

/// alpha * (exp(x) - 1) for x <= 0, else x (scaled by gamma for Selu).
LogicalResult convertEluLike(NodeContext &ctx, float alpha, float gamma) {
  Value x = ctx.input(0);
  Value em1 = ctx.tosa().sub(ctx.tosa().exp(x), scalarLike(ctx, x, 1.0));
  Value neg = mulValues(ctx, em1, scalarLike(ctx, x, alpha * gamma), typeOf(x));
  Value pos = gamma == 1.0f
                  ? x
                  : mulValues(ctx, x, scalarLike(ctx, x, gamma), typeOf(x));
  ctx.setOutput(0, select(ctx, greaterThanZero(ctx, x), pos, neg));
  return success();
}

LogicalResult convertElu(NodeContext &ctx) {
  FailureOr<float> alpha = ctx.floatAttr("alpha", 1.0f);
  return failed(alpha) ? failure() : convertEluLike(ctx, *alpha, 1.0f);
}

LogicalResult convertSelu(NodeContext &ctx) {
  FailureOr<float> alpha = ctx.floatAttr("alpha", 1.67326319217681884765625f);
  FailureOr<float> gamma = ctx.floatAttr("gamma", 1.05070102214813232421875f);
  if (failed(alpha) || failed(gamma))
    return failure();
  return convertEluLike(ctx, *alpha, *gamma);
}

LogicalResult convertCelu(NodeContext &ctx) {
  FailureOr<float> alpha = ctx.floatAttr("alpha", 1.0f);
  if (failed(alpha))
    return failure();
  // max(0,x) + min(0, alpha*(exp(x/alpha)-1))
  Value x = ctx.input(0);
  Value xa = mulValues(ctx, x, scalarLike(ctx, x, 1.0 / *alpha), typeOf(x));
  Value em1 = ctx.tosa().sub(ctx.tosa().exp(xa), scalarLike(ctx, x, 1.0));
  Value neg = mulValues(ctx, em1, scalarLike(ctx, x, *alpha), typeOf(x));
  ctx.setOutput(0, select(ctx, greaterThanZero(ctx, x), x, neg));
  return success();
}

LogicalResult convertHardSigmoid(NodeContext &ctx) {
  FailureOr<float> alpha = ctx.floatAttr("alpha", 0.2f);
  FailureOr<float> beta = ctx.floatAttr("beta", 0.5f);
  if (failed(alpha) || failed(beta))
    return failure();
  Value x = ctx.input(0);
  Value y = ctx.tosa().add(
      mulValues(ctx, x, scalarLike(ctx, x, *alpha), typeOf(x)),
      scalarLike(ctx, x, *beta));
  ctx.setOutput(0, clampScalar(ctx, y, 0.0, 1.0));
  return success();
}

LogicalResult convertHardSwish(NodeContext &ctx) {
  Value x = ctx.input(0);
  Value y = ctx.tosa().add(
      mulValues(ctx, x, scalarLike(ctx, x, 1.0 / 6.0), typeOf(x)),
      scalarLike(ctx, x, 0.5));
  ctx.setOutput(0, mulValues(ctx, x, clampScalar(ctx, y, 0.0, 1.0), typeOf(x)));
  return success();
}

LogicalResult convertSoftplus(NodeContext &ctx) {
  Value x = ctx.input(0);
  // log(1 + exp(x)), computed as max(x,0) + log1p(exp(-|x|)) to not overflow.
  Value absx = tosa::AbsOp::create(ctx.builder(), ctx.loc(), x.getType(), x);
  Value zp = ctx.tosa().zeroPoint(elemOf(x));
  Value negAbs = tosa::NegateOp::create(ctx.builder(), ctx.loc(), x.getType(),
                                        absx, zp, zp);
  Value l = math::Log1pOp::create(ctx.builder(), ctx.loc(),
                                  ctx.tosa().exp(negAbs));
  ctx.setOutput(0, ctx.tosa().add(clampScalar(ctx, x, 0.0, 3.4e38), l));
  return success();
}

LogicalResult convertSoftsign(NodeContext &ctx) {
  Value x = ctx.input(0);
  Value absx = tosa::AbsOp::create(ctx.builder(), ctx.loc(), x.getType(), x);
  Value den = ctx.tosa().add(absx, scalarLike(ctx, x, 1.0));
  ctx.setOutput(0, arith::DivFOp::create(ctx.builder(), ctx.loc(), x, den));
  return success();
}

LogicalResult convertThresholdedRelu(NodeContext &ctx) {
  FailureOr<float> alpha = ctx.floatAttr("alpha", 1.0f);
  if (failed(alpha))
    return failure();
  Value x = ctx.input(0);
  Value c = tosa::GreaterOp::create(
      ctx.builder(), ctx.loc(),
      withElementType(typeOf(x), ctx.builder().getI1Type()), x,
      scalarLike(ctx, x, *alpha));
  ctx.setOutput(0, select(ctx, c, x, splatConstant(ctx, typeOf(x), 0.0)));
  return success();
}

LogicalResult convertSign(NodeContext &ctx) {
  Value x = ctx.input(0);
  Value zero = splatConstant(ctx, typeOf(x), 0.0);
  Value one = splatConstant(ctx, typeOf(x), 1.0);
  Value minusOne = splatConstant(ctx, typeOf(x), -1.0);
  auto boolTy = withElementType(typeOf(x), ctx.builder().getI1Type());
  Value pos = tosa::GreaterOp::create(ctx.builder(), ctx.loc(), boolTy, x, zero);
  Value neg = tosa::GreaterOp::create(ctx.builder(), ctx.loc(), boolTy, zero, x);
  ctx.setOutput(0, select(ctx, pos, one, select(ctx, neg, minusOne, zero)));
  return success();
}

LogicalResult convertIsNaN(NodeContext &ctx) {
  Value x = ctx.input(0);
  auto boolTy = withElementType(typeOf(x), ctx.builder().getI1Type());
  Value eq = tosa::EqualOp::create(ctx.builder(), ctx.loc(), boolTy, x, x);
  ctx.setOutput(0, tosa::LogicalNotOp::create(ctx.builder(), ctx.loc(), boolTy, eq));
  return success();
}

LogicalResult convertIsInf(NodeContext &ctx) {
  FailureOr<int64_t> detectNeg = ctx.intAttr("detect_negative", 1);
  FailureOr<int64_t> detectPos = ctx.intAttr("detect_positive", 1);
  if (failed(detectNeg) || failed(detectPos))
    return failure();
  Value x = ctx.input(0);
  auto boolTy = withElementType(typeOf(x), ctx.builder().getI1Type());
  double inf = std::numeric_limits<double>::infinity();
  Value r = splatConstant(ctx, boolTy, 0);
  if (*detectPos)
    r = tosa::LogicalOrOp::create(
        ctx.builder(), ctx.loc(), boolTy, r,
        tosa::EqualOp::create(ctx.builder(), ctx.loc(), boolTy, x,
                              scalarLike(ctx, x, inf)));
  if (*detectNeg)
    r = tosa::LogicalOrOp::create(
        ctx.builder(), ctx.loc(), boolTy, r,
        tosa::EqualOp::create(ctx.builder(), ctx.loc(), boolTy, x,
                              scalarLike(ctx, x, -inf)));
  ctx.setOutput(0, r);
  return success();
}

template <typename TosaOp> LogicalResult convertLogical(NodeContext &ctx) {
  auto ops = binaryOperands(ctx);
  if (failed(ops))
    return failure();
  auto type = broadcastResult(ctx, ops->first, ops->second,
                              ctx.builder().getI1Type());
  if (failed(type))
    return failure();
  ctx.setOutput(0, TosaOp::create(ctx.builder(), ctx.loc(), *type, ops->first,
                                  ops->second));
  return success();
}

LogicalResult convertShrink(NodeContext &ctx) {
  FailureOr<float> lambd = ctx.floatAttr("lambd", 0.5f);
  FailureOr<float> bias = ctx.floatAttr("bias", 0.0f);
  if (failed(lambd) || failed(bias))
    return failure();
  Value x = ctx.input(0);
  Type elem = elemOf(x);
  // The reference compares and offsets integers in f64 (the attributes are
  // floats) and casts back; floats stay in their own type.
  Value xf = isFloat(x) ? x : toFloatType(ctx, x, ctx.builder().getF64Type());
  auto boolTy = withElementType(typeOf(xf), ctx.builder().getI1Type());
  Value below = tosa::GreaterOp::create(ctx.builder(), ctx.loc(), boolTy,
                                        scalarLike(ctx, xf, -*lambd), xf);
  Value above = tosa::GreaterOp::create(ctx.builder(), ctx.loc(), boolTy, xf,
                                        scalarLike(ctx, xf, *lambd));
  Value zero = splatConstant(ctx, typeOf(xf), 0.0);
  Value y = select(ctx, below, ctx.tosa().add(xf, scalarLike(ctx, xf, *bias)),
                   select(ctx, above,
                          ctx.tosa().sub(xf, scalarLike(ctx, xf, *bias)),
                          zero));
  ctx.setOutput(0, isFloat(x) ? y : truncToInt(ctx, y, elem));
  return success();
}

/// Two integer operands broadcast to their common shape, as exactSignless
/// values; `elem` receives the original element type.
FailureOr<std::pair<Value, Value>> integerOperands(NodeContext &ctx,
                                                   Type &elem) {
  auto ops = binaryOperands(ctx);
  if (failed(ops))
    return failure();
  elem = elemOf(ops->first);
  if (!isa<IntegerType>(elem) || elem.isInteger(1)) {
    ctx.emitError() << "expects integer inputs, got " << elem;
    return failure();
  }
  auto type = broadcastResult(ctx, ops->first, ops->second, elem);
  if (failed(type))
    return failure();
  return std::make_pair(
      exactSignless(ctx, broadcastTo(ctx, ops->first, type->getShape())),
      exactSignless(ctx, broadcastTo(ctx, ops->second, type->getShape())));
}

LogicalResult convertBitShift(NodeContext &ctx) {
  FailureOr<std::string> direction = ctx.stringAttr("direction");
  if (failed(direction))
    return failure();
  if (*direction != "LEFT" && *direction != "RIGHT")
    return ctx.attrError("direction", "= '" + *direction +
                                          "' is not LEFT or RIGHT");
  Type elem;
  auto ops = integerOperands(ctx, elem);
  if (failed(ops))
    return failure();
  // ONNX types BitShift for unsigned integers; shifts are logical.
  auto [x, y] = *ops;
  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  Value shifted = *direction == "LEFT"
                      ? Value(arith::ShLIOp::create(b, loc, x, y))
                      : Value(arith::ShRUIOp::create(b, loc, x, y));
  // A shift by the bit width or more is poison in LLVM; numpy (the
  // reference) gives 0. The amount is unsigned, so compare unsigned.
  Value width = splatConstant(ctx, typeOf(y), elem.getIntOrFloatBitWidth());
  Value tooFar = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, y,
                                       width);
  Value r = select(ctx, tooFar, splatConstant(ctx, typeOf(x), 0.0), shifted);
  ctx.setOutput(0, toElementType(ctx, r, elem));
  return success();
}

template <typename TosaOp> LogicalResult convertBitwise(NodeContext &ctx) {
  Type elem;
  auto ops = integerOperands(ctx, elem);
  if (failed(ops))
    return failure();
  Value r = TosaOp::create(ctx.builder(), ctx.loc(), ops->first.getType(),
                           ops->first, ops->second);
  ctx.setOutput(0, toElementType(ctx, r, elem));
  return success();
}

LogicalResult convertBitwiseNot(NodeContext &ctx) {
  Value x = ctx.input(0);
  Type elem = elemOf(x);
  if (!isa<IntegerType>(elem) || elem.isInteger(1)) {
    ctx.emitError() << "expects an integer input, got " << elem;
    return failure();
  }
  Value s = exactSignless(ctx, x);
  Value r = tosa::BitwiseNotOp::create(ctx.builder(), ctx.loc(), s.getType(), s);
  ctx.setOutput(0, toElementType(ctx, r, elem));
  return success();
}

} // namespace

void mlir::tessel::onnx_import::registerElementwiseConverters(ConverterMap &m) {
  m["Add"] = convertBinary<tosa::AddOp>;
  m["Sub"] = convertBinary<tosa::SubOp>;
  m["Mul"] = convertMul;
  m["Div"] = convertDiv;
  m["Pow"] = convertPow;
  m["Mod"] = convertMod;
  m["BitShift"] = convertBitShift;
  m["BitwiseAnd"] = convertBitwise<tosa::BitwiseAndOp>;
  m["BitwiseOr"] = convertBitwise<tosa::BitwiseOrOp>;
  m["BitwiseXor"] = convertBitwise<tosa::BitwiseXorOp>;
  m["BitwiseNot"] = convertBitwiseNot;
  m["Max"] = convertVariadic<tosa::MaximumOp>;
  m["Min"] = convertVariadic<tosa::MinimumOp>;
  m["Sum"] = convertVariadic<tosa::AddOp>;
  m["Mean"] = convertVariadic<tosa::AddOp, true>;
  m["Equal"] = convertCompare<tosa::EqualOp>;
  m["Greater"] = convertCompare<tosa::GreaterOp>;
  m["GreaterOrEqual"] = convertCompare<tosa::GreaterEqualOp>;
  m["Less"] = convertCompare<tosa::GreaterOp, /*swap=*/true>;
  m["LessOrEqual"] = convertCompare<tosa::GreaterEqualOp, /*swap=*/true>;
  m["And"] = convertLogical<tosa::LogicalAndOp>;
  m["Or"] = convertLogical<tosa::LogicalOrOp>;
  m["Xor"] = convertLogical<tosa::LogicalXorOp>;
  m["Not"] = convertTosaUnary<tosa::LogicalNotOp>;
  m["Where"] = convertWhere;
  m["Abs"] = convertTosaUnary<tosa::AbsOp>;
  m["Neg"] = convertNeg;
  m["Exp"] = convertTosaUnary<tosa::ExpOp>;
  m["Log"] = convertTosaUnary<tosa::LogOp>;
  m["Tanh"] = convertTosaUnary<tosa::TanhOp>;
  m["Sigmoid"] = convertTosaUnary<tosa::SigmoidOp>;
  m["Erf"] = convertTosaUnary<tosa::ErfOp>;
  m["Reciprocal"] = convertTosaUnary<tosa::ReciprocalOp>;
  m["Floor"] = convertTosaUnary<tosa::FloorOp>;
  m["Ceil"] = convertTosaUnary<tosa::CeilOp>;
  m["Sin"] = convertTosaUnary<tosa::SinOp>;
  m["Cos"] = convertTosaUnary<tosa::CosOp>;
  m["Sqrt"] = convertMathUnary<math::SqrtOp>;
  m["Tan"] = convertMathUnary<math::TanOp>;
  m["Asin"] = convertMathUnary<math::AsinOp>;
  m["Acos"] = convertMathUnary<math::AcosOp>;
  m["Atan"] = convertMathUnary<math::AtanOp>;
  m["Sinh"] = convertMathUnary<math::SinhOp>;
  m["Cosh"] = convertMathUnary<math::CoshOp>;
  m["Asinh"] = convertMathUnary<math::AsinhOp>;
  m["Acosh"] = convertMathUnary<math::AcoshOp>;
  m["Atanh"] = convertMathUnary<math::AtanhOp>;
  m["Round"] = convertMathUnary<math::RoundEvenOp>;
  m["Relu"] = convertRelu;
  m["Clip"] = convertClip;
  m["LeakyRelu"] = convertLeakyRelu;
  m["PRelu"] = convertPRelu;
  m["Elu"] = convertElu;
  m["Selu"] = convertSelu;
  m["Celu"] = convertCelu;
  m["HardSigmoid"] = convertHardSigmoid;
  m["HardSwish"] = convertHardSwish;
  m["Softplus"] = convertSoftplus;
  m["Softsign"] = convertSoftsign;
  m["ThresholdedRelu"] = convertThresholdedRelu;
  m["Sign"] = convertSign;
  m["IsNaN"] = convertIsNaN;
  m["IsInf"] = convertIsInf;
  m["Shrink"] = convertShrink;
}
