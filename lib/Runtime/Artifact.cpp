//===- Artifact.cpp - loading artifacts with dlopen -----------------------===//
//
// Every failure names the path and says which of the load steps failed
// (file, ELF/dlopen, manifest symbol, manifest text, entry symbols), because
// "cannot load model" alone is the most common support question.
//
//===----------------------------------------------------------------------===//

#include "Artifact.h"
#include "Internal.h"

#include <cerrno>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace tessel::rt;
using namespace tessel::rt::detail;

namespace {

std::string quoted(const std::string &path) { return "'" + path + "'"; }

[[noreturn]] void loadError(tessel_status_code_t code, const std::string &path,
                            const std::string &why) {
  fail(code, "cannot load artifact " + quoted(path) + ": " + why);
}

/// Checks the file exists and is readable; returns whether it starts with the
/// ELF magic, so a dlopen failure can be explained precisely.
bool checkFile(const std::string &path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    int err = errno;
    if (err == ENOENT || err == ENOTDIR)
      loadError(TESSEL_NOT_FOUND, path, "no such file");
    loadError(TESSEL_IO_ERROR, path, std::strerror(err));
  }
  if (S_ISDIR(st.st_mode))
    loadError(TESSEL_INVALID_ARGUMENT, path, "is a directory");
  if (!S_ISREG(st.st_mode))
    loadError(TESSEL_INVALID_ARGUMENT, path, "not a regular file");
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    loadError(TESSEL_IO_ERROR, path,
              std::string("file is not readable: ") + std::strerror(errno));
  unsigned char magic[4] = {0, 0, 0, 0};
  ssize_t n = ::read(fd, magic, sizeof magic);
  ::close(fd);
  return n == 4 && std::memcmp(magic, "\x7f" "ELF", 4) == 0;
}

struct DlCloser {
  void operator()(void *h) const {
    if (h)
      ::dlclose(h);
  }
};
using Handle = std::unique_ptr<void, DlCloser>;

struct FdCloser {
  void operator()(int *fd) const {
    if (*fd >= 0)
      ::close(*fd);
    delete fd;
  }
};

/// dlopen with the load-error messages of docs/runtime.md.
Handle openLibrary(const std::string &path, const std::string &dlPath,
                   bool isElf) {
  ::dlerror();
  Handle handle(::dlopen(dlPath.c_str(), RTLD_NOW | RTLD_LOCAL));
  if (!handle) {
    const char *err = ::dlerror();
    std::string why = err ? err : "unknown dlopen error";
    if (!isElf)
      loadError(TESSEL_INVALID_ARTIFACT, path,
                "not an ELF shared library (dlopen: " + why + ")");
    loadError(TESSEL_INVALID_ARTIFACT, path, "dlopen failed: " + why);
  }
  return handle;
}

/// A memfd holding a copy of `path`, for a private instance of the library.
int copyToMemfd(const std::string &path) {
  // The name only labels the mapping (/proc/PID/maps, debuggers); memfd
  // names are limited to 249 bytes.
  std::string base = path.substr(path.find_last_of('/') + 1).substr(0, 200);
  int fd = ::memfd_create(("tessel:" + base).c_str(), MFD_CLOEXEC);
  if (fd < 0)
    loadError(TESSEL_IO_ERROR, path,
              std::string("cannot make a private copy for linking "
                          "(memfd_create: ") +
                  std::strerror(errno) + ")");
  std::unique_ptr<int, FdCloser> guard(new int(fd));
  int in = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0)
    loadError(TESSEL_IO_ERROR, path,
              std::string("file is not readable: ") + std::strerror(errno));
  std::unique_ptr<int, FdCloser> inGuard(new int(in));
  std::vector<char> buf(1 << 20);
  for (;;) {
    ssize_t n = ::read(in, buf.data(), buf.size());
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      loadError(TESSEL_IO_ERROR, path,
                std::string("read failed: ") + std::strerror(errno));
    if (n == 0)
      break;
    for (ssize_t done = 0; done < n;) {
      ssize_t w = ::write(fd, buf.data() + done, size_t(n - done));
      if (w < 0 && errno == EINTR)
        continue;
      if (w < 0)
        loadError(TESSEL_IO_ERROR, path,
                  std::string("cannot make a private copy for linking: ") +
                      std::strerror(errno));
      done += w;
    }
  }
  *guard = -1;
  return fd;
}

