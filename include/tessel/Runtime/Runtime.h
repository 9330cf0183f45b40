//===- Runtime.h - C++ API of the Tessel runtime ---------------*- C++ -*-===//
//
// Header-only RAII wrappers over the C API in tessel_runtime.h. Errors are
// reported as tessel::rt::Error exceptions carrying the C status code; the
// runtime never aborts on a user mistake, so catching Error is enough to keep
// a host process alive.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_RUNTIME_H
#define TESSEL_RUNTIME_RUNTIME_H

#include "tessel/Runtime/tessel_runtime.h"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace tessel::rt {

using DType = tessel_dtype_t;
using StatusCode = tessel_status_code_t;

class Error : public std::runtime_error {
public:
  Error(StatusCode code, const std::string &message)
      : std::runtime_error(message), code_(code) {}
  StatusCode code() const { return code_; }

private:
  StatusCode code_;
};

/// Takes ownership of `status`; throws Error unless it is NULL (OK).
inline void check(tessel_status_t *status) {
  if (!status)
    return;
  Error error(tessel_status_code(status), tessel_status_message(status));
  tessel_status_free(status);
  throw error;
}

/// "2x3xf32", "f32" for a scalar: the spelling used by inline tensors,
/// signatures and error messages.
inline std::string shapeTypeString(DType dtype,
                                   const std::vector<int64_t> &dims) {
  std::string s;
  for (int64_t d : dims)
    s += std::to_string(d) + "x";
  return s + tessel_dtype_name(dtype);
}

/// Owning (or view) tensor handle; move-only.
class Tensor {
public:
  Tensor() = default;
  /// Adopts a tensor created through the C API.
  explicit Tensor(tessel_tensor_t *adopt) : t_(adopt) {}
  Tensor(Tensor &&o) noexcept : t_(std::exchange(o.t_, nullptr)) {}
  Tensor &operator=(Tensor &&o) noexcept {
    if (this != &o) {
      tessel_tensor_free(t_);
      t_ = std::exchange(o.t_, nullptr);
    }
    return *this;
  }
  Tensor(const Tensor &) = delete;
  Tensor &operator=(const Tensor &) = delete;
  ~Tensor() { tessel_tensor_free(t_); }

  /// Zero-filled, 64-byte aligned.
  static Tensor allocate(DType dtype, const std::vector<int64_t> &dims) {
    tessel_tensor_t *t = nullptr;
    check(tessel_tensor_allocate(dtype, dims.size(), dims.data(), &t));
    return Tensor(t);
  }
  /// View of caller memory that must outlive the Tensor.
  static Tensor wrap(DType dtype, const std::vector<int64_t> &dims,
                     void *data, size_t byteSize) {
    tessel_tensor_t *t = nullptr;
    check(tessel_tensor_wrap(dtype, dims.size(), dims.data(), data, byteSize,
                             &t));
    return Tensor(t);
  }

  explicit operator bool() const { return t_ != nullptr; }
  tessel_tensor_t *get() const { return t_; }
  tessel_tensor_t *release() { return std::exchange(t_, nullptr); }

  DType dtype() const { return tessel_tensor_dtype(t_); }
  size_t rank() const { return tessel_tensor_rank(t_); }
  std::vector<int64_t> dims() const {
    const int64_t *d = tessel_tensor_dims(t_);
    return std::vector<int64_t>(d, d + rank());
  }
  size_t numElements() const { return tessel_tensor_num_elements(t_); }
  size_t byteSize() const { return tessel_tensor_byte_size(t_); }
  bool isView() const { return tessel_tensor_is_view(t_) != 0; }
  void *data() { return tessel_tensor_data(t_); }
  const void *data() const { return tessel_tensor_const_data(t_); }
  template <typename T> T *data() { return static_cast<T *>(data()); }
  template <typename T> const T *data() const {
    return static_cast<const T *>(data());
  }
  double elementAsDouble(size_t index) const {
    return tessel_tensor_element_as_double(t_, index);
  }
  std::string typeString() const { return shapeTypeString(dtype(), dims()); }

private:
  tessel_tensor_t *t_ = nullptr;
};

/// One input or output as declared by the manifest.
struct ValueInfo {
  std::string name;
  DType dtype = TESSEL_DTYPE_INVALID;
  std::vector<int64_t> dims;
  /// Symbol vocabulary of an i32 tensor of symbol ids; 0 for plain values.
  int64_t vocab = 0;
  /// The name of each dynamic dimension ("" at a static one; dims holds
  /// -1 there): its size is bound from the inputs at each invocation.
  std::vector<std::string> dimNames;
  /// "ROLE:OWNER" when the tensor is part of a sequence or optional that
  /// crosses the ABI as several tensors (tessel_function_input_part); "".
  std::string part;
  bool isDynamic(size_t d) const {
    return d < dimNames.size() && !dimNames[d].empty();
  }
  /// "Tx256xf32": named dimensions by their names.
  std::string typeString() const {
    std::string s;
    for (size_t d = 0; d < dims.size(); ++d)
      s += (isDynamic(d) ? dimNames[d] : std::to_string(dims[d])) + "x";
    return s + tessel_dtype_name(dtype);
  }
};

