//===- ConstantEvaluator.cpp - fold a slice of graph ops on constants -----===//
//
// Each op's meaning here is the TOSA specification's (and the tessel op's
// description); results are rounded to their element type where that type
// is an integer (casts, division) so that masks and indices fold exactly.
//
//===----------------------------------------------------------------------===//

#include "ConstantEvaluator.h"

#include "tessel/Dialect/Tessel/IR/TesselDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

using namespace mlir;
using namespace mlir::tessel;
using namespace mlir::tessel::compose;

namespace {

/// Gate slices are small; a constant larger than this is a weight, not a
/// gate operand, and is not read.
constexpr int64_t kMaxElements = int64_t(1) << 20;
/// A splat (an exporter's zeros_like of the tokens, `T x d`) is read up to
/// this size: it holds one value, whatever the token count and width.
constexpr int64_t kMaxSplatElements = int64_t(1) << 24;

int64_t product(ArrayRef<int64_t> shape) {
  return std::accumulate(shape.begin(), shape.end(), int64_t(1),
                         std::multiplies<int64_t>());
}

SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> s(shape.size(), 1);
  for (int64_t d = int64_t(shape.size()) - 2; d >= 0; --d)
    s[d] = s[d + 1] * shape[d + 1];
  return s;
}

std::optional<Folded> fromAttr(Attribute attr) {
  auto dense = dyn_cast_or_null<DenseElementsAttr>(attr);
  if (!dense || !dense.getType().hasStaticShape() ||
      dense.getNumElements() >
          (dense.isSplat() ? kMaxSplatElements : kMaxElements))
    return std::nullopt;
  Folded f;
  f.shape.assign(dense.getType().getShape().begin(),
                 dense.getType().getShape().end());
  Type et = dense.getElementType();
  if (isa<FloatType>(et)) {
    for (const APFloat &v : dense.getValues<APFloat>())
      f.data.push_back(v.convertToDouble());
  } else if (isa<IndexType>(et)) {
    for (const APInt &v : dense.getValues<APInt>())
      f.data.push_back(double(v.getSExtValue()));
  } else if (auto it = dyn_cast<IntegerType>(et)) {
    bool isUnsigned = it.isUnsigned() || it.getWidth() == 1;
    for (const APInt &v : dense.getValues<APInt>())
      f.data.push_back(isUnsigned ? double(v.getZExtValue())
                                  : double(v.getSExtValue()));
  } else {
    return std::nullopt;
  }
  return f;
}

Type elementOf(Value v) { return getElementTypeOrSelf(v.getType()); }

/// Rounds `x` as a value of element type `t`: integers truncate toward zero
/// (callers round first where the op rounds), i1 is x != 0.
double asElement(Type t, double x) {
  if (auto it = dyn_cast<IntegerType>(t))
    return it.getWidth() == 1 ? double(x != 0.0) : std::trunc(x);
  return x;
}

/// Elementwise over operands of equal rank, size-1 dims broadcast.
std::optional<Folded>
elementwise(ArrayRef<Folded> in, Type outElem,
            const std::function<double(ArrayRef<double>)> &fn) {
  size_t rank = in.front().shape.size();
  Folded out;
  out.shape.assign(rank, 1);
  for (const Folded &f : in) {
    if (f.shape.size() != rank)
      return std::nullopt;
    for (size_t d = 0; d < rank; ++d) {
      if (f.shape[d] == out.shape[d] || f.shape[d] == 1)
        continue;
      if (out.shape[d] != 1)
        return std::nullopt;
      out.shape[d] = f.shape[d];
    }
  }
  int64_t n = product(out.shape);
  SmallVector<int64_t> outStrides = stridesOf(out.shape);
  SmallVector<SmallVector<int64_t>> inStrides;
  for (const Folded &f : in)
    inStrides.push_back(stridesOf(f.shape));
  out.data.resize(n);
  SmallVector<double> args(in.size());
  for (int64_t i = 0; i < n; ++i) {
    for (size_t a = 0; a < in.size(); ++a) {
      int64_t rem = i, off = 0;
      for (size_t d = 0; d < rank; ++d) {
        int64_t c = rem / outStrides[d];
        rem %= outStrides[d];
        if (in[a].shape[d] != 1)
          off += c * inStrides[a][d];
      }
      args[a] = in[a].data[off];
    }
    out.data[i] = asElement(outElem, fn(args));
  }
  return out;
}

