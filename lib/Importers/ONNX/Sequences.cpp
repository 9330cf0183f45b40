//===- Sequences.cpp - ONNX sequence ops -----------------------------------===//
//
// ONNX sequences inside a graph (SequenceEmpty, SequenceConstruct,
// SequenceInsert, SequenceErase, SequenceAt, SequenceLength,
// ConcatFromSequence, SplitToSequence) as lists of tensors known at
// compile time (SequenceValue): the importer follows each sequence's
// elements, and only tensors reach the IR. A position that is a run-time
// value selects among elements of one shape (tosa.select chains), checked
// on ONNX's range by tessel.check_indices; where the elements differ in
// shape, the result's shape would depend on the data, which is an error
// naming the node. Sequences as graph inputs or outputs, or carried by
// If/Loop/Scan, are errors too (a sequence is no tensor of the ABI).
//
//===----------------------------------------------------------------------===//
#include "GraphImporter.h"
#include "PackedSequence.h"
#include "Ops/Common.h"
#include "Ops/IndexMath.h"

#include "tessel/Dialect/Tessel/IR/TesselDialect.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace mlir::tessel::onnx_import;
using namespace mlir::tessel::onnx_import::detail;

namespace {

/// A position operand: a compile-time value normalized into range, or a
/// run-time one (an i32 scalar tensor, checked and normalized).
struct Position {
  std::optional<int64_t> fixed;
  Value runtime;
};

/// Sequence ops and their converters, which see the table directly (their
/// inputs and outputs may be sequences).
class SequenceImporter {
public:
  SequenceImporter(NodeContext &ctx, ValueTable &table) : ctx(ctx), table(table) {}

  LogicalResult run() {
    StringRef op = ctx.opType();
    if (op == "SequenceEmpty")
      return empty();
    if (op == "SequenceConstruct")
      return construct();
    if (op == "SequenceInsert")
      return insert();
    if (op == "SequenceErase")
      return erase();
    if (op == "SequenceAt")
      return at();
    if (op == "SequenceLength")
      return length();
    if (op == "ConcatFromSequence")
      return concatFromSequence();
    if (op == "Optional")
      return optional();
    if (op == "OptionalHasElement")
      return optionalHasElement();
    if (op == "OptionalGetElement")
      return optionalGetElement();
    if (op == "Identity")
      return identity();
    return splitToSequence();
  }

private:
  NodeContext &ctx;
  ValueTable &table;

  /// Input i as a sequence, or an error.
  const SequenceValue *sequenceInput(unsigned i) {
    auto it = table.find(ctx.node().input(i));
    if (it == table.end() || !it->second.sequence) {
      ctx.emitError() << "input " << i << " ('" << ctx.node().input(i)
                      << "') must be a sequence";
      return nullptr;
    }
    return it->second.sequence.get();
  }

  std::shared_ptr<const SequenceValue> sequenceAt(unsigned i) {
    return table.at(ctx.node().input(i)).sequence;
  }

  void setPacked(std::shared_ptr<const SequenceValue> seq) {
    table[ctx.node().output(0)] = TensorValue{Value(), {}, std::move(seq)};
  }

  /// A packed sequence op of another kind than those below: an error.
  LogicalResult packedUnsupported() {
    ctx.emitError() << "a sequence whose length is known only at run time "
                       "(a graph input, or built in a loop) is not supported "
                       "by "
                    << ctx.opType() << " yet";
    return failure();
  }

  /// The position input `i` into packed `seq` (absent: `dflt` elements
  /// from the end, 0 or 1), checked at run time; `ok` says whether it was in
  /// range.
  FailureOr<Value> packedPositionInput(unsigned i, const SequenceValue &seq,
                                       bool endOk, bool dfltEnd, Value &ok) {
    IndexMath m(ctx);
    Value n = packedLength(ctx.builder(), ctx.loc(), seq);
    if (!ctx.hasInput(i)) {
      ok = m.yes();
      return dfltEnd ? (endOk ? n : m.sub(n, m.c(1))) : m.c(0);
    }
    RankedTensorType t = ctx.inputType(i);
    if (!t || t.getNumElements() != 1 || t.getRank() > 1 ||
        !t.getElementType().isInteger()) {
      ctx.emitError() << "position must be an integer scalar";
      return failure();
    }
    Value p = ctx.input(i);
    if (t.getRank() == 1)
      p = ctx.tosa().reshape(p, {});
    return packedPosition(ctx.builder(), ctx.loc(), p, n, endOk, ok);
  }

