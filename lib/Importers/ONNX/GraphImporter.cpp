//===- GraphImporter.cpp - ONNX graph -> func.func ------------------------===//
//
// Walks the (topologically sorted) ONNX graph once: initializers become
// constants, graph inputs become arguments named with tessel.name, and each
// node is handed to its converter. Converters compute their result types;
// where ONNX shape inference knows a static type too, the two must agree,
// which catches converter bugs before they become wrong answers.
//
//===----------------------------------------------------------------------===//
#include "ModelLoader.h"
#include "NodeContext.h"
#include "tessel/Dialect/Tessel/IR/TesselDialect.h"
#include "tessel/Importers/ONNX/ONNXImporter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Path.h"

#include <set>

using namespace mlir;
using namespace mlir::tessel::onnx_import;

namespace {

std::string typeText(Type t) {
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
        builder(ctx), fileLoc(FileLineColLoc::get(ctx, path, 0, 0)) {}

  OwningOpRef<ModuleOp> run();

private:
  /// The static tensor type of a ValueInfo, or an error naming `what`.
  FailureOr<RankedTensorType> staticType(const onnx::ValueInfoProto &info,
                                         StringRef what);
  void collectInferredTypes();
  LogicalResult importInitializers();
  LogicalResult importNode(const onnx::NodeProto &node, unsigned index);

  MLIRContext *ctx;
  LoadedModel &model;
  std::string path;
  const ImportOptions &options;
  OpBuilder builder;
  Location fileLoc;
  ValueTable values;
  std::unordered_map<std::string, RankedTensorType> inferred;
};

FailureOr<RankedTensorType>
GraphImporter::staticType(const onnx::ValueInfoProto &info, StringRef what) {
  if (!info.type().has_tensor_type()) {
    emitError(fileLoc) << what << " '" << info.name()
                       << "' is not a tensor (sequences, maps and optionals "
                          "are not supported)";
    return failure();
  }
  const auto &tt = info.type().tensor_type();
  Type elem = convertElementType(tt.elem_type(), ctx);
  if (!elem) {
    emitError(fileLoc) << what << " '" << info.name()
                       << "' has unsupported element type "
                       << onnx::TensorProto_DataType_Name(
                              static_cast<onnx::TensorProto_DataType>(
                                  tt.elem_type()));
    return failure();
  }
  if (!tt.has_shape()) {
    emitError(fileLoc) << what << " '" << info.name()
                       << "' has no shape; pin it with --shape="
                       << info.name() << ":<dims>";
    return failure();
  }
  SmallVector<int64_t> dims;
  for (const auto &d : tt.shape().dim()) {
    if (d.has_dim_value() && d.dim_value() >= 0) {
      dims.push_back(d.dim_value());
      continue;
    }
    emitError(fileLoc) << what << " '" << info.name() << "' has symbolic "
                       << "dimension '"
                       << (d.has_dim_param() ? d.dim_param() : "?")
                       << "'; pin it with --shape=" << info.name()
                       << ":<dims> (e.g. 1x3x224x224)";
    return failure();
  }
  return RankedTensorType::get(dims, elem);
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
    SmallVector<int64_t> dims;
    for (const auto &d : tt.shape().dim()) {
      if (!d.has_dim_value())
        return;
      dims.push_back(d.dim_value());
    }
    inferred[info.name()] = RankedTensorType::get(dims, elem);
  };
  for (const auto &vi : model.model.graph().value_info())
    add(vi);
  for (const auto &vi : model.model.graph().output())
    add(vi);
}

LogicalResult GraphImporter::importInitializers() {
  for (const auto &t : model.model.graph().initializer()) {
    std::string error;
    FailureOr<DenseElementsAttr> attr = convertTensorProto(t, ctx, error);
    if (failed(attr))
      return emitError(fileLoc) << "initializer: " << error;
    Location loc = NameLoc::get(builder.getStringAttr(t.name()), fileLoc);
    values[t.name()] =
        TensorValue{materializeConstant(builder, loc, *attr), *attr};
  }
  return success();
}

