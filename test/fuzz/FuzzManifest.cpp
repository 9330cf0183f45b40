//===- FuzzManifest.cpp - libFuzzer target: the artifact manifest ---------===//
#include "Manifest.h"
#include "tessel/Runtime/Runtime.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  try {
    tessel::rt::detail::parseManifest(
        std::string(reinterpret_cast<const char *>(data), size), "fuzz");
  } catch (const tessel::rt::Error &) {
  }
  return 0;
}