struct InvokeOptions {
  uint32_t numThreads = 1;
};

/// Non-owning handle to a function of an Artifact; valid while the Artifact
/// lives.
class Function {
public:
  explicit Function(const tessel_function_t *fn) : fn_(fn) {}
  const tessel_function_t *get() const { return fn_; }

  std::string name() const { return tessel_function_name(fn_); }
  std::string symbol() const { return tessel_function_symbol(fn_); }
  std::vector<ValueInfo> inputs() const {
    return values(tessel_function_num_inputs(fn_), tessel_function_input,
                  tessel_function_input_vocab, tessel_function_input_part);
  }
  std::vector<ValueInfo> outputs() const {
    return values(tessel_function_num_outputs(fn_), tessel_function_output,
                  tessel_function_output_vocab, tessel_function_output_part);
  }
  /// Path of the artifact that exports the function.
  std::string artifactPath() const {
    return tessel_artifact_path(tessel_function_artifact(fn_));
  }
  /// "add(x: 2x3xf32, y: 2x3xf32) -> (out0: 2x3xf32)"
  std::string signature() const {
    auto list = [](const std::vector<ValueInfo> &vs) {
      std::string s;
      for (size_t i = 0; i < vs.size(); ++i)
        s += (i ? ", " : "") + vs[i].name + ": " + vs[i].typeString();
      return s;
    };
    return name() + "(" + list(inputs()) + ") -> (" + list(outputs()) + ")";
  }

  /// Runs the function; `outputs` may be empty (all allocated by the
  /// runtime) or hold one tensor per output, empty ones being allocated.
  void invoke(const std::vector<Tensor> &inputs, std::vector<Tensor> &outputs,
              const InvokeOptions &options = {}) const {
    if (outputs.empty())
      outputs.resize(tessel_function_num_outputs(fn_));
    std::vector<tessel_tensor_t *> in, out;
    for (const Tensor &t : inputs)
      in.push_back(t.get());
    for (Tensor &t : outputs)
      out.push_back(t.get());
    tessel_invoke_options_t opts;
    tessel_invoke_options_init(&opts);
    opts.num_threads = options.numThreads;
    check(tessel_function_invoke(fn_, in.data(), in.size(), out.data(),
                                 out.size(), &opts));
    for (size_t i = 0; i < outputs.size(); ++i)
      if (!outputs[i])
        outputs[i] = Tensor(out[i]);
  }
  std::vector<Tensor> invoke(const std::vector<Tensor> &inputs,
                             const InvokeOptions &options = {}) const {
    std::vector<Tensor> outputs;
    invoke(inputs, outputs, options);
    return outputs;
  }

private:
  using InfoFn = tessel_status_t *(*)(const tessel_function_t *, size_t,
                                      tessel_value_info_t *);
  using VocabFn = int64_t (*)(const tessel_function_t *, size_t);
  using PartFn = const char *(*)(const tessel_function_t *, size_t);
  std::vector<ValueInfo> values(size_t n, InfoFn get, VocabFn vocab,
                                PartFn part) const {
    std::vector<ValueInfo> result;
    for (size_t i = 0; i < n; ++i) {
      tessel_value_info_t info;
      check(get(fn_, i, &info));
      ValueInfo v{info.name, info.dtype,
                  std::vector<int64_t>(info.dims, info.dims + info.rank),
                  vocab(fn_, i), {}, {}};
      if (const char *p = part(fn_, i))
        v.part = p;
      for (size_t d = 0; d < info.rank; ++d)
        v.dimNames.push_back(info.dim_names && info.dim_names[d]
                                 ? info.dim_names[d]
                                 : "");
      result.push_back(std::move(v));
    }
    return result;
  }

  const tessel_function_t *fn_;
};

/// A loaded artifact; move-only, unloads the library on destruction.
class Artifact {
public:
  /// `device`: "cpu", "cuda", "cuda:N", or "" for the artifact's own
  /// (tessel_artifact_load_on).
  static Artifact load(const std::string &path,
                       const std::string &device = "") {
    tessel_artifact_t *a = nullptr;
    check(tessel_artifact_load_on(path.c_str(), device.c_str(), &a));
    return Artifact(a);
  }
  Artifact(Artifact &&o) noexcept : a_(std::exchange(o.a_, nullptr)) {}
  Artifact &operator=(Artifact &&o) noexcept {
    if (this != &o) {
      tessel_artifact_free(a_);
      a_ = std::exchange(o.a_, nullptr);
    }
    return *this;
  }
  Artifact(const Artifact &) = delete;
  Artifact &operator=(const Artifact &) = delete;
  ~Artifact() { tessel_artifact_free(a_); }

