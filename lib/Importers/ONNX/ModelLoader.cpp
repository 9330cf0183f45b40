//===- ModelLoader.cpp - Read, check and shape-infer an ONNX model ---------===//
#include "ModelLoader.h"

#include "tessel/Runtime/tessel_runtime.h"

#include "onnx/checker.h"
#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <set>

#include <csignal>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace mlir::tessel::onnx_import;

namespace {

std::string shapeText(llvm::ArrayRef<int64_t> dims) {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? "x" : "") + std::to_string(dims[i]);
  return s.empty() ? "scalar" : s;
}

/// Moves external tensor data into raw_data so the rest of the importer sees
/// one self-contained model.
bool loadExternalData(onnx::TensorProto &t, llvm::StringRef dir,
                      std::string &error) {
  std::string location;
  uint64_t offset = 0, length = 0;
  bool hasLength = false;
  for (const auto &kv : t.external_data()) {
    if (kv.key() == "location") {
      location = kv.value();
      continue;
    }
    if (kv.key() != "offset" && kv.key() != "length")
      continue;
    uint64_t value;
    if (llvm::StringRef(kv.value()).getAsInteger(10, value)) {
      error = "initializer '" + t.name() + "' has an invalid external data " +
              kv.key() + " '" + kv.value() + "'";
      return false;
    }
    if (kv.key() == "offset") {
      offset = value;
    } else {
      length = value;
      hasLength = true;
    }
  }
  if (location.empty() || llvm::sys::path::is_absolute(location) ||
      llvm::StringRef(location).contains("..")) {
    error = "initializer '" + t.name() +
            "' has an invalid external data location '" + location + "'";
    return false;
  }
  llvm::SmallString<256> file(dir);
  llvm::sys::path::append(file, location);
  auto buffer = llvm::MemoryBuffer::getFile(file, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    error = "cannot read external data '" + std::string(file) +
            "' of initializer '" + t.name() +
            "': " + buffer.getError().message();
    return false;
  }
  uint64_t size = (*buffer)->getBufferSize();
  if (!hasLength)
    length = size >= offset ? size - offset : 0;
  if (offset > size || length > size - offset) {
    error = "external data '" + std::string(file) + "' is too short for "
            "initializer '" + t.name() + "' (offset " +
            std::to_string(offset) + ", length " + std::to_string(length) +
            ", file size " + std::to_string(size) + ")";
    return false;
  }
  t.set_raw_data((*buffer)->getBufferStart() + offset, length);
  t.clear_external_data();
  t.set_data_location(onnx::TensorProto::DEFAULT);
  return true;
}

/// ONNX data type of a runtime dtype, or UNDEFINED.
onnx::TensorProto_DataType onnxType(tessel_dtype_t t) {
  switch (t) {
  case TESSEL_DTYPE_F32: return onnx::TensorProto::FLOAT;
  case TESSEL_DTYPE_F16: return onnx::TensorProto::FLOAT16;
  case TESSEL_DTYPE_F64: return onnx::TensorProto::DOUBLE;
  case TESSEL_DTYPE_I64: return onnx::TensorProto::INT64;
  case TESSEL_DTYPE_I32: return onnx::TensorProto::INT32;
  case TESSEL_DTYPE_I16: return onnx::TensorProto::INT16;
  case TESSEL_DTYPE_I8: return onnx::TensorProto::INT8;
  case TESSEL_DTYPE_U8: return onnx::TensorProto::UINT8;
  case TESSEL_DTYPE_U16: return onnx::TensorProto::UINT16;
  case TESSEL_DTYPE_U32: return onnx::TensorProto::UINT32;
  case TESSEL_DTYPE_U64: return onnx::TensorProto::UINT64;
  case TESSEL_DTYPE_I1: return onnx::TensorProto::BOOL;
  default: return onnx::TensorProto::UNDEFINED;
  }
}

