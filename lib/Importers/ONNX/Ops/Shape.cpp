//===- Shape.cpp - ONNX shape and data-movement ops ------------------------===//
//
// Reshape-like ops become tosa.reshape; index selections along axes
// (Slice with steps, Gather, reflect/edge Pad, Resize) become tosa.slice
// where contiguous and tosa.gather otherwise. Whenever the data is a
// compile-time constant (as in exported shape subgraphs: Shape -> Gather ->
// Unsqueeze -> Concat -> Reshape) the result is computed here instead, so
// that later ops that need constant shapes still see them.
//
//===----------------------------------------------------------------------===//
#include "Common.h"
#include "RunTimeShapes.h"
#include "IndexMath.h"
#include "tessel/Dialect/Tessel/IR/TesselDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tessel::onnx_import;

namespace {

/// Data-movement results of constants are folded up to this many elements;
/// beyond it, the IR stays small and the pipeline's canonicalizer may fold.
constexpr int64_t kFoldLimit = 1 << 16;

bool foldable(DenseElementsAttr c) {
  return c && (c.isSplat() || c.getNumElements() <= kFoldLimit);
}

/// Row-major strides of `shape`.
SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> s(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    s[i] = s[i + 1] * shape[i + 1];
  return s;
}

/// `c` with the same elements in another shape (Reshape, Squeeze...).
DenseElementsAttr reshapeConstant(DenseElementsAttr c, RankedTensorType type) {
  return c.reshape(type);
}

/// The constant whose element at multi-index i is c[lists[0][i0],
/// lists[1][i1], ...], given the shape `type` (same element count).
DenseElementsAttr selectConstant(DenseElementsAttr c,
                                 ArrayRef<SmallVector<int64_t>> lists,
                                 RankedTensorType type) {
  if (c.isSplat())
    return DenseElementsAttr::get(type, c.getSplatValue<Attribute>());
  auto inType = cast<RankedTensorType>(c.getType());
  SmallVector<int64_t> inStrides = stridesOf(inType.getShape());
  SmallVector<Attribute> all(c.getValues<Attribute>());
  SmallVector<Attribute> out;
  out.reserve(numElements(type.getShape()));
  int64_t rank = lists.size();
  SmallVector<int64_t> idx(rank, 0);
  int64_t total = 1;
  for (const auto &l : lists)
    total *= static_cast<int64_t>(l.size());
  for (int64_t n = 0; n < total; ++n) {
    int64_t src = 0;
    for (int64_t d = 0; d < rank; ++d)
      src += lists[d][idx[d]] * inStrides[d];
    out.push_back(all[src]);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++idx[d] < static_cast<int64_t>(lists[d].size()))
        break;
      idx[d] = 0;
    }
  }
  return DenseElementsAttr::get(type, out);
}

/// Whether `l` is start, start+1, ..., i.e. a plain tosa.slice.
bool isContiguous(ArrayRef<int64_t> l) {
  for (size_t i = 1; i < l.size(); ++i)
    if (l[i] != l[i - 1] + 1)
      return false;
  return !l.empty();
}

/// `x` gathered along `axis` by `indices` (i32, shape [1, W], values in
/// [0, dim)); the axis becomes `indexShape`. tosa.gather works on
/// [N, K, C] x [N, W]: data is viewed as [outer, dim, inner] and the
/// indices are tiled over `outer`.
Value gatherAxis(NodeContext &ctx, Value x, int64_t axis, Value indices,
                 ArrayRef<int64_t> indexShape) {
  ArrayRef<int64_t> shape = typeOf(x).getShape();
  int64_t outer = numElements(shape.take_front(axis));
  int64_t inner = numElements(shape.drop_front(axis + 1));
  int64_t w = numElements(indexShape);
  Value values = ctx.tosa().reshape(x, {outer, shape[axis], inner});
  if (outer != 1) {
    auto tiledTy = RankedTensorType::get({outer, w}, elemOf(indices));
    indices = tosa::TileOp::create(ctx.builder(), ctx.loc(), tiledTy, indices,
                                   ctx.tosa().shape({outer, 1}));
  }
  Value g = tosa::GatherOp::create(
      ctx.builder(), ctx.loc(),
      RankedTensorType::get({outer, w, inner}, elemOf(x)), values, indices);
  SmallVector<int64_t> outShape(shape.take_front(axis));
  llvm::append_range(outShape, indexShape);
  llvm::append_range(outShape, shape.drop_front(axis + 1));
  return ctx.tosa().reshape(g, outShape);
}

/// A compile-time index list as the i32 [1, W] operand of gatherAxis.
Value indexConstant(NodeContext &ctx, ArrayRef<int64_t> l) {
  auto type = RankedTensorType::get({1, static_cast<int64_t>(l.size())},
                                    ctx.builder().getI32Type());
  return ctx.materializeConstant(intsAttr(type, l));
}

/// `x` indexed along each dim d by the compile-time list lists[d]:
/// contiguous lists become one tosa.slice, the others tosa.gather.
Value selectIndices(NodeContext &ctx, Value x,
                    ArrayRef<SmallVector<int64_t>> lists) {
  ArrayRef<int64_t> shape = typeOf(x).getShape();
  SmallVector<int64_t> start, size;
  bool needSlice = false;
  for (auto [d, l] : llvm::enumerate(lists)) {
    bool contiguous = isContiguous(l);
    start.push_back(contiguous ? l.front() : 0);
    size.push_back(contiguous ? static_cast<int64_t>(l.size()) : shape[d]);
    needSlice |= contiguous && size.back() != shape[d];
  }
  if (needSlice)
    x = ctx.tosa().slice(x, start, size);
  for (auto [d, l] : llvm::enumerate(lists)) {
    if (isContiguous(l))
      continue;
    int64_t n = static_cast<int64_t>(l.size());
    x = gatherAxis(ctx, x, d, indexConstant(ctx, l), {n});
  }
  return x;
}

/// Sets output `i` to `x` indexed by `lists`, folded when `c` is known.
void setSelected(NodeContext &ctx, unsigned i, Value x, DenseElementsAttr c,
                 ArrayRef<SmallVector<int64_t>> lists, ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(shape, elemOf(x));
  if (foldable(c)) {
    ctx.setConstantOutput(i, selectConstant(c, lists, type));
    return;
  }
  Value y = selectIndices(ctx, x, lists);
  if (typeOf(y).getShape() != shape)
    y = ctx.tosa().reshape(y, shape);
  ctx.setOutput(i, y);
}

/// Sets output 0 to input 0 in another shape (folded when constant).
LogicalResult setReshaped(NodeContext &ctx, ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(shape, ctx.inputType(0).getElementType());
  // A large weight is reshaped by a tosa.reshape the import folds into its
  // one copy (DeferredWeights.h).
  DenseElementsAttr c =
      ctx.isDeferredInput(0) ? DenseElementsAttr() : ctx.constantInput(0);
  if (c) {
    ctx.setConstantOutput(0, reshapeConstant(c, type));
    return success();
  }
  Value x = ctx.input(0);
  ctx.setOutput(0, typeOf(x).getShape() == shape ? x
                                                 : ctx.tosa().reshape(x, shape));
  return success();
}

/// The full index list [0, n).
SmallVector<int64_t> iota(int64_t n) {
  SmallVector<int64_t> l(n);
  for (int64_t i = 0; i < n; ++i)
    l[i] = i;
  return l;
}

/// Integer attribute (older opsets) or constant input (newer ones).
FailureOr<std::optional<SmallVector<int64_t>>>
intsAttrOrInput(NodeContext &ctx, StringRef attr, unsigned input,
                bool fromInput) {
  if (fromInput) {
    if (!ctx.hasInput(input))
      return std::optional<SmallVector<int64_t>>();
    FailureOr<SmallVector<int64_t>> v = ctx.constantInts(input, attr);
    if (failed(v))
      return failure();
    return std::optional<SmallVector<int64_t>>(*v);
  }
  if (!ctx.hasAttr(attr))
    return std::optional<SmallVector<int64_t>>();
  FailureOr<SmallVector<int64_t>> v = ctx.intsAttr(attr);
  if (failed(v))
    return failure();
  return std::optional<SmallVector<int64_t>>(*v);
}

//===----------------------------------------------------------------------===//
// Reshape, Flatten, Squeeze, Unsqueeze, Transpose
//===----------------------------------------------------------------------===//

LogicalResult convertReshape(NodeContext &ctx) {
  ArrayRef<int64_t> in = ctx.inputType(0).getShape();
  SmallVector<int64_t> target;
  if (ctx.opset() < 5) {
    ctx.ignoreAttr("consumed_inputs"); // legacy memory-planning hint
    FailureOr<SmallVector<int64_t>> s = ctx.intsAttr("shape");
    if (failed(s))
      return failure();
    target = *s;
  }
  FailureOr<int64_t> allowZero = ctx.intAttr("allowzero", 0);
  if (failed(allowZero))
    return failure();
  bool runTimeInput = !ctx.inputType(0).hasStaticShape();
  if (runTimeInput && ctx.opset() < 5)
    return ctx.unsupported("Reshape-1 of an input whose sizes are known only "
                           "at run time");
  if (ctx.opset() >= 5) {
    // An input with run-time sizes makes even a constant shape's -1 and 0
    // entries run-time values.
    if (isRunTimeOperand(ctx, 1) || runTimeInput)
      return reshapeAtRunTime(ctx, *allowZero != 0);
    FailureOr<SmallVector<int64_t>> s = ctx.constantInts(1, "shape");
    if (failed(s))
      return failure();
    target = *s;
  }
  int64_t known = 1, inferred = -1;
  for (auto [i, d] : llvm::enumerate(target)) {
    if (d == 0 && !*allowZero) {
      if (i >= in.size()) {
        ctx.emitError() << "shape entry " << i << " is 0 (copy) but the input "
                        << "has rank " << in.size();
        return failure();
      }
      d = in[i];
    }
    if (d == -1) {
      if (inferred >= 0) {
        ctx.emitError() << "shape has more than one -1";
        return failure();
      }
      inferred = i;
      continue;
    }
    if (d < 0) {
      ctx.emitError() << "shape entry " << i << " is " << d;
      return failure();
    }
    // The entries are data: their product may not fit in int64 (found by
    // test/fuzz/FuzzOnnx.cpp). Past the input's element count it is wrong
    // anyway.
    if (llvm::MulOverflow(known, d, known)) {
      ctx.emitError() << "shape [" << target
                      << "] holds more elements than a 64-bit count";
      return failure();
    }
  }
  int64_t total = numElements(in);
  if (inferred >= 0) {
    if (known == 0 || total % known != 0) {
      ctx.emitError() << "cannot infer -1 in shape [" << target
                      << "] for an input of " << total << " elements";
      return failure();
    }
    target[inferred] = total / known;
  } else if (known != total) {
    ctx.emitError() << "shape [" << target << "] holds " << known
                    << " elements, the input " << total;
    return failure();
  }
  return setReshaped(ctx, target);
}

LogicalResult convertFlatten(NodeContext &ctx) {
  ArrayRef<int64_t> in = ctx.inputType(0).getShape();
  int64_t rank = in.size();
  FailureOr<int64_t> axis = ctx.intAttr("axis", 1);
  if (failed(axis))
    return failure();
  // Unlike most axes, this one ranges over [-rank, rank]: axis = rank puts
  // every dim in the outer factor.
  if (*axis < -rank || *axis > rank)
    return ctx.attrError("axis", "= " + std::to_string(*axis) +
                                     " is out of range for rank " +
                                     std::to_string(rank));
  int64_t a = *axis < 0 ? *axis + rank : *axis;
  if (!ctx.inputType(0).hasStaticShape())
    return flattenAtRunTime(ctx, a);
  return setReshaped(ctx, {numElements(in.take_front(a)),
                           numElements(in.drop_front(a))});
}

