//===- Invoke.cpp - checked calls of artifact entry points ----------------===//
//
// The entry point trusts its buffers completely (only the sizes of named
// dimensions are passed), so every argument is checked against the manifest
// here, before the call: a wrong shape would otherwise be an out-of-bounds
// read/write in compiled code.
//
//===----------------------------------------------------------------------===//

#include "Artifact.h"
#include "Internal.h"

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>

using namespace tessel::rt;
using namespace tessel::rt::detail;

namespace {

std::string describe(const char *kind, size_t index, const ManifestValue &v) {
  return std::string(kind) + " " + std::to_string(index) + " ('" + v.name +
         "')";
}

/// The sizes of a function's named dimensions, bound from its arguments.
class DimBinding {
public:
  explicit DimBinding(const tessel_function &fn) : fn_(fn) {}

  /// Checks `got` against `expected`, binding each named dimension on its
  /// first appearance (inputs are checked first, in order).
  void check(const char *kind, size_t index, const ManifestValue &expected,
             const tessel_tensor *got) {
    std::string prefix = "function '" + fn_.info.name +
                         "': " + describe(kind, index, expected);
    if (!got)
      fail(TESSEL_INVALID_ARGUMENT, prefix + " is NULL");
    // bf16 has no numpy dtype: its bit patterns come as u16 (ONNX's test
    // data, ml_dtypes-less numpy), the same bytes.
    bool bf16Bits =
        expected.dtype == TESSEL_DTYPE_BF16 && got->dtype == TESSEL_DTYPE_U16;
    if (got->dtype != expected.dtype && !bf16Bits)
      fail(TESSEL_INVALID_ARGUMENT,
           prefix + " has dtype " + tessel_dtype_name(got->dtype) +
               ", expected " + tessel_dtype_name(expected.dtype));
    bool ok = got->dims.size() == expected.dims.size();
    for (size_t d = 0; ok && d < expected.dims.size(); ++d)
      ok = expected.dimNames[d].empty() ? got->dims[d] == expected.dims[d]
                                        : true;
    if (!ok)
      fail(TESSEL_INVALID_ARGUMENT, prefix + " has shape " +
                                        shapeString(got->dims) +
                                        ", expected " + shapeString(expected));
    for (size_t d = 0; d < expected.dims.size(); ++d) {
      const std::string &name = expected.dimNames[d];
      if (name.empty() || name == "?")
        continue; // a run-time size is checked once the call has returned
      auto [it, first] =
          bound_.emplace(name, std::make_pair(got->dims[d],
                                              describe(kind, index, expected)));
      if (!first && it->second.first != got->dims[d])
        fail(TESSEL_INVALID_ARGUMENT,
             prefix + " has shape " + shapeString(got->dims) + ", expected " +
                 shapeString(expected) + " with " + name + " = " +
                 std::to_string(it->second.first) + " (from " +
                 it->second.second + ")");
    }
  }

  /// The shape of an output to allocate.
  std::vector<int64_t> resolve(const ManifestValue &v) const {
    std::vector<int64_t> dims = v.dims;
    for (size_t d = 0; d < dims.size(); ++d)
      if (!v.dimNames[d].empty())
        dims[d] = bound_.at(v.dimNames[d]).first;
    return dims;
  }

  /// The sizes array that follows the buffers (ABI v3).
  std::vector<int64_t> sizes() const {
    std::vector<int64_t> out;
    for (const std::string &name : fn_.info.dimOrder)
      out.push_back(bound_.at(name).first);
    return out;
  }

private:
  const tessel_function &fn_;
  /// name -> (size, the argument it came from)
  std::map<std::string, std::pair<int64_t, std::string>> bound_;
};

/// Every id of a symbol input (i32, vocab V in the manifest) lies in [0, V).
void checkSymbols(const tessel_function &fn, size_t index,
                  const ManifestValue &expected, const tessel_tensor &got) {
  if (expected.vocab <= 0 || got.dtype != TESSEL_DTYPE_I32)
    return;
  const int32_t *ids = static_cast<const int32_t *>(got.data);
  for (size_t e = 0; e < got.numElements; ++e)
    if (ids[e] < 0 || ids[e] >= expected.vocab)
      fail(TESSEL_INVALID_ARGUMENT,
           "function '" + fn.info.name + "': " +
               describe("input", index, expected) + " holds symbol id " +
               std::to_string(ids[e]) + " at element " + std::to_string(e) +
               ", outside its vocabulary of " +
               std::to_string(expected.vocab) + " (ids 0.." +
               std::to_string(expected.vocab - 1) + ")");
}

/// A run-time-shaped output (ABI v6) as the entry fills it.
struct RunTimeOutput {
  tessel_run_time_output_t abi{nullptr, nullptr};
  std::vector<int64_t> sizes;

