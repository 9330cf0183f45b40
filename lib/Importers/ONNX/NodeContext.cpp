//===- NodeContext.cpp - What an ONNX op converter sees --------------------===//
#include "NodeContext.h"
#include "DeferredWeights.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::tessel::onnx_import;

NodeContext::NodeContext(
    const onnx::NodeProto &node, int64_t opset, OpBuilder &builder,
    Location loc, ValueTable &values,
    const std::unordered_map<std::string, RankedTensorType> &inferredTypes,
    DeferredWeights *deferred)
    : node_(node), opset_(opset), builder_(builder), loc_(loc),
      tosa_(builder, loc), values_(values), inferredTypes_(inferredTypes),
      deferred_(deferred) {}

//===----------------------------------------------------------------------===//
// Inputs
//===----------------------------------------------------------------------===//

bool NodeContext::hasInput(unsigned i) const {
  return i < numInputs() && !node_.input(i).empty();
}

Value NodeContext::input(unsigned i) const {
  if (!hasInput(i))
    return Value();
  if (auto it = overrides_.find(i); it != overrides_.end())
    return it->second;
  auto it = values_.find(node_.input(i));
  return it == values_.end() ? Value() : it->second.value;
}

RankedTensorType NodeContext::inputType(unsigned i) const {
  Value v = input(i);
  return v ? dyn_cast<RankedTensorType>(v.getType()) : RankedTensorType();
}

DenseElementsAttr NodeContext::constantInput(unsigned i) const {
  if (!hasInput(i) || overrides_.count(i))
    return {};
  auto it = values_.find(node_.input(i));
  if (it == values_.end())
    return {};
  if (!it->second.constant && deferred_)
    it->second.constant = deferred_->materialize(it->second.value);
  return it->second.constant;
}

bool NodeContext::isDeferredInput(unsigned i) const {
  return hasInput(i) && !overrides_.count(i) && deferred_ &&
         deferred_->isDeferred(input(i));
}

FailureOr<SmallVector<int64_t>> NodeContext::constantInts(unsigned i,
                                                          StringRef what) {
  DenseElementsAttr c = constantInput(i);
  if (!c || !isa<IntegerType>(c.getElementType())) {
    (void)notConstant(i, what);
    return failure();
  }
  SmallVector<int64_t> out;
  for (const APInt &v : c.getValues<APInt>())
    out.push_back(v.getSExtValue());
  return out;
}

/// Names (tessel.name) of the function arguments `v` is computed from.
static void collectGraphInputs(Value v, llvm::SetVector<StringRef> &names,
                               llvm::DenseSet<Value> &seen) {
  if (!seen.insert(v).second)
    return;
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    auto fn = dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp());
    if (!fn)
      return;
    if (auto name = fn.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                    "tessel.name"))
      names.insert(name.getValue());
    return;
  }
  if (Operation *def = v.getDefiningOp())
    for (Value operand : def->getOperands())
      collectGraphInputs(operand, names, seen);
}

