//===- GraphImporter.cpp - ONNX graph -> func.func ------------------------===//
//
// Walks the (topologically sorted) ONNX graph once: initializers become
// constants, graph inputs become arguments named with tessel.name, and each
// node is handed to its converter. Converters compute their result types;
// where ONNX shape inference knows a static type too, the two must agree,
// which catches converter bugs before they become wrong answers.
//
//===----------------------------------------------------------------------===//
#include "GraphImporter.h"
#include "PackedSequence.h"
#include "Ops/IndexMath.h"
#include "NodeContext.h"
#include "tessel/Dialect/Compose/IR/ComposeDialect.h"
#include "tessel/Dialect/Compose/Transforms/Passes.h"
#include "tessel/Dialect/Tessel/IR/TesselDialect.h"
#include "tessel/Importers/ONNX/ONNXImporter.h"
#include "tessel/Runtime/tessel_abi.h"

#include "mlir/Dialect/Quant/IR/Quant.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Path.h"

#include <set>

using namespace mlir;
using namespace mlir::tessel::onnx_import;
using namespace mlir::tessel::onnx_import::detail;
namespace compose = mlir::tessel::compose;



FailureOr<RankedTensorType>
GraphImporter::inputType(const std::string &name, const onnx::TypeProto &type,
                         SmallVector<std::string> &dimNames) {
  StringRef what = "input";
  if (!type.has_tensor_type()) {
    emitError(fileLoc) << what << " '" << name
                       << "' is not a tensor (maps, and sequences or "
                          "optionals of anything but tensors, are not "
                          "supported)";
    return failure();
  }
  const auto &tt = type.tensor_type();
  Type elem = convertElementType(tt.elem_type(), ctx);
  if (!elem) {
    emitError(fileLoc) << what << " '" << name
                       << "' has unsupported element type "
                       << onnx::TensorProto_DataType_Name(
                              static_cast<onnx::TensorProto_DataType>(
                                  tt.elem_type()));
    return failure();
  }
  if (!tt.has_shape()) {
    emitError(fileLoc) << what << " '" << name
                       << "' has no shape; pin it with --shape="
                       << name << ":<dims>";
    return failure();
  }
  SmallVector<int64_t> dims;
  dimNames.clear();
  for (const auto &[i, d] : llvm::enumerate(tt.shape().dim())) {
    if (d.has_dim_value() && d.dim_value() >= 0) {
      dims.push_back(d.dim_value());
      dimNames.push_back("");
      continue;
    }
    // Bound at each call from the data (the ABI's named dimensions); an
    // unnamed one is named after its input.
    dims.push_back(ShapedType::kDynamic);
    dimNames.push_back(d.has_dim_param() && !d.dim_param().empty()
                           ? d.dim_param()
                           : name + "_d" + std::to_string(i));
    symbolicInputs = true;
  }
  return RankedTensorType::get(dims, elem);
}

/// `name` as the stem of ABI dimension names ([A-Za-z0-9_], not starting
/// with a digit).
static std::string dimStem(StringRef name) {
  std::string stem;
  for (char c : name)
    stem += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (stem.empty() || std::isdigit(static_cast<unsigned char>(stem[0])))
    stem = "v" + stem;
  return stem;
}