  RunTimeOutput() = default;
  RunTimeOutput(const RunTimeOutput &) = delete;
  RunTimeOutput &operator=(const RunTimeOutput &) = delete;
  ~RunTimeOutput() { std::free(abi.data); }

  /// The returned buffer as an owning tensor of `dtype`.
  Tensor adopt(DType dtype) {
    auto t = std::make_unique<tessel_tensor>();
    t->dtype = dtype;
    t->dims = sizes;
    t->numElements = checkedNumElements(sizes, tessel_dtype_size(dtype));
    t->byteSize = t->numElements * tessel_dtype_size(dtype);
    if (!abi.data)
      fail(TESSEL_OUT_OF_MEMORY, "the entry could not allocate an output of "
                                 "shape " + shapeString(sizes));
    t->data = abi.data;
    t->owned = true;
    abi.data = nullptr;
    return Tensor(t.release());
  }
};

/// An expert-parallel artifact's processes run every call together: one
/// whose arguments are rejected must not leave the others waiting in the
/// call's collectives, so the processes agree first (the largest of their
/// failures) and all fail.
template <typename Check>
void agreeAcrossRanks(const tessel_function &fn, Check check) {
  const tessel_artifact *artifact = fn.artifact;
  if (!artifact || artifact->ranks <= 1)
    return check();
  std::exception_ptr local;
  try {
    check();
  } catch (...) {
    local = std::current_exception();
  }
  double failed = artifact->mpiMax(local ? 1.0 : 0.0);
  if (local)
    std::rethrow_exception(local);
  if (failed > 0)
    fail(TESSEL_EXECUTION_FAILED,
         "function '" + fn.info.name +
             "': the call was rejected on another "
             "MPI process (its arguments did not match the function), so no "
             "process ran it");
}

void invoke(const tessel_function *fn, tessel_tensor_t *const *inputs,
            size_t nIn, tessel_tensor_t **outputs, size_t nOut,
            const tessel_invoke_options_t *options) {
  if (!fn)
    fail(TESSEL_INVALID_ARGUMENT, "tessel_function_invoke: function is NULL");
  const ManifestFunction &info = fn->info;
  DimBinding binding(*fn);
  agreeAcrossRanks(*fn, [&] {
    if (nIn != info.inputs.size())
      fail(TESSEL_INVALID_ARGUMENT, "function '" + info.name + "' expects " +
                                        std::to_string(info.inputs.size()) +
                                        " input(s), got " +
                                        std::to_string(nIn));
    if (nOut != info.outputs.size())
      fail(TESSEL_INVALID_ARGUMENT,
           "function '" + info.name + "' has " +
               std::to_string(info.outputs.size()) + " output(s), got " +
               std::to_string(nOut) + " output slot(s)");
    if ((nIn && !inputs) || (nOut && !outputs))
      fail(TESSEL_INVALID_ARGUMENT,
           "tessel_function_invoke: inputs/outputs array is NULL");
    for (size_t i = 0; i < nIn; ++i)
      binding.check("input", i, info.inputs[i], inputs[i]);
    // Symbol ids index their vocabulary's tables (sym.embed): one outside it
    // would read out of bounds.
    for (size_t i = 0; i < nIn; ++i)
      checkSymbols(*fn, i, info.inputs[i], *inputs[i]);
    for (size_t i = 0; i < nOut; ++i)
      if (outputs[i])
        binding.check("output", i, info.outputs[i], outputs[i]);
    // The linker resolves a composition completely or not at all, so a
    // resolved import's provider has its own imports resolved too.
    for (size_t slot : info.uses)
      if (!fn->artifact->providers[slot]) {
        const std::string &name = fn->artifact->imports[slot].name;
        fail(TESSEL_NOT_FOUND,
             "function '" + info.name + "' of artifact '" + fn->artifact->path +
                 "' calls import '" + name +
                 "', which is not linked; load the artifact in a composition "
                 "with an artifact that exports '" +
                 name + "'");
      }
  });

  // Allocate the missing outputs; keep ownership here until the call has
  // succeeded so a failure leaves the caller's slots as they were. An
  // output whose size follows from the data (ABI v6) is allocated by the
  // entry: its slot points at a tessel_run_time_output it fills.
  std::vector<Tensor> allocated(nOut);
  std::vector<RunTimeOutput> runTime(nOut);
  std::vector<void *> buffers;
  buffers.reserve(nIn + nOut);
  for (size_t i = 0; i < nIn; ++i)
    buffers.push_back(inputs[i]->data);
  // An expert-parallel artifact computes on rank 0's inputs on every
  // process: they are broadcast, into copies on the other ranks (the
  // caller's tensors stay as they were).
  std::vector<Tensor> received;
  if (fn->artifact->ranks > 1)
    for (size_t i = 0; i < nIn; ++i) {
      if (fn->artifact->rank != 0) {
        received.push_back(allocateTensor(inputs[i]->dtype, inputs[i]->dims));
        buffers[i] = received.back().get()->data;
      }
      fn->artifact->mpiBroadcast(buffers[i],
                                 static_cast<int64_t>(inputs[i]->byteSize));
    }
  for (size_t i = 0; i < nOut; ++i) {
    if (hasRunTimeDim(info.outputs[i])) {
      runTime[i].sizes.assign(info.outputs[i].dims.size(), 0);
      runTime[i].abi.sizes = runTime[i].sizes.data();
      buffers.push_back(&runTime[i].abi);
      continue;
    }
    if (!outputs[i])
      allocated[i] =
          allocateTensor(info.outputs[i].dtype, binding.resolve(info.outputs[i]));
    buffers.push_back(outputs[i] ? outputs[i]->data : allocated[i].get()->data);
  }
  std::vector<int64_t> sizes = binding.sizes();
  if (!sizes.empty())
    buffers.push_back(sizes.data());

  tessel_invoke_context_t context{sizeof(tessel_invoke_context_t), 1};
  // Honour only the fields the caller's struct actually has.
  if (options && options->struct_size >=
                     offsetof(tessel_invoke_options_t, num_threads) +
                         sizeof(options->num_threads) &&
      options->num_threads > 0)
    context.num_threads = options->num_threads;

  int32_t rc = fn->entry(buffers.data(), &context);
  // The entry's run-time-shaped outputs become tensors (owned from here on,
  // whatever happens next).
  for (size_t i = 0; i < nOut; ++i)
    if (hasRunTimeDim(info.outputs[i]))
      allocated[i] = runTime[i].adopt(info.outputs[i].dtype);
  // A device error (a failed launch, copy or allocation) is reported by the
  // artifact's device runtime, not by the entry's return code.
  char deviceError[1024];
  if (fn->artifact->takeDeviceError &&
      fn->artifact->takeDeviceError(deviceError, sizeof deviceError) != 0)
    fail(TESSEL_EXECUTION_FAILED, "function '" + info.name +
                                      "' failed on the " +
                                      fn->artifact->deviceKind +
                                      " device: " + deviceError);
  if (rc != 0)
    fail(TESSEL_EXECUTION_FAILED,
         "function '" + info.name + "' failed: entry point '" + info.symbol +
             "' returned " + std::to_string(rc) +
             (rc == TESSEL_ENTRY_UNRESOLVED_IMPORT
                  ? " (an import it calls, directly or through another "
                    "artifact, is not linked)"
              : rc == TESSEL_ENTRY_SHAPE_MISMATCH
                  ? " (a named dimension's sizes disagreed: a result of "
                    "another size than its inputs bind, an import "
                    "called with inconsistent sizes, or operands of an "
                    "elementwise op or a matmul whose sizes do not "
                    "broadcast; or a shape given as data does not fit: "
                    "a Reshape's shape that does not hold its input's "
                    "elements, an Expand's shape that does not "
                    "broadcast, a Range with delta 0)"
              : rc == TESSEL_ENTRY_INDEX_OUT_OF_RANGE
                  ? " (an index input is out of range: a gather or "
                    "scatter index outside the dimension it indexes, or "
                    "a position outside a sequence)"
              : rc == TESSEL_ENTRY_DIVISION_BY_ZERO
                  ? " (an integer division or remainder by zero)"
              : rc == TESSEL_ENTRY_EMPTY_OPTIONAL
                  ? " (the value of an empty optional was read)"
                  : ""));
  for (size_t i = 0; i < nOut; ++i) {
    if (!allocated[i])
      continue;
    if (outputs[i]) {
      // A run-time-shaped output into the caller's own tensor: it must
      // have the shape the call produced.
      const tessel_tensor &got = *allocated[i].get();
      if (outputs[i]->dims != got.dims)
        fail(TESSEL_INVALID_ARGUMENT,
             "function '" + info.name + "': " +
                 describe("output", i, info.outputs[i]) + " has shape " +
                 shapeString(got.dims) + " this call, but the tensor given "
                 "for it has shape " + shapeString(outputs[i]->dims));
      std::memcpy(outputs[i]->data, got.data, got.byteSize);
      continue;
    }
    outputs[i] = allocated[i].release();
  }
}

} // namespace

extern "C" {

void tessel_invoke_options_init(tessel_invoke_options_t *options) {
  if (options)
    *options = {sizeof(tessel_invoke_options_t), 1};
}

tessel_status_t *tessel_function_invoke(const tessel_function_t *function,
                                        tessel_tensor_t *const *inputs,
                                        size_t n_inputs,
                                        tessel_tensor_t **outputs,
                                        size_t n_outputs,
                                        const tessel_invoke_options_t *options) {
  return guard(
      [&] { invoke(function, inputs, n_inputs, outputs, n_outputs, options); });
}

} // extern "C"