/// Reduction along `axis`, the axis kept with size 1.
Folded reduce(const Folded &x, int64_t axis, double init,
              const std::function<double(double, double)> &fn) {
  Folded out;
  out.shape = x.shape;
  int64_t n = x.shape[axis];
  out.shape[axis] = 1;
  int64_t inner = product(ArrayRef<int64_t>(x.shape).drop_front(axis + 1));
  int64_t outer = product(ArrayRef<int64_t>(x.shape).take_front(axis));
  out.data.assign(outer * inner, init);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < inner; ++i)
        out.data[o * inner + i] =
            fn(out.data[o * inner + i], x.data[(o * n + j) * inner + i]);
  return out;
}

/// Index of the first maximum along `axis` (removed), as tosa.argmax.
Folded argmax(const Folded &x, int64_t axis) {
  Folded out;
  out.shape = x.shape;
  out.shape.erase(out.shape.begin() + axis);
  int64_t n = x.shape[axis];
  int64_t inner = product(ArrayRef<int64_t>(x.shape).drop_front(axis + 1));
  int64_t outer = product(ArrayRef<int64_t>(x.shape).take_front(axis));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t best = 0;
      for (int64_t j = 1; j < n; ++j)
        if (x.data[(o * n + j) * inner + i] > x.data[(o * n + best) * inner + i])
          best = j;
      out.data.push_back(double(best));
    }
  return out;
}

/// For tosa.gather and tosa.scatter: calls `fn(from, to)` for each index
/// row `from` = n * W + w of `indices` [N, W] and the row `to` =
/// n * K + indices[n, w] of `values` [N, K, C] it names; false if an index
/// is out of range.
bool forEachIndexedRow(const Folded &values, const Folded &indices,
                       llvm::function_ref<void(int64_t, int64_t)> fn) {
  int64_t n = values.shape[0], k = values.shape[1], w = indices.shape[1];
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < w; ++j) {
      // (Compared as a double first: a NaN or huge index is no index.)
      double at = indices.data[i * w + j];
      if (!(at >= 0 && at < double(k)))
        return false;
      fn(i * w + j, i * k + int64_t(at));
    }
  return true;
}

std::optional<SmallVector<int64_t>> shapeOperand(ConstantEvaluator &ev,
                                                 Value v) {
  std::optional<Folded> f = ev.eval(v);
  if (!f)
    return std::nullopt;
  SmallVector<int64_t> s;
  for (double d : f->data) {
    if (!(std::fabs(d) < 0x1p62))
      return std::nullopt;
    s.push_back(int64_t(d));
  }
  return s;
}

} // namespace

int64_t Folded::numElements() const { return product(shape); }

bool mlir::tessel::compose::isConstantValue(Value v) {
  Operation *def = v.getDefiningOp();
  return def && (def->hasTrait<OpTrait::ConstantLike>() ||
                 isa<tosa::ConstShapeOp>(def));
}

void ConstantEvaluator::bind(Value v, Folded value) {
  bound[v] = std::move(value);
  memo.clear();
}

std::optional<Folded> ConstantEvaluator::eval(Value v) {
  auto b = bound.find(v);
  if (b != bound.end())
    return b->second;
  auto m = memo.find(v);
  if (m != memo.end())
    return m->second;
  std::optional<Folded> r;
  if (auto res = dyn_cast<OpResult>(v))
    r = evalOp(res.getOwner(), res.getResultNumber());
  memo[v] = r;
  return r;
}

