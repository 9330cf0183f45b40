//===- PackedSequence.cpp - ONNX sequences of run-time length ------------===//
//
// See PackedSequence.h. Offsets into `data` are sums of the rows' element
// counts (scf.for), so reading element i costs O(i * rank); sequences are
// short (ONNX uses them for lists of tensors, not for bulk data).
//
//===----------------------------------------------------------------------===//
#include "PackedSequence.h"
#include "Ops/Common.h"
#include "Ops/IndexMath.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::tessel::onnx_import;

namespace {

RankedTensorType dataType(Type elem) {
  return RankedTensorType::get({ShapedType::kDynamic}, elem);
}

/// The element count of row `j` of `sizes` (an index).
Value rowCount(IndexMath &m, Value sizes, Value j) {
  auto loop = scf::ForOp::create(
      m.b, m.loc, m.c(0), m.dim(sizes, 1), m.c(1), ValueRange{m.c(1)},
      [&](OpBuilder &nb, Location loc, Value k, ValueRange acc) {
        IndexMath n(nb, loc);
        Value d = arith::IndexCastOp::create(
            nb, loc, nb.getIndexType(),
            tensor::ExtractOp::create(nb, loc, sizes, ValueRange{j, k}));
        // A -1 pads the front of a lower-rank element's row.
        scf::YieldOp::create(
            nb, loc, n.mul(acc[0], n.select(n.lt(d, n.c(0)), n.c(1), d)));
      });
  return loop.getResult(0);
}

/// Where element `i` starts in `data`: the element counts of rows [0, i).
Value rowOffset(IndexMath &m, Value sizes, Value i) {
  auto loop = scf::ForOp::create(
      m.b, m.loc, m.c(0), i, m.c(1), ValueRange{m.c(0)},
      [&](OpBuilder &nb, Location loc, Value j, ValueRange acc) {
        IndexMath n(nb, loc);
        scf::YieldOp::create(nb, loc, n.add(acc[0], rowCount(n, sizes, j)));
      });
  return loop.getResult(0);
}

/// Zeros of i64 [rows, cols] as tensor<?x?xi64>.
Value zeroSizes(IndexMath &m, Value rows, Value cols) {
  RankedTensorType t = packedSizesType(m.b.getContext());
  Value empty = tensor::EmptyOp::create(m.b, m.loc, t.getShape(),
                                        m.b.getI64Type(), ValueRange{rows, cols});
  Value zero = arith::ConstantIntOp::create(m.b, m.loc, m.b.getI64Type(), 0);
  return linalg::FillOp::create(m.b, m.loc, zero, empty).getResult(0);
}

/// `sizes`' rows as rows of `width` columns (at least theirs; any where
/// there are no rows), each padded in front with -1: the form of a
/// sequence whose elements differ in rank.
Value widenRows(IndexMath &m, Value sizes, Value width) {
  Value pad = m.sub(width, m.dim(sizes, 1));
  RankedTensorType t = packedSizesType(m.b.getContext());
  return tensor::GenerateOp::create(
      m.b, m.loc, t, ValueRange{m.dim(sizes, 0), width},
      [&](OpBuilder &nb, Location l, ValueRange ij) {
        IndexMath n(nb, l);
        Value inRow = n.le(pad, ij[1]);
        // Read only inside the row (column k - pad).
        auto read = scf::IfOp::create(
            nb, l, inRow,
            [&](OpBuilder &tb, Location tl) {
              IndexMath q(tb, tl);
              scf::YieldOp::create(
                  tb, tl,
                  tensor::ExtractOp::create(
                      tb, tl, sizes, ValueRange{ij[0], q.sub(ij[1], pad)})
                      .getResult());
            },
            [&](OpBuilder &eb, Location el) {
              scf::YieldOp::create(
                  eb, el,
                  arith::ConstantIntOp::create(eb, el, eb.getI64Type(), -1)
                      .getResult());
            });
        tensor::YieldOp::create(nb, l, read.getResult(0));
      });
}

/// `t` as a 1-D tensor of its elements, row-major (tensor<?xT>).
Value flatten(IndexMath &m, Value t) {
  RankedTensorType type = typeOf(t);
  Type elem = type.getElementType();
  Value flat;
  if (type.getRank() == 0) {
    flat = tensor::ExpandShapeOp::create(
        m.b, m.loc, RankedTensorType::get({1}, elem), t,
        ArrayRef<ReassociationIndices>{});
  } else {
    Value shape = tensor::FromElementsOp::create(
        m.b, m.loc, RankedTensorType::get({1}, m.b.getIndexType()),
        ValueRange{m.numElements(t)});
    flat = tensor::ReshapeOp::create(m.b, m.loc, dataType(elem), t, shape);
  }
  return typeOf(flat) == dataType(elem)
             ? flat
             : tensor::CastOp::create(m.b, m.loc, dataType(elem), flat).getResult();
}

/// `t`'s shape as one row of sizes, tensor<1xRxi64>.
Value shapeRow(IndexMath &m, Value t) {
  int64_t rank = typeOf(t).getRank();
  if (rank == 0)
    return tensor::EmptyOp::create(m.b, m.loc, ArrayRef<int64_t>{1, 0},
                                   m.b.getI64Type());
  SmallVector<Value> dims;
  for (int64_t d = 0; d < rank; ++d)
    dims.push_back(m.toI64(m.dim(t, d)));
  return tensor::FromElementsOp::create(
      m.b, m.loc, RankedTensorType::get({1, rank}, m.b.getI64Type()), dims);
}

/// Dim `d` of `t`: an attribute where static.
OpFoldResult size(IndexMath &m, Value t, int64_t d) {
  int64_t s = typeOf(t).getDimSize(d);
  return ShapedType::isDynamic(s) ? OpFoldResult(m.dim(t, d))
                                  : OpFoldResult(m.b.getIndexAttr(s));
}

/// `parts` (tensors of one element type, all 1-D, or all 2-D with `cols`
/// columns) one after another along dimension 0.
Value concatRows(IndexMath &m, ArrayRef<Value> parts, Value cols,
                 RankedTensorType type) {
  Value total = m.c(0);
  for (Value p : parts)
    total = m.add(total, m.dim(p, 0));
  SmallVector<Value> dynSizes = {total};
  if (type.getRank() == 2)
    dynSizes.push_back(cols);
  Value result = tensor::EmptyOp::create(m.b, m.loc, type.getShape(),
                                         type.getElementType(), dynSizes);
  Value at = m.c(0);
  for (Value p : parts) {
    // Static sizes as attributes, so the slice's type is p's.
    SmallVector<OpFoldResult> offsets = {at}, sizes = {size(m, p, 0)},
                              strides = {m.b.getIndexAttr(1)};
    if (type.getRank() == 2) {
      offsets.push_back(m.b.getIndexAttr(0));
      sizes.push_back(size(m, p, 1));
      strides.push_back(m.b.getIndexAttr(1));
    }
    result = tensor::InsertSliceOp::create(m.b, m.loc, p, result, offsets,
                                           sizes, strides);
    at = m.add(at, m.dim(p, 0));
  }
  return result;
}

/// Rows (or elements) [from, to) of `t` along dimension 0.
Value rows(IndexMath &m, Value t, Value from, Value to) {
  RankedTensorType type = typeOf(t);
  SmallVector<OpFoldResult> offsets = {from}, sizes = {m.sub(to, from)},
                            strides = {m.b.getIndexAttr(1)};
  if (type.getRank() == 2) {
    offsets.push_back(m.b.getIndexAttr(0));
    sizes.push_back(m.dim(t, 1));
    strides.push_back(m.b.getIndexAttr(1));
  }
  SmallVector<int64_t> shape(type.getRank(), ShapedType::kDynamic);
  return tensor::ExtractSliceOp::create(
      m.b, m.loc, RankedTensorType::get(shape, type.getElementType()), t,
      offsets, sizes, strides);
}

std::shared_ptr<SequenceValue> makePacked(Type elem, int64_t rank, Value sizes,
                                          Value data) {
  auto s = std::make_shared<SequenceValue>();
  s->elementType = elem;
  s->rank = rank;
  s->sizes = sizes;
  s->data = data;
  return s;
}

} // namespace