LogicalResult convertSqueeze(NodeContext &ctx) {
  if (ctx.opset() >= 13 && isRunTimeOperand(ctx, 1))
    return squeezeAtRunTime(ctx);
  ArrayRef<int64_t> in = ctx.inputType(0).getShape();
  int64_t rank = in.size();
  auto axes = intsAttrOrInput(ctx, "axes", 1, ctx.opset() >= 13);
  if (failed(axes))
    return failure();
  SmallVector<bool> drop(rank, false);
  bool runTimeSized = !ctx.inputType(0).hasStaticShape();
  if (!*axes) {
    // Which dims are 1 would be known only at run time.
    if (runTimeSized)
      return ctx.unsupported("Squeeze without axes of an input whose sizes "
                             "are known only at run time");
    for (int64_t d = 0; d < rank; ++d)
      drop[d] = in[d] == 1;
  } else {
    for (int64_t a : **axes) {
      FailureOr<int64_t> n = normalizeAxis(ctx, a, rank, "axes");
      if (failed(n))
        return failure();
      if (ShapedType::isDynamic(in[*n]))
        return ctx.unsupported("squeezing a dim whose size is known only at "
                               "run time");
      if (in[*n] != 1)
        return ctx.attrError("axes", "names dim " + std::to_string(*n) +
                                         " of size " + std::to_string(in[*n]) +
                                         ", which cannot be squeezed");
      drop[*n] = true;
    }
  }
  SmallVector<int64_t> out, source;
  for (int64_t d = 0; d < rank; ++d)
    if (!drop[d]) {
      out.push_back(in[d]);
      source.push_back(d);
    }
  if (runTimeSized)
    return reshapeKeepingRunTimeDims(ctx, out, source);
  return setReshaped(ctx, out);
}

LogicalResult convertUnsqueeze(NodeContext &ctx) {
  if (ctx.opset() >= 13 && isRunTimeOperand(ctx, 1))
    return unsqueezeAtRunTime(ctx);
  ArrayRef<int64_t> in = ctx.inputType(0).getShape();
  auto axes = intsAttrOrInput(ctx, "axes", 1, ctx.opset() >= 13);
  if (failed(axes))
    return failure();
  if (!*axes)
    return ctx.attrError("axes", "is required");
  int64_t outRank = in.size() + (*axes)->size();
  SmallVector<bool> inserted(outRank, false);
  for (int64_t a : **axes) {
    FailureOr<int64_t> n = normalizeAxis(ctx, a, outRank, "axes");
    if (failed(n))
      return failure();
    if (inserted[*n])
      return ctx.attrError("axes", "repeats axis " + std::to_string(*n));
    inserted[*n] = true;
  }
  SmallVector<int64_t> out, source;
  int64_t next = 0;
  for (int64_t d = 0; d < outRank; ++d) {
    source.push_back(inserted[d] ? -1 : next);
    out.push_back(inserted[d] ? 1 : in[next++]);
  }
  if (!ctx.inputType(0).hasStaticShape())
    return reshapeKeepingRunTimeDims(ctx, out, source);
  return setReshaped(ctx, out);
}

LogicalResult convertTranspose(NodeContext &ctx) {
  ArrayRef<int64_t> in = ctx.inputType(0).getShape();
  int64_t rank = in.size();
  SmallVector<int64_t> reversed;
  for (int64_t d = rank - 1; d >= 0; --d)
    reversed.push_back(d);
  FailureOr<SmallVector<int64_t>> perm = ctx.intsAttr("perm", reversed);
  if (failed(perm))
    return failure();
  if (static_cast<int64_t>(perm->size()) != rank)
    return ctx.attrError("perm", "has " + std::to_string(perm->size()) +
                                     " entries for an input of rank " +
                                     std::to_string(rank));
  SmallVector<bool> seen(rank, false);
  SmallVector<int32_t> perm32;
  SmallVector<int64_t> outShape;
  for (int64_t p : *perm) {
    FailureOr<int64_t> n = normalizeAxis(ctx, p, rank, "perm");
    if (failed(n))
      return failure();
    if (seen[*n])
      return ctx.attrError("perm", "is not a permutation");
    seen[*n] = true;
    perm32.push_back(static_cast<int32_t>(*n));
    outShape.push_back(in[*n]);
  }
  if (ArrayRef<std::string> names = ctx.inputDimNames(0);
      int64_t(names.size()) == rank) {
    SmallVector<std::string> permuted;
    for (int32_t p : perm32)
      permuted.push_back(names[p]);
    ctx.setOutputDimNamesIfUnknown(0, permuted);
  }
  // As in setReshaped: a large weight keeps its tosa.transpose.
  DenseElementsAttr c =
      ctx.isDeferredInput(0) ? DenseElementsAttr() : ctx.constantInput(0);
  if (foldable(c)) {
    // Element at out index i is in[perm^-1 ...]: walk the output in order.
    auto type = RankedTensorType::get(outShape, c.getElementType());
    if (c.isSplat()) {
      ctx.setConstantOutput(0, reshapeConstant(c, type));
      return success();
    }
    SmallVector<int64_t> inStrides = stridesOf(in);
    SmallVector<Attribute> all(c.getValues<Attribute>());
    SmallVector<Attribute> out;
    SmallVector<int64_t> idx(rank, 0);
    for (int64_t n = 0, e = numElements(outShape); n < e; ++n) {
      int64_t src = 0;
      for (int64_t d = 0; d < rank; ++d)
        src += idx[d] * inStrides[perm32[d]];
      out.push_back(all[src]);
      for (int64_t d = rank - 1; d >= 0; --d) {
        if (++idx[d] < outShape[d])
          break;
        idx[d] = 0;
      }
    }
    ctx.setConstantOutput(0, DenseElementsAttr::get(type, out));
    return success();
  }
  Value x = ctx.input(0);
  ctx.setOutput(0, rank == 0 ? x : ctx.tosa().transpose(x, perm32));
  return success();
}

//===----------------------------------------------------------------------===//
// Concat, Split, Slice
//===----------------------------------------------------------------------===//

LogicalResult convertConcat(NodeContext &ctx) {
  FailureOr<int64_t> axisAttr =
      ctx.opset() < 4 ? ctx.intAttr("axis", 1) : ctx.intAttr("axis");
  if (failed(axisAttr))
    return failure();
  RankedTensorType first = ctx.inputType(0);
  int64_t rank = first.getRank();
  FailureOr<int64_t> axis = normalizeAxis(ctx, *axisAttr, rank);
  if (failed(axis))
    return failure();
  SmallVector<int64_t> outShape(first.getShape());
  outShape[*axis] = 0;
  SmallVector<Value> parts;
  bool allConstant = true;
  for (unsigned i = 0; i < ctx.numInputs(); ++i) {
    RankedTensorType t = ctx.inputType(i);
    for (int64_t d = 0; d < rank; ++d)
      if (t.getRank() != rank ||
          (d != *axis && t.getDimSize(d) != first.getDimSize(d))) {
        ctx.emitError() << "input " << i << " has shape [" << t.getShape()
                        << "], which does not concatenate with ["
                        << first.getShape() << "] along axis " << *axis;
        return failure();
      }
    // A size known only at run time makes the sum one too.
    if (ShapedType::isDynamic(t.getDimSize(*axis)) ||
        ShapedType::isDynamic(outShape[*axis]))
      outShape[*axis] = ShapedType::kDynamic;
    else
      outShape[*axis] += t.getDimSize(*axis);
    allConstant &= static_cast<bool>(ctx.constantInput(i));
    // Empty inputs contribute nothing (and TOSA dislikes zero-size operands).
    if (t.getDimSize(*axis) != 0)
      parts.push_back(ctx.input(i));
  }
  auto outType = RankedTensorType::get(outShape, first.getElementType());
  if (allConstant && numElements(outShape) <= kFoldLimit) {
    // Output = for each outer index, each input's block in turn.
    int64_t outer = numElements(ArrayRef<int64_t>(outShape).take_front(*axis));
    int64_t inner = numElements(ArrayRef<int64_t>(outShape).drop_front(*axis + 1));
    SmallVector<SmallVector<Attribute>> vals;
    for (unsigned i = 0; i < ctx.numInputs(); ++i) {
      DenseElementsAttr c = ctx.constantInput(i);
      if (c.isSplat())
        vals.emplace_back(c.getNumElements(), c.getSplatValue<Attribute>());
      else
        vals.emplace_back(c.getValues<Attribute>());
    }
    SmallVector<Attribute> out;
    for (int64_t o = 0; o < outer; ++o)
      for (unsigned i = 0; i < ctx.numInputs(); ++i) {
        int64_t block = ctx.inputType(i).getDimSize(*axis) * inner;
        for (int64_t k = 0; k < block; ++k)
          out.push_back(vals[i][o * block + k]);
      }
    ctx.setConstantOutput(0, DenseElementsAttr::get(outType, out));
    return success();
  }
  if (parts.empty())
    return ctx.unsupported("Concat of only empty inputs");
  ctx.setOutput(0, parts.size() == 1 ? parts.front()
                                     : ctx.tosa().concat(parts, *axis));
  return success();
}

LogicalResult convertSplit(NodeContext &ctx) {
  ArrayRef<int64_t> in = ctx.inputType(0).getShape();
  FailureOr<int64_t> axis = readAxis(ctx, "axis", 0, in.size());
  if (failed(axis))
    return failure();
  // Sizes: attribute (< 13) or input 1 (>= 13; opset 1 also allowed an
  // input), else equal parts.
  bool fromInput = ctx.opset() >= 13 || (ctx.opset() < 2 && ctx.hasInput(1));
  if (fromInput && isRunTimeOperand(ctx, 1))
    return splitAtRunTime(ctx, *axis);
  auto split = intsAttrOrInput(ctx, "split", 1, fromInput);
  if (failed(split))
    return failure();
  unsigned n = ctx.numOutputs();
  if (ShapedType::isDynamic(in[*axis]))
    return ctx.unsupported("Split along a dim whose size is known only at "
                           "run time");
  SmallVector<int64_t> sizes;
  if (*split) {
    sizes = **split;
    int64_t sum = 0;
    for (int64_t s : sizes) {
      if (s < 0)
        return ctx.attrError("split", "has a negative size " +
                                          std::to_string(s));
      sum += s;
    }
    if (sizes.size() != n || sum != in[*axis])
      return ctx.attrError("split", "does not divide dim " +
                                        std::to_string(in[*axis]) + " into " +
                                        std::to_string(n) + " outputs");
  } else {
    if (in[*axis] % n != 0) {
      ctx.emitError() << "dim " << in[*axis] << " does not split evenly into "
                      << n << " outputs";
      return failure();
    }
    sizes.assign(n, in[*axis] / n);
  }
  if (!ctx.inputType(0).hasStaticShape())
    return splitRunTimeSized(ctx, *axis, sizes);
  DenseElementsAttr c = ctx.constantInput(0);
  SmallVector<SmallVector<int64_t>> lists;
  for (int64_t d : in)
    lists.push_back(iota(d));
  int64_t offset = 0;
  for (unsigned i = 0; i < n; ++i) {
    SmallVector<int64_t> shape(in);
    shape[*axis] = sizes[i];
    lists[*axis].clear();
    for (int64_t k = 0; k < sizes[i]; ++k)
      lists[*axis].push_back(offset + k);
    offset += sizes[i];
    if (!ctx.hasOutput(i))
      continue;
    if (foldable(c)) {
      ctx.setConstantOutput(
          i, selectConstant(c, lists, RankedTensorType::get(shape, elemOf(ctx.input(0)))));
      continue;
    }
    SmallVector<int64_t> start(in.size(), 0);
    start[*axis] = offset - sizes[i];
    ctx.setOutput(i, ctx.tosa().slice(ctx.input(0), start, shape));
  }
  return success();
}