  /// `v` where `ok` holds, else the call fails with `status` (v is in
  /// bounds either way).
  Value failUnless(Value ok, Value v, int32_t status) {
    IndexMath m(ctx);
    return required(m, ok, v, v, status);
  }

  void setSequence(Type elem, SmallVector<Value> elements) {
    auto seq = std::make_shared<SequenceValue>();
    seq->elementType = elem;
    seq->elements = std::move(elements);
    table[ctx.node().output(0)] = TensorValue{Value(), {}, std::move(seq)};
  }

  /// Position input i for a sequence of n (ONNX's range: [-n, n - 1], or
  /// [-n, n] with `endOk`), or its absence (`dflt`).
  FailureOr<Position> position(unsigned i, int64_t n, bool endOk, int64_t dflt) {
    Position p;
    if (!ctx.hasInput(i)) {
      p.fixed = dflt;
      return p;
    }
    RankedTensorType t = ctx.inputType(i);
    if (!t || t.getRank() != 0 || !t.getElementType().isInteger()) {
      ctx.emitError() << "position must be an integer scalar";
      return failure();
    }
    int64_t hi = endOk ? n : n - 1;
    if (DenseElementsAttr c = ctx.constantInput(i)) {
      int64_t v = c.getSplatValue<APInt>().getSExtValue();
      if (v < -n || v > hi) {
        ctx.emitError() << "position " << v << " is outside [" << -n << ", "
                        << hi << "] for a sequence of " << n;
        return failure();
      }
      p.fixed = v < 0 ? v + n : v;
      return p;
    }
    // Checked on [-n, hi] as given, then negative ones wrapped by n.
    Value checked = tessel::CheckIndicesOp::create(
        ctx.builder(), ctx.loc(), t, ctx.input(i), -n, hi + 1);
    p.runtime = wrapIndices(ctx, checked, n, /*checked=*/false);
    return p;
  }

  /// Whether every element (and `extra`, if any) has one shape: a run-time
  /// position needs it.
  LogicalResult sameShapes(ArrayRef<Value> elements, Value extra = Value()) {
    SmallVector<Value> all(elements);
    if (extra)
      all.push_back(extra);
    for (Value v : all)
      if (typeOf(v).getShape() != typeOf(all.front()).getShape()) {
        ctx.emitError() << "a run-time position into a sequence whose tensors "
                           "differ in shape ("
                        << typeOf(all.front()) << " and " << typeOf(v)
                        << ") gives a result whose shape depends on the data";
        return failure();
      }
    return success();
  }

  /// pred(p, k) ? a : b, for a run-time position p and a constant k.
  template <typename CmpOp>
  Value selectIf(Value p, int64_t k, Value a, Value b) {
    OpBuilder &bld = ctx.builder();
    Value kv = splatConstant(ctx, typeOf(p), double(k));
    auto i1 = RankedTensorType::get({}, bld.getI1Type());
    Value cond = CmpOp::create(bld, ctx.loc(), i1, p, kv).getResult();
    cond = ctx.tosa().reshape(cond, SmallVector<int64_t>(typeOf(a).getRank(), 1));
    return tosa::SelectOp::create(bld, ctx.loc(), typeOf(a), cond, a, b);
  }
  Value selectIfEqual(Value p, int64_t k, Value a, Value b) {
    return selectIf<tosa::EqualOp>(p, k, a, b);
  }
  /// k < p ? a : b.
  Value selectIfBefore(Value p, int64_t k, Value a, Value b) {
    return selectIf<tosa::GreaterOp>(p, k, a, b);
  }

  LogicalResult empty() {
    FailureOr<int64_t> dtype = ctx.intAttr("dtype", onnx::TensorProto::FLOAT);
    if (failed(dtype))
      return failure();
    Type elem = convertElementType(int(*dtype), ctx.context());
    if (!elem)
      return ctx.attrError("dtype", "= " + Twine(*dtype) +
                                        " names a data type Tessel does not "
                                        "support");
    setSequence(elem, {});
    return success();
  }