std::optional<Folded> ConstantEvaluator::evalOp(Operation *op,
                                                unsigned result) {
  if (op->getNumRegions() ||
      (!isa<ShapedType>(op->getResult(result).getType()) &&
       !isa<tosa::ConstShapeOp>(op)))
    return std::nullopt;
  // Constants.
  if (auto c = dyn_cast<tosa::ConstShapeOp>(op))
    return fromAttr(c.getValues());
  if (op->hasTrait<OpTrait::ConstantLike>()) {
    Attribute attr;
    if (!matchPattern(op->getResult(result), m_Constant(&attr)))
      return std::nullopt;
    return fromAttr(attr);
  }
  SmallVector<Folded> in;
  auto operands = [&](unsigned count) {
    in.clear();
    for (unsigned i = 0; i < count; ++i) {
      std::optional<Folded> f = eval(op->getOperand(i));
      if (!f)
        return false;
      in.push_back(std::move(*f));
    }
    return true;
  };
  Value out = op->getResult(result);
  Type outElem = elementOf(out);
  bool intOut = isa<IntegerType>(outElem);
  using Fn = std::function<double(ArrayRef<double>)>;
  auto binary = [&](Fn fn) -> std::optional<Folded> {
    if (!operands(2))
      return std::nullopt;
    return elementwise(in, outElem, fn);
  };
  auto unary = [&](std::function<double(double)> fn) -> std::optional<Folded> {
    if (!operands(1))
      return std::nullopt;
    return elementwise(in, outElem, [&](ArrayRef<double> a) { return fn(a[0]); });
  };
  auto zeroPoints = [&](unsigned first) {
    for (unsigned i = first; i < op->getNumOperands(); ++i) {
      std::optional<Folded> zp = eval(op->getOperand(i));
      if (!zp || llvm::any_of(zp->data, [](double d) { return d != 0.0; }))
        return false;
    }
    return true;
  };
  auto axisOf = [&](int64_t axis, size_t rank) {
    return axis < 0 ? axis + int64_t(rank) : axis;
  };

  return llvm::TypeSwitch<Operation *, std::optional<Folded>>(op)
      // Elementwise arithmetic (tosa and arith on tensors).
      .Case<tosa::AddOp, arith::AddFOp, arith::AddIOp>([&](auto) {
        return binary([](ArrayRef<double> a) { return a[0] + a[1]; });
      })
      .Case<tosa::SubOp, arith::SubFOp, arith::SubIOp>([&](auto) {
        return binary([](ArrayRef<double> a) { return a[0] - a[1]; });
      })
      .Case<tosa::MulOp>([&](tosa::MulOp mul) -> std::optional<Folded> {
        // An integer multiply with a shift rounds; gates never use one.
        if (intOut) {
          std::optional<Folded> shift = eval(mul.getShift());
          if (!shift || llvm::any_of(shift->data,
                                     [](double d) { return d != 0.0; }))
            return std::nullopt;
        }
        return binary([](ArrayRef<double> a) { return a[0] * a[1]; });
      })
      .Case<arith::MulFOp, arith::MulIOp>([&](auto) {
        return binary([](ArrayRef<double> a) { return a[0] * a[1]; });
      })
      .Case<arith::DivFOp>([&](auto) {
        return binary([](ArrayRef<double> a) { return a[0] / a[1]; });
      })
      .Case<tosa::IntDivOp>([&](auto) -> std::optional<Folded> {
        if (!operands(2) || llvm::is_contained(in[1].data, 0.0))
          return std::nullopt;
        return elementwise(in, outElem, [](ArrayRef<double> a) {
          return std::trunc(a[0] / a[1]);
        });
      })
      .Case<tosa::MaximumOp>([&](auto) {
        return binary(
            [](ArrayRef<double> a) { return std::max(a[0], a[1]); });
      })
      .Case<tosa::MinimumOp>([&](auto) {
        return binary(
            [](ArrayRef<double> a) { return std::min(a[0], a[1]); });
      })
      .Case<tosa::PowOp>([&](auto) {
        return binary(
            [](ArrayRef<double> a) { return std::pow(a[0], a[1]); });
      })
      .Case<tosa::EqualOp>([&](auto) {
        return binary([](ArrayRef<double> a) { return double(a[0] == a[1]); });
      })
      .Case<tosa::GreaterOp>([&](auto) {
        return binary([](ArrayRef<double> a) { return double(a[0] > a[1]); });
      })
      .Case<tosa::GreaterEqualOp>([&](auto) {
        return binary([](ArrayRef<double> a) { return double(a[0] >= a[1]); });
      })
      .Case<tosa::LogicalAndOp>([&](auto) {
        return binary(
            [](ArrayRef<double> a) { return double(a[0] != 0 && a[1] != 0); });
      })
      .Case<tosa::LogicalOrOp>([&](auto) {
        return binary(
            [](ArrayRef<double> a) { return double(a[0] != 0 || a[1] != 0); });
      })
      .Case<tosa::LogicalNotOp>(
          [&](auto) { return unary([](double x) { return double(x == 0); }); })
      .Case<tosa::ExpOp>(
          [&](auto) { return unary([](double x) { return std::exp(x); }); })
      .Case<tosa::LogOp>(
          [&](auto) { return unary([](double x) { return std::log(x); }); })
      .Case<tosa::ReciprocalOp>(
          [&](auto) { return unary([](double x) { return 1.0 / x; }); })
      .Case<tosa::AbsOp>(
          [&](auto) { return unary([](double x) { return std::fabs(x); }); })
      .Case<tosa::SigmoidOp>([&](auto) {
        return unary([](double x) { return 1.0 / (1.0 + std::exp(-x)); });
      })
      .Case<tosa::TanhOp>(
          [&](auto) { return unary([](double x) { return std::tanh(x); }); })
      .Case<tosa::NegateOp>([&](auto) -> std::optional<Folded> {
        if (!zeroPoints(1))
          return std::nullopt;
        return unary([](double x) { return -x; });
      })
      .Case<tosa::ClampOp>([&](tosa::ClampOp c) -> std::optional<Folded> {
        auto bound = [](Attribute a) -> std::optional<double> {
          if (auto f = dyn_cast<FloatAttr>(a))
            return f.getValueAsDouble();
          if (auto i = dyn_cast<IntegerAttr>(a))
            return double(i.getValue().getSExtValue());
          return std::nullopt;
        };
        std::optional<double> lo = bound(c.getMinValAttr()),
                              hi = bound(c.getMaxValAttr());
        if (!lo || !hi)
          return std::nullopt;
        return unary([&](double x) { return std::clamp(x, *lo, *hi); });
      })
      // Casts: float to integer rounds to nearest even (tosa.cast) or
      // truncates (arith).
      .Case<tosa::CastOp>([&](auto) {
        bool fromFloat = isa<FloatType>(elementOf(op->getOperand(0)));
        return unary([&](double x) {
          return fromFloat && intOut ? std::nearbyint(x) : x;
        });
      })
      .Case<arith::ExtSIOp, arith::ExtUIOp, arith::SIToFPOp, arith::UIToFPOp,
            arith::ExtFOp, arith::TruncFOp, arith::FPToSIOp, arith::TruncIOp>(
          [&](auto) { return unary([](double x) { return x; }); })
      .Case<tosa::SelectOp>([&](auto) -> std::optional<Folded> {
        if (!operands(3))
          return std::nullopt;
        return elementwise(in, outElem, [](ArrayRef<double> a) {
          return a[0] != 0 ? a[1] : a[2];
        });
      })
      // Reductions.
      .Case<tosa::ReduceSumOp, tosa::ReduceMaxOp, tosa::ReduceMinOp,
            tosa::ReduceProductOp>([&](auto r) -> std::optional<Folded> {
        if (!operands(1))
          return std::nullopt;
        int64_t axis = r.getAxis();
        if (axis < 0 || axis >= int64_t(in[0].shape.size()))
          return std::nullopt;
        using R = decltype(r);
        if constexpr (std::is_same_v<R, tosa::ReduceSumOp>)
          return reduce(in[0], axis, 0.0, std::plus<double>());
        if constexpr (std::is_same_v<R, tosa::ReduceProductOp>)
          return reduce(in[0], axis, 1.0, std::multiplies<double>());
        if constexpr (std::is_same_v<R, tosa::ReduceMaxOp>)
          return reduce(in[0], axis, -INFINITY,
                        [](double a, double b) { return std::max(a, b); });
        return reduce(in[0], axis, INFINITY,
                      [](double a, double b) { return std::min(a, b); });
      })
      .Case<ReduceMeanOp>([&](ReduceMeanOp r) -> std::optional<Folded> {
        if (!operands(1))
          return std::nullopt;
        int64_t axis = axisOf(r.getAxis(), in[0].shape.size());
        Folded s = reduce(in[0], axis, 0.0, std::plus<double>());
        for (double &d : s.data)
          d /= double(in[0].shape[axis]);
        return s;
      })
      .Case<tosa::ArgMaxOp>([&](tosa::ArgMaxOp a) -> std::optional<Folded> {
        if (!operands(1))
          return std::nullopt;
        return argmax(in[0], a.getAxis());
      })
      .Case<SoftmaxOp>([&](SoftmaxOp s) -> std::optional<Folded> {
        if (!operands(1))
          return std::nullopt;
        int64_t axis = s.getNormalizedAxis();
        Folded mx = reduce(in[0], axis, -INFINITY,
                           [](double a, double b) { return std::max(a, b); });
        std::optional<Folded> e = elementwise(
            {in[0], mx}, outElem,
            [](ArrayRef<double> a) { return std::exp(a[0] - a[1]); });
        Folded sum = reduce(*e, axis, 0.0, std::plus<double>());
        return elementwise({*e, sum}, outElem,
                           [](ArrayRef<double> a) { return a[0] / a[1]; });
      })
      .Case<TopKOp>([&](TopKOp t) -> std::optional<Folded> {
        if (!operands(1) || in[0].shape.size() != 2 ||
            t.getNormalizedAxis() != 1)
          return std::nullopt;
        int64_t rows = in[0].shape[0], n = in[0].shape[1], k = t.getK();
        Folded outV;
        outV.shape = {rows, k};
        for (int64_t r = 0; r < rows; ++r) {
          SmallVector<int64_t> order(n);
          std::iota(order.begin(), order.end(), 0);
          const double *row = &in[0].data[r * n];
          bool largest = t.getLargest();
          std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
            return largest ? row[a] > row[b] : row[a] < row[b];
          });
          for (int64_t j = 0; j < k; ++j)
            outV.data.push_back(result == 0 ? row[order[j]] : double(order[j]));
        }
        return outV;
      })
      // Index checks pass their operand through (out of range: not a gate).
      .Case<CheckIndicesOp>([&](auto) -> std::optional<Folded> {
        if (!operands(1))
          return std::nullopt;
        return in[0];
      })
      // Data movement.
      .Case<tosa::ReshapeOp>([&](tosa::ReshapeOp r) -> std::optional<Folded> {
        std::optional<SmallVector<int64_t>> shape =
            shapeOperand(*this, r.getShape());
        if (!operands(1) || !shape || product(*shape) != in[0].numElements())
          return std::nullopt;
        in[0].shape = *shape;
        return in[0];
      })
      .Case<tosa::SliceOp>([&](tosa::SliceOp s) -> std::optional<Folded> {
        std::optional<SmallVector<int64_t>> start =
            shapeOperand(*this, s.getStart());
        std::optional<SmallVector<int64_t>> size =
            shapeOperand(*this, s.getSize());
        if (!operands(1) || !start || !size ||
            start->size() != in[0].shape.size() ||
            size->size() != start->size() ||
            llvm::any_of(*size, [](int64_t d) { return d < 0; }))
          return std::nullopt;
        Folded o;
        o.shape = *size;
        int64_t n = product(*size);
        SmallVector<int64_t> os = stridesOf(*size), is = stridesOf(in[0].shape);
        for (int64_t i = 0; i < n; ++i) {
          int64_t rem = i, off = 0;
          for (size_t d = 0; d < os.size(); ++d) {
            int64_t c = rem / os[d] + (*start)[d];
            rem %= os[d];
            if (c < 0 || c >= in[0].shape[d])
              return std::nullopt;
            off += c * is[d];
          }
          o.data.push_back(in[0].data[off]);
        }
        return o;
      })
      .Case<tosa::TileOp>([&](tosa::TileOp t) -> std::optional<Folded> {
        std::optional<SmallVector<int64_t>> mult =
            shapeOperand(*this, t.getMultiples());
        if (!operands(1) || !mult || mult->size() != in[0].shape.size() ||
            llvm::any_of(*mult, [](int64_t m) { return m < 1; }))
          return std::nullopt;
        Folded o;
        for (auto [s, m] : llvm::zip(in[0].shape, *mult))
          o.shape.push_back(s * m);
        SmallVector<int64_t> os = stridesOf(o.shape), is = stridesOf(in[0].shape);
        for (int64_t i = 0, n = product(o.shape); i < n; ++i) {
          int64_t rem = i, off = 0;
          for (size_t d = 0; d < os.size(); ++d) {
            off += (rem / os[d]) % in[0].shape[d] * is[d];
            rem %= os[d];
          }
          o.data.push_back(in[0].data[off]);
        }
        return o;
      })
      .Case<tosa::TransposeOp>([&](tosa::TransposeOp t) -> std::optional<Folded> {
        if (!operands(1))
          return std::nullopt;
        ArrayRef<int32_t> perms = t.getPerms();
        Folded o;
        for (int32_t p : perms)
          o.shape.push_back(in[0].shape[p]);
        SmallVector<int64_t> os = stridesOf(o.shape), is = stridesOf(in[0].shape);
        for (int64_t i = 0, n = product(o.shape); i < n; ++i) {
          int64_t rem = i, off = 0;
          for (size_t d = 0; d < os.size(); ++d) {
            off += rem / os[d] * is[perms[d]];
            rem %= os[d];
          }
          o.data.push_back(in[0].data[off]);
        }
        return o;
      })
      .Case<tosa::ConcatOp>([&](tosa::ConcatOp c) -> std::optional<Folded> {
        if (!operands(op->getNumOperands()))
          return std::nullopt;
        int64_t axis = c.getAxis();
        Folded o;
        o.shape = in[0].shape;
        o.shape[axis] = 0;
        for (const Folded &f : in)
          o.shape[axis] += f.shape[axis];
        int64_t outer = product(ArrayRef<int64_t>(o.shape).take_front(axis));
        for (int64_t r = 0; r < outer; ++r)
          for (const Folded &f : in) {
            int64_t chunk = f.numElements() / std::max<int64_t>(outer, 1);
            o.data.insert(o.data.end(), f.data.begin() + r * chunk,
                          f.data.begin() + (r + 1) * chunk);
          }
        return o;
      })
      .Case<tosa::GatherOp>([&](auto) -> std::optional<Folded> {
        // values [N, K, C], indices [N, W] -> [N, W, C].
        if (!operands(2))
          return std::nullopt;
        int64_t c = in[0].shape[2];
        Folded o;
        o.shape = {in[0].shape[0], in[1].shape[1], c};
        o.data.resize(o.numElements());
        if (!forEachIndexedRow(in[0], in[1], [&](int64_t from, int64_t to) {
              std::copy_n(&in[0].data[to * c], c, &o.data[from * c]);
            }))
          return std::nullopt;
        return o;
      })
      .Case<tosa::ScatterOp>([&](auto) -> std::optional<Folded> {
        // values_in [N, K, C], indices [N, W], input [N, W, C].
        if (!operands(3))
          return std::nullopt;
        Folded o = in[0];
        int64_t c = o.shape[2];
        if (!forEachIndexedRow(in[0], in[1], [&](int64_t from, int64_t to) {
              std::copy_n(&in[2].data[from * c], c, &o.data[to * c]);
            }))
          return std::nullopt;
        return o;
      })
      .Case<tosa::MatMulOp>([&](tosa::MatMulOp m) -> std::optional<Folded> {
        // [N, H, C] x [N, C, W] (one-hot sums); zero points must be 0.
        if (!operands(2) || !zeroPoints(2))
          return std::nullopt;
        int64_t n = in[0].shape[0], h = in[0].shape[1], c = in[0].shape[2],
                w = in[1].shape[2];
        Folded o;
        o.shape = {n, h, w};
        for (int64_t b = 0; b < n; ++b)
          for (int64_t i = 0; i < h; ++i)
            for (int64_t j = 0; j < w; ++j) {
              double s = 0;
              for (int64_t z = 0; z < c; ++z)
                s += in[0].data[(b * h + i) * c + z] *
                     in[1].data[(b * c + z) * w + j];
              o.data.push_back(s);
            }
        return o;
      })
      .Default([](Operation *) { return std::nullopt; });
}