LogicalResult convertSlice(NodeContext &ctx) {
  ArrayRef<int64_t> in = ctx.inputType(0).getShape();
  int64_t rank = in.size();
  SmallVector<int64_t> starts, ends, axes, steps;
  if (ctx.opset() < 10) {
    FailureOr<SmallVector<int64_t>> s = ctx.intsAttr("starts");
    FailureOr<SmallVector<int64_t>> e = ctx.intsAttr("ends");
    FailureOr<SmallVector<int64_t>> a = ctx.intsAttr("axes", iota(rank));
    if (failed(s) || failed(e) || failed(a))
      return failure();
    starts = *s, ends = *e, axes = *a;
  } else {
    if (llvm::any_of(llvm::seq<unsigned>(1, 5), [&](unsigned i) {
          return isRunTimeOperand(ctx, i);
        }))
      return sliceAtRunTime(ctx);
    FailureOr<SmallVector<int64_t>> s = ctx.constantInts(1, "starts");
    if (failed(s))
      return failure();
    FailureOr<SmallVector<int64_t>> e = ctx.constantInts(2, "ends");
    if (failed(e))
      return failure();
    starts = *s, ends = *e;
    if (ctx.hasInput(3)) {
      FailureOr<SmallVector<int64_t>> a = ctx.constantInts(3, "axes");
      if (failed(a))
        return failure();
      axes = *a;
    } else {
      axes = iota(starts.size());
    }
    if (ctx.hasInput(4)) {
      FailureOr<SmallVector<int64_t>> st = ctx.constantInts(4, "steps");
      if (failed(st))
        return failure();
      steps = *st;
    }
  }
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size()) {
    ctx.emitError() << "starts, ends, axes and steps differ in length";
    return failure();
  }
  // Constant slices of static axes, other axes of run-time size: one
  // tensor.extract_slice (static sizes stay static); a sliced axis of
  // run-time size is sized at run time.
  bool runTimeSized = !ctx.inputType(0).hasStaticShape();
  SmallVector<int64_t> offsets(rank, 0), strides(rank, 1);
  SmallVector<SmallVector<int64_t>> lists;
  for (int64_t d : in)
    lists.push_back(ShapedType::isDynamic(d) ? SmallVector<int64_t>() : iota(d));
  SmallVector<int64_t> outShape(in);
  for (size_t i = 0; i < starts.size(); ++i) {
    FailureOr<int64_t> axis = normalizeAxis(ctx, axes[i], rank, "axes");
    if (failed(axis))
      return failure();
    if (ShapedType::isDynamic(in[*axis]))
      return ctx.opset() >= 10
                 ? sliceAtRunTime(ctx)
                 : ctx.unsupported("Slice of an axis whose size is known "
                                   "only at run time before opset 10");
    int64_t dim = in[*axis], step = steps[i];
    if (step == 0) {
      ctx.emitError() << "step for axis " << *axis << " is 0";
      return failure();
    }
    // numpy rules: negative indices count from the end, then clamp.
    int64_t start = starts[i], end = ends[i];
    if (start < 0)
      start = start < -dim ? 0 : start + dim;
    if (end < 0)
      end = end < -dim ? -1 : end + dim;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
    }
    SmallVector<int64_t> l;
    for (int64_t k = start; step > 0 ? k < end : k > end; k += step)
      l.push_back(k);
    outShape[*axis] = l.size();
    lists[*axis] = l;
    offsets[*axis] = start;
    strides[*axis] = step;
  }
  if (runTimeSized) {
    if (llvm::any_of(strides, [](int64_t s) { return s < 0; }) ||
        llvm::is_contained(outShape, 0))
      return ctx.unsupported("a backward or empty Slice of an input whose "
                             "sizes are known only at run time");
    IndexMath m(ctx);
    SmallVector<OpFoldResult> o, z, st;
    for (int64_t d = 0; d < rank; ++d) {
      o.push_back(m.b.getIndexAttr(offsets[d]));
      st.push_back(m.b.getIndexAttr(strides[d]));
      z.push_back(ShapedType::isDynamic(outShape[d])
                      ? OpFoldResult(m.dim(ctx.input(0), d))
                      : OpFoldResult(m.b.getIndexAttr(outShape[d])));
    }
    ctx.setOutput(0, tensor::ExtractSliceOp::create(
                         m.b, m.loc, withShape(ctx.inputType(0), outShape),
                         ctx.input(0), o, z, st));
    return success();
  }
  DenseElementsAttr c = ctx.constantInput(0);
  if (numElements(outShape) == 0 && !c)
    return ctx.unsupported("Slice with an empty result");
  setSelected(ctx, 0, ctx.input(0), c, lists, outShape);
  return success();
}

//===----------------------------------------------------------------------===//
// Gather, GatherElements, ScatterElements
//===----------------------------------------------------------------------===//

LogicalResult convertGather(NodeContext &ctx) {
  ArrayRef<int64_t> in = ctx.inputType(0).getShape();
  ArrayRef<int64_t> idxShape = ctx.inputType(1).getShape();
  FailureOr<int64_t> axis = readAxis(ctx, "axis", 0, in.size());
  if (failed(axis))
    return failure();
  if (!ctx.inputType(0).hasStaticShape() || !ctx.inputType(1).hasStaticShape())
    return gatherAtRunTime(ctx, *axis);
  int64_t dim = in[*axis];
  SmallVector<int64_t> outShape(in.take_front(*axis));
  llvm::append_range(outShape, idxShape);
  llvm::append_range(outShape, in.drop_front(*axis + 1));
  if (DenseElementsAttr ci = ctx.constantInput(1)) {
    SmallVector<int64_t> l = toInts(ci);
    for (int64_t &k : l) {
      if (k < -dim || k >= dim) {
        ctx.emitError() << "index " << k << " is out of range for dim " << dim;
        return failure();
      }
      k = k < 0 ? k + dim : k;
    }
    if (l.empty())
      return ctx.unsupported("Gather with an empty result");
    // Entries of a shape read at run time (Shape of a partly static
    // tensor): picked here, so that the static ones stay constants for the
    // arithmetic after them (channels / 2 in a channel shuffle).
    auto sizes = ctx.input(0).getDefiningOp<tensor::FromElementsOp>();
    std::optional<SmallVector<std::optional<int64_t>>> known =
        sizes && in.size() == 1 ? knownInts(ctx.input(0)) : std::nullopt;
    if (known) {
      auto type =
          RankedTensorType::get(outShape, ctx.inputType(0).getElementType());
      SmallVector<Value> picked;
      SmallVector<int64_t> values;
      SmallVector<Attribute> names;
      auto given = sizes->getAttrOfType<ArrayAttr>(kSizeNamesAttr);
      for (int64_t k : l) {
        picked.push_back(sizes.getElements()[k]);
        if ((*known)[k])
          values.push_back(*(*known)[k]);
        if (given && k < int64_t(given.size()))
          names.push_back(given[k]);
      }
      if (values.size() == l.size()) {
        ctx.setConstantOutput(0, intsAttr(type, values));
        return success();
      }
      auto out = tensor::FromElementsOp::create(ctx.builder(), ctx.loc(),
                                                type, picked);
      if (given)
        out->setAttr(kSizeNamesAttr, ctx.builder().getArrayAttr(names));
      ctx.setOutput(0, out);
      return success();
    }
    SmallVector<SmallVector<int64_t>> lists;
    for (int64_t d : in)
      lists.push_back(iota(d));
    lists[*axis] = l;
    DenseElementsAttr c = ctx.constantInput(0);
    auto type = RankedTensorType::get(outShape, ctx.inputType(0).getElementType());
    if (foldable(c)) {
      ctx.setConstantOutput(0, selectConstant(c, lists, type));
      return success();
    }
    Value g = gatherAxis(ctx, ctx.input(0), *axis, indexConstant(ctx, l),
                         {static_cast<int64_t>(l.size())});
    ctx.setOutput(0, ctx.tosa().reshape(g, outShape));
    return success();
  }
  int64_t w = numElements(idxShape);
  Value idx = ctx.tosa().reshape(wrapIndices(ctx, ctx.input(1), dim), {1, w});
  Value g = gatherAxis(ctx, ctx.input(0), *axis, idx, {w});
  ctx.setOutput(0, ctx.tosa().reshape(g, outShape));
  return success();
}

/// GatherElements / ScatterElements address one data element per index:
/// flat = sum_d coord_d * stride_d with coord_axis = index. The constant
/// part (every coordinate but the axis one) is precomputed; the result is
/// an i32 [1, W] operand for tosa.gather / tosa.scatter on data viewed as
/// [1, numElements, 1].
FailureOr<Value> flatElementIndices(NodeContext &ctx, int64_t axis) {
  ArrayRef<int64_t> in = ctx.inputType(0).getShape();
  ArrayRef<int64_t> idxShape = ctx.inputType(1).getShape();
  int64_t rank = in.size();
  if (static_cast<int64_t>(idxShape.size()) != rank) {
    ctx.emitError() << "indices must have the rank of data";
    return failure();
  }
  // Along the other dims an index's position is its own: past the data's
  // size it would address another row's element (or none).
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && !ShapedType::isDynamic(in[d]) &&
        !ShapedType::isDynamic(idxShape[d]) && idxShape[d] > in[d]) {
      ctx.emitError() << "indices have " << idxShape[d] << " along dim " << d
                      << ", more than the data's " << in[d];
      return failure();
    }
  SmallVector<int64_t> strides = stridesOf(in);
  int64_t w = numElements(idxShape);
  SmallVector<int64_t> base(w);
  SmallVector<int64_t> coord(rank, 0);
  for (int64_t n = 0; n < w; ++n) {
    int64_t off = 0;
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis)
        off += coord[d] * strides[d];
    base[n] = off;
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++coord[d] < idxShape[d])
        break;
      coord[d] = 0;
    }
  }
  auto flatTy = RankedTensorType::get({1, w}, ctx.builder().getI32Type());
  int64_t dim = in[axis];
  if (DenseElementsAttr ci = ctx.constantInput(1)) {
    SmallVector<int64_t> l = toInts(ci);
    for (int64_t n = 0; n < w; ++n) {
      int64_t k = l[n];
      if (k < -dim || k >= dim) {
        ctx.emitError() << "index " << k << " is out of range for dim " << dim;
        return failure();
      }
      base[n] += (k < 0 ? k + dim : k) * strides[axis];
    }
    return ctx.materializeConstant(intsAttr(flatTy, base));
  }
  Value idx = ctx.tosa().reshape(wrapIndices(ctx, ctx.input(1), dim), {1, w});
  auto one = RankedTensorType::get({1, 1}, ctx.builder().getI32Type());
  Value scaled = ctx.tosa().mul(idx, splatConstant(ctx, one, strides[axis]));
  return ctx.tosa().add(scaled, ctx.materializeConstant(intsAttr(flatTy, base)));
}

LogicalResult convertGatherElements(NodeContext &ctx) {
  RankedTensorType dataTy = ctx.inputType(0);
  FailureOr<int64_t> axis = readAxis(ctx, "axis", 0, dataTy.getRank());
  if (failed(axis))
    return failure();
  FailureOr<Value> idx = flatElementIndices(ctx, *axis);
  if (failed(idx))
    return failure();
  int64_t total = numElements(dataTy.getShape());
  ArrayRef<int64_t> idxShape = ctx.inputType(1).getShape();
  int64_t w = numElements(idxShape);
  Value values = ctx.tosa().reshape(ctx.input(0), {1, total, 1});
  Value g = tosa::GatherOp::create(
      ctx.builder(), ctx.loc(),
      RankedTensorType::get({1, w, 1}, dataTy.getElementType()), values, *idx);
  ctx.setOutput(0, ctx.tosa().reshape(g, idxShape));
  return success();
}

/// The reduction attribute of ScatterElements / ScatterND (opset 16: none,
/// add, mul; 18: max, min too), or an error naming it.
FailureOr<std::string> scatterReduction(NodeContext &ctx, Type elem) {
  FailureOr<std::string> r = ctx.stringAttr("reduction", "none");
  if (failed(r))
    return failure();
  bool known = *r == "none" || *r == "add" || *r == "mul" ||
               (ctx.opset() >= 18 && (*r == "max" || *r == "min"));
  if (!known) {
    (void)ctx.attrError("reduction", "= '" + *r +
                                         "' is not a reduction of opset " +
                                         Twine(ctx.opset()));
    return failure();
  }
  if (*r != "none" && elem.isInteger(1)) {
    (void)ctx.attrError("reduction",
                        "= '" + *r + "' on a bool tensor is not supported");
    return failure();
  }
  return *r;
}

/// values [1, K, C] with updates [1, W, C] written at rows idx [1, W] (i32,
/// in range): replaced (tosa.scatter; ONNX leaves duplicate indices
/// unspecified then) or, with a reduction, combined with what is there one
/// update at a time, so that duplicates accumulate in order (an scf.for
/// over W: each step gathers the row, combines, scatters it back).
Value scatterRows(NodeContext &ctx, Value values, Value idx, Value updates,
                  StringRef reduction) {
  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  if (reduction == "none")
    return tosa::ScatterOp::create(b, loc, typeOf(values), values, idx, updates);
  int64_t w = typeOf(idx).getDimSize(1), c = typeOf(values).getDimSize(2);
  Value lb = arith::ConstantIndexOp::create(b, loc, 0);
  Value ub = arith::ConstantIndexOp::create(b, loc, w);
  Value step = arith::ConstantIndexOp::create(b, loc, 1);
  auto loop = scf::ForOp::create(b, loc, lb, ub, step, ValueRange{values});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value iv = loop.getInductionVar(), acc = loop.getRegionIterArgs()[0];
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  auto idxTy = RankedTensorType::get({1, 1}, typeOf(idx).getElementType());
  auto rowTy = RankedTensorType::get({1, 1, c}, typeOf(values).getElementType());
  Value at = tensor::ExtractSliceOp::create(
      b, loc, idxTy, idx, ValueRange{zero, iv}, ValueRange{}, ValueRange{},
      b.getDenseI64ArrayAttr({ShapedType::kDynamic, ShapedType::kDynamic}),
      b.getDenseI64ArrayAttr({1, 1}), b.getDenseI64ArrayAttr({1, 1}));
  Value upd = tensor::ExtractSliceOp::create(
      b, loc, rowTy, updates, ValueRange{zero, iv}, ValueRange{}, ValueRange{},
      b.getDenseI64ArrayAttr({ShapedType::kDynamic, ShapedType::kDynamic, 0}),
      b.getDenseI64ArrayAttr({1, 1, c}), b.getDenseI64ArrayAttr({1, 1, 1}));
  Value cur = tosa::GatherOp::create(b, loc, rowTy, acc, at);
  Value combined = reduction == "add"   ? ctx.tosa().add(cur, upd)
                   : reduction == "mul" ? ctx.tosa().mul(cur, upd)
                   : reduction == "max" ? ctx.tosa().maximum(cur, upd)
                                        : tosa::MinimumOp::create(b, loc, rowTy, cur, upd).getResult();
  Value next = tosa::ScatterOp::create(b, loc, typeOf(acc), acc, at, combined);
  scf::YieldOp::create(b, loc, next);
  return loop.getResult(0);
}

