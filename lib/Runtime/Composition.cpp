//===- Composition.cpp - linking artifacts into one model ------------------===//
//
// The runtime's dynamic linker. Each import of each artifact resolves to
// the one function another artifact of the set exports under the import's
// name (a component name); the interfaces must agree exactly (dtype, shape
// and symbol vocabulary, input by input and output by output), since the
// caller trusts the callee with bare buffers. Everything is checked before
// the first table slot is written, so a failed link leaves no artifact half
// linked.
//
//===----------------------------------------------------------------------===//

#include "Artifact.h"
#include "CompositionFile.h"
#include "Internal.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <fstream>
#include <map>
#include <sstream>
#include <sys/stat.h>

using namespace tessel::rt;
using namespace tessel::rt::detail;

using ArtifactPtr = std::unique_ptr<tessel_artifact, void (*)(tessel_artifact *)>;

struct tessel_composition {
  std::string path;  // the composition file; empty when linked from a list
  std::string entry; // the file's `entry`; empty when none
  std::vector<ArtifactPtr> artifacts;
};

namespace {

std::string quoted(const std::string &s) { return "'" + s + "'"; }

/// "ids: i32 [6] vocab=12" (the manifest's spelling of one value).
std::string describe(const ManifestValue &v) {
  std::string s = v.name + ": " + tessel_dtype_name(v.dtype) + " " +
                  shapeString(v.dims);
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
      if (a.dtype == b.dtype && a.dims == b.dims && a.vocab == b.vocab)
        continue;
      std::string what = a.dtype != b.dtype ? "dtype"
                         : a.dims != b.dims ? "shape"
                                            : "symbol vocabulary";
      fail(TESSEL_INVALID_ARGUMENT,
           where + kind + " " + std::to_string(i) + " differs in " + what +
               " (import: " + describe(a) + "; function: " + describe(b) +
               ")");
    }
  }
}

/// Resolves every import of `c`, checks the result and only then writes
/// the tables.
void link(tessel_composition &c) {
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

std::unique_ptr<tessel_composition>
linkPaths(const std::vector<std::string> &paths,
          const std::vector<std::string> &origins) {
  auto c = std::make_unique<tessel_composition>();
  for (size_t i = 0; i < paths.size(); ++i) {
    try {
      c->artifacts.push_back(loadArtifact(paths[i], /*privateInstance=*/true));
    } catch (const Error &e) {
      throw Error(e.code(), origins[i] + e.what());
    }
  }
  link(*c);
  return c;
}

std::string readCompositionFile(const std::string &path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    int err = errno;
    fail(err == ENOENT || err == ENOTDIR ? TESSEL_NOT_FOUND : TESSEL_IO_ERROR,
         "cannot load composition " + quoted(path) + ": " +
             (err == ENOENT || err == ENOTDIR ? std::string("no such file")
                                              : std::strerror(err)));
  }
  if (!S_ISREG(st.st_mode))
    fail(TESSEL_INVALID_ARGUMENT,
         "cannot load composition " + quoted(path) + ": not a regular file");
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in && !in.eof())
    fail(TESSEL_IO_ERROR,
         "cannot load composition " + quoted(path) + ": read failed");
  return text.str();
}

std::string exportedNames(const tessel_composition &c) {
  std::string names;
  for (const ArtifactPtr &a : c.artifacts)
    for (const tessel_function &fn : a->functions)
      names += (names.empty() ? "" : ", ") + fn.info.name;
  return names;
}

const tessel_function *findFunction(const tessel_composition &c,
                                    const std::string &name) {
  for (const ArtifactPtr &a : c.artifacts)
    for (const tessel_function &fn : a->functions)
      if (fn.info.name == name)
        return &fn;
  return nullptr;
}

} // namespace

