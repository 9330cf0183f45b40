//===- ControlFlow.cpp - ONNX If, Scan and Loop --------------------------===//
//
// Control flow imports subgraphs, so the graph importer handles it itself
// rather than a converter: an If becomes scf.if, a Scan an scf.for, a Loop
// an scf.while, and the bodies are imported node by node into their
// regions, reading the outer scope's values directly, as ONNX subgraphs do.
//
//===----------------------------------------------------------------------===//
#include "GraphImporter.h"
#include "PackedSequence.h"
#include "Ops/IndexMath.h"
#include "tessel/Dialect/Tessel/IR/TesselDialect.h"
#include "tessel/Runtime/tessel_abi.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::tessel::onnx_import;
using namespace mlir::tessel::onnx_import::detail;

InFlightDiagnostic GraphImporter::nodeError(Location loc, StringRef name,
                                            StringRef opType) {
  InFlightDiagnostic d = emitError(loc);
  d << "node '" << name << "' (" << opType << ", opset " << model.opset
    << "): ";
  return d;
}

LogicalResult GraphImporter::importSubgraph(const onnx::GraphProto &graph,
                                           ValueTable &table) {
  if (graph.sparse_initializer_size() > 0)
    return emitError(fileLoc) << "subgraph '" << graph.name()
                              << "': sparse initializers are not supported";
  for (const auto &t : graph.initializer()) {
    std::string error;
    FailureOr<DenseElementsAttr> attr = convertTensorProto(t, ctx, error);
    if (failed(attr))
      return emitError(fileLoc) << "subgraph '" << graph.name()
                                << "' initializer: " << error;
    Location loc = NameLoc::get(builder.getStringAttr(t.name()), fileLoc);
    table[t.name()] = TensorValue{materializeConstant(builder, loc, *attr), *attr};
  }
  for (auto [i, n] : llvm::enumerate(graph.node()))
    if (failed(importNode(n, i, table)))
      return failure();
  return success();
}