  tessel_artifact_t *get() const { return a_; }
  std::string path() const { return tessel_artifact_path(a_); }
  std::string target() const { return tessel_artifact_target(a_); }
  /// "cpu", or "cuda <device name> sm_NN" (tessel_artifact_device).
  std::string device() const { return tessel_artifact_device(a_); }
  /// Device artifacts: kernel timing on/off; the last call's kernel time
  /// (ms; -1 without timing or on the CPU).
  void setDeviceTiming(bool on) { tessel_artifact_set_device_timing(a_, on); }
  /// Expert-parallel artifacts: the MPI processes it runs on (1 otherwise),
  /// this process's rank, and the largest `value` over the processes
  /// (tessel_artifact_ranks/_rank/_max_over_ranks).
  int ranks() const { return tessel_artifact_ranks(a_); }
  int rank() const { return tessel_artifact_rank(a_); }
  double maxOverRanks(double value) const {
    return tessel_artifact_max_over_ranks(a_, value);
  }
  void abortRanks(int code) const { tessel_artifact_abort_ranks(a_, code); }
  double lastKernelMs() const { return tessel_artifact_last_kernel_ms(a_); }
  std::vector<Function> functions() const {
    std::vector<Function> fns;
    for (size_t i = 0, e = tessel_artifact_num_functions(a_); i < e; ++i)
      fns.emplace_back(tessel_artifact_function_at(a_, i));
    return fns;
  }
  /// Throws Error(TESSEL_NOT_FOUND) listing the available names.
  Function function(const std::string &name) const {
    const tessel_function_t *fn = nullptr;
    check(tessel_artifact_lookup_function(a_, name.c_str(), &fn));
    return Function(fn);
  }
  /// Names of the functions the artifact imports (empty for most).
  std::vector<std::string> imports() const {
    std::vector<std::string> names;
    for (size_t i = 0, e = tessel_artifact_num_imports(a_); i < e; ++i)
      names.push_back(tessel_artifact_import_name(a_, i));
    return names;
  }

private:
  explicit Artifact(tessel_artifact_t *a) : a_(a) {}
  tessel_artifact_t *a_;
};

/// Whether `path` is a composition file (else: treat it as an artifact).
inline bool isCompositionFile(const std::string &path) {
  return tessel_is_composition_file(path.c_str()) != 0;
}

/// Artifacts linked into one model; move-only, unloads them on
/// destruction. Function handles die with the Composition.
class Composition {
public:
  /// A composition file (docs/runtime.md, "Compositions").
  static Composition load(const std::string &path) {
    tessel_composition_t *c = nullptr;
    check(tessel_composition_load(path.c_str(), &c));
    return Composition(c);
  }
  /// The artifacts at `paths`, linked.
  static Composition link(const std::vector<std::string> &paths) {
    std::vector<const char *> raw;
    for (const std::string &p : paths)
      raw.push_back(p.c_str());
    tessel_composition_t *c = nullptr;
    check(tessel_composition_link(raw.data(), raw.size(), &c));
    return Composition(c);
  }
  Composition(Composition &&o) noexcept : c_(std::exchange(o.c_, nullptr)) {}
  Composition &operator=(Composition &&o) noexcept {
    if (this != &o) {
      tessel_composition_free(c_);
      c_ = std::exchange(o.c_, nullptr);
    }
    return *this;
  }
  Composition(const Composition &) = delete;
  Composition &operator=(const Composition &) = delete;
  ~Composition() { tessel_composition_free(c_); }

  tessel_composition_t *get() const { return c_; }
  std::string path() const { return tessel_composition_path(c_); }
  std::string entry() const { return tessel_composition_entry(c_); }
  std::vector<std::string> artifactPaths() const {
    std::vector<std::string> paths;
    for (size_t i = 0, e = tessel_composition_num_artifacts(c_); i < e; ++i)
      paths.push_back(
          tessel_artifact_path(tessel_composition_artifact_at(c_, i)));
    return paths;
  }
  /// Every function of every artifact, in artifact order.
  std::vector<Function> functions() const {
    std::vector<Function> fns;
    for (size_t i = 0, e = tessel_composition_num_artifacts(c_); i < e; ++i) {
      const tessel_artifact_t *a = tessel_composition_artifact_at(c_, i);
      for (size_t j = 0, n = tessel_artifact_num_functions(a); j < n; ++j)
        fns.emplace_back(tessel_artifact_function_at(a, j));
    }
    return fns;
  }
  /// Throws Error(TESSEL_NOT_FOUND) listing the available names.
  Function function(const std::string &name) const {
    const tessel_function_t *fn = nullptr;
    check(tessel_composition_lookup_function(c_, name.c_str(), &fn));
    return Function(fn);
  }
  /// The `entry`, else the only function nothing imports, else 'main'.
  Function defaultFunction() const {
    const tessel_function_t *fn = nullptr;
    check(tessel_composition_default_function(c_, &fn));
    return Function(fn);
  }

private:
  explicit Composition(tessel_composition_t *c) : c_(c) {}
  tessel_composition_t *c_;
};

} // namespace tessel::rt

#endif // TESSEL_RUNTIME_RUNTIME_H
