//===- Options.h - tessel-run command line ----------------------*- C++ -*-===//
//
// Hand-rolled parser (std C++ only): tessel-run links nothing but the
// runtime, so it cannot use llvm::cl.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_TOOLS_TESSEL_RUN_OPTIONS_H
#define TESSEL_TOOLS_TESSEL_RUN_OPTIONS_H

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace tessel::run {

/// A command-line mistake: reported with exit status 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Options {
  /// One artifact, one composition file, or several artifacts to link.
  std::vector<std::string> models;
  std::string function;                // empty: pick the default
  std::vector<std::string> inputs;     // "@file.npy" or inline tensors
  std::vector<std::string> outputs;    // "@file.npy" or "-"
  std::vector<std::string> expected;   // like inputs
  double atol = 1e-5;
  double rtol = 1e-4;
  int64_t benchmark = 0;               // 0: no benchmark
  uint32_t threads = 1;
  std::string device;                  // "", "cpu", "cuda" or "cuda:N"
  bool printSignature = false;
  bool help = false;
  bool version = false;
};

/// Throws UsageError.
Options parseOptions(int argc, char **argv);

std::string usageText();

} // namespace tessel::run

#endif // TESSEL_TOOLS_TESSEL_RUN_OPTIONS_H