LogicalResult
GraphImporter::partsOfInput(const onnx::ValueInfoProto &info,
                            SmallVector<GraphArg> &args) {
  const std::string &n = info.name();
  const onnx::TypeProto *type = &info.type();
  auto i64 = builder.getI64Type();
  if (type->has_optional_type()) {
    args.push_back({RankedTensorType::get({}, builder.getI1Type()),
                    n + ".present", "present:" + n, {}});
    type = &type->optional_type().elem_type();
    if (type->has_tensor_type()) {
      GraphArg value{Type(), n + ".value", "value:" + n, {}};
      FailureOr<RankedTensorType> t = inputType(n, *type, value.dimNames);
      if (failed(t))
        return failure();
      value.type = *t;
      // Its own dimension names: an empty optional's zeros have size 0
      // there, which must not bind another input's dimension.
      for (auto [d, name] : llvm::enumerate(value.dimNames))
        if (!name.empty())
          name = dimStem(n) + "_value_d" + std::to_string(d);
      if (t->hasStaticShape())
        value.dimNames.clear();
      args.push_back(value);
      return success();
    }
  }
  if (!type->has_sequence_type() ||
      !type->sequence_type().elem_type().has_tensor_type()) {
    emitError(fileLoc) << "input '" << n
                       << "' is not a tensor, a sequence of tensors or an "
                          "optional of either (maps are not supported)";
    return failure();
  }
  const auto &tt = type->sequence_type().elem_type().tensor_type();
  Type elem = convertElementType(tt.elem_type(), ctx);
  if (!elem) {
    emitError(fileLoc) << "input '" << n
                       << "' is a sequence of an unsupported element type";
    return failure();
  }
  // Sizes [count, rank] (the rank named where the model does not declare
  // the tensors' shape) and the elements one after another.
  std::string stem = dimStem(n);
  GraphArg sizes{Type(), n + ".sizes", "sizes:" + n, {stem + "_count", ""}};
  int64_t rank = tt.has_shape() ? tt.shape().dim_size() : ShapedType::kDynamic;
  if (ShapedType::isDynamic(rank))
    sizes.dimNames.back() = stem + "_rank";
  sizes.type = RankedTensorType::get({ShapedType::kDynamic, rank}, i64);
  args.push_back(sizes);
  args.push_back({RankedTensorType::get({ShapedType::kDynamic}, elem),
                  n + ".data", "data:" + n, {stem + "_total"}});
  symbolicInputs = true;
  return success();
}

FailureOr<TensorValue>
GraphImporter::inputFromParts(const onnx::ValueInfoProto &info,
                              ValueRange args) {
  Location loc = NameLoc::get(builder.getStringAttr(info.name()), fileLoc);
  auto sequence = [&](ValueRange parts) {
    auto sizes = cast<RankedTensorType>(parts[0].getType());
    Type elem = cast<RankedTensorType>(parts[1].getType()).getElementType();
    return TensorValue{Value(), {},
                       checkedPackedInput(builder, loc, elem, sizes.getDimSize(1),
                                          parts[0], parts[1])};
  };
  if (!info.type().has_optional_type())
    return sequence(args);
  auto opt = std::make_shared<OptionalValue>();
  opt->present = args[0];
  opt->element = args.size() == 2 ? TensorValue{args[1], {}}
                                   : sequence(args.drop_front());
  return TensorValue{Value(), {}, nullptr, std::move(opt)};
}

void GraphImporter::collectInferredTypes() {
  auto add = [&](const onnx::ValueInfoProto &info) {
    if (!info.type().has_tensor_type() ||
        !info.type().tensor_type().has_shape())
      return;
    const auto &tt = info.type().tensor_type();
    Type elem = convertElementType(tt.elem_type(), ctx);
    if (!elem)
      return;
    // A symbolic or unknown size is dynamic: the static ones still type
    // what a run-time computation gives (a Reshape's shape from a Concat).
    SmallVector<int64_t> dims;
    for (const auto &d : tt.shape().dim())
      dims.push_back(d.has_dim_value() && d.dim_value() >= 0
                         ? d.dim_value()
                         : ShapedType::kDynamic);
    inferred[info.name()] = RankedTensorType::get(dims, elem);
  };
  auto addNames = [&](const onnx::ValueInfoProto &info) {
    if (!info.type().has_tensor_type() ||
        !info.type().tensor_type().has_shape())
      return;
    SmallVector<std::string> names;
    for (const auto &d : info.type().tensor_type().shape().dim())
      names.push_back(d.has_dim_param() ? d.dim_param() : std::string());
    dimNames[info.name()] = std::move(names);
  };
  for (const auto &vi : model.model.graph().value_info()) {
    add(vi);
    addNames(vi);
  }
  for (const auto &vi : model.model.graph().output()) {
    add(vi);
    addNames(vi);
  }
  for (const auto &vi : model.model.graph().input())
    addNames(vi);
}

LogicalResult GraphImporter::importInitializers() {
  for (const auto &t : model.model.graph().initializer()) {
    Location loc = NameLoc::get(builder.getStringAttr(t.name()), fileLoc);
    std::string error;
    FailureOr<RankedTensorType> type = convertTensorProtoType(t, ctx, error);
    if (failed(type))
      return emitError(fileLoc) << "initializer: " << error;
    if (Value placeholder = deferred.create(builder, loc, t, *type)) {
      values[t.name()] = TensorValue{placeholder, {}};
      continue;
    }
    FailureOr<DenseElementsAttr> attr = convertTensorProto(t, ctx, error);
    if (failed(attr))
      return emitError(fileLoc) << "initializer: " << error;
    values[t.name()] =
        TensorValue{materializeConstant(builder, loc, *attr), *attr};
  }
  return success();
}

