//===- TesselModule.cpp - The tessel._tessel extension module -------------===//
//
// pybind11 bindings of (1) the compiler, through CompilerFacade.h (standard
// types only: this file is compiled with RTTI, as pybind11 needs, while
// MLIR/LLVM are not), and (2) the runtime's C API (tessel_runtime.h), the
// same one tessel-run uses. The user-facing Python API lives in
// python/tessel/*.py; this module is its private engine.
//
// Errors become the exception classes of tessel.errors, so Python code can
// catch tessel.Error for everything.
//
//===----------------------------------------------------------------------===//
#include "CompilerFacade.h"

#include "tessel/Runtime/Runtime.h"
#include "tessel/Runtime/tessel_runtime.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace py = pybind11;
namespace rt = tessel::rt;
using namespace tessel::python;

namespace {

/// Sets tessel.errors.<cls>(args...) as the pending Python error.
template <typename... Args> void setError(const char *cls, Args &&...args) {
  py::object type = py::module_::import("tessel.errors").attr(cls);
  py::object error = type(std::forward<Args>(args)...);
  PyErr_SetObject(type.ptr(), error.ptr());
}

/// Raises tessel.errors.<cls>(args...) and unwinds to pybind11.
template <typename... Args>
[[noreturn]] void raise(const char *cls, Args &&...args) {
  setError(cls, std::forward<Args>(args)...);
  throw py::error_already_set();
}

void check(const Status &status) {
  if (!status.ok)
    raise("CompileError", status.message, status.diagnostics);
}

/// Raises InvocationError with the runtime's message (and frees status).
void check(tessel_status_t *status) {
  if (!status)
    return;
  std::string message = tessel_status_message(status);
  tessel_status_free(status);
  raise("InvocationError", message);
}

// ---- dtypes ----------------------------------------------------------------

struct DTypeEntry {
  tessel_dtype_t tessel;
  char kind;     // numpy dtype.kind
  int itemsize;  // bytes
  const char *numpy;
};
constexpr DTypeEntry kDTypes[] = {
    {TESSEL_DTYPE_F32, 'f', 4, "float32"}, {TESSEL_DTYPE_F64, 'f', 8, "float64"},
    {TESSEL_DTYPE_F16, 'f', 2, "float16"}, {TESSEL_DTYPE_I64, 'i', 8, "int64"},
    {TESSEL_DTYPE_I32, 'i', 4, "int32"},   {TESSEL_DTYPE_I16, 'i', 2, "int16"},
    {TESSEL_DTYPE_I8, 'i', 1, "int8"},     {TESSEL_DTYPE_U8, 'u', 1, "uint8"},
    {TESSEL_DTYPE_I1, 'b', 1, "bool"},     {TESSEL_DTYPE_U16, 'u', 2, "uint16"},
    {TESSEL_DTYPE_U32, 'u', 4, "uint32"},  {TESSEL_DTYPE_U64, 'u', 8, "uint64"},
};

tessel_dtype_t toTessel(const py::dtype &dt) {
  for (const DTypeEntry &e : kDTypes)
    if (dt.kind() == e.kind && dt.itemsize() == e.itemsize)
      return e.tessel;
  return TESSEL_DTYPE_INVALID;
}

py::dtype toNumpy(tessel_dtype_t dtype) {
  for (const DTypeEntry &e : kDTypes)
    if (e.tessel == dtype)
      return py::dtype(e.numpy);
  // numpy has no bf16: its bit patterns, as uint16 (what a bf16 input
  // takes too).
  if (dtype == TESSEL_DTYPE_BF16)
    return py::dtype("uint16");
  raise("InvocationError", std::string("dtype ") + tessel_dtype_name(dtype) +
                               " has no numpy equivalent");
}

// ---- runtime -----------------------------------------------------------------

struct TensorDeleter {
  void operator()(tessel_tensor_t *t) const { tessel_tensor_free(t); }
};
using TensorPtr = std::unique_ptr<tessel_tensor_t, TensorDeleter>;

/// An output tensor handed to numpy without a copy: the array's base is a
/// capsule that frees the tensor with the array.
py::array adoptAsArray(TensorPtr tensor) {
  tessel_tensor_t *t = tensor.release();
  py::capsule owner(t, [](void *p) {
    tessel_tensor_free(static_cast<tessel_tensor_t *>(p));
  });
  const int64_t *dims = tessel_tensor_dims(t);
  std::vector<py::ssize_t> shape(dims, dims + tessel_tensor_rank(t));
  return py::array(toNumpy(tessel_tensor_dtype(t)), shape,
                   tessel_tensor_data(t), owner);
}

/// A view of a C-contiguous numpy array (zero copy). The caller keeps the
/// array alive while the view is used.
TensorPtr wrapArray(const py::array &array, size_t index,
                    const tessel_function_t *fn) {
  tessel_dtype_t dtype = toTessel(array.dtype());
  // Named in messages only: looked up when a check fails, not per call.
  auto name = [&] {
    std::string n = "input " + std::to_string(index);
    tessel_value_info_t info;
    if (index < tessel_function_num_inputs(fn)) {
      if (tessel_status_t *st = tessel_function_input(fn, index, &info))
        tessel_status_free(st);
      else
        n += " ('" + std::string(info.name) + "')";
    }
    return n;
  };
  if (dtype == TESSEL_DTYPE_INVALID)
    raise("InvocationError",
          name() + ": numpy dtype '" +
              std::string(py::str(array.dtype())) +
              "' has no Tessel equivalent");
  // A big-endian array read as little-endian would be garbage
  // (tessel.CompiledModule converts such arrays first).
  if (!array.dtype().attr("isnative").cast<bool>())
    raise("InvocationError",
          name() + " has non-native byte order ('" +
              std::string(py::str(array.dtype())) +
              "'); convert it with array.astype(array.dtype.newbyteorder('='))");
  if (!(array.flags() & py::array::c_style))
    raise("InvocationError", name() + " is not C-contiguous");
  std::vector<int64_t> dims(array.shape(), array.shape() + array.ndim());
  tessel_tensor_t *t = nullptr;
  check(tessel_tensor_wrap(dtype, dims.size(), dims.data(),
                           const_cast<void *>(array.data()), array.nbytes(),
                           &t));
  return TensorPtr(t);
}

/// Functions name the runtime object they live in as their owner, so the
/// libraries stay loaded while any of them lives: Python holds the C++
/// runtime API's (move-only) Artifact and Composition through shared_ptr.
/// Their rt::Error exceptions become InvocationError (translator below).
class Artifact {
public:
  explicit Artifact(const std::string &path, const std::string &device = "")
      : artifact(std::make_shared<rt::Artifact>(
            rt::Artifact::load(path, device))) {}
  std::vector<std::string> functionNames() const {
    std::vector<std::string> names;
    for (const rt::Function &fn : artifact->functions())
      names.push_back(fn.name());
    return names;
  }
  std::shared_ptr<rt::Artifact> artifact;
};

class Composition {
public:
  static Composition load(const std::string &path) {
    return Composition(rt::Composition::load(path));
  }
  static Composition link(const std::vector<std::string> &paths) {
    return Composition(rt::Composition::link(paths));
  }
  std::vector<std::string> functionNames() const {
    std::vector<std::string> names;
    for (const rt::Function &fn : c->functions())
      names.push_back(fn.name());
    return names;
  }
  std::shared_ptr<rt::Composition> c;

private:
  explicit Composition(rt::Composition &&raw)
      : c(std::make_shared<rt::Composition>(std::move(raw))) {}
};

class Function {
public:
  Function(const Artifact &owner, const std::string &name)
      : owner(owner.artifact), fn(owner.artifact->function(name).get()) {}
  Function(const Composition &composition, const std::string &name)
      : owner(composition.c), fn(composition.c->function(name).get()) {}
  std::string name() const { return tessel_function_name(fn); }

