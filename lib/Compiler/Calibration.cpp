//===- Calibration.cpp - static quantization's calibration run -------------===//
//
// Calibration runs the model itself: the float model, compiled as usual
// with the activations static quantization will quantize added to its
// results, runs on the user's samples through the runtime's C API, and
// what it computes becomes each activation's range. So calibration sees
// exactly the values the compiled model computes, with no second
// interpreter to keep in step. docs/quantization.md#static-quantization.
//
//===----------------------------------------------------------------------===//
#include "Calibration.h"

#include "tessel/Quantization/Passes.h"
#include "tessel/Quantization/StaticQuantization.h"
#include "tessel/Runtime/tessel_runtime.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>
#include <thread>

using namespace mlir;
using namespace mlir::tessel;

namespace {

/// The message of a runtime status, which is freed.
std::string takeMessage(tessel_status_t *status) {
  std::string m = tessel_status_message(status);
  tessel_status_free(status);
  return m;
}

std::string shapeString(ArrayRef<int64_t> dims, StringRef dtype) {
  std::string s;
  for (int64_t d : dims)
    s += (d < 0 ? std::string("?") : std::to_string(d)) + "x";
  return s + dtype.str();
}

/// A loaded artifact's single entry point and the samples to run it on.
class Runner {
public:
  ~Runner() { tessel_artifact_free(artifact); }

  /// Loads `path` and checks the samples against its entry's inputs.
  LogicalResult load(ModuleOp module, StringRef path,
                     const std::vector<CalibrationSamples> &samples) {
    this->samples = &samples;
    if (tessel_status_t *s = tessel_artifact_load(path.str().c_str(),
                                                  &artifact))
      return mlir::emitError(module.getLoc())
             << "cannot load the calibration artifact: " << takeMessage(s);
    if (tessel_artifact_num_functions(artifact) != 1)
      return mlir::emitError(module.getLoc()) << "static quantization needs a model with "
                                   "one entry function";
    fn = tessel_artifact_function_at(artifact, 0);
    return check(module);
  }

  size_t count() const { return k; }
  size_t numOutputs() const { return tessel_function_num_outputs(fn); }

