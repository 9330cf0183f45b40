//===- RunTimeShapes.cpp - ONNX ops whose shape operands are data ---------===//
//
// See RunTimeShapes.h. The sizes are computed with index arithmetic on the
// operand's elements, unrolled over its (static) length; a bad operand
// makes `ok` false, and the tessel.require on the sizes fails the call and
// stands in sizes that keep everything after in bounds (an empty result,
// or for a reshape the input flattened).
//
//===----------------------------------------------------------------------===//
#include "RunTimeShapes.h"
#include "IndexMath.h"
#include "tessel/Dialect/Tessel/IR/TesselDialect.h"
#include "tessel/Dialect/Tessel/Utils/TosaBuilder.h"
#include "tessel/Runtime/tessel_abi.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <set>

using namespace mlir;
using namespace mlir::tessel::onnx_import;

namespace {



/// `dims` as a tensor of index.
Value dimsTensor(IndexMath &m, ArrayRef<Value> dims) {
  return tensor::FromElementsOp::create(
      m.b, m.loc,
      RankedTensorType::get({int64_t(dims.size())}, m.b.getIndexType()), dims);
}

/// The sizes, checked: `dims` where `ok` holds, each is >= 0 and their
/// element count is at most `cap`; else zeros (an empty result) and a
/// failed call.
SmallVector<Value> checkedSizes(IndexMath &m, Value ok, ArrayRef<Value> dims,
                                int64_t cap = kMaxElements) {
  ok = m.both(ok, m.allNonNegative(dims));
  ok = m.both(ok, m.le(m.product(dims, cap), m.c(cap)));
  SmallVector<Value> zeros(dims.size(), m.c(0));
  Value checked = required(m, ok, dimsTensor(m, dims), dimsTensor(m, zeros));
  SmallVector<Value> out;
  for (int64_t k = 0; k < int64_t(dims.size()); ++k)
    out.push_back(tensor::ExtractOp::create(m.b, m.loc, checked,
                                            ValueRange{m.c(k)}));
  return out;
}

/// `x` reshaped to the sizes in `shape` (a 1-D index tensor), typed `known`
/// (static where known); the caller has checked or guarantees the element
/// count. Where at most one size is left to the run (a batch), and the
/// input's static sizes or that size determine it, a TOSA reshape with the
/// size as -1: it lowers to collapse/expand_shape with sizes later passes
/// unify with the input's, folds into constants, and lets transposes sink
/// through it as the static model's does (ShuffleNet's channel shuffle with
/// a symbolic batch no longer copies at each reshape). Otherwise a
/// tensor.reshape of `shape`. (TOSA has no empty tensors.)
Value reshapeToShape(IndexMath &m, Value x, Value shape,
                     ArrayRef<int64_t> known) {
  auto xType = cast<RankedTensorType>(x.getType());
  auto type = RankedTensorType::get(known, xType.getElementType());
  int64_t dynamicOut = llvm::count_if(known, ShapedType::isDynamic);
  auto empty = [](ArrayRef<int64_t> s) { return llvm::is_contained(s, 0); };
  if ((dynamicOut == 1 || (dynamicOut == 0 && xType.hasStaticShape())) &&
      !empty(known) && !empty(xType.getShape())) {
    SmallVector<int64_t> tosaShape(known);
    for (int64_t &d : tosaShape)
      d = ShapedType::isDynamic(d) ? -1 : d;
    return tosa::ReshapeOp::create(
        m.b, m.loc, type, x, tessel::TosaBuilder(m.b, m.loc).shape(tosaShape));
  }
  return tensor::ReshapeOp::create(m.b, m.loc, type, x, shape);
}

/// `in` reshaped to `dims` where `ok` holds and they hold its elements;
/// otherwise the call fails and the result is `in` flattened into the
/// first dimension. `trusted` dims hold the elements by construction (a
/// reduction's, a flatten's) and are not checked.
LogicalResult setReshapedAtRunTime(NodeContext &ctx, IndexMath &m, Value ok,
                                   ArrayRef<Value> dims, Value in = {},
                                   bool trusted = false,
                                   ArrayRef<int64_t> known = {}) {
  if (!in)
    in = ctx.input(0);
  auto inType = cast<RankedTensorType>(in.getType());
  if (trusted) {
    // Trusted dims may be typed with the sizes `known` statically.
    ctx.setOutput(0, reshapeToShape(
                         m, in, dimsTensor(m, dims),
                         known.empty() ? SmallVector<int64_t>(
                                             dims.size(), ShapedType::kDynamic)
                                       : SmallVector<int64_t>(known)));
    return success();
  }
  if (dims.empty() && !inType.hasStaticShape())
    return ctx.unsupported("a scalar Reshape of an input whose sizes are "
                           "known only at run time");
  if (dims.empty() && numElements(inType.getShape()) != 1)
    return ctx.emitError() << "a scalar result cannot hold the input's "
                           << numElements(inType.getShape()) << " elements";
  Value numel = m.numElements(in);
  ok = m.both(ok, m.allNonNegative(dims));
  ok = m.both(ok, m.eq(m.product(dims, numel), numel));
  SmallVector<Value> safe(dims.size(), m.c(1));
  if (!safe.empty())
    safe.front() = numel;
  // Sizes the model's shape inference knows are typed static, and checked;
  // a failed check views the input as empty (a dim left dynamic is 0).
  SmallVector<int64_t> outShape(dims.size(), ShapedType::kDynamic);
  if (known.size() == dims.size()) {
    for (auto [j, d] : llvm::enumerate(known)) {
      if (ShapedType::isDynamic(d)) {
        safe[j] = m.c(0);
        continue;
      }
      ok = m.both(ok, m.eq(dims[j], m.c(d)));
      safe[j] = m.c(d);
      outShape[j] = d;
    }
  }
  // The require stays on the shape for its check, whichever form is built.
  Value shape = required(m, ok, dimsTensor(m, dims), dimsTensor(m, safe));
  ctx.setOutput(0, reshapeToShape(m, in, shape, outShape));
  return success();
}

/// The sizes of a Reshape's result known at compile time (dynamic where
/// not): from ONNX shape inference, and from the entries of the shape
/// operand that are constants (a Shape of a partly static tensor, then
/// arithmetic on its static entries: channels / 2). A -1 is what the
/// static sizes leave when the run-time sizes on both sides are the same
/// symbols (ONNX's names: `batch` in and out), as in a channel shuffle's
/// `view(b, -1, h, w)`. Each is still checked at run time.
SmallVector<int64_t> staticReshapeSizes(NodeContext &ctx, int64_t rank,
                                        bool allowZero,
                                        SmallVector<std::string> &names) {
  SmallVector<int64_t> known(rank, ShapedType::kDynamic);
  if (RankedTensorType inferred = ctx.inferredOutputType(0);
      inferred && inferred.getRank() == rank)
    known.assign(inferred.getShape().begin(), inferred.getShape().end());
  SmallVector<std::string> entryNames;
  std::optional<SmallVector<std::optional<int64_t>>> entries =
      knownInts(ctx.input(1), &entryNames);
  if (!entries || int64_t(entries->size()) != rank)
    return known;
  ArrayRef<int64_t> in = ctx.inputType(0).getShape();
  int64_t inRank = in.size(), minusOne = -1;
  // The input's run-time sizes by name: ONNX's, else followed in the IR.
  SmallVector<std::string> inNames(ctx.inputDimNames(0));
  inNames.resize(inRank);
  bool inNamed = true;
  for (int64_t d = 0; d < inRank; ++d) {
    if (!ShapedType::isDynamic(in[d]))
      continue;
    if (inNames[d].empty())
      inNames[d] = sizeNameOf(ctx.input(0), d);
    inNamed &= !inNames[d].empty();
  }
  // The result's dimension names where known (a size read from a named
  // dimension, or a 0 copying one).
  names.assign(rank, std::string());
  for (auto [j, e] : llvm::enumerate(*entries)) {
    if (!e) {
      names[j] = entryNames[j];
      continue;
    }
    if (*e > 0) {
      known[j] = *e;
    } else if (*e == 0 && !allowZero && int64_t(j) < inRank) {
      if (!ShapedType::isDynamic(in[j]))
        known[j] = in[j];
      else if (inNamed)
        names[j] = inNames[j];
    } else if (*e == -1) {
      minusOne = j;
    }
  }
  SmallVector<std::string> outNames(ctx.outputDimNames(0));
  outNames.resize(rank);
  for (int64_t j = 0; j < rank; ++j)
    if (outNames[j].empty())
      outNames[j] = names[j];
  // A -1 is what the static sizes leave when every run-time size of the
  // input is matched by one of the result's of the same name.
  if (minusOne >= 0 && ShapedType::isDynamic(known[minusOne]) && inNamed) {
    std::multiset<std::string> unmatched;
    int64_t staticIn = 1, staticOut = 1;
    bool ok = true;
    for (int64_t d = 0; d < inRank && ok; ++d) {
      if (!ShapedType::isDynamic(in[d]))
        staticIn *= in[d];
      else if (inNames[d].empty())
        ok = false;
      else
        unmatched.insert(inNames[d]);
    }
    for (int64_t j = 0; j < rank && ok; ++j) {
      if (j == minusOne)
        continue;
      if (!ShapedType::isDynamic(known[j])) {
        staticOut *= known[j];
        continue;
      }
      auto it = outNames[j].empty() ? unmatched.end()
                                    : unmatched.find(outNames[j]);
      if (it == unmatched.end())
        ok = false;
      else
        unmatched.erase(it);
    }
    if (ok && unmatched.empty() && staticOut > 0 && staticIn % staticOut == 0)
      known[minusOne] = staticIn / staticOut;
  }
  for (int64_t j = 0; j < rank; ++j)
    if (!ShapedType::isDynamic(known[j]))
      names[j].clear();
  ctx.setOutputDimNamesIfUnknown(0, names);
  return known;
}

/// Records the names of a run-time Reshape's result dimensions on it, for
/// sizeNameOf.
void nameReshapeResult(NodeContext &ctx, ArrayRef<std::string> names) {
  Value out = ctx.output(0);
  Operation *r = out ? out.getDefiningOp() : nullptr;
  if (!isa_and_nonnull<tensor::ReshapeOp, tosa::ReshapeOp>(r) ||
      llvm::all_of(names, [](const std::string &n) { return n.empty(); }))
    return;
  SmallVector<Attribute> attrs;
  for (const std::string &n : names)
    attrs.push_back(StringAttr::get(r->getContext(), n));
  r->setAttr(kSizeNamesAttr, ArrayAttr::get(r->getContext(), attrs));
}

/// The length of the 1-D operand `i` (`what`), which must be static.
FailureOr<int64_t> operandLength(NodeContext &ctx, unsigned i, StringRef what) {
  RankedTensorType t = ctx.inputType(i);
  if (!t || t.getRank() != 1 || t.isDynamicDim(0) ||
      !isa<IntegerType>(t.getElementType())) {
    ctx.emitError() << "input " << i << " ('" << what
                    << "') must be a 1-D integer tensor of static length";
    return failure();
  }
  return t.getDimSize(0);
}

/// `axis` (an index) normalized for `rank`, and whether it is in range.
std::pair<Value, Value> normalizedAxis(IndexMath &m, Value axis, int64_t rank) {
  Value n = m.select(m.lt(axis, m.c(0)), m.add(axis, m.c(rank)), axis);
  return {n, m.both(m.le(m.c(0), n), m.lt(n, m.c(rank)))};
}

/// The axes operand (input `i`) normalized for `rank`, and whether they
/// are all in range and distinct.
std::pair<SmallVector<Value>, Value> readAxes(IndexMath &m, NodeContext &ctx,
                                              unsigned i, int64_t count,
                                              int64_t rank) {
  SmallVector<Value> axes;
  Value ok = m.yes();
  for (int64_t k = 0; k < count; ++k) {
    auto [n, inRange] = normalizedAxis(m, m.element(ctx.input(i), k), rank);
    ok = m.both(ok, inRange);
    for (Value earlier : axes)
      ok = m.both(ok, m.ne(earlier, n));
    axes.push_back(n);
  }
  return {axes, ok};
}

/// Whether `i` (a constant position) is one of `axes`.
Value isOneOf(IndexMath &m, ArrayRef<Value> axes, int64_t i) {
  Value found = m.no(m.yes());
  for (Value a : axes)
    found = m.either(found, m.eq(a, m.c(i)));
  return found;
}


} // namespace