  /// [(name, dtype, shape)] for inputs or outputs.
  py::list values(bool inputs) const {
    py::list result;
    size_t n = inputs ? tessel_function_num_inputs(fn)
                      : tessel_function_num_outputs(fn);
    for (size_t i = 0; i < n; ++i) {
      tessel_value_info_t info;
      check(inputs ? tessel_function_input(fn, i, &info)
                   : tessel_function_output(fn, i, &info));
      py::tuple shape(info.rank);
      // A named (dynamic) dimension appears by its name, as in ONNX's
      // dim_param: ("T", 256).
      for (size_t d = 0; d < info.rank; ++d)
        shape[d] = info.dim_names && info.dim_names[d]
                       ? py::object(py::str(info.dim_names[d]))
                       : py::object(py::int_(info.dims[d]));
      int64_t vocab = inputs ? tessel_function_input_vocab(fn, i)
                             : tessel_function_output_vocab(fn, i);
      // "ROLE:OWNER" of a sequence's or optional's part (ABI v7), else "".
      const char *part = inputs ? tessel_function_input_part(fn, i)
                                : tessel_function_output_part(fn, i);
      result.append(py::make_tuple(info.name, tessel_dtype_name(info.dtype),
                                   shape, vocab, part ? part : ""));
    }
    return result;
  }