/// Turns --bind-input'ed graph inputs into initializers read from .npy.
bool bindInputs(onnx::GraphProto &graph, const ImportOptions &options,
                std::string &error) {
  for (const auto &bind : options.boundInputs) {
    std::string name = bind.getKey().str();
    auto *inputs = graph.mutable_input();
    auto it = std::find_if(inputs->begin(), inputs->end(),
                           [&](const auto &in) { return in.name() == name; });
    if (it == inputs->end()) {
      error = "--bind-input names '" + name +
              "', which is not an input of the model";
      return false;
    }
    tessel_tensor_t *tensor = nullptr;
    if (tessel_status_t *st = tessel_npy_read(bind.getValue().c_str(), &tensor)) {
      error = "--bind-input " + name + ": " + tessel_status_message(st);
      tessel_status_free(st);
      return false;
    }
    onnx::TensorProto t;
    t.set_name(name);
    t.set_data_type(onnxType(tessel_tensor_dtype(tensor)));
    for (size_t i = 0; i < tessel_tensor_rank(tensor); ++i)
      t.add_dims(tessel_tensor_dims(tensor)[i]);
    t.set_raw_data(tessel_tensor_data(tensor), tessel_tensor_byte_size(tensor));
    tessel_tensor_free(tensor);
    const auto &declared = it->type().tensor_type();
    if (t.data_type() != declared.elem_type()) {
      error = "--bind-input " + name + ": the .npy holds " +
              onnx::TensorProto_DataType_Name(t.data_type()) +
              " but the input is " +
              onnx::TensorProto_DataType_Name(
                  static_cast<onnx::TensorProto_DataType>(declared.elem_type()));
      return false;
    }
    if (declared.has_shape()) {
      bool match = declared.shape().dim_size() == t.dims_size();
      for (int d = 0; match && d < t.dims_size(); ++d)
        match = !declared.shape().dim(d).has_dim_value() ||
                declared.shape().dim(d).dim_value() == t.dims(d);
      if (!match) {
        error = "--bind-input " + name +
                ": the .npy's shape does not match the input's declared shape";
        return false;
      }
    }
    inputs->erase(it);
    *graph.add_initializer() = std::move(t);
  }
  return true;
}

/// Bytes one element of ONNX data type `t` takes in raw_data, 0 if unknown.
size_t rawElementBytes(int32_t t) {
  switch (t) {
  case onnx::TensorProto::DOUBLE: case onnx::TensorProto::INT64:
  case onnx::TensorProto::UINT64: return 8;
  case onnx::TensorProto::FLOAT: case onnx::TensorProto::INT32:
  case onnx::TensorProto::UINT32: return 4;
  case onnx::TensorProto::FLOAT16: case onnx::TensorProto::BFLOAT16:
  case onnx::TensorProto::INT16: case onnx::TensorProto::UINT16: return 2;
  case onnx::TensorProto::INT8: case onnx::TensorProto::UINT8:
  case onnx::TensorProto::BOOL: return 1;
  default: return 0;
  }
}

/// Initializers whose data does not fit their dims crash ONNX's own shape
/// inference, so they are rejected before it runs.
bool validateInitializers(const onnx::GraphProto &graph, std::string &error) {
  for (const auto &t : graph.initializer()) {
    uint64_t count = 1;
    for (int64_t d : t.dims()) {
      if (d < 0 || (d != 0 && count > (uint64_t(1) << 40) / uint64_t(d))) {
        error = "initializer '" + t.name() + "' has invalid dimensions";
        return false;
      }
      count *= uint64_t(d);
    }
    size_t bytes = rawElementBytes(t.data_type());
    if (t.has_raw_data() && bytes && t.raw_data().size() != count * bytes) {
      error = "initializer '" + t.name() + "' holds " +
              std::to_string(t.raw_data().size()) +
              " bytes of data but its shape needs " +
              std::to_string(count * bytes);
      return false;
    }
  }
  return true;
}

