//===- ArtifactSignature.h - shared facts of the artifact ABI ---*- C++ -*-===//
//
// What the passes that write an entry (tessel-emit-artifact-abi) and those
// that call one through an import (tessel-imports-to-calls) must agree on
// beyond docs/artifact-abi.md's text.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_CONVERSION_ARTIFACTSIGNATURE_H
#define TESSEL_CONVERSION_ARTIFACTSIGNATURE_H

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::tessel {

/// The key of a value's dimension names in the records of
/// `tessel.functions` and `tessel.imports` (written by
/// tessel-record-signature).
inline constexpr llvm::StringLiteral kRecordDimNamesKey = "dim_names";

/// The name of a run-time dimension (ABI v6): an output size that follows
/// from the data, not from the inputs' sizes (NonZero's count, Reshape to a
/// shape that is an input). The entry allocates such an output itself and
/// returns it with its sizes; the caller cannot size it before the call.
inline constexpr llvm::StringLiteral kRunTimeDimName = "?";

/// The dimension names of one value of a record: one string per dimension,
/// "" at a static one; empty when the value has no dynamic dimension (or is
/// not a dictionary). Fails when the field is not an array of strings.
inline mlir::FailureOr<llvm::SmallVector<llvm::StringRef>>
recordDimNames(mlir::Attribute value) {
  llvm::SmallVector<llvm::StringRef> names;
  auto dict = llvm::dyn_cast<mlir::DictionaryAttr>(value);
  mlir::Attribute field = dict ? dict.get(kRecordDimNamesKey) : nullptr;
  if (!field)
    return names;
  auto array = llvm::dyn_cast<mlir::ArrayAttr>(field);
  if (!array)
    return mlir::failure();
  for (mlir::Attribute a : array) {
    auto str = llvm::dyn_cast<mlir::StringAttr>(a);
    if (!str)
      return mlir::failure();
    names.push_back(str.getValue());
  }
  return names;
}

/// The named (dynamic) dimensions of a function, given the dim names of its
/// inputs ("" for a static dimension): the order of the int64 array that
/// follows the buffers of an entry call (ABI v3), first appearance first.
inline llvm::SmallVector<llvm::StringRef>
dimensionOrder(llvm::ArrayRef<llvm::SmallVector<llvm::StringRef>> inputs) {
  llvm::SetVector<llvm::StringRef> order;
  for (const auto &names : inputs)
    for (llvm::StringRef n : names)
      if (!n.empty() && n != kRunTimeDimName)
        order.insert(n);
  return order.takeVector();
}

/// Whether a record's value (its dim names) has a run-time dimension.
inline bool hasRunTimeDim(llvm::ArrayRef<llvm::StringRef> names) {
  return llvm::is_contained(names, kRunTimeDimName);
}

} // namespace mlir::tessel

#endif // TESSEL_CONVERSION_ARTIFACTSIGNATURE_H