  LogicalResult construct() {
    SmallVector<Value> elements;
    for (unsigned i = 0; i < ctx.numInputs(); ++i) {
      Value v = ctx.input(i);
      if (!v) {
        ctx.emitError() << "input " << i << " must be a tensor";
        return failure();
      }
      if (typeOf(v).getElementType() != typeOf(ctx.input(0)).getElementType()) {
        ctx.emitError() << "the tensors of a sequence must share an element "
                           "type";
        return failure();
      }
      elements.push_back(v);
    }
    if (elements.empty()) {
      ctx.emitError() << "needs at least one tensor";
      return failure();
    }
    setSequence(typeOf(elements.front()).getElementType(), std::move(elements));
    return success();
  }

  LogicalResult insert() {
    const SequenceValue *seq = sequenceInput(0);
    Value t = ctx.input(1);
    if (!seq || !t)
      return failure();
    if (typeOf(t).getElementType() != seq->elementType) {
      ctx.emitError() << "the tensor's element type is not the sequence's";
      return failure();
    }
    if (seq->packed()) {
      Value ok;
      FailureOr<Value> at = packedPositionInput(2, *seq, /*endOk=*/true,
                                                /*dfltEnd=*/true, ok);
      if (failed(at))
        return failure();
      auto out = std::make_shared<SequenceValue>(
          *insertPacked(ctx.builder(), ctx.loc(), *seq, t, *at));
      out->sizes = failUnless(ok, out->sizes, TESSEL_ENTRY_INDEX_OUT_OF_RANGE);
      setPacked(std::move(out));
      return success();
    }
    int64_t n = seq->elements.size();
    FailureOr<Position> p = position(2, n, /*endOk=*/true, n);
    if (failed(p))
      return failure();
    SmallVector<Value> out(seq->elements);
    if (p->fixed) {
      out.insert(out.begin() + *p->fixed, t);
    } else {
      if (failed(sameShapes(seq->elements, t)))
        return failure();
      // out[i] = i < p ? seq[i] : i == p ? t : seq[i - 1].
      out.clear();
      for (int64_t i = 0; i <= n; ++i) {
        Value v = i > 0 ? selectIfEqual(p->runtime, i, t, seq->elements[i - 1]) : t;
        out.push_back(i < n ? selectIfBefore(p->runtime, i, seq->elements[i], v) : v);
      }
    }
    setSequence(seq->elementType, std::move(out));
    return success();
  }

  LogicalResult erase() {
    const SequenceValue *seq = sequenceInput(0);
    if (!seq)
      return failure();
    if (seq->packed())
      return packedUnsupported();
    int64_t n = seq->elements.size();
    if (n == 0) {
      ctx.emitError() << "erases from an empty sequence";
      return failure();
    }
    FailureOr<Position> p = position(1, n, /*endOk=*/false, n - 1);
    if (failed(p))
      return failure();
    SmallVector<Value> out(seq->elements);
    if (p->fixed) {
      out.erase(out.begin() + *p->fixed);
    } else {
      if (failed(sameShapes(seq->elements)))
        return failure();
      // out[i] = i < p ? seq[i] : seq[i + 1].
      out.clear();
      for (int64_t i = 0; i + 1 < n; ++i)
        out.push_back(selectIfBefore(p->runtime, i, seq->elements[i],
                                     seq->elements[i + 1]));
    }
    setSequence(seq->elementType, std::move(out));
    return success();
  }