bool mlir::tessel::onnx_import::isRunTimeOperand(NodeContext &ctx,
                                                 unsigned i) {
  return ctx.hasInput(i) && ctx.input(i) && !ctx.constantInput(i);
}

Value mlir::tessel::onnx_import::checkedRunTimeSize(NodeContext &ctx,
                                                   unsigned i, int64_t lo,
                                                   int64_t hi) {
  IndexMath m(ctx);
  Value v = m.element(ctx.input(i), 0);
  Value ok = m.both(m.le(m.c(lo), v), m.le(v, m.c(hi)));
  Value checked = required(m, ok, dimsTensor(m, {v}), dimsTensor(m, {m.c(lo)}));
  return tensor::ExtractOp::create(m.b, m.loc, checked, ValueRange{m.c(0)});
}

FailureOr<Value> mlir::tessel::onnx_import::constantOrRunTimeSize(
    NodeContext &ctx, unsigned i, StringRef what, int64_t lo, int64_t hi,
    int64_t &staticValue) {
  RankedTensorType t = ctx.inputType(i);
  if (!t || t.getNumElements() != 1 || !isa<IntegerType>(t.getElementType())) {
    ctx.emitError() << "input " << i << " ('" << what
                    << "') must be one integer";
    return failure();
  }
  if (DenseElementsAttr c = ctx.constantInput(i)) {
    staticValue = toInts(c).front();
    if (staticValue < lo || staticValue > hi) {
      ctx.emitError() << what << " " << staticValue << " is outside [" << lo
                      << ", " << hi << "]";
      return failure();
    }
    return Value(arith::ConstantIndexOp::create(ctx.builder(), ctx.loc(),
                                                staticValue));
  }
  staticValue = ShapedType::kDynamic;
  return checkedRunTimeSize(ctx, i, lo, hi);
}

SmallVector<Value>
mlir::tessel::onnx_import::checkedRunTimeSizes(NodeContext &ctx, Value ok,
                                               ArrayRef<Value> sizes) {
  IndexMath m(ctx);
  return checkedSizes(m, ok, sizes);
}

LogicalResult mlir::tessel::onnx_import::gatherAtRunTime(NodeContext &ctx,
                                                         int64_t axis) {
  // tessel.gather keeps the op whole for the graph passes (an MoE's
  // index_select of its routed tokens); tessel-decompose-graph-ops expands it.
  IndexMath m(ctx);
  Value x = ctx.input(0), indices = ctx.input(1);
  auto xType = cast<RankedTensorType>(x.getType());
  auto iType = cast<RankedTensorType>(indices.getType());
  SmallVector<int64_t> outShape(xType.getShape().take_front(axis));
  llvm::append_range(outShape, iType.getShape());
  llvm::append_range(outShape, xType.getShape().drop_front(axis + 1));
  ctx.setOutput(0, tessel::GatherOp::create(
                       m.b, m.loc,
                       RankedTensorType::get(outShape, xType.getElementType()),
                       x, indices, m.b.getI64IntegerAttr(axis)));
  return success();
}

LogicalResult mlir::tessel::onnx_import::flattenAtRunTime(NodeContext &ctx,
                                                          int64_t axis) {
  IndexMath m(ctx);
  Value x = ctx.input(0);
  int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
  Value outer = m.c(1), inner = m.c(1);
  // A factor of static dims keeps its static size (a Gemm after a CNN's
  // Flatten needs its inner one).
  ArrayRef<int64_t> shape = cast<RankedTensorType>(x.getType()).getShape();
  SmallVector<int64_t> known = {staticNumElements(shape.take_front(axis)),
                                staticNumElements(shape.drop_front(axis))};
  for (int64_t d = 0; d < rank; ++d) {
    Value size = tensor::DimOp::create(m.b, m.loc, x, d);
    if (d < axis)
      outer = arith::MulIOp::create(m.b, m.loc, outer, size);
    else
      inner = arith::MulIOp::create(m.b, m.loc, inner, size);
  }
  return setReshapedAtRunTime(ctx, m, m.yes(), {outer, inner}, x,
                              /*trusted=*/true, known);
}

LogicalResult mlir::tessel::onnx_import::reshapeAtRunTime(NodeContext &ctx,
                                                          bool allowZero) {
  FailureOr<int64_t> rank = operandLength(ctx, 1, "shape");
  if (failed(rank))
    return failure();
  int64_t inRank = ctx.inputType(0).getRank();
  IndexMath m(ctx);
  // The input's element count (read at run time where its sizes are).
  Value numel = m.numElements(ctx.input(0));
  Value top = m.add(numel, m.c(1));
  SmallVector<Value> dims;
  Value ok = m.yes(), inferred = m.c(0), anyZero = m.no(m.yes());
  Value known = m.c(1);
  for (int64_t j = 0; j < *rank; ++j) {
    Value d = m.element(ctx.input(1), j);
    Value zero = m.eq(d, m.c(0));
    anyZero = m.either(anyZero, zero);
    if (!allowZero) {
      // 0 copies the input's dimension, which must exist.
      if (j < inRank)
        d = m.select(zero, m.dim(ctx.input(0), j), d);
      else
        ok = m.both(ok, m.no(zero));
    }
    Value minusOne = m.eq(d, m.c(-1));
    ok = m.both(ok, m.le(m.c(-1), d));
    inferred = m.add(inferred, m.count(minusOne));
    known = m.mul(known, m.min(m.select(minusOne, m.c(1), d), top));
    known = m.min(known, top);
    dims.push_back(d);
  }
  // At most one -1, standing for what the others leave of the elements;
  // with allowzero, not together with a 0.
  ok = m.both(ok, m.le(inferred, m.c(1)));
  if (allowZero)
    ok = m.both(ok, m.no(m.both(anyZero, m.eq(inferred, m.c(1)))));
  Value safeKnown = m.max(known, m.c(1));
  Value rest = m.div(numel, safeKnown);
  ok = m.both(ok, m.either(m.eq(inferred, m.c(0)),
                           m.both(m.ne(known, m.c(0)),
                                  m.eq(m.rem(numel, safeKnown), m.c(0)))));
  for (Value &d : dims)
    d = m.select(m.eq(d, m.c(-1)), rest, d);
  SmallVector<std::string> names;
  SmallVector<int64_t> sizes =
      staticReshapeSizes(ctx, *rank, allowZero, names);
  if (failed(setReshapedAtRunTime(ctx, m, ok, dims, {}, /*trusted=*/false,
                                  sizes)))
    return failure();
  nameReshapeResult(ctx, names);
  return success();
}

LogicalResult mlir::tessel::onnx_import::unsqueezeAtRunTime(NodeContext &ctx) {
  FailureOr<int64_t> count = operandLength(ctx, 1, "axes");
  if (failed(count))
    return failure();
  ArrayRef<int64_t> in = ctx.inputType(0).getShape();
  int64_t rank = in.size() + *count;
  IndexMath m(ctx);
  auto [axes, ok] = readAxes(m, ctx, 1, *count, rank);
  SmallVector<Value> dims;
  for (int64_t j = 0; j < rank; ++j) {
    // Output j is an inserted 1, or the input dimension after the axes
    // before it.
    Value before = m.c(0);
    for (Value a : axes)
      before = m.add(before, m.count(m.lt(a, m.c(j))));
    Value source = m.pick(in, m.sub(m.c(j), before), 1);
    dims.push_back(m.select(isOneOf(m, axes, j), m.c(1), source));
  }
  return setReshapedAtRunTime(ctx, m, ok, dims);
}

Value mlir::tessel::onnx_import::reshapeTo(IndexMath &m, Value x,
                                           ArrayRef<Value> dims,
                                           ArrayRef<int64_t> known) {
  // Static to static (a constant weight): a TOSA reshape, which folds into
  // the constant, so the kernels' packing of it folds too. Run-time sizes
  // stay a tensor.reshape even where one is left to the run: the callers'
  // sizes are checked views, empty where a check failed (a MatMul's
  // operands of different batches), which a TOSA reshape's -1 would not be.
  auto xType = cast<RankedTensorType>(x.getType());
  if (xType.hasStaticShape() && !ShapedType::isDynamicShape(known))
    return reshapeToShape(m, x, dimsTensor(m, dims), known);
  auto type = RankedTensorType::get(known, xType.getElementType());
  return tensor::ReshapeOp::create(m.b, m.loc, type, x, dimsTensor(m, dims));
}

LogicalResult mlir::tessel::onnx_import::reshapeKeepingRunTimeDims(
    NodeContext &ctx, ArrayRef<int64_t> shape, ArrayRef<int64_t> source) {
  IndexMath m(ctx);
  Value x = ctx.input(0);
  SmallVector<Value> dims;
  for (auto [j, d] : llvm::enumerate(shape))
    dims.push_back(ShapedType::isDynamic(d) ? m.dim(x, source[j]) : m.c(d));
  auto outType =
      RankedTensorType::get(shape, ctx.inputType(0).getElementType());
  ctx.setOutput(0, tensor::ReshapeOp::create(m.b, m.loc, outType, x,
                                             dimsTensor(m, dims)));
  return success();
}

