//===- GateEvaluator.cpp - reference interpreter for gating subgraphs -----===//
//
// Semantics follow the ONNX operator specification for the opsets Tessel
// imports (attribute forms before opset 13, input forms after). Shapes are
// checked as ONNX requires; anything unexpected returns nullopt, which the
// raising treats as "not provably a top-k gate". The interpreter must never
// crash on a malformed graph nor return a value ONNX Runtime would not
// compute, so every index, shape and integer read from a tensor is checked.
//
//===----------------------------------------------------------------------===//

#include "GateEvaluator.h"
#include "../NodeContext.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

using namespace mlir;
using namespace mlir::tessel::onnx_import;
using Kind = EvalTensor::Kind;

int64_t EvalTensor::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

namespace {

using Shape = llvm::SmallVector<int64_t>;
using Maybe = std::optional<EvalTensor>;

/// Largest element count the interpreter materializes. Gating subgraphs hold
/// tokens x experts values; anything far larger is not one, and the cap keeps
/// every stride and flat index well inside int64_t.
constexpr int64_t kMaxElements = int64_t(1) << 26;

/// Whether `shape` has no negative dim and at most kMaxElements elements.
/// Zero dims are skipped in the product so that a huge dim next to a zero
/// one is rejected too: strides multiply all trailing dims.
bool validShape(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return false;
    if (d == 0)
      continue;
    if (d > kMaxElements / n)
      return false;
    n *= d;
  }
  return true;
}

/// Whether `t` can be handed to the ops: a valid shape and matching data.
bool wellFormed(const EvalTensor &t) {
  return validShape(t.shape) && t.data.size() == size_t(t.numElements());
}

/// The integer a tensor element holds: nullopt for NaN or a fraction.
/// Magnitudes beyond int64_t saturate (int64_t(d) would be undefined), so
/// the callers' range checks reject them rather than see a wrapped value.
std::optional<int64_t> toInt(double d) {
  if (std::isnan(d) || d != std::trunc(d))
    return std::nullopt;
  if (d >= 0x1p63)
    return std::numeric_limits<int64_t>::max();
  if (d <= -0x1p63)
    return std::numeric_limits<int64_t>::min();
  return int64_t(d);
}

/// A zero-filled tensor; nullopt if `shape` is invalid or too large.
Maybe make(Shape shape, Kind kind) {
  if (!validShape(shape))
    return std::nullopt;
  EvalTensor t;
  t.shape = std::move(shape);
  t.kind = kind;
  t.data.assign(t.numElements(), 0.0);
  return t;
}

Shape strides(const Shape &shape) {
  Shape s(shape.size(), 1);
  for (int i = int(shape.size()) - 2; i >= 0; --i)
    s[i] = s[i + 1] * shape[i + 1];
  return s;
}

/// Multi-index of flat `index` in `shape`.
Shape unflatten(int64_t index, const Shape &shape) {
  Shape idx(shape.size());
  for (int i = int(shape.size()) - 1; i >= 0; --i) {
    idx[i] = shape[i] ? index % shape[i] : 0;
    index = shape[i] ? index / shape[i] : 0;
  }
  return idx;
}