LogicalResult convertScatterElements(NodeContext &ctx) {
  RankedTensorType dataTy = ctx.inputType(0);
  FailureOr<int64_t> axisAttr = ctx.intAttr("axis", 0);
  FailureOr<std::string> reduction =
      scatterReduction(ctx, dataTy.getElementType());
  if (failed(axisAttr) || failed(reduction))
    return failure();
  FailureOr<int64_t> axis = normalizeAxis(ctx, *axisAttr, dataTy.getRank());
  if (failed(axis))
    return failure();
  if (!ctx.inputType(1).hasStaticShape() || !ctx.inputType(2).hasStaticShape() ||
      !dataTy.hasStaticShape()) {
    auto it = dyn_cast<IntegerType>(dataTy.getElementType());
    if (it && !it.isSignless() && *reduction != "none")
      return ctx.unsupported("ScatterElements reduction '" + *reduction +
                             "' on unsigned integers with run-time sizes");
    return scatterElementsAtRunTime(ctx, *axis, *reduction);
  }
  FailureOr<Value> idx = flatElementIndices(ctx, *axis);
  if (failed(idx))
    return failure();
  int64_t total = numElements(dataTy.getShape());
  int64_t w = numElements(ctx.inputType(1).getShape());
  Value values = ctx.tosa().reshape(ctx.input(0), {1, total, 1});
  Value updates = ctx.tosa().reshape(ctx.input(2), {1, w, 1});
  Value s = scatterRows(ctx, values, *idx, updates, *reduction);
  ctx.setOutput(0, ctx.tosa().reshape(s, dataTy.getShape()));
  return success();
}

//===----------------------------------------------------------------------===//
// Expand, Tile, Pad
//===----------------------------------------------------------------------===//

LogicalResult convertExpand(NodeContext &ctx) {
  if (isRunTimeOperand(ctx, 1) || !ctx.inputType(0).hasStaticShape())
    return expandAtRunTime(ctx);
  ArrayRef<int64_t> in = ctx.inputType(0).getShape();
  FailureOr<SmallVector<int64_t>> shape = ctx.constantInts(1, "shape");
  if (failed(shape))
    return failure();
  FailureOr<SmallVector<int64_t>> out = broadcastShape(ctx, in, *shape);
  if (failed(out))
    return failure();
  DenseElementsAttr c = ctx.constantInput(0);
  if (foldable(c) && numElements(*out) <= kFoldLimit) {
    // Broadcast dims read index 0; the input is left-padded with 1s.
    size_t lead = out->size() - in.size();
    auto padded = RankedTensorType::get(
        SmallVector<int64_t>(lead, 1), c.getElementType());
    SmallVector<int64_t> paddedShape(padded.getShape());
    llvm::append_range(paddedShape, in);
    DenseElementsAttr pc = reshapeConstant(c, withShape(padded, paddedShape));
    SmallVector<SmallVector<int64_t>> lists;
    for (auto [have, want] : llvm::zip(paddedShape, *out))
      lists.push_back(have == want ? iota(want) : SmallVector<int64_t>(want, 0));
    ctx.setConstantOutput(
        0, selectConstant(pc, lists, RankedTensorType::get(*out, c.getElementType())));
    return success();
  }
  ctx.setOutput(0, broadcastTo(ctx, ctx.input(0), *out));
  return success();
}

LogicalResult convertTile(NodeContext &ctx) {
  if (ctx.opset() < 6)
    return ctx.unsupported("Tile before opset 6 (tiles/axis inputs)");
  if (isRunTimeOperand(ctx, 1))
    return tileAtRunTime(ctx);
  ArrayRef<int64_t> in = ctx.inputType(0).getShape();
  FailureOr<SmallVector<int64_t>> repeats = ctx.constantInts(1, "repeats");
  if (failed(repeats))
    return failure();
  if (repeats->size() != in.size()) {
    ctx.emitError() << "repeats has " << repeats->size()
                    << " entries for an input of rank " << in.size();
    return failure();
  }
  SmallVector<int64_t> out;
  for (auto [d, r] : llvm::zip(in, *repeats)) {
    if (r < 1)
      return ctx.unsupported("Tile with a repeat count below 1");
    int64_t size;
    if (llvm::MulOverflow(d, r, size))
      return ctx.emitError() << "the tiled result has a dimension of more "
                                "than 2^63 elements ("
                             << d << " x " << r << ")";
    out.push_back(size);
  }
  // Before anything is sized by it: repeats of 2^40 must be an error, not
  // an index list of 2^40 entries.
  if (failed(checkShape(ctx, out, "the tiled result")))
    return failure();
  DenseElementsAttr c = ctx.constantInput(0);
  if (foldable(c) && numElements(out) <= kFoldLimit) {
    SmallVector<SmallVector<int64_t>> lists;
    for (auto [d, size] : llvm::zip(in, out)) {
      SmallVector<int64_t> l;
      for (int64_t k = 0; k < size; ++k)
        l.push_back(k % d);
      lists.push_back(l);
    }
    ctx.setConstantOutput(
        0, selectConstant(c, lists, RankedTensorType::get(out, c.getElementType())));
    return success();
  }
  ctx.setOutput(0, tosa::TileOp::create(
                       ctx.builder(), ctx.loc(),
                       withShape(ctx.inputType(0), out), ctx.input(0),
                       ctx.tosa().shape(*repeats)));
  return success();
}

LogicalResult convertPad(NodeContext &ctx) {
  RankedTensorType inTy = ctx.inputType(0);
  ArrayRef<int64_t> in = inTy.getShape();
  int64_t rank = in.size();
  FailureOr<std::string> mode = ctx.stringAttr("mode", "constant");
  if (failed(mode))
    return failure();
  if (*mode != "constant" && *mode != "reflect" && *mode != "edge")
    return ctx.attrError("mode", "= '" + *mode + "' is not supported");
  SmallVector<int64_t> pads;
  double value = 0.0;
  DenseElementsAttr valueConst;
  if (ctx.opset() < 11) {
    StringRef name = ctx.opset() < 2 ? "paddings" : "pads";
    FailureOr<SmallVector<int64_t>> p = ctx.intsAttr(name);
    FailureOr<float> v = ctx.floatAttr("value", 0.0f);
    if (failed(p) || failed(v))
      return failure();
    pads = *p;
    value = *v;
  } else {
    if (ctx.hasInput(3))
      return ctx.unsupported("Pad with an 'axes' input");
    if (isRunTimeOperand(ctx, 1) || isRunTimeOperand(ctx, 2))
      return padAtRunTime(ctx, *mode);
    FailureOr<SmallVector<int64_t>> p = ctx.constantInts(1, "pads");
    if (failed(p))
      return failure();
    pads = *p;
    if (ctx.hasInput(2)) {
      valueConst = ctx.constantInput(2);
      if (!valueConst)
        return ctx.unsupported("Pad with a non-constant constant_value");
      value = toDoubles(valueConst).front();
    }
    if (ctx.hasInput(3))
      return ctx.unsupported("Pad with an 'axes' input");
  }
  if (static_cast<int64_t>(pads.size()) != 2 * rank) {
    ctx.emitError() << "pads has " << pads.size() << " entries for rank "
                    << rank;
    return failure();
  }
  // Index lists: negative pads crop; reflect/edge padding reads mirrored
  // or clamped source positions, so they are an index selection too.
  SmallVector<SmallVector<int64_t>> lists;
  SmallVector<int64_t> cropped, outShape, padding;
  bool constantMode = *mode == "constant";
  for (int64_t d = 0; d < rank; ++d) {
    int64_t lo = pads[d], hi = pads[d + rank], n = in[d];
    // A dim of run-time size (a batch) passes through unpadded.
    if (ShapedType::isDynamic(n)) {
      if (lo != 0 || hi != 0)
        return ctx.unsupported("padding a dim whose size is known only at "
                               "run time");
      lists.push_back({});
      padding.append({0, 0});
      outShape.push_back(n);
      continue;
    }
    int64_t from = constantMode ? std::max<int64_t>(-lo, 0) : -lo;
    int64_t to = constantMode ? n - std::max<int64_t>(-hi, 0) : n + hi;
    if (to <= from)
      return ctx.unsupported("Pad with an empty result");
    if (!constantMode && n == 0)
      return ctx.attrError("mode", "'" + *mode + "' cannot pad an empty dim");
    if (*mode == "reflect" && (lo >= n || hi >= n))
      return ctx.attrError("mode", "'reflect' needs pads smaller than the dim");
    SmallVector<int64_t> l;
    for (int64_t k = from; k < to; ++k) {
      int64_t src = k;
      if (*mode == "edge")
        src = std::clamp<int64_t>(k, 0, n - 1);
      else if (*mode == "reflect")
        src = k < 0 ? -k : (k >= n ? 2 * (n - 1) - k : k);
      l.push_back(src);
    }
    cropped.push_back(l.size());
    lists.push_back(l);
    padding.push_back(constantMode ? std::max<int64_t>(lo, 0) : 0);
    padding.push_back(constantMode ? std::max<int64_t>(hi, 0) : 0);
    outShape.push_back(n + lo + hi);
  }
  Value x = ctx.input(0);
  bool identity = true;
  for (auto [d, l] : llvm::enumerate(lists))
    identity &= ShapedType::isDynamic(in[d]) || l == iota(in[d]);
  if (!identity && !inTy.hasStaticShape())
    return ctx.unsupported("cropping or reflecting an input whose sizes are "
                           "known only at run time");
  if (!identity)
    x = selectIndices(ctx, x, lists);
  if (llvm::any_of(padding, [](int64_t p) { return p != 0; })) {
    auto scalarTy = RankedTensorType::get({1}, inTy.getElementType());
    Value padConst = ctx.materializeConstant(doublesAttr(scalarTy, {value}));
    x = tosa::PadOp::create(ctx.builder(), ctx.loc(), withShape(inTy, outShape),
                            x, ctx.tosa().shape(padding), padConst);
  }
  ctx.setOutput(0, x);
  return success();
}

//===----------------------------------------------------------------------===//
// Shape, Size, ConstantOfShape, Range
//===----------------------------------------------------------------------===//

/// Dim `d` of `x` as an i64: a constant where static, else tensor.dim.
Value runTimeDim(NodeContext &ctx, Value x, int64_t d) {
  IndexMath m(ctx);
  return m.toI64(m.dim(x, d));
}

LogicalResult convertShape(NodeContext &ctx) {
  ArrayRef<int64_t> in = ctx.inputType(0).getShape();
  int64_t rank = in.size();
  FailureOr<int64_t> start = ctx.intAttr("start", 0);
  FailureOr<int64_t> end = ctx.intAttr("end", rank);
  if (failed(start) || failed(end))
    return failure();
  auto clampIdx = [&](int64_t i) {
    return std::clamp<int64_t>(i < 0 ? i + rank : i, 0, rank);
  };
  int64_t s = clampIdx(*start), e = std::max(clampIdx(*end), s);
  SmallVector<int64_t> dims(in.begin() + s, in.begin() + e);
  auto type = RankedTensorType::get({e - s}, ctx.builder().getI64Type());
  if (llvm::any_of(dims, ShapedType::isDynamic)) {
    // Sizes known only at run time are read with tensor.dim.
    SmallVector<Value> values;
    for (int64_t d = s; d < e; ++d)
      values.push_back(runTimeDim(ctx, ctx.input(0), d));
    auto shape =
        tensor::FromElementsOp::create(ctx.builder(), ctx.loc(), type, values);
    // The entries' symbolic names (ONNX's dim names of the input), for the
    // Reshapes that read them (RunTimeShapes.cpp, staticReshapeSizes).
    if (ArrayRef<std::string> names = ctx.inputDimNames(0);
        int64_t(names.size()) == rank) {
      SmallVector<Attribute> picked;
      for (int64_t d = s; d < e; ++d)
        picked.push_back(ctx.builder().getStringAttr(names[d]));
      shape->setAttr(kSizeNamesAttr, ctx.builder().getArrayAttr(picked));
    }
    ctx.setOutput(0, shape);
    return success();
  }
  ctx.setConstantOutput(0, intsAttr(type, dims));
  return success();
}

