//===- SequenceMap.cpp - ONNX SequenceMap ---------------------------------===//
//
// SequenceMap runs its body once per position of its sequence inputs (the
// tensor inputs are given whole each time) and collects each body output
// into an output sequence. Sequences known element by element are mapped
// at import (the body imported once per element); a packed one (its
// length known only at run time, PackedSequence.h) by an scf.for whose
// body reads the elements and appends the outputs to packed sequences.
//
//===----------------------------------------------------------------------===//
#include "GraphImporter.h"
#include "PackedSequence.h"
#include "Ops/IndexMath.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::tessel::onnx_import;
using namespace mlir::tessel::onnx_import::detail;

LogicalResult GraphImporter::importSequenceMap(const onnx::NodeProto &node,
                                               StringRef name, Location loc,
                                               ValueTable &table) {
  auto error = [&]() { return nodeError(loc, name, "SequenceMap"); };
  const onnx::GraphProto *body = bodyAttribute(node, error);
  if (!body)
    return failure();
  if (node.input_size() < 1 || body->input_size() != node.input_size())
    return error() << "the body takes " << body->input_size()
                   << " inputs for the node's " << node.input_size();
  if (body->output_size() != node.output_size())
    return error() << "the body gives " << body->output_size()
                   << " outputs for the node's " << node.output_size();
  SmallVector<const TensorValue *> ins;
  bool packed = false;
  for (int i = 0; i < node.input_size(); ++i) {
    if (node.input(i).empty())
      return error() << "input " << i << " is missing";
    const TensorValue &v = table.at(node.input(i));
    if (v.optional || (i == 0 && !v.sequence))
      return error() << "input " << i << " ('" << node.input(i) << "') is "
                     << kindName(v)
                     << (i == 0 ? "; the first input must be a sequence"
                                : "; the others are sequences or tensors");
    if (v.sequence && v.sequence->packed())
      packed = true;
    ins.push_back(&v);
  }

  // The body's outputs, imported at the insertion point with input i's
  // element (or tensor) `element(i)`.
  auto importBody = [&](function_ref<Value(int)> element,
                        SmallVector<Value> &outs) -> LogicalResult {
    ValueTable local = table;
    for (int i = 0; i < node.input_size(); ++i)
      local[body->input(i).name()] =
          ins[i]->sequence ? TensorValue{element(i), {}} : *ins[i];
    if (failed(importSubgraph(*body, local)))
      return failure();
    for (const auto &out : body->output()) {
      auto it = local.find(out.name());
      if (it == local.end() || !it->second.value)
        return error() << "body output '" << out.name() << "' "
                       << (it == local.end() ? "is not produced by any node"
                                             : "is not a tensor");
      outs.push_back(it->second.value);
    }
    return success();
  };

  if (!packed) {
    // Known element by element: the body once per position.
    size_t n = ins[0]->sequence->elements.size();
    for (const TensorValue *v : ins)
      if (v->sequence && v->sequence->elements.size() != n)
        return error() << "its sequences differ in length ("
                       << n << " and " << v->sequence->elements.size() << ")";
    SmallVector<SmallVector<Value>> columns(node.output_size());
    for (size_t k = 0; k < n; ++k) {
      SmallVector<Value> outs;
      if (failed(importBody(
              [&](int i) { return ins[i]->sequence->elements[k]; }, outs)))
        return failure();
      for (auto [j, v] : llvm::enumerate(outs))
        columns[j].push_back(v);
    }
    for (int j = 0; j < node.output_size(); ++j) {
      auto seq = std::make_shared<SequenceValue>();
      // An empty map keeps the body's declared element type where known.
      const auto &declared = body->output(j).type();
      seq->elementType =
          !columns[j].empty()
              ? cast<RankedTensorType>(columns[j].front().getType()).getElementType()
          : declared.has_tensor_type()
              ? convertElementType(declared.tensor_type().elem_type(), ctx)
              : Type();
      if (!seq->elementType)
        return error() << "output " << j << " of an empty map has no known "
                                            "element type";
      seq->elements = std::move(columns[j]);
      if (!node.output(j).empty())
        table[node.output(j)] = TensorValue{Value(), {}, std::move(seq)};
    }
    return success();
  }

  // Packed: every sequence input packed, of one length (checked at run
  // time: another length fails the call and maps none).
  SmallVector<std::shared_ptr<const SequenceValue>> seqs(ins.size());
  IndexMath m(builder, loc);
  Value length;
  Value sameLength = m.yes();
  for (auto [i, v] : llvm::enumerate(ins)) {
    if (!v->sequence)
      continue;
    FailureOr<std::shared_ptr<const SequenceValue>> p =
        packSequence(builder, loc, v->sequence);
    if (failed(p))
      return failure();
    if (ShapedType::isDynamic((*p)->rank))
      return error() << "input " << i << " is a sequence whose tensors' rank "
                     << "is not known (declare their shape in the model)";
    seqs[i] = *p;
    Value n = packedLength(builder, loc, **p);
    if (!length)
      length = n;
    else
      sameLength = m.both(sameLength, m.eq(length, n));
  }
  length = m.select(sameLength, length, m.c(0));
  {
    Value l = tensor::FromElementsOp::create(
        builder, loc, RankedTensorType::get({1}, builder.getIndexType()),
        ValueRange{length});
    length = tensor::ExtractOp::create(builder, loc,
                                       required(m, sameLength, l, l),
                                       ValueRange{m.c(0)});
  }

  // The body, imported at `iv`: its outputs.
  auto importAt = [&](Value iv, SmallVector<Value> &outs) {
    return importBody(
        [&](int i) {
          IndexMath n(builder, loc);
          Value ok = n.yes();
          Value e = unpackElement(builder, loc, *seqs[i], iv, ok);
          return required(n, ok, e, e);
        },
        outs);
  };
  // The outputs' types are known once the body is imported: a first
  // import, into a loop that is then erased, finds them. The loop that
  // carries the output sequences is an scf.while: scf.for's canonicalizer
  // would give its carried tensors the empty start's static sizes.
  SmallVector<RankedTensorType> outTypes;
  {
    auto draft = scf::ForOp::create(builder, loc, m.c(0), length, m.c(1));
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPoint(draft.getBody()->getTerminator());
    SmallVector<Value> outs;
    LogicalResult imported = importAt(draft.getInductionVar(), outs);
    for (Value v : outs)
      outTypes.push_back(cast<RankedTensorType>(v.getType()));
    draft->erase();
    if (failed(imported))
      return failure();
  }
  // Carried: the position, then each output's sizes and data, from empty.
  SmallVector<Value> inits = {m.c(0)};
  for (RankedTensorType t : outTypes) {
    auto empty = std::make_shared<SequenceValue>();
    empty->elementType = t.getElementType();
    empty->rank = t.getRank();
    FailureOr<std::shared_ptr<const SequenceValue>> p =
        packSequence(builder, loc, empty);
    if (failed(p))
      return failure();
    inits.push_back((*p)->sizes);
    inits.push_back((*p)->data);
  }
  SmallVector<Type> types = llvm::to_vector(ValueRange(inits).getTypes());
  bool failedBody = false;
  auto loop = scf::WhileOp::create(
      builder, loc, types, inits,
      [&](OpBuilder &b, Location l, ValueRange args) {
        Value more = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt,
                                           args[0], length);
        scf::ConditionOp::create(b, l, more, args);
      },
      [&](OpBuilder &b, Location l, ValueRange args) {
        OpBuilder::InsertionGuard guard(builder);
        builder.setInsertionPoint(b.getInsertionBlock(), b.getInsertionPoint());
        SmallVector<Value> outs;
        SmallVector<Value> next = {IndexMath(builder, l).add(
            args[0], IndexMath(builder, l).c(1))};
        failedBody = failed(importAt(args[0], outs));
        for (auto [j, v] : llvm::enumerate(outs)) {
          if (failedBody)
            break;
          SequenceValue acc;
          acc.elementType = outTypes[j].getElementType();
          acc.rank = outTypes[j].getRank();
          acc.sizes = args[1 + 2 * j];
          acc.data = args[2 + 2 * j];
          std::shared_ptr<const SequenceValue> appended = insertPacked(
              builder, l, acc, v, packedLength(builder, l, acc));
          next.push_back(appended->sizes);
          next.push_back(appended->data);
        }
        if (failedBody)
          next.assign(args.begin(), args.end());
        scf::YieldOp::create(builder, l, next);
      });
  if (failedBody) {
    loop->erase();
    return failure();
  }
  for (auto [j, t] : llvm::enumerate(outTypes)) {
    auto seq = std::make_shared<SequenceValue>();
    seq->elementType = t.getElementType();
    seq->rank = t.getRank();
    seq->sizes = loop.getResult(1 + 2 * j);
    seq->data = loop.getResult(2 + 2 * j);
    if (!node.output(j).empty())
      table[node.output(j)] = TensorValue{Value(), {}, std::move(seq)};
  }
  return success();
}