const onnx::AttributeProto *attr(const onnx::NodeProto &n, const char *name) {
  for (const auto &a : n.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

int64_t intAttr(const onnx::NodeProto &n, const char *name, int64_t dflt) {
  const auto *a = attr(n, name);
  return a ? a->i() : dflt;
}

std::optional<Shape> intsAttr(const onnx::NodeProto &n, const char *name) {
  const auto *a = attr(n, name);
  if (!a)
    return std::nullopt;
  return Shape(a->ints().begin(), a->ints().end());
}

bool normAxis(int64_t &axis, int64_t rank) {
  if (axis < 0)
    axis += rank;
  return axis >= 0 && axis < rank;
}

Kind kindOfOnnx(int32_t type) {
  switch (type) {
  case onnx::TensorProto::FLOAT:
  case onnx::TensorProto::DOUBLE:
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16:
    return Kind::Float;
  case onnx::TensorProto::BOOL:
    return Kind::Bool;
  default:
    return Kind::Int;
  }
}

/// `v` rounded to nearest-even in a binary format with `precision` significand
/// bits, minimum normal exponent `minExp` and largest finite `maxFinite`;
/// overflow gives infinity, as an IEEE conversion does.
double roundToFormat(double v, int precision, int minExp, double maxFinite) {
  if (v == 0 || !std::isfinite(v))
    return v;
  int e = std::max(std::ilogb(v), minExp);
  double quantum = std::ldexp(1.0, e - precision + 1);
  // Scaling by a power of two is exact, so this rounds only once.
  double r = std::nearbyint(v / quantum) * quantum;
  return std::fabs(r) > maxFinite ? std::copysign(INFINITY, v) : r;
}

std::optional<Shape> broadcastShape(const Shape &a, const Shape &b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      return std::nullopt;
    // Not max(): a dim of 0 against 1 broadcasts to 0.
    out[i] = da == 1 ? db : da;
  }
  return out;
}

/// Element of `t` at the broadcast position `idx` of a tensor of rank
/// idx.size().
/// The elements of `x` at `offset + sum_d idx[d] * viewStrides[d]` for
/// every index `idx` of `outShape` (a transpose or a strided slice).
Maybe stridedView(const EvalTensor &x, const Shape &outShape, int64_t offset,
                  const Shape &viewStrides) {
  Maybe out = make(outShape, x.kind);
  if (!out)
    return std::nullopt;
  for (int64_t i = 0; i < out->numElements(); ++i) {
    Shape idx = unflatten(i, outShape);
    int64_t src = offset;
    for (size_t d = 0; d < idx.size(); ++d)
      src += idx[d] * viewStrides[d];
    out->data[i] = x.data[src];
  }
  return out;
}

double at(const EvalTensor &t, const Shape &idx) {
  size_t off = idx.size() - t.shape.size();
  int64_t flat = 0;
  for (size_t i = 0; i < t.shape.size(); ++i)
    flat = flat * t.shape[i] + (t.shape[i] == 1 ? 0 : idx[off + i]);
  return t.data[flat];
}

Maybe elementwise(const std::vector<const EvalTensor *> &in, Kind kind,
                  const std::function<double(const std::vector<double> &)> &f) {
  Shape shape = in.front()->shape;
  for (const EvalTensor *t : in) {
    auto s = broadcastShape(shape, t->shape);
    if (!s)
      return std::nullopt;
    shape = *s;
  }
  Maybe out = make(shape, kind);
  if (!out)
    return std::nullopt;
  std::vector<double> args(in.size());
  for (int64_t i = 0; i < out->numElements(); ++i) {
    Shape idx = unflatten(i, shape);
    for (size_t j = 0; j < in.size(); ++j)
      args[j] = at(*in[j], idx);
    out->data[i] = f(args);
  }
  return out;
}

/// Reads an int list input (axes, shape, starts, ...); ONNX types these
/// int64, so a float or bool tensor, or a non-integral value, is rejected.
std::optional<Shape> asInts(const Maybe &t) {
  if (!t || t->kind != Kind::Int)
    return std::nullopt;
  Shape v;
  for (double d : t->data) {
    std::optional<int64_t> i = toInt(d);
    if (!i)
      return std::nullopt;
    v.push_back(*i);
  }
  return v;
}

Maybe reduce(const EvalTensor &x, std::optional<Shape> axes, bool keepdims,
             bool noopWithEmptyAxes, const std::string &op) {
  int64_t rank = x.shape.size();
  std::vector<bool> reduced(rank, false);
  if (!axes || axes->empty()) {
    if (noopWithEmptyAxes)
      return x;
    std::fill(reduced.begin(), reduced.end(), true);
  } else {
    for (int64_t a : *axes) {
      if (!normAxis(a, rank))
        return std::nullopt;
      reduced[a] = true;
    }
  }
  Shape outShape, keptShape;
  for (int64_t d = 0; d < rank; ++d) {
    if (!reduced[d])
      outShape.push_back(x.shape[d]);
    keptShape.push_back(reduced[d] ? 1 : x.shape[d]);
  }
  Maybe out = make(keepdims ? keptShape : outShape, x.kind);
  if (!out)
    return std::nullopt;
  std::vector<int64_t> count(out->numElements(), 0);
  Shape ks = strides(keptShape);
  for (int64_t i = 0; i < x.numElements(); ++i) {
    Shape idx = unflatten(i, x.shape);
    int64_t o = 0;
    for (int64_t d = 0; d < rank; ++d)
      o += (reduced[d] ? 0 : idx[d]) * ks[d];
    double v = x.data[i];
    double &acc = out->data[o];
    if (count[o]++ == 0)
      acc = v;
    else if (op == "ReduceSum" || op == "ReduceMean")
      acc += v;
    else if (op == "ReduceMax")
      acc = std::max(acc, v);
    else
      acc = std::min(acc, v);
  }
  // The sum of no values is 0 (what make() filled in); the max, min and mean
  // of none are not values we can vouch for (opsets disagree on them).
  if (op != "ReduceSum" &&
      std::find(count.begin(), count.end(), 0) != count.end())
    return std::nullopt;
  if (op == "ReduceMean")
    for (size_t i = 0; i < out->data.size(); ++i) {
      out->data[i] /= double(count[i]);
      // Integer means divide as integers do: toward zero.
      if (x.kind != Kind::Float)
        out->data[i] = std::trunc(out->data[i]);
    }
  return out;
}

} // namespace