LogicalResult mlir::tessel::onnx_import::splitRunTimeSized(
    NodeContext &ctx, int64_t axis, ArrayRef<int64_t> sizes) {
  IndexMath m(ctx);
  Value x = ctx.input(0);
  RankedTensorType type = ctx.inputType(0);
  int64_t offset = 0;
  for (auto [i, size] : llvm::enumerate(sizes)) {
    SmallVector<OpFoldResult> offsets(type.getRank(), m.b.getIndexAttr(0)),
        lengths, strides(type.getRank(), m.b.getIndexAttr(1));
    SmallVector<int64_t> shape(type.getShape());
    shape[axis] = size;
    offsets[axis] = m.b.getIndexAttr(offset);
    for (int64_t d = 0; d < type.getRank(); ++d)
      lengths.push_back(ShapedType::isDynamic(shape[d])
                            ? OpFoldResult(m.dim(x, d))
                            : OpFoldResult(m.b.getIndexAttr(shape[d])));
    offset += size;
    if (!ctx.hasOutput(i))
      continue;
    ctx.setOutput(i, tensor::ExtractSliceOp::create(
                         m.b, m.loc,
                         RankedTensorType::get(shape, type.getElementType()),
                         x, offsets, lengths, strides));
  }
  return success();
}

LogicalResult mlir::tessel::onnx_import::scatterElementsAtRunTime(
    NodeContext &ctx, int64_t axis, StringRef reduction) {
  int64_t rank = ctx.inputType(0).getRank();
  if (ctx.inputType(1).getRank() != rank || ctx.inputType(2).getRank() != rank)
    return ctx.emitError() << "indices and updates must have the rank of data";
  std::optional<tessel::ScatterReduction> r =
      tessel::symbolizeScatterReduction(reduction);
  if (!r)
    return ctx.emitError() << "unknown reduction '" << reduction << "'";
  // tessel.scatter_elements keeps the op whole for the graph passes (an
  // MoE's index_add of its experts' results); tessel-decompose-graph-ops
  // expands it.
  IndexMath m(ctx);
  ctx.setOutput(0, tessel::ScatterElementsOp::create(
                       m.b, m.loc, ctx.inputType(0), ctx.input(0),
                       ctx.input(1), ctx.input(2), m.b.getI64IntegerAttr(axis),
                       tessel::ScatterReductionAttr::get(m.b.getContext(), *r)));
  return success();
}

LogicalResult mlir::tessel::onnx_import::squeezeAtRunTime(NodeContext &ctx) {
  FailureOr<int64_t> count = operandLength(ctx, 1, "axes");
  if (failed(count))
    return failure();
  ArrayRef<int64_t> in = ctx.inputType(0).getShape();
  int64_t inRank = in.size();
  if (*count > inRank)
    return ctx.emitError() << "squeezes " << *count
                           << " axes of an input of rank " << inRank;
  IndexMath m(ctx);
  auto [axes, ok] = readAxes(m, ctx, 1, *count, inRank);
  // Each squeezed dimension must be 1.
  for (Value a : axes)
    ok = m.both(ok, m.eq(m.pick(in, a, 1), m.c(1)));
  SmallVector<Value> keep, position;
  Value kept = m.c(0);
  for (int64_t i = 0; i < inRank; ++i) {
    keep.push_back(m.no(isOneOf(m, axes, i)));
    position.push_back(kept);
    kept = m.add(kept, m.count(keep.back()));
  }
  SmallVector<Value> dims;
  for (int64_t j = 0; j < inRank - *count; ++j) {
    Value d = m.c(0);
    for (int64_t i = 0; i < inRank; ++i)
      d = m.select(m.both(keep[i], m.eq(position[i], m.c(j))), m.c(in[i]), d);
    dims.push_back(d);
  }
  return setReshapedAtRunTime(ctx, m, ok, dims);
}

LogicalResult mlir::tessel::onnx_import::expandAtRunTime(NodeContext &ctx) {
  FailureOr<int64_t> length = operandLength(ctx, 1, "shape");
  if (failed(length))
    return failure();
  RankedTensorType inType = ctx.inputType(0);
  ArrayRef<int64_t> in = inType.getShape();
  int64_t inRank = in.size(), rank = std::max(inRank, *length);
  IndexMath m(ctx);
  // Bidirectional broadcast: where the input has 1 the shape decides (a
  // run-time size); elsewhere the input's size stays, and the shape's
  // entry must be 1 or equal to it.
  Value ok = m.yes();
  SmallVector<int64_t> outShape;
  SmallVector<Value> dynamic;
  SmallVector<AffineExpr> inExprs;
  // A constant shape (with an input of run-time sizes) keeps the sizes it
  // gives a broadcast 1 static.
  std::optional<SmallVector<int64_t>> known;
  if (DenseElementsAttr c = ctx.constantInput(1))
    known = toInts(c);
  for (int64_t j = 0; j < rank; ++j) {
    int64_t k = j - (rank - inRank), s = j - (rank - *length);
    int64_t a = k >= 0 ? in[k] : 1;
    Value b = s >= 0 ? m.element(ctx.input(1), s) : m.c(1);
    if (a == 1 && known && (s < 0 || (*known)[s] >= 0)) {
      outShape.push_back(s >= 0 ? (*known)[s] : 1);
    } else if (a == 1) {
      outShape.push_back(ShapedType::kDynamic);
      dynamic.push_back(b);
    } else if (ShapedType::isDynamic(a)) {
      // A run-time size is taken as it is: the shape's entry must be 1 or
      // equal to it (a run-time 1 broadcast by the shape fails the call).
      Value have = m.dim(ctx.input(0), k);
      ok = m.both(ok, m.either(m.eq(b, m.c(1)), m.eq(b, have)));
      outShape.push_back(ShapedType::kDynamic);
      dynamic.push_back(have);
    } else {
      ok = m.both(ok, m.either(m.eq(b, m.c(1)), m.eq(b, m.c(a))));
      outShape.push_back(a);
    }
    if (k >= 0)
      inExprs.push_back(a == 1 ? getAffineConstantExpr(0, m.b.getContext())
                               : getAffineDimExpr(j, m.b.getContext()));
  }
  SmallVector<Value> sizes = checkedSizes(m, ok, dynamic);
  auto outType = RankedTensorType::get(outShape, inType.getElementType());
  Value init = tensor::EmptyOp::create(m.b, m.loc, outShape,
                                       inType.getElementType(), sizes);
  SmallVector<AffineMap> maps = {
      AffineMap::get(rank, 0, inExprs, m.b.getContext()),
      m.b.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto copy = linalg::GenericOp::create(
      m.b, m.loc, outType, ValueRange{ctx.input(0)}, ValueRange{init}, maps,
      iterators, [](OpBuilder &b, Location loc, ValueRange args) {
        linalg::YieldOp::create(b, loc, args[0]);
      });
  ctx.setOutput(0, copy.getResult(0));
  return success();
}

LogicalResult mlir::tessel::onnx_import::tileAtRunTime(NodeContext &ctx) {
  FailureOr<int64_t> length = operandLength(ctx, 1, "repeats");
  if (failed(length))
    return failure();
  RankedTensorType inType = ctx.inputType(0);
  ArrayRef<int64_t> in = inType.getShape();
  if (*length != int64_t(in.size()))
    return ctx.emitError() << "repeats has " << *length
                           << " entries for an input of rank " << in.size();
  IndexMath m(ctx);
  SmallVector<Value> dims;
  // A repeat count past 2^31 is clamped first, so that the product cannot
  // wrap (checkedSizes then fails the call on the size).
  for (auto [k, d] : llvm::enumerate(in))
    dims.push_back(m.mul(m.c(d), m.min(m.element(ctx.input(1), k),
                                       m.c(kMaxElements + 1))));
  SmallVector<Value> sizes = checkedSizes(m, m.yes(), dims);
  auto outType = RankedTensorType::get(
      SmallVector<int64_t>(in.size(), ShapedType::kDynamic),
      inType.getElementType());
  Value x = ctx.input(0);
  auto tiled = tensor::GenerateOp::create(
      m.b, m.loc, outType, sizes, [&](OpBuilder &b, Location loc, ValueRange iv) {
        SmallVector<Value> at;
        for (auto [k, d] : llvm::enumerate(in))
          at.push_back(arith::RemUIOp::create(
              b, loc, iv[k],
              arith::ConstantIndexOp::create(b, loc, std::max<int64_t>(d, 1))));
        tensor::YieldOp::create(b, loc,
                                tensor::ExtractOp::create(b, loc, x, at).getResult());
      });
  ctx.setOutput(0, tiled);
  return success();
}

LogicalResult
mlir::tessel::onnx_import::constantOfShapeAtRunTime(NodeContext &ctx,
                                                    TypedAttr value) {
  FailureOr<int64_t> rank = operandLength(ctx, 0, "input");
  if (failed(rank))
    return failure();
  IndexMath m(ctx);
  SmallVector<Value> dims;
  for (int64_t j = 0; j < *rank; ++j)
    dims.push_back(m.element(ctx.input(0), j));
  SmallVector<Value> sizes = checkedSizes(m, m.yes(), dims);
  Value init = tensor::EmptyOp::create(
      m.b, m.loc, SmallVector<int64_t>(*rank, ShapedType::kDynamic),
      value.getType(), sizes);
  Value fill = arith::ConstantOp::create(m.b, m.loc, value);
  ctx.setOutput(0, linalg::FillOp::create(m.b, m.loc, fill, init).getResult(0));
  return success();
}

LogicalResult mlir::tessel::onnx_import::rangeAtRunTime(NodeContext &ctx) {
  for (unsigned i = 0; i < 3; ++i) {
    RankedTensorType t = ctx.inputType(i);
    if (!t || t.getRank() != 0 ||
        t.getElementType() != ctx.inputType(0).getElementType())
      return ctx.emitError() << "start, limit and delta must be scalars of "
                                "one type";
  }
  Type elem = ctx.inputType(0).getElementType();
  IndexMath m(ctx);
  OpBuilder &b = m.b;
  Location loc = m.loc;
  auto f64 = b.getF64Type();
  // max(ceil((limit - start) / delta), 0), in double as ONNX's reference.
  auto scalar = [&](unsigned i) -> Value {
    Value v = tensor::ExtractOp::create(b, loc, ctx.input(i), ValueRange{});
    if (isa<FloatType>(elem))
      return elem == f64 ? v : arith::ExtFOp::create(b, loc, f64, v).getResult();
    return arith::SIToFPOp::create(b, loc, f64, v);
  };
  Value start = scalar(0), limit = scalar(1), delta = scalar(2);
  auto fconst = [&](double v) {
    return arith::ConstantOp::create(b, loc, f64, b.getF64FloatAttr(v));
  };
  Value count = math::CeilOp::create(
      b, loc, arith::DivFOp::create(b, loc, arith::SubFOp::create(b, loc, limit, start),
                                    delta));
  count = arith::MaximumFOp::create(b, loc, count, fconst(0));
  // Ordered comparisons: a NaN anywhere fails the call.
  Value ok = m.both(
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::ONE, delta, fconst(0)),
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLE, count,
                            fconst(double(kMaxElements))));
  Value n = arith::FPToSIOp::create(
      b, loc, b.getI64Type(),
      arith::SelectOp::create(b, loc, ok, count, fconst(0)));
  n = arith::IndexCastOp::create(b, loc, b.getIndexType(), n);
  SmallVector<Value> sizes = checkedSizes(m, ok, {n});
  Value s = tensor::ExtractOp::create(b, loc, ctx.input(0), ValueRange{});
  Value d = tensor::ExtractOp::create(b, loc, ctx.input(2), ValueRange{});
  auto outType = RankedTensorType::get({ShapedType::kDynamic}, elem);
  auto range = tensor::GenerateOp::create(
      b, loc, outType, sizes, [&](OpBuilder &nb, Location l, ValueRange iv) {
        Value v;
        if (auto ft = dyn_cast<FloatType>(elem)) {
          // start + i * delta, in double, rounded once.
          Value i = indexToF64(nb, l, iv[0]);
          Value sd = elem == f64 ? s : arith::ExtFOp::create(nb, l, f64, s).getResult();
          Value dd = elem == f64 ? d : arith::ExtFOp::create(nb, l, f64, d).getResult();
          v = arith::AddFOp::create(nb, l, sd, arith::MulFOp::create(nb, l, i, dd));
          if (elem != f64)
            v = arith::TruncFOp::create(nb, l, elem, v);
        } else {
          Value i = arith::IndexCastOp::create(nb, l, elem, iv[0]);
          v = arith::AddIOp::create(nb, l, s, arith::MulIOp::create(nb, l, i, d));
        }
        tensor::YieldOp::create(nb, l, v);
      });
  ctx.setOutput(0, range);
  return success();
}

