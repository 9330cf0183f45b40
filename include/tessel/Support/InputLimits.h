//===- InputLimits.h - reading model files within bounds --------*- C++ -*-===//
//
// What every front door of the compiler (tessel-compile, tessel-opt, the
// Python package) checks before handing bytes to a parser: the file is one
// that ends (a regular file or a pipe, not /dev/zero), and MLIR text nests
// no deeper than the recursive-descent parser can take without overflowing
// its stack.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_SUPPORT_INPUTLIMITS_H
#define TESSEL_SUPPORT_INPUTLIMITS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <string>

namespace mlir::tessel {

/// The deepest bracket nesting ('(', '[', '{', '<') accepted in MLIR text.
/// Real IR nests a few dozen levels (regions in regions, a dense literal per
/// tensor dimension); MLIR's parser recurses once per level.
inline constexpr unsigned kMaxMLIRNesting = 512;

/// The largest model read from a pipe or stdin (protobuf's own limit).
inline constexpr uint64_t kMaxStreamedInputBytes = uint64_t(2) << 30;

/// Reads `path` ("-" is stdin): a regular file, or a pipe of at most
/// kMaxStreamedInputBytes. A device, a directory or (for MLIR) input that
/// starts with a NUL byte is refused with a message in `error`.
std::unique_ptr<llvm::MemoryBuffer> readModelInput(llvm::StringRef path,
                                                   std::string &error);

/// Checks that MLIR text nests at most `maxDepth` brackets deep (strings and
/// comments aside); MLIR bytecode is not scanned. On failure `error` names
/// the line.
bool checkMLIRNesting(llvm::StringRef text, std::string &error,
                      unsigned maxDepth = kMaxMLIRNesting);

/// Makes LLVM's fatal errors and allocation failures print
/// "<tool>: error: ..." and exit with status 1, like every other error of
/// the tool, instead of "LLVM ERROR: ..." and an abort.
void installToolErrorHandlers(const char *toolName);

} // namespace mlir::tessel

#endif // TESSEL_SUPPORT_INPUTLIMITS_H
