//===- FuzzNpy.cpp - libFuzzer target: the .npy reader --------------------===//
#include "tessel/Runtime/Npy.h"
#include "tessel/Runtime/Runtime.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  try {
    tessel::rt::parseNpy(data, size, "fuzz");
  } catch (const tessel::rt::Error &) {
    // A clear error is the expected outcome for most inputs.
  }
  return 0;
}
