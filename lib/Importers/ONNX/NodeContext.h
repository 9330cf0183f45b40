//===- NodeContext.h - What an ONNX op converter sees -----------*- C++ -*-===//
//
// One NodeContext per ONNX node: typed access to inputs (with compile-time
// constants when known), attributes (every attribute a converter does not
// read is reported as unsupported, so no attribute is silently ignored),
// outputs, and diagnostics that name the node, op type and opset.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_IMPORTERS_ONNX_NODECONTEXT_H
#define TESSEL_LIB_IMPORTERS_ONNX_NODECONTEXT_H

#include "tessel/Dialect/Tessel/Utils/TosaBuilder.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include "onnx/onnx_pb.h"

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

namespace mlir::tessel::onnx_import {

class DeferredWeights;

struct SequenceValue;
struct OptionalValue;

/// An imported tensor: its SSA value and, when known at compile time (an
/// initializer, a Constant, or folded shape arithmetic), its contents. Or
/// an ONNX sequence (Sequences.cpp): `sequence` set and `value` null; or
/// an ONNX optional: `optional` set and `value` null.
struct TensorValue {
  Value value;
  DenseElementsAttr constant;
  std::shared_ptr<const SequenceValue> sequence = nullptr;
  std::shared_ptr<const OptionalValue> optional = nullptr;
};

/// An ONNX sequence, in one of two forms. Known element by element at
/// compile time (`elements`; its length is static, positions may be
/// run-time values where the elements share a shape): only the sequence
/// ops take it, and a tensor op that is given one is an error. Or packed,
/// where the length is known only at run time (a graph input, a sequence
/// built in a loop): `sizes` (tensor<?x?xi64>, one row per element, its
/// shape) and `data` (tensor<?xT>, the elements' contents one after
/// another, row-major) -- the form in which a sequence crosses the
/// artifact ABI (docs/artifact-abi.md, parts).
struct SequenceValue {
  Type elementType;            // the elements' (the ONNX sequence type's)
  SmallVector<Value> elements; // ranked tensors of elementType
  Value sizes, data;           // the packed form, when set
  /// The elements' rank where known (a packed sequence's type may not say).
  int64_t rank = ShapedType::kDynamic;
  bool packed() const { return bool(sizes); }
};

/// An ONNX optional: a run-time flag and the value it holds when set
/// (zeros, or an empty sequence, stand in when it is not).
struct OptionalValue {
  Value present; // tensor<i1>
  TensorValue element;
};

using ValueTable = std::unordered_map<std::string, TensorValue>;
/// Per ONNX value name, its dimensions' symbolic names (see inputDimNames).
using DimNameTable =
    std::unordered_map<std::string, SmallVector<std::string>>;

class NodeContext {
public:
  NodeContext(const onnx::NodeProto &node, int64_t opset, OpBuilder &builder,
              Location loc, ValueTable &values,
              const std::unordered_map<std::string, RankedTensorType>
                  &inferredTypes,
              DeferredWeights *deferred = nullptr);

  const onnx::NodeProto &node() const { return node_; }
  llvm::StringRef opType() const { return node_.op_type(); }
  int64_t opset() const { return opset_; }
  OpBuilder &builder() { return builder_; }
  Location loc() const { return loc_; }
  MLIRContext *context() const { return builder_.getContext(); }
  TosaBuilder &tosa() { return tosa_; }

  //===--- Inputs ---------------------------------------------------------===//
  unsigned numInputs() const { return node_.input_size(); }
  /// Present and not the empty name ONNX uses for a skipped optional input.
  bool hasInput(unsigned i) const;
  Value input(unsigned i) const;
  RankedTensorType inputType(unsigned i) const;
  /// Contents of input `i` if known at compile time, else null. A large
  /// initializer is materialized by the call (DeferredWeights.h): where a
  /// converter only reshapes, transposes or forwards a weight, it should
  /// check isDeferredInput first and emit the TOSA op, which the import
  /// folds into one copy of the weight.
  DenseElementsAttr constantInput(unsigned i) const;
  /// Input `i` is a large initializer whose contents are not read yet.
  bool isDeferredInput(unsigned i) const;
  /// Input `i` as int64 values; fails with a diagnostic naming `what` when
  /// the input is not a compile-time constant.
  FailureOr<SmallVector<int64_t>> constantInts(unsigned i,
                                               llvm::StringRef what);
  /// Reports that input `i` ('what') must be known at compile time, naming
  /// the graph inputs it is computed from so the user can bind them
  /// (--bind-input). Always returns failure.
  LogicalResult notConstant(unsigned i, llvm::StringRef what);

  /// Makes input(i) return `v` (e.g. a widened copy) for the rest of this
  /// node's conversion; its compile-time contents are dropped.
  void replaceInput(unsigned i, Value v) { overrides_[i] = v; }