LogicalResult mlir::tessel::onnx_import::convertNonZero(NodeContext &ctx) {
  RankedTensorType type = ctx.inputType(0);
  // ONNX's shape inference types a scalar's result 0 x n, its reference
  // (numpy) 1 x n.
  if (type.getRank() == 0)
    return ctx.unsupported("NonZero of a scalar (rank 0: ONNX's shape "
                           "inference and its reference disagree on the "
                           "result's shape)");
  auto outType = RankedTensorType::get({type.getRank(), ShapedType::kDynamic},
                                       ctx.builder().getI64Type());
  ctx.setOutput(0, tessel::NonZeroOp::create(ctx.builder(), ctx.loc(), outType,
                                     ctx.input(0)));
  return success();
}

/// The positions of the nonzero elements of the 1-D `x`, as indices.
static Value nonzeroPositions(IndexMath &m, Value x) {
  auto coords = tessel::NonZeroOp::create(
      m.b, m.loc,
      RankedTensorType::get({1, ShapedType::kDynamic}, m.b.getI64Type()), x);
  Value count = tensor::DimOp::create(m.b, m.loc, coords, 1);
  return tensor::GenerateOp::create(
      m.b, m.loc,
      RankedTensorType::get({ShapedType::kDynamic}, m.b.getIndexType()),
      ValueRange{count}, [&](OpBuilder &nb, Location l, ValueRange iv) {
        Value c = tensor::ExtractOp::create(
            nb, l, coords,
            ValueRange{arith::ConstantIndexOp::create(nb, l, 0), iv[0]});
        tensor::YieldOp::create(
            nb, l,
            arith::IndexCastOp::create(nb, l, nb.getIndexType(), c)
                .getResult());
      });
}

LogicalResult
mlir::tessel::onnx_import::compressAtRunTime(NodeContext &ctx,
                                             std::optional<int64_t> axis) {
  RankedTensorType type = ctx.inputType(0), condType = ctx.inputType(1);
  if (!condType || condType.getRank() != 1 || condType.isDynamicDim(0))
    return ctx.emitError() << "input 1 ('condition') must be a 1-D tensor of "
                              "static length";
  IndexMath m(ctx);
  OpBuilder &b = m.b;
  Location loc = m.loc;
  Value x = ctx.input(0);
  SmallVector<int64_t> in(type.getShape());
  if (!axis) {
    // Without an axis the input is flattened first.
    in = {numElements(type.getShape())};
    if (type.getRank() != 1)
      x = tensor::CollapseShapeOp::create(
          b, loc, x,
          SmallVector<ReassociationIndices>{
              llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()))});
  }
  int64_t ax = axis.value_or(0);
  Value positions = nonzeroPositions(m, ctx.input(1));
  // A selected index past the end of the axis is an error; the last
  // position is the largest.
  Value count = tensor::DimOp::create(b, loc, positions, 0);
  Value ok = m.yes();
  if (condType.getDimSize(0) > in[ax]) {
    auto inRange = scf::IfOp::create(
        b, loc, m.lt(m.c(0), count),
        [&](OpBuilder &tb, Location l) {
          Value lastAt = arith::SubIOp::create(
              tb, l, count, arith::ConstantIndexOp::create(tb, l, 1));
          Value last =
              tensor::ExtractOp::create(tb, l, positions, ValueRange{lastAt});
          scf::YieldOp::create(
              tb, l,
              ValueRange{arith::CmpIOp::create(
                  tb, l, arith::CmpIPredicate::slt, last,
                  arith::ConstantIndexOp::create(tb, l, in[ax]))});
        },
        [&](OpBuilder &eb, Location l) {
          scf::YieldOp::create(
              eb, l,
              ValueRange{arith::ConstantIntOp::create(eb, l, eb.getI1Type(), 1)});
        });
    ok = inRange.getResult(0);
  }
  SmallVector<Value> sizes = checkedSizes(m, ok, {count});
  SmallVector<int64_t> outShape(in);
  outShape[ax] = ShapedType::kDynamic;
  auto outType = RankedTensorType::get(outShape, type.getElementType());
  auto out = tensor::GenerateOp::create(
      b, loc, outType, sizes, [&](OpBuilder &nb, Location l, ValueRange iv) {
        SmallVector<Value> at(iv);
        at[ax] = tensor::ExtractOp::create(nb, l, positions, ValueRange{iv[ax]});
        tensor::YieldOp::create(
            nb, l, tensor::ExtractOp::create(nb, l, x, at).getResult());
      });
  ctx.setOutput(0, out);
  return success();
}

LogicalResult mlir::tessel::onnx_import::oneHotAtRunTime(NodeContext &ctx,
                                                         int64_t axis) {
  RankedTensorType idxType = ctx.inputType(0), depthType = ctx.inputType(1),
                   valType = ctx.inputType(2);
  if (!depthType || depthType.getNumElements() != 1)
    return ctx.emitError() << "input 1 ('depth') must hold one element";
  IndexMath m(ctx);
  OpBuilder &b = m.b;
  Location loc = m.loc;
  // The depth, converted to an integer as ONNX says (floats truncated).
  SmallVector<Value> at(depthType.getRank(), m.c(0));
  Value d = tensor::ExtractOp::create(b, loc, ctx.input(1), at);
  if (isa<FloatType>(d.getType()))
    d = arith::FPToSIOp::create(b, loc, b.getI64Type(), d);
  d = arith::IndexCastOp::create(b, loc, b.getIndexType(), d);
  Value ok = m.both(m.le(m.c(1), d), m.le(d, m.c(int64_t(1) << 24)));
  Value depth = checkedSizes(m, ok, {d}).front();
  SmallVector<int64_t> outShape(idxType.getShape());
  outShape.insert(outShape.begin() + axis, ShapedType::kDynamic);
  auto outType = RankedTensorType::get(outShape, valType.getElementType());
  Value indices = ctx.input(0), values = ctx.input(2);
  auto out = tensor::GenerateOp::create(
      b, loc, outType, ValueRange{depth},
      [&](OpBuilder &nb, Location l, ValueRange iv) {
        SmallVector<Value> idxAt(iv);
        Value k = idxAt[axis];
        idxAt.erase(idxAt.begin() + axis);
        Value i = tensor::ExtractOp::create(nb, l, indices, idxAt);
        if (isa<FloatType>(i.getType()))
          i = arith::FPToSIOp::create(nb, l, nb.getI64Type(), i);
        i = arith::IndexCastOp::create(nb, l, nb.getIndexType(), i);
        // Negative indices count from the end; out of range selects none.
        i = arith::SelectOp::create(
            nb, l,
            arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, i,
                                  arith::ConstantIndexOp::create(nb, l, 0)),
            arith::AddIOp::create(nb, l, i, depth), i);
        Value hit = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::eq, i, k);
        Value on = tensor::ExtractOp::create(
            nb, l, values, ValueRange{arith::ConstantIndexOp::create(nb, l, 1)});
        Value off = tensor::ExtractOp::create(
            nb, l, values, ValueRange{arith::ConstantIndexOp::create(nb, l, 0)});
        tensor::YieldOp::create(
            nb, l, arith::SelectOp::create(nb, l, hit, on, off).getResult());
      });
  ctx.setOutput(0, out);
  return success();
}

