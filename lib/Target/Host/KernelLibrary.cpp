//===- KernelLibrary.cpp - Find the kernel archive for a target -----------===//
//
// The kernel library (lib/Kernels) is built once per x86-64 feature level;
// the artifact gets the richest level the target CPU supports, so
// --mcpu=x86-64-v3 artifacts run on AVX2 machines and --mcpu=native ones use
// AVX-512 where the host has it.
//
//===----------------------------------------------------------------------===//
#include "KernelLibrary.h"

#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"

using namespace llvm;

std::optional<std::string>
mlir::tessel::kernelVariant(const TargetMachine &tm) {
  if (tm.getTargetTriple().getArch() != Triple::x86_64)
    return std::nullopt;
  const MCSubtargetInfo *sti = tm.getMCSubtargetInfo();
  // The feature sets of clang's -march=x86-64-v4 / -v3 (the psABI levels).
  if (sti->checkFeatures("+avx512f,+avx512bw,+avx512cd,+avx512dq,+avx512vl,"
                         "+avx2,+fma,+bmi2"))
    return std::string("x86-64-v4");
  if (sti->checkFeatures("+avx2,+fma,+bmi,+bmi2,+f16c,+lzcnt,+movbe"))
    return std::string("x86-64-v3");
  return std::string("x86-64");
}

/// The archive `file` in $TESSEL_KERNELS_DIR (only there, when set), else
/// beside the executable (../lib) or in the build tree.
static Expected<std::string> findArchive(StringRef file, StringRef hint) {
  SmallVector<std::string> dirs;
  // An explicit TESSEL_KERNELS_DIR is the only place looked at: a user who
  // points at a library must get that one or an error, not a silent
  // fallback to another build.
  std::optional<std::string> env = sys::Process::GetEnv("TESSEL_KERNELS_DIR");
  if (env)
    dirs.push_back(*env);
  static int anchor;
  std::string exe =
      env ? std::string() : sys::fs::getMainExecutable(nullptr, &anchor);
  if (!exe.empty()) {
    SmallString<256> dir(sys::path::parent_path(sys::path::parent_path(exe)));
    sys::path::append(dir, "lib");
    dirs.push_back(dir.str().str());
  }
  if (!env)
    dirs.push_back(TESSEL_KERNELS_BUILD_DIR);
  std::string looked;
  for (const std::string &d : dirs) {
    SmallString<256> path(d);
    sys::path::append(path, file);
    if (sys::fs::exists(path))
      return path.str().str();
    looked += "\n  " + path.str().str();
  }
  return createStringError(inconvertibleErrorCode(),
                           "'" + file + "' not found; looked in:" + looked +
                               "\nset TESSEL_KERNELS_DIR to the folder that "
                               "holds it" + hint);
}

Expected<std::string> mlir::tessel::findKernelArchive(StringRef variant) {
  return findArchive(("libtessel_kernels_" + variant + ".a").str(),
                     ", or compile without it (--kernels=false or -O1)");
}

Expected<std::string> mlir::tessel::findCudaDeviceArchive() {
  return findArchive("libtessel_cuda_device.a", "");
}

Expected<std::vector<std::string>> mlir::tessel::findMPIRuntime() {
#ifdef TESSEL_MPI_LIBRARIES
  Expected<std::string> archive = findArchive("libtessel_runtime_mpi.a", "");
  if (!archive)
    return archive.takeError();
  std::vector<std::string> link = {*archive};
  SmallVector<StringRef> libs;
  StringRef(TESSEL_MPI_LIBRARIES).split(libs, ';', -1, false);
  for (StringRef lib : libs)
    link.push_back(lib.str());
  // MPI starts once per process: the artifact stays loaded to the end, so
  // its exit handler finalizes MPI at exit (lib/RuntimeMPI).
  link.push_back("-Wl,-z,nodelete");
  return link;
#else
  return createStringError(inconvertibleErrorCode(),
                           "this Tessel was built without MPI (install "
                           "libopenmpi-dev and rebuild)");
#endif
}
