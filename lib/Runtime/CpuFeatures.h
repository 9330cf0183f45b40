//===- CpuFeatures.h - the CPU features an artifact requires ----*- C++ -*-===//
#ifndef TESSEL_LIB_RUNTIME_CPUFEATURES_H
#define TESSEL_LIB_RUNTIME_CPUFEATURES_H

#include <string>
#include <vector>

namespace tessel::rt::detail {

/// Whether `name` is a feature of include/tessel/Runtime/CpuFeatures.def.
bool isKnownCpuFeature(const std::string &name);

/// The features of `required` (names from CpuFeatures.def) that this CPU, or
/// its operating system, does not provide; all of them on a CPU that is not
/// x86-64.
std::vector<std::string>
missingCpuFeatures(const std::vector<std::string> &required);

} // namespace tessel::rt::detail

#endif // TESSEL_LIB_RUNTIME_CPUFEATURES_H
