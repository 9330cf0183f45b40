//===- GraphImporter.h - ONNX graph -> func.func (internal) -----*- C++ -*-===//
//
// The importer's walk over one model: GraphImporter.cpp (the graph, its
// initializers and nodes, mixtures of experts) and ControlFlow.cpp (If,
// Scan and Loop, whose subgraphs it imports recursively).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_IMPORTERS_ONNX_GRAPHIMPORTER_H
#define TESSEL_LIB_IMPORTERS_ONNX_GRAPHIMPORTER_H

#include "DeferredWeights.h"
#include "ModelLoader.h"
#include "NodeContext.h"
#include "tessel/Importers/ONNX/ONNXImporter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <unordered_map>

namespace mlir::tessel::onnx_import::detail {

/// Whether `opType` is an ONNX sequence op (Sequences.cpp).
bool isSequenceOp(StringRef opType);
/// Imports a sequence op: its sequence inputs and outputs live in `table`
/// as SequenceValues.
LogicalResult importSequenceOp(NodeContext &ctx, ValueTable &table);

inline std::string typeText(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

class GraphImporter {
public:
  GraphImporter(MLIRContext *ctx, LoadedModel &model, StringRef path,
                const ImportOptions &options)
      : ctx(ctx), model(model), path(path.str()), options(options),
        builder(ctx), fileLoc(FileLineColLoc::get(ctx, path, 0, 0)),
        deferred(options.deferredWeightMinBytes) {}

  OwningOpRef<ModuleOp> run();

private:
  /// The tensor type of a graph input, or an error naming it: a symbolic
  /// dimension (ONNX's dim_param, or none) becomes a dynamic one, its name
  /// in `dimNames` ("" at static dimensions).
  FailureOr<RankedTensorType> inputType(const onnx::ValueInfoProto &info,
                                        SmallVector<std::string> &dimNames) {
    return inputType(info.name(), info.type(), dimNames);
  }
  /// The same for a value `name` of ONNX type `type` (a graph input, or
  /// the tensor a sequence or optional input holds).
  FailureOr<RankedTensorType> inputType(const std::string &name,
                                        const onnx::TypeProto &type,
                                        SmallVector<std::string> &dimNames);
  /// One function argument of a graph input (GraphImporter.cpp).
  struct GraphArg {
    Type type;
    std::string name, part;
    SmallVector<std::string> dimNames;
  };
  /// The function arguments of a graph input that is a sequence or an
  /// optional: its parts (docs/artifact-abi.md).
  LogicalResult partsOfInput(const onnx::ValueInfoProto &info,
                             SmallVector<GraphArg> &args);
  /// The graph input `info` from its arguments `args` (partsOfInput's).
  FailureOr<TensorValue> inputFromParts(const onnx::ValueInfoProto &info,
                                        ValueRange args);
  /// Some graph input has a symbolic dimension (an op that does not take
  /// run-time sizes then suggests pinning it with --shape).
  bool symbolicInputs = false;
  void collectInferredTypes();
  LogicalResult importInitializers();
  LogicalResult importNode(const onnx::NodeProto &node, unsigned index,
                           ValueTable &table);
  LogicalResult importNode(const onnx::NodeProto &node, unsigned index) {
    return importNode(node, index, values);
  }

  /// ONNX If: a compile-time condition imports the taken branch in place;
  /// otherwise scf.if, whose regions read outer values directly (as ONNX
  /// subgraphs read the outer scope).
  LogicalResult importIf(const onnx::NodeProto &node, StringRef name,
                         Location loc, ValueTable &table);
  /// ONNX Scan (opset 8 with its batch axis, and 9+): an scf.for over the
  /// sequence carrying the state variables and the scan outputs.
  LogicalResult importScan(const onnx::NodeProto &node, StringRef name,
                           Location loc, ValueTable &table);
  /// ONNX Loop: without scan outputs an scf.while carrying the iteration
  /// number, the condition and the loop-carried values (the trip count and
  /// the condition may be run-time values); with them importCountedLoop.
  LogicalResult importLoop(const onnx::NodeProto &node, StringRef name,
                           Location loc, ValueTable &table);
  /// The element of `v`, a one-element tensor of `elem` (a trip count, a
  /// condition), or the error (naming `what`) that it is not one.
  FailureOr<Value> oneElement(Value v, Type elem, StringRef what, Location loc,
                              function_ref<InFlightDiagnostic()> error);
  /// The node's only attribute, the graph 'body' (Loop, SequenceMap), or
  /// null after `error` reported what is wrong.
  static const onnx::GraphProto *
  bodyAttribute(const onnx::NodeProto &node,
                function_ref<InFlightDiagnostic()> error);
  /// ONNX SequenceMap (SequenceMap.cpp): its body per sequence position.
  LogicalResult importSequenceMap(const onnx::NodeProto &node, StringRef name,
                                  Location loc, ValueTable &table);
  /// A Loop with scan outputs: an scf.for of the trip count (their length,
  /// a compile-time constant or read at run time), when nothing can end it
  /// early.
  LogicalResult importCountedLoop(const onnx::NodeProto &node, StringRef name,
                                  Location loc, ValueTable &table,
                                  const onnx::GraphProto &body, int64_t n,
                                  int64_t k);
  /// The loop of one Scan over static `scans` (each along its axis, in its
  /// direction); the final states, then the scan outputs (each along its
  /// axis, in its direction). Errors are prefixed by `error`.
  FailureOr<SmallVector<Value>>
  scanLoop(const onnx::GraphProto &body, ValueRange states, ValueRange scans,
           ArrayRef<int64_t> inAxes, ArrayRef<int64_t> inDirections,
           ArrayRef<int64_t> outAxes, ArrayRef<int64_t> outDirections,
           int64_t length, Location loc, const ValueTable &table,
           llvm::function_ref<InFlightDiagnostic()> error);
  /// `length` steps of `body` in an scf.for: its first `leading` outputs
  /// are handed to `checkLeading`, the next ones are the `carried` values'
  /// next values, the rest are stacked along `outAxes` in `outDirections`.
  /// `bind` maps the body's inputs from the induction variable and the
  /// carried values. Returns the final carried values, then the stacked
  /// outputs. A `length` of ShapedType::kDynamic takes the step count from
  /// `runLength` (an index read at run time).
  FailureOr<SmallVector<Value>> stackedLoop(
      const onnx::GraphProto &body, ValueRange carried, int64_t length,
      int64_t leading,
      llvm::function_ref<void(ValueTable &, Value, ValueRange)> bind,
      llvm::function_ref<LogicalResult(ArrayRef<Value>)> checkLeading,
      ArrayRef<int64_t> outAxes, ArrayRef<int64_t> outDirections,
      Location loc, const ValueTable &table,
      llvm::function_ref<InFlightDiagnostic()> error, Value runLength = {});
  /// A body's next value `v` of a loop-carried value of type `want`: `v`
  /// itself, or, where `v` has sizes known only at run time that `want`
  /// fixes, `v` cast to `want` after a run-time check (a mismatch fails the
  /// call). Null when the types cannot agree.
  Value castToCarried(Value v, Type want, Location loc);
  /// An error prefixed "node 'NAME' (OP, opset N): ".
  InFlightDiagnostic nodeError(Location loc, StringRef name, StringRef opType);
  /// A subgraph's initializers and nodes into `table` (a copy of the outer
  /// scope's), at the builder's insertion point.
  LogicalResult importSubgraph(const onnx::GraphProto &graph,
                               ValueTable &table);

  MLIRContext *ctx;
  LoadedModel &model;
  std::string path;
  const ImportOptions &options;
  OpBuilder builder;
  Location fileLoc;
  ValueTable values;
  /// Large initializers, copied out of the model once (DeferredWeights.h).
  DeferredWeights deferred;
  std::unordered_map<std::string, RankedTensorType> inferred;
  /// The symbolic dimension names of graph inputs and inferred values.
  DimNameTable dimNames;
};

} // namespace mlir::tessel::onnx_import::detail

#endif // TESSEL_LIB_IMPORTERS_ONNX_GRAPHIMPORTER_H