LogicalResult convertSize(NodeContext &ctx) {
  auto type = RankedTensorType::get({}, ctx.builder().getI64Type());
  RankedTensorType in = ctx.inputType(0);
  if (!in.hasStaticShape()) {
    Value n = arith::ConstantIntOp::create(ctx.builder(), ctx.loc(),
                                           ctx.builder().getI64Type(), 1);
    for (int64_t d = 0; d < in.getRank(); ++d)
      n = arith::MulIOp::create(ctx.builder(), ctx.loc(), n,
                                runTimeDim(ctx, ctx.input(0), d));
    ctx.setOutput(0, tensor::FromElementsOp::create(ctx.builder(), ctx.loc(),
                                                    type, ValueRange{n}));
    return success();
  }
  ctx.setConstantOutput(0, intsAttr(type, {numElements(in.getShape())}));
  return success();
}

LogicalResult convertConstantOfShape(NodeContext &ctx) {
  Attribute value;
  if (ctx.hasAttr("value")) {
    FailureOr<DenseElementsAttr> v = ctx.tensorAttr("value");
    if (failed(v))
      return failure();
    if (v->getNumElements() != 1)
      return ctx.attrError("value", "must hold exactly one element");
    value = *v->getValues<Attribute>().begin();
  } else {
    value = ctx.builder().getF32FloatAttr(0.0f);
  }
  if (isRunTimeOperand(ctx, 0))
    return constantOfShapeAtRunTime(ctx, cast<TypedAttr>(value));
  FailureOr<SmallVector<int64_t>> shape = ctx.constantInts(0, "input");
  if (failed(shape) || failed(checkShape(ctx, *shape, "the requested shape")))
    return failure();
  Type elem = cast<TypedAttr>(value).getType();
  auto type = RankedTensorType::get(*shape, elem);
  ctx.setConstantOutput(0, DenseElementsAttr::get(type, value));
  return success();
}

LogicalResult convertRange(NodeContext &ctx) {
  DenseElementsAttr start = ctx.constantInput(0), limit = ctx.constantInput(1),
                    delta = ctx.constantInput(2);
  // The output size depends on all three.
  if (!start || !limit || !delta)
    return rangeAtRunTime(ctx);
  Type elem = start.getElementType();
  // The element count, max(ceil((limit - start) / delta), 0), is computed
  // in double so huge or wrapping ranges are caught before any allocation.
  double s = toDoubles(start)[0], l = toDoubles(limit)[0],
         d = toDoubles(delta)[0];
  if (d == 0 || std::isnan(d) || std::isnan(s) || std::isnan(l))
    return ctx.emitError() << "delta must be a non-zero number and start and "
                              "limit numbers";
  double count = std::max(std::ceil((l - s) / d), 0.0);
  if (!(count <= double(1 << 24)))
    return ctx.emitError() << "Range would have " << count
                           << " elements; Tessel builds at most 2^24";
  int64_t n = static_cast<int64_t>(count);
  if (isa<FloatType>(elem)) {
    SmallVector<double> v;
    for (int64_t i = 0; i < n; ++i)
      v.push_back(s + static_cast<double>(i) * d);
    ctx.setConstantOutput(0, doublesAttr(RankedTensorType::get({n}, elem), v));
    return success();
  }
  int64_t si = toInts(start)[0], di = toInts(delta)[0];
  SmallVector<int64_t> v;
  for (int64_t i = 0; i < n; ++i)
    v.push_back(si + i * di);
  ctx.setConstantOutput(0, intsAttr(RankedTensorType::get({n}, elem), v));
  return success();
}

//===----------------------------------------------------------------------===//
// OneHot, DepthToSpace, SpaceToDepth
//===----------------------------------------------------------------------===//

LogicalResult convertOneHot(NodeContext &ctx) {
  RankedTensorType idxTy = ctx.inputType(0);
  int64_t rank = idxTy.getRank();
  FailureOr<int64_t> axis = readAxis(ctx, "axis", -1, rank + 1);
  if (failed(axis))
    return failure();
  DenseElementsAttr depthC = ctx.constantInput(1);
  if (!depthC)
    return oneHotAtRunTime(ctx, *axis);
  double depthValue = toDoubles(depthC).front();
  if (!(depthValue >= 1 && depthValue <= double(1 << 24)))
    return ctx.emitError() << "depth = " << depthValue
                           << " must be in [1, 2^24]";
  int64_t depth = static_cast<int64_t>(depthValue);
  RankedTensorType valTy = ctx.inputType(2);
  SmallVector<int64_t> outShape(idxTy.getShape());
  outShape.insert(outShape.begin() + *axis, depth);
  SmallVector<int64_t> keepShape(idxTy.getShape());
  keepShape.insert(keepShape.begin() + *axis, 1);
  // Indices (float or int) in i32 with negatives wrapped, next to an iota
  // along the new axis: equal positions take on_value.
  Value idx = ctx.input(0);
  if (isa<FloatType>(idxTy.getElementType()))
    idx = ctx.tosa().cast(idx, ctx.builder().getI32Type());
  idx = ctx.tosa().reshape(wrapIndices(ctx, idx, depth, /*checked=*/false),
                          keepShape);
  SmallVector<int64_t> iotaShape(rank + 1, 1);
  iotaShape[*axis] = depth;
  Value positions = ctx.materializeConstant(intsAttr(
      RankedTensorType::get(iotaShape, ctx.builder().getI32Type()), iota(depth)));
  auto boolTy = RankedTensorType::get(outShape, ctx.builder().getI1Type());
  Value hit = tosa::EqualOp::create(ctx.builder(), ctx.loc(), boolTy, idx,
                                    positions);
  SmallVector<int64_t> ones(rank + 1, 1);
  Value values = ctx.input(2);
  auto part = [&](int64_t i) {
    return ctx.tosa().reshape(ctx.tosa().slice(values, {i}, {1}), ones);
  };
  ctx.setOutput(0, tosa::SelectOp::create(ctx.builder(), ctx.loc(),
                                          withShape(valTy, outShape), hit,
                                          part(1), part(0)));
  return success();
}

/// DepthToSpace (toSpace) and SpaceToDepth: reshape, transpose, reshape.
LogicalResult convertDepthSpace(NodeContext &ctx, bool toSpace) {
  RankedTensorType t = ctx.inputType(0);
  if (t.getRank() != 4)
    return ctx.unsupported("DepthToSpace/SpaceToDepth on non-4-D input");
  FailureOr<int64_t> bs = ctx.intAttr("blocksize");
  FailureOr<std::string> mode =
      toSpace ? ctx.stringAttr("mode", "DCR") : FailureOr<std::string>(std::string("DCR"));
  if (failed(bs) || failed(mode))
    return failure();
  if (*mode != "DCR" && *mode != "CRD")
    return ctx.attrError("mode", "= '" + *mode + "' is not supported");
  if (*bs < 1)
    return ctx.attrError("blocksize", "must be positive");
  int64_t n = t.getDimSize(0), c = t.getDimSize(1), h = t.getDimSize(2),
          w = t.getDimSize(3), b = *bs;
  Value x = ctx.input(0);
  if (toSpace) {
    if (c % (b * b) != 0)
      return ctx.attrError("blocksize", "does not divide the channels");
    int64_t oc = c / (b * b);
    if (*mode == "DCR") {
      x = ctx.tosa().reshape(x, {n, b, b, oc, h, w});
      x = ctx.tosa().transpose(x, {0, 3, 4, 1, 5, 2});
    } else {
      x = ctx.tosa().reshape(x, {n, oc, b, b, h, w});
      x = ctx.tosa().transpose(x, {0, 1, 4, 2, 5, 3});
    }
    ctx.setOutput(0, ctx.tosa().reshape(x, {n, oc, h * b, w * b}));
    return success();
  }
  if (h % b != 0 || w % b != 0)
    return ctx.attrError("blocksize", "does not divide the spatial dims");
  x = ctx.tosa().reshape(x, {n, c, h / b, b, w / b, b});
  x = ctx.tosa().transpose(x, {0, 3, 5, 1, 2, 4});
  ctx.setOutput(0, ctx.tosa().reshape(x, {n, c * b * b, h / b, w / b}));
  return success();
}

LogicalResult convertDepthToSpace(NodeContext &ctx) {
  return convertDepthSpace(ctx, true);
}
LogicalResult convertSpaceToDepth(NodeContext &ctx) {
  return convertDepthSpace(ctx, false);
}


//===----------------------------------------------------------------------===//
// Resize, Upsample
//===----------------------------------------------------------------------===//

/// Resize is separable: each resized axis is a 1-D interpolation whose
/// source positions and weights depend only on the output index, so it is
/// computed here and applied as gathers along that axis (exact for
/// nearest) and a weighted sum of 2 (linear) or 4 (cubic) gathered taps,
/// following the ONNX reference (edge-clamped taps, exclude_outside
/// renormalization).
struct ResizeParams {
  std::string mode = "nearest";
  std::string coordMode = "half_pixel";
  std::string nearestMode = "round_prefer_floor";
  double cubicA = -0.75;
  bool excludeOutside = false;
  /// tf_crop_and_resize: the value of outputs whose source lies outside the
  /// input.
  double extrapolation = 0.0;
};

/// Scalar arithmetic for the Resize formulas below, so that each formula
/// is written once: on doubles when the scales are constants (ConstMath),
/// as arith ops on f64 when they are read at run time (IRMath).
struct ConstMath {
  using V = double;
  using B = bool;
  V c(double v) { return v; }
  V add(V a, V b) { return a + b; }
  V sub(V a, V b) { return a - b; }
  V mul(V a, V b) { return a * b; }
  V div(V a, V b) { return a / b; }
  V floor(V a) { return std::floor(a); }
  V ceil(V a) { return std::ceil(a); }
  V round(V a) { return std::round(a); } // half away from zero
  B lt(V a, V b) { return a < b; }
  B gt(V a, V b) { return a > b; }
  B eq(V a, V b) { return a == b; }
  B either(B a, B b) { return a || b; }
  V select(B c, V a, V b) { return c ? a : b; }
};

struct IRMath {
  using V = Value;
  using B = Value;
  OpBuilder &b;
  Location loc;
  V c(double v) {
    return arith::ConstantOp::create(b, loc, b.getF64Type(), b.getF64FloatAttr(v));
  }
  V add(V x, V y) { return arith::AddFOp::create(b, loc, x, y); }
  V sub(V x, V y) { return arith::SubFOp::create(b, loc, x, y); }
  V mul(V x, V y) { return arith::MulFOp::create(b, loc, x, y); }
  V div(V x, V y) { return arith::DivFOp::create(b, loc, x, y); }
  V floor(V x) { return math::FloorOp::create(b, loc, x); }
  V ceil(V x) { return math::CeilOp::create(b, loc, x); }
  V round(V x) { return math::RoundOp::create(b, loc, x); }
  B lt(V x, V y) { return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, y); }
  B gt(V x, V y) { return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, y); }
  B eq(V x, V y) { return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, x, y); }
  B either(B x, B y) { return arith::OrIOp::create(b, loc, x, y); }
  V select(B c, V x, V y) { return arith::SelectOp::create(b, loc, c, x, y); }
};

/// `x` clamped into [lo, hi].
template <typename M>
typename M::V clampInto(M &m, typename M::V x, typename M::V lo,
                        typename M::V hi) {
  x = m.select(m.lt(x, lo), lo, x);
  return m.select(m.gt(x, hi), hi, x);
}

