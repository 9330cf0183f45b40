//===- Linker.h - Link an object into the shared-library artifact -*- C++ -*-===//
#ifndef TESSEL_LIB_TARGET_HOST_LINKER_H
#define TESSEL_LIB_TARGET_HOST_LINKER_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace mlir::tessel {

/// Links the `objects` and the static `archives` into the shared library
/// `outputPath` with the system C compiler driver ($TESSEL_LINKER, else cc,
/// clang-22, clang or gcc from PATH). The artifact depends on libc, libm and
/// libpthread only. The result is sealed (sealArtifact).
llvm::Error linkSharedLibrary(llvm::ArrayRef<std::string> objects,
                              llvm::ArrayRef<std::string> archives,
                              llvm::StringRef outputPath);

/// Appends the integrity seal of include/tessel/Runtime/ArtifactSeal.h to
/// the file at `path`; the runtime refuses artifacts without a valid one.
llvm::Error sealArtifact(llvm::StringRef path);

} // namespace mlir::tessel

#endif