  LogicalResult at() {
    const SequenceValue *seq = sequenceInput(0);
    if (!seq)
      return failure();
    if (seq->packed()) {
      if (ShapedType::isDynamic(seq->rank)) {
        ctx.emitError() << "reads from a sequence whose tensors' rank is not "
                           "known (declare their shape in the model)";
        return failure();
      }
      Value ok;
      FailureOr<Value> at = packedPositionInput(1, *seq, /*endOk=*/false,
                                                /*dfltEnd=*/false, ok);
      if (failed(at))
        return failure();
      // A position out of range, or an element of another rank than the
      // sequence's (one whose rank changed in a loop): each its own code.
      Value inRange = ok;
      Value e = unpackElement(ctx.builder(), ctx.loc(), *seq, *at, ok);
      IndexMath m(ctx);
      e = failUnless(inRange, e, TESSEL_ENTRY_INDEX_OUT_OF_RANGE);
      ctx.setOutput(0, failUnless(m.either(ok, m.no(inRange)), e,
                                  TESSEL_ENTRY_SHAPE_MISMATCH));
      return success();
    }
    int64_t n = seq->elements.size();
    if (n == 0) {
      ctx.emitError() << "reads from an empty sequence";
      return failure();
    }
    FailureOr<Position> p = position(1, n, /*endOk=*/false, 0);
    if (failed(p))
      return failure();
    if (p->fixed) {
      ctx.setOutput(0, seq->elements[*p->fixed]);
      return success();
    }
    if (failed(sameShapes(seq->elements)))
      return failure();
    Value v = seq->elements.back();
    for (int64_t i = n - 2; i >= 0; --i)
      v = selectIfEqual(p->runtime, i, seq->elements[i], v);
    ctx.setOutput(0, v);
    return success();
  }

  LogicalResult length() {
    const SequenceValue *seq = sequenceInput(0);
    if (!seq)
      return failure();
    auto t = RankedTensorType::get({}, ctx.builder().getI64Type());
    if (seq->packed()) {
      IndexMath m(ctx);
      ctx.setOutput(0, tensor::FromElementsOp::create(
                           ctx.builder(), ctx.loc(), t,
                           ValueRange{m.toI64(packedLength(
                               ctx.builder(), ctx.loc(), *seq))}));
      return success();
    }
    ctx.setConstantOutput(
        0, DenseElementsAttr::get(t, APInt(64, seq->elements.size())));
    return success();
  }

  LogicalResult concatFromSequence() {
    const SequenceValue *seq = sequenceInput(0);
    FailureOr<int64_t> axisAttr = ctx.intAttr("axis");
    FailureOr<int64_t> newAxis = ctx.intAttr("new_axis", 0);
    if (!seq || failed(axisAttr) || failed(newAxis))
      return failure();
    if (seq->packed())
      return packedUnsupported();
    if (*newAxis != 0 && *newAxis != 1)
      return ctx.attrError("new_axis", "= " + Twine(*newAxis) + " must be 0 or 1");
    if (seq->elements.empty()) {
      ctx.emitError() << "concatenates an empty sequence";
      return failure();
    }
    int64_t rank = typeOf(seq->elements.front()).getRank();
    FailureOr<int64_t> axis = normalizeAxis(ctx, *axisAttr, rank + *newAxis);
    if (failed(axis))
      return failure();
    SmallVector<Value> parts;
    SmallVector<int64_t> shape(typeOf(seq->elements.front()).getShape());
    if (*newAxis)
      shape.insert(shape.begin() + *axis, 1);
    int64_t total = 0;
    for (Value v : seq->elements) {
      SmallVector<int64_t> s(typeOf(v).getShape());
      if (*newAxis)
        s.insert(s.begin() + *axis, 1);
      for (int64_t d = 0; d < int64_t(s.size()); ++d)
        if (int64_t(s.size()) != int64_t(shape.size()) ||
            (d != *axis && s[d] != shape[d])) {
          ctx.emitError() << "the sequence's tensors do not concatenate along "
                             "axis "
                          << *axis << ": " << typeOf(seq->elements.front())
                          << " and " << typeOf(v);
          return failure();
        }
      total += s[*axis];
      if (s[*axis] != 0)
        parts.push_back(*newAxis ? ctx.tosa().reshape(v, s) : v);
    }
    shape[*axis] = total;
    if (failed(checkShape(ctx, shape, "ConcatFromSequence's output")))
      return failure();
    if (parts.empty()) {
      ctx.setConstantOutput(
          0, DenseElementsAttr::get(RankedTensorType::get(shape, seq->elementType),
                                    ArrayRef<Attribute>()));
      return success();
    }
    ctx.setOutput(0, parts.size() == 1 ? parts.front()
                                       : ctx.tosa().concat(parts, *axis));
    return success();
  }

  //===--- Optionals (OptionalValue) -------------------------------------===//

  Value flag(bool v) {
    auto t = RankedTensorType::get({}, ctx.builder().getI1Type());
    return ctx.materializeConstant(DenseElementsAttr::get(t, v));
  }