LogicalResult GraphImporter::importNode(const onnx::NodeProto &node,
                                        unsigned index, ValueTable &values) {
  std::string name = node.name().empty()
                         ? node.op_type() + "_" + std::to_string(index)
                         : node.name();
  Location loc = NameLoc::get(builder.getStringAttr(name), fileLoc);
  bool training = node.domain() == kTrainingDomain;
  int64_t opset = training ? model.trainingOpset : model.opset;
  auto prefix = [&]() {
    InFlightDiagnostic d = emitError(loc);
    d << "node '" << name << "' (" << node.op_type() << ", opset " << opset
      << "): ";
    return d;
  };
  if (!training && !node.domain().empty() && node.domain() != "ai.onnx")
    return prefix() << "ops of domain '" << node.domain()
                    << "' are not supported";
  if (opset == 0)
    return prefix() << "the model imports no opset of domain '"
                    << (training ? kTrainingDomain : "ai.onnx") << "'";
  if (training && !getTrainingConverters().count(node.op_type()))
    return prefix() << "op '" << node.op_type() << "' of domain '"
                    << kTrainingDomain << "' is not supported"
                    << (node.op_type() == "Gradient"
                            ? " (Tessel does not differentiate graphs)"
                            : "");
  // Control flow imports subgraphs, so the importer handles it itself.
  bool isIf = !training && node.op_type() == "If",
       isScan = !training && node.op_type() == "Scan",
       isLoop = !training && node.op_type() == "Loop",
       isMap = !training && node.op_type() == "SequenceMap";
  const ConverterMap &converters =
      training ? getTrainingConverters() : getConverters();
  auto it = converters.find(node.op_type());
  if (!isIf && !isScan && !isLoop && !isMap && !isSequenceOp(node.op_type()) &&
      it == converters.end())
    return prefix() << "unsupported op '" << node.op_type() << "'";
  for (int i = 0; i < node.input_size(); ++i)
    if (!node.input(i).empty() && !values.count(node.input(i)))
      return prefix() << "input " << i << " '" << node.input(i)
                      << "' is not defined before use";
  // Sequences (Sequences.cpp) go to the sequence ops only; a tensor op
  // given one says so.
  auto notTensor = [&](int i) {
    const TensorValue &v = values.at(node.input(i));
    return v.sequence ? "a sequence" : v.optional ? "an optional" : nullptr;
  };
  bool sequenceOp =
      !training && (isSequenceOp(node.op_type()) ||
                    (node.op_type() == "Identity" && node.input_size() == 1 &&
                     !node.input(0).empty() && notTensor(0)));
  for (int i = 0; i < node.input_size(); ++i)
    if (!sequenceOp && !isMap && !(isLoop && i >= 2) && !node.input(i).empty() &&
        notTensor(i))
      return prefix() << "input " << i << " '" << node.input(i) << "' is "
                      << notTensor(i) << ", which " << node.op_type()
                      << " does not take";
  // A value whose sizes follow from the data (RunTimeShapes.cpp) goes to
  // the ops below, each tested with such operands (elementwise ops that
  // broadcast at run time, reductions, softmax, transpose, flatten,
  // concat, matmul; test_onnx_run_time_sized_operands.py; the random ops,
  // test_onnx_random.py), or is a graph output; any other op given one
  // says so.
  static const llvm::StringSet<> takesRunTimeSizes = {
      "Add",   "Sub",  "Mul",   "Equal", "Greater", "GreaterOrEqual",
      "Less",  "LessOrEqual", "Not", "Abs", "Exp",  "Log",  "Tanh",
      "Sigmoid", "Erf", "Reciprocal", "Floor", "Ceil", "Sin", "Cos",
      "Sqrt",  "Round", "Relu", "Cast", "CastLike", "Identity",
      "Div", "Neg", "Max", "Min", "Sum", "Mean", "Where", "Clip", "Atan",
      "LeakyRelu", "Elu", "Selu", "Softplus", "HardSigmoid", "Softmax",
      "LogSoftmax", "Transpose", "Flatten", "Concat", "ArgMax", "ArgMin",
      "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL2",
      "ReduceMean", "MatMul", "Gemm", "Shape", "Size", "Reshape", "Gather",
      "LayerNormalization", "Squeeze", "Unsqueeze", "Split", "Expand",
      "ScatterElements", "Slice", "RandomUniformLike", "RandomNormalLike",
      "Bernoulli", "Multinomial", "Dropout"};
  // These take a batch (dim 0 of every input) of run-time size, the other
  // dims static: the convolutions and pooling of CNNs with a symbolic batch.
  static const llvm::StringSet<> takesRunTimeBatch = {
      "Conv", "MaxPool", "AveragePool", "GlobalAveragePool",
      "GlobalMaxPool", "BatchNormalization", "Pad"};
  // 2-D images (N, C, H, W) only; MaxPool without its Indices output,
  // which are offsets over the whole batch.
  auto onlyBatch = [&](RankedTensorType t) {
    bool imageOp = node.op_type() != "BatchNormalization";
    bool indices = node.op_type() == "MaxPool" && node.output_size() > 1 &&
                   !node.output(1).empty();
    return !indices && (!imageOp || t.getRank() == 4) &&
           llvm::all_of(t.getShape().drop_front(),
                        [](int64_t d) { return !ShapedType::isDynamic(d); });
  };
  for (int i = 0; i < node.input_size(); ++i) {
    // Sequence ops take tensors of any sizes (PackedSequence.h).
    if (takesRunTimeSizes.contains(node.op_type()) || sequenceOp || isMap)
      break;
    if (node.input(i).empty() || notTensor(i))
      continue;
    auto type = dyn_cast_or_null<RankedTensorType>(
        values.at(node.input(i)).value ? values.at(node.input(i)).value.getType()
                                       : Type());
    if (type && !type.hasStaticShape() &&
        !(takesRunTimeBatch.contains(node.op_type()) && onlyBatch(type)))
      return prefix() << "input " << i << " '" << node.input(i)
                      << "' has sizes known only at run time ("
                      << typeText(type) << "), which " << node.op_type()
                      << " does not take yet"
                      << (symbolicInputs
                              ? " (pin the graph inputs' symbolic dimensions "
                                "with --shape=INPUT:DIMS, e.g. 1x3x224x224)"
                              : "");
  }
  if (sequenceOp) {
    onnx::NodeProto named = node;
    named.set_name(name);
    NodeContext context(named, model.opset, builder, loc, values, inferred,
                        &deferred);
    context.setDimNames(&dimNames);
    if (failed(importSequenceOp(context, values)))
      return failure();
    SmallVector<std::string> unhandled = context.unhandledAttributes();
    if (!unhandled.empty())
      return prefix() << "attribute '" << unhandled.front()
                      << "' is not supported";
    return success();
  }

  if (isMap) {
    if (failed(importSequenceMap(node, name, loc, values)))
      return failure();
    return success();
  }
  if (isIf || isScan || isLoop) {
    if (failed(isIf     ? importIf(node, name, loc, values)
               : isScan ? importScan(node, name, loc, values)
                        : importLoop(node, name, loc, values)))
      return failure();
  } else {
    onnx::NodeProto named = node;
    named.set_name(name);
    NodeContext context(named, opset, builder, loc, values, inferred,
                        &deferred);
    context.setDimNames(&dimNames);
    if (failed(!training && widensUnsignedInputs(node.op_type())
                   ? convertViaSignless(context, it->second)
                   : it->second(context)))
      return failure();
    SmallVector<std::string> unhandled = context.unhandledAttributes();
    if (!unhandled.empty())
      return prefix() << "attribute '" << unhandled.front()
                      << "' is not supported";
  }
  for (int i = 0; i < node.output_size(); ++i) {
    if (node.output(i).empty())
      continue;
    auto produced = values.find(node.output(i));
    if (produced == values.end())
      return prefix() << "output " << i << " ('" << node.output(i)
                      << "') is not supported";
    if (!produced->second.value)
      continue; // a sequence or an optional (of control flow)
    auto inferredType = inferred.find(node.output(i));
    RankedTensorType expected =
        inferredType == inferred.end() ? RankedTensorType() : inferredType->second;
    auto got = dyn_cast<RankedTensorType>(produced->second.value.getType());
    if (got && llvm::any_of(got.getShape(), [](int64_t d) {
          return d < 0 && !ShapedType::isDynamic(d);
        }))
      return prefix() << "output " << i << " would have the invalid shape "
                      << typeText(got);
    // A size known only at run time agrees with whatever shape inference
    // says there.
    auto agrees = [](RankedTensorType expected, RankedTensorType got) {
      if (expected.getRank() != got.getRank())
        return false;
      for (auto [e, g] : llvm::zip(expected.getShape(), got.getShape()))
        if (!ShapedType::isDynamic(g) && !ShapedType::isDynamic(e) && e != g)
          return false;
      return true;
    };
    if (expected && got && !agrees(expected, got))
      return prefix() << "Tessel computes output " << i << " as "
                      << typeText(got) << " but ONNX shape inference says "
                      << typeText(expected);
  }
  return success();
}

