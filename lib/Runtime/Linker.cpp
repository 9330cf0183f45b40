//===- Linker.cpp - resolving the imports of a composition ----------------===//
//
// The runtime's dynamic linker. Each import of each artifact resolves to
// the one function another artifact of the set exports under the import's
// name (a component name); the interfaces must agree exactly (dtype, shape
// and symbol vocabulary, input by input and output by output; named
// dimensions up to a consistent renaming), since the caller trusts the
// callee with bare buffers. Everything is checked before
// the first table slot is written, so a failed link leaves no artifact half
// linked.
//
//===----------------------------------------------------------------------===//

#include "Composition.h"
#include "Internal.h"

#include <algorithm>
#include <functional>
#include <map>
#include <tuple>

using namespace tessel::rt;
using namespace tessel::rt::detail;

namespace {

std::string quoted(const std::string &s) { return "'" + s + "'"; }

/// "ids: i32 [6] vocab=12" (the manifest's spelling of one value).
std::string describe(const ManifestValue &v) {
  std::string s =
      v.name + ": " + tessel_dtype_name(v.dtype) + " " + shapeString(v);
  if (v.vocab)
    s += " vocab=" + std::to_string(v.vocab);
  return s;
}

void checkInterface(const tessel_artifact &importer,
                    const ManifestFunction &import,
                    const tessel_function &provider) {
  std::string where = "import " + quoted(import.name) + " of artifact " +
                      quoted(importer.path) + " does not match function " +
                      quoted(provider.info.name) + " of artifact " +
                      quoted(provider.artifact->path) + ": ";
  // Named dimensions match up to renaming: each of the import's names
  // stands for exactly one of the function's, and the other way round.
  std::map<std::string, std::string> toProvider, toImport;
  auto sameShape = [&](const ManifestValue &a, const ManifestValue &b) {
    if (a.dims.size() != b.dims.size())
      return false;
    for (size_t d = 0; d < a.dims.size(); ++d) {
      const std::string &na = a.dimNames[d], &nb = b.dimNames[d];
      if (na.empty() != nb.empty() || (na.empty() && a.dims[d] != b.dims[d]))
        return false;
      if (na.empty())
        continue;
      auto [ia, newA] = toProvider.emplace(na, nb);
      auto [ib, newB] = toImport.emplace(nb, na);
      if (ia->second != nb || ib->second != na)
        return false;
    }
    return true;
  };
  // The import's caller allocates the outputs before the call, so a
  // provider output whose size follows from the data (ABI v6) cannot be
  // one (the entry would take a tessel_run_time_output there).
  for (size_t i = 0; i < provider.info.outputs.size(); ++i)
    if (hasRunTimeDim(provider.info.outputs[i]))
      fail(TESSEL_INVALID_ARGUMENT,
           where + "output " + std::to_string(i) +
               " of the function has a size that follows from the data (" +
               describe(provider.info.outputs[i]) +
               "), which an import cannot take: its caller allocates the "
               "outputs");
  for (auto [kind, mine, theirs] :
       {std::tuple<const char *, const std::vector<ManifestValue> *,
                   const std::vector<ManifestValue> *>{
            "input", &import.inputs, &provider.info.inputs},
        {"output", &import.outputs, &provider.info.outputs}}) {
    if (mine->size() != theirs->size())
      fail(TESSEL_INVALID_ARGUMENT,
           where + "the import has " + std::to_string(mine->size()) + " " +
               kind + "(s), the function " + std::to_string(theirs->size()));
    for (size_t i = 0; i < mine->size(); ++i) {
      const ManifestValue &a = (*mine)[i], &b = (*theirs)[i];
      bool shapeOk = sameShape(a, b);
      if (a.dtype == b.dtype && shapeOk && a.vocab == b.vocab)
        continue;
      std::string what = a.dtype != b.dtype ? "dtype"
                         : !shapeOk         ? "shape"
                                            : "symbol vocabulary";
      fail(TESSEL_INVALID_ARGUMENT,
           where + kind + " " + std::to_string(i) + " differs in " + what +
               " (import: " + describe(a) + "; function: " + describe(b) +
               ")");
    }
  }
}

} // namespace

void detail::linkComposition(tessel_composition &c) {
  std::map<std::string, const tessel_function *> exports;
  for (const ArtifactPtr &a : c.artifacts)
    for (const tessel_function &fn : a->functions) {
      auto [it, inserted] = exports.emplace(fn.info.name, &fn);
      if (!inserted)
        fail(TESSEL_INVALID_ARGUMENT,
             "function " + quoted(fn.info.name) +
                 " is exported by two artifacts of the composition: " +
                 quoted(it->second->artifact->path) + " and " +
                 quoted(a->path) + "; a component name must have one provider");
    }
  std::vector<std::vector<const tessel_function *>> resolved;
  for (const ArtifactPtr &a : c.artifacts) {
    resolved.emplace_back();
    for (const ManifestFunction &import : a->imports) {
      auto it = exports.find(import.name);
      if (it == exports.end()) {
        std::string names;
        for (const auto &[name, fn] : exports)
          names += (names.empty() ? "" : ", ") + name;
        fail(TESSEL_NOT_FOUND,
             "artifact " + quoted(a->path) + " imports " + quoted(import.name) +
                 ", which no artifact of the composition exports (exported: " +
                 names + ")");
      }
      checkInterface(*a, import, *it->second);
      resolved.back().push_back(it->second);
    }
  }

  // A cycle of imports would recurse until the stack overflows; the graph
  // is small (functions and their uses), so a depth-first search is cheap.
  std::map<const tessel_function *, size_t> artifactOf;
  for (size_t i = 0; i < c.artifacts.size(); ++i)
    for (const tessel_function &fn : c.artifacts[i]->functions)
      artifactOf[&fn] = i;
  enum class Mark { None, Active, Done };
  std::map<const tessel_function *, Mark> marks;
  std::vector<const tessel_function *> stack;
  auto label = [](const tessel_function *fn) {
    return fn->info.name + " (" + fn->artifact->path + ")";
  };
  std::function<void(const tessel_function *)> visit =
      [&](const tessel_function *fn) {
        Mark &m = marks[fn];
        if (m == Mark::Done)
          return;
        if (m == Mark::Active) {
          std::string cycle;
          auto from = std::find(stack.begin(), stack.end(), fn);
          for (auto it = from; it != stack.end(); ++it)
            cycle += label(*it) + " -> ";
          fail(TESSEL_INVALID_ARGUMENT,
               "the composition's imports form a cycle: " + cycle + label(fn));
        }
        m = Mark::Active;
        stack.push_back(fn);
        for (size_t slot : fn->info.uses)
          visit(resolved[artifactOf[fn]][slot]);
        stack.pop_back();
        marks[fn] = Mark::Done;
      };
  for (const ArtifactPtr &a : c.artifacts)
    for (const tessel_function &fn : a->functions)
      visit(&fn);

  for (size_t i = 0; i < c.artifacts.size(); ++i)
    for (size_t slot = 0; slot < resolved[i].size(); ++slot) {
      c.artifacts[i]->importTable[slot] = resolved[i][slot]->entry;
      c.artifacts[i]->providers[slot] = resolved[i][slot];
    }
}