  py::list invoke(const std::vector<py::array> &arrays,
                  uint32_t threads) const {
    std::vector<TensorPtr> inputs = wrapAll(arrays);
    std::vector<tessel_tensor_t *> in = raw(inputs);
    std::vector<tessel_tensor_t *> out(tessel_function_num_outputs(fn),
                                       nullptr);
    tessel_status_t *status;
    {
      py::gil_scoped_release release;
      status = run(in, out, threads);
    }
    check(status);
    py::list result;
    for (tessel_tensor_t *t : out)
      result.append(adoptAsArray(TensorPtr(t)));
    return result;
  }

  /// Times `iterations` calls after `warmup` untimed ones, with outputs
  /// allocated once and written in place (as tessel-run --benchmark does).
  py::dict benchmark(const std::vector<py::array> &arrays, int iterations,
                     int warmup, uint32_t threads) const {
    if (iterations < 1)
      throw py::value_error("benchmark: iterations must be >= 1, got " +
                            std::to_string(iterations));
    if (warmup < 0)
      throw py::value_error("benchmark: warmup must be >= 0, got " +
                            std::to_string(warmup));
    std::vector<TensorPtr> inputs = wrapAll(arrays);
    std::vector<tessel_tensor_t *> in = raw(inputs);
    std::vector<tessel_tensor_t *> slots(tessel_function_num_outputs(fn),
                                         nullptr);
    check(run(in, slots, threads)); // allocates the outputs, checks inputs
    std::vector<TensorPtr> outputs;
    for (tessel_tensor_t *t : slots)
      outputs.emplace_back(t);
    std::vector<double> ms, kernelMs;
    tessel_status_t *status = nullptr;
    // A device artifact's kernels are timed alone too (without the copies
    // of inputs and outputs), as tessel-run --benchmark does.
    auto *artifact =
        const_cast<tessel_artifact_t *>(tessel_function_artifact(fn));
    bool device = artifact &&
                  std::string(tessel_artifact_device(artifact)) != "cpu";
    if (device)
      tessel_artifact_set_device_timing(artifact, 1);
    {
      py::gil_scoped_release release;
      for (long long i = 0; i < (long long)warmup + iterations && !status;
           ++i) {
        auto start = std::chrono::steady_clock::now();
        status = run(in, slots, threads);
        std::chrono::duration<double, std::milli> d =
            std::chrono::steady_clock::now() - start;
        if (i >= warmup) {
          // An expert-parallel artifact's call counts at its slowest
          // process's time (every process calls this in step).
          ms.push_back(tessel_artifact_max_over_ranks(artifact, d.count()));
          if (device)
            kernelMs.push_back(tessel_artifact_last_kernel_ms(artifact));
        }
      }
    }
    if (device)
      tessel_artifact_set_device_timing(artifact, 0);
    check(status);
    auto median = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      size_t n = v.size();
      return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    };
    std::vector<double> sorted = ms;
    std::sort(sorted.begin(), sorted.end());
    double sum = 0;
    for (double v : ms)
      sum += v;
    size_t n = sorted.size();
    py::dict result;
    result["iterations"] = n;
    result["median_ms"] = median(ms);
    result["min_ms"] = sorted.front();
    result["max_ms"] = sorted.back();
    result["mean_ms"] = sum / n;
    result["threads"] = threads;
    if (device) {
      result["kernel_median_ms"] = median(kernelMs);
      result["device"] = std::string(tessel_artifact_device(artifact));
    }
    return result;
  }

private:
  std::vector<TensorPtr> wrapAll(const std::vector<py::array> &arrays) const {
    std::vector<TensorPtr> tensors;
    for (size_t i = 0; i < arrays.size(); ++i)
      tensors.push_back(wrapArray(arrays[i], i, fn));
    return tensors;
  }
  static std::vector<tessel_tensor_t *> raw(std::vector<TensorPtr> &ts) {
    std::vector<tessel_tensor_t *> r;
    for (TensorPtr &t : ts)
      r.push_back(t.get());
    return r;
  }
  tessel_status_t *run(std::vector<tessel_tensor_t *> &in,
                       std::vector<tessel_tensor_t *> &out,
                       uint32_t threads) const {
    tessel_invoke_options_t options;
    tessel_invoke_options_init(&options);
    options.num_threads = threads;
    return tessel_function_invoke(fn, in.data(), in.size(), out.data(),
                                  out.size(), &options);
  }