/// Runs ONNX shape inference in a child process and merges the inferred
/// value_info into `model`. libonnx's inference can crash (division by a
/// zero stride, out-of-range axes) on models its checker accepts; a crash
/// in the child only costs the cross-check, never the compiler.
std::string inferShapesIsolated(onnx::ModelProto &model) {
  int fds[2];
  if (pipe(fds) != 0)
    return "cannot create a pipe";
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return "cannot fork";
  }
  if (pid == 0) {
    close(fds[0]);
    // A crash here is expected and reported by the parent: no crash dump
    // from the inherited LLVM signal handlers.
    if (int null = open("/dev/null", O_WRONLY); null >= 0)
      dup2(null, STDERR_FILENO);
    signal(SIGSEGV, SIG_DFL);
    signal(SIGFPE, SIG_DFL);
    signal(SIGABRT, SIG_DFL);
    signal(SIGBUS, SIG_DFL);
    signal(SIGILL, SIG_DFL);
    int rc = 0;
    try {
      onnx::ShapeInferenceOptions options(/*check_type=*/true,
                                          /*error_mode=*/0,
                                          /*enable_data_propagation=*/true);
      onnx::shape_inference::InferShapes(
          model, onnx::OpSchemaRegistry::Instance(), options);
      onnx::GraphProto types;
      *types.mutable_value_info() = model.graph().value_info();
      *types.mutable_output() = model.graph().output();
      std::string bytes = types.SerializeAsString();
      for (size_t done = 0; done < bytes.size();) {
        ssize_t n = write(fds[1], bytes.data() + done, bytes.size() - done);
        if (n <= 0) {
          rc = 3;
          break;
        }
        done += n;
      }
    } catch (const std::exception &e) {
      std::string msg = e.what();
      (void)!write(fds[1], msg.data(), msg.size());
      rc = 2;
    }
    close(fds[1]);
    _exit(rc);
  }
  close(fds[1]);
  std::string data;
  char buffer[1 << 16];
  for (ssize_t n; (n = read(fds[0], buffer, sizeof(buffer))) > 0;)
    data.append(buffer, n);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status))
    return "it crashed with signal " + std::to_string(WTERMSIG(status));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return data.empty() ? "it failed" : data;
  onnx::GraphProto types;
  if (!types.ParseFromString(data))
    return "its result could not be read";
  *model.mutable_graph()->mutable_value_info() = types.value_info();
  *model.mutable_graph()->mutable_output() = types.output();
  return "";
}

/// Applies --shape pins to the graph's (non-initializer) inputs.
bool pinShapes(onnx::GraphProto &graph, const ImportOptions &options,
               std::string &error) {
  std::set<std::string> initializers;
  for (const auto &init : graph.initializer())
    initializers.insert(init.name());
  std::set<std::string> used;
  for (auto &input : *graph.mutable_input()) {
    if (initializers.count(input.name()))
      continue;
    auto it = options.shapes.find(input.name());
    if (it == options.shapes.end())
      continue;
    used.insert(input.name());
    const auto &pin = it->second;
    if (!input.type().has_tensor_type()) {
      error = "--shape names input '" + input.name() +
              "', which is not a tensor";
      return false;
    }
    auto *shape = input.mutable_type()->mutable_tensor_type()->mutable_shape();
    if (shape->dim_size() != 0 && shape->dim_size() != (int)pin.size()) {
      error = "--shape gives input '" + input.name() + "' rank " +
              std::to_string(pin.size()) + " (" + shapeText(pin) +
              ") but the model declares rank " +
              std::to_string(shape->dim_size());
      return false;
    }
    for (int i = 0; i < shape->dim_size(); ++i) {
      const auto &dim = shape->dim(i);
      if (dim.has_dim_value() && dim.dim_value() != pin[i]) {
        error = "--shape gives input '" + input.name() + "' dimension " +
                std::to_string(i) + " = " + std::to_string(pin[i]) +
                " but the model declares " + std::to_string(dim.dim_value());
        return false;
      }
    }
    shape->clear_dim();
    for (int64_t d : pin)
      shape->add_dim()->set_dim_value(d);
  }
  for (const auto &entry : options.shapes)
    if (!used.count(entry.getKey().str())) {
      error = "--shape names '" + entry.getKey().str() +
              "', which is not an input of the model";
      return false;
    }
  return true;
}

} // namespace

