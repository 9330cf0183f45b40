//===- Linker.h - Link an object into the shared-library artifact -*- C++ -*-===//
#ifndef TESSEL_LIB_COMPILER_LINKER_H
#define TESSEL_LIB_COMPILER_LINKER_H

#include "llvm/Support/Error.h"

namespace mlir::tessel {

/// Links `objectPath` into the shared library `outputPath` with the system
/// C compiler driver ($TESSEL_LINKER, else cc, clang-22, clang or gcc from
/// PATH). The artifact depends on libc and libm only.
llvm::Error linkSharedLibrary(llvm::StringRef objectPath,
                              llvm::StringRef outputPath);

} // namespace mlir::tessel

#endif