LogicalResult GraphImporter::importIf(const onnx::NodeProto &node,
                                      StringRef name, Location loc,
                                      ValueTable &table) {
  auto error = [&]() { return nodeError(loc, name, "If"); };
  const onnx::GraphProto *branches[2] = {nullptr, nullptr};
  for (const auto &a : node.attribute()) {
    int which = a.name() == "then_branch"   ? 0
                : a.name() == "else_branch" ? 1
                                            : -1;
    if (which < 0)
      return error() << "attribute '" << a.name() << "' is not supported";
    if (a.type() != onnx::AttributeProto::GRAPH)
      return error() << "attribute '" << a.name() << "' must be a graph";
    branches[which] = &a.g();
  }
  if (!branches[0] || !branches[1])
    return error() << "needs both 'then_branch' and 'else_branch'";
  if (node.input_size() != 1 || node.input(0).empty())
    return error() << "takes one input, the condition";
  for (const onnx::GraphProto *branch : branches) {
    if (branch->input_size() > 0)
      return error() << "branch '" << branch->name()
                     << "' declares inputs (If branches take none)";
    if (branch->output_size() != node.output_size())
      return error() << "branch '" << branch->name() << "' has "
                     << branch->output_size() << " outputs, the node "
                     << node.output_size();
  }
  TensorValue &cond = table[node.input(0)];
  auto condType = dyn_cast<RankedTensorType>(cond.value.getType());
  if (!condType || !condType.getElementType().isInteger(1) ||
      !condType.hasStaticShape() || condType.getNumElements() != 1)
    return error() << "the condition must be a bool tensor of one element, "
                      "not "
                   << typeText(cond.value.getType());

  // The outputs of branch `b`, imported at the insertion point.
  auto importBranch = [&](int b,
                          SmallVector<TensorValue> &outs) -> LogicalResult {
    ValueTable local = table;
    if (failed(importSubgraph(*branches[b], local)))
      return failure();
    for (const auto &out : branches[b]->output()) {
      auto it = local.find(out.name());
      if (it == local.end())
        return error() << "branch '" << branches[b]->name() << "' output '"
                       << out.name() << "' is not produced by any node";
      outs.push_back(it->second);
    }
    return success();
  };

  // A condition known at compile time (exporters fold many): the taken
  // branch only, in place, its outputs' known contents kept.
  if (cond.constant) {
    SmallVector<TensorValue> outs;
    if (failed(importBranch(*cond.constant.getValues<bool>().begin() ? 0 : 1,
                            outs)))
      return failure();
    for (auto [i, v] : llvm::enumerate(outs))
      if (!node.output(i).empty())
        table[node.output(i)] = v;
    return success();
  }

  // scf.if rather than tosa.cond_if: upstream's tosa-to-scf cannot lower a
  // cond_if nested in another (nested Ifs are common in exported graphs),
  // and the recurrent converters already emit scf.for.
  tessel::TosaBuilder tb(builder, loc);
  Value scalar = condType.getRank() == 0 ? cond.value
                                         : tb.reshape(cond.value, {});
  Value predicate = tensor::ExtractOp::create(builder, loc, scalar, ValueRange{});
  // The branches are imported into a result-less scf.if first, as their
  // types are known only then; the typed op takes over its regions.
  auto draft = scf::IfOp::create(builder, loc, TypeRange{}, predicate,
                                 /*addThenBlock=*/false,
                                 /*addElseBlock=*/false);
  // Each branch yields its outputs' parts: a sequence packed, an optional
  // as its flag and its value (PackedSequence.h).
  SmallVector<Value> outs[2];
  SmallVector<TensorValue> kinds[2];
  SmallVector<unsigned> partOf; // the output each yielded part belongs to
  for (int b = 0; b < 2; ++b) {
    Region &region = b == 0 ? draft.getThenRegion() : draft.getElseRegion();
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(&region.emplaceBlock());
    LogicalResult imported = importBranch(b, kinds[b]);
    for (auto [i, v] : llvm::enumerate(kinds[b])) {
      if (failed(imported))
        break;
      FailureOr<SmallVector<Value>> parts = valueParts(builder, loc, v);
      if (failed(parts)) {
        imported = failure();
        break;
      }
      outs[b].append(*parts);
      if (b == 0)
        partOf.append(parts->size(), i);
    }
    if (succeeded(imported))
      scf::YieldOp::create(builder, loc, outs[b]);
    if (failed(imported)) {
      draft->erase();
      return failure();
    }
  }
  SmallVector<TensorValue> merged;
  for (auto [i, pair] : llvm::enumerate(llvm::zip(kinds[0], kinds[1]))) {
    auto [t, e] = pair;
    FailureOr<TensorValue> kind = mergeKinds(t, e);
    if (failed(kind)) {
      InFlightDiagnostic d = error();
      d << "output " << i << " is " << kindName(t)
        << " in 'then_branch' but " << kindName(e)
        << " in 'else_branch' (or of another element type; the branches "
           "must agree)";
      draft->erase();
      return d;
    }
    merged.push_back(*kind);
  }
  SmallVector<Type> types;
  for (auto [j, pair] : llvm::enumerate(llvm::zip(outs[0], outs[1]))) {
    auto [t, e] = pair;
    if (t.getType() != e.getType()) {
      InFlightDiagnostic d = error();
      d << "output " << partOf[j] << " is " << typeText(t.getType())
        << " in 'then_branch' but " << typeText(e.getType())
        << " in 'else_branch' (the branches must agree)";
      draft->erase();
      return d;
    }
    types.push_back(t.getType());
  }
  auto op = scf::IfOp::create(builder, loc, types, predicate,
                              /*addThenBlock=*/false, /*addElseBlock=*/false);
  op.getThenRegion().takeBody(draft.getThenRegion());
  op.getElseRegion().takeBody(draft.getElseRegion());
  draft->erase();
  ValueRange rest = op.getResults();
  for (auto [i, kind] : llvm::enumerate(merged)) {
    TensorValue v = valueFromParts(kind, rest);
    if (!node.output(i).empty())
      table[node.output(i)] = v;
  }
  return success();
}

Value GraphImporter::castToCarried(Value v, Type want, Location loc) {
  if (v.getType() == want)
    return v;
  auto got = dyn_cast<RankedTensorType>(v.getType());
  auto target = dyn_cast<RankedTensorType>(want);
  if (!got || !target || got.getRank() != target.getRank() ||
      got.getElementType() != target.getElementType() ||
      !target.hasStaticShape())
    return {};
  Value ok = arith::ConstantIntOp::create(builder, loc, builder.getI1Type(), 1);
  for (int64_t d = 0; d < got.getRank(); ++d) {
    if (!got.isDynamicDim(d)) {
      if (got.getDimSize(d) != target.getDimSize(d))
        return {};
      continue;
    }
    Value size = tensor::DimOp::create(builder, loc, v, d);
    ok = arith::AndIOp::create(
        builder, loc, ok,
        arith::CmpIOp::create(
            builder, loc, arith::CmpIPredicate::eq, size,
            arith::ConstantIndexOp::create(builder, loc, target.getDimSize(d))));
  }
  // Zeros of the wanted shape stand in when the sizes differ (the call
  // fails), so the cast below always holds.
  Value zeros = arith::ConstantOp::create(
      builder, loc, DenseElementsAttr::get(target, builder.getZeroAttr(target.getElementType())));
  Value fallback = tensor::CastOp::create(builder, loc, got, zeros);
  IndexMath m(builder, loc);
  return tensor::CastOp::create(builder, loc, target,
                                required(m, ok, v, fallback));
}