std::optional<EvalTensor>
mlir::tessel::onnx_import::toEvalTensor(const onnx::TensorProto &t,
                                        MLIRContext *context) {
  // Decoding (raw or typed fields, element types) is the importer's own
  // convertTensorProto; only the conversion to doubles happens here.
  std::string error;
  FailureOr<DenseElementsAttr> attr = convertTensorProto(t, context, error);
  if (failed(attr))
    return std::nullopt;
  EvalTensor out;
  out.shape.assign(attr->getType().getShape().begin(),
                   attr->getType().getShape().end());
  if (!validShape(out.shape))
    return std::nullopt;
  out.kind = kindOfOnnx(t.data_type());
  Type elem = attr->getElementType();
  if (isa<FloatType>(elem)) {
    for (const APFloat &v : attr->getValues<APFloat>())
      out.data.push_back(v.convertToDouble());
  } else if (auto it = dyn_cast<IntegerType>(elem)) {
    for (const APInt &v : attr->getValues<APInt>())
      out.data.push_back(it.isUnsigned() || it.getWidth() == 1
                             ? double(v.getZExtValue())
                             : double(v.getSExtValue()));
  } else {
    return std::nullopt;
  }
  return out;
}

void GateEvaluator::bind(const std::string &name, EvalTensor value) {
  bound[name] = std::move(value);
  memo.clear();
}

std::optional<EvalTensor> GateEvaluator::eval(const std::string &name) {
  // Bindings and constants come from the caller; the ops rely on shape and
  // data agreeing, so check rather than trust them.
  if (auto it = bound.find(name); it != bound.end())
    return wellFormed(it->second) ? Maybe(it->second) : std::nullopt;
  if (auto it = initializers.find(name); it != initializers.end()) {
    auto [c, fresh] = constants.try_emplace(name);
    if (fresh)
      c->second = toEvalTensor(*it->second, context);
    return c->second && wellFormed(*c->second) ? c->second : std::nullopt;
  }
  if (auto it = memo.find(name); it != memo.end())
    return it->second;
  auto p = producer.find(name);
  if (p == producer.end())
    return std::nullopt; // a graph input: not a gate value
  const onnx::NodeProto &node = graph.node(p->second);
  memo[name] = std::nullopt; // cycles cannot occur in ONNX; be safe anyway
  for (int i = 0; i < node.output_size(); ++i)
    if (node.output(i) == name)
      return memo[name] = evalNode(node, i);
  return std::nullopt;
}