LogicalResult NodeContext::notConstant(unsigned i, StringRef what) {
  InFlightDiagnostic diag = emitError();
  diag << "input " << i << " ('" << what << "'"
       << (hasInput(i) ? ", value '" + node_.input(i) + "'" : std::string())
       << ") must be a compile-time constant (initializer, Constant, or "
          "shape arithmetic on them)";
  llvm::SetVector<StringRef> names;
  llvm::DenseSet<Value> seen;
  if (Value v = input(i))
    collectGraphInputs(v, names, seen);
  if (!names.empty()) {
    diag << "; it is computed from graph input(s)";
    for (StringRef n : names)
      diag << " '" << n << "'";
    diag << ", which --bind-input can make constant:";
    for (StringRef n : names)
      diag << " --bind-input=" << n << "=@FILE.npy";
  }
  return failure();
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

const onnx::AttributeProto *NodeContext::findAttr(StringRef name) const {
  for (const auto &a : node_.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

bool NodeContext::hasAttr(StringRef name) const {
  return findAttr(name) != nullptr;
}

FailureOr<const onnx::AttributeProto *>
NodeContext::typedAttr(StringRef name, onnx::AttributeProto_AttributeType type) {
  handled_.insert(name);
  const onnx::AttributeProto *a = findAttr(name);
  if (!a)
    return static_cast<const onnx::AttributeProto *>(nullptr);
  if (a->type() != type) {
    (void)attrError(name, "has type " +
                              onnx::AttributeProto_AttributeType_Name(a->type()) +
                              ", expected " +
                              onnx::AttributeProto_AttributeType_Name(type));
    return failure();
  }
  return a;
}

FailureOr<int64_t> NodeContext::intAttr(StringRef name,
                                        std::optional<int64_t> dflt) {
  auto a = typedAttr(name, onnx::AttributeProto::INT);
  if (failed(a))
    return failure();
  if (*a)
    return (*a)->i();
  if (dflt)
    return *dflt;
  (void)attrError(name, "is required");
  return failure();
}

FailureOr<float> NodeContext::floatAttr(StringRef name,
                                        std::optional<float> dflt) {
  auto a = typedAttr(name, onnx::AttributeProto::FLOAT);
  if (failed(a))
    return failure();
  if (*a)
    return (*a)->f();
  if (dflt)
    return *dflt;
  (void)attrError(name, "is required");
  return failure();
}

FailureOr<std::string> NodeContext::stringAttr(StringRef name,
                                               std::optional<std::string> dflt) {
  auto a = typedAttr(name, onnx::AttributeProto::STRING);
  if (failed(a))
    return failure();
  if (*a)
    return (*a)->s();
  if (dflt)
    return *dflt;
  (void)attrError(name, "is required");
  return failure();
}

FailureOr<SmallVector<int64_t>>
NodeContext::intsAttr(StringRef name,
                      std::optional<SmallVector<int64_t>> dflt) {
  auto a = typedAttr(name, onnx::AttributeProto::INTS);
  if (failed(a))
    return failure();
  if (*a)
    return SmallVector<int64_t>((*a)->ints().begin(), (*a)->ints().end());
  if (dflt)
    return *dflt;
  (void)attrError(name, "is required");
  return failure();
}

FailureOr<SmallVector<float>>
NodeContext::floatsAttr(StringRef name,
                        std::optional<SmallVector<float>> dflt) {
  auto a = typedAttr(name, onnx::AttributeProto::FLOATS);
  if (failed(a))
    return failure();
  if (*a)
    return SmallVector<float>((*a)->floats().begin(), (*a)->floats().end());
  if (dflt)
    return *dflt;
  (void)attrError(name, "is required");
  return failure();
}

FailureOr<DenseElementsAttr> NodeContext::tensorAttr(StringRef name) {
  auto a = typedAttr(name, onnx::AttributeProto::TENSOR);
  if (failed(a))
    return failure();
  if (!*a) {
    (void)attrError(name, "is required");
    return failure();
  }
  std::string error;
  auto attr = convertTensorProto((*a)->t(), context(), error);
  if (failed(attr)) {
    (void)attrError(name, error);
    return failure();
  }
  return *attr;
}

SmallVector<std::string> NodeContext::unhandledAttributes() const {
  SmallVector<std::string> out;
  for (const auto &a : node_.attribute())
    if (!handled_.contains(a.name()))
      out.push_back(a.name());
  return out;
}

//===----------------------------------------------------------------------===//
// Outputs
//===----------------------------------------------------------------------===//

bool NodeContext::hasOutput(unsigned i) const {
  return i < numOutputs() && !node_.output(i).empty();
}

Value NodeContext::output(unsigned i) const {
  if (!hasOutput(i))
    return Value();
  auto it = values_.find(node_.output(i));
  return it == values_.end() ? Value() : it->second.value;
}

RankedTensorType NodeContext::inferredOutputType(unsigned i) const {
  if (!hasOutput(i))
    return {};
  auto it = inferredTypes_.find(node_.output(i));
  return it == inferredTypes_.end() ? RankedTensorType() : it->second;
}

static ArrayRef<std::string> namesOf(const DimNameTable *table,
                                     const std::string &value) {
  if (!table)
    return {};
  auto it = table->find(value);
  return it == table->end() ? ArrayRef<std::string>() : it->second;
}

ArrayRef<std::string> NodeContext::inputDimNames(unsigned i) const {
  return hasInput(i) ? namesOf(dimNames_, node_.input(i))
                     : ArrayRef<std::string>();
}

ArrayRef<std::string> NodeContext::outputDimNames(unsigned i) const {
  return hasOutput(i) ? namesOf(dimNames_, node_.output(i))
                      : ArrayRef<std::string>();
}

void NodeContext::setOutputDimNamesIfUnknown(unsigned i,
                                             ArrayRef<std::string> names) {
  if (!dimNames_ || !hasOutput(i) || names.empty() ||
      llvm::all_of(names, [](const std::string &n) { return n.empty(); }))
    return;
  SmallVector<std::string> &known = (*dimNames_)[node_.output(i)];
  if (known.empty())
    known.assign(names.begin(), names.end());
}

void NodeContext::setOutput(unsigned i, Value v) {
  if (!hasOutput(i))
    return;
  TensorValue tv{v, {}};
  // Keep contents of values that are plain constants (folded by builders).
  if (auto c = v.getDefiningOp<tosa::ConstOp>())
    tv.constant = dyn_cast<DenseElementsAttr>(c.getValues());
  else if (auto c = v.getDefiningOp<arith::ConstantOp>())
    tv.constant = dyn_cast<DenseElementsAttr>(c.getValue());
  values_[node_.output(i)] = tv;
}

Value NodeContext::materializeConstant(DenseElementsAttr c) {
  return onnx_import::materializeConstant(builder_, loc_, c);
}

Value mlir::tessel::onnx_import::materializeConstant(OpBuilder &b,
                                                     Location loc,
                                                     DenseElementsAttr c) {
  // TOSA tensors cannot be empty; zero-element constants (empty axes lists,
  // folded empty slices) stay arith constants.
  if (c.getNumElements() == 0)
    return arith::ConstantOp::create(b, loc, c);
  return tosa::ConstOp::create(b, loc, c.getType(), c);
}

void NodeContext::setConstantOutput(unsigned i, DenseElementsAttr c) {
  if (!hasOutput(i))
    return;
  values_[node_.output(i)] = TensorValue{materializeConstant(c), c};
}

//===----------------------------------------------------------------------===//
// Diagnostics
//===----------------------------------------------------------------------===//

InFlightDiagnostic NodeContext::emitError() {
  InFlightDiagnostic diag = mlir::emitError(loc_);
  diag << "node '" << node_.name() << "' (" << node_.op_type() << ", opset "
       << opset_ << "): ";
  return diag;
}

LogicalResult NodeContext::attrError(StringRef attr, const Twine &message) {
  emitError() << "attribute '" << attr << "' " << message;
  return failure();
}

LogicalResult NodeContext::unsupported(const Twine &what) {
  emitError() << what << " is not supported yet";
  return failure();
}