LogicalResult mlir::tessel::onnx_import::sliceAtRunTime(NodeContext &ctx) {
  RankedTensorType type = ctx.inputType(0);
  ArrayRef<int64_t> in = type.getShape();
  int64_t rank = in.size();
  FailureOr<int64_t> count = operandLength(ctx, 1, "starts");
  if (failed(count))
    return failure();
  // (An array, not a braced list: the range must outlive the loop.)
  const StringRef operands[] = {"ends", "axes", "steps"};
  for (auto [i, what] : llvm::enumerate(operands)) {
    if (i > 0 && !ctx.hasInput(i + 2))
      continue;
    FailureOr<int64_t> n = operandLength(ctx, i + 2, what);
    if (failed(n))
      return failure();
    if (*n != *count)
      return ctx.emitError() << "starts, ends, axes and steps differ in length";
  }
  IndexMath m(ctx);
  OpBuilder &b = m.b;
  Location loc = m.loc;
  Value ok = m.yes();
  // The axes a constant `axes` (or its absence) leaves alone keep their
  // static sizes; only the sliced ones are sized at run time.
  SmallVector<bool> mayChange(rank, true);
  if (!ctx.hasInput(3) || ctx.constantInput(3)) {
    mayChange.assign(rank, false);
    SmallVector<int64_t> known;
    if (ctx.hasInput(3))
      known = toInts(ctx.constantInput(3));
    else
      for (int64_t k = 0; k < std::min<int64_t>(*count, rank); ++k)
        known.push_back(k);
    for (int64_t a : known)
      if (a >= -rank && a < rank)
        mayChange[a < 0 ? a + rank : a] = true;
  }
  SmallVector<Value> axes;
  if (ctx.hasInput(3)) {
    std::tie(axes, ok) = readAxes(m, ctx, 3, *count, rank);
  } else {
    if (*count > rank)
      return ctx.emitError() << "slices " << *count
                             << " axes of an input of rank " << rank;
    for (int64_t k = 0; k < *count; ++k)
      axes.push_back(m.c(k));
  }
  SmallVector<Value> starts, steps, sizes;
  for (int64_t d = 0; d < rank; ++d) {
    Value dim = m.dim(ctx.input(0), d);
    Value start = m.c(0), end = dim, step = m.c(1);
    for (int64_t k = 0; k < *count; ++k) {
      Value here = m.eq(axes[k], m.c(d));
      start = m.select(here, m.element(ctx.input(1), k), start);
      end = m.select(here, m.element(ctx.input(2), k), end);
      if (ctx.hasInput(4))
        step = m.select(here, m.element(ctx.input(4), k), step);
    }
    ok = m.both(ok, m.ne(step, m.c(0)));
    // ONNX's clamping: negative positions count from the end; forward
    // slices clamp into [0, dim], backward ones into [0, dim - 1] (start)
    // and [-1, dim - 1] (end).
    Value forward = m.lt(m.c(0), step);
    start = m.select(m.lt(start, m.c(0)), m.add(start, dim), start);
    end = m.select(m.lt(end, m.c(0)), m.add(end, dim), end);
    start = m.select(forward, m.min(m.max(start, m.c(0)), dim),
                     m.min(m.max(start, m.c(0)), m.sub(dim, m.c(1))));
    end = m.select(forward, m.min(m.max(end, m.c(0)), dim),
                   m.min(m.max(end, m.c(-1)), m.sub(dim, m.c(1))));
    // ceil(span / |step|) without overflow, 0 for an empty span.
    Value span = m.select(forward, m.sub(end, start), m.sub(start, end));
    Value magnitude = m.select(forward, step, m.sub(m.c(0), step));
    magnitude = m.max(magnitude, m.c(1));
    Value size = m.select(m.lt(m.c(0), span),
                          m.add(m.div(m.sub(span, m.c(1)), magnitude), m.c(1)),
                          m.c(0));
    starts.push_back(start);
    steps.push_back(step);
    sizes.push_back(size);
  }
  SmallVector<Value> checked = checkedSizes(m, ok, sizes);
  SmallVector<int64_t> outShape;
  SmallVector<Value> dynamicSizes;
  for (int64_t d = 0; d < rank; ++d) {
    outShape.push_back(mayChange[d] ? ShapedType::kDynamic : in[d]);
    if (ShapedType::isDynamic(outShape.back()))
      dynamicSizes.push_back(checked[d]);
  }
  auto outType = RankedTensorType::get(outShape, type.getElementType());
  Value x = ctx.input(0);
  auto out = tensor::GenerateOp::create(
      b, loc, outType, dynamicSizes, [&](OpBuilder &nb, Location l, ValueRange iv) {
        SmallVector<Value> at;
        for (int64_t d = 0; d < rank; ++d)
          at.push_back(arith::AddIOp::create(
              nb, l, starts[d], arith::MulIOp::create(nb, l, iv[d], steps[d])));
        tensor::YieldOp::create(
            nb, l, tensor::ExtractOp::create(nb, l, x, at).getResult());
      });
  ctx.setOutput(0, out);
  return success();
}

LogicalResult mlir::tessel::onnx_import::reduceOverRunTimeAxes(
    NodeContext &ctx, bool keepDims,
    function_ref<FailureOr<Value>(ArrayRef<int64_t>)> reduce) {
  FailureOr<int64_t> count = operandLength(ctx, 1, "axes");
  if (failed(count))
    return failure();
  RankedTensorType type = ctx.inputType(0);
  int64_t rank = type.getRank();
  constexpr int64_t maxRank = 6;
  if (rank > maxRank || *count > rank)
    return ctx.emitError() << "reduces " << *count
                           << " axes read at run time of an input of rank "
                           << rank << " (supported: rank <= " << maxRank
                           << ")";
  IndexMath m(ctx);
  OpBuilder &b = m.b;
  Location loc = m.loc;
  auto [axes, ok] = readAxes(m, ctx, 1, *count, rank);
  // The reduced set as a bit mask; a bad one reduces nothing and fails.
  Value mask = m.c(0);
  for (Value a : axes)
    mask = arith::OrIOp::create(b, loc, mask,
                                arith::ShLIOp::create(b, loc, m.c(1), a));
  mask = tensor::ExtractOp::create(
      b, loc, required(m, ok, dimsTensor(m, {mask}), dimsTensor(m, {m.c(0)})),
      ValueRange{m.c(0)});
  auto keptType = RankedTensorType::get(
      SmallVector<int64_t>(rank, ShapedType::kDynamic), type.getElementType());
  SmallVector<int64_t> cases;
  for (int64_t bits = 0; bits < (int64_t(1) << rank); ++bits)
    if (llvm::popcount(uint64_t(bits)) == *count)
      cases.push_back(bits);
  auto sw = scf::IndexSwitchOp::create(b, loc, TypeRange{keptType}, mask, cases,
                                       cases.size());
  {
    OpBuilder::InsertionGuard guard(b);
    // Only a failed check gets here (mask 0 for a non-empty axes list):
    // the reduction over everything, one element, which any sizes of 1
    // below hold.
    b.setInsertionPointToStart(&sw.getDefaultRegion().emplaceBlock());
    FailureOr<Value> whole =
        reduce(llvm::to_vector(llvm::seq<int64_t>(0, rank)));
    if (failed(whole))
      return failure();
    scf::YieldOp::create(b, loc,
                         tensor::CastOp::create(b, loc, keptType, *whole).getResult());
    for (auto [k, bits] : llvm::enumerate(cases)) {
      b.setInsertionPointToStart(&sw.getCaseRegions()[k].emplaceBlock());
      SmallVector<int64_t> these;
      for (int64_t d = 0; d < rank; ++d)
        if (bits & (int64_t(1) << d))
          these.push_back(d);
      FailureOr<Value> reduced = reduce(these);
      if (failed(reduced))
        return failure();
      scf::YieldOp::create(
          b, loc, tensor::CastOp::create(b, loc, keptType, *reduced).getResult());
    }
  }
  Value kept = sw.getResult(0);
  if (keepDims || *count == 0) {
    ctx.setOutput(0, kept);
    return success();
  }
  // Drop the reduced (size-1) dimensions: the kept ones, in order.
  SmallVector<Value> dims;
  for (int64_t j = 0; j < rank - *count; ++j) {
    Value d = m.c(0), position = m.c(0);
    for (int64_t i = 0; i < rank; ++i) {
      Value reducedHere = isOneOf(m, axes, i);
      d = m.select(m.both(m.no(reducedHere), m.eq(position, m.c(j))),
                   m.c(type.getDimSize(i)), d);
      position = m.add(position, m.count(m.no(reducedHere)));
    }
    dims.push_back(m.select(ok, d, m.c(1)));
  }
  return setReshapedAtRunTime(ctx, m, m.yes(), dims, kept, /*trusted=*/true);
}

LogicalResult mlir::tessel::onnx_import::splitAtRunTime(NodeContext &ctx,
                                                        int64_t axis) {
  FailureOr<int64_t> count = operandLength(ctx, 1, "split");
  if (failed(count))
    return failure();
  unsigned outputs = ctx.numOutputs();
  if (*count != int64_t(outputs))
    return ctx.emitError() << "split has " << *count << " sizes for "
                           << outputs << " outputs";
  RankedTensorType type = ctx.inputType(0);
  ArrayRef<int64_t> in = type.getShape();
  IndexMath m(ctx);
  SmallVector<Value> parts;
  Value total = m.c(0);
  for (int64_t k = 0; k < *count; ++k) {
    parts.push_back(m.element(ctx.input(1), k));
    total = m.add(total, m.min(m.max(parts.back(), m.c(0)), m.c(in[axis] + 1)));
  }
  // Sizes >= 0 (checkedSizes) that sum to the axis.
  Value ok = m.eq(total, m.c(in[axis]));
  SmallVector<Value> sizes = checkedSizes(m, ok, parts);
  Value offset = m.c(0);
  Value x = ctx.input(0);
  SmallVector<int64_t> shape(in);
  shape[axis] = ShapedType::kDynamic;
  auto outType = RankedTensorType::get(shape, type.getElementType());
  for (unsigned i = 0; i < outputs; ++i) {
    Value start = offset;
    offset = m.add(offset, sizes[i]);
    if (!ctx.hasOutput(i))
      continue;
    auto part = tensor::GenerateOp::create(
        m.b, m.loc, outType, ValueRange{sizes[i]},
        [&](OpBuilder &nb, Location l, ValueRange iv) {
          SmallVector<Value> at(iv);
          at[axis] = arith::AddIOp::create(nb, l, start, iv[axis]);
          tensor::YieldOp::create(
              nb, l, tensor::ExtractOp::create(nb, l, x, at).getResult());
        });
    ctx.setOutput(i, part);
  }
  return success();
}

LogicalResult mlir::tessel::onnx_import::padAtRunTime(NodeContext &ctx,
                                                      StringRef mode) {
  RankedTensorType type = ctx.inputType(0);
  ArrayRef<int64_t> in = type.getShape();
  int64_t rank = in.size();
  FailureOr<int64_t> count = operandLength(ctx, 1, "pads");
  if (failed(count))
    return failure();
  if (*count != 2 * rank)
    return ctx.emitError() << "pads has " << *count << " entries for rank "
                           << rank;
  if (mode != "constant" && llvm::is_contained(in, 0))
    return ctx.attrError("mode", "'" + mode.str() + "' cannot pad an empty dim");
  if (!type.hasStaticShape())
    return ctx.unsupported("Pad with pads read at run time of an input whose "
                           "sizes are known only at run time");
  IndexMath m(ctx);
  OpBuilder &b = m.b;
  Location loc = m.loc;
  Value ok = m.yes();
  SmallVector<Value> lows, dims;
  for (int64_t d = 0; d < rank; ++d) {
    Value lo = m.element(ctx.input(1), d), hi = m.element(ctx.input(1), d + rank);
    // Reflection mirrors once: the pads must stay inside the dim.
    if (mode == "reflect")
      ok = m.both(ok, m.both(m.lt(lo, m.c(in[d])), m.lt(hi, m.c(in[d]))));
    lows.push_back(lo);
    dims.push_back(m.add(m.c(in[d]), m.add(lo, hi)));
  }
  SmallVector<Value> sizes = checkedSizes(m, ok, dims);
  Value value;
  if (mode == "constant") {
    if (ctx.hasInput(2)) {
      RankedTensorType vt = ctx.inputType(2);
      if (!vt || vt.getNumElements() != 1 ||
          vt.getElementType() != type.getElementType())
        return ctx.emitError() << "constant_value must be one element of the "
                                  "input's type";
      value = tensor::ExtractOp::create(
          b, loc, ctx.input(2), SmallVector<Value>(vt.getRank(), m.c(0)));
    } else {
      value = arith::ConstantOp::create(
          b, loc, cast<TypedAttr>(b.getZeroAttr(type.getElementType())));
    }
  }
  Value x = ctx.input(0);
  auto outType = RankedTensorType::get(
      SmallVector<int64_t>(rank, ShapedType::kDynamic), type.getElementType());
  auto out = tensor::GenerateOp::create(
      b, loc, outType, sizes, [&](OpBuilder &nb, Location l, ValueRange iv) {
        auto c = [&](int64_t v) { return arith::ConstantIndexOp::create(nb, l, v); };
        auto cmp = [&](arith::CmpIPredicate p, Value a, Value v) {
          return arith::CmpIOp::create(nb, l, p, a, v);
        };
        Value inside = arith::ConstantIntOp::create(nb, l, nb.getI1Type(), 1);
        SmallVector<Value> at;
        for (int64_t d = 0; d < rank; ++d) {
          Value src = arith::SubIOp::create(nb, l, iv[d], lows[d]);
          Value last = c(std::max<int64_t>(in[d] - 1, 0));
          Value below = cmp(arith::CmpIPredicate::slt, src, c(0));
          Value above = cmp(arith::CmpIPredicate::sgt, src, last);
          if (mode == "reflect")
            src = arith::SelectOp::create(
                nb, l, below, arith::SubIOp::create(nb, l, c(0), src),
                arith::SelectOp::create(
                    nb, l, above,
                    arith::SubIOp::create(nb, l, c(2 * (in[d] - 1)), src), src));
          if (mode == "constant")
            inside = arith::AndIOp::create(
                nb, l, inside,
                arith::XOrIOp::create(
                    nb, l, arith::OrIOp::create(nb, l, below, above),
                    arith::ConstantIntOp::create(nb, l, nb.getI1Type(), 1)));
          // Clamped: edge's rule, and an in-bounds read for the others.
          src = arith::MinSIOp::create(nb, l, arith::MaxSIOp::create(nb, l, src, c(0)),
                                       last);
          at.push_back(src);
        }
        Value v = tensor::ExtractOp::create(nb, l, x, at);
        if (mode == "constant")
          v = arith::SelectOp::create(nb, l, inside, v, value);
        tensor::YieldOp::create(nb, l, v);
      });
  ctx.setOutput(0, out);
  return success();
}