/// The source coordinate of output index `o` along an axis of `in`
/// elements. As in the ONNX reference, the resized length is in * scale
/// before flooring (it matters for align_corners when scales, not sizes,
/// are given). tf_crop_and_resize maps the outputs onto the region
/// [roiLo, roiHi] (fractions of in - 1) of the axis.
template <typename M>
typename M::V sourceCoord(M &m, const ResizeParams &p, typename M::V o,
                          typename M::V in, typename M::V scale,
                          typename M::V roiLo, typename M::V roiHi) {
  typename M::V resized = m.mul(in, scale);
  if (p.coordMode == "tf_crop_and_resize") {
    typename M::V span = m.mul(m.sub(roiHi, roiLo), m.sub(in, m.c(1)));
    return m.add(m.select(m.eq(resized, m.c(1)), m.div(span, m.c(2)),
                          m.div(m.mul(o, span), m.sub(resized, m.c(1)))),
                 m.mul(roiLo, m.sub(in, m.c(1))));
  }
  typename M::V halfPixel = m.sub(m.div(m.add(o, m.c(0.5)), scale), m.c(0.5));
  if (p.coordMode == "half_pixel")
    return halfPixel;
  if (p.coordMode == "pytorch_half_pixel")
    return m.select(m.gt(resized, m.c(1)), halfPixel, m.c(0));
  if (p.coordMode == "align_corners")
    return m.select(m.eq(resized, m.c(1)), m.c(0),
                    m.div(m.mul(o, m.sub(in, m.c(1))), m.sub(resized, m.c(1))));
  if (p.coordMode == "tf_half_pixel_for_nn")
    return m.div(m.add(o, m.c(0.5)), scale);
  return m.div(o, scale); // asymmetric
}

/// The source index nearest to coordinate `x` (clamped into the axis).
template <typename M>
typename M::V nearestIndex(M &m, const ResizeParams &p, typename M::V x,
                           typename M::V in) {
  typename M::V f = m.floor(x), r;
  if (p.nearestMode == "floor")
    r = f;
  else if (p.nearestMode == "ceil")
    r = m.ceil(x);
  else
    r = m.select(m.eq(m.sub(x, f), m.c(0.5)),
                 p.nearestMode == "round_prefer_ceil" ? m.add(f, m.c(1)) : f,
                 m.round(x));
  return clampInto(m, r, m.c(0), m.sub(in, m.c(1)));
}

/// Taps (source indices, clamped into the axis) and their weights for
/// linear/cubic interpolation at coordinate `x`.
template <typename M>
void interpolationTaps(M &m, const ResizeParams &p, typename M::V x,
                       typename M::V in, SmallVector<typename M::V> &idx,
                       SmallVector<typename M::V> &w) {
  using V = typename M::V;
  V f = m.floor(x), t = m.sub(x, f);
  idx.clear();
  w.clear();
  if (p.mode == "linear") {
    idx = {f, m.add(f, m.c(1))};
    w = {m.sub(m.c(1), t), t};
  } else {
    double a = p.cubicA;
    auto far = [&](V d) { // |d| in [1, 2)
      return m.sub(m.mul(m.add(m.mul(m.sub(m.mul(m.c(a), d), m.c(5 * a)), d),
                               m.c(8 * a)),
                         d),
                   m.c(4 * a));
    };
    auto near = [&](V d) { // |d| in [0, 1)
      return m.add(m.mul(m.mul(m.sub(m.mul(m.c(a + 2), d), m.c(a + 3)), d), d),
                   m.c(1));
    };
    idx = {m.sub(f, m.c(1)), f, m.add(f, m.c(1)), m.add(f, m.c(2))};
    w = {far(m.add(t, m.c(1))), near(t), near(m.sub(m.c(1), t)),
         far(m.sub(m.c(2), t))};
  }
  if (p.excludeOutside) {
    V sum = m.c(0);
    for (size_t i = 0; i < idx.size(); ++i) {
      w[i] = m.select(m.either(m.lt(idx[i], m.c(0)),
                               m.gt(idx[i], m.sub(in, m.c(1)))),
                      m.c(0), w[i]);
      sum = m.add(sum, w[i]);
    }
    for (V &v : w)
      v = m.div(v, sum);
  }
  for (V &i : idx)
    i = clampInto(m, i, m.c(0), m.sub(in, m.c(1)));
}

/// `x` resized along `axis` from its size to `out`.
Value resizeAxis(NodeContext &ctx, const ResizeParams &p, Value x,
                 int64_t axis, int64_t out, double scale) {
  RankedTensorType t = typeOf(x);
  int64_t in = t.getDimSize(axis), rank = t.getRank();
  SmallVector<SmallVector<int64_t>> lists;
  for (int64_t d : t.getShape())
    lists.push_back(iota(d));
  SmallVector<int64_t> outShape(t.getShape());
  outShape[axis] = out;
  ConstMath m;
  double inF = static_cast<double>(in);
  if (p.mode == "nearest") {
    SmallVector<int64_t> l;
    for (int64_t o = 0; o < out; ++o)
      l.push_back(static_cast<int64_t>(nearestIndex(
          m, p, sourceCoord(m, p, static_cast<double>(o), inF, scale, 0.0, 1.0),
          inF)));
    if (l == iota(in))
      return x;
    lists[axis] = l;
    return selectIndices(ctx, x, lists);
  }
  int64_t taps = p.mode == "linear" ? 2 : 4;
  SmallVector<SmallVector<int64_t>> tapIdx(taps);
  SmallVector<SmallVector<double>> tapW(taps);
  bool identity = out == in;
  SmallVector<double> idx, w;
  for (int64_t o = 0; o < out; ++o) {
    double src = sourceCoord(m, p, static_cast<double>(o), inF, scale, 0.0, 1.0);
    identity &= src == static_cast<double>(o);
    interpolationTaps(m, p, src, inF, idx, w);
    for (int64_t k = 0; k < taps; ++k) {
      tapIdx[k].push_back(static_cast<int64_t>(idx[k]));
      tapW[k].push_back(w[k]);
    }
  }
  if (identity)
    return x;
  SmallVector<int64_t> wShape(rank, 1);
  wShape[axis] = out;
  auto wType = RankedTensorType::get(wShape, t.getElementType());
  Value sum;
  for (int64_t k = 0; k < taps; ++k) {
    if (llvm::all_of(tapW[k], [](double v) { return v == 0; }))
      continue;
    lists[axis] = tapIdx[k];
    Value tap = selectIndices(ctx, x, lists);
    Value term = ctx.tosa().mul(
        tap, ctx.materializeConstant(doublesAttr(wType, tapW[k])));
    sum = sum ? ctx.tosa().add(sum, term) : term;
  }
  return sum;
}

/// `x` resized along `axis` to `out` elements (an index known at run time)
/// with `scale` (an f64): each output element computes its taps with the
/// formulas above and reads them. `roiLo`/`roiHi` (f64) are the crop region
/// of tf_crop_and_resize, whose outputs with a source outside the axis
/// take the extrapolation value.
Value resizeAxisAtRunTime(NodeContext &ctx, const ResizeParams &p, Value x,
                          int64_t axis, Value out, Value scale, Value roiLo,
                          Value roiHi) {
  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  RankedTensorType t = typeOf(x);
  int64_t in = t.getDimSize(axis), rank = t.getRank();
  SmallVector<int64_t> shape(t.getShape());
  shape[axis] = ShapedType::kDynamic;
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < rank; ++d)
    if (ShapedType::isDynamic(shape[d]))
      sizes.push_back(d == axis ? out : tensor::DimOp::create(b, loc, x, d).getResult());
  Type elem = t.getElementType();
  return tensor::GenerateOp::create(
      b, loc, withShape(t, shape), sizes,
      [&](OpBuilder &nb, Location l, ValueRange iv) {
        IRMath m{nb, l};
        Value o = indexToF64(nb, l, iv[axis]);
        Value inF = m.c(static_cast<double>(in));
        Value src = sourceCoord(m, p, o, inF, scale, roiLo, roiHi);
        auto read = [&](Value index) -> Value {
          SmallVector<Value> at(iv);
          at[axis] = arith::IndexCastOp::create(
              nb, l, nb.getIndexType(),
              arith::FPToSIOp::create(nb, l, nb.getI64Type(), index));
          return tensor::ExtractOp::create(nb, l, x, at);
        };
        Value v;
        if (p.mode == "nearest") {
          v = read(nearestIndex(m, p, src, inF));
        } else {
          SmallVector<Value> idx, w;
          interpolationTaps(m, p, src, inF, idx, w);
          for (auto [i, weight] : llvm::zip(idx, w)) {
            Value term = arith::MulFOp::create(
                nb, l, read(i), arith::TruncFOp::create(nb, l, elem, weight));
            v = v ? arith::AddFOp::create(nb, l, v, term).getResult() : term;
          }
        }
        if (p.coordMode == "tf_crop_and_resize") {
          Value outside = m.either(m.lt(src, m.c(0)), m.gt(src, m.sub(inF, m.c(1))));
          Value e = arith::ConstantOp::create(nb, l, elem,
                                              nb.getFloatAttr(elem, p.extrapolation));
          v = arith::SelectOp::create(nb, l, outside, e, v);
        }
        tensor::YieldOp::create(nb, l, v);
      });
}

/// Resize with scales or sizes read at run time: the output sizes and the
/// scales computed from them, then one pass per axis.
LogicalResult resizeAtRunTime(NodeContext &ctx, const ResizeParams &p,
                              unsigned scalesIdx, bool fromSizes) {
  RankedTensorType t = ctx.inputType(0);
  ArrayRef<int64_t> in = t.getShape();
  int64_t rank = in.size();
  unsigned operand = fromSizes ? 3 : scalesIdx;
  RankedTensorType ot = ctx.inputType(operand);
  if (!ot || ot.getRank() != 1 || ot.getDimSize(0) != rank)
    return ctx.emitError() << "input " << operand << " ('"
                           << (fromSizes ? "sizes" : "scales")
                           << "') must hold one entry per dimension (" << rank
                           << ")";
  if (llvm::is_contained(in, 0))
    return ctx.unsupported("Resize from an empty dim");
  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  IRMath m{b, loc};
  SmallVector<Value> outs, scales;
  Value ok = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1);
  for (int64_t d = 0; d < rank; ++d) {
    Value at = arith::ConstantIndexOp::create(b, loc, d);
    Value e = tensor::ExtractOp::create(b, loc, ctx.input(operand), ValueRange{at});
    Value inF = m.c(static_cast<double>(in[d])), outF, scale;
    if (fromSizes) {
      outF = arith::SIToFPOp::create(b, loc, b.getF64Type(), e);
      scale = m.div(outF, inF);
    } else {
      scale = isa<FloatType>(e.getType()) && !e.getType().isF64()
                  ? arith::ExtFOp::create(b, loc, b.getF64Type(), e).getResult()
                  : e;
      outF = m.floor(m.mul(inF, scale));
    }
    // At least one element and at most 2^31 (NaN fails too).
    ok = arith::AndIOp::create(
        b, loc, ok,
        arith::AndIOp::create(
            b, loc,
            arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, outF, m.c(1)),
            arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLE, outF,
                                  m.c(static_cast<double>(kMaxElements)))));
    outF = m.select(ok, outF, m.c(1));
    scales.push_back(m.select(ok, scale, m.c(1)));
    outs.push_back(arith::IndexCastOp::create(
        b, loc, b.getIndexType(),
        arith::FPToSIOp::create(b, loc, b.getI64Type(), outF)));
  }
  outs = checkedRunTimeSizes(ctx, ok, outs);
  // The crop region (tf_crop_and_resize): roi = [starts..., ends...].
  SmallVector<Value> roiLo(rank, m.c(0)), roiHi(rank, m.c(1));
  if (p.coordMode == "tf_crop_and_resize") {
    RankedTensorType rt = ctx.inputType(1);
    if (!ctx.hasInput(1) || !rt || rt.getRank() != 1 ||
        rt.getDimSize(0) != 2 * rank || !isa<FloatType>(rt.getElementType()))
      return ctx.emitError() << "tf_crop_and_resize needs input 1 ('roi') of "
                             << 2 * rank << " floats (starts, then ends)";
    auto read = [&](int64_t i) -> Value {
      Value e = tensor::ExtractOp::create(
          b, loc, ctx.input(1), ValueRange{arith::ConstantIndexOp::create(b, loc, i)});
      return e.getType().isF64() ? e : arith::ExtFOp::create(b, loc, b.getF64Type(), e);
    };
    for (int64_t d = 0; d < rank; ++d) {
      roiLo[d] = read(d);
      roiHi[d] = read(rank + d);
    }
  }
  // The last axis first: the ONNX reference interpolates the first axis
  // last (it matters where extrapolated values meet interpolation).
  Value x = ctx.input(0);
  for (int64_t d = rank - 1; d >= 0; --d)
    x = resizeAxisAtRunTime(ctx, p, x, d, outs[d], scales[d], roiLo[d], roiHi[d]);
  // Sizes or scales that are constants give static sizes.
  if (DenseElementsAttr c = ctx.constantInput(operand)) {
    SmallVector<int64_t> shape;
    SmallVector<double> v = toDoubles(c);
    for (int64_t d = 0; d < rank; ++d)
      shape.push_back(fromSizes ? static_cast<int64_t>(v[d])
                                : static_cast<int64_t>(std::floor(in[d] * v[d])));
    if (llvm::all_of(shape, [](int64_t s) { return s >= 1; }))
      x = tensor::CastOp::create(b, loc, withShape(t, shape), x);
  }
  ctx.setOutput(0, x);
  return success();
}