std::optional<EvalTensor>
GateEvaluator::evalNode(const onnx::NodeProto &node, unsigned output) {
  const std::string &op = node.op_type();
  if (!node.domain().empty() && node.domain() != "ai.onnx")
    return std::nullopt;
  auto in = [&](int i) -> Maybe {
    if (i >= node.input_size() || node.input(i).empty())
      return std::nullopt;
    return eval(node.input(i));
  };
  auto present = [&](int i) {
    return i < node.input_size() && !node.input(i).empty();
  };

  if (op == "Constant") {
    if (const auto *a = attr(node, "value"))
      return toEvalTensor(a->t(), context);
    if (const auto *a = attr(node, "value_float")) {
      EvalTensor t = *make({}, Kind::Float);
      t.data[0] = a->f();
      return t;
    }
    if (const auto *a = attr(node, "value_int")) {
      EvalTensor t = *make({}, Kind::Int);
      t.data[0] = double(a->i());
      return t;
    }
    if (const auto *a = attr(node, "value_ints")) {
      Maybe t = make({int64_t(a->ints_size())}, Kind::Int);
      if (!t)
        return std::nullopt;
      for (int i = 0; i < a->ints_size(); ++i)
        t->data[i] = double(a->ints(i));
      return t;
    }
    return std::nullopt;
  }
  if (output != 0)
    return std::nullopt; // every op below has one output

  Maybe x = in(0);
  if (!x)
    return std::nullopt;

  if (op == "Identity")
    return x;
  if (op == "Cast") {
    // Only the types the interpreter can represent exactly; a missing `to`
    // is malformed, not FLOAT.
    const auto *toAttr = attr(node, "to");
    if (!toAttr)
      return std::nullopt;
    EvalTensor out = *x;
    auto toFloat = [&](auto round) {
      out.kind = Kind::Float;
      for (double &v : out.data)
        v = round(v);
      return out;
    };
    // Integer targets: ONNX Runtime truncates, and a value outside the
    // target's range (or not finite) has no defined result.
    auto toInteger = [&](double lo, double hiExclusive) -> Maybe {
      out.kind = Kind::Int;
      for (double &v : out.data) {
        if (!std::isfinite(v))
          return std::nullopt;
        v = std::trunc(v);
        if (v < lo || v >= hiExclusive)
          return std::nullopt;
      }
      return out;
    };
    auto fromFloat = [](double v) { return double(float(v)); };
    switch (toAttr->i()) {
    case onnx::TensorProto::DOUBLE:
      return toFloat([](double v) { return v; });
    case onnx::TensorProto::FLOAT:
      return toFloat(fromFloat);
    // 16-bit floats are rounded from float, as ONNX Runtime converts.
    case onnx::TensorProto::FLOAT16:
      return toFloat([&](double v) {
        return roundToFormat(fromFloat(v), 11, -14, 65504.0);
      });
    case onnx::TensorProto::BFLOAT16:
      return toFloat([&](double v) {
        return roundToFormat(fromFloat(v), 8, -126, 0x1.fep127);
      });
    case onnx::TensorProto::INT8:
      return toInteger(-0x1p7, 0x1p7);
    case onnx::TensorProto::INT16:
      return toInteger(-0x1p15, 0x1p15);
    case onnx::TensorProto::INT32:
      return toInteger(-0x1p31, 0x1p31);
    case onnx::TensorProto::INT64:
      return toInteger(-0x1p63, 0x1p63);
    case onnx::TensorProto::UINT8:
      return toInteger(0, 0x1p8);
    case onnx::TensorProto::UINT16:
      return toInteger(0, 0x1p16);
    case onnx::TensorProto::UINT32:
      return toInteger(0, 0x1p32);
    case onnx::TensorProto::UINT64:
      return toInteger(0, 0x1p64);
    case onnx::TensorProto::BOOL:
      out.kind = Kind::Bool;
      for (double &v : out.data)
        v = double(v != 0.0);
      return out;
    default:
      return std::nullopt;
    }
  }
  if (op == "Not") {
    EvalTensor out = *x;
    for (double &v : out.data)
      v = v == 0.0;
    return out;
  }
  if (op == "Neg" || op == "Abs" || op == "Exp" || op == "Sqrt" ||
      op == "Reciprocal" || op == "Sigmoid" || op == "Relu") {
    EvalTensor out = *x;
    for (double &v : out.data)
      v = op == "Neg"          ? -v
          : op == "Abs"        ? std::fabs(v)
          : op == "Exp"        ? std::exp(v)
          : op == "Sqrt"       ? std::sqrt(v)
          : op == "Reciprocal" ? 1.0 / v
          : op == "Sigmoid"    ? 1.0 / (1.0 + std::exp(-v))
                               : std::max(v, 0.0);
    return out;
  }

  static const std::map<std::string, std::function<double(double, double)>>
      binary = {
          {"Add", std::plus<double>()},
          {"Sub", std::minus<double>()},
          {"Mul", std::multiplies<double>()},
          {"Div", std::divides<double>()},
          {"Equal", [](double a, double b) { return double(a == b); }},
          {"Greater", [](double a, double b) { return double(a > b); }},
          {"Less", [](double a, double b) { return double(a < b); }},
          {"GreaterOrEqual", [](double a, double b) { return double(a >= b); }},
          {"LessOrEqual", [](double a, double b) { return double(a <= b); }},
          {"And", [](double a, double b) { return double(a != 0 && b != 0); }},
          {"Or", [](double a, double b) { return double(a != 0 || b != 0); }},
          {"Xor",
           [](double a, double b) { return double((a != 0) != (b != 0)); }},
      };
  if (auto it = binary.find(op); it != binary.end()) {
    Maybe y = in(1);
    if (!y)
      return std::nullopt;
    bool compare = op == "Equal" || op == "Greater" || op == "Less" ||
                   op == "GreaterOrEqual" || op == "LessOrEqual" ||
                   op == "And" || op == "Or" || op == "Xor";
    Kind kind = compare ? Kind::Bool : x->kind;
    bool intDiv = op == "Div" && x->kind != Kind::Float;
    // Integer division by zero traps (or is undefined) at run time; there is
    // no value to compare with.
    bool divByZero = false;
    auto f = it->second;
    Maybe result =
        elementwise({&*x, &*y}, kind, [&](const std::vector<double> &a) {
          if (intDiv && a[1] == 0) {
            divByZero = true;
            return 0.0;
          }
          double r = f(a[0], a[1]);
          return intDiv ? std::trunc(r) : r;
        });
    if (divByZero)
      return std::nullopt;
    return result;
  }
  if (op == "Where") {
    Maybe a = in(1), b = in(2);
    if (!a || !b)
      return std::nullopt;
    return elementwise({&*x, &*a, &*b}, a->kind,
                       [](const std::vector<double> &v) {
                         return v[0] != 0 ? v[1] : v[2];
                       });
  }
  if (op == "Reshape") {
    auto shape = asInts(in(1));
    if (!shape)
      return std::nullopt;
    bool allowZero = intAttr(node, "allowzero", 0);
    int64_t known = 1, infer = -1;
    bool hasZero = false;
    Shape out = *shape;
    for (size_t i = 0; i < out.size(); ++i) {
      if (out[i] < -1)
        return std::nullopt;
      if (out[i] == 0 && !allowZero) {
        if (i >= x->shape.size())
          return std::nullopt;
        out[i] = x->shape[i];
      }
      if (out[i] == -1) {
        if (infer >= 0)
          return std::nullopt; // at most one inferred dim
        infer = i;
        continue;
      }
      hasZero |= out[i] == 0;
      if (llvm::MulOverflow(known, out[i], known))
        return std::nullopt;
    }
    int64_t n = x->numElements();
    if (infer >= 0) {
      // ONNX forbids -1 next to a literal 0 under allowzero, and with a
      // zero known product the inferred dim is ambiguous.
      if ((allowZero && hasZero) || known == 0 || n % known != 0)
        return std::nullopt;
      out[infer] = n / known;
    } else if (known != n) {
      return std::nullopt;
    }
    if (!validShape(out))
      return std::nullopt;
    EvalTensor r = *x;
    r.shape = out;
    return r;
  }
  if (op == "Unsqueeze" || op == "Squeeze") {
    // Squeeze without axes drops every size-1 dim (an empty list); axes are
    // required for Unsqueeze, as an input from opset 13 on.
    std::optional<Shape> axes;
    if (opset >= 13)
      axes = present(1)            ? asInts(in(1))
             : op == "Unsqueeze" ? std::nullopt
                                 : std::optional<Shape>(Shape{});
    else
      axes = op == "Unsqueeze" ? intsAttr(node, "axes")
                               : intsAttr(node, "axes").value_or(Shape{});
    if (!axes)
      return std::nullopt;
    EvalTensor r = *x;
    if (op == "Unsqueeze") {
      int64_t rank = x->shape.size() + axes->size();
      std::vector<bool> isNew(rank, false);
      for (int64_t a : *axes) {
        if (!normAxis(a, rank) || isNew[a])
          return std::nullopt; // out of range or repeated
        isNew[a] = true;
      }
      r.shape.clear();
      for (int64_t d = 0, j = 0; d < rank; ++d)
        r.shape.push_back(isNew[d] ? 1 : x->shape[j++]);
    } else {
      int64_t rank = x->shape.size();
      std::vector<bool> drop(rank, axes->empty());
      for (int64_t a : *axes) {
        if (!normAxis(a, rank) || x->shape[a] != 1)
          return std::nullopt;
        drop[a] = true;
      }
      r.shape.clear();
      for (int64_t d = 0; d < rank; ++d)
        if (!drop[d] || x->shape[d] != 1)
          r.shape.push_back(x->shape[d]);
    }
    return r;
  }
  if (op == "Flatten") {
    int64_t axis = intAttr(node, "axis", 1);
    int64_t rank = x->shape.size();
    if (axis < 0)
      axis += rank;
    if (axis < 0 || axis > rank)
      return std::nullopt;
    // Both products directly: numElements() / a is wrong when a is 0.
    int64_t a = 1, b = 1;
    for (int64_t d = 0; d < rank; ++d)
      (d < axis ? a : b) *= x->shape[d];
    EvalTensor r = *x;
    r.shape = {a, b};
    return r;
  }
  if (op == "Transpose") {
    int64_t rank = x->shape.size();
    Shape perm = intsAttr(node, "perm").value_or(Shape());
    if (perm.empty())
      for (int64_t d = rank - 1; d >= 0; --d)
        perm.push_back(d);
    if (int64_t(perm.size()) != rank)
      return std::nullopt;
    std::vector<bool> seen(rank, false);
    for (int64_t p : perm) {
      if (p < 0 || p >= rank || seen[p])
        return std::nullopt; // not a permutation
      seen[p] = true;
    }
    Shape outShape, viewStrides, xs = strides(x->shape);
    for (int64_t p : perm) {
      outShape.push_back(x->shape[p]);
      viewStrides.push_back(xs[p]);
    }
    return stridedView(*x, outShape, 0, viewStrides);
  }
  if (op == "Slice") {
    if (opset < 10)
      return std::nullopt;
    auto starts = asInts(in(1)), ends = asInts(in(2));
    if (!starts || !ends || starts->size() != ends->size())
      return std::nullopt;
    int64_t rank = x->shape.size();
    Shape axes, steps(starts->size(), 1);
    if (present(3)) {
      auto a = asInts(in(3));
      if (!a)
        return std::nullopt;
      axes = *a;
    } else {
      for (size_t i = 0; i < starts->size(); ++i)
        axes.push_back(i);
    }
    if (present(4)) {
      auto s = asInts(in(4));
      if (!s)
        return std::nullopt;
      steps = *s;
    }
    if (axes.size() != starts->size() || steps.size() != starts->size())
      return std::nullopt;
    Shape begin(rank, 0), step(rank, 1), outShape = x->shape;
    std::vector<bool> seen(rank, false);
    for (size_t i = 0; i < axes.size(); ++i) {
      int64_t a = axes[i];
      if (!normAxis(a, rank) || seen[a] || steps[i] == 0)
        return std::nullopt;
      seen[a] = true;
      int64_t dim = x->shape[a], s = (*starts)[i], e = (*ends)[i];
      if (dim == 0) {
        outShape[a] = 0;
        continue;
      }
      // A step longer than the dim selects only the start element, as a
      // step of exactly the dim does; clamping keeps the arithmetic below
      // from overflowing.
      int64_t st = std::clamp<int64_t>(steps[i], -dim, dim);
      if (s < 0)
        s += dim;
      if (e < 0)
        e += dim;
      if (st > 0) {
        s = std::clamp<int64_t>(s, 0, dim);
        e = std::clamp<int64_t>(e, 0, dim);
        outShape[a] = e > s ? (e - s + st - 1) / st : 0;
      } else {
        s = std::clamp<int64_t>(s, 0, dim - 1);
        e = std::clamp<int64_t>(e, -1, dim - 1);
        outShape[a] = s > e ? (s - e - st - 1) / -st : 0;
      }
      begin[a] = s;
      step[a] = st;
    }
    Shape xs = strides(x->shape), viewStrides(rank);
    int64_t offset = 0;
    for (int64_t d = 0; d < rank; ++d) {
      offset += begin[d] * xs[d];
      viewStrides[d] = step[d] * xs[d];
    }
    return stridedView(*x, outShape, offset, viewStrides);
  }
  if (op == "Gather") {
    Maybe indices = in(1);
    int64_t axis = intAttr(node, "axis", 0);
    int64_t rank = x->shape.size();
    // ONNX types indices int32/int64; a float index has no defined meaning.
    if (!indices || indices->kind != Kind::Int || !normAxis(axis, rank))
      return std::nullopt;
    Shape outShape(x->shape.begin(), x->shape.begin() + axis);
    outShape.append(indices->shape.begin(), indices->shape.end());
    outShape.append(x->shape.begin() + axis + 1, x->shape.end());
    Maybe out = make(outShape, x->kind);
    if (!out)
      return std::nullopt;
    Shape xs = strides(x->shape);
    int64_t q = indices->shape.size();
    for (int64_t i = 0; i < out->numElements(); ++i) {
      Shape idx = unflatten(i, outShape);
      int64_t flatIdx = 0;
      for (int64_t d = 0; d < q; ++d)
        flatIdx = flatIdx * indices->shape[d] + idx[axis + d];
      std::optional<int64_t> j = toInt(indices->data[flatIdx]);
      if (!j)
        return std::nullopt;
      if (*j < 0)
        *j += x->shape[axis];
      if (*j < 0 || *j >= x->shape[axis])
        return std::nullopt;
      int64_t src = *j * xs[axis];
      for (int64_t d = 0; d < axis; ++d)
        src += idx[d] * xs[d];
      for (int64_t d = axis + 1; d < rank; ++d)
        src += idx[d + q - 1] * xs[d];
      out->data[i] = x->data[src];
    }
    return out;
  }
  if (op == "ScatterElements" || op == "Scatter") {
    Maybe indices = in(1), updates = in(2);
    int64_t axis = intAttr(node, "axis", 0);
    int64_t rank = x->shape.size();
    const auto *red = attr(node, "reduction");
    std::string reduction = red ? red->s() : "none";
    if (reduction != "none" && reduction != "add" && reduction != "mul" &&
        reduction != "max" && reduction != "min")
      return std::nullopt;
    if (!indices || !updates || indices->kind != Kind::Int ||
        !normAxis(axis, rank) || indices->shape != updates->shape ||
        indices->shape.size() != size_t(rank))
      return std::nullopt;
    // Off the axis an index is its own position, so it must lie in data.
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis && indices->shape[d] > x->shape[d])
        return std::nullopt;
    EvalTensor out = *x;
    Shape xs = strides(x->shape);
    // Without a reduction, two updates of one element leave it to whichever
    // the runtime applies last: not a value we can prove anything with.
    std::vector<bool> written(reduction == "none" ? out.data.size() : 0);
    for (int64_t i = 0; i < indices->numElements(); ++i) {
      Shape idx = unflatten(i, indices->shape);
      std::optional<int64_t> j = toInt(indices->data[i]);
      if (!j)
        return std::nullopt;
      if (*j < 0)
        *j += x->shape[axis];
      if (*j < 0 || *j >= x->shape[axis])
        return std::nullopt;
      idx[axis] = *j;
      int64_t dst = 0;
      for (int64_t d = 0; d < rank; ++d)
        dst += idx[d] * xs[d];
      double u = updates->data[i];
      double &v = out.data[dst];
      if (reduction == "none") {
        if (written[dst])
          return std::nullopt;
        written[dst] = true;
        v = u;
      } else if (reduction == "add") {
        v += u;
      } else if (reduction == "mul") {
        v *= u;
      } else if (reduction == "max") {
        v = std::max(v, u);
      } else {
        v = std::min(v, u);
      }
    }
    return out;
  }
  if (op == "ReduceSum" || op == "ReduceMax" || op == "ReduceMin" ||
      op == "ReduceMean") {
    bool axesAsInput = op == "ReduceSum" ? opset >= 13 : opset >= 18;
    std::optional<Shape> axes =
        axesAsInput ? (present(1) ? asInts(in(1)) : std::optional<Shape>())
                    : intsAttr(node, "axes");
    if (axesAsInput && present(1) && !axes)
      return std::nullopt;
    return reduce(*x, axes, intAttr(node, "keepdims", 1),
                  intAttr(node, "noop_with_empty_axes", 0), op);
  }
  if (op == "Softmax") {
    int64_t rank = x->shape.size();
    int64_t axis = intAttr(node, "axis", opset >= 13 ? -1 : 1);
    if (!normAxis(axis, rank) || (opset < 13 && axis != rank - 1))
      return std::nullopt;
    EvalTensor out = *x;
    int64_t inner = 1;
    for (int64_t d = axis + 1; d < rank; ++d)
      inner *= x->shape[d];
    int64_t n = x->shape[axis];
    for (int64_t i = 0; i < x->numElements(); ++i) {
      Shape idx = unflatten(i, x->shape);
      if (idx[axis] != 0)
        continue;
      double mx = -INFINITY, sum = 0;
      for (int64_t j = 0; j < n; ++j)
        mx = std::max(mx, x->data[i + j * inner]);
      for (int64_t j = 0; j < n; ++j)
        sum += std::exp(x->data[i + j * inner] - mx);
      for (int64_t j = 0; j < n; ++j)
        out.data[i + j * inner] = std::exp(x->data[i + j * inner] - mx) / sum;
    }
    return out;
  }
  if (op == "Expand") {
    auto shape = asInts(in(1));
    if (!shape || !validShape(*shape))
      return std::nullopt;
    auto outShape = broadcastShape(x->shape, *shape);
    if (!outShape)
      return std::nullopt;
    Maybe out = make(*outShape, x->kind);
    if (!out)
      return std::nullopt;
    for (int64_t i = 0; i < out->numElements(); ++i)
      out->data[i] = at(*x, unflatten(i, *outShape));
    return out;
  }
  if (op == "Concat") {
    int64_t axis = intAttr(node, "axis", 0);
    int64_t rank = x->shape.size();
    if (!normAxis(axis, rank))
      return std::nullopt;
    std::vector<EvalTensor> parts;
    Shape outShape = x->shape;
    outShape[axis] = 0;
    for (int i = 0; i < node.input_size(); ++i) {
      Maybe p = in(i);
      if (!p || p->shape.size() != size_t(rank))
        return std::nullopt;
      // Only the concatenated dim may differ; `at` would otherwise read
      // past a smaller part (or broadcast a size-1 one).
      for (int64_t d = 0; d < rank; ++d)
        if (d != axis && p->shape[d] != x->shape[d])
          return std::nullopt;
      outShape[axis] += p->shape[axis];
      parts.push_back(*p);
    }
    Maybe out = make(outShape, x->kind);
    if (!out)
      return std::nullopt;
    for (int64_t i = 0; i < out->numElements(); ++i) {
      Shape idx = unflatten(i, outShape);
      int64_t k = idx[axis];
      size_t p = 0;
      while (k >= parts[p].shape[axis])
        k -= parts[p++].shape[axis];
      idx[axis] = k;
      out->data[i] = at(parts[p], idx);
    }
    return out;
  }
  if (op == "OneHot") {
    Maybe depth = in(1), values = in(2);
    // Float indices would be truncated by some runtimes and rejected by
    // others; a float depth is allowed by the spec but must be integral.
    if (!depth || !values || x->kind != Kind::Int ||
        depth->kind == Kind::Bool || values->numElements() != 2 ||
        depth->numElements() != 1)
      return std::nullopt;
    std::optional<int64_t> n = toInt(depth->data[0]);
    int64_t rank = x->shape.size() + 1;
    int64_t axis = intAttr(node, "axis", -1);
    if (!n || !normAxis(axis, rank) || *n <= 0)
      return std::nullopt;
    Shape outShape = x->shape;
    outShape.insert(outShape.begin() + axis, *n);
    Maybe out = make(outShape, values->kind);
    if (!out)
      return std::nullopt;
    for (int64_t i = 0; i < out->numElements(); ++i) {
      Shape idx = unflatten(i, outShape);
      int64_t c = idx[axis];
      idx.erase(idx.begin() + axis);
      int64_t flat = 0;
      for (size_t d = 0; d < idx.size(); ++d)
        flat = flat * x->shape[d] + idx[d];
      std::optional<int64_t> v = toInt(x->data[flat]);
      if (!v)
        return std::nullopt;
      // Indices outside [-depth, depth) select no class: all off values.
      if (*v < 0)
        *v += *n;
      out->data[i] = values->data[*v == c ? 1 : 0];
    }
    return out;
  }
  return std::nullopt;
}