RankedTensorType
mlir::tessel::onnx_import::packedSizesType(MLIRContext *context) {
  return RankedTensorType::get({ShapedType::kDynamic, ShapedType::kDynamic},
                               IntegerType::get(context, 64));
}

Value mlir::tessel::onnx_import::packedLength(OpBuilder &b, Location loc,
                                              const SequenceValue &s) {
  return IndexMath(b, loc).dim(s.sizes, 0);
}

FailureOr<std::shared_ptr<const SequenceValue>>
mlir::tessel::onnx_import::packSequence(
    OpBuilder &b, Location loc, std::shared_ptr<const SequenceValue> s) {
  if (s->packed())
    return s;
  IndexMath m(b, loc);
  int64_t rank = s->elements.empty() ? (ShapedType::isDynamic(s->rank) ? 0 : s->rank)
                                     : typeOf(s->elements.front()).getRank();
  // Elements of several ranks: rows as wide as the highest, padded in
  // front with -1.
  bool mixed = false;
  for (Value e : s->elements) {
    mixed |= typeOf(e).getRank() != rank;
    rank = std::max(rank, typeOf(e).getRank());
  }
  SmallVector<Value> rowsOf, flat;
  for (Value e : s->elements) {
    Value row = shapeRow(m, e);
    if (typeOf(e).getRank() != rank)
      row = widenRows(
          m,
          tensor::CastOp::create(b, loc, packedSizesType(b.getContext()), row),
          m.c(rank));
    rowsOf.push_back(row);
    flat.push_back(flatten(m, e));
  }
  Value sizes = concatRows(m, rowsOf, m.c(rank), packedSizesType(b.getContext()));
  Value data = concatRows(m, flat, Value(), dataType(s->elementType));
  return std::shared_ptr<const SequenceValue>(makePacked(
      s->elementType, mixed ? ShapedType::kDynamic : rank, sizes, data));
}