LogicalResult convertResize(NodeContext &ctx) {
  RankedTensorType t = ctx.inputType(0);
  ArrayRef<int64_t> in = t.getShape();
  int64_t rank = in.size();
  bool upsample = ctx.opType() == "Upsample";
  bool legacy = upsample || ctx.opset() < 11; // Upsample, Resize-10
  ResizeParams p;
  FailureOr<std::string> mode = ctx.stringAttr("mode", "nearest");
  if (failed(mode))
    return failure();
  p.mode = *mode == "bilinear" ? "linear" : *mode; // Upsample-7 spelling
  if (p.mode != "nearest" && p.mode != "linear" && p.mode != "cubic")
    return ctx.attrError("mode", "= '" + *mode + "' is not supported");
  if (legacy) {
    // Upsample and Resize-10: asymmetric coordinates, nearest = floor.
    p.coordMode = "asymmetric";
    p.nearestMode = "floor";
  } else {
    FailureOr<std::string> cm =
        ctx.stringAttr("coordinate_transformation_mode", "half_pixel");
    FailureOr<std::string> nm =
        ctx.stringAttr("nearest_mode", "round_prefer_floor");
    FailureOr<float> a = ctx.floatAttr("cubic_coeff_a", -0.75f);
    FailureOr<int64_t> ex = ctx.intAttr("exclude_outside", 0);
    FailureOr<float> extrapolation = ctx.floatAttr("extrapolation_value", 0.0f);
    if (failed(cm) || failed(nm) || failed(a) || failed(ex) ||
        failed(extrapolation))
      return failure();
    if (*cm != "half_pixel" && *cm != "pytorch_half_pixel" &&
        *cm != "align_corners" && *cm != "asymmetric" &&
        *cm != "tf_half_pixel_for_nn" && *cm != "tf_crop_and_resize")
      return ctx.attrError("coordinate_transformation_mode",
                           "= '" + *cm + "' is not supported");
    if (*nm != "round_prefer_floor" && *nm != "round_prefer_ceil" &&
        *nm != "floor" && *nm != "ceil")
      return ctx.attrError("nearest_mode", "= '" + *nm + "' is not supported");
    p.coordMode = *cm;
    p.nearestMode = *nm;
    p.cubicA = *a;
    p.excludeOutside = *ex != 0;
    p.extrapolation = *extrapolation;
  }
  if (p.mode == "cubic" && legacy)
    return ctx.attrError("mode", "= 'cubic' needs Resize-11 or later");
  if (p.mode != "nearest" && !isa<FloatType>(t.getElementType()))
    return ctx.attrError("mode", "= '" + p.mode +
                                     "' needs a floating-point input");
  // Scales: attribute (Upsample-7), input 1 (Upsample-9, Resize-10) or
  // input 2 (Resize-11+); sizes: input 3 (Resize-11+).
  SmallVector<double> scales;
  SmallVector<int64_t> sizes;
  if (upsample && ctx.opset() < 9) {
    FailureOr<SmallVector<float>> s = ctx.floatsAttr("scales");
    if (failed(s))
      return failure();
    scales.assign(s->begin(), s->end());
  } else {
    unsigned scalesIdx = legacy ? 1 : 2;
    bool sizesGiven = !legacy && ctx.hasInput(3);
    // tf_crop_and_resize computes each output's source (and whether it is
    // inside) from the region, which may itself arrive at run time.
    if (p.coordMode == "tf_crop_and_resize" ||
        (sizesGiven ? isRunTimeOperand(ctx, 3)
                    : isRunTimeOperand(ctx, scalesIdx)))
      return resizeAtRunTime(ctx, p, scalesIdx, sizesGiven);
    DenseElementsAttr sc = ctx.constantInput(scalesIdx);
    if (ctx.hasInput(scalesIdx) && !sc)
      return ctx.notConstant(scalesIdx, "scales");
    if (sc)
      scales = toDoubles(sc);
    if (!legacy && ctx.hasInput(3)) {
      FailureOr<SmallVector<int64_t>> sz = ctx.constantInts(3, "sizes");
      if (failed(sz))
        return failure();
      sizes = *sz;
    }
  }
  SmallVector<int64_t> outShape;
  if (!sizes.empty()) {
    if (static_cast<int64_t>(sizes.size()) != rank) {
      ctx.emitError() << "sizes has " << sizes.size() << " entries for rank "
                      << rank;
      return failure();
    }
    outShape = sizes;
    scales.clear();
    for (int64_t d = 0; d < rank; ++d)
      scales.push_back(static_cast<double>(sizes[d]) /
                       static_cast<double>(in[d]));
  } else {
    if (static_cast<int64_t>(scales.size()) != rank) {
      ctx.emitError() << "needs " << rank << " scales (or sizes), got "
                      << scales.size();
      return failure();
    }
    for (int64_t d = 0; d < rank; ++d)
      outShape.push_back(static_cast<int64_t>(
          std::floor(static_cast<double>(in[d]) * scales[d])));
  }
  Value x = ctx.input(0);
  for (int64_t d = 0; d < rank; ++d) {
    if (outShape[d] < 1 || in[d] < 1)
      return ctx.unsupported("Resize to or from an empty dim");
    x = resizeAxis(ctx, p, x, d, outShape[d], scales[d]);
  }
  ctx.setOutput(0, x);
  return success();
}

//===----------------------------------------------------------------------===//
// Trilu, EyeLike
//===----------------------------------------------------------------------===//

/// An empty constant of `shape` (TOSA ops reject zero-size operands; a
/// result with no elements needs no computation).
void setEmptyOutput(NodeContext &ctx, ArrayRef<int64_t> shape, Type elem) {
  ctx.setConstantOutput(0, DenseElementsAttr::get(RankedTensorType::get(shape, elem),
                                                  ArrayRef<Attribute>()));
}

/// The i64 constant j - i over the last two dims [M, N] of a rank-`rank`
/// shape of 1s: the diagonal offset of each element.
Value diagonalOffsets(NodeContext &ctx, int64_t m, int64_t n, int64_t rank) {
  // j - i as the broadcast difference of a column and a row iota: O(m + n)
  // constant data, not O(m * n).
  Type i64 = ctx.builder().getI64Type();
  SmallVector<int64_t> colShape(rank, 1), rowShape(rank, 1), shape(rank, 1);
  colShape[rank - 1] = n;
  rowShape[rank - 2] = m;
  shape[rank - 2] = m;
  shape[rank - 1] = n;
  SmallVector<int64_t> cols, rows;
  for (int64_t j = 0; j < n; ++j)
    cols.push_back(j);
  for (int64_t i = 0; i < m; ++i)
    rows.push_back(i);
  Value c = ctx.materializeConstant(
      intsAttr(RankedTensorType::get(colShape, i64), cols));
  Value r = ctx.materializeConstant(
      intsAttr(RankedTensorType::get(rowShape, i64), rows));
  return tosa::SubOp::create(ctx.builder(), ctx.loc(),
                             RankedTensorType::get(shape, i64), c, r);
}

LogicalResult convertTrilu(NodeContext &ctx) {
  FailureOr<int64_t> upper = ctx.intAttr("upper", 1);
  if (failed(upper))
    return failure();
  RankedTensorType t = ctx.inputType(0);
  int64_t rank = t.getRank();
  if (rank < 2) {
    ctx.emitError() << "input must have rank >= 2, got " << rank;
    return failure();
  }
  if (ctx.hasInput(1) && (ctx.inputType(1).getRank() > 1 ||
                          numElements(ctx.inputType(1).getShape()) != 1 ||
                          !ctx.inputType(1).getElementType().isInteger(64))) {
    ctx.emitError() << "input 1 ('k') must be an int64 scalar";
    return failure();
  }
  if (numElements(t.getShape()) == 0) {
    setEmptyOutput(ctx, t.getShape(), t.getElementType());
    return success();
  }
  // Keep x[..., i, j] where j - i >= k (upper) or j - i <= k (lower); k may
  // be a runtime scalar.
  OpBuilder &b = ctx.builder();
  SmallVector<int64_t> ones(rank, 1);
  auto kTy = RankedTensorType::get(ones, b.getI64Type());
  Value k = ctx.hasInput(1) ? ctx.tosa().reshape(ctx.input(1), ones)
                            : splatConstant(ctx, kTy, 0.0);
  Value offsets = diagonalOffsets(ctx, t.getDimSize(rank - 2),
                                  t.getDimSize(rank - 1), rank);
  auto maskTy = withElementType(cast<RankedTensorType>(offsets.getType()),
                                b.getI1Type());
  Value keep = *upper ? tosa::GreaterEqualOp::create(b, ctx.loc(), maskTy,
                                                     offsets, k)
                      : tosa::GreaterEqualOp::create(b, ctx.loc(), maskTy, k,
                                                     offsets);
  Value zero = splatConstant(ctx, RankedTensorType::get(ones, t.getElementType()),
                             0.0);
  ctx.setOutput(0, tosa::SelectOp::create(b, ctx.loc(), t, keep, ctx.input(0),
                                          zero));
  return success();
}

LogicalResult convertEyeLike(NodeContext &ctx) {
  RankedTensorType t = ctx.inputType(0);
  FailureOr<int64_t> k = ctx.intAttr("k", 0);
  if (failed(k))
    return failure();
  Type elem = t.getElementType();
  if (ctx.hasAttr("dtype")) {
    FailureOr<int64_t> dtype = ctx.intAttr("dtype");
    if (failed(dtype))
      return failure();
    elem = convertElementType(static_cast<int32_t>(*dtype), ctx.context());
    if (!elem)
      return ctx.attrError("dtype", "= " + std::to_string(*dtype) +
                                        " names a data type Tessel does not "
                                        "support");
  }
  if (t.getRank() != 2) {
    ctx.emitError() << "input must be 2-D, got rank " << t.getRank();
    return failure();
  }
  // Only the input's shape matters: the result is a constant.
  int64_t m = t.getDimSize(0), n = t.getDimSize(1);
  SmallVector<int64_t> values;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      values.push_back(j - i == *k ? 1 : 0);
  ctx.setConstantOutput(0, intsAttr(RankedTensorType::get({m, n}, elem), values));
  return success();
}

//===----------------------------------------------------------------------===//
// GatherND, ScatterND, Compress
//===----------------------------------------------------------------------===//

/// Flat positions, as the i32 [B, W] index operand of tosa.gather /
/// tosa.scatter, of the slices that ND `indices` (input `i`, shape
/// [B..., W..., m]) address in data dims `dims` (the m indexed dims, after
/// `batchDims` batch dims of total size B): sum_k idx[..., k] * stride_k,
/// with negative indices wrapped.
FailureOr<Value> flatNDIndices(NodeContext &ctx, unsigned i,
                               ArrayRef<int64_t> dims, int64_t batch,
                               int64_t w) {
  int64_t m = dims.size();
  SmallVector<int64_t> strides = stridesOf(dims);
  auto flatTy = RankedTensorType::get({batch, w}, ctx.builder().getI32Type());
  if (DenseElementsAttr ci = ctx.constantInput(i)) {
    SmallVector<int64_t> idx = toInts(ci), flat;
    for (int64_t p = 0; p < batch * w; ++p) {
      int64_t off = 0;
      for (int64_t k = 0; k < m; ++k) {
        int64_t v = idx[p * m + k];
        if (v < -dims[k] || v >= dims[k]) {
          ctx.emitError() << "index " << v << " is out of range for dim "
                          << dims[k];
          return failure();
        }
        off += (v < 0 ? v + dims[k] : v) * strides[k];
      }
      flat.push_back(off);
    }
    return ctx.materializeConstant(intsAttr(flatTy, flat));
  }
  Value idx = ctx.tosa().reshape(ctx.input(i), {batch, w, m});
  Value flat = splatConstant(ctx, RankedTensorType::get({batch, w, 1}, flatTy.getElementType()), 0.0);
  auto one = RankedTensorType::get({1, 1, 1}, flatTy.getElementType());
  for (int64_t k = 0; k < m; ++k) {
    Value part = wrapIndices(
        ctx, ctx.tosa().slice(idx, {0, 0, k}, {batch, w, 1}), dims[k]);
    flat = ctx.tosa().add(
        flat, ctx.tosa().mul(part, splatConstant(ctx, one, strides[k])));
  }
  return ctx.tosa().reshape(flat, {batch, w});
}