LogicalResult mlir::tessel::onnx_import::convertUnique(NodeContext &ctx) {
  RankedTensorType type = ctx.inputType(0);
  ArrayRef<int64_t> shape = type.getShape();
  int64_t rank = shape.size();
  std::optional<int64_t> axis;
  if (ctx.hasAttr("axis")) {
    FailureOr<int64_t> a = readAxis(ctx, "axis", 0, rank);
    if (failed(a))
      return failure();
    axis = *a;
  }
  FailureOr<int64_t> sorted = ctx.intAttr("sorted", 1);
  if (failed(sorted))
    return failure();
  // The units compared: the elements (flattened) or the slices along the
  // axis, each of `width` elements.
  int64_t units = axis ? shape[*axis] : numElements(shape);
  int64_t width = axis ? numElements(shape) / std::max<int64_t>(units, 1) : 1;
  SmallVector<int64_t> strides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  Value x = ctx.input(0);
  Type elem = type.getElementType();
  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  auto cst = [](OpBuilder &nb, Location l, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(nb, l, v);
  };
  // Element t of unit i, as coordinates of x.
  auto coords = [&](OpBuilder &nb, Location l, Value i, Value t) {
    SmallVector<Value> at;
    // The other dims' strides within a slice (the axis removed).
    Value flat = axis ? t : i;
    int64_t inner = 1;
    SmallVector<int64_t> sliceStrides(rank, 1);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (axis && d == *axis)
        continue;
      sliceStrides[d] = inner;
      inner *= shape[d];
    }
    for (int64_t d = 0; d < rank; ++d) {
      if (axis && d == *axis) {
        at.push_back(i);
        continue;
      }
      int64_t stride = axis ? sliceStrides[d] : strides[d];
      at.push_back(arith::RemUIOp::create(
          nb, l, arith::DivUIOp::create(nb, l, flat, cst(nb, l, stride)),
          cst(nb, l, std::max<int64_t>(shape[d], 1))));
    }
    return at;
  };
  auto element = [&](OpBuilder &nb, Location l, Value i, Value t) -> Value {
    return tensor::ExtractOp::create(nb, l, x, coords(nb, l, i, t));
  };
  auto cmp = [&](OpBuilder &nb, Location l, bool less, Value p, Value q) -> Value {
    if (isa<FloatType>(elem))
      return arith::CmpFOp::create(
          nb, l, less ? arith::CmpFPredicate::OLT : arith::CmpFPredicate::OEQ, p, q);
    return arith::CmpIOp::create(
        nb, l,
        less ? (elem.isUnsignedInteger() ? arith::CmpIPredicate::ult
                                         : arith::CmpIPredicate::slt)
             : arith::CmpIPredicate::eq,
        p, q);
  };
  auto boolConst = [](OpBuilder &nb, Location l, bool v) -> Value {
    return arith::ConstantIntOp::create(nb, l, nb.getI1Type(), v);
  };
  // Whether units i and j are equal, and whether i orders before j (the
  // first element that differs decides).
  auto equalUnits = [&](OpBuilder &nb, Location l, Value i, Value j) -> Value {
    auto loop = scf::ForOp::create(
        nb, l, cst(nb, l, 0), cst(nb, l, width), cst(nb, l, 1),
        ValueRange{boolConst(nb, l, true)},
        [&](OpBuilder &lb, Location ll, Value t, ValueRange acc) {
          Value same = cmp(lb, ll, false, element(lb, ll, i, t), element(lb, ll, j, t));
          scf::YieldOp::create(lb, ll,
                               ValueRange{arith::AndIOp::create(lb, ll, acc[0], same)});
        });
    return loop.getResult(0);
  };
  auto lessUnit = [&](OpBuilder &nb, Location l, Value i, Value j) -> Value {
    auto loop = scf::ForOp::create(
        nb, l, cst(nb, l, 0), cst(nb, l, width), cst(nb, l, 1),
        ValueRange{boolConst(nb, l, false), boolConst(nb, l, false)},
        [&](OpBuilder &lb, Location ll, Value t, ValueRange acc) {
          Value p = element(lb, ll, i, t), q = element(lb, ll, j, t);
          Value differs = arith::XOrIOp::create(lb, ll, cmp(lb, ll, false, p, q),
                                                boolConst(lb, ll, true));
          Value now = arith::AndIOp::create(
              lb, ll, differs,
              arith::XOrIOp::create(lb, ll, acc[0], boolConst(lb, ll, true)));
          Value less = arith::SelectOp::create(lb, ll, now, cmp(lb, ll, true, p, q),
                                               acc[1]);
          scf::YieldOp::create(
              lb, ll, ValueRange{arith::OrIOp::create(lb, ll, acc[0], differs), less});
        });
    return loop.getResult(1);
  };
  // count_{j in [0, end)} pred(j), as an index.
  auto countIf = [&](OpBuilder &nb, Location l, Value end,
                     function_ref<Value(OpBuilder &, Location, Value)> pred) {
    auto loop = scf::ForOp::create(
        nb, l, cst(nb, l, 0), end, cst(nb, l, 1), ValueRange{cst(nb, l, 0)},
        [&](OpBuilder &lb, Location ll, Value j, ValueRange acc) {
          Value add = arith::SelectOp::create(lb, ll, pred(lb, ll, j), cst(lb, ll, 1),
                                              cst(lb, ll, 0));
          scf::YieldOp::create(lb, ll,
                               ValueRange{arith::AddIOp::create(lb, ll, acc[0], add)});
        });
    return loop.getResult(0);
  };
  auto indexTensor = [&](int64_t n) {
    return RankedTensorType::get({n}, b.getIndexType());
  };
  // rep[k]: the first unit equal to unit k.
  Value rep = tensor::GenerateOp::create(
      b, loc, indexTensor(units), ValueRange{},
      [&](OpBuilder &nb, Location l, ValueRange iv) {
        auto loop = scf::ForOp::create(
            nb, l, cst(nb, l, 0), iv[0], cst(nb, l, 1), ValueRange{iv[0]},
            [&](OpBuilder &lb, Location ll, Value j, ValueRange acc) {
              Value earlier = arith::AndIOp::create(
                  lb, ll,
                  arith::CmpIOp::create(lb, ll, arith::CmpIPredicate::eq, acc[0], iv[0]),
                  equalUnits(lb, ll, j, iv[0]));
              scf::YieldOp::create(
                  lb, ll, ValueRange{arith::SelectOp::create(lb, ll, earlier, j, acc[0])});
            });
        tensor::YieldOp::create(nb, l, loop.getResult(0));
      });
  auto isFirst = [&](OpBuilder &nb, Location l, Value j) -> Value {
    return arith::CmpIOp::create(
        nb, l, arith::CmpIPredicate::eq,
        tensor::ExtractOp::create(nb, l, rep, ValueRange{j}), j);
  };
  // pos[i]: where first unit i goes in Y.
  Value pos = tensor::GenerateOp::create(
      b, loc, indexTensor(units), ValueRange{},
      [&](OpBuilder &nb, Location l, ValueRange iv) {
        Value p = *sorted
                      ? countIf(nb, l, cst(nb, l, units),
                                [&](OpBuilder &lb, Location ll, Value j) {
                                  return arith::AndIOp::create(
                                      lb, ll, isFirst(lb, ll, j),
                                      lessUnit(lb, ll, j, iv[0]));
                                })
                      : countIf(nb, l, iv[0], isFirst);
        tensor::YieldOp::create(nb, l, p);
      });
  Value count = countIf(b, loc, cst(b, loc, units), isFirst);
  // unitAt[p]: the first unit at position p.
  Value empty = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{ShapedType::kDynamic},
                                        b.getIndexType(), ValueRange{count});
  auto fill = scf::ForOp::create(
      b, loc, cst(b, loc, 0), cst(b, loc, units), cst(b, loc, 1), ValueRange{empty},
      [&](OpBuilder &nb, Location l, Value i, ValueRange acc) {
        auto branch = scf::IfOp::create(
            nb, l, isFirst(nb, l, i),
            [&](OpBuilder &tb, Location tl) {
              Value at = tensor::ExtractOp::create(tb, tl, pos, ValueRange{i});
              scf::YieldOp::create(
                  tb, tl,
                  ValueRange{tensor::InsertOp::create(tb, tl, i, acc[0], ValueRange{at})});
            },
            [&](OpBuilder &eb, Location el) {
              scf::YieldOp::create(eb, el, ValueRange{acc[0]});
            });
        scf::YieldOp::create(nb, l, branch.getResults());
      });
  Value unitAt = fill.getResult(0);
  auto i64 = b.getI64Type();
  auto asI64 = [&](OpBuilder &nb, Location l, Value v) -> Value {
    return arith::IndexCastOp::create(nb, l, i64, v);
  };
  // Y: the units in their order.
  SmallVector<int64_t> yShape = axis ? SmallVector<int64_t>(shape)
                                     : SmallVector<int64_t>{ShapedType::kDynamic};
  if (axis)
    yShape[*axis] = ShapedType::kDynamic;
  ctx.setOutput(0, tensor::GenerateOp::create(
                       b, loc, RankedTensorType::get(yShape, elem), ValueRange{count},
                       [&](OpBuilder &nb, Location l, ValueRange iv) {
                         SmallVector<Value> at(iv);
                         if (axis) {
                           at[*axis] = tensor::ExtractOp::create(
                               nb, l, unitAt, ValueRange{iv[*axis]});
                         } else {
                           Value u = tensor::ExtractOp::create(nb, l, unitAt,
                                                               ValueRange{iv[0]});
                           at = coords(nb, l, u, cst(nb, l, 0));
                         }
                         tensor::YieldOp::create(
                             nb, l, tensor::ExtractOp::create(nb, l, x, at).getResult());
                       }));
  auto dynamicI64 = RankedTensorType::get({ShapedType::kDynamic}, i64);
  if (ctx.hasOutput(1))
    ctx.setOutput(1, tensor::GenerateOp::create(
                         b, loc, dynamicI64, ValueRange{count},
                         [&](OpBuilder &nb, Location l, ValueRange iv) {
                           tensor::YieldOp::create(
                               nb, l,
                               asI64(nb, l, tensor::ExtractOp::create(
                                                nb, l, unitAt, ValueRange{iv[0]})));
                         }));
  if (ctx.hasOutput(2))
    ctx.setOutput(2, tensor::GenerateOp::create(
                         b, loc, RankedTensorType::get({units}, i64), ValueRange{},
                         [&](OpBuilder &nb, Location l, ValueRange iv) {
                           Value r = tensor::ExtractOp::create(nb, l, rep, ValueRange{iv[0]});
                           tensor::YieldOp::create(
                               nb, l,
                               asI64(nb, l, tensor::ExtractOp::create(nb, l, pos,
                                                                      ValueRange{r})));
                         }));
  if (ctx.hasOutput(3))
    ctx.setOutput(3, tensor::GenerateOp::create(
                         b, loc, dynamicI64, ValueRange{count},
                         [&](OpBuilder &nb, Location l, ValueRange iv) {
                           Value u = tensor::ExtractOp::create(nb, l, unitAt,
                                                               ValueRange{iv[0]});
                           Value c = countIf(
                               nb, l, cst(nb, l, units),
                               [&](OpBuilder &lb, Location ll, Value k) -> Value {
                                 return arith::CmpIOp::create(
                                     lb, ll, arith::CmpIPredicate::eq,
                                     tensor::ExtractOp::create(lb, ll, rep, ValueRange{k}),
                                     u);
                               });
                           tensor::YieldOp::create(nb, l, asI64(nb, l, c));
                         }));
  return success();
}

