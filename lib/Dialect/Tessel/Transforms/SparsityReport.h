//===- SparsityReport.h - the --sparsity-report file of the sparsify passes ===//
//
// tessel-sparsify-weights (f32) and tessel-sparsify-int8-weights both append
// one line per analysed op to the same file: every module a driver
// compiles (and every split of a test input) adds to it; the driver starts
// it empty.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_DIALECT_TESSEL_TRANSFORMS_SPARSITYREPORT_H
#define TESSEL_DIALECT_TESSEL_TRANSFORMS_SPARSITYREPORT_H

#include "mlir/IR/Operation.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>

namespace mlir::tessel {

/// The report at `path` opened for appending (null when `path` is empty);
/// on failure an error on `op` and failure.
inline FailureOr<std::unique_ptr<llvm::raw_fd_ostream>>
openSparsityReport(StringRef path, Operation *op) {
  if (path.empty())
    return std::unique_ptr<llvm::raw_fd_ostream>();
  std::error_code ec;
  auto out = std::make_unique<llvm::raw_fd_ostream>(
      path, ec, llvm::sys::fs::OF_Text | llvm::sys::fs::OF_Append);
  if (ec) {
    op->emitError() << "cannot write the sparsity report '" << path
                    << "': " << ec.message();
    return failure();
  }
  return out;
}

} // namespace mlir::tessel

#endif