FailureOr<SmallVector<Value>> GraphImporter::stackedLoop(
    const onnx::GraphProto &body, ValueRange carried, int64_t length,
    int64_t leading, llvm::function_ref<void(ValueTable &, Value, ValueRange)> bind,
    llvm::function_ref<LogicalResult(ArrayRef<Value>)> checkLeading,
    ArrayRef<int64_t> outAxes, ArrayRef<int64_t> outDirections, Location loc,
    const ValueTable &table, llvm::function_ref<InFlightDiagnostic()> error,
    Value runLength) {
  size_t numCarried = carried.size();
  size_t numOuts = body.output_size() - leading - numCarried;
  auto idx = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(builder, loc, v);
  };
  Value upper = runLength ? runLength : idx(length);
  // The body is imported into a loop that carries the carried values only;
  // the stacked outputs' types are known after it, and the loop that also
  // carries them takes over its block.
  auto draft =
      scf::ForOp::create(builder, loc, idx(0), upper, idx(1), carried);
  Block *block = draft.getBody();
  if (!block->empty())
    block->back().erase(); // the implicit yield of a loop carrying nothing
  auto fail = [&](InFlightDiagnostic d) -> FailureOr<SmallVector<Value>> {
    draft->erase();
    return d;
  };
  SmallVector<Value> outs;
  {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(block);
    ValueTable local = table;
    bind(local, draft.getInductionVar(), draft.getRegionIterArgs());
    if (failed(importSubgraph(body, local))) {
      draft->erase();
      return failure();
    }
    for (const auto &out : body.output()) {
      auto it = local.find(out.name());
      if (it == local.end())
        return fail(error() << "body output '" << out.name()
                            << "' is not produced by any node");
      if (!it->second.value)
        return fail(error() << "body output '" << out.name() << "' is "
                            << kindName(it->second)
                            << " (only tensors can be scan outputs or leave "
                               "this loop's body)");
      outs.push_back(it->second.value);
    }
    if (failed(checkLeading(ArrayRef<Value>(outs).take_front(leading)))) {
      draft->erase();
      return failure();
    }
    for (size_t i = 0; i < numCarried; ++i) {
      Value next = castToCarried(outs[leading + i], carried[i].getType(), loc);
      if (!next)
        return fail(error() << "loop-carried value " << i
                            << " enters the body as "
                            << typeText(carried[i].getType())
                            << " but leaves it as "
                            << typeText(outs[leading + i].getType()));
      // A scan output that is the same value gets the checked sizes too.
      for (size_t k = leading + numCarried; k < outs.size(); ++k)
        if (outs[k] == outs[leading + i])
          outs[k] = next;
      outs[leading + i] = next;
    }
  }

  // One accumulator per stacked output, the sequence inserted at its axis.
  SmallVector<Value> inits(carried.begin(), carried.end());
  SmallVector<int64_t> axes;
  for (size_t k = 0; k < numOuts; ++k) {
    Value out = outs[leading + numCarried + k];
    auto type = dyn_cast<RankedTensorType>(out.getType());
    int64_t rank = type ? type.getRank() : 0;
    int64_t axis = outAxes[k] < 0 ? outAxes[k] + rank + 1 : outAxes[k];
    if (!type || !type.hasStaticShape() || axis < 0 || axis > rank)
      return fail(error() << "scan output " << k << " ("
                          << typeText(out.getType())
                          << ") cannot be stacked along axis " << outAxes[k]);
    SmallVector<int64_t> shape(type.getShape());
    shape.insert(shape.begin() + axis, length);
    axes.push_back(axis);
    SmallVector<Value> dynamicLength;
    if (runLength)
      dynamicLength.push_back(runLength);
    inits.push_back(tensor::EmptyOp::create(builder, loc, shape,
                                            type.getElementType(),
                                            dynamicLength));
  }
  auto loop = scf::ForOp::create(builder, loc, idx(0), upper, idx(1), inits);
  for (Value init : ArrayRef<Value>(inits).drop_front(numCarried))
    block->addArgument(init.getType(), loc);
  {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(block);
    Value iv = block->getArgument(0);
    SmallVector<Value> yields(outs.begin() + leading,
                              outs.begin() + leading + numCarried);
    for (size_t k = 0; k < numOuts; ++k) {
      Value acc = block->getArgument(1 + numCarried + k);
      auto accType = cast<RankedTensorType>(acc.getType());
      int64_t rank = accType.getRank();
      SmallVector<OpFoldResult> offsets(rank, builder.getIndexAttr(0)),
          sizes, strides(rank, builder.getIndexAttr(1));
      for (int64_t d = 0; d < rank; ++d)
        sizes.push_back(
            builder.getIndexAttr(d == axes[k] ? 1 : accType.getDimSize(d)));
      offsets[axes[k]] =
          outDirections[k]
              ? OpFoldResult(arith::SubIOp::create(
                                 builder, loc,
                                 arith::SubIOp::create(builder, loc, upper, idx(1)),
                                 iv)
                                 .getResult())
              : OpFoldResult(iv);
      yields.push_back(tensor::InsertSliceOp::create(
          builder, loc, outs[leading + numCarried + k], acc, offsets, sizes,
          strides));
    }
    scf::YieldOp::create(builder, loc, yields);
  }
  loop.getRegion().takeBody(draft.getRegion());
  draft->erase();
  return SmallVector<Value>(loop.getResults());
}