void freeArtifact(tessel_artifact *artifact) {
  if (!artifact)
    return;
  // A table that outlives this handle (the library is shared with another
  // load) must not point into providers that are about to be unloaded.
  if (artifact->importTable)
    for (size_t i = 0; i < artifact->imports.size(); ++i)
      artifact->importTable[i] = nullptr;
  if (artifact->handle)
    ::dlclose(artifact->handle);
  if (artifact->privateFd >= 0)
    ::close(artifact->privateFd);
  delete artifact;
}

/// Whether the library at `dlPath` is loaded in this process already (by
/// name, or by file identity); dlopen would return that instance.
bool isLoaded(const std::string &dlPath) {
  void *h = ::dlopen(dlPath.c_str(), RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
  if (h)
    ::dlclose(h);
  return h != nullptr;
}

ArtifactPtr load(const std::string &path, bool privateInstance) {
  bool isElf = checkFile(path);
  // Without a slash dlopen searches the library path instead of the file.
  std::string dlPath = path.find('/') == std::string::npos ? "./" + path : path;
  ArtifactPtr artifact(new tessel_artifact, freeArtifact);
  auto openPrivate = [&] {
    artifact->privateFd = copyToMemfd(path);
    return openLibrary(
        path, "/proc/self/fd/" + std::to_string(artifact->privateFd), isElf);
  };
  // A library already loaded under this name may be another composition's
  // (its import table is not ours) or stale (the file was replaced since:
  // dlopen matches loaded libraries by name first).
  bool loaded = privateInstance && isElf && isLoaded(dlPath);
  Handle handle = loaded ? openPrivate() : openLibrary(path, dlPath, isElf);

  ::dlerror();
  const char *manifest = static_cast<const char *>(
      ::dlsym(handle.get(), TESSEL_MANIFEST_SYMBOL));
  if (!manifest)
    loadError(TESSEL_INVALID_ARTIFACT, path,
              "not a Tessel artifact: the shared library does not export '" +
                  std::string(TESSEL_MANIFEST_SYMBOL) + "'");

  Manifest m = parseManifest(manifest, "artifact " + quoted(path));
  if (privateInstance && !loaded && !m.imports.empty())
    // An importer's table must be this artifact's alone, even if the file
    // is loaded again later: reopen it as a private copy of the same bytes
    // (the parsed manifest stays valid).
    handle = openPrivate();
  artifact->path = path;
  artifact->version = m.version;
  artifact->target = m.target;
  artifact->functions.reserve(m.functions.size());
  for (ManifestFunction &f : m.functions) {
    ::dlerror();
    void *sym = ::dlsym(handle.get(), f.symbol.c_str());
    if (!sym)
      fail(TESSEL_INVALID_ARTIFACT,
           "artifact " + quoted(path) + ": entry symbol '" + f.symbol +
               "' of function '" + f.name + "' is missing");
    tessel_function fn;
    fn.info = std::move(f);
    fn.entry = reinterpret_cast<tessel_entry_fn>(sym);
    fn.artifact = artifact.get();
    artifact->functions.push_back(std::move(fn));
    // The vector never grows again, so the names stay where they are.
    fillDimNamePointers(artifact->functions.back().info);
  }
  if (!m.imports.empty()) {
    ::dlerror();
    artifact->importTable = static_cast<tessel_entry_fn *>(
        ::dlsym(handle.get(), TESSEL_IMPORTS_SYMBOL));
    if (!artifact->importTable)
      fail(TESSEL_INVALID_ARTIFACT,
           "artifact " + quoted(path) + ": the manifest declares " +
               std::to_string(m.imports.size()) +
               " import(s) but the library does not export '" +
               TESSEL_IMPORTS_SYMBOL + "'");
    artifact->imports = std::move(m.imports);
    for (ManifestFunction &import : artifact->imports)
      fillDimNamePointers(import);
    artifact->providers.assign(artifact->imports.size(), nullptr);
  }
  artifact->handle = handle.release();
  return artifact;
}

tessel_status_t *valueInfo(const tessel_function_t *fn, size_t index,
                           tessel_value_info_t *out, bool input) {
  return guard([&] {
    if (!fn || !out)
      fail(TESSEL_INVALID_ARGUMENT, "function or out pointer is NULL");
    const auto &values = input ? fn->info.inputs : fn->info.outputs;
    if (index >= values.size())
      fail(TESSEL_INVALID_ARGUMENT,
           std::string(input ? "input" : "output") + " index " +
               std::to_string(index) + " out of range: function '" +
               fn->info.name + "' has " + std::to_string(values.size()));
    const ManifestValue &v = values[index];
    *out = {v.name.c_str(), v.dtype, v.dims.size(), v.dims.data(),
            v.dimNamePtrs.data()};
  });
}

} // namespace

