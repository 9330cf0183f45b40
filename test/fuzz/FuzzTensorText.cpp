//===- FuzzTensorText.cpp - libFuzzer target: inline tensors --------------===//
#include "tessel/Runtime/Runtime.h"
#include "tessel/Runtime/TensorText.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  try {
    tessel::rt::Tensor t = tessel::rt::parseTensorText(
        std::string(reinterpret_cast<const char *>(data), size));
    (void)t;
  } catch (const tessel::rt::Error &) {
  }
  return 0;
}
