//===- FuzzArtifact.cpp - libFuzzer target: the artifact loader -----------===//
//
// Writes the input to a file and loads it: the magic, seal and ELF checks
// must turn every malformed file into an error before dlopen. The fuzzer
// mutates sealed seeds too; a mutation that keeps a valid seal is rare, so
// most inputs exercise the checks, not the loader.
//
//===----------------------------------------------------------------------===//
#include "tessel/Runtime/Runtime.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::string path =
      "/tmp/tessel-fuzz-artifact-" + std::to_string(::getpid()) + ".so";
  std::FILE *f = std::fopen(path.c_str(), "wb");
  if (!f)
    return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  try {
    tessel::rt::Artifact a = tessel::rt::Artifact::load(path);
    (void)a;
  } catch (const tessel::rt::Error &) {
  }
  return 0;
}
