//===- ConvPool.cpp - ONNX convolution and pooling converters --------------===//
//
// ONNX is channels-first (N, C, D1..Dn); TOSA convolution and pooling are
// NHWC, so converters move C last and back. 1-D ops run as 2-D ops with a
// unit H. Pooling is separable (max of maxes; an average over a box is the
// average of per-axis averages, divisors included since the count of valid
// elements in a box is a product of per-axis counts), so 3-D pooling runs as
// a 2-D pool followed by a 1-D pool.
//
//===----------------------------------------------------------------------===//
#include "Common.h"

#include "tessel/Dialect/Tessel/IR/TesselDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::tessel::onnx_import;

namespace {

bool isConvFloat(Type t) { return t.isF32() || t.isF16() || t.isBF16(); }

/// tosa.reshape unless `v` already has that shape.
Value reshapeTo(NodeContext &ctx, Value v, ArrayRef<int64_t> dims) {
  return typeOf(v).getShape() == dims ? v : ctx.tosa().reshape(v, dims);
}

/// (N, C, D1..Dn) -> (N, D1..Dn, C) and back.
Value channelsLast(NodeContext &ctx, Value v) {
  int32_t rank = static_cast<int32_t>(typeOf(v).getRank());
  SmallVector<int32_t> perm{0};
  for (int32_t i = 2; i < rank; ++i)
    perm.push_back(i);
  perm.push_back(1);
  return ctx.tosa().transpose(v, perm);
}
Value channelsFirst(NodeContext &ctx, Value v) {
  int32_t rank = static_cast<int32_t>(typeOf(v).getRank());
  SmallVector<int32_t> perm{0, rank - 1};
  for (int32_t i = 1; i < rank - 1; ++i)
    perm.push_back(i);
  return ctx.tosa().transpose(v, perm);
}

/// A [1] tensor holding `value` in `elem` (pad constants, zero points).
Value scalar1(NodeContext &ctx, Type elem, double value) {
  return splatConstant(ctx, RankedTensorType::get({1}, elem), value);
}

/// The value padding must not win a max: -inf, or the integer minimum.
Value lowestScalar(NodeContext &ctx, Type elem) {
  auto type = RankedTensorType::get({1}, elem);
  if (isa<FloatType>(elem))
    return splatConstant(ctx, type, -std::numeric_limits<double>::infinity());
  auto it = cast<IntegerType>(elem);
  APInt v = it.isUnsigned() ? APInt::getZero(it.getWidth())
                            : APInt::getSignedMinValue(it.getWidth());
  return ctx.materializeConstant(DenseElementsAttr::get(type, v));
}

/// Pads (positive amounts) and crops (negative amounts) dims of `x`.
Value padOrCrop(NodeContext &ctx, Value x, ArrayRef<int64_t> lo,
                ArrayRef<int64_t> hi, Value padConst) {
  ArrayRef<int64_t> shape = typeOf(x).getShape();
  SmallVector<int64_t> start, size, pads, padded;
  bool crop = false, pad = false;
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t cl = std::max<int64_t>(0, -lo[i]), ch = std::max<int64_t>(0, -hi[i]);
    start.push_back(cl);
    size.push_back(shape[i] - cl - ch);
    crop |= cl || ch;
    int64_t pl = std::max<int64_t>(0, lo[i]), ph = std::max<int64_t>(0, hi[i]);
    pads.append({pl, ph});
    padded.push_back(size.back() + pl + ph);
    pad |= pl || ph;
  }
  if (crop)
    x = ctx.tosa().slice(x, start, size);
  if (pad)
    x = tosa::PadOp::create(ctx.builder(), ctx.loc(), withShape(typeOf(x), padded),
                            x, ctx.tosa().shape(pads), padConst);
  return x;
}

//===----------------------------------------------------------------------===//
// Window geometry (kernel, strides, dilations, pads, auto_pad)
//===----------------------------------------------------------------------===//

struct Geometry {
  SmallVector<int64_t> kernel, strides, dilations, lo, hi;
  std::string autoPad;
  int64_t effKernel(size_t i) const {
    return dilations[i] * (kernel[i] - 1) + 1;
  }
};