  /// What an empty optional of ONNX type `type` holds: zeros of a tensor
  /// type with a static shape, or an empty sequence.
  FailureOr<TensorValue> emptyValue(const onnx::TypeProto &type) {
    if (type.has_sequence_type() &&
        type.sequence_type().elem_type().has_tensor_type()) {
      const auto &tt = type.sequence_type().elem_type().tensor_type();
      Type elem = convertElementType(tt.elem_type(), ctx.context());
      if (!elem) {
        (void)ctx.attrError("type", "names a sequence of a data type Tessel "
                                    "does not support");
        return failure();
      }
      auto seq = std::make_shared<SequenceValue>();
      seq->elementType = elem;
      seq->rank = tt.has_shape() ? tt.shape().dim_size() : 0;
      FailureOr<std::shared_ptr<const SequenceValue>> packed =
          packSequence(ctx.builder(), ctx.loc(), seq);
      if (failed(packed))
        return failure();
      return TensorValue{Value(), {}, *packed};
    }
    if (type.has_tensor_type()) {
      const auto &tt = type.tensor_type();
      Type elem = convertElementType(tt.elem_type(), ctx.context());
      SmallVector<int64_t> dims;
      bool known = elem && tt.has_shape();
      for (const auto &d : tt.shape().dim()) {
        known = known && d.has_dim_value();
        dims.push_back(d.dim_value());
      }
      if (known) {
        auto t = RankedTensorType::get(dims, elem);
        Value zeros = ctx.materializeConstant(
            DenseElementsAttr::get(t, ctx.builder().getZeroAttr(elem)));
        return TensorValue{zeros, {}};
      }
    }
    (void)ctx.attrError("type", "must be a tensor type of static shape and "
                                "known data type, or a sequence of tensors");
    return failure();
  }

  LogicalResult optional() {
    auto opt = std::make_shared<OptionalValue>();
    if (ctx.hasInput(0)) {
      ctx.ignoreAttr("type");
      const TensorValue &in = table.at(ctx.node().input(0));
      if (in.optional) {
        ctx.emitError() << "an optional of an optional is not supported";
        return failure();
      }
      opt->present = flag(true);
      opt->element = in;
    } else {
      const onnx::AttributeProto *typeAttr = nullptr;
      for (const auto &a : ctx.node().attribute())
        if (a.name() == "type" && a.has_tp())
          typeAttr = &a;
      ctx.ignoreAttr("type");
      if (!typeAttr)
        return ctx.attrError("type", "is required without an input");
      FailureOr<TensorValue> v = emptyValue(typeAttr->tp());
      if (failed(v))
        return failure();
      opt->present = flag(false);
      opt->element = *v;
    }
    table[ctx.node().output(0)] = TensorValue{Value(), {}, nullptr, std::move(opt)};
    return success();
  }

  LogicalResult optionalHasElement() {
    if (!ctx.hasInput(0)) {
      ctx.setOutput(0, flag(false));
      return success();
    }
    const TensorValue &in = table.at(ctx.node().input(0));
    ctx.setOutput(0, in.optional ? in.optional->present : flag(true));
    return success();
  }

  LogicalResult optionalGetElement() {
    const TensorValue &in = table.at(ctx.node().input(0));
    if (!in.optional) {
      // Opset 18 takes a tensor or a sequence too: itself.
      table[ctx.node().output(0)] = in;
      return success();
    }
    // Reading an empty optional fails the call; the zeros (or empty
    // sequence) it holds stand in.
    TensorValue out = in.optional->element;
    Value ok = tensor::ExtractOp::create(ctx.builder(), ctx.loc(),
                                         in.optional->present, ValueRange{});
    if (out.sequence) {
      FailureOr<std::shared_ptr<const SequenceValue>> packed =
          packSequence(ctx.builder(), ctx.loc(), out.sequence);
      if (failed(packed))
        return failure();
      auto seq = std::make_shared<SequenceValue>(**packed);
      seq->sizes = failUnless(ok, seq->sizes, TESSEL_ENTRY_EMPTY_OPTIONAL);
      out.sequence = std::move(seq);
    } else {
      out.value = failUnless(ok, out.value, TESSEL_ENTRY_EMPTY_OPTIONAL);
      out.constant = {};
    }
    table[ctx.node().output(0)] = out;
    return success();
  }