  /// Runs sample `index`; `outputs` receives the results (owned).
  LogicalResult run(ModuleOp module, size_t index,
                    std::vector<tessel_tensor_t *> &outputs) {
    std::vector<tessel_tensor_t *> inputs;
    auto freeInputs = llvm::make_scope_exit([&] {
      for (tessel_tensor_t *t : inputs)
        tessel_tensor_free(t);
    });
    for (const CalibrationSamples &s : *samples) {
      size_t bytes = s.data.size() / s.dims[0];
      tessel_tensor_t *view = nullptr;
      if (tessel_status_t *st = tessel_tensor_wrap(
              tessel_dtype_from_name(s.dtype.c_str()), s.dims.size() - 1,
              s.dims.data() + 1,
              const_cast<char *>(s.data.data()) + index * bytes, bytes, &view))
        return mlir::emitError(module.getLoc()) << "calibration sample " << index << " of '"
                                  << s.source << "': " << takeMessage(st);
      inputs.push_back(view);
    }
    outputs.assign(numOutputs(), nullptr);
    tessel_invoke_options_t opts;
    tessel_invoke_options_init(&opts);
    opts.num_threads = std::max(1u, std::thread::hardware_concurrency());
    if (tessel_status_t *st = tessel_function_invoke(
            fn, inputs.data(), inputs.size(), outputs.data(), outputs.size(),
            &opts))
      return mlir::emitError(module.getLoc())
             << "calibration sample " << index << ": " << takeMessage(st);
    return success();
  }

private:
  /// Checks the samples against the entry's inputs; sets count().
  LogicalResult check(ModuleOp module) {
    size_t n = tessel_function_num_inputs(fn);
    std::vector<tessel_value_info_t> infos(n);
    std::vector<std::string> names;
    for (size_t i = 0; i < n; ++i) {
      tessel_status_free(tessel_function_input(fn, i, &infos[i]));
      names.push_back(infos[i].name);
    }
    if (samples->size() != n)
      return mlir::emitError(module.getLoc())
             << "the model has " << n << " input(s) ("
             << llvm::join(names, ", ") << ") but calibration data was given "
             << samples->size()
             << " time(s): give --calibration-data once per input, in order";
    for (size_t i = 0; i < n; ++i) {
      const CalibrationSamples &s = (*samples)[i];
      const tessel_value_info_t &info = infos[i];
      ArrayRef<int64_t> want(info.dims, info.rank);
      std::string wantType = shapeString(want, tessel_dtype_name(info.dtype));
      if (tessel_dtype_from_name(s.dtype.c_str()) != info.dtype)
        return mlir::emitError(module.getLoc())
               << "calibration data '" << s.source << "' for input '"
               << info.name << "' holds " << s.dtype
               << " values, the input is " << wantType;
      bool fits = s.dims.size() == info.rank + 1;
      for (size_t d = 0; fits && d < info.rank; ++d)
        fits = want[d] < 0 || want[d] == s.dims[d + 1];
      if (!fits || s.dims.empty())
        return mlir::emitError(module.getLoc())
               << "calibration data '" << s.source << "' for input '"
               << info.name << "' is " << shapeString(s.dims, s.dtype)
               << ", expected [K, *input shape] with input " << wantType;
      if (i == 0)
        k = s.dims[0];
      else if (s.dims[0] != int64_t(k))
        return mlir::emitError(module.getLoc())
               << "calibration data: every input needs the same number of "
                  "samples, '"
               << (*samples)[0].source << "' has " << k << ", '" << s.source
               << "' has " << s.dims[0];
    }
    if (k == 0)
      return mlir::emitError(module.getLoc()) << "calibration data '"
                                << (*samples)[0].source << "' has no samples";
    return success();
  }

  tessel_artifact_t *artifact = nullptr;
  const tessel_function_t *fn = nullptr;
  const std::vector<CalibrationSamples> *samples = nullptr;
  size_t k = 0;
};

void freeAll(std::vector<tessel_tensor_t *> &tensors) {
  for (tessel_tensor_t *t : tensors)
    tessel_tensor_free(t);
  tensors.clear();
}

/// Where each site's taps are among the instrumented entry's results.
struct TapIndex {
  SmallVector<size_t, 2> activations;
  size_t output = 0;
};

/// The taps of `sites` numbered from `first`; `end` receives one past the
/// last, i.e. the instrumented entry's result count.
SmallVector<TapIndex> tapIndices(ArrayRef<QuantizationSite> sites,
                                 size_t first, bool outputs, size_t &end) {
  SmallVector<TapIndex> taps;
  size_t next = first;
  for (const QuantizationSite &site : sites) {
    TapIndex t;
    for (size_t i = 0; i < site.activations.size(); ++i)
      t.activations.push_back(next++);
    if (outputs)
      t.output = next++;
    taps.push_back(t);
  }
  end = next;
  return taps;
}

/// `module` cloned, instrumented with taps and compiled in float (or, with
/// `quantize`, as static int8 from its annotations) to `path`, for the
/// host CPU.
LogicalResult compileInstrumented(ModuleOp module,
                                  const CompileOptions &options,
                                  QuantizeMode quantize, bool outputs,
                                  StringRef path, TimingScope &timing) {
  OwningOpRef<ModuleOp> clone = module.clone();
  PassManager pm(module.getContext());
  TesselExposeCalibrationTapsOptions tapOptions;
  tapOptions.outputs = outputs;
  pm.addPass(createTesselExposeCalibrationTaps(tapOptions));
  if (failed(pm.run(*clone)))
    return failure();
  CompileOptions host;
  host.optLevel = options.optLevel;
  host.kernels = options.kernels;
  host.routeLowering = options.routeLowering;
  host.component = options.component;
  host.quantize = quantize;
  return compileModule(*clone, host, path, timing);
}

/// The entry function: the one public function with a body.
func::FuncOp entryFunction(ModuleOp module) {
  func::FuncOp entry;
  for (auto fn : module.getOps<func::FuncOp>()) {
    if (fn.isDeclaration() || !fn.isPublic())
      continue;
    if (entry)
      return {};
    entry = fn;
  }
  return entry;
}

std::string opLabel(Operation *op, size_t index) {
  std::string name = nodeName(op);
  return name.empty() ? (op->getName().getStringRef() + "#" + Twine(index)).str()
                      : name;
}

double sqnr(double signal, double noise) {
  if (noise == 0.0)
    return INFINITY;
  if (signal == 0.0)
    return -INFINITY;
  return 10.0 * std::log10(signal / noise);
}

} // namespace

