//===- Artifact.h - tessel_artifact_t / tessel_function_t -------*- C++ -*-===//
#ifndef TESSEL_LIB_RUNTIME_ARTIFACT_H
#define TESSEL_LIB_RUNTIME_ARTIFACT_H

#include "Manifest.h"
#include "tessel/Runtime/tessel_abi.h"

#include <memory>
#include <string>
#include <vector>

struct tessel_function {
  tessel::rt::detail::ManifestFunction info;
  tessel_entry_fn entry = nullptr;
  const tessel_artifact *artifact = nullptr;
};

struct tessel_artifact {
  std::string path;
  void *handle = nullptr; // dlopen handle, closed by tessel_artifact_free
  uint32_t version = 0;
  std::string target;
  // Built once at load time and never resized: tessel_function_t pointers
  // handed to callers stay valid for the artifact's lifetime.
  std::vector<tessel_function> functions;
};

#endif // TESSEL_LIB_RUNTIME_ARTIFACT_H