  /// Identity of a sequence or an optional: the same value.
  LogicalResult identity() {
    table[ctx.node().output(0)] = table.at(ctx.node().input(0));
    return success();
  }

  /// SplitToSequence where the input's sizes or the split are known only
  /// at run time: a packed sequence. The pieces are contiguous in the
  /// input where every dimension before the axis is 1, so the data is the
  /// input itself and only the sizes are computed (one row per piece).
  LogicalResult splitPacked(RankedTensorType t, int64_t axis,
                            int64_t keepdims) {
    for (int64_t d = 0; d < axis; ++d)
      if (t.getDimSize(d) != 1) {
        ctx.emitError() << "a split along axis " << axis
                        << " of an input whose sizes or split are known only "
                           "at run time ("
                        << t << ") is not supported yet (only where the "
                                "dimensions before the axis are 1)";
        return failure();
      }
    IndexMath m(ctx);
    OpBuilder &b = ctx.builder();
    Location loc = ctx.loc();
    Value x = ctx.input(0);
    Value dim = m.dim(x, axis);
    enum { Ones, Chunk, Lengths } kind = Ones;
    Value chunk, lengths, count, ok = m.yes();
    bool squeeze = false;
    if (!ctx.hasInput(1)) {
      // Pieces of one; keepdims = 0 drops the axis.
      count = dim;
      squeeze = keepdims == 0;
    } else {
      RankedTensorType st = ctx.inputType(1);
      if (!st || !st.getElementType().isInteger() || st.getRank() > 1 ||
          !st.hasStaticShape()) {
        ctx.emitError() << "split must be an integer scalar or a 1-D tensor "
                           "of static length";
        return failure();
      }
      if (st.getRank() == 0) {
        kind = Chunk;
        chunk = m.element(ctx.input(1), 0);
        // A chunk that is not positive fails the call (pieces of the axis).
        ok = m.lt(m.c(0), chunk);
        chunk = m.select(ok, chunk, m.max(dim, m.c(1)));
        count = m.div(m.add(dim, m.sub(chunk, m.c(1))), chunk);
      } else {
        kind = Lengths;
        lengths = ctx.input(1);
        Value sum = m.c(0);
        for (int64_t k = 0; k < st.getDimSize(0); ++k) {
          Value l = m.element(lengths, k);
          ok = m.both(ok, m.le(m.c(0), l));
          sum = m.add(sum, m.max(l, m.c(0)));
        }
        // Lengths that do not add up to the axis fail the call.
        ok = m.both(ok, m.eq(sum, dim));
        count = m.c(st.getDimSize(0));
      }
    }
    int64_t rank = t.getRank() - (squeeze ? 1 : 0);
    auto i64 = b.getI64Type();
    Value sizes = tensor::GenerateOp::create(
        b, loc, RankedTensorType::get({ShapedType::kDynamic, rank}, i64),
        ValueRange{count},
        [&](OpBuilder &nb, Location l, ValueRange at) {
          IndexMath n(nb, l);
          Value j = at[0], col = at[1];
          Value piece = n.c(1);
          if (kind == Chunk)
            piece = n.min(chunk, n.sub(dim, n.mul(j, chunk)));
          else if (kind == Lengths)
            piece = n.max(arith::IndexCastOp::create(
                              nb, l, nb.getIndexType(),
                              tensor::ExtractOp::create(nb, l, lengths,
                                                        ValueRange{j})),
                          n.c(0));
          // Column col is input dimension col (col + 1 past a dropped axis).
          Value v = n.c(0);
          for (int64_t d = 0; d < t.getRank(); ++d) {
            if (squeeze && d == axis)
              continue;
            int64_t c = squeeze && d > axis ? d - 1 : d;
            v = n.select(n.eq(col, n.c(c)), d == axis ? piece : n.dim(x, d), v);
          }
          tensor::YieldOp::create(nb, l, n.toI64(v));
        });
    sizes = tensor::CastOp::create(b, loc, packedSizesType(b.getContext()), sizes);
    // Bad lengths: every piece empty (reads stay in bounds).
    Value zeros = tensor::GenerateOp::create(
        b, loc, packedSizesType(b.getContext()),
        ValueRange{m.dim(sizes, 0), m.dim(sizes, 1)},
        [&](OpBuilder &nb, Location l, ValueRange) {
          tensor::YieldOp::create(nb, l,
                                  arith::ConstantIntOp::create(nb, l, i64, 0)
                                      .getResult());
        });
    sizes = required(m, ok, sizes, zeros);
    auto seq = std::make_shared<SequenceValue>();
    seq->elementType = t.getElementType();
    seq->rank = rank;
    seq->sizes = sizes;
    Value shape = tensor::FromElementsOp::create(
        b, loc, RankedTensorType::get({1}, b.getIndexType()),
        ValueRange{m.numElements(x)});
    seq->data = tensor::ReshapeOp::create(
        b, loc, RankedTensorType::get({ShapedType::kDynamic}, t.getElementType()),
        x, shape);
    setPacked(std::move(seq));
    return success();
  }