/// Checks that ND indices (input `i`) have an index tuple dim no longer
/// than the data dims after the batch dims.
LogicalResult checkNDIndices(NodeContext &ctx, unsigned i, int64_t dataRank,
                             int64_t batchDims) {
  RankedTensorType t = ctx.inputType(i);
  if (t.getRank() < 1 || t.getRank() <= batchDims ||
      t.getDimSize(t.getRank() - 1) > dataRank - batchDims ||
      !isa<IntegerType>(t.getElementType())) {
    ctx.emitError() << "indices of shape [" << t.getShape()
                    << "] do not index data of rank " << dataRank << " after "
                    << batchDims << " batch dims";
    return failure();
  }
  return success();
}

LogicalResult convertGatherND(NodeContext &ctx) {
  RankedTensorType dataTy = ctx.inputType(0);
  ArrayRef<int64_t> data = dataTy.getShape();
  ArrayRef<int64_t> indices = ctx.inputType(1).getShape();
  FailureOr<int64_t> batchDims = ctx.intAttr("batch_dims", 0);
  if (failed(batchDims))
    return failure();
  int64_t b = *batchDims, q = indices.size();
  if (b < 0 || b >= std::min<int64_t>(q, data.size()) ||
      data.take_front(b) != indices.take_front(b))
    return ctx.attrError("batch_dims", "= " + std::to_string(b) +
                                           " does not name leading dims "
                                           "shared by data and indices");
  if (failed(checkNDIndices(ctx, 1, data.size(), b)))
    return failure();
  int64_t m = indices.back();
  // Output: indices.shape[:-1] + data.shape[b + m:].
  SmallVector<int64_t> outShape(indices.drop_back());
  llvm::append_range(outShape, data.drop_front(b + m));
  if (numElements(outShape) == 0 || numElements(data) == 0)
    return ctx.unsupported("GatherND with an empty input or result");
  int64_t batch = numElements(data.take_front(b));
  int64_t w = numElements(indices.slice(b, q - 1 - b));
  ArrayRef<int64_t> indexed = data.slice(b, m);
  int64_t slice = numElements(data.drop_front(b + m));
  FailureOr<Value> idx = flatNDIndices(ctx, 1, indexed, batch, w);
  if (failed(idx))
    return failure();
  Value values =
      ctx.tosa().reshape(ctx.input(0), {batch, numElements(indexed), slice});
  Value g = tosa::GatherOp::create(
      ctx.builder(), ctx.loc(),
      RankedTensorType::get({batch, w, slice}, dataTy.getElementType()), values,
      *idx);
  ctx.setOutput(0, ctx.tosa().reshape(g, outShape));
  return success();
}

LogicalResult convertScatterND(NodeContext &ctx) {
  RankedTensorType dataTy = ctx.inputType(0);
  ArrayRef<int64_t> data = dataTy.getShape();
  ArrayRef<int64_t> indices = ctx.inputType(1).getShape();
  FailureOr<std::string> reduction =
      scatterReduction(ctx, dataTy.getElementType());
  if (failed(reduction))
    return failure();
  if (failed(checkNDIndices(ctx, 1, data.size(), 0)))
    return failure();
  int64_t m = indices.back();
  // updates: indices.shape[:-1] + data.shape[m:].
  SmallVector<int64_t> updShape(indices.drop_back());
  llvm::append_range(updShape, data.drop_front(m));
  if (ctx.inputType(2).getShape() != ArrayRef<int64_t>(updShape)) {
    ctx.emitError() << "updates must have shape [" << updShape << "]";
    return failure();
  }
  if (numElements(data) == 0)
    return ctx.unsupported("ScatterND on an empty input");
  if (numElements(updShape) == 0) {
    ctx.setOutput(0, ctx.input(0));
    return success();
  }
  int64_t w = numElements(indices.drop_back());
  int64_t slice = numElements(data.drop_front(m));
  FailureOr<Value> idx = flatNDIndices(ctx, 1, data.take_front(m), 1, w);
  if (failed(idx))
    return failure();
  Value values =
      ctx.tosa().reshape(ctx.input(0), {1, numElements(data.take_front(m)), slice});
  Value updates = ctx.tosa().reshape(ctx.input(2), {1, w, slice});
  Value s = scatterRows(ctx, values, *idx, updates, *reduction);
  ctx.setOutput(0, ctx.tosa().reshape(s, data));
  return success();
}

LogicalResult convertCompress(NodeContext &ctx) {
  RankedTensorType t = ctx.inputType(0);
  std::optional<int64_t> axis;
  if (ctx.hasAttr("axis")) {
    FailureOr<int64_t> a = ctx.intAttr("axis");
    if (failed(a))
      return failure();
    FailureOr<int64_t> n = normalizeAxis(ctx, *a, t.getRank());
    if (failed(n))
      return failure();
    axis = *n;
  }
  // The result's size depends on the condition's values.
  DenseElementsAttr cond = ctx.constantInput(1);
  if (!cond)
    return compressAtRunTime(ctx, axis);
  // Without an axis the input is flattened first.
  SmallVector<int64_t> in(t.getShape());
  if (!axis)
    in = {numElements(t.getShape())};
  int64_t ax = axis.value_or(0);
  SmallVector<int64_t> selected;
  for (auto [i, c] : llvm::enumerate(toInts(cond))) {
    if (!c)
      continue;
    if (static_cast<int64_t>(i) >= in[ax]) {
      ctx.emitError() << "condition selects index " << i
                      << ", past the end of dim " << in[ax];
      return failure();
    }
    selected.push_back(i);
  }
  SmallVector<SmallVector<int64_t>> lists;
  for (int64_t d : in)
    lists.push_back(iota(d));
  lists[ax] = selected;
  SmallVector<int64_t> outShape(in);
  outShape[ax] = selected.size();
  if (numElements(outShape) == 0) {
    setEmptyOutput(ctx, outShape, t.getElementType());
    return success();
  }
  Value x = ctx.input(0);
  DenseElementsAttr c = ctx.constantInput(0);
  if (!axis) {
    x = ctx.tosa().reshape(x, in);
    if (c)
      c = reshapeConstant(c, RankedTensorType::get(in, t.getElementType()));
  }
  setSelected(ctx, 0, x, c, lists, outShape);
  return success();
}

/// ReverseSequence: reverses the first sequence_lens[b] steps of each batch
/// entry along time_axis. With the lengths known at compile time this is one
/// gather: data as [batch, time, rest] with per-batch time indices.
LogicalResult convertReverseSequence(NodeContext &ctx) {
  FailureOr<int64_t> batchAxis = ctx.intAttr("batch_axis", 1);
  FailureOr<int64_t> timeAxis = ctx.intAttr("time_axis", 0);
  if (failed(batchAxis) || failed(timeAxis))
    return failure();
  if (!((*batchAxis == 0 && *timeAxis == 1) ||
        (*batchAxis == 1 && *timeAxis == 0)))
    return ctx.attrError("batch_axis", "and 'time_axis' must be 0 and 1 in "
                                       "some order");
  Value x = ctx.input(0);
  RankedTensorType t = typeOf(x);
  if (t.getRank() < 2)
    return ctx.emitError() << "input must have rank >= 2";
  DenseElementsAttr lensC = ctx.constantInput(1);
  RankedTensorType lensType = ctx.inputType(1);
  int64_t batch = t.getDimSize(*batchAxis), time = t.getDimSize(*timeAxis);
  if (!lensType || lensType.getRank() != 1 ||
      !isa<IntegerType>(lensType.getElementType()))
    return ctx.emitError() << "sequence_lens must be a 1-D integer tensor";
  if (lensType.getDimSize(0) != batch)
    return ctx.emitError() << "sequence_lens has " << lensType.getDimSize(0)
                           << " entries for a batch of " << batch;
  SmallVector<int32_t> perm = {1, 0};
  for (int64_t d = 2; d < t.getRank(); ++d)
    perm.push_back(d);
  if (*batchAxis == 1)
    x = ctx.tosa().transpose(x, perm);
  ArrayRef<int64_t> rest = t.getShape().drop_front(2);
  int64_t inner = numElements(rest);
  Value values = ctx.tosa().reshape(x, {batch, time, inner});
  auto idxTy = RankedTensorType::get({batch, time}, ctx.builder().getI32Type());
  Value indices;
  if (lensC) {
    SmallVector<int64_t> lens = toInts(lensC), idx;
    for (int64_t b = 0; b < batch; ++b) {
      if (lens[b] < 0 || lens[b] > time)
        return ctx.emitError() << "sequence_lens[" << b << "] = " << lens[b]
                               << " is outside [0, " << time << "]";
      for (int64_t s = 0; s < time; ++s)
        idx.push_back(s < lens[b] ? lens[b] - 1 - s : s);
    }
    indices = ctx.materializeConstant(intsAttr(idxTy, idx));
  } else {
    // Lengths read at run time: one outside [0, time] fails the call.
    OpBuilder &b = ctx.builder();
    Location loc = ctx.loc();
    Value lens = tessel::CheckIndicesOp::create(b, loc, lensType, ctx.input(1),
                                                0, time + 1);
    indices = tensor::GenerateOp::create(
        b, loc, idxTy, ValueRange{},
        [&](OpBuilder &nb, Location l, ValueRange iv) {
          Value len = arith::IndexCastOp::create(
              nb, l, nb.getIndexType(),
              tensor::ExtractOp::create(nb, l, lens, ValueRange{iv[0]}));
          Value reversed = arith::SubIOp::create(
              nb, l,
              arith::SubIOp::create(nb, l, len,
                                    arith::ConstantIndexOp::create(nb, l, 1)),
              iv[1]);
          Value src = arith::SelectOp::create(
              nb, l,
              arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, iv[1], len),
              reversed, iv[1]);
          tensor::YieldOp::create(
              nb, l,
              arith::IndexCastOp::create(nb, l, nb.getI32Type(), src).getResult());
        });
  }
  Value g = tosa::GatherOp::create(
      ctx.builder(), ctx.loc(),
      RankedTensorType::get({batch, time, inner}, elemOf(x)), values, indices);
  SmallVector<int64_t> shape = {batch, time};
  llvm::append_range(shape, rest);
  Value y = ctx.tosa().reshape(g, shape);
  if (*batchAxis == 1)
    y = ctx.tosa().transpose(y, perm);
  ctx.setOutput(0, y);
  return success();
}

} // namespace

void mlir::tessel::onnx_import::registerShapeConverters(ConverterMap &m) {
  m["ReverseSequence"] = convertReverseSequence;
  m["Reshape"] = convertReshape;
  m["Flatten"] = convertFlatten;
  m["Squeeze"] = convertSqueeze;
  m["Unsqueeze"] = convertUnsqueeze;
  m["Transpose"] = convertTranspose;
  m["Concat"] = convertConcat;
  m["Split"] = convertSplit;
  m["Slice"] = convertSlice;
  m["Gather"] = convertGather;
  m["GatherElements"] = convertGatherElements;
  m["ScatterElements"] = convertScatterElements;
  m["Scatter"] = convertScatterElements; // opset 9-10 name, same semantics
  m["Expand"] = convertExpand;
  m["Tile"] = convertTile;
  m["Pad"] = convertPad;
  m["Shape"] = convertShape;
  m["Size"] = convertSize;
  m["ConstantOfShape"] = convertConstantOfShape;
  m["Range"] = convertRange;
  m["OneHot"] = convertOneHot;
  m["DepthToSpace"] = convertDepthToSpace;
  m["SpaceToDepth"] = convertSpaceToDepth;
  m["Resize"] = convertResize;
  m["Trilu"] = convertTrilu;
  m["EyeLike"] = convertEyeLike;
  m["GatherND"] = convertGatherND;
  m["ScatterND"] = convertScatterND;
  m["Compress"] = convertCompress;
  m["NonZero"] = convertNonZero;
  m["Unique"] = convertUnique;
  m["MaxUnpool"] = convertMaxUnpool;
  m["NonMaxSuppression"] = convertNonMaxSuppression;
  m["Upsample"] = convertResize;
}