  // The artifact or composition the function lives in, kept loaded.
  std::shared_ptr<void> owner;
  const tessel_function_t *fn = nullptr;
};

// ---- compiler ------------------------------------------------------------------

/// Owns a facade module; Python sees tessel._tessel.IRModule.
struct PyIRModule {
  std::unique_ptr<IRModule> module;
  IRModule &get() {
    if (!module)
      throw py::value_error("the module is empty");
    return *module;
  }
};

PyIRModule wrapOrRaise(std::unique_ptr<IRModule> module, const Status &st) {
  if (!module)
    check(st.ok ? Status::failure("internal error: no module") : st);
  return PyIRModule{std::move(module)};
}

} // namespace

PYBIND11_MODULE(_tessel, m) {
  m.doc() = "Tessel's native engine (compiler facade and runtime); use the "
            "tessel package, not this module.";

  py::class_<PyIRModule>(m, "IRModule")
      .def_static(
          "parse",
          [](const std::string &text, const std::string &name) {
            Status st;
            auto mod = IRModule::parse(text, name, st);
            return wrapOrRaise(std::move(mod), st);
          },
          py::arg("text"), py::arg("name") = "<string>")
      .def_static(
          "import_onnx",
          [](const py::bytes &bytes, const std::string &name,
             const std::vector<std::pair<std::string, std::vector<int64_t>>>
                 &shapes,
             bool raiseMoE) {
            std::string data = bytes;
            Status st;
            std::unique_ptr<IRModule> mod;
            {
              py::gil_scoped_release release;
              mod = IRModule::importONNX(data, name, shapes, raiseMoE, st);
            }
            return wrapOrRaise(std::move(mod), st);
          },
          py::arg("bytes"), py::arg("name"), py::arg("shapes"),
          py::arg("raise_moe") = true)
      .def("clone",
           [](PyIRModule &self) { return PyIRModule{self.get().clone()}; })
      .def(
          "to_string",
          [](PyIRModule &self, bool debugInfo, bool generic) {
            return self.get().str(debugInfo, generic);
          },
          py::arg("debug_info") = false, py::arg("generic") = false)
      .def("verify", [](PyIRModule &self) { check(self.get().verify()); })
      .def(
          "run_pipeline",
          [](PyIRModule &self, const std::string &pipeline) {
            Status st;
            {
              py::gil_scoped_release release;
              st = self.get().runPipeline(pipeline);
            }
            check(st);
          },
          py::arg("pipeline"))
      .def(
          "compile",
          [](PyIRModule &self, const std::string &output, unsigned optLevel,
             const std::string &mcpu, const std::string &triple, bool kernels,
             const std::string &emit, const std::string &compileTo,
             const std::string &route, const std::string &component,
             const std::string &quantize,
             const std::vector<py::array> &calibration,
             const std::string &calibrationMethod, double calibrationPercentile,
             const std::vector<std::string> &quantizeExclude,
             const std::string &quantizeReport, const std::string &precision,
             const std::string &sparsity, const std::string &sparsityReport,
             const std::string &target, const std::string &cudaArch,
             const std::string &cudaBinary, int64_t expertParallel,
             const std::vector<int64_t> &expertPlacement) {
            CompileOptions options;
            options.expertParallel = expertParallel;
            options.expertPlacement = expertPlacement;
            options.target = target;
            options.cudaArch = cudaArch;
            options.cudaBinary = cudaBinary;
            options.optLevel = optLevel;
            options.mcpu = mcpu;
            options.targetTriple = triple;
            options.kernels = kernels;
            options.emit = emit;
            options.compileTo = compileTo;
            options.routeLowering = route;
            options.component = component;
            options.quantize = quantize;
            for (const py::array &a : calibration) {
              tessel_dtype_t dt = toTessel(a.dtype());
              if (dt == TESSEL_DTYPE_INVALID ||
                  !(a.flags() & py::array::c_style) ||
                  !a.dtype().attr("isnative").cast<bool>())
                throw py::value_error(
                    "calibration arrays must be C-contiguous, native-endian "
                    "arrays of a Tessel dtype, got " +
                    std::string(py::str(a.dtype())));
              CompileOptions::Samples samples;
              samples.dtype = tessel_dtype_name(dt);
              samples.dims.assign(a.shape(), a.shape() + a.ndim());
              samples.bytes.assign(static_cast<const char *>(a.data()),
                                   a.nbytes());
              options.calibration.push_back(std::move(samples));
            }
            options.calibrationMethod = calibrationMethod;
            options.calibrationPercentile = calibrationPercentile;
            options.quantizeExclude = quantizeExclude;
            options.quantizeReport = quantizeReport;
            options.precision = precision;
            options.sparsity = sparsity;
            options.sparsityReport = sparsityReport;
            Status st;
            {
              py::gil_scoped_release release;
              st = self.get().compile(options, output);
            }
            check(st);
          },
          py::arg("output"), py::arg("opt_level") = 3,
          py::arg("mcpu") = "native", py::arg("triple") = "",
          py::arg("kernels") = true, py::arg("emit") = "lib",
          py::arg("compile_to") = "", py::arg("route_lowering") = "grouped",
          py::arg("component") = "", py::arg("quantize") = "none",
          py::arg("calibration") = std::vector<py::array>{},
          py::arg("calibration_method") = "minmax",
          py::arg("calibration_percentile") = 99.99,
          py::arg("quantize_exclude") = std::vector<std::string>{},
          py::arg("quantize_report") = "", py::arg("precision") = "f32",
          py::arg("sparsity") = "auto", py::arg("sparsity_report") = "",
          py::arg("target") = "cpu", py::arg("cuda_arch") = "sm_80",
          py::arg("cuda_binary") = "auto", py::arg("expert_parallel") = 1,
          py::arg("expert_placement") = std::vector<int64_t>{})
      .def("function_names",
           [](PyIRModule &self) { return self.get().functionNames(); });

  m.def("registered_passes", [] {
    py::list result;
    for (const PassInfo &p : registeredPasses())
      result.append(py::make_tuple(p.name, p.description, p.isPipeline));
    return result;
  });
  m.def("phase_names", &phaseNames);

  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p)
        std::rethrow_exception(p);
    } catch (const rt::Error &e) {
      setError("InvocationError", std::string(e.what()));
    }
  });

  py::class_<Artifact>(m, "Artifact")
      .def(py::init<const std::string &, const std::string &>(),
           py::arg("path"), py::arg("device") = "")
      .def_property_readonly(
          "path", [](const Artifact &a) { return a.artifact->path(); })
      .def_property_readonly(
          "target", [](const Artifact &a) { return a.artifact->target(); })
      .def_property_readonly(
          "device", [](const Artifact &a) { return a.artifact->device(); })
      .def_property_readonly(
          "ranks", [](const Artifact &a) { return a.artifact->ranks(); })
      .def_property_readonly(
          "rank", [](const Artifact &a) { return a.artifact->rank(); })
      .def(
          "abort_ranks",
          [](const Artifact &a, int code) { a.artifact->abortRanks(code); },
          py::arg("code") = 1)
      .def("function_names", &Artifact::functionNames)
      .def("imports", [](const Artifact &a) { return a.artifact->imports(); });

  py::class_<Composition>(m, "Composition")
      .def_static("load", &Composition::load, py::arg("path"))
      .def_static("link", &Composition::link, py::arg("paths"))
      .def_property_readonly("path",
                             [](const Composition &c) { return c.c->path(); })
      .def_property_readonly("entry",
                             [](const Composition &c) { return c.c->entry(); })
      .def("artifact_paths",
           [](const Composition &c) { return c.c->artifactPaths(); })
      .def("function_names", &Composition::functionNames)
      .def("default_function", [](const Composition &c) {
        return c.c->defaultFunction().name();
      });
  m.def("is_composition_file", &rt::isCompositionFile);

  py::class_<Function>(m, "Function")
      .def(py::init<const Artifact &, const std::string &>(),
           py::arg("artifact"), py::arg("name"))
      .def(py::init<const Composition &, const std::string &>(),
           py::arg("composition"), py::arg("name"))
      .def_property_readonly("name", &Function::name)
      .def_property_readonly("inputs",
                             [](const Function &f) { return f.values(true); })
      .def_property_readonly("outputs",
                             [](const Function &f) { return f.values(false); })
      .def("invoke", &Function::invoke, py::arg("inputs"),
           py::arg("threads") = 1)
      .def("benchmark", &Function::benchmark, py::arg("inputs"),
           py::arg("iterations"), py::arg("warmup") = 1,
           py::arg("threads") = 1);
}