/// Reads strides, dilations (when `hasDilations`), pads and auto_pad for
/// `in.size()` spatial dims. With `resolveSame`, SAME_UPPER/SAME_LOWER become
/// the pads giving an output of ceil(in / stride), the odd one at the end
/// (UPPER) or the beginning (LOWER).
FailureOr<Geometry> readGeometry(NodeContext &ctx, ArrayRef<int64_t> in,
                                 ArrayRef<int64_t> kernel, bool hasDilations,
                                 bool resolveSame = true) {
  size_t n = in.size();
  Geometry g;
  g.kernel.assign(kernel.begin(), kernel.end());
  auto strides = ctx.intsAttr("strides", SmallVector<int64_t>(n, 1));
  auto dilations = hasDilations
                       ? ctx.intsAttr("dilations", SmallVector<int64_t>(n, 1))
                       : FailureOr<SmallVector<int64_t>>(
                             SmallVector<int64_t>(n, 1));
  auto pads = ctx.intsAttr("pads", SmallVector<int64_t>(2 * n, 0));
  auto autoPad = ctx.stringAttr("auto_pad", std::string("NOTSET"));
  if (failed(strides) || failed(dilations) || failed(pads) || failed(autoPad))
    return failure();
  auto checkList = [&](StringRef name, ArrayRef<int64_t> v, size_t want,
                       int64_t min) -> LogicalResult {
    if (v.size() != want)
      return ctx.attrError(name, "has " + std::to_string(v.size()) +
                                     " values, expected " +
                                     std::to_string(want));
    if (llvm::any_of(v, [&](int64_t x) { return x < min; }))
      return ctx.attrError(name, "must have values >= " + std::to_string(min));
    return success();
  };
  if (failed(checkList("strides", *strides, n, 1)) ||
      failed(checkList("dilations", *dilations, n, 1)) ||
      failed(checkList("pads", *pads, 2 * n, 0)) ||
      llvm::any_of(kernel, [](int64_t k) { return k < 1; }))
    return failure();
  // Attribute values are user input: bound them so no extent below can
  // overflow or ask for a padded tensor of absurd size.
  constexpr int64_t kMaxExtent = int64_t(1) << 20;
  for (auto [name, values] :
       {std::pair<StringRef, ArrayRef<int64_t>>{"kernel_shape", kernel},
        {"strides", *strides}, {"dilations", *dilations}, {"pads", *pads}})
    if (llvm::any_of(values, [&](int64_t v) { return v > kMaxExtent; }))
      return ctx.attrError(name, "has a value above 2^20");
  for (size_t i = 0; i < n; ++i)
    if ((kernel[i] - 1) * (*dilations)[i] + 1 > kMaxExtent)
      return ctx.attrError("dilations", "make the kernel extent exceed 2^20");
  g.strides = *strides;
  g.dilations = *dilations;
  g.autoPad = *autoPad;
  g.lo.assign(pads->begin(), pads->begin() + n);
  g.hi.assign(pads->begin() + n, pads->end());
  if (g.autoPad == "NOTSET")
    return g;
  if (g.autoPad != "VALID" && g.autoPad != "SAME_UPPER" &&
      g.autoPad != "SAME_LOWER") {
    (void)ctx.attrError("auto_pad", "= '" + g.autoPad +
                                        "' is not NOTSET, SAME_UPPER, "
                                        "SAME_LOWER or VALID");
    return failure();
  }
  if (llvm::any_of(*pads, [](int64_t p) { return p != 0; })) {
    (void)ctx.attrError("pads", "cannot be combined with auto_pad = '" +
                                    g.autoPad + "'");
    return failure();
  }
  if (g.autoPad == "VALID" || !resolveSame)
    return g;
  for (size_t i = 0; i < n; ++i) {
    int64_t out = (in[i] + g.strides[i] - 1) / g.strides[i];
    int64_t total = std::max<int64_t>(
        0, (out - 1) * g.strides[i] + g.effKernel(i) - in[i]);
    int64_t small = total / 2;
    g.lo[i] = g.autoPad == "SAME_UPPER" ? small : total - small;
    g.hi[i] = total - g.lo[i];
  }
  return g;
}