extern "C" {

tessel_status_t *tessel_composition_link(const char *const *paths, size_t n,
                                         tessel_composition_t **out) {
  return guard([&] {
    if ((!paths && n) || !out)
      fail(TESSEL_INVALID_ARGUMENT, "tessel_composition_link: NULL argument");
    if (n == 0)
      fail(TESSEL_INVALID_ARGUMENT,
           "tessel_composition_link: a composition needs at least one "
           "artifact");
    std::vector<std::string> list, origins;
    for (size_t i = 0; i < n; ++i) {
      if (!paths[i])
        fail(TESSEL_INVALID_ARGUMENT,
             "tessel_composition_link: path " + std::to_string(i) + " is NULL");
      list.push_back(paths[i]);
      origins.emplace_back();
    }
    *out = linkPaths(list, origins).release();
  });
}

tessel_status_t *tessel_composition_load(const char *path,
                                         tessel_composition_t **out) {
  return guard([&] {
    if (!path || !out)
      fail(TESSEL_INVALID_ARGUMENT, "tessel_composition_load: NULL argument");
    std::string source = "composition " + quoted(path);
    CompositionFile file =
        parseCompositionFile(readCompositionFile(path), source);
    std::vector<std::string> list, origins;
    for (const CompositionFile::Artifact &a : file.artifacts) {
      list.push_back(resolveAgainst(path, a.path));
      origins.push_back(source + ", line " + std::to_string(a.line) + ": ");
    }
    std::unique_ptr<tessel_composition> c = linkPaths(list, origins);
    c->path = path;
    c->entry = file.entry;
    if (!c->entry.empty() && !findFunction(*c, c->entry))
      fail(TESSEL_NOT_FOUND, source + ": entry " + quoted(c->entry) +
                                 " is not exported by any of its artifacts "
                                 "(exported: " +
                                 exportedNames(*c) + ")");
    *out = c.release();
  });
}

void tessel_composition_free(tessel_composition_t *composition) {
  // Each artifact clears its import table before it is unloaded.
  delete composition;
}

const char *tessel_composition_path(const tessel_composition_t *c) {
  return c ? c->path.c_str() : "";
}
const char *tessel_composition_entry(const tessel_composition_t *c) {
  return c ? c->entry.c_str() : "";
}
size_t tessel_composition_num_artifacts(const tessel_composition_t *c) {
  return c ? c->artifacts.size() : 0;
}
const tessel_artifact_t *
tessel_composition_artifact_at(const tessel_composition_t *c, size_t index) {
  return c && index < c->artifacts.size() ? c->artifacts[index].get()
                                          : nullptr;
}

tessel_status_t *
tessel_composition_lookup_function(const tessel_composition_t *c,
                                   const char *name,
                                   const tessel_function_t **out) {
  return guard([&] {
    if (!c || !name || !out)
      fail(TESSEL_INVALID_ARGUMENT,
           "tessel_composition_lookup_function: NULL argument");
    if (const tessel_function *fn = findFunction(*c, name)) {
      *out = fn;
      return;
    }
    fail(TESSEL_NOT_FOUND, "the composition has no function " +
                               quoted(name) + " (available: " +
                               exportedNames(*c) + ")");
  });
}

tessel_status_t *
tessel_composition_default_function(const tessel_composition_t *c,
                                    const tessel_function_t **out) {
  return guard([&] {
    if (!c || !out)
      fail(TESSEL_INVALID_ARGUMENT,
           "tessel_composition_default_function: NULL argument");
    if (!c->entry.empty()) {
      *out = findFunction(*c, c->entry);
      return;
    }
    // The model's entry is what no artifact of the set calls.
    std::vector<const tessel_function *> roots;
    for (const ArtifactPtr &a : c->artifacts)
      for (const tessel_function &fn : a->functions) {
        bool imported = false;
        for (const ArtifactPtr &b : c->artifacts)
          for (const tessel_function *p : b->providers)
            imported |= p == &fn;
        if (!imported)
          roots.push_back(&fn);
      }
    if (roots.size() == 1) {
      *out = roots[0];
      return;
    }
    if (const tessel_function *fn = findFunction(*c, "main")) {
      *out = fn;
      return;
    }
    std::string names;
    for (const tessel_function *fn : roots)
      names += (names.empty() ? "" : ", ") + fn->info.name;
    fail(TESSEL_INVALID_ARGUMENT,
         "the composition has " + std::to_string(roots.size()) +
             " functions no artifact imports and none is 'main' (" + names +
             "); name one with an 'entry' line or choose it explicitly");
  });
}

int tessel_is_composition_file(const char *path) {
  if (!path)
    return 0;
  std::ifstream in(path, std::ios::binary);
  std::string magic(std::strlen(kCompositionMagic), '\0');
  if (!in.read(&magic[0], std::streamsize(magic.size())))
    return 0;
  return magic == kCompositionMagic;
}

} // extern "C"