ArtifactPtr detail::loadArtifact(const std::string &path,
                                 bool privateInstance) {
  return load(path, privateInstance);
}

extern "C" {

tessel_status_t *tessel_artifact_load(const char *path,
                                      tessel_artifact_t **out) {
  return guard([&] {
    if (!path || !out)
      fail(TESSEL_INVALID_ARGUMENT, "tessel_artifact_load: NULL argument");
    *out = load(path, /*privateInstance=*/false).release();
  });
}

void tessel_artifact_free(tessel_artifact_t *artifact) {
  freeArtifact(artifact);
}

const char *tessel_artifact_path(const tessel_artifact_t *a) {
  return a ? a->path.c_str() : "";
}
const char *tessel_artifact_target(const tessel_artifact_t *a) {
  return a ? a->target.c_str() : "";
}
uint32_t tessel_artifact_abi_version(const tessel_artifact_t *a) {
  return a ? a->version : 0;
}
size_t tessel_artifact_num_functions(const tessel_artifact_t *a) {
  return a ? a->functions.size() : 0;
}
const tessel_function_t *tessel_artifact_function_at(const tessel_artifact_t *a,
                                                     size_t index) {
  return a && index < a->functions.size() ? &a->functions[index] : nullptr;
}

tessel_status_t *tessel_artifact_lookup_function(const tessel_artifact_t *a,
                                                 const char *name,
                                                 const tessel_function_t **out) {
  return guard([&] {
    if (!a || !name || !out)
      fail(TESSEL_INVALID_ARGUMENT,
           "tessel_artifact_lookup_function: NULL argument");
    std::string available;
    for (const tessel_function &fn : a->functions) {
      if (fn.info.name == name) {
        *out = &fn;
        return;
      }
      available += (available.empty() ? "" : ", ") + fn.info.name;
    }
    fail(TESSEL_NOT_FOUND, "artifact " + quoted(a->path) +
                               " has no function '" + name +
                               "' (available: " + available + ")");
  });
}

const char *tessel_function_name(const tessel_function_t *fn) {
  return fn ? fn->info.name.c_str() : "";
}
const char *tessel_function_symbol(const tessel_function_t *fn) {
  return fn ? fn->info.symbol.c_str() : "";
}
size_t tessel_function_num_inputs(const tessel_function_t *fn) {
  return fn ? fn->info.inputs.size() : 0;
}
size_t tessel_function_num_outputs(const tessel_function_t *fn) {
  return fn ? fn->info.outputs.size() : 0;
}
tessel_status_t *tessel_function_input(const tessel_function_t *fn,
                                       size_t index, tessel_value_info_t *out) {
  return valueInfo(fn, index, out, true);
}
tessel_status_t *tessel_function_output(const tessel_function_t *fn,
                                        size_t index,
                                        tessel_value_info_t *out) {
  return valueInfo(fn, index, out, false);
}
int64_t tessel_function_input_vocab(const tessel_function_t *fn,
                                    size_t index) {
  return fn && index < fn->info.inputs.size() ? fn->info.inputs[index].vocab
                                              : 0;
}
int64_t tessel_function_output_vocab(const tessel_function_t *fn,
                                     size_t index) {
  return fn && index < fn->info.outputs.size() ? fn->info.outputs[index].vocab
                                               : 0;
}
const tessel_artifact_t *
tessel_function_artifact(const tessel_function_t *fn) {
  return fn ? fn->artifact : nullptr;
}

size_t tessel_artifact_num_imports(const tessel_artifact_t *a) {
  return a ? a->imports.size() : 0;
}
const char *tessel_artifact_import_name(const tessel_artifact_t *a,
                                        size_t index) {
  return a && index < a->imports.size() ? a->imports[index].name.c_str() : "";
}
const tessel_function_t *
tessel_artifact_import_provider(const tessel_artifact_t *a, size_t index) {
  return a && index < a->providers.size() ? a->providers[index] : nullptr;
}

} // extern "C"