/// The spatial dims (all but N and C) of an NC... type.
SmallVector<int64_t> spatialDims(RankedTensorType t) {
  return SmallVector<int64_t>(t.getShape().drop_front(2));
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

/// One spatial axis of a pooling window. `hi` is the padding that makes the
/// padded extent exactly (out - 1) * s + effective kernel (negative: crop);
/// `inclLo`/`inclHi` are the parts of lo/hi that count as zeros in an
/// average (count_include_pad).
struct AxisWindow {
  int64_t k = 1, s = 1, d = 1, lo = 0, hi = 0, out = 1, inclLo = 0,
          inclHi = 0;
};

enum class PoolKind { Max, Avg };

/// Pools axes 1 and 2 of x = [A, H, W, B] with tosa.max_pool2d /
/// tosa.avg_pool2d, after handling what they lack: dilation, pads that reach
/// a whole kernel, counted padding, and negative (cropping) pads.
FailureOr<Value> pool2d(NodeContext &ctx, Value x, AxisWindow h, AxisWindow w,
                        PoolKind kind) {
  tessel::TosaBuilder &tb = ctx.tosa();
  Type et = elemOf(x);
  AxisWindow *wins[2] = {&h, &w};
  // Explicit padding: zeros counted by an average; for max, everything when
  // dilated (handled by slicing below) or when TOSA's pad < kernel rule fails.
  bool explicitMax =
      kind == PoolKind::Max &&
      llvm::any_of(wins, [](AxisWindow *a) {
        return a->d > 1 || a->lo >= a->k || a->hi >= a->k;
      });
  SmallVector<int64_t> lo(4, 0), hi(4, 0);
  for (int i = 0; i < 2; ++i) {
    AxisWindow &a = *wins[i];
    int64_t plo = explicitMax ? a.lo : a.inclLo;
    int64_t phi = explicitMax ? a.hi : std::min(a.inclHi, a.hi);
    // Negative hi always crops here, so TOSA sees non-negative pads.
    if (a.hi < 0)
      phi = a.hi;
    lo[1 + i] = plo;
    hi[1 + i] = phi;
    a.lo -= plo;
    a.hi -= phi;
  }
  x = padOrCrop(ctx, x, lo, hi,
                kind == PoolKind::Max ? lowestScalar(ctx, et)
                                      : scalar1(ctx, et, 0.0));
  for (AxisWindow *a : wins)
    if (a->lo >= a->k || a->hi >= a->k) {
      (void)ctx.attrError("pads", "must be smaller than the kernel when "
                                  "padding is excluded from the average");
      return failure();
    }

  // Dilation (max only). When d divides s every window sits on the grid
  // 0, d, 2d..: subsample by d, then pool densely with stride s / d.
  // Otherwise take the max of the k dilated taps (extent (out-1)*s+1) and
  // subsample by s.
  int64_t sub[2] = {1, 1};
  for (int i = 0; i < 2; ++i) {
    AxisWindow &a = *wins[i];
    if (a.d == 1)
      continue;
    if (a.s % a.d == 0) {
      sub[i] = a.d;
      a.s /= a.d;
    } else {
      SmallVector<int64_t> shape(typeOf(x).getShape());
      SmallVector<int64_t> start(4, 0), size(shape);
      size[1 + i] = (a.out - 1) * a.s + 1;
      Value acc;
      for (int64_t t = 0; t < a.k; ++t) {
        start[1 + i] = t * a.d;
        Value tap = tb.slice(x, start, size);
        acc = acc ? tb.maximum(acc, tap) : tap;
      }
      x = acc;
      a.k = 1;
    }
    a.d = 1;
  }
  OpBuilder &b = ctx.builder();
  auto poolTo = [&](Value in, ArrayRef<int64_t> outHW, ArrayRef<int64_t> k,
                    ArrayRef<int64_t> s, ArrayRef<int64_t> pad) -> Value {
    auto inTy = typeOf(in);
    auto outTy = withShape(inTy, {inTy.getDimSize(0), outHW[0], outHW[1],
                                  inTy.getDimSize(3)});
    if (kind == PoolKind::Max || (k[0] == 1 && k[1] == 1))
      return tosa::MaxPool2dOp::create(b, ctx.loc(), outTy, in,
                                       b.getDenseI64ArrayAttr(k),
                                       b.getDenseI64ArrayAttr(s),
                                       b.getDenseI64ArrayAttr(pad));
    Type acc = isa<FloatType>(et) && !et.isF64() ? b.getF32Type() : et;
    return tosa::AvgPool2dOp::create(
        b, ctx.loc(), outTy, in, tb.zeroPoint(et), tb.zeroPoint(et),
        b.getDenseI64ArrayAttr(k), b.getDenseI64ArrayAttr(s),
        b.getDenseI64ArrayAttr(pad), TypeAttr::get(acc));
  };
  if (sub[0] > 1 || sub[1] > 1) {
    ArrayRef<int64_t> shape = typeOf(x).getShape();
    x = poolTo(x, {(shape[1] - 1) / sub[0] + 1, (shape[2] - 1) / sub[1] + 1},
               {1, 1}, {sub[0], sub[1]}, {0, 0, 0, 0});
  }
  return poolTo(x, {h.out, w.out}, {h.k, w.k}, {h.s, w.s},
                {h.lo, h.hi, w.lo, w.hi});
}

/// Pools every spatial axis of x = [N, C, D1..Dn]: pairs of axes at a time
/// (a lone first axis as [k, 1]), the other dims folded into the 2-D pool's
/// batch and channel dims.
FailureOr<Value> poolND(NodeContext &ctx, Value x, ArrayRef<AxisWindow> wins,
                        PoolKind kind) {
  int64_t n = static_cast<int64_t>(wins.size());
  x = channelsLast(ctx, x);
  SmallVector<int64_t> cur(typeOf(x).getShape()); // [N, D1..Dn, C]
  for (int64_t end = n; end > 0; end -= 2) {
    int64_t first = std::max<int64_t>(0, end - 2);
    int64_t a = cur[0], bDim = cur[n + 1];
    for (int64_t i = 0; i < first; ++i)
      a *= cur[1 + i];
    for (int64_t i = end; i < n; ++i)
      bDim *= cur[1 + i];
    bool pair = end - first == 2;
    AxisWindow hw = wins[first], ww = pair ? wins[first + 1] : AxisWindow();
    x = reshapeTo(ctx, x, {a, cur[1 + first], pair ? cur[2 + first] : 1, bDim});
    FailureOr<Value> y = pool2d(ctx, x, hw, ww, kind);
    if (failed(y))
      return failure();
    x = *y;
    cur[1 + first] = hw.out;
    if (pair)
      cur[2 + first] = ww.out;
    x = reshapeTo(ctx, x, cur);
  }
  return channelsFirst(ctx, x);
}

/// |x|^p, and its inverse y^(1/p), for the Lp pools.
Value lpPower(NodeContext &ctx, Value x, int64_t p) {
  Value a = tosa::AbsOp::create(ctx.builder(), ctx.loc(), x.getType(), x);
  if (p == 1)
    return a;
  if (p == 2)
    return ctx.tosa().mul(x, x);
  return math::PowFOp::create(ctx.builder(), ctx.loc(), a,
                              splatConstant(ctx, typeOf(x), double(p)));
}
Value lpRoot(NodeContext &ctx, Value y, int64_t p) {
  if (p == 1)
    return y;
  if (p == 2)
    return math::SqrtOp::create(ctx.builder(), ctx.loc(), y);
  return math::PowFOp::create(ctx.builder(), ctx.loc(), y,
                              splatConstant(ctx, typeOf(y), 1.0 / p));
}

FailureOr<int64_t> readP(NodeContext &ctx) {
  auto p = ctx.intAttr("p", 2);
  if (succeeded(p) && *p < 1) {
    (void)ctx.attrError("p", "must be positive");
    return failure();
  }
  return p;
}

/// MaxPool's Indices output: for each output element, the flat index into
/// x (N x C x spatial...) of its window's largest element (the first of
/// equal ones, in the window's row-major order), the spatial offset
/// row-major (storage_order 0) or with the spatial dims reversed
/// (column-major, 1). One scalar computation per element (tensor.generate)
/// over the window's taps, those in the padding skipped.
Value maxPoolIndices(NodeContext &ctx, Value x, ArrayRef<AxisWindow> wins,
                     bool columnMajor) {
  RankedTensorType xt = typeOf(x);
  ArrayRef<int64_t> xs = xt.getShape();
  size_t n = wins.size();
  SmallVector<int64_t> outShape(xs.take_front(2));
  for (const AxisWindow &a : wins)
    outShape.push_back(a.out);
  OpBuilder &b = ctx.builder();
  Type i64 = b.getI64Type();
  auto outTy = RankedTensorType::get(outShape, i64);
  return tensor::GenerateOp::create(
      b, ctx.loc(), outTy, ValueRange{},
      [&](OpBuilder &nb, Location loc, ValueRange iv) {
        auto cst = [&](int64_t v) {
          return arith::ConstantIntOp::create(nb, loc, i64, v).getResult();
        };
        auto toI64 = [&](Value idx) {
          return arith::IndexCastOp::create(nb, loc, i64, idx).getResult();
        };
        Type et = xt.getElementType();
        Value best =
            isa<FloatType>(et)
                ? arith::ConstantOp::create(
                      nb, loc,
                      FloatAttr::get(et, -std::numeric_limits<double>::infinity()))
                      .getResult()
                : arith::ConstantOp::create(
                      nb, loc,
                      IntegerAttr::get(et, APInt::getSignedMinValue(
                                               et.getIntOrFloatBitWidth())))
                      .getResult();
        Value bestIdx = cst(0);
        Value found = arith::ConstantIntOp::create(nb, loc, nb.getI1Type(), 0);
        // Window start per axis: out * s - lo.
        SmallVector<Value> start;
        for (size_t i = 0; i < n; ++i)
          start.push_back(arith::SubIOp::create(
              nb, loc,
              arith::MulIOp::create(nb, loc, toI64(iv[2 + i]), cst(wins[i].s)),
              cst(wins[i].lo)));
        Value plane = arith::AddIOp::create(
            nb, loc, arith::MulIOp::create(nb, loc, toI64(iv[0]), cst(xs[1])),
            toI64(iv[1]));
        int64_t taps = 1;
        for (const AxisWindow &a : wins)
          taps *= a.k;
        for (int64_t t = 0; t < taps; ++t) {
          // Tap t's offset per axis, row-major over the kernel.
          SmallVector<int64_t> j(n);
          for (int64_t r = t, i = int64_t(n) - 1; i >= 0; --i) {
            j[i] = r % wins[i].k;
            r /= wins[i].k;
          }
          Value valid = arith::ConstantIntOp::create(nb, loc, nb.getI1Type(), 1);
          SmallVector<Value> pos, idx = {iv[0], iv[1]};
          for (size_t i = 0; i < n; ++i) {
            Value p = arith::AddIOp::create(nb, loc, start[i],
                                            cst(j[i] * wins[i].d));
            valid = arith::AndIOp::create(
                nb, loc, valid,
                arith::AndIOp::create(
                    nb, loc,
                    arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::sge, p,
                                          cst(0)),
                    arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::slt, p,
                                          cst(xs[2 + i]))));
            Value clamped = arith::MinSIOp::create(
                nb, loc, arith::MaxSIOp::create(nb, loc, p, cst(0)),
                cst(xs[2 + i] - 1));
            pos.push_back(clamped);
            idx.push_back(arith::IndexCastOp::create(nb, loc, nb.getIndexType(),
                                                     clamped));
          }
          Value v = tensor::ExtractOp::create(nb, loc, x, idx);
          Value greater =
              isa<FloatType>(et)
                  ? arith::CmpFOp::create(nb, loc, arith::CmpFPredicate::OGT, v,
                                          best)
                        .getResult()
                  : arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::sgt, v,
                                          best)
                        .getResult();
          // The first valid tap, then strictly larger ones.
          Value take = arith::AndIOp::create(
              nb, loc, valid,
              arith::OrIOp::create(
                  nb, loc, greater,
                  arith::XOrIOp::create(
                      nb, loc, found,
                      arith::ConstantIntOp::create(nb, loc, nb.getI1Type(), 1))));
          Value flat = plane;
          for (size_t k = 0; k < n; ++k) {
            size_t i = columnMajor ? n - 1 - k : k;
            flat = arith::AddIOp::create(
                nb, loc, arith::MulIOp::create(nb, loc, flat, cst(xs[2 + i])),
                pos[i]);
          }
          best = arith::SelectOp::create(nb, loc, take, v, best);
          bestIdx = arith::SelectOp::create(nb, loc, take, flat, bestIdx);
          found = arith::OrIOp::create(nb, loc, found, valid);
        }
        tensor::YieldOp::create(nb, loc, bestIdx);
      });
}

