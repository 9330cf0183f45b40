//===- KernelLibrary.h - Find the kernel archive for a target --*- C++ -*-===//
#ifndef TESSEL_LIB_TARGET_HOST_KERNELLIBRARY_H
#define TESSEL_LIB_TARGET_HOST_KERNELLIBRARY_H

#include "llvm/Support/Error.h"
#include "llvm/Target/TargetMachine.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::tessel {

/// The kernel-library variant (x86-64 feature level) that runs on `tm`'s
/// CPU: "x86-64-v4", "x86-64-v3" or "x86-64"; none for other targets.
std::optional<std::string> kernelVariant(const llvm::TargetMachine &tm);

/// Path of libtessel_kernels_<variant>.a: only $TESSEL_KERNELS_DIR when it
/// is set, else the lib/ folder next to the running executable's bin/, else
/// the build tree.
llvm::Expected<std::string> findKernelArchive(llvm::StringRef variant);

/// The device runtime linked into --target=cuda artifacts
/// (lib/DeviceRuntime), found where the kernel library is.
llvm::Expected<std::string> findCudaDeviceArchive();

/// What an expert-parallel artifact links besides: the MPI runtime part
/// (lib/RuntimeMPI, found where the kernel library is), the system's MPI
/// libraries and the linker flag that keeps the artifact loaded.
llvm::Expected<std::vector<std::string>> findMPIRuntime();

} // namespace mlir::tessel

#endif