LogicalResult GraphImporter::importNode(const onnx::NodeProto &node,
                                        unsigned index) {
  std::string name = node.name().empty()
                         ? node.op_type() + "_" + std::to_string(index)
                         : node.name();
  Location loc = NameLoc::get(builder.getStringAttr(name), fileLoc);
  auto prefix = [&]() {
    InFlightDiagnostic d = emitError(loc);
    d << "node '" << name << "' (" << node.op_type() << ", opset "
      << model.opset << "): ";
    return d;
  };
  if (!node.domain().empty() && node.domain() != "ai.onnx")
    return prefix() << "ops of domain '" << node.domain()
                    << "' are not supported";
  const ConverterMap &converters = getConverters();
  auto it = converters.find(node.op_type());
  if (it == converters.end())
    return prefix() << "unsupported op '" << node.op_type() << "'";
  for (int i = 0; i < node.input_size(); ++i)
    if (!node.input(i).empty() && !values.count(node.input(i)))
      return prefix() << "input " << i << " '" << node.input(i)
                      << "' is not defined before use";

  onnx::NodeProto named = node;
  named.set_name(name);
  NodeContext context(named, model.opset, builder, loc, values, inferred);
  if (failed(widensUnsignedInputs(node.op_type())
                 ? convertViaSignless(context, it->second)
                 : it->second(context)))
    return failure();
  SmallVector<std::string> unhandled = context.unhandledAttributes();
  if (!unhandled.empty())
    return prefix() << "attribute '" << unhandled.front()
                    << "' is not supported";
  for (int i = 0; i < node.output_size(); ++i) {
    if (node.output(i).empty())
      continue;
    auto produced = values.find(node.output(i));
    if (produced == values.end())
      return prefix() << "output " << i << " ('" << node.output(i)
                      << "') is not supported";
    RankedTensorType expected = context.inferredOutputType(i);
    auto got = dyn_cast<RankedTensorType>(produced->second.value.getType());
    if (got && llvm::any_of(got.getShape(), [](int64_t d) { return d < 0; }))
      return prefix() << "output " << i << " would have the invalid shape "
                      << typeText(got);
    if (expected && got && expected.getShape() != got.getShape())
      return prefix() << "Tessel computes output " << i << " as "
                      << typeText(got) << " but ONNX shape inference says "
                      << typeText(expected);
  }
  return success();
}

OwningOpRef<ModuleOp> GraphImporter::run() {
  ctx->loadDialect<arith::ArithDialect, func::FuncDialect,
                   math::MathDialect, tensor::TensorDialect,
                   tosa::TosaDialect, tessel::TesselDialect>();
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
  for (const auto &in : graph.input()) {
    if (initializerNames.count(in.name()))
      continue;
    FailureOr<RankedTensorType> type = staticType(in, "input");
    if (failed(type))
      return {};
    inputs.push_back(&in);
    inputTypes.push_back(*type);
  }

  builder.setInsertionPointToEnd(module->getBody());
  auto fn = func::FuncOp::create(builder, fileLoc, options.entryName,
                                 builder.getFunctionType(inputTypes, {}));
  Block *body = fn.addEntryBlock();
  builder.setInsertionPointToStart(body);
  for (auto [i, in] : llvm::enumerate(inputs)) {
    fn.setArgAttr(i, "tessel.name", builder.getStringAttr(in->name()));
    values[in->name()] = TensorValue{body->getArgument(i), {}};
  }
  if (failed(importInitializers()))
    return {};
  for (auto [i, node] : llvm::enumerate(graph.node()))
    if (failed(importNode(node, i)))
      return {};

  SmallVector<Value> results;
  for (const auto &out : graph.output()) {
    auto it = values.find(out.name());
    if (it == values.end()) {
      emitError(fileLoc) << "graph output '" << out.name()
                         << "' is not produced by any node";
      return {};
    }
    Value v = it->second.value;
    auto got = cast<RankedTensorType>(v.getType());
    // The declared output shape, where static, must match.
    if (out.type().has_tensor_type() && out.type().tensor_type().has_shape()) {
      const auto &dims = out.type().tensor_type().shape().dim();
      bool mismatch = dims.size() != got.getRank();
      for (int d = 0; !mismatch && d < dims.size(); ++d)
        mismatch = dims[d].has_dim_value() &&
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
    results.push_back(v);
  }
  func::ReturnOp::create(builder, fileLoc, results);
  fn.setFunctionType(builder.getFunctionType(inputTypes,
                                             ValueRange(results).getTypes()));
  for (auto [i, out] : llvm::enumerate(graph.output()))
    fn.setResultAttr(i, "tessel.name", builder.getStringAttr(out.name()));
  if (failed(verify(*module)))
    return {};
  return module;
}

} // namespace

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
    options.shapes[name] = shape;
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
  options.boundInputs[name] = file.str();
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