/// MaxPool, AveragePool, and LpPool (isLp: an average of |x|^p with the
/// padding counted, times the kernel size, to the power 1/p).
LogicalResult convertPool(NodeContext &ctx, PoolKind kind, bool isLp = false) {
  Value x = ctx.input(0);
  RankedTensorType xt = typeOf(x);
  if (xt.getRank() < 3) {
    ctx.emitError() << "expects an input of rank >= 3 (N, C, spatial...)";
    return failure();
  }
  SmallVector<int64_t> in = spatialDims(xt);
  size_t n = in.size();
  auto kernel = ctx.intsAttr("kernel_shape");
  if (failed(kernel))
    return failure();
  if (kernel->size() != n)
    return ctx.attrError("kernel_shape", "has " +
                                             std::to_string(kernel->size()) +
                                             " values for " +
                                             std::to_string(n) +
                                             " spatial dims");
  // LpPool has no ceil_mode before opset 18 (not read: reported if present).
  auto ceilMode = isLp ? FailureOr<int64_t>(0) : ctx.intAttr("ceil_mode", 0);
  if (failed(ceilMode))
    return failure();
  bool countIncludePad = isLp, columnMajor = false;
  FailureOr<int64_t> p = isLp ? readP(ctx) : FailureOr<int64_t>(1);
  if (failed(p))
    return failure();
  if (kind == PoolKind::Avg && !isLp) {
    auto cip = ctx.intAttr("count_include_pad", 0);
    if (failed(cip))
      return failure();
    countIncludePad = *cip != 0;
  } else {
    // storage_order only affects the Indices output.
    auto order = ctx.intAttr("storage_order", 0);
    if (failed(order))
      return failure();
    if (*order != 0 && *order != 1)
      return ctx.attrError("storage_order", "must be 0 or 1");
    columnMajor = *order == 1;
  }
  auto g = readGeometry(ctx, in, *kernel, kind == PoolKind::Max);
  if (failed(g))
    return failure();
  SmallVector<AxisWindow> wins;
  for (size_t i = 0; i < n; ++i) {
    AxisWindow a;
    a.k = g->kernel[i];
    a.s = g->strides[i];
    a.d = g->dilations[i];
    a.lo = g->lo[i];
    int64_t eff = g->effKernel(i);
    int64_t span = in[i] + g->lo[i] + g->hi[i] - eff;
    if (span < 0) {
      ctx.emitError() << "kernel (with dilation) is larger than the padded "
                         "input on spatial dim "
                      << i;
      return failure();
    }
    a.out = (*ceilMode ? (span + a.s - 1) / a.s : span / a.s) + 1;
    // ceil_mode: the last window must start inside the input or the left
    // padding (the PyTorch and ONNX rule).
    if (*ceilMode && (a.out - 1) * a.s >= in[i] + g->lo[i])
      --a.out;
    a.hi = (a.out - 1) * a.s + eff - in[i] - a.lo;
    if (countIncludePad) {
      a.inclLo = g->lo[i];
      a.inclHi = g->hi[i];
    }
    wins.push_back(a);
  }
  Type et = xt.getElementType();
  if (kind == PoolKind::Avg && !isa<FloatType>(et))
    return ctx.unsupported(ctx.opType() + " of a non-float tensor");
  if (et.isF64()) // TOSA pooling has no f64
    return ctx.unsupported(ctx.opType() + " of an f64 tensor");
  if (kind == PoolKind::Max && ctx.hasOutput(1))
    ctx.setOutput(1, maxPoolIndices(ctx, x, wins, columnMajor));
  if (isLp)
    x = lpPower(ctx, x, *p);
  FailureOr<Value> y = poolND(ctx, x, wins, kind);
  if (failed(y))
    return failure();
  if (isLp) {
    double size = static_cast<double>(numElements(*kernel));
    Value sum = ctx.tosa().mul(*y, ctx.tosa().scalar(et, size, xt.getRank()));
    y = lpRoot(ctx, sum, *p);
  }
  ctx.setOutput(0, *y);
  return success();
}