OwningOpRef<ModuleOp> GraphImporter::run() {
  ctx->loadDialect<arith::ArithDialect, func::FuncDialect,
                   math::MathDialect, scf::SCFDialect, tensor::TensorDialect,
                   tosa::TosaDialect, tessel::TesselDialect,
                   tessel::compose::ComposeDialect, linalg::LinalgDialect,
                   quant::QuantDialect>();
  const onnx::GraphProto &graph = model.model.graph();
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  (*module)->setAttr("tessel.source",
                     builder.getStringAttr(llvm::sys::path::filename(path)));
  collectInferredTypes();

  std::set<std::string> initializerNames;
  for (const auto &t : graph.initializer())
    initializerNames.insert(t.name());
  SmallVector<const onnx::ValueInfoProto *> inputs;
  SmallVector<Type> inputTypes;
  // Every graph input's arguments: one for a tensor, its parts for a
  // sequence or an optional (ABI v7).
  SmallVector<GraphArg> args;
  struct Parts {
    const onnx::ValueInfoProto *info;
    unsigned start, count;
  };
  SmallVector<Parts> partsAt;
  for (const auto &in : graph.input()) {
    if (initializerNames.count(in.name()))
      continue;
    if (!in.type().has_tensor_type()) {
      unsigned start = args.size();
      if (failed(partsOfInput(in, args)))
        return {};
      partsAt.push_back({&in, start, unsigned(args.size()) - start});
      continue;
    }
    SmallVector<std::string> names;
    FailureOr<RankedTensorType> type = inputType(in, names);
    if (failed(type))
      return {};
    inputs.push_back(&in);
    inputTypes.push_back(*type);
    args.push_back({*type, in.name(), "", names});
  }
  SmallVector<Type> argTypes;
  for (const GraphArg &a : args)
    argTypes.push_back(a.type);

  builder.setInsertionPointToEnd(module->getBody());
  auto fn = func::FuncOp::create(builder, fileLoc, options.entryName,
                                 builder.getFunctionType(argTypes, {}));
  Block *body = fn.addEntryBlock();
  builder.setInsertionPointToStart(body);
  for (auto [i, a] : llvm::enumerate(args)) {
    fn.setArgAttr(i, "tessel.name", builder.getStringAttr(a.name));
    if (!a.part.empty())
      fn.setArgAttr(i, "tessel.part", builder.getStringAttr(a.part));
    if (!cast<RankedTensorType>(a.type).hasStaticShape()) {
      SmallVector<Attribute> names;
      for (const std::string &n : a.dimNames)
        names.push_back(builder.getStringAttr(n));
      fn.setArgAttr(i, "tessel.dim_names", builder.getArrayAttr(names));
    }
    if (a.part.empty())
      values[a.name] = TensorValue{body->getArgument(i), {}};
  }
  for (const Parts &p : partsAt) {
    FailureOr<TensorValue> v = inputFromParts(
        *p.info, body->getArguments().slice(p.start, p.count));
    if (failed(v))
      return {};
    values[p.info->name()] = *v;
  }
  if (failed(importInitializers()))
    return {};

  for (auto [i, node] : llvm::enumerate(graph.node()))
    if (failed(importNode(node, i)))
      return {};

  // Every graph output's results: one for a tensor, its parts for a
  // sequence or an optional (ABI v7), each with its name and part.
  struct Result {
    Value value;
    std::string name, part;
    const onnx::TypeProto_Tensor *declared;
  };
  SmallVector<Result> results;
  for (const auto &out : graph.output()) {
    auto it = values.find(out.name());
    if (it == values.end()) {
      emitError(fileLoc) << "graph output '" << out.name()
                         << "' is not produced by any node";
      return {};
    }
    const std::string &n = out.name();
    Location loc = NameLoc::get(builder.getStringAttr(n), fileLoc);
    TensorValue tv = it->second;
    if (!tv.optional && bool(tv.sequence) != out.type().has_sequence_type() &&
        !out.type().has_optional_type()) {
      emitError(fileLoc) << "graph output '" << n << "' is " << kindName(tv)
                         << ", but the model declares "
                         << (out.type().has_sequence_type() ? "a sequence"
                                                            : "a tensor");
      return {};
    }
    // The kind the model declares: Loop may give an optional where its
    // body gives the value, and the value where the model declares an
    // optional.
    if (tv.optional && (out.type().has_sequence_type() ||
                        out.type().has_tensor_type())) {
      TensorValue inner = tv.optional->element;
      Value ok = tensor::ExtractOp::create(builder, loc, tv.optional->present,
                                           ValueRange{});
      IndexMath m(builder, loc);
      auto failUnless = [&](Value v) {
        return required(m, ok, v, v, TESSEL_ENTRY_EMPTY_OPTIONAL);
      };
      if (inner.sequence) {
        FailureOr<std::shared_ptr<const SequenceValue>> packed =
            packSequence(builder, loc, inner.sequence);
        if (failed(packed))
          return {};
        auto seq = std::make_shared<SequenceValue>(**packed);
        seq->sizes = failUnless(seq->sizes);
        inner.sequence = std::move(seq);
      } else {
        inner.value = failUnless(inner.value);
      }
      tv = inner;
    } else if (!tv.optional && out.type().has_optional_type()) {
      auto opt = std::make_shared<OptionalValue>();
      opt->present = materializeConstant(
          builder, loc,
          DenseElementsAttr::get(RankedTensorType::get({}, builder.getI1Type()),
                                 true));
      opt->element = tv;
      tv = TensorValue{Value(), {}, nullptr, std::move(opt)};
    }
    auto addSequence = [&](std::shared_ptr<const SequenceValue> seq) {
      FailureOr<std::shared_ptr<const SequenceValue>> packed =
          packSequence(builder, loc, seq);
      if (failed(packed))
        return failure();
      results.push_back({(*packed)->sizes, n + ".sizes", "sizes:" + n, nullptr});
      results.push_back({(*packed)->data, n + ".data", "data:" + n, nullptr});
      return success();
    };
    if (tv.optional) {
      results.push_back(
          {tv.optional->present, n + ".present", "present:" + n, nullptr});
      if (tv.optional->element.sequence) {
        if (failed(addSequence(tv.optional->element.sequence)))
          return {};
      } else {
        results.push_back(
            {tv.optional->element.value, n + ".value", "value:" + n, nullptr});
      }
      continue;
    }
    if (tv.sequence) {
      if (failed(addSequence(tv.sequence)))
        return {};
      continue;
    }
    Value v = tv.value;
    auto got = cast<RankedTensorType>(v.getType());
    // The declared output shape, where static, must match.
    if (out.type().has_tensor_type() && out.type().tensor_type().has_shape()) {
      const auto &dims = out.type().tensor_type().shape().dim();
      bool mismatch = dims.size() != got.getRank();
      for (int d = 0; !mismatch && d < dims.size(); ++d)
        mismatch = dims[d].has_dim_value() && !got.isDynamicDim(d) &&
                   dims[d].dim_value() != got.getDimSize(d);
      if (mismatch) {
        emitError(fileLoc) << "graph output '" << out.name()
                           << "' is declared with a shape other than the "
                              "computed "
                           << typeText(got)
                           << " (check --shape against the model)";
        return {};
      }
    }
    results.push_back({v, n, "", out.type().has_tensor_type()
                                     ? &out.type().tensor_type()
                                     : nullptr});
  }
  SmallVector<Value> resultValues;
  for (const Result &r : results)
    resultValues.push_back(r.value);
  func::ReturnOp::create(builder, fileLoc, resultValues);
  // Every node is imported: the weights' layout chains are known.
  deferred.finalize();
  fn.setFunctionType(builder.getFunctionType(argTypes,
                                             ValueRange(resultValues).getTypes()));
  // The inputs' dimension names: an output dimension the model declares
  // with one of them is bound by it; any other dynamic one is a run-time
  // size, returned with the output (rather than a guess the entry would
  // then have to check).
  std::set<std::string> boundNames;
  for (const GraphArg &a : args)
    for (const std::string &n : a.dimNames)
      if (!n.empty())
        boundNames.insert(n);
  for (auto [i, r] : llvm::enumerate(results)) {
    fn.setResultAttr(i, "tessel.name", builder.getStringAttr(r.name));
    if (!r.part.empty())
      fn.setResultAttr(i, "tessel.part", builder.getStringAttr(r.part));
    auto type = cast<RankedTensorType>(r.value.getType());
    if (type.hasStaticShape())
      continue;
    const onnx::TypeProto_Tensor *declared = r.declared;
    SmallVector<Attribute> names;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      std::string name;
      if (type.isDynamicDim(d)) {
        name = "?";
        if (declared && declared->has_shape() &&
            d < declared->shape().dim_size() &&
            declared->shape().dim(d).has_dim_param() &&
            boundNames.count(declared->shape().dim(d).dim_param()))
          name = declared->shape().dim(d).dim_param();
      }
      names.push_back(builder.getStringAttr(name));
    }
    fn.setResultAttr(i, "tessel.dim_names", builder.getArrayAttr(names));
  }
  if (failed(verify(*module)))
    return {};
  // Mixtures of experts, imported densely, become compose.route: the
  // raising is a pass on the IR (tessel-raise-moe), as for every front end.
  if (options.raiseMixtureOfExperts &&
      failed(compose::raiseMixturesOfExperts(*module)))
    return {};
  return module;
}