std::shared_ptr<const SequenceValue>
mlir::tessel::onnx_import::checkedPackedInput(OpBuilder &b, Location loc,
                                              Type elementType, int64_t rank,
                                              Value sizes, Value data) {
  IndexMath m(b, loc);
  if (typeOf(sizes) != packedSizesType(b.getContext()))
    sizes = tensor::CastOp::create(b, loc, packedSizesType(b.getContext()), sizes);
  // Sum the rows' counts; a negative size makes the whole input bad.
  Value count = m.dim(sizes, 0);
  auto loop = scf::ForOp::create(
      b, loc, m.c(0), count, m.c(1), ValueRange{m.c(0), m.yes()},
      [&](OpBuilder &nb, Location l, Value j, ValueRange acc) {
        IndexMath n(nb, l);
        // a[2]: the row's dimensions have begun (a -1 may only pad the
        // front of a lower-rank element's row).
        auto inner = scf::ForOp::create(
            nb, l, n.c(0), n.dim(sizes, 1), n.c(1),
            ValueRange{n.c(1), acc[1], n.no(n.yes())},
            [&](OpBuilder &ib, Location il, Value k, ValueRange a) {
              IndexMath q(ib, il);
              Value d = arith::IndexCastOp::create(
                  ib, il, ib.getIndexType(),
                  tensor::ExtractOp::create(ib, il, sizes, ValueRange{j, k}));
              Value padding = q.both(q.eq(d, q.c(-1)), q.no(a[2]));
              // Saturated at 2^31 + 1 (more elements than a tensor may
              // have): both factors are at most that, so the product
              // cannot wrap.
              Value top = q.c((int64_t(1) << 31) + 1);
              Value capped = q.min(q.max(d, q.c(0)), top);
              capped = q.select(padding, q.c(1), capped);
              scf::YieldOp::create(
                  ib, il,
                  ValueRange{q.min(q.mul(a[0], capped), top),
                             q.both(a[1], q.either(padding, q.le(q.c(0), d))),
                             q.no(padding)});
            });
        // A row of more than 2^31 elements is bad, whatever the data.
        Value row = inner.getResult(0);
        Value fits = n.le(row, n.c(int64_t(1) << 31));
        scf::YieldOp::create(
            nb, l, ValueRange{n.min(n.add(acc[0], row), n.c(int64_t(1) << 40)),
                              n.both(inner.getResult(1), fits)});
      });
  Value ok = m.both(loop.getResult(1), m.eq(loop.getResult(0), m.dim(data, 0)));
  sizes = required(m, ok, sizes, zeroSizes(m, count, m.dim(sizes, 1)));
  return makePacked(elementType, rank, sizes, data);
}