LogicalResult convertMaxPool(NodeContext &ctx) {
  return convertPool(ctx, PoolKind::Max);
}
LogicalResult convertAveragePool(NodeContext &ctx) {
  return convertPool(ctx, PoolKind::Avg);
}
LogicalResult convertLpPool(NodeContext &ctx) {
  return convertPool(ctx, PoolKind::Avg, /*isLp=*/true);
}

LogicalResult convertGlobalLpPool(NodeContext &ctx) {
  Value x = ctx.input(0);
  RankedTensorType xt = typeOf(x);
  auto p = readP(ctx);
  if (failed(p))
    return failure();
  if (xt.getRank() < 3 || !isa<FloatType>(xt.getElementType())) {
    ctx.emitError() << "expects a float input of rank >= 3";
    return failure();
  }
  x = lpPower(ctx, x, *p);
  for (int64_t axis = 2; axis < xt.getRank(); ++axis)
    x = ctx.tosa().reduceSum(x, axis);
  ctx.setOutput(0, lpRoot(ctx, x, *p));
  return success();
}

/// GlobalAveragePool / GlobalMaxPool: reduce every spatial axis, keeping it.
template <bool isMax> LogicalResult convertGlobalPool(NodeContext &ctx) {
  Value x = ctx.input(0);
  RankedTensorType xt = typeOf(x);
  if (xt.getRank() < 3) {
    ctx.emitError() << "expects an input of rank >= 3 (N, C, spatial...)";
    return failure();
  }
  if (!isMax && !isa<FloatType>(xt.getElementType()))
    return ctx.unsupported("GlobalAveragePool of a non-float tensor");
  for (int64_t axis = 2; axis < xt.getRank(); ++axis) {
    if (isMax) {
      x = ctx.tosa().reduceMax(x, axis);
    } else {
      SmallVector<int64_t> shape(typeOf(x).getShape());
      shape[axis] = 1;
      x = tessel::ReduceMeanOp::create(ctx.builder(), ctx.loc(),
                                       withShape(xt, shape), x,
                                       ctx.builder().getI64IntegerAttr(axis));
    }
  }
  ctx.setOutput(0, x);
  return success();
}

//===----------------------------------------------------------------------===//
// Conv
//===----------------------------------------------------------------------===//

/// Checks an optional kernel_shape attribute against the weight's dims.
LogicalResult checkKernelShape(NodeContext &ctx, ArrayRef<int64_t> kernel) {
  auto ks = ctx.intsAttr("kernel_shape", SmallVector<int64_t>(kernel));
  if (failed(ks))
    return failure();
  if (ArrayRef<int64_t>(*ks) != kernel)
    return ctx.attrError("kernel_shape", "does not match the weight's "
                                         "spatial dims");
  return success();
}

/// Shared checks of Conv / ConvTranspose operands: float X and W, 1-D or 2-D.
LogicalResult checkConvOperands(NodeContext &ctx, int64_t maxSpatial) {
  RankedTensorType xt = ctx.inputType(0), wt = ctx.inputType(1);
  if (!xt || !wt) {
    ctx.emitError() << "expects inputs X and W";
    return failure();
  }
  if (xt.getRank() != wt.getRank() || xt.getRank() < 3) {
    ctx.emitError() << "expects X and W of equal rank >= 3";
    return failure();
  }
  if (xt.getRank() - 2 > maxSpatial)
    return ctx.unsupported(Twine(xt.getRank() - 2) + "-D " + ctx.opType() +
                           " (only up to " + Twine(maxSpatial) + "-D)");
  if (!isConvFloat(xt.getElementType()) ||
      xt.getElementType() != wt.getElementType())
    return ctx.unsupported("convolution of element type other than f32, "
                           "f16, bf16");
  return success();
}

/// The bias input, or zeros of `channels` elements.
Value biasOrZeros(NodeContext &ctx, unsigned index, int64_t channels,
                  Type et) {
  if (ctx.hasInput(index))
    return ctx.input(index);
  return splatConstant(ctx, RankedTensorType::get({channels}, et), 0.0);
}

/// 1-D tensors (N, C, L) run as 2-D (N, C, 1, L).
Value as2D(NodeContext &ctx, Value v) {
  RankedTensorType t = typeOf(v);
  if (t.getRank() == 4)
    return v;
  return ctx.tosa().reshape(v, {t.getDimSize(0), t.getDimSize(1), 1,
                                t.getDimSize(2)});
}
template <typename T> SmallVector<T> lift2D(ArrayRef<T> v, T unit) {
  if (v.size() == 2)
    return SmallVector<T>(v);
  return {unit, v[0]};
}