bool mlir::tessel::onnx_import::isONNXPath(StringRef path) {
  return path.ends_with_insensitive(".onnx");
}

LogicalResult mlir::tessel::onnx_import::parseShapeOption(
    StringRef text, ImportOptions &options, std::string &error) {
  SmallVector<StringRef> entries;
  text.split(entries, ',', -1, /*KeepEmpty=*/false);
  for (StringRef entry : entries) {
    auto [name, dims] = entry.rsplit(':');
    if (name.empty() || dims.empty() || name == entry) {
      error = "malformed --shape '" + entry.str() +
              "' (expected NAME:D0xD1x..., e.g. input:1x3x224x224)";
      return failure();
    }
    SmallVector<int64_t> shape;
    SmallVector<StringRef> parts;
    if (dims != "scalar")
      dims.split(parts, 'x');
    for (StringRef p : parts) {
      int64_t d;
      if (p.getAsInteger(10, d) || d < 0 || d > (int64_t(1) << 31)) {
        error = "malformed dimension '" + p.str() + "' in --shape '" +
                entry.str() + "'";
        return failure();
      }
      shape.push_back(d);
    }
    auto [it, inserted] = options.shapes.try_emplace(name, shape);
    if (!inserted && it->second != shape) {
      error = "--shape gives input '" + name.str() + "' two shapes";
      return failure();
    }
  }
  return success();
}

