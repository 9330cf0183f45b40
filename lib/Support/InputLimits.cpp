//===- InputLimits.cpp - reading model files within bounds ----------------===//
#include "tessel/Support/InputLimits.h"

#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FileSystem.h"

#include <cstdio>
#include <cstdlib>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

using namespace llvm;

std::unique_ptr<MemoryBuffer>
mlir::tessel::readModelInput(StringRef path, std::string &error) {
  if (path != "-") {
    sys::fs::file_status status;
    if (std::error_code ec = sys::fs::status(path, status)) {
      error = "cannot open input file '" + path.str() + "': " + ec.message();
      return nullptr;
    }
    switch (status.type()) {
    case sys::fs::file_type::regular_file: {
      auto buf = MemoryBuffer::getFile(path, /*IsText=*/false,
                                       /*RequiresNullTerminator=*/true);
      if (!buf) {
        error = "cannot open input file '" + path.str() +
                "': " + buf.getError().message();
        return nullptr;
      }
      return std::move(*buf);
    }
    case sys::fs::file_type::fifo_file:
      break;
    case sys::fs::file_type::directory_file:
      error = "'" + path.str() + "' is a directory, not a model file";
      return nullptr;
    default:
      error = "'" + path.str() +
              "' is not a regular file (a device or socket cannot hold a "
              "model)";
      return nullptr;
    }
  }
  // A pipe: read up to the limit, refusing binary garbage at once.
  int fd = 0;
  if (path != "-") {
    fd = ::open(path.str().c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      error = "cannot open input file '" + path.str() +
              "': " + std::strerror(errno);
      return nullptr;
    }
  }
  std::string name = path == "-" ? "<stdin>" : path.str();
  std::string bytes;
  char chunk[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      error = "cannot read '" + name + "': " + std::strerror(errno);
      bytes.clear();
      break;
    }
    if (n == 0)
      break;
    bytes.append(chunk, size_t(n));
    if (bytes.size() > kMaxStreamedInputBytes) {
      error = "'" + name + "' is larger than " +
              std::to_string(kMaxStreamedInputBytes >> 30) + " GiB";
      bytes.clear();
      break;
    }
  }
  if (fd > 0)
    ::close(fd);
  if (!error.empty())
    return nullptr;
  return MemoryBuffer::getMemBufferCopy(bytes, name);
}

bool mlir::tessel::checkMLIRNesting(StringRef text, std::string &error,
                                    unsigned maxDepth) {
  if (text.starts_with("ML\xef" "R"))
    return true; // bytecode
  unsigned depth = 0, line = 1;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    switch (c) {
    case '\n':
      ++line;
      break;
    case '"': // a string literal: skip to its unescaped end
      for (++i; i < e && text[i] != '"'; ++i) {
        if (text[i] == '\\')
          ++i;
        else if (text[i] == '\n')
          ++line;
      }
      break;
    case '/':
      if (i + 1 < e && text[i + 1] == '/')
        while (i + 1 < e && text[i + 1] != '\n')
          ++i;
      break;
    case '(':
    case '[':
    case '{':
    case '<':
      if (c == '<' && i + 1 < e && text[i + 1] == '=')
        break;
      if (++depth > maxDepth) {
        error = "line " + std::to_string(line) + ": brackets nest more than " +
                std::to_string(maxDepth) +
                " levels deep; Tessel refuses such input rather than "
                "overflow the parser's stack";
        return false;
      }
      break;
    case ')':
    case ']':
    case '}':
    case '>':
      // "->" and ">=" close nothing.
      if (c == '>' && ((i > 0 && text[i - 1] == '-') ||
                       (i + 1 < e && text[i + 1] == '=')))
        break;
      if (depth)
        --depth;
      break;
    case '\0':
      error = "the input contains a NUL byte at line " + std::to_string(line) +
              ": it is neither MLIR text nor MLIR bytecode";
      return false;
    default:
      break;
    }
  }
  return true;
}

static const char *errorToolName = "tessel";

void mlir::tessel::installToolErrorHandlers(const char *toolName) {
  errorToolName = toolName;
  llvm::install_fatal_error_handler(
      [](void *, const char *reason, bool) {
        // LLVM exits with status 1 once this returns.
        std::fprintf(stderr, "%s: error: %s\n", errorToolName, reason);
      },
      nullptr);
  llvm::install_bad_alloc_error_handler(
      [](void *, const char *reason, bool) {
        // No allocation may happen here.
        std::fprintf(stderr, "%s: error: out of memory (%s)\n", errorToolName,
                     reason ? reason : "allocation failed");
        std::_Exit(1);
      },
      nullptr);
}
