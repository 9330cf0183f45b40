//===- ConstantData.h - Compile-time layout changes of constant data -*- C++ -*-===//
//
// Passes that read weights at compile time (quantization sites, int8 weight
// packing) see them through the transposes the importers and tosa-to-linalg
// put in front of them; this is the one definition of what such a transpose
// does to the row-major data.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_DIALECT_TESSEL_UTILS_CONSTANTDATA_H
#define TESSEL_DIALECT_TESSEL_UTILS_CONSTANTDATA_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <vector>

namespace mlir::tessel {

/// The row-major data of a transpose of `in` (row-major, shape `inShape`):
/// result dim d is input dim perm[d].
template <typename T, typename PermT>
std::vector<T> transposeRowMajor(llvm::ArrayRef<T> in,
                                 llvm::ArrayRef<int64_t> inShape,
                                 llvm::ArrayRef<PermT> perm) {
  const int64_t rank = inShape.size();
  llvm::SmallVector<int64_t> inStrides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    inStrides[d] = inStrides[d + 1] * inShape[d + 1];
  std::vector<T> out(in.size());
  llvm::SmallVector<int64_t> idx(rank, 0); // output index
  for (size_t o = 0; o < out.size(); ++o) {
    int64_t at = 0;
    for (int64_t d = 0; d < rank; ++d)
      at += idx[d] * inStrides[perm[d]];
    out[o] = in[at];
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++idx[d] < inShape[perm[d]])
        break;
      idx[d] = 0;
    }
  }
  return out;
}

} // namespace mlir::tessel

#endif // TESSEL_DIALECT_TESSEL_UTILS_CONSTANTDATA_H