  //===--- Attributes (reading one marks it handled) ----------------------===//
  bool hasAttr(llvm::StringRef name) const;
  FailureOr<int64_t> intAttr(llvm::StringRef name,
                             std::optional<int64_t> dflt = std::nullopt);
  FailureOr<float> floatAttr(llvm::StringRef name,
                             std::optional<float> dflt = std::nullopt);
  FailureOr<std::string>
  stringAttr(llvm::StringRef name,
             std::optional<std::string> dflt = std::nullopt);
  FailureOr<SmallVector<int64_t>>
  intsAttr(llvm::StringRef name,
           std::optional<SmallVector<int64_t>> dflt = std::nullopt);
  FailureOr<SmallVector<float>>
  floatsAttr(llvm::StringRef name,
             std::optional<SmallVector<float>> dflt = std::nullopt);
  FailureOr<DenseElementsAttr> tensorAttr(llvm::StringRef name);
  /// Marks an attribute handled without reading it (e.g. training-only
  /// attributes with no effect on inference).
  void ignoreAttr(llvm::StringRef name) { handled_.insert(name); }
  /// Attributes present on the node that no accessor read.
  SmallVector<std::string> unhandledAttributes() const;

  //===--- Outputs --------------------------------------------------------===//
  unsigned numOutputs() const { return node_.output_size(); }
  /// Present and not the empty name of a skipped optional output.
  bool hasOutput(unsigned i) const;
  /// Type from ONNX shape inference, or null when it is not fully static.
  RankedTensorType inferredOutputType(unsigned i) const;
  /// The symbolic names ONNX shape inference gives the dimensions of input
  /// or output `i` (`dim_param`, one per dimension, empty where a size is
  /// static or unnamed); empty when unknown. Equal names are equal sizes.
  ArrayRef<std::string> inputDimNames(unsigned i) const;
  ArrayRef<std::string> outputDimNames(unsigned i) const;
  /// Names output `i`'s dimensions where ONNX shape inference did not (a
  /// converter that knows them: a Reshape to sizes read from a graph
  /// input, a Transpose of named dimensions).
  void setOutputDimNamesIfUnknown(unsigned i, ArrayRef<std::string> names);
  /// Where the names come from (set by the graph importer).
  void setDimNames(DimNameTable *names) { dimNames_ = names; }
  void setOutput(unsigned i, Value v);
  /// The value already set for output `i`, or null.
  Value output(unsigned i) const;
  /// Materializes `c` as a constant op and records its contents so later
  /// shape computations can fold.
  void setConstantOutput(unsigned i, DenseElementsAttr c);
  Value materializeConstant(DenseElementsAttr c);

  //===--- Diagnostics ----------------------------------------------------===//
  /// An error prefixed with "node 'NAME' (OP, opset N): ".
  InFlightDiagnostic emitError();
  /// An error about one attribute: names it and its value problem.
  LogicalResult attrError(llvm::StringRef attr, const llvm::Twine &message);
  /// The node uses a feature Tessel does not implement yet.
  LogicalResult unsupported(const llvm::Twine &what);

private:
  const onnx::AttributeProto *findAttr(llvm::StringRef name) const;
  FailureOr<const onnx::AttributeProto *>
  typedAttr(llvm::StringRef name, onnx::AttributeProto_AttributeType type);

  const onnx::NodeProto &node_;
  int64_t opset_;
  OpBuilder &builder_;
  Location loc_;
  TosaBuilder tosa_;
  ValueTable &values_;
  const std::unordered_map<std::string, RankedTensorType> &inferredTypes_;
  llvm::StringSet<> handled_;
  llvm::DenseMap<unsigned, Value> overrides_;
  DeferredWeights *deferred_;
  DimNameTable *dimNames_ = nullptr;
};

/// Converts one ONNX node; on failure it has emitted a diagnostic.
using Converter = LogicalResult (*)(NodeContext &);
using ConverterMap = llvm::StringMap<Converter>;

/// The converters, by op type; each Ops/*.cpp file registers its family.
const ConverterMap &getConverters();
/// The converters of the ai.onnx.preview.training domain (Ops/Training.cpp).
const ConverterMap &getTrainingConverters();
/// Ops converted with unsigned inputs widened to i32 (convertViaSignless).
bool widensUnsignedInputs(llvm::StringRef opType);
LogicalResult convertViaSignless(NodeContext &ctx, Converter convert);

/// A constant op holding `c` (tosa.const; arith.constant when empty).
Value materializeConstant(OpBuilder &b, Location loc, DenseElementsAttr c);

/// MLIR element type of an ONNX TensorProto data type, or null.
Type convertElementType(int32_t onnxType, MLIRContext *context);
/// The tensor type of a TensorProto (its data type and dimensions).
FailureOr<RankedTensorType> convertTensorProtoType(const onnx::TensorProto &t,
                                                   MLIRContext *context,
                                                   std::string &error);
/// Contents of a TensorProto (raw_data or typed fields) as an attribute.
FailureOr<DenseElementsAttr> convertTensorProto(const onnx::TensorProto &t,
                                                MLIRContext *context,
                                                std::string &error);

} // namespace mlir::tessel::onnx_import

#endif
