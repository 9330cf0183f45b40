//===- GateEvaluator.h - reference interpreter for gating subgraphs -*- C++ -*-===//
//
// The MoE raising must prove that a graph's per-expert gate factor is the
// top-k gate a compose.route computes, whatever ops the exporter spelled it
// with (ScatterElements + Slice, one-hot sums, Equal masks, Where). It does
// so by running the gating nodes on synthetic top-k results and comparing
// with the expected weights. This is a small reference interpreter over
// double arrays for the ops such subgraphs use; any other op makes
// evaluation fail, and then the graph is simply not raised.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_IMPORTERS_ONNX_MOE_GATEEVALUATOR_H
#define TESSEL_LIB_IMPORTERS_ONNX_MOE_GATEEVALUATOR_H

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/SmallVector.h"

#include "onnx/onnx_pb.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlir::tessel::onnx_import {

/// A dense row-major tensor of doubles that remembers whether its ONNX type
/// is floating point, integer or bool (for casts, division and printing).
struct EvalTensor {
  enum class Kind { Float, Int, Bool };
  llvm::SmallVector<int64_t> shape;
  std::vector<double> data;
  Kind kind = Kind::Float;

  int64_t numElements() const;
};

/// Converts an initializer or Constant value; nullopt for unsupported types.
std::optional<EvalTensor> toEvalTensor(const onnx::TensorProto &t,
                                       MLIRContext *context);

class GateEvaluator {
public:
  /// `producer` maps a value name to the index of the node producing it;
  /// `initializers` the graph's initializers by name (converted only when
  /// a gate reads one: weights never are).
  GateEvaluator(
      MLIRContext *context, const onnx::GraphProto &graph, int64_t opset,
      const std::map<std::string, int> &producer,
      const std::map<std::string, const onnx::TensorProto *> &initializers)
      : context(context), graph(graph), opset(opset), producer(producer),
        initializers(initializers) {}

  /// Fixes the value of a graph value (the top-k results) and forgets every
  /// value computed from earlier bindings.
  void bind(const std::string &name, EvalTensor value);
  void clear() { memo.clear(); }

  /// The value of `name`, computed from bindings and constants; nullopt if
  /// it depends on anything else or on an op the interpreter lacks.
  std::optional<EvalTensor> eval(const std::string &name);

private:
  std::optional<EvalTensor> evalNode(const onnx::NodeProto &node,
                                     unsigned output);

  MLIRContext *context;
  const onnx::GraphProto &graph;
  int64_t opset;
  const std::map<std::string, int> &producer;
  const std::map<std::string, const onnx::TensorProto *> &initializers;
  std::map<std::string, std::optional<EvalTensor>> constants;
  std::map<std::string, EvalTensor> bound;
  std::map<std::string, std::optional<EvalTensor>> memo;
};

} // namespace mlir::tessel::onnx_import

#endif // TESSEL_LIB_IMPORTERS_ONNX_MOE_GATEEVALUATOR_H