  LogicalResult splitToSequence() {
    RankedTensorType t = ctx.inputType(0);
    FailureOr<int64_t> axisAttr = ctx.intAttr("axis", 0);
    FailureOr<int64_t> keepdims = ctx.intAttr("keepdims", 1);
    if (!t || failed(axisAttr) || failed(keepdims))
      return failure();
    FailureOr<int64_t> axis = normalizeAxis(ctx, *axisAttr, t.getRank());
    if (failed(axis))
      return failure();
    if (!t.hasStaticShape() || (ctx.hasInput(1) && !ctx.constantInput(1)))
      return splitPacked(t, *axis, *keepdims);
    int64_t dim = t.getDimSize(*axis);
    SmallVector<int64_t> lengths;
    bool squeeze = false;
    if (!ctx.hasInput(1)) {
      // Pieces of one; keepdims = 0 drops the axis.
      lengths.assign(dim, 1);
      squeeze = *keepdims == 0;
    } else {
      FailureOr<SmallVector<int64_t>> split = ctx.constantInts(1, "split");
      if (failed(split))
        return failure();
      if (ctx.inputType(1).getRank() == 0) {
        int64_t c = split->front();
        if (c <= 0) {
          ctx.emitError() << "split " << c << " must be positive";
          return failure();
        }
        for (int64_t at = 0; at < dim; at += c)
          lengths.push_back(std::min(c, dim - at));
      } else {
        lengths = *split;
        int64_t sum = 0;
        for (int64_t l : lengths) {
          if (l < 0) {
            ctx.emitError() << "split lengths must not be negative";
            return failure();
          }
          sum += l;
        }
        if (sum != dim) {
          ctx.emitError() << "split lengths sum to " << sum << ", not the "
                          << "axis' " << dim;
          return failure();
        }
      }
    }
    SmallVector<Value> out;
    SmallVector<int64_t> start(t.getRank(), 0);
    for (int64_t l : lengths) {
      SmallVector<int64_t> size(t.getShape());
      size[*axis] = l;
      Value piece;
      if (l == 0)
        piece = ctx.materializeConstant(DenseElementsAttr::get(
            RankedTensorType::get(size, t.getElementType()), ArrayRef<Attribute>()));
      else
        piece = l == dim ? ctx.input(0) : ctx.tosa().slice(ctx.input(0), start, size);
      if (squeeze) {
        size.erase(size.begin() + *axis);
        piece = ctx.tosa().reshape(piece, size);
      }
      out.push_back(piece);
      start[*axis] += l;
    }
    setSequence(t.getElementType(), std::move(out));
    return success();
  }
};

} // namespace

bool mlir::tessel::onnx_import::detail::isSequenceOp(StringRef opType) {
  return llvm::StringSwitch<bool>(opType)
      .Cases({"SequenceEmpty", "SequenceConstruct", "SequenceInsert",
              "SequenceErase", "SequenceAt", "SequenceLength"},
             true)
      .Cases({"ConcatFromSequence", "SplitToSequence"}, true)
      .Cases({"Optional", "OptionalHasElement", "OptionalGetElement"}, true)
      .Default(false);
}

LogicalResult mlir::tessel::onnx_import::detail::importSequenceOp(NodeContext &ctx, ValueTable &table) {
  return SequenceImporter(ctx, table).run();
}