namespace {
/// The newest opset of the default domain whose operator changes the
/// converters know. Opsets 19 to 22 changed operators only by new attributes
/// and element types, which a converter rejects by name when it does not
/// handle them; a newer opset may change an operator's meaning silently.
constexpr int64_t kNewestOpset = 22;
} // namespace

bool mlir::tessel::onnx_import::loadModel(llvm::StringRef path,
                                          const ImportOptions &options,
                                          LoadedModel &out,
                                          std::string &error) {
  if (llvm::sys::fs::is_directory(path)) {
    error = "'" + path.str() + "' is a directory, not an ONNX model";
    return false;
  }
  // A device or pipe (/dev/zero) would be read without end.
  llvm::sys::fs::file_status status;
  if (!llvm::sys::fs::status(path, status) &&
      status.type() != llvm::sys::fs::file_type::regular_file) {
    error = "'" + path.str() + "' is not a regular file";
    return false;
  }
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    error = "cannot open input file '" + path.str() +
            "': " + buffer.getError().message();
    return false;
  }
  llvm::SmallString<256> dir(path);
  llvm::sys::path::remove_filename(dir);
  return loadModelBytes((*buffer)->getBuffer(), path, dir, options, out,
                        error);
}

bool mlir::tessel::onnx_import::loadModelBytes(llvm::StringRef bytes,
                                               llvm::StringRef path,
                                               llvm::StringRef dir,
                                               const ImportOptions &options,
                                               LoadedModel &out,
                                               std::string &error) {
  onnx::ModelProto &model = out.model;
  if (bytes.size() > static_cast<size_t>(INT32_MAX) ||
      !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) ||
      !model.has_graph() || model.ir_version() <= 0) {
    error = "'" + path.str() +
            "' is not a valid ONNX model (protobuf parse failed or the file "
            "is truncated)";
    return false;
  }
  for (const auto &op : model.opset_import()) {
    if (op.domain().empty() || op.domain() == "ai.onnx")
      out.opset = op.version();
    if (op.domain() == kTrainingDomain)
      out.trainingOpset = op.version();
  }
  // A model of training operators alone (an optimizer step) needs no
  // default-domain opset; one of its nodes in that domain is then an error.
  if (out.opset == 0 && out.trainingOpset == 0) {
    error = "'" + path.str() + "' imports no opset of the default ONNX domain";
    return false;
  }
  if (out.opset > kNewestOpset) {
    error = "'" + path.str() + "' imports opset " + std::to_string(out.opset) +
            " of the default ONNX domain; Tessel imports opsets 1 to " +
            std::to_string(kNewestOpset) +
            " (re-export the model with an older opset)";
    return false;
  }
  for (auto &t : *model.mutable_graph()->mutable_initializer())
    if (t.data_location() == onnx::TensorProto::EXTERNAL &&
        !loadExternalData(t, dir, error))
      return false;
  if (!bindInputs(*model.mutable_graph(), options, error) ||
      !pinShapes(*model.mutable_graph(), options, error))
    return false;
  if (!validateInitializers(model.graph(), error))
    return false;
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception &e) {
    error = "ONNX checker rejected '" + path.str() + "': " + e.what();
    return false;
  }
  // Shape inference only cross-checks the converters, which compute their
  // own result types; a model it cannot handle (ONNX 1.12 rejects some
  // valid Constant nodes, and crashes on some invalid attributes) is still
  // imported, with a warning.
  std::string inferenceProblem = inferShapesIsolated(model);
  if (!inferenceProblem.empty())
    out.warning = "ONNX shape inference gave up on '" + path.str() +
                  "' (continuing without it): " + inferenceProblem;
  return true;
}