Value mlir::tessel::onnx_import::unpackElement(OpBuilder &b, Location loc,
                                               const SequenceValue &s, Value i,
                                               Value &ok) {
  IndexMath m(b, loc);
  int64_t rank = s.rank;
  // The row's last `rank` columns hold the shape, the ones before -1
  // (a sequence whose elements differ in rank). Rows of another rank (a
  // sequence whose rank was not declared, or a loop that changed it) are
  // not read.
  Value width = m.dim(s.sizes, 1);
  Value pad = m.sub(width, m.c(rank));
  ok = m.both(ok, m.le(m.c(0), pad));
  {
    Value row = m.select(ok, i, m.c(0));
    auto padded = scf::ForOp::create(
        b, loc, m.c(0), m.max(pad, m.c(0)), m.c(1), ValueRange{ok},
        [&](OpBuilder &nb, Location l, Value k, ValueRange acc) {
          IndexMath n(nb, l);
          Value d = arith::IndexCastOp::create(
              nb, l, nb.getIndexType(),
              tensor::ExtractOp::create(nb, l, s.sizes, ValueRange{row, k}));
          scf::YieldOp::create(nb, l, n.both(acc[0], n.eq(d, n.c(-1))));
        });
    ok = padded.getResult(0);
  }
  // The shape, read only where `ok`.
  SmallVector<Type> indexTypes(rank, b.getIndexType());
  auto ifOp = scf::IfOp::create(
      b, loc, ok,
      [&](OpBuilder &nb, Location l) {
        IndexMath n(nb, l);
        SmallVector<Value> dims;
        for (int64_t k = 0; k < rank; ++k)
          dims.push_back(arith::IndexCastOp::create(
              nb, l, nb.getIndexType(),
              tensor::ExtractOp::create(nb, l, s.sizes,
                                        ValueRange{i, n.add(pad, n.c(k))})));
        scf::YieldOp::create(nb, l, dims);
      },
      [&](OpBuilder &nb, Location l) {
        IndexMath n(nb, l);
        SmallVector<Value> zeros(rank, n.c(0));
        scf::YieldOp::create(nb, l, zeros);
      });
  SmallVector<Value> dims(ifOp.getResults());
  Value at = m.select(ok, i, m.c(0));
  Value from = rowOffset(m, s.sizes, at);
  Value count = m.c(1);
  for (Value d : dims)
    count = m.mul(count, d);
  if (rank == 0) {
    // One element, read only where `ok` (else a zero stands in; the caller
    // fails the call).
    auto read = scf::IfOp::create(
        b, loc, ok,
        [&](OpBuilder &nb, Location l) {
          scf::YieldOp::create(
              nb, l, tensor::ExtractOp::create(nb, l, s.data, ValueRange{from})
                         .getResult());
        },
        [&](OpBuilder &nb, Location l) {
          scf::YieldOp::create(
              nb, l, arith::ConstantOp::create(
                         nb, l, cast<TypedAttr>(nb.getZeroAttr(s.elementType)))
                         .getResult());
        });
    return tensor::FromElementsOp::create(
        b, loc, RankedTensorType::get({}, s.elementType), read.getResult(0));
  }
  Value flat = rows(m, s.data, from, m.add(from, count));
  // (tensor.reshape: upstream's expand-strided-metadata crashes on an
  // expand_shape of one dynamic size into several.)
  Value shape = tensor::FromElementsOp::create(
      b, loc, RankedTensorType::get({rank}, b.getIndexType()), dims);
  SmallVector<int64_t> dyn(rank, ShapedType::kDynamic);
  return tensor::ReshapeOp::create(
      b, loc, RankedTensorType::get(dyn, s.elementType), flat, shape);
}

/// A sequence's element rank, known or not (a list's, where its elements
/// agree).
static int64_t sequenceRank(const SequenceValue &s) {
  if (s.packed() || s.elements.empty())
    return s.rank;
  int64_t rank = typeOf(s.elements.front()).getRank();
  for (Value e : s.elements)
    if (typeOf(e).getRank() != rank)
      return ShapedType::kDynamic;
  return rank;
}

std::shared_ptr<const SequenceValue>
mlir::tessel::onnx_import::insertPacked(OpBuilder &b, Location loc,
                                        const SequenceValue &s, Value t,
                                        Value i) {
  IndexMath m(b, loc);
  int64_t rank = typeOf(t).getRank();
  Value sizes = s.sizes;
  Value count = m.dim(sizes, 0);
  // Rows as wide as the higher of the sequence's and t's ranks (an empty
  // sequence takes t's), lower-rank rows padded in front with -1. Checked
  // at run time even where s.rank is t's: a sequence carried by a loop may
  // have changed.
  Value width = m.select(m.eq(count, m.c(0)), m.c(rank),
                         m.max(m.dim(sizes, 1), m.c(rank)));
  sizes = widenRows(m, sizes, width);
  Value row =
      widenRows(m,
                tensor::CastOp::create(b, loc, packedSizesType(b.getContext()),
                                       shapeRow(m, t)),
                width);
  Value from = rowOffset(m, sizes, i);
  Value newSizes =
      concatRows(m, {rows(m, sizes, m.c(0), i), row, rows(m, sizes, i, count)},
                 width, packedSizesType(b.getContext()));
  Value newData = concatRows(m,
                             {rows(m, s.data, m.c(0), from), flatten(m, t),
                              rows(m, s.data, from, m.dim(s.data, 0))},
                             Value(), dataType(s.elementType));
  int64_t seqRank = sequenceRank(s);
  bool empty = !s.packed() && s.elements.empty();
  return makePacked(s.elementType,
                    empty || seqRank == rank ? rank : ShapedType::kDynamic,
                    newSizes, newData);
}

