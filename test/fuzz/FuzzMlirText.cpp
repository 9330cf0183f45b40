//===- FuzzMlirText.cpp - libFuzzer target: MLIR text, tessel-compile's door ===//
//
// What tessel-compile does with an MLIR model before its pipeline: the
// nesting-depth bound (tessel/Support/InputLimits.h), then the parser and
// verifier of every dialect Tessel registers (tosa, linalg, tessel,
// compose, sym, ...). Rejections are diagnostics; a crash, a memory error,
// a hang or unbounded memory is a bug.
//
// The parser runs unguarded here: a crash caught by
// tessel/Support/GuardedParse.h (what tessel-compile and the Python package
// do) leaves the process unfit to go on, and later inputs would fail for
// it. Inputs that reach the one upstream defect already known are skipped
// instead (linalg's `permutation =` / `dimensions =` followed by anything
// but a well-formed integer list: the op's parser stores a null attribute
// after its own error), so the search goes on past it.
//
//===----------------------------------------------------------------------===//
#include "CompilerFuzzContext.h"

#include "tessel/Support/InputLimits.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SourceMgr.h"

#include <cstdint>
#include <string>

namespace {

/// True if `rest` starts with `= [i, j, ...]` (blanks anywhere between).
bool wellFormedList(llvm::StringRef rest) {
  auto blanks = [&] { rest = rest.ltrim(" \t\r\n"); };
  blanks();
  if (!rest.consume_front("="))
    return false;
  blanks();
  if (!rest.consume_front("["))
    return false;
  blanks();
  if (rest.consume_front("]"))
    return true;
  while (true) {
    blanks();
    rest.consume_front("-");
    size_t digits = 0;
    while (digits < rest.size() && llvm::isDigit(rest[digits]))
      ++digits;
    if (digits == 0)
      return false;
    rest = rest.drop_front(digits);
    blanks();
    if (rest.consume_front("]"))
      return true;
    if (!rest.consume_front(","))
      return false;
  }
}

/// True if `text` has a linalg integer-list attribute that upstream MLIR
/// 22's parser crashes on (see above).
bool reachesKnownParserCrash(llvm::StringRef text) {
  for (llvm::StringRef key : {"permutation", "dimensions"}) {
    for (size_t at = text.find(key); at != llvm::StringRef::npos;
         at = text.find(key, at + 1)) {
      llvm::StringRef rest = text.substr(at + key.size());
      if (rest.ltrim(" \t\r\n").starts_with("=") && !wellFormedList(rest))
        return true;
    }
  }
  return false;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  std::string error;
  if (!mlir::tessel::checkMLIRNesting(text, error) ||
      reachesKnownParserCrash(text))
    return 0;
  std::unique_ptr<mlir::MLIRContext> context = tessel_fuzz::newContext();
  // MLIR's lexer, like LLVM's, reads to a NUL byte: every front door hands
  // it a terminated buffer (files and stdin through MemoryBuffer, Python
  // text copied), and so does this one.
  std::string terminated = text.str();
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(terminated, "fuzz.mlir",
                                       /*RequiresNullTerminator=*/true),
      llvm::SMLoc());
  (void)mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, context.get());
  return 0;
}