FailureOr<SmallVector<Value>> GraphImporter::scanLoop(
    const onnx::GraphProto &body, ValueRange states, ValueRange scans,
    ArrayRef<int64_t> inAxes, ArrayRef<int64_t> inDirections,
    ArrayRef<int64_t> outAxes, ArrayRef<int64_t> outDirections,
    int64_t length, Location loc, const ValueTable &table,
    llvm::function_ref<InFlightDiagnostic()> error) {
  size_t numStates = states.size();
  // The body's inputs: the states, then each scan input's step.
  auto bind = [&](ValueTable &local, Value iv, ValueRange iterArgs) {
    for (size_t i = 0; i < numStates; ++i)
      local[body.input(i).name()] = TensorValue{iterArgs[i], {}};
    for (auto [j, scan] : llvm::enumerate(scans)) {
      auto type = cast<RankedTensorType>(scan.getType());
      int64_t axis = inAxes[j], rank = type.getRank();
      SmallVector<OpFoldResult> offsets(rank, builder.getIndexAttr(0)),
          sizes, strides(rank, builder.getIndexAttr(1));
      SmallVector<int64_t> sliceShape;
      for (int64_t d = 0; d < rank; ++d) {
        sizes.push_back(
            builder.getIndexAttr(d == axis ? 1 : type.getDimSize(d)));
        if (d != axis)
          sliceShape.push_back(type.getDimSize(d));
      }
      offsets[axis] =
          inDirections[j]
              ? OpFoldResult(
                    arith::SubIOp::create(
                        builder, loc,
                        arith::ConstantIndexOp::create(builder, loc, length - 1),
                        iv)
                        .getResult())
              : OpFoldResult(iv);
      Value slice = tensor::ExtractSliceOp::create(
          builder, loc,
          RankedTensorType::get(sliceShape, type.getElementType()), scan,
          offsets, sizes, strides);
      local[body.input(numStates + j).name()] = TensorValue{slice, {}};
    }
  };
  return stackedLoop(
      body, states, length, /*leading=*/0, bind,
      [](ArrayRef<Value>) { return success(); }, outAxes, outDirections, loc,
      table, error);
}