LogicalResult
mlir::tessel::onnx_import::convertNonMaxSuppression(NodeContext &ctx) {
  RankedTensorType boxesType = ctx.inputType(0), scoresType = ctx.inputType(1);
  if (!boxesType || boxesType.getRank() != 3 || boxesType.getDimSize(2) != 4 ||
      !scoresType || scoresType.getRank() != 3 ||
      scoresType.getDimSize(0) != boxesType.getDimSize(0) ||
      scoresType.getDimSize(2) != boxesType.getDimSize(1))
    return ctx.emitError() << "boxes must be [batches, boxes, 4] and scores "
                              "[batches, classes, boxes]";
  Type elem = boxesType.getElementType();
  if (!isa<FloatType>(elem) || scoresType.getElementType() != elem)
    return ctx.emitError() << "boxes and scores must be floats of one type";
  FailureOr<int64_t> centerPoint = ctx.intAttr("center_point_box", 0);
  if (failed(centerPoint))
    return failure();
  if (*centerPoint != 0 && *centerPoint != 1)
    return ctx.attrError("center_point_box", "must be 0 or 1");
  int64_t batches = boxesType.getDimSize(0), classes = scoresType.getDimSize(1),
          count = boxesType.getDimSize(1);
  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  auto cst = [](OpBuilder &nb, Location l, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(nb, l, v);
  };
  auto fconst = [&](OpBuilder &nb, Location l, double v) -> Value {
    return arith::ConstantOp::create(nb, l, elem, nb.getFloatAttr(elem, v));
  };
  // The optional scalars: a missing one is its default (no limit on the
  // boxes is 0 boxes, as ONNX says; no score threshold keeps every box).
  auto scalar = [&](unsigned i) -> Value {
    RankedTensorType t = ctx.inputType(i);
    return tensor::ExtractOp::create(b, loc, ctx.input(i),
                                     SmallVector<Value>(t.getRank(), cst(b, loc, 0)));
  };
  for (unsigned i = 2; i < 5; ++i)
    if (ctx.hasInput(i) && ctx.inputType(i).getNumElements() != 1)
      return ctx.emitError() << "input " << i << " must hold one value";
  Value maxOut = cst(b, loc, 0);
  if (ctx.hasInput(2)) {
    maxOut = arith::IndexCastOp::create(b, loc, b.getIndexType(), scalar(2));
    maxOut = arith::MaxSIOp::create(b, loc, maxOut, cst(b, loc, 0));
  }
  Value iouThreshold = ctx.hasInput(3) ? scalar(3) : fconst(b, loc, 0);
  Value scoreThreshold = ctx.hasInput(4) ? scalar(4) : Value();
  Value boxes = ctx.input(0), scores = ctx.input(1);
  // A box's corners [y1, x1, y2, x2], ordered (min, max).
  auto corners = [&](OpBuilder &nb, Location l, Value bi, Value i) {
    SmallVector<Value> v;
    for (int64_t k = 0; k < 4; ++k)
      v.push_back(tensor::ExtractOp::create(nb, l, boxes,
                                            ValueRange{bi, i, cst(nb, l, k)}));
    if (*centerPoint) { // [x_center, y_center, width, height]
      Value half = fconst(nb, l, 0.5);
      Value hw = arith::MulFOp::create(nb, l, v[2], half);
      Value hh = arith::MulFOp::create(nb, l, v[3], half);
      return SmallVector<Value>{arith::SubFOp::create(nb, l, v[1], hh),
                                arith::SubFOp::create(nb, l, v[0], hw),
                                arith::AddFOp::create(nb, l, v[1], hh),
                                arith::AddFOp::create(nb, l, v[0], hw)};
    }
    return SmallVector<Value>{arith::MinimumFOp::create(nb, l, v[0], v[2]),
                              arith::MinimumFOp::create(nb, l, v[1], v[3]),
                              arith::MaximumFOp::create(nb, l, v[0], v[2]),
                              arith::MaximumFOp::create(nb, l, v[1], v[3])};
  };
  // Whether box j overlaps box i by more than the threshold (IoU).
  auto overlaps = [&](OpBuilder &nb, Location l, Value bi, Value i, Value j) {
    SmallVector<Value> p = corners(nb, l, bi, i), q = corners(nb, l, bi, j);
    auto sub = [&](Value x, Value y) { return arith::SubFOp::create(nb, l, x, y); };
    auto mul = [&](Value x, Value y) { return arith::MulFOp::create(nb, l, x, y); };
    Value zero = fconst(nb, l, 0);
    Value ih = arith::MaximumFOp::create(
        nb, l, sub(arith::MinimumFOp::create(nb, l, p[2], q[2]),
                   arith::MaximumFOp::create(nb, l, p[0], q[0])), zero);
    Value iw = arith::MaximumFOp::create(
        nb, l, sub(arith::MinimumFOp::create(nb, l, p[3], q[3]),
                   arith::MaximumFOp::create(nb, l, p[1], q[1])), zero);
    Value inter = mul(ih, iw);
    Value area1 = mul(sub(p[2], p[0]), sub(p[3], p[1]));
    Value area2 = mul(sub(q[2], q[0]), sub(q[3], q[1]));
    Value uni = sub(arith::AddFOp::create(nb, l, area1, area2), inter);
    auto gt = [&](Value x, Value y) {
      return arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OGT, x, y);
    };
    // Empty boxes and disjoint ones never suppress (as ONNX Runtime).
    Value valid = arith::AndIOp::create(
        nb, l, arith::AndIOp::create(nb, l, gt(area1, zero), gt(area2, zero)),
        gt(inter, zero));
    Value iou = arith::DivFOp::create(nb, l, inter, uni);
    return arith::AndIOp::create(nb, l, valid, gt(iou, iouThreshold)).getResult();
  };
  // At most every box of every class of every batch.
  int64_t rows = std::max<int64_t>(batches * classes * count, 1);
  auto i64 = b.getI64Type();
  Value out = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{rows, 3}, i64);
  auto i1 = b.getI1Type();
  auto yes = [&](OpBuilder &nb, Location l, bool v) -> Value {
    return arith::ConstantIntOp::create(nb, l, i1, v);
  };
  auto perBatch = scf::ForOp::create(
      b, loc, cst(b, loc, 0), cst(b, loc, batches), cst(b, loc, 1),
      ValueRange{out, cst(b, loc, 0)},
      [&](OpBuilder &bb, Location bl, Value bi, ValueRange bacc) {
        auto perClass = scf::ForOp::create(
            bb, bl, cst(bb, bl, 0), cst(bb, bl, classes), cst(bb, bl, 1), bacc,
            [&](OpBuilder &cb, Location cl, Value ci, ValueRange cacc) {
              auto score = [&](OpBuilder &nb, Location l, Value i) -> Value {
                return tensor::ExtractOp::create(nb, l, scores, ValueRange{bi, ci, i});
              };
              // Boxes still in play: above the score threshold, not yet
              // selected or suppressed.
              Value live = tensor::GenerateOp::create(
                  cb, cl, RankedTensorType::get({count}, i1), ValueRange{},
                  [&](OpBuilder &nb, Location l, ValueRange iv) {
                    Value keep = scoreThreshold
                                     ? arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OGT,
                                                             score(nb, l, iv[0]),
                                                             scoreThreshold).getResult()
                                     : yes(nb, l, true);
                    tensor::YieldOp::create(nb, l, keep);
                  });
              // One selection per round: the best live box (the lower
              // index on ties), then what it suppresses.
              auto rounds = scf::ForOp::create(
                  cb, cl, cst(cb, cl, 0), cst(cb, cl, count), cst(cb, cl, 1),
                  ValueRange{cacc[0], cacc[1], live, cst(cb, cl, 0)},
                  [&](OpBuilder &rb, Location rl, Value, ValueRange racc) {
                    Value liveNow = racc[2];
                    auto best = scf::ForOp::create(
                        rb, rl, cst(rb, rl, 0), cst(rb, rl, count), cst(rb, rl, 1),
                        ValueRange{cst(rb, rl, count)},
                        [&](OpBuilder &nb, Location l, Value i, ValueRange acc) {
                          Value isLive = tensor::ExtractOp::create(nb, l, liveNow,
                                                                   ValueRange{i});
                          Value none = arith::CmpIOp::create(
                              nb, l, arith::CmpIPredicate::eq, acc[0], cst(nb, l, count));
                          Value safe = arith::SelectOp::create(nb, l, none, i, acc[0]);
                          Value better = arith::OrIOp::create(
                              nb, l, none,
                              arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OGT,
                                                    score(nb, l, i), score(nb, l, safe)));
                          Value take = arith::AndIOp::create(nb, l, isLive, better);
                          scf::YieldOp::create(
                              nb, l, ValueRange{arith::SelectOp::create(nb, l, take, i, acc[0])});
                        });
                    Value bestIndex = best.getResult(0);
                    Value found = arith::AndIOp::create(
                        rb, rl,
                        arith::CmpIOp::create(rb, rl, arith::CmpIPredicate::ult,
                                              bestIndex, cst(rb, rl, count)),
                        arith::CmpIOp::create(rb, rl, arith::CmpIPredicate::ult,
                                              racc[3], maxOut));
                    auto step = scf::IfOp::create(
                        rb, rl, found,
                        [&](OpBuilder &tb, Location tl) {
                          Value row = racc[1];
                          Value t = racc[0];
                          Value fields[3] = {bi, ci, bestIndex};
                          for (int64_t k = 0; k < 3; ++k)
                            t = tensor::InsertOp::create(
                                tb, tl,
                                arith::IndexCastOp::create(tb, tl, i64, fields[k]), t,
                                ValueRange{row, cst(tb, tl, k)});
                          Value suppressed = tensor::GenerateOp::create(
                              tb, tl, RankedTensorType::get({count}, i1), ValueRange{},
                              [&](OpBuilder &nb, Location l, ValueRange iv) {
                                Value was = tensor::ExtractOp::create(nb, l, liveNow,
                                                                      ValueRange{iv[0]});
                                Value chosen = arith::CmpIOp::create(
                                    nb, l, arith::CmpIPredicate::eq, iv[0], bestIndex);
                                Value gone = arith::OrIOp::create(
                                    nb, l, chosen, overlaps(nb, l, bi, bestIndex, iv[0]));
                                tensor::YieldOp::create(
                                    nb, l,
                                    arith::AndIOp::create(
                                        nb, l, was,
                                        arith::XOrIOp::create(nb, l, gone, yes(nb, l, true)))
                                        .getResult());
                              });
                          Value one = cst(tb, tl, 1);
                          scf::YieldOp::create(
                              tb, tl,
                              ValueRange{t, arith::AddIOp::create(tb, tl, row, one),
                                         suppressed,
                                         arith::AddIOp::create(tb, tl, racc[3], one)});
                        },
                        [&](OpBuilder &eb, Location el) {
                          scf::YieldOp::create(eb, el, racc);
                        });
                    scf::YieldOp::create(rb, rl, step.getResults());
                  });
              scf::YieldOp::create(
                  cb, cl, ValueRange{rounds.getResult(0), rounds.getResult(1)});
            });
        scf::YieldOp::create(bb, bl, perClass.getResults());
      });
  Value selected = perBatch.getResult(1);
  auto outType = RankedTensorType::get({ShapedType::kDynamic, 3}, i64);
  Value all = perBatch.getResult(0);
  ctx.setOutput(0, tensor::GenerateOp::create(
                       b, loc, outType, ValueRange{selected},
                       [&](OpBuilder &nb, Location l, ValueRange iv) {
                         tensor::YieldOp::create(
                             nb, l, tensor::ExtractOp::create(nb, l, all, iv).getResult());
                       }));
  return success();
}