LogicalResult mlir::tessel::onnx_import::parseBindOption(
    StringRef text, ImportOptions &options, std::string &error) {
  auto [name, file] = text.split('=');
  if (name.empty() || !file.consume_front("@") || file.empty()) {
    error = "malformed --bind-input '" + text.str() +
            "' (expected NAME=@FILE.npy)";
    return failure();
  }
  auto [it, inserted] = options.boundInputs.try_emplace(name, file.str());
  if (!inserted && it->second != file.str()) {
    error = "--bind-input binds input '" + name.str() + "' to two files";
    return failure();
  }
  return success();
}

OwningOpRef<ModuleOp>
mlir::tessel::onnx_import::importONNXFile(MLIRContext *ctx, StringRef path,
                                          const ImportOptions &options) {
  LoadedModel model;
  std::string error;
  if (!loadModel(path, options, model, error)) {
    emitError(FileLineColLoc::get(ctx, path, 0, 0)) << error;
    return {};
  }
  if (!model.warning.empty())
    emitWarning(FileLineColLoc::get(ctx, path, 0, 0)) << model.warning;
  GraphImporter importer(ctx, model, path, options);
  return importer.run();
}

OwningOpRef<ModuleOp> mlir::tessel::onnx_import::importONNXBuffer(
    MLIRContext *ctx, StringRef bytes, StringRef name,
    const ImportOptions &options) {
  LoadedModel model;
  std::string error;
  if (!loadModelBytes(bytes, name, "", options, model, error)) {
    emitError(FileLineColLoc::get(ctx, name, 0, 0)) << error;
    return {};
  }
  if (!model.warning.empty())
    emitWarning(FileLineColLoc::get(ctx, name, 0, 0)) << model.warning;
  GraphImporter importer(ctx, model, name, options);
  return importer.run();
}
