//===- main.cpp - tessel-run: run a Tessel artifact -----------------------===//
//
//   tessel-run model.so --input=@x.npy --input="2xf32=1 2" --output=@y.npy
//   tessel-run model.composition --input=@x.npy    (artifacts linked)
//
// Every failure is reported as "tessel-run: error: ..." with a non-zero exit
// status (2 for command-line mistakes, 1 otherwise); nothing here aborts.
//
//===----------------------------------------------------------------------===//

#include "Compare.h"
#include "ModelValues.h"
#include "Options.h"
#include "tessel/Runtime/Npy.h"
#include "tessel/Runtime/Runtime.h"
#include "tessel/Runtime/TensorText.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>

using namespace tessel;
using namespace tessel::run;

namespace {

rt::Function selectFunction(const rt::Artifact &artifact,
                            const std::string &name) {
  if (!name.empty())
    return artifact.function(name);
  std::vector<rt::Function> fns = artifact.functions();
  if (fns.size() == 1)
    return fns[0];
  std::string names;
  for (const rt::Function &f : fns) {
    if (f.name() == "main")
      return f;
    names += (names.empty() ? "" : ", ") + f.name();
  }
  throw rt::Error(TESSEL_INVALID_ARGUMENT,
                  "artifact '" + artifact.path() + "' has " +
                      std::to_string(fns.size()) + " functions and none is "
                      "'main' (" + names + "); choose one with --function=NAME");
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/// `device`: a device artifact, whose kernels are also timed alone.
/// `ranks`: an expert-parallel artifact, whose every call is timed on each
/// process and counted at the slowest process's time (only rank 0 prints).
void runBenchmark(const rt::Function &fn, const std::vector<rt::Tensor> &inputs,
                  std::vector<rt::Tensor> &outputs, const Options &opts,
                  rt::Artifact *device, const rt::Artifact *ranks) {
  rt::InvokeOptions invokeOpts{opts.threads};
  std::vector<double> ms, kernelMs;
  ms.reserve(size_t(opts.benchmark));
  if (device)
    device->setDeviceTiming(true);
  for (int64_t i = 0; i < opts.benchmark; ++i) {
    auto start = std::chrono::steady_clock::now();
    fn.invoke(inputs, outputs, invokeOpts);
    auto end = std::chrono::steady_clock::now();
    double t = std::chrono::duration<double, std::milli>(end - start).count();
    ms.push_back(ranks ? ranks->maxOverRanks(t) : t);
    if (device)
      kernelMs.push_back(device->lastKernelMs());
  }
  if (device)
    device->setDeviceTiming(false);
  if (ranks && ranks->rank() != 0)
    return;
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  size_t n = sorted.size();
  double mean = 0;
  for (double v : ms)
    mean += v / double(n);
  std::printf("benchmark: function=%s iterations=%lld median_ms=%.6f "
              "min_ms=%.6f max_ms=%.6f mean_ms=%.6f",
              fn.name().c_str(), static_cast<long long>(n), median(ms),
              sorted[0], sorted[n - 1], mean);
  // The kernels alone: without the copies between host and device.
  if (device)
    std::printf(" kernel_median_ms=%.6f", median(kernelMs));
  std::printf("\n");
}

/// Returns false when some output did not match.
bool checkExpected(const std::vector<Slot> &slots,
                   const std::vector<ModelValue> &outputs, const Options &opts) {
  bool all = true;
  for (size_t i = 0; i < opts.expected.size(); ++i) {
    ModelValue exp = loadValue(opts.expected[i]);
    std::string report = compareValues(
        outputs[i], exp, opts.atol, opts.rtol,
        "output " + std::to_string(i) + " ('" + slots[i].name + "')");
    if (!report.empty()) {
      std::printf("[FAILED] %s\n", report.c_str());
      all = false;
    }
  }
  if (all && !opts.expected.empty())
    std::printf("[SUCCESS] all outputs match\n");
  return all;
}

/// What the command line names: one artifact, or artifacts linked into a
/// composition (a composition file, or several artifacts).
struct Model {
  std::unique_ptr<rt::Artifact> artifact;
  std::unique_ptr<rt::Composition> composition;

  static Model load(const std::vector<std::string> &paths,
                    const std::string &device) {
    Model m;
    if (!device.empty() && (paths.size() > 1 || rt::isCompositionFile(paths[0])))
      throw UsageError("--device applies to a single artifact; a "
                       "composition runs where its artifacts were compiled "
                       "for");
    if (paths.size() > 1)
      m.composition =
          std::make_unique<rt::Composition>(rt::Composition::link(paths));
    else if (rt::isCompositionFile(paths[0]))
      m.composition =
          std::make_unique<rt::Composition>(rt::Composition::load(paths[0]));
    else
      m.artifact =
          std::make_unique<rt::Artifact>(rt::Artifact::load(paths[0], device));
    return m;
  }
  std::vector<rt::Function> functions() const {
    return artifact ? artifact->functions() : composition->functions();
  }
  rt::Function function(const std::string &name) const {
    return artifact ? artifact->function(name) : composition->function(name);
  }
  rt::Function select(const std::string &name) const {
    if (artifact)
      return selectFunction(*artifact, name);
    return name.empty() ? composition->defaultFunction()
                        : composition->function(name);
  }
};

/// A rank other than 0 of an expert-parallel artifact: the same calls as
/// rank 0 (every collective needs every process), on zero inputs of the
/// manifest's shapes (the runtime replaces them with rank 0's), no output.
/// Rank 0 reports a failure; this rank's status follows its own calls.
int runOtherRank(const rt::Function &fn,
                 const std::vector<rt::ValueInfo> &infos, const Options &opts,
                 const rt::Artifact &ranks) {
  std::vector<rt::Tensor> inputs;
  for (const rt::ValueInfo &info : infos) {
    for (size_t d = 0; d < info.dims.size(); ++d)
      if (info.isDynamic(d))
        throw rt::Error(TESSEL_UNSUPPORTED,
                        "input '" + info.name +
                            "' of an expert-parallel "
                            "artifact has a dynamic dimension; rank " +
                            std::to_string(ranks.rank()) +
                            " cannot know its size");
    inputs.push_back(rt::Tensor::allocate(info.dtype, info.dims));
  }
  std::vector<rt::Tensor> outputs;
  rt::InvokeOptions invokeOpts{opts.threads};
  fn.invoke(inputs, outputs, invokeOpts);
  if (opts.benchmark > 0)
    runBenchmark(fn, inputs, outputs, opts, nullptr, &ranks);
  return 0;
}

int runModel(const Model &model, const Options &opts);

int runTool(const Options &opts) {
  Model model = Model::load(opts.models, opts.device);
  if (!model.artifact || model.artifact->ranks() == 1)
    return runModel(model, opts);
  // A failing process of an MPI job ends the whole job: the others may be
  // waiting for it in a collective.
  try {
    return runModel(model, opts);
  } catch (const std::exception &e) {
    std::fflush(stdout);
    std::fprintf(stderr, "tessel-run: error (rank %d): %s\n",
                 model.artifact->rank(), e.what());
    std::fflush(stderr);
    model.artifact->abortRanks(1);
    return 1;
  }
}

int runModel(const Model &model, const Options &opts) {
  if (opts.printSignature) {
    if (!opts.function.empty())
      std::printf("func %s\n", model.function(opts.function).signature().c_str());
    else
      for (const rt::Function &f : model.functions())
        std::printf("func %s\n", f.signature().c_str());
    return 0;
  }
  rt::Function fn = model.select(opts.function);
  // Sequences and optionals cross the ABI as several tensors (ABI v7); the
  // flags name the model's values.
  std::vector<rt::ValueInfo> inInfos = fn.inputs();
  std::vector<Slot> inSlots = groupParts(inInfos),
                    outSlots = groupParts(fn.outputs());
  size_t numOutputs = outSlots.size();
  if (opts.outputs.size() > numOutputs || opts.expected.size() > numOutputs)
    throw rt::Error(TESSEL_INVALID_ARGUMENT,
                    "function '" + fn.name() + "' has " +
                        std::to_string(numOutputs) + " output(s), but " +
                        std::to_string(std::max(opts.outputs.size(),
                                                opts.expected.size())) +
                        " --output/--expected_output flags were given");

  // An expert-parallel artifact (mpirun -np N): rank 0 reads the inputs,
  // which the runtime broadcasts, and does all the writing and printing;
  // the other ranks pass placeholders of the same shapes.
  const rt::Artifact *ranks = model.artifact && model.artifact->ranks() > 1
                                  ? model.artifact.get()
                                  : nullptr;
  if (ranks && ranks->rank() != 0)
    return runOtherRank(fn, inInfos, opts, *ranks);
  std::vector<ModelValue> values;
  for (const std::string &spec : opts.inputs)
    values.push_back(loadValue(spec));
  std::vector<rt::Tensor> inputs =
      packInputs(inSlots, inInfos, std::move(values));
  std::vector<rt::Tensor> outputs;
  fn.invoke(inputs, outputs, rt::InvokeOptions{opts.threads}); // also warm-up
  if (ranks && opts.benchmark > 0)
    std::printf("ranks: %d MPI processes (times: the slowest process's)\n",
                ranks->ranks());
  if (opts.benchmark > 0) {
    // A device artifact's times include its copies between host and
    // device; kernel_median_ms is the kernels' alone.
    rt::Artifact *device = nullptr;
    if (model.artifact && model.artifact->device() != "cpu") {
      device = model.artifact.get();
      std::printf("device: %s\n", device->device().c_str());
    }
    runBenchmark(fn, inputs, outputs, opts, device, ranks);
  }
  std::vector<ModelValue> results = unpackOutputs(outSlots, outputs);

  // Outputs without an explicit --output are printed, unless the run is a
  // benchmark or a check, whose own summary is the interesting output.
  bool printRest = opts.outputs.size() > 0 ||
                   (opts.benchmark == 0 && opts.expected.empty());
  for (size_t i = 0; i < numOutputs; ++i) {
    const std::string spec = i < opts.outputs.size() ? opts.outputs[i] : "-";
    if (spec[0] == '@')
      writeValue(spec.substr(1), results[i]);
    else if (i < opts.outputs.size() || printRest)
      std::printf("%s\n", formatValue(results[i]).c_str());
  }
  return checkExpected(outSlots, results, opts) ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
  try {
    Options opts = parseOptions(argc, argv);
    if (opts.help) {
      std::fputs(usageText().c_str(), stdout);
      return 0;
    }
    if (opts.version) {
      std::printf("tessel-run %s (runtime %s, artifact ABI %d)\n",
                  TESSEL_RUNTIME_VERSION, tessel_runtime_version(),
                  TESSEL_ABI_VERSION);
      return 0;
    }
    return runTool(opts);
  } catch (const UsageError &e) {
    std::fprintf(stderr, "tessel-run: error: %s\n(see tessel-run --help)\n",
                 e.what());
    return 2;
  } catch (const std::exception &e) {
    std::fflush(stdout);
    std::fprintf(stderr, "tessel-run: error: %s\n", e.what());
    return 1;
  }
}
