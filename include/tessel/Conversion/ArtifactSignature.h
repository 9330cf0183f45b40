//===- ArtifactSignature.h - shared facts of the artifact ABI ---*- C++ -*-===//
//
// What the passes that write an entry (tessel-emit-artifact-abi) and those
// that call one through an import (tessel-imports-to-calls) must agree on
// beyond docs/artifact-abi.md's text.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_CONVERSION_ARTIFACTSIGNATURE_H
#define TESSEL_CONVERSION_ARTIFACTSIGNATURE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::tessel {

/// The named (dynamic) dimensions of a function, given the dim names of its
/// inputs ("" for a static dimension): the order of the int64 array that
/// follows the buffers of an entry call (ABI v3), first appearance first.
inline llvm::SmallVector<llvm::StringRef>
dimensionOrder(llvm::ArrayRef<llvm::SmallVector<llvm::StringRef>> inputs) {
  llvm::SetVector<llvm::StringRef> order;
  for (const auto &names : inputs)
    for (llvm::StringRef n : names)
      if (!n.empty())
        order.insert(n);
  return order.takeVector();
}

} // namespace mlir::tessel

#endif // TESSEL_CONVERSION_ARTIFACTSIGNATURE_H