Value mlir::tessel::onnx_import::packedPosition(OpBuilder &b, Location loc,
                                                Value position, Value length,
                                                bool endOk, Value &ok) {
  IndexMath m(b, loc);
  Value p = arith::IndexCastOp::create(
      b, loc, b.getIndexType(),
      tensor::ExtractOp::create(b, loc, position, ValueRange{}));
  Value hi = endOk ? length : m.sub(length, m.c(1));
  ok = m.both(m.le(m.sub(m.c(0), length), p), m.le(p, hi));
  Value wrapped = m.select(m.lt(p, m.c(0)), m.add(p, length), p);
  return m.select(ok, wrapped, endOk ? length : m.c(0));
}

FailureOr<SmallVector<Value>>
mlir::tessel::onnx_import::valueParts(OpBuilder &b, Location loc,
                                      const TensorValue &v) {
  SmallVector<Value> parts;
  if (v.optional) {
    parts.push_back(v.optional->present);
    FailureOr<SmallVector<Value>> inner = valueParts(b, loc, v.optional->element);
    if (failed(inner))
      return failure();
    parts.append(*inner);
    return parts;
  }
  if (v.sequence) {
    FailureOr<std::shared_ptr<const SequenceValue>> packed =
        packSequence(b, loc, v.sequence);
    if (failed(packed))
      return failure();
    parts.push_back((*packed)->sizes);
    parts.push_back((*packed)->data);
    return parts;
  }
  parts.push_back(v.value);
  return parts;
}

TensorValue mlir::tessel::onnx_import::valueFromParts(const TensorValue &like,
                                                      ValueRange &parts) {
  if (like.optional) {
    auto opt = std::make_shared<OptionalValue>();
    opt->present = parts.front();
    parts = parts.drop_front();
    opt->element = valueFromParts(like.optional->element, parts);
    return TensorValue{Value(), {}, nullptr, std::move(opt)};
  }
  if (like.sequence) {
    auto seq = makePacked(like.sequence->elementType, sequenceRank(*like.sequence),
                          parts[0], parts[1]);
    parts = parts.drop_front(2);
    return TensorValue{Value(), {}, std::move(seq)};
  }
  TensorValue t{parts.front(), {}};
  parts = parts.drop_front();
  return t;
}

FailureOr<TensorValue>
mlir::tessel::onnx_import::mergeKinds(const TensorValue &a,
                                      const TensorValue &b) {
  if (bool(a.optional) != bool(b.optional) ||
      bool(a.sequence) != bool(b.sequence))
    return failure();
  if (a.optional) {
    FailureOr<TensorValue> inner =
        mergeKinds(a.optional->element, b.optional->element);
    if (failed(inner))
      return failure();
    auto opt = std::make_shared<OptionalValue>(*a.optional);
    opt->element = *inner;
    return TensorValue{Value(), {}, nullptr, std::move(opt)};
  }
  if (a.sequence) {
    if (a.sequence->elementType != b.sequence->elementType)
      return failure();
    auto seq = std::make_shared<SequenceValue>();
    seq->elementType = a.sequence->elementType;
    int64_t ra = sequenceRank(*a.sequence), rb = sequenceRank(*b.sequence);
    // An empty list says nothing about the rank.
    if (!a.sequence->packed() && a.sequence->elements.empty())
      ra = rb;
    if (!b.sequence->packed() && b.sequence->elements.empty())
      rb = ra;
    seq->rank = ra == rb ? ra : ShapedType::kDynamic;
    seq->sizes = a.sequence->sizes;
    seq->data = a.sequence->data;
    return TensorValue{Value(), {}, std::move(seq)};
  }
  return a;
}

const char *mlir::tessel::onnx_import::kindName(const TensorValue &v) {
  return v.optional ? "an optional" : v.sequence ? "a sequence" : "a tensor";
}
