//===- ControlFlow.cpp - ONNX If and Scan --------------------------------===//
//
// Control flow imports subgraphs, so the graph importer handles it itself
// rather than a converter: an If becomes scf.if, a Scan an scf.for, and the
// bodies are imported node by node into their regions, reading the outer
// scope's values directly, as ONNX subgraphs do.
//
//===----------------------------------------------------------------------===//
#include "GraphImporter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::tessel::onnx_import;
using namespace mlir::tessel::onnx_import::detail;

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
  auto error = [&]() {
    InFlightDiagnostic d = emitError(loc);
    d << "node '" << name << "' (If, opset " << model.opset << "): ";
    return d;
  };
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
  auto importBranch = [&](int b, SmallVector<Value> &outs) -> LogicalResult {
    ValueTable local = table;
    if (failed(importSubgraph(*branches[b], local)))
      return failure();
    for (const auto &out : branches[b]->output()) {
      auto it = local.find(out.name());
      if (it == local.end())
        return error() << "branch '" << branches[b]->name() << "' output '"
                       << out.name() << "' is not produced by any node";
      outs.push_back(it->second.value);
    }
    return success();
  };

  // A condition known at compile time (exporters fold many): the taken
  // branch only, in place.
  if (cond.constant) {
    SmallVector<Value> outs;
    if (failed(importBranch(*cond.constant.getValues<bool>().begin() ? 0 : 1,
                            outs)))
      return failure();
    for (auto [i, v] : llvm::enumerate(outs))
      if (!node.output(i).empty())
        table[node.output(i)] = TensorValue{v, {}};
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
  SmallVector<Value> outs[2];
  for (int b = 0; b < 2; ++b) {
    Region &region = b == 0 ? draft.getThenRegion() : draft.getElseRegion();
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(&region.emplaceBlock());
    LogicalResult imported = importBranch(b, outs[b]);
    if (succeeded(imported))
      scf::YieldOp::create(builder, loc, outs[b]);
    if (failed(imported)) {
      draft->erase();
      return failure();
    }
  }
  SmallVector<Type> types;
  for (auto [i, pair] : llvm::enumerate(llvm::zip(outs[0], outs[1]))) {
    auto [t, e] = pair;
    if (t.getType() != e.getType()) {
      InFlightDiagnostic d = error();
      d << "output " << i << " is " << typeText(t.getType())
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
  for (auto [i, result] : llvm::enumerate(op.getResults()))
    if (!node.output(i).empty())
      table[node.output(i)] = TensorValue{result, {}};
  return success();
}