LogicalResult GraphImporter::importScan(const onnx::NodeProto &node,
                                        StringRef name, Location loc,
                                        ValueTable &table) {
  auto error = [&]() { return nodeError(loc, name, "Scan"); };
  bool opset8 = model.opset < 9;
  const onnx::GraphProto *body = nullptr;
  std::optional<int64_t> numScans;
  std::optional<SmallVector<int64_t>> inAxes, inDirections, outAxes,
      outDirections;
  for (const auto &a : node.attribute()) {
    auto ints = [&]() {
      return SmallVector<int64_t>(a.ints().begin(), a.ints().end());
    };
    if (a.name() == "body" && a.type() == onnx::AttributeProto::GRAPH)
      body = &a.g();
    else if (a.name() == "num_scan_inputs" &&
             a.type() == onnx::AttributeProto::INT)
      numScans = a.i();
    else if (a.type() == onnx::AttributeProto::INTS &&
             ((opset8 && a.name() == "directions") ||
              (!opset8 && a.name() == "scan_input_directions")))
      inDirections = ints();
    else if (!opset8 && a.type() == onnx::AttributeProto::INTS &&
             a.name() == "scan_input_axes")
      inAxes = ints();
    else if (!opset8 && a.type() == onnx::AttributeProto::INTS &&
             a.name() == "scan_output_axes")
      outAxes = ints();
    else if (!opset8 && a.type() == onnx::AttributeProto::INTS &&
             a.name() == "scan_output_directions")
      outDirections = ints();
    else
      return error() << "attribute '" << a.name() << "' is not supported";
  }
  if (!body || !numScans)
    return error() << "needs the 'body' graph and 'num_scan_inputs'";
  // Opset 8 leads with the optional sequence_lens.
  SmallVector<Value> operands;
  for (int i = opset8 ? 1 : 0; i < node.input_size(); ++i) {
    if (node.input(i).empty())
      return error() << "input " << i << " is missing";
    operands.push_back(table[node.input(i)].value);
  }
  if (opset8 && node.input_size() > 0 && !node.input(0).empty())
    return error() << "input 'sequence_lens' is not supported (every "
                      "sequence runs its full length)";
  int64_t m = *numScans, n = static_cast<int64_t>(operands.size()) - m;
  if (m < 1 || n < 0)
    return error() << "'num_scan_inputs' is " << m << " with "
                   << operands.size() << " state and scan inputs";
  int64_t k = node.output_size() - n;
  if (k < 0 || body->input_size() != n + m || body->output_size() != n + k)
    return error() << "the body takes " << body->input_size()
                   << " inputs and gives " << body->output_size()
                   << " outputs; the node has " << n << " states, " << m
                   << " scan inputs and " << node.output_size() << " outputs";
  auto defaults = [](std::optional<SmallVector<int64_t>> &v, int64_t count) {
    if (!v)
      v = SmallVector<int64_t>(count, 0);
  };
  defaults(inAxes, m);
  defaults(inDirections, m);
  defaults(outAxes, k);
  defaults(outDirections, k);
  if (static_cast<int64_t>(inAxes->size()) != m ||
      static_cast<int64_t>(inDirections->size()) != m ||
      static_cast<int64_t>(outAxes->size()) != k ||
      static_cast<int64_t>(outDirections->size()) != k)
    return error() << "the axes and directions must have one entry per scan "
                      "input and per scan output";
  for (int64_t d : llvm::concat<int64_t>(*inDirections, *outDirections))
    if (d != 0 && d != 1)
      return error() << "a direction is " << d << " (0 forward, 1 reverse)";
  for (Value v : operands) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t || !t.hasStaticShape())
      return error() << "inputs must have static shapes, not "
                     << typeText(v.getType());
  }
  auto shapeOf = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getShape();
  };
  // Opset 8 scans every input along axis 1, after the batch axis 0.
  int64_t batchAxis = opset8 ? 1 : 0;
  int64_t length = -1;
  for (int64_t j = 0; j < m; ++j) {
    int64_t rank = shapeOf(operands[n + j]).size();
    int64_t &axis = (*inAxes)[j];
    if (opset8)
      axis = 1;
    if (axis < 0)
      axis += rank;
    if (axis < batchAxis || axis >= rank)
      return error() << "scan input " << j << " of rank " << rank
                     << " has no axis " << axis;
    int64_t len = shapeOf(operands[n + j])[axis];
    if (length >= 0 && len != length)
      return error() << "scan inputs have different lengths (" << length
                     << " and " << len << ")";
    length = len;
  }
  if (length < 1)
    return error() << "an empty sequence is not supported";

  ValueRange states = ValueRange(operands).take_front(n);
  ValueRange scans = ValueRange(operands).drop_front(n);
  SmallVector<Value> results;
  if (!opset8) {
    FailureOr<SmallVector<Value>> r =
        scanLoop(*body, states, scans, *inAxes, *inDirections, *outAxes,
                 *outDirections, length, loc, table, error);
    if (failed(r))
      return failure();
    results = std::move(*r);
  } else {
    // One scan per batch entry, stacked again on axis 0.
    int64_t batch = shapeOf(operands.front())[0];
    for (Value v : operands)
      if (shapeOf(v).empty() || shapeOf(v)[0] != batch)
        return error() << "every input needs the batch axis 0 of size "
                       << batch;
    tessel::TosaBuilder tb(builder, loc);
    auto entry = [&](Value v, int64_t b) {
      ArrayRef<int64_t> shape = shapeOf(v);
      SmallVector<int64_t> start(shape.size(), 0), size(shape);
      start[0] = b;
      size[0] = 1;
      return tb.reshape(tb.slice(v, start, size), shape.drop_front());
    };
    SmallVector<int64_t> axes0(m, 0), outAxes0(k, 0), outDirections0(k, 0);
    SmallVector<SmallVector<Value>> perBatch;
    for (int64_t b = 0; b < batch; ++b) {
      SmallVector<Value> s, x;
      for (Value v : states)
        s.push_back(entry(v, b));
      for (Value v : scans)
        x.push_back(entry(v, b));
      FailureOr<SmallVector<Value>> r =
          scanLoop(*body, s, x, axes0, *inDirections, outAxes0,
                   outDirections0, length, loc, table, error);
      if (failed(r))
        return failure();
      perBatch.push_back(std::move(*r));
    }
    for (int64_t i = 0; i < n + k; ++i) {
      SmallVector<Value> parts;
      for (int64_t b = 0; b < batch; ++b) {
        Value v = perBatch[b][i];
        SmallVector<int64_t> shape(shapeOf(v));
        shape.insert(shape.begin(), 1);
        parts.push_back(tb.reshape(v, shape));
      }
      results.push_back(parts.size() == 1 ? parts.front()
                                          : tb.concat(parts, 0));
    }
  }
  for (auto [i, v] : llvm::enumerate(results))
    if (!node.output(i).empty())
      table[node.output(i)] = TensorValue{v, {}};
  return success();
}

