//===- Invoke.cpp - checked calls of artifact entry points ----------------===//
//
// The entry point trusts its buffers completely (no shapes are passed), so
// every argument is checked against the manifest here, before the call: a
// wrong shape would otherwise be an out-of-bounds read/write in compiled code.
//
//===----------------------------------------------------------------------===//

#include "Artifact.h"
#include "Internal.h"

#include <cstddef>

using namespace tessel::rt;
using namespace tessel::rt::detail;

namespace {

std::string describe(const char *kind, size_t index, const ManifestValue &v) {
  return std::string(kind) + " " + std::to_string(index) + " ('" + v.name +
         "')";
}

void checkArgument(const tessel_function &fn, const char *kind, size_t index,
                   const ManifestValue &expected, const tessel_tensor *got) {
  std::string prefix =
      "function '" + fn.info.name + "': " + describe(kind, index, expected);
  if (!got)
    fail(TESSEL_INVALID_ARGUMENT, prefix + " is NULL");
  if (got->dtype != expected.dtype)
    fail(TESSEL_INVALID_ARGUMENT,
         prefix + " has dtype " + tessel_dtype_name(got->dtype) +
             ", expected " + tessel_dtype_name(expected.dtype));
  if (got->dims != expected.dims)
    fail(TESSEL_INVALID_ARGUMENT, prefix + " has shape " +
                                      shapeString(got->dims) + ", expected " +
                                      shapeString(expected.dims));
}

void invoke(const tessel_function *fn, tessel_tensor_t *const *inputs,
            size_t nIn, tessel_tensor_t **outputs, size_t nOut,
            const tessel_invoke_options_t *options) {
  if (!fn)
    fail(TESSEL_INVALID_ARGUMENT, "tessel_function_invoke: function is NULL");
  const ManifestFunction &info = fn->info;
  if (nIn != info.inputs.size())
    fail(TESSEL_INVALID_ARGUMENT,
         "function '" + info.name + "' expects " +
             std::to_string(info.inputs.size()) + " input(s), got " +
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
    checkArgument(*fn, "input", i, info.inputs[i], inputs[i]);
  for (size_t i = 0; i < nOut; ++i)
    if (outputs[i])
      checkArgument(*fn, "output", i, info.outputs[i], outputs[i]);
  // The linker resolves a composition completely or not at all, so a
  // resolved import's provider has its own imports resolved too.
  for (size_t slot : info.uses)
    if (!fn->artifact->providers[slot]) {
      const std::string &name = fn->artifact->imports[slot].name;
      fail(TESSEL_NOT_FOUND,
           "function '" + info.name + "' of artifact '" +
               fn->artifact->path + "' calls import '" + name +
               "', which is not linked; load the artifact in a composition "
               "with an artifact that exports '" + name + "'");
    }

  // Allocate the missing outputs; keep ownership here until the call has
  // succeeded so a failure leaves the caller's slots as they were.
  std::vector<Tensor> allocated(nOut);
  std::vector<void *> buffers;
  buffers.reserve(nIn + nOut);
  for (size_t i = 0; i < nIn; ++i)
    buffers.push_back(inputs[i]->data);
  for (size_t i = 0; i < nOut; ++i) {
    if (!outputs[i])
      allocated[i] =
          allocateTensor(info.outputs[i].dtype, info.outputs[i].dims);
    buffers.push_back(outputs[i] ? outputs[i]->data : allocated[i].get()->data);
  }

  tessel_invoke_context_t context{sizeof(tessel_invoke_context_t), 1};
  // Honour only the fields the caller's struct actually has.
  if (options && options->struct_size >=
                     offsetof(tessel_invoke_options_t, num_threads) +
                         sizeof(options->num_threads) &&
      options->num_threads > 0)
    context.num_threads = options->num_threads;

  int32_t rc = fn->entry(buffers.data(), &context);
  if (rc != 0)
    fail(TESSEL_EXECUTION_FAILED,
         "function '" + info.name + "' failed: entry point '" + info.symbol +
             "' returned " + std::to_string(rc) +
             (rc == TESSEL_ENTRY_UNRESOLVED_IMPORT
                  ? " (an import it calls, directly or through another "
                    "artifact, is not linked)"
                  : ""));
  for (size_t i = 0; i < nOut; ++i)
    if (allocated[i])
      outputs[i] = allocated[i].release();
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
