//===- Composition.cpp - tessel_composition_t: linked artifacts ------------===//
//
// Loading the artifacts of a composition (a list, or a composition file)
// and the C API over the result; the linking itself is Linker.cpp.
//
//===----------------------------------------------------------------------===//

#include "Composition.h"
#include "CompositionFile.h"
#include "Internal.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

using namespace tessel::rt;
using namespace tessel::rt::detail;

namespace {

std::string quoted(const std::string &s) { return "'" + s + "'"; }

std::unique_ptr<tessel_composition>
linkPaths(const std::vector<std::string> &paths,
          const std::vector<std::string> &origins) {
  auto c = std::make_unique<tessel_composition>();
  for (size_t i = 0; i < paths.size(); ++i) {
    try {
      c->artifacts.push_back(loadArtifact(paths[i]));
    } catch (const Error &e) {
      throw Error(e.code(), origins[i] + e.what());
    }
  }
  linkComposition(*c);
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