FailureOr<Value>
GraphImporter::oneElement(Value v, Type elem, StringRef what, Location loc,
                          function_ref<InFlightDiagnostic()> error) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || type.getElementType() != elem || !type.hasStaticShape() ||
      type.getNumElements() != 1) {
    InFlightDiagnostic d = error();
    d << what << " must be a one-element " << elem << " tensor, not "
      << typeText(v.getType());
    return d;
  }
  SmallVector<Value> zeros(type.getRank(),
                           arith::ConstantIndexOp::create(builder, loc, 0));
  return tensor::ExtractOp::create(builder, loc, v, zeros).getResult();
}

const onnx::GraphProto *GraphImporter::bodyAttribute(
    const onnx::NodeProto &node, function_ref<InFlightDiagnostic()> error) {
  const onnx::GraphProto *body = nullptr;
  for (const auto &a : node.attribute()) {
    if (a.name() != "body" || a.type() != onnx::AttributeProto::GRAPH) {
      error() << "attribute '" << a.name() << "' is not supported";
      return nullptr;
    }
    body = &a.g();
  }
  if (!body)
    error() << "needs the 'body' graph";
  return body;
}

LogicalResult GraphImporter::importLoop(const onnx::NodeProto &node,
                                        StringRef name, Location loc,
                                        ValueTable &table) {
  auto error = [&]() { return nodeError(loc, name, "Loop"); };
  const onnx::GraphProto *body = bodyAttribute(node, error);
  if (!body)
    return failure();
  if (node.input_size() < 2)
    return error() << "takes the trip count and the condition (either may "
                      "be empty), then the loop-carried values";
  int64_t n = node.input_size() - 2;
  if (body->input_size() != n + 2 || body->output_size() < n + 1)
    return error() << "the body takes " << body->input_size()
                   << " inputs and gives " << body->output_size()
                   << " outputs for " << n << " loop-carried values";
  int64_t k = body->output_size() - n - 1;
  if (node.output_size() > n + k)
    return error() << "has " << node.output_size() << " outputs; the body "
                   << "gives " << n << " loop-carried values and " << k
                   << " scan outputs";
  if (k > 0)
    return importCountedLoop(node, name, loc, table, *body, n, k);

  auto scalar = [&](Value v, Type elem, StringRef what) {
    return oneElement(v, elem, what, loc, error);
  };
  Type i64 = builder.getI64Type(), i1 = builder.getI1Type();
  Value tripCount, cond;
  if (!node.input(0).empty()) {
    FailureOr<Value> m = scalar(table[node.input(0)].value, i64,
                                "the trip count 'M'");
    if (failed(m))
      return failure();
    tripCount = *m;
  }
  if (!node.input(1).empty()) {
    FailureOr<Value> c = scalar(table[node.input(1)].value, i1,
                                "the condition 'cond'");
    if (failed(c))
      return failure();
    cond = *c;
  } else {
    cond = arith::ConstantIntOp::create(builder, loc, i1, 1);
  }
  SmallVector<Value> inits = {arith::ConstantIntOp::create(builder, loc, i64, 0),
                              cond};
  // A carried sequence or optional is carried as its parts
  // (PackedSequence.h); `kinds` rebuilds it from them.
  SmallVector<TensorValue> kinds;
  for (int64_t i = 0; i < n; ++i) {
    if (node.input(2 + i).empty())
      return error() << "loop-carried value " << i << " is missing";
    kinds.push_back(table[node.input(2 + i)]);
    FailureOr<SmallVector<Value>> parts = valueParts(builder, loc, kinds.back());
    if (failed(parts))
      return failure();
    inits.append(*parts);
  }
  SmallVector<Type> types = llvm::to_vector(ValueRange(inits).getTypes());
  SmallVector<TensorValue> resultKinds(kinds);

  // The body's failure is recorded and the loop erased after it is built:
  // the region builders must finish their blocks.
  bool failedBody = false;
  auto loop = scf::WhileOp::create(
      builder, loc, types, inits,
      [&](OpBuilder &b, Location l, ValueRange args) {
        Value keep = args[1];
        if (tripCount)
          keep = arith::AndIOp::create(
              b, l, keep,
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, args[0],
                                    tripCount));
        scf::ConditionOp::create(b, l, keep, args);
      },
      [&](OpBuilder &b, Location l, ValueRange args) {
        OpBuilder::InsertionGuard guard(builder);
        builder.setInsertionPoint(b.getInsertionBlock(),
                                  b.getInsertionPoint());
        ValueTable local = table;
        local[body->input(0).name()] = TensorValue{
            tensor::FromElementsOp::create(
                builder, l, RankedTensorType::get({}, i64), args[0]),
            {}};
        local[body->input(1).name()] = TensorValue{
            tensor::FromElementsOp::create(
                builder, l, RankedTensorType::get({}, i1), args[1]),
            {}};
        ValueRange rest = args.drop_front(2);
        for (int64_t i = 0; i < n; ++i)
          local[body->input(2 + i).name()] = valueFromParts(kinds[i], rest);
        SmallVector<Value> next = {arith::AddIOp::create(
            builder, l, args[0], arith::ConstantIntOp::create(builder, l, i64, 1))};
        failedBody = failed(importSubgraph(*body, local));
        for (int64_t i = 0; !failedBody && i <= n; ++i) {
          auto it = local.find(body->output(i).name());
          if (it == local.end() || (i == 0 && !it->second.value)) {
            error() << "body output '" << body->output(i).name()
                    << (it == local.end() ? "' is not produced by any node"
                                          : "' (the condition) is not a "
                                            "tensor");
            failedBody = true;
            break;
          }
          if (i == 0) {
            FailureOr<Value> c =
                scalar(it->second.value, i1, "the body's condition output");
            failedBody = failed(c);
            if (!failedBody)
              next.push_back(*c);
            continue;
          }
          TensorValue out = it->second;
          if (kinds[i - 1].optional && !out.optional) {
            // An optional carried in and its value out (ONNX allows it):
            // the value, present.
            auto opt = std::make_shared<OptionalValue>();
            opt->present = materializeConstant(
                builder, l,
                DenseElementsAttr::get(RankedTensorType::get({}, i1), true));
            opt->element = out;
            out = TensorValue{Value(), {}, nullptr, std::move(opt)};
          }
          FailureOr<TensorValue> kind = mergeKinds(kinds[i - 1], out);
          FailureOr<SmallVector<Value>> parts =
              failed(kind) ? FailureOr<SmallVector<Value>>(failure())
                           : valueParts(builder, l, out);
          if (failed(kind)) {
            error() << "loop-carried value " << i - 1 << " enters the body as "
                    << kindName(kinds[i - 1]) << " but leaves it as "
                    << kindName(it->second);
            failedBody = true;
            break;
          }
          if (failed(parts)) {
            failedBody = true;
            break;
          }
          resultKinds[i - 1] = *kind;
          for (Value v : *parts) {
            unsigned at = next.size(); // after the count and condition
            if (Value carried = castToCarried(v, types[at], l)) {
              next.push_back(carried);
              continue;
            }
            error() << "loop-carried value " << i - 1 << " enters the body as "
                    << typeText(types[at]) << " but leaves it as "
                    << typeText(v.getType());
            failedBody = true;
            break;
          }
          if (failedBody)
            break;
        }
        if (failedBody)
          next.assign(args.begin(), args.end());
        scf::YieldOp::create(builder, l, next);
      });
  if (failedBody) {
    loop->erase();
    return failure();
  }
  ValueRange rest = loop.getResults().drop_front(2);
  for (int64_t i = 0; i < n; ++i) {
    TensorValue v = valueFromParts(resultKinds[i], rest);
    if (i < node.output_size() && !node.output(i).empty())
      table[node.output(i)] = v;
  }
  return success();
}

