//===- CompositionFile.h - the composition file grammar ---------*- C++ -*-===//
//
// A composition file lists the artifacts the runtime links into one model
// (docs/runtime.md, "Compositions"). Parsed separately from loading so the
// grammar can be unit-tested on strings.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_RUNTIME_COMPOSITIONFILE_H
#define TESSEL_LIB_RUNTIME_COMPOSITIONFILE_H

#include <cstddef>
#include <string>
#include <vector>

namespace tessel::rt::detail {

/// First token of a composition file's first line, followed by its version.
inline constexpr const char *kCompositionMagic = "tessel-composition";
inline constexpr unsigned kCompositionVersion = 1;

struct CompositionFile {
  struct Artifact {
    std::string path; ///< as written; relative to the file's folder
    size_t line = 0;
  };
  std::vector<Artifact> artifacts;
  std::string entry; ///< empty when the file names none
};

/// Parses composition text; throws Error (TESSEL_INVALID_ARGUMENT, or
/// TESSEL_UNSUPPORTED for a newer version) whose message starts with
/// "<source>, line N: ".
CompositionFile parseCompositionFile(const std::string &text,
                                     const std::string &source);

/// `path` resolved against the folder of the composition file `file`
/// (unchanged when absolute).
std::string resolveAgainst(const std::string &file, const std::string &path);

} // namespace tessel::rt::detail

#endif // TESSEL_LIB_RUNTIME_COMPOSITIONFILE_H