LogicalResult mlir::tessel::onnx_import::convertMaxUnpool(NodeContext &ctx) {
  RankedTensorType type = ctx.inputType(0), idxType = ctx.inputType(1);
  int64_t rank = type.getRank(), spatial = rank - 2;
  if (rank < 3 || !idxType || idxType.getShape() != type.getShape() ||
      !isa<IntegerType>(idxType.getElementType()))
    return ctx.emitError() << "X must be [N, C, D1, ...] and I integer "
                              "indices of the same shape";
  FailureOr<SmallVector<int64_t>> kernel = ctx.intsAttr("kernel_shape");
  FailureOr<SmallVector<int64_t>> strides =
      ctx.intsAttr("strides", SmallVector<int64_t>(spatial, 1));
  FailureOr<SmallVector<int64_t>> pads =
      ctx.intsAttr("pads", SmallVector<int64_t>(2 * spatial, 0));
  if (failed(kernel) || failed(strides) || failed(pads))
    return failure();
  if (int64_t(kernel->size()) != spatial || int64_t(strides->size()) != spatial ||
      int64_t(pads->size()) != 2 * spatial)
    return ctx.emitError() << "kernel_shape, strides and pads must have one "
                              "entry per spatial dim (pads two)";
  // Attribute values are bounded so that the sizes below cannot overflow.
  constexpr int64_t maxAttr = int64_t(1) << 24;
  for (int64_t d = 0; d < spatial; ++d)
    if ((*kernel)[d] < 1 || (*kernel)[d] > maxAttr || (*strides)[d] < 1 ||
        (*strides)[d] > maxAttr || (*pads)[d] < 0 || (*pads)[d] > maxAttr ||
        (*pads)[d + spatial] < 0 || (*pads)[d + spatial] > maxAttr)
      return ctx.attrError("kernel_shape", "strides and pads must lie in [1, "
                                           "2^24] ([0, 2^24] for pads)");
  ArrayRef<int64_t> in = type.getShape();
  IndexMath m(ctx);
  OpBuilder &b = m.b;
  Location loc = m.loc;
  // The default sizes, (in - 1) * stride - pads + kernel: the indices
  // count in them (as ONNX's reference does); output_shape, if given, pads
  // that result with zeros at the end of each dim.
  SmallVector<int64_t> unpooled(in.take_front(2));
  for (int64_t d = 0; d < spatial; ++d) {
    int64_t size = (in[d + 2] - 1) * (*strides)[d] - (*pads)[d] -
                   (*pads)[d + spatial] + (*kernel)[d];
    if (size < 1)
      return ctx.emitError() << "the default output size of spatial dim " << d
                             << " is " << size;
    unpooled.push_back(size);
  }
  if (failed(checkShape(ctx, unpooled, "the unpooled output")))
    return failure();
  SmallVector<Value> dims;
  SmallVector<int64_t> outShape(unpooled);
  Value padOk = m.yes();
  if (ctx.hasInput(2)) {
    FailureOr<int64_t> length = operandLength(ctx, 2, "output_shape");
    if (failed(length))
      return failure();
    if (*length != rank)
      return ctx.emitError() << "output_shape has " << *length
                             << " entries for rank " << rank;
    for (int64_t d = 0; d < rank; ++d) {
      Value size = m.element(ctx.input(2), d);
      padOk = m.both(padOk, m.le(m.c(unpooled[d]), size));
      dims.push_back(size);
    }
    dims = checkedSizes(m, padOk, dims);
    outShape.assign(rank, ShapedType::kDynamic);
  }
  Value total = m.c(numElements(unpooled));
  Type elem = type.getElementType();
  Value zero = arith::ConstantOp::create(b, loc, cast<TypedAttr>(b.getZeroAttr(elem)));
  Value flat = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{ShapedType::kDynamic},
                                       elem, ValueRange{total});
  flat = linalg::FillOp::create(b, loc, zero, flat).getResult(0);
  // Each value to its flat index; one out of range is skipped and fails
  // the call.
  int64_t n = numElements(in);
  SmallVector<int64_t> inStrides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    inStrides[d] = inStrides[d + 1] * in[d + 1];
  Value x = ctx.input(0), indices = ctx.input(1);
  auto scatter = scf::ForOp::create(
      b, loc, m.c(0), m.c(n), m.c(1), ValueRange{flat, m.yes()},
      [&](OpBuilder &nb, Location l, Value e, ValueRange acc) {
        SmallVector<Value> at;
        for (int64_t d = 0; d < rank; ++d)
          at.push_back(arith::RemUIOp::create(
              nb, l,
              arith::DivUIOp::create(nb, l, e,
                                     arith::ConstantIndexOp::create(nb, l, inStrides[d])),
              arith::ConstantIndexOp::create(nb, l, std::max<int64_t>(in[d], 1))));
        Value i = arith::IndexCastOp::create(
            nb, l, nb.getIndexType(), tensor::ExtractOp::create(nb, l, indices, at));
        Value inRange = arith::AndIOp::create(
            nb, l,
            arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sle,
                                  arith::ConstantIndexOp::create(nb, l, 0), i),
            arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, i, total));
        auto put = scf::IfOp::create(
            nb, l, inRange,
            [&](OpBuilder &tb, Location tl) {
              Value v = tensor::ExtractOp::create(tb, tl, x, at);
              scf::YieldOp::create(
                  tb, tl, ValueRange{tensor::InsertOp::create(tb, tl, v, acc[0], ValueRange{i})});
            },
            [&](OpBuilder &eb, Location el) {
              scf::YieldOp::create(eb, el, ValueRange{acc[0]});
            });
        scf::YieldOp::create(
            nb, l, ValueRange{put.getResult(0),
                              arith::AndIOp::create(nb, l, acc[1], inRange)});
      });
  Value scattered = required(m, scatter.getResult(1), scatter.getResult(0),
                             scatter.getResult(0),
                             TESSEL_ENTRY_INDEX_OUT_OF_RANGE);
  SmallVector<Value> unpooledDims;
  for (int64_t d : unpooled)
    unpooledDims.push_back(m.c(d));
  Value y = tensor::ReshapeOp::create(b, loc, RankedTensorType::get(unpooled, elem),
                                      scattered, dimsTensor(m, unpooledDims));
  if (dims.empty()) {
    ctx.setOutput(0, y);
    return success();
  }
  // Zeros past the default sizes (a smaller output_shape fails the call,
  // and its zero sizes read nothing).
  ctx.setOutput(0, tensor::GenerateOp::create(
                       b, loc, RankedTensorType::get(outShape, elem), dims,
                       [&](OpBuilder &nb, Location l, ValueRange iv) {
                         Value inside = arith::ConstantIntOp::create(nb, l, nb.getI1Type(), 1);
                         SmallVector<Value> at;
                         for (int64_t d = 0; d < rank; ++d) {
                           Value last = arith::ConstantIndexOp::create(nb, l, unpooled[d] - 1);
                           inside = arith::AndIOp::create(
                               nb, l, inside,
                               arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sle,
                                                     iv[d], last));
                           at.push_back(arith::MinSIOp::create(nb, l, iv[d], last));
                         }
                         Value v = tensor::ExtractOp::create(nb, l, y, at);
                         tensor::YieldOp::create(
                             nb, l, arith::SelectOp::create(nb, l, inside, v, zero).getResult());
                       }));
  return success();
}