LogicalResult GraphImporter::importCountedLoop(const onnx::NodeProto &node,
                                               StringRef name, Location loc,
                                               ValueTable &table,
                                               const onnx::GraphProto &body,
                                               int64_t n, int64_t k) {
  auto error = [&]() { return nodeError(loc, name, "Loop"); };
  // Scan outputs have one entry per iteration: nothing may end the loop
  // early, so M (a constant or read at run time) is the count.
  onnx::NodeProto named = node;
  named.set_name(name.str());
  NodeContext context(named, model.opset, builder, loc, table, inferred,
                      &deferred);
  auto oneValue = [&](unsigned i) -> std::optional<int64_t> {
    DenseElementsAttr c = context.constantInput(i);
    if (!c || c.getNumElements() != 1)
      return std::nullopt;
    if (c.getElementType().isInteger(1))
      return *c.getValues<bool>().begin() ? 1 : 0;
    if (c.getElementType().isInteger(64))
      return (*c.getValues<APInt>().begin()).getSExtValue();
    return std::nullopt;
  };
  if (node.input(0).empty())
    return error() << "scan outputs need the trip count 'M' (their length "
                      "is the number of iterations)";
  // The step count: M (0 when the initial condition is false), a constant
  // or read at run time; the scan outputs then have that many rows.
  std::optional<int64_t> trips = oneValue(0);
  std::optional<int64_t> cond =
      node.input(1).empty() ? std::optional<int64_t>(1) : oneValue(1);
  Value runTrips;
  if (trips && cond) {
    if (*cond == 0)
      trips = 0;
    if (*trips < 1)
      return error() << "runs no iteration, which leaves its scan outputs "
                        "empty (Tessel has no empty tensors)";
  } else {
    auto element = [&](unsigned i, Type elem, StringRef what) {
      return oneElement(table[node.input(i)].value, elem, what, loc, error);
    };
    FailureOr<Value> m = element(0, builder.getI64Type(), "the trip count 'M'");
    if (failed(m))
      return failure();
    Value count = arith::MaxSIOp::create(
        builder, loc, *m, arith::ConstantIntOp::create(builder, loc, builder.getI64Type(), 0));
    if (!node.input(1).empty()) {
      FailureOr<Value> c = element(1, builder.getI1Type(), "the condition 'cond'");
      if (failed(c))
        return failure();
      count = arith::SelectOp::create(
          builder, loc, *c, count,
          arith::ConstantIntOp::create(builder, loc, builder.getI64Type(), 0));
    }
    // At most 2^31 steps (each stacks a row); more fails the call.
    Value ok = arith::CmpIOp::create(
        builder, loc, arith::CmpIPredicate::sle, count,
        arith::ConstantIntOp::create(builder, loc, builder.getI64Type(), int64_t(1) << 31));
    IndexMath im(builder, loc);
    Value countIndex = arith::IndexCastOp::create(builder, loc, builder.getIndexType(), count);
    auto indexTensor = RankedTensorType::get({1}, builder.getIndexType());
    Value checked = required(
        im, ok, tensor::FromElementsOp::create(builder, loc, indexTensor, ValueRange{countIndex}),
        tensor::FromElementsOp::create(builder, loc, indexTensor, ValueRange{im.c(0)}));
    runTrips = tensor::ExtractOp::create(builder, loc, checked, ValueRange{im.c(0)});
  }
  SmallVector<Value> carried;
  for (int64_t i = 0; i < n; ++i) {
    if (!table[node.input(2 + i)].value)
      return error() << "loop-carried value " << i << " is "
                     << kindName(table[node.input(2 + i)])
                     << ", which a Loop with scan outputs does not carry yet";
    carried.push_back(table[node.input(2 + i)].value);
  }
  Type i64 = builder.getI64Type(), i1 = builder.getI1Type();
  Value condIn;
  auto bind = [&](ValueTable &local, Value iv, ValueRange iterArgs) {
    Value i = arith::IndexCastOp::create(builder, loc, i64, iv);
    local[body.input(0).name()] = TensorValue{
        tensor::FromElementsOp::create(builder, loc,
                                       RankedTensorType::get({}, i64), i),
        {}};
    auto condType = RankedTensorType::get({}, i1);
    auto trueAttr = DenseElementsAttr::get(condType, true);
    condIn = materializeConstant(builder, loc, trueAttr);
    local[body.input(1).name()] = TensorValue{condIn, trueAttr};
    for (int64_t j = 0; j < n; ++j)
      local[body.input(2 + j).name()] = TensorValue{iterArgs[j], {}};
  };
  // The body's condition must stay true: the condition it was given
  // (an Identity), or a true constant.
  auto checkCond = [&](ArrayRef<Value> leading) -> LogicalResult {
    Value c = leading.front();
    DenseElementsAttr value;
    if (c == condIn ||
        (matchPattern(c, m_Constant(&value)) &&
         value.getElementType().isInteger(1) && value.isSplat() &&
         value.getSplatValue<bool>()))
      return success();
    return error() << "the body's condition output may turn false, which "
                      "would end the loop early and shorten its scan "
                      "outputs (not supported)";
  };
  SmallVector<int64_t> zeros(k, 0);
  FailureOr<SmallVector<Value>> results =
      stackedLoop(body, carried, runTrips ? ShapedType::kDynamic : *trips,
                  /*leading=*/1, bind, checkCond, zeros, zeros, loc, table,
                  error, runTrips);
  if (failed(results))
    return failure();
  for (int64_t i = 0; i < node.output_size(); ++i)
    if (!node.output(i).empty())
      table[node.output(i)] = TensorValue{(*results)[i], {}};
  return success();
}
