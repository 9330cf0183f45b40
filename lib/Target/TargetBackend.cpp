//===- TargetBackend.cpp - The target backends ------------------------===//
#include "tessel/Target/TargetBackend.h"

#include "CPU/CPUTarget.h"
#include "CUDA/CUDATarget.h"

using namespace mlir::tessel;

const TargetBackend &mlir::tessel::getTargetBackend(Target target) {
  static const CPUTargetBackend cpu;
  static const CUDATargetBackend cuda;
  switch (target) {
  case Target::CPU:
    return cpu;
  case Target::CUDA:
    return cuda;
  }
  llvm_unreachable("unknown target");
}