std::optional<CalibrationSamples>
mlir::tessel::readCalibrationSamples(StringRef path, std::string &error) {
  tessel_tensor_t *t = nullptr;
  if (tessel_status_t *s = tessel_npy_read(path.str().c_str(), &t)) {
    error = takeMessage(s);
    return std::nullopt;
  }
  auto freeT = llvm::make_scope_exit([&] { tessel_tensor_free(t); });
  CalibrationSamples samples;
  samples.source = llvm::sys::path::filename(path).str();
  samples.dtype = tessel_dtype_name(tessel_tensor_dtype(t));
  samples.dims.assign(tessel_tensor_dims(t),
                      tessel_tensor_dims(t) + tessel_tensor_rank(t));
  if (samples.dims.empty()) {
    error = "'" + path.str() +
            "' holds a scalar; calibration data is [K, *input shape]";
    return std::nullopt;
  }
  const char *data = static_cast<const char *>(tessel_tensor_const_data(t));
  samples.data.assign(data, data + tessel_tensor_byte_size(t));
  return samples;
}

LogicalResult mlir::tessel::calibrateModule(ModuleOp module,
                                            const CompileOptions &options,
                                            TimingScope &timing) {
  TimingScope calTiming = timing.nest("Calibration");
  if (!isValidCalibrationPercentile(options.calibrationPercentile))
    return mlir::emitError(module.getLoc())
           << "the calibration percentile must be in [50, 100], got "
           << llvm::formatv("{0}", options.calibrationPercentile).str();
  func::FuncOp entry = entryFunction(module);
  if (!entry)
    return mlir::emitError(module.getLoc())
           << "static quantization needs a model with one entry function";

  // Excluded nodes must exist, so a typo is not silently a float layer.
  llvm::StringSet<> names;
  module.walk([&](Operation *op) {
    std::string n = nodeName(op);
    if (!n.empty())
      names.insert(n);
  });
  for (const std::string &e : options.quantizeExclude)
    if (!names.contains(e))
      return mlir::emitError(module.getLoc()) << "--quantize-exclude: the model has no node "
                                   "named '"
                                << e << "'";
  llvm::StringSet<> excluded;
  for (const std::string &e : options.quantizeExclude)
    excluded.insert(e);

  SmallVector<SkippedSite> skipped;
  SmallVector<QuantizationSite> sites = findQuantizationSites(entry, &skipped);
  bool report = !options.quantizeReport.empty();
  if (llvm::all_of(sites, [&](const QuantizationSite &s) {
        return excluded.contains(nodeName(s.op));
      })) {
    InFlightDiagnostic w = mlir::emitWarning(module.getLoc())
                           << "--quantize=int8: nothing to quantize, the "
                              "model stays float (no convolution or matmul "
                              "with an int8 form";
    if (!skipped.empty())
      w << "; '" << opLabel(skipped.front().op, 0)
        << "': " << skipped.front().reason;
    w << ")";
  }

  llvm::SmallString<128> dir;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueDirectory("tessel-calibration", dir))
    return mlir::emitError(module.getLoc()) << "cannot create a temporary directory: "
                              << ec.message();
  llvm::SmallString<128> floatPath(dir), int8Path(dir);
  llvm::sys::path::append(floatPath, "float.so");
  llvm::sys::path::append(int8Path, "int8.so");
  auto cleanup = llvm::make_scope_exit([&] {
    llvm::sys::fs::remove(floatPath);
    llvm::sys::fs::remove(int8Path);
    llvm::sys::fs::remove(dir);
  });

  size_t origOutputs = entry.getNumResults();
  if (failed(compileInstrumented(module, options, QuantizeMode::None, report,
                                 floatPath, calTiming)))
    return failure();
  Runner floatRun;
  if (failed(floatRun.load(module, floatPath, options.calibration)))
    return failure();
  size_t numResults;
  SmallVector<TapIndex> taps =
      tapIndices(sites, origOutputs, report, numResults);
  if (floatRun.numOutputs() != numResults)
    return mlir::emitError(module.getLoc())
           << "internal error: the calibration artifact has "
           << floatRun.numOutputs() << " results, expected " << numResults;

  // Observe every activation tap over every sample.
  std::vector<std::vector<RangeObserver>> observers(sites.size());
  for (size_t i = 0; i < sites.size(); ++i)
    observers[i].assign(sites[i].activations.size(),
                        RangeObserver(options.calibrationMethod,
                                      options.calibrationPercentile));
  std::vector<tessel_tensor_t *> outs;
  for (size_t k = 0; k < floatRun.count(); ++k) {
    if (failed(floatRun.run(module, k, outs)))
      return failure();
    for (size_t i = 0; i < sites.size(); ++i)
      for (size_t a = 0; a < taps[i].activations.size(); ++a) {
        tessel_tensor_t *t = outs[taps[i].activations[a]];
        if (tessel_tensor_dtype(t) != TESSEL_DTYPE_F32)
          return mlir::emitError(module.getLoc())
                 << "internal error: calibration tap of '"
                 << opLabel(sites[i].op, i) << "' is not f32";
        observers[i][a].observe(
            static_cast<const float *>(tessel_tensor_const_data(t)),
            tessel_tensor_num_elements(t));
      }
    freeAll(outs);
  }

  // Annotate the sites: the ranges tessel-quantize-static reads.
  Builder b(module.getContext());
  std::vector<std::vector<std::pair<double, double>>> ranges(sites.size());
  for (size_t i = 0; i < sites.size(); ++i) {
    Operation *op = sites[i].op;
    if (excluded.contains(nodeName(op)))
      continue;
    SmallVector<double> bounds;
    for (size_t a = 0; a < observers[i].size(); ++a) {
      RangeObserver &o = observers[i][a];
      if (o.sawNonFinite() || o.count() == 0)
        return mlir::emitError(op->getLoc())
               << "operand " << sites[i].activations[a] << " of '"
               << opLabel(op, i) << "' is "
               << (o.count() ? "not finite" : "empty")
               << " on the calibration data; exclude the node with "
                  "--quantize-exclude or check the samples";
      ranges[i].push_back(o.range());
      bounds.push_back(ranges[i].back().first);
      bounds.push_back(ranges[i].back().second);
    }
    op->setAttr(kCalibratedRangesAttr, b.getDenseF64ArrayAttr(bounds));
  }
  if (!report)
    return success();

  // The report: compile the annotated model as int8 with the same taps and
  // compare each site's result with the float one, sample by sample.
  if (failed(compileInstrumented(module, options, QuantizeMode::Int8, true,
                                 int8Path, calTiming)))
    return failure();
  Runner int8Run;
  if (failed(int8Run.load(module, int8Path, options.calibration)))
    return failure();
  std::vector<double> signal(sites.size(), 0.0), noise(sites.size(), 0.0);
  std::vector<tessel_tensor_t *> qouts;
  auto freeOuts = llvm::make_scope_exit([&] {
    freeAll(outs);
    freeAll(qouts);
  });
  for (size_t k = 0; k < floatRun.count(); ++k) {
    if (failed(floatRun.run(module, k, outs)) ||
        failed(int8Run.run(module, k, qouts)))
      return failure();
    for (size_t i = 0; i < sites.size(); ++i) {
      tessel_tensor_t *ref = outs[taps[i].output], *got = qouts[taps[i].output];
      if (qouts.size() != outs.size() ||
          tessel_tensor_dtype(ref) != TESSEL_DTYPE_F32 ||
          tessel_tensor_dtype(got) != TESSEL_DTYPE_F32 ||
          tessel_tensor_num_elements(ref) != tessel_tensor_num_elements(got))
        return mlir::emitError(module.getLoc())
               << "internal error: the float and int8 results of '"
               << opLabel(sites[i].op, i) << "' differ in type";
      const float *r = static_cast<const float *>(tessel_tensor_const_data(ref));
      const float *g = static_cast<const float *>(tessel_tensor_const_data(got));
      for (size_t e = 0, n = tessel_tensor_num_elements(ref); e < n; ++e) {
        double d = double(r[e]) - double(g[e]);
        signal[i] += double(r[e]) * double(r[e]);
        noise[i] += d * d;
      }
    }
    freeAll(outs);
    freeAll(qouts);
  }

  std::error_code ec;
  llvm::raw_fd_ostream file(options.quantizeReport, ec);
  if (ec)
    return mlir::emitError(module.getLoc()) << "cannot write the quantization report '"
                              << options.quantizeReport
                              << "': " << ec.message();
  llvm::json::OStream j(file, 2);
  auto number = [&](double x) {
    if (std::isfinite(x))
      j.value(x);
    else
      j.value(x > 0 ? "inf" : (x < 0 ? "-inf" : "nan"));
  };
  j.object([&] {
    j.attribute("method", calibrationMethodName(options.calibrationMethod));
    if (options.calibrationMethod == CalibrationMethod::Percentile)
      j.attribute("percentile", options.calibrationPercentile);
    j.attribute("samples", int64_t(floatRun.count()));
    j.attributeArray("excluded", [&] {
      for (const std::string &e : options.quantizeExclude)
        j.value(e);
    });
    j.attributeArray("layers", [&] {
      for (size_t i = 0; i < sites.size(); ++i) {
        const QuantizationSite &site = sites[i];
        bool isExcluded = excluded.contains(nodeName(site.op));
        j.object([&] {
          j.attribute("node", opLabel(site.op, i));
          j.attribute("op", site.op->getName().getStringRef());
          j.attribute("precision", isExcluded ? "float" : "int8");
          if (isExcluded)
            j.attribute("reason", "excluded by --quantize-exclude");
          j.attributeArray("activations", [&] {
            for (size_t a = 0; a < ranges[i].size(); ++a) {
              auto [lo, hi] = ranges[i][a];
              ActivationQuantization q = activationQuantization(lo, hi);
              j.object([&] {
                j.attribute("operand", int64_t(site.activations[a]));
                j.attributeArray("range", [&] {
                  j.value(lo);
                  j.value(hi);
                });
                j.attribute("scale", q.scale);
                j.attribute("zero_point", q.zeroPoint);
              });
            }
          });
          if (site.weightOperand >= 0 && !isExcluded) {
            Value w = site.op->getOperand(site.weightOperand);
            std::vector<float> scales = symmetricScales(
                *constantValues(w),
                cast<RankedTensorType>(w.getType()).getShape(),
                site.weightAxis);
            j.attributeObject("weights", [&] {
              j.attribute("axis", site.weightAxis);
              j.attributeArray("scales", [&] {
                for (float s : scales)
                  j.value(double(s));
              });
            });
          }
          j.attributeBegin("sqnr_db");
          number(sqnr(signal[i], noise[i]));
          j.attributeEnd();
        });
      }
      // What stays float for want of an int8 form: a remark, not an error.
      for (const SkippedSite &s : skipped)
        j.object([&] {
          j.attribute("node", opLabel(s.op, 0));
          j.attribute("op", s.op->getName().getStringRef());
          j.attribute("precision", "float");
          j.attribute("reason", s.reason);
        });
    });
  });
  file << "\n";
  return success();
}