/// Builds tessel.conv2d on NHWC `x` and OHWI `w`.
Value conv2d(NodeContext &ctx, Value x, Value w, Value bias,
             ArrayRef<int64_t> lo, ArrayRef<int64_t> hi,
             ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations,
             int64_t groups) {
  RankedTensorType xt = typeOf(x), wt = typeOf(w);
  SmallVector<int64_t> outShape{xt.getDimSize(0), 0, 0, wt.getDimSize(0)};
  for (int i = 0; i < 2; ++i)
    outShape[1 + i] = (xt.getDimSize(1 + i) + lo[i] + hi[i] -
                       dilations[i] * (wt.getDimSize(1 + i) - 1) - 1) /
                          strides[i] +
                      1;
  return tessel::Conv2DOp::create(ctx.builder(), ctx.loc(),
                                  withShape(xt, outShape), x, w, bias,
                                  ArrayRef<int64_t>{lo[0], hi[0], lo[1], hi[1]},
                                  strides, dilations,
                                  static_cast<uint64_t>(groups));
}

/// 3-D Conv as a sum over depth taps of 2-D convs: tap kd convolves the
/// depth slices kd*dd + od*sd (od < Do), stacked into the batch, with
/// W[:, :, kd]. The bias is added by the first tap only.
Value conv3d(NodeContext &ctx, Value x, Value w, Value bias,
             const Geometry &g, int64_t groups) {
  tessel::TosaBuilder &tb = ctx.tosa();
  RankedTensorType xt = typeOf(x), wt = typeOf(w);
  Type et = xt.getElementType();
  int64_t n = xt.getDimSize(0), c = xt.getDimSize(1), d = xt.getDimSize(2),
          h = xt.getDimSize(3), wd = xt.getDimSize(4);
  int64_t f = wt.getDimSize(0), cg = wt.getDimSize(1), kd = wt.getDimSize(2),
          kh = wt.getDimSize(3), kw = wt.getDimSize(4);
  int64_t sd = g.strides[0], dd = g.dilations[0];
  int64_t outD = (d + g.lo[0] + g.hi[0] - g.effKernel(0)) / sd + 1;
  // Pad depth so every tap can take Do*sd planes, then keep every sd-th.
  int64_t extent = (kd - 1) * dd + outD * sd;
  Value xc = channelsLast(ctx, x); // [N, D, H, W, C]
  xc = padOrCrop(ctx, xc, {0, g.lo[0], 0, 0, 0},
                 {0, extent - d - g.lo[0], 0, 0, 0}, scalar1(ctx, et, 0.0));
  Value zeros = splatConstant(ctx, RankedTensorType::get({f}, et), 0.0);
  Value sum;
  for (int64_t t = 0; t < kd; ++t) {
    Value planes = tb.slice(xc, {0, t * dd, 0, 0, 0}, {n, outD * sd, h, wd, c});
    planes = tb.reshape(planes, {n * outD, sd, h * wd * c});
    planes = tb.slice(planes, {0, 0, 0}, {n * outD, 1, h * wd * c});
    planes = tb.reshape(planes, {n * outD, h, wd, c});
    Value wt2 = tb.slice(w, {0, 0, t, 0, 0}, {f, cg, 1, kh, kw});
    wt2 = toNHWC(ctx, tb.reshape(wt2, {f, cg, kh, kw}));
    Value y = conv2d(ctx, planes, wt2, t == 0 ? bias : zeros,
                     {g.lo[1], g.lo[2]}, {g.hi[1], g.hi[2]},
                     {g.strides[1], g.strides[2]},
                     {g.dilations[1], g.dilations[2]}, groups);
    sum = sum ? tb.add(sum, y) : y;
  }
  ArrayRef<int64_t> ys = typeOf(sum).getShape();
  sum = tb.reshape(sum, {n, outD, ys[1], ys[2], f});
  return channelsFirst(ctx, sum);
}

LogicalResult convertConv(NodeContext &ctx) {
  if (failed(checkConvOperands(ctx, 3)))
    return failure();
  Value x = ctx.input(0), w = ctx.input(1);
  RankedTensorType xt = typeOf(x), wt = typeOf(w);
  SmallVector<int64_t> in = spatialDims(xt), kernel = spatialDims(wt);
  auto group = ctx.intAttr("group", 1);
  if (failed(group) || failed(checkKernelShape(ctx, kernel)))
    return failure();
  int64_t c = xt.getDimSize(1), f = wt.getDimSize(0);
  if (*group < 1 || c % *group || f % *group || wt.getDimSize(1) * *group != c)
    return ctx.attrError("group", "= " + std::to_string(*group) +
                                      " does not fit " + std::to_string(c) +
                                      " input and " + std::to_string(f) +
                                      " output channels");
  auto g = readGeometry(ctx, in, kernel, /*hasDilations=*/true);
  if (failed(g))
    return failure();
  for (size_t i = 0; i < in.size(); ++i)
    if (in[i] + g->lo[i] + g->hi[i] < g->effKernel(i)) {
      ctx.emitError() << "kernel (with dilation) is larger than the padded "
                         "input on spatial dim "
                      << i;
      return failure();
    }
  Value bias = biasOrZeros(ctx, 2, f, xt.getElementType());
  if (xt.getRank() == 5) {
    ctx.setOutput(0, conv3d(ctx, x, w, bias, *g, *group));
    return success();
  }
  Value xh = toNHWC(ctx, as2D(ctx, x));
  Value wh = toNHWC(ctx, as2D(ctx, w)); // OIHW -> OHWI
  Value y = conv2d(ctx, xh, wh, bias, lift2D<int64_t>(g->lo, 0),
                   lift2D<int64_t>(g->hi, 0), lift2D<int64_t>(g->strides, 1),
                   lift2D<int64_t>(g->dilations, 1), *group);
  y = toNCHW(ctx, y);
  if (xt.getRank() == 3)
    y = ctx.tosa().reshape(y, {xt.getDimSize(0), f, typeOf(y).getDimSize(3)});
  ctx.setOutput(0, y);
  return success();
}

//===----------------------------------------------------------------------===//
// ConvTranspose
//===----------------------------------------------------------------------===//

