//===- Composition.h - tessel_composition_t ---------------------*- C++ -*-===//
#ifndef TESSEL_LIB_RUNTIME_COMPOSITION_H
#define TESSEL_LIB_RUNTIME_COMPOSITION_H

#include "Artifact.h"

#include <memory>
#include <string>
#include <vector>

struct tessel_composition {
  std::string path;  // the composition file; empty when linked from a list
  std::string entry; // the file's `entry`; empty when none
  std::vector<tessel::rt::detail::ArtifactPtr> artifacts;
};

namespace tessel::rt::detail {

/// Resolves every import of every artifact of `c` to the function another
/// artifact exports under its name, checks names, interfaces and cycles,
/// and only then writes the import tables. Throws Error (NOT_FOUND for an
/// import nobody exports, INVALID_ARGUMENT otherwise) naming the import and
/// the artifacts.
void linkComposition(tessel_composition &c);

} // namespace tessel::rt::detail

#endif // TESSEL_LIB_RUNTIME_COMPOSITION_H