/// ConvTranspose as a convolution: insert stride-1 zeros between input
/// elements, pad by (effective kernel - 1 - pad) on each side (plus
/// output_padding at the end), and convolve (stride 1, same dilation and
/// groups) with the spatially flipped kernel, its in/out channels swapped.
/// Negative paddings crop. Output: s*(in-1) + output_padding + eff - lo - hi.
/// 3-D ConvTranspose by the same construction in NCDHW: the input spread
/// on the stride grid, padded by (effective kernel - 1 - pad) (negative:
/// cropped), convolved at stride 1 by conv3d with the flipped kernel.
Value convTranspose3d(NodeContext &ctx, Value x, Value w, const Geometry &g,
                      ArrayRef<int64_t> outPad, int64_t groups) {
  tessel::TosaBuilder &tb = ctx.tosa();
  RankedTensorType xt = typeOf(x), wt = typeOf(w);
  Type et = xt.getElementType();
  ArrayRef<int64_t> xs = xt.getShape();
  int64_t batch = xs[0], c = xs[1], mg = wt.getDimSize(1), m = mg * groups;
  ArrayRef<int64_t> s = g.strides;
  if (llvm::any_of(s, [](int64_t v) { return v > 1; })) {
    // [N, C, D, 1, H, 1, W, 1] padded to [.., s0, .., s1, .., s2]: each
    // element followed by s-1 zeros on each axis.
    Value v = tb.reshape(x, {batch, c, xs[2], 1, xs[3], 1, xs[4], 1});
    v = padOrCrop(ctx, v, SmallVector<int64_t>(8, 0),
                  {0, 0, 0, s[0] - 1, 0, s[1] - 1, 0, s[2] - 1},
                  scalar1(ctx, et, 0.0));
    x = tb.reshape(v, {batch, c, xs[2] * s[0], xs[3] * s[1], xs[4] * s[2]});
  }
  SmallVector<int64_t> clo(3), chi(3), cropLo(5, 0), cropHi(5, 0);
  for (int i = 0; i < 3; ++i) {
    clo[i] = g.effKernel(i) - 1 - g.lo[i];
    // The spread input already ends in s-1 zeros.
    chi[i] = g.effKernel(i) - 1 - g.hi[i] + outPad[i] - (s[i] - 1);
    cropLo[2 + i] = std::min<int64_t>(clo[i], 0);
    cropHi[2 + i] = std::min<int64_t>(chi[i], 0);
    clo[i] = std::max<int64_t>(clo[i], 0);
    chi[i] = std::max<int64_t>(chi[i], 0);
  }
  x = padOrCrop(ctx, x, cropLo, cropHi, scalar1(ctx, et, 0.0));
  // W [C, M/g, k...] -> [M, C/g, k...], flipped in every spatial axis.
  int64_t cg = c / groups;
  ArrayRef<int64_t> k(g.kernel);
  Value wv = tb.reshape(w, {groups, cg, mg, k[0], k[1], k[2]});
  wv = tb.transpose(wv, {0, 2, 1, 3, 4, 5});
  wv = tb.reshape(wv, {m, cg, k[0], k[1], k[2]});
  for (uint32_t axis : {2u, 3u, 4u})
    if (k[axis - 2] > 1)
      wv = tosa::ReverseOp::create(ctx.builder(), ctx.loc(), typeOf(wv), wv,
                                   axis);
  Geometry conv;
  conv.kernel.assign(k.begin(), k.end());
  conv.strides.assign(3, 1);
  conv.dilations = g.dilations;
  conv.lo = clo;
  conv.hi = chi;
  return conv3d(ctx, x, wv, biasOrZeros(ctx, 2, m, et), conv, groups);
}

LogicalResult convertConvTranspose(NodeContext &ctx) {
  if (failed(checkConvOperands(ctx, 3)))
    return failure();
  Value x = ctx.input(0), w = ctx.input(1);
  RankedTensorType xt = typeOf(x), wt = typeOf(w);
  Type et = xt.getElementType();
  SmallVector<int64_t> in = spatialDims(xt), kernel = spatialDims(wt);
  size_t n = in.size();
  auto group = ctx.intAttr("group", 1);
  if (failed(group) || failed(checkKernelShape(ctx, kernel)))
    return failure();
  int64_t c = xt.getDimSize(1);
  if (*group < 1 || c % *group || wt.getDimSize(0) != c)
    return ctx.attrError("group", "= " + std::to_string(*group) +
                                      " does not fit " + std::to_string(c) +
                                      " input channels and W of shape [" +
                                      std::to_string(wt.getDimSize(0)) +
                                      ", ...]");
  int64_t groups = *group, mg = wt.getDimSize(1), m = mg * groups;
  auto g = readGeometry(ctx, in, kernel, true, /*resolveSame=*/false);
  auto outPad = ctx.intsAttr("output_padding", SmallVector<int64_t>(n, 0));
  auto outShape = ctx.intsAttr("output_shape", SmallVector<int64_t>());
  if (failed(g) || failed(outPad) || failed(outShape))
    return failure();
  if (outPad->size() != n)
    return ctx.attrError("output_padding", "must have one value per "
                                           "spatial dim");
  if (!outShape->empty() && outShape->size() != n &&
      outShape->size() != n + 2)
    return ctx.attrError("output_shape", "must have one value per spatial "
                                         "dim");
  for (size_t i = 0; i < n; ++i) {
    if ((*outPad)[i] < 0 || (*outPad)[i] >= std::max(g->strides[i],
                                                     g->dilations[i]))
      return ctx.attrError("output_padding", "values must be in [0, "
                                             "max(stride, dilation))");
    // output_shape (or SAME) fixes the output size; the spec then splits
    // the total padding with the odd unit at the start, except SAME_UPPER.
    int64_t want = -1;
    if (!outShape->empty())
      want = (*outShape)[outShape->size() - n + i];
    else if (g->autoPad == "SAME_UPPER" || g->autoPad == "SAME_LOWER")
      want = in[i] * g->strides[i];
    if (want < 0)
      continue;
    int64_t total = g->strides[i] * (in[i] - 1) + (*outPad)[i] +
                    g->effKernel(i) - want;
    // Floor division, as the reference: a negative total (output larger
    // than the natural size) extends the end.
    int64_t half = total >= 0 ? total / 2 : -((1 - total) / 2);
    g->lo[i] = g->autoPad == "SAME_UPPER" ? half : total - half;
    g->hi[i] = total - g->lo[i];
  }
  SmallVector<int64_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    out[i] = g->strides[i] * (in[i] - 1) + (*outPad)[i] + g->effKernel(i) -
             g->lo[i] - g->hi[i];
    if (out[i] < 1) {
      ctx.emitError() << "output spatial dim " << i << " would be " << out[i];
      return failure();
    }
  }
  if (n == 3) {
    ctx.setOutput(0, convTranspose3d(ctx, x, w, *g, *outPad, groups));
    return success();
  }
  // Everything below is 2-D: (N, C, 1, L) for 1-D.
  SmallVector<int64_t> s = lift2D<int64_t>(g->strides, 1),
                       d = lift2D<int64_t>(g->dilations, 1),
                       k = lift2D<int64_t>(kernel, 1),
                       lo = lift2D<int64_t>(g->lo, 0),
                       hi = lift2D<int64_t>(g->hi, 0),
                       op = lift2D<int64_t>(*outPad, 0),
                       in2 = lift2D<int64_t>(in, 1);
  tessel::TosaBuilder &tb = ctx.tosa();
  int64_t batch = xt.getDimSize(0);
  Value xh = toNHWC(ctx, as2D(ctx, x)); // [N, H, W, C]
  // One group, no dilation, no cropping or output padding: TOSA's
  // transpose_conv2d says exactly this (out[ih*s + kh] += x[ih] * w[kh]),
  // and tessel-decompose-transpose-conv chooses how to compute it.
  if (groups == 1 && et.isF32() && llvm::all_of(d, [](int64_t v) { return v == 1; }) &&
      llvm::all_of(lo, [](int64_t v) { return v == 0; }) &&
      llvm::all_of(hi, [](int64_t v) { return v == 0; }) &&
      llvm::all_of(op, [](int64_t v) { return v == 0; })) {
    // W [C, M, KH, KW] -> [M, KH, KW, C].
    Value wv = tb.transpose(as2D(ctx, w), {1, 2, 3, 0});
    Value bias = biasOrZeros(ctx, 2, m, et);
    auto outTy = RankedTensorType::get(
        {batch, s[0] * (in2[0] - 1) + k[0], s[1] * (in2[1] - 1) + k[1], m}, et);
    Value y = tosa::TransposeConv2DOp::create(
        ctx.builder(), ctx.loc(), outTy, xh, wv, bias, tb.zeroPoint(et),
        tb.zeroPoint(et), ctx.builder().getDenseI64ArrayAttr({0, 0, 0, 0}),
        ctx.builder().getDenseI64ArrayAttr(s), TypeAttr::get(et),
        ctx.builder().getBoolAttr(false));
    y = toNCHW(ctx, y);
    if (n == 1)
      y = tb.reshape(y, {batch, m, out[0]});
    ctx.setOutput(0, y);
    return success();
  }
  // Zero insertion: [N*H, 1, W, 1, C] padded to [N*H, sh, W, sw, C] is the
  // input spread on a stride grid with s-1 trailing zeros per element.
  if (s[0] > 1 || s[1] > 1) {
    Value v = tb.reshape(xh, {batch * in2[0], 1, in2[1], 1, c});
    v = padOrCrop(ctx, v, {0, 0, 0, 0, 0}, {0, s[0] - 1, 0, s[1] - 1, 0},
                  scalar1(ctx, et, 0.0));
    xh = tb.reshape(v, {batch, in2[0] * s[0], in2[1] * s[1], c});
  }
  SmallVector<int64_t> clo(2), chi(2);
  for (int i = 0; i < 2; ++i) {
    int64_t eff = d[i] * (k[i] - 1) + 1;
    clo[i] = eff - 1 - lo[i];
    // The spread input already ends in s-1 zeros.
    chi[i] = eff - 1 - hi[i] + op[i] - (s[i] - 1);
  }
  // Negative paddings crop the spread input; the conv gets the rest.
  xh = padOrCrop(ctx, xh, {0, std::min<int64_t>(clo[0], 0),
                           std::min<int64_t>(clo[1], 0), 0},
                 {0, std::min<int64_t>(chi[0], 0),
                  std::min<int64_t>(chi[1], 0), 0},
                 scalar1(ctx, et, 0.0));
  for (int i = 0; i < 2; ++i) {
    clo[i] = std::max<int64_t>(clo[i], 0);
    chi[i] = std::max<int64_t>(chi[i], 0);
  }
  // W [C, M/g, KH, KW] -> OHWI [M, KH, KW, C/g], flipped in KH and KW.
  int64_t cg = c / groups;
  Value wv = tb.reshape(as2D(ctx, w), {groups, cg, mg, k[0], k[1]});
  wv = tb.transpose(wv, {0, 2, 3, 4, 1});
  wv = tb.reshape(wv, {m, k[0], k[1], cg});
  for (uint32_t axis : {1u, 2u})
    if (k[axis - 1] > 1)
      wv = tosa::ReverseOp::create(ctx.builder(), ctx.loc(), typeOf(wv), wv,
                                   axis);
  Value bias = biasOrZeros(ctx, 2, m, et);
  Value y = conv2d(ctx, xh, wv, bias, clo, chi, {1, 1}, d, groups);
  y = toNCHW(ctx, y);
  if (n == 1)
    y = tb.reshape(y, {batch, m, out[0]});
  ctx.setOutput(0, y);
  return success();
}

} // namespace

void mlir::tessel::onnx_import::registerConvPoolConverters(ConverterMap &map) {
  map["Conv"] = convertConv;
  map["ConvTranspose"] = convertConvTranspose;
  map["MaxPool"] = convertMaxPool;
  map["AveragePool"] = convertAveragePool;
  map["GlobalAveragePool"] = convertGlobalPool<false>;
  map["GlobalMaxPool"] = convertGlobalPool<true>;
  map["LpPool"] = convertLpPool;
  map["GlobalLpPool"] = convertGlobalLpPool;
}
