//===- Artifact.cpp - loading artifacts with dlopen -----------------------===//
//
// Every failure names the path and says which of the load steps failed
// (file, ELF/dlopen, manifest symbol, manifest text, entry symbols), because
// "cannot load model" alone is the most common support question.
//
//===----------------------------------------------------------------------===//

#include "Artifact.h"
#include "CpuFeatures.h"
#include "Internal.h"
#include "tessel/Runtime/ArtifactSeal.h"

#include <cerrno>
#include <cstring>
#include <dlfcn.h>
#include <elf.h>
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

/// Checks the file exists, is a regular file and readable.
void checkFile(const std::string &path) {
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
using Fd = std::unique_ptr<int, FdCloser>;

/// Reads all of `fd` (a regular file of `size` bytes at open time).
std::string readAll(int fd, size_t size, const std::string &path) {
  std::string bytes(size, '\0');
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::read(fd, bytes.data() + done, size - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      loadError(TESSEL_IO_ERROR, path,
                std::string("read failed: ") + std::strerror(errno));
    if (n == 0)
      loadError(TESSEL_IO_ERROR, path,
                "the file shrank while it was read (is it being written?)");
    done += size_t(n);
  }
  return bytes;
}

/// Checks that the ELF headers describe a shared library for this machine
/// that lies within the file; the seal already rules out damage, this names
/// what is wrong with a foreign library.
void checkElf(const char *data, size_t size, const std::string &path) {
  Elf64_Ehdr eh;
  if (size < sizeof eh)
    loadError(TESSEL_INVALID_ARTIFACT, path, "ELF header is truncated");
  std::memcpy(&eh, data, sizeof eh);
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
    loadError(TESSEL_INVALID_ARTIFACT, path,
              "not a 64-bit little-endian ELF file");
#if defined(__x86_64__)
  if (eh.e_machine != EM_X86_64)
    loadError(TESSEL_UNSUPPORTED, path,
              "compiled for another machine (ELF e_machine " +
                  std::to_string(eh.e_machine) + "), this one is x86-64");
#endif
  if (eh.e_type != ET_DYN)
    loadError(TESSEL_INVALID_ARTIFACT, path, "not a shared library");
  auto within = [&](uint64_t off, uint64_t count, uint64_t each) {
    return off <= size && (each == 0 || count <= (size - off) / each);
  };
  if (eh.e_phentsize != sizeof(Elf64_Phdr) ||
      !within(eh.e_phoff, eh.e_phnum, sizeof(Elf64_Phdr)))
    loadError(TESSEL_INVALID_ARTIFACT, path,
              "program headers lie outside the file");
  for (unsigned i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    std::memcpy(&ph, data + eh.e_phoff + i * sizeof ph, sizeof ph);
    if (ph.p_type == PT_LOAD && !within(ph.p_offset, ph.p_filesz, 1))
      loadError(TESSEL_INVALID_ARTIFACT, path,
                "segment " + std::to_string(i) +
                    " lies outside the file (truncated?)");
  }
}

/// The file's bytes, once its ELF magic and seal are checked.
std::string readSealed(const std::string &path) {
  int in = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0)
    loadError(TESSEL_IO_ERROR, path,
              std::string("file is not readable: ") + std::strerror(errno));
  Fd guard(new int(in));
  struct stat st;
  if (::fstat(in, &st) != 0 || !S_ISREG(st.st_mode))
    loadError(TESSEL_INVALID_ARGUMENT, path, "not a regular file");
  // The magic first: a large file of something else is not read whole.
  unsigned char magic[4] = {0, 0, 0, 0};
  ssize_t n = ::pread(in, magic, sizeof magic, 0);
  if (n != 4 || std::memcmp(magic, "\x7f" "ELF", 4) != 0)
    loadError(TESSEL_INVALID_ARTIFACT, path,
              "not an ELF shared library (no ELF magic in its first bytes)");
  std::string bytes = readAll(in, size_t(st.st_size), path);
  switch (tessel::seal::check(bytes.data(), bytes.size())) {
  case tessel::seal::Result::Ok:
    break;
  case tessel::seal::Result::Missing:
    loadError(TESSEL_INVALID_ARTIFACT, path,
              "no Tessel seal at the end of the file: it was not written by "
              "tessel-compile, or it was truncated, stripped or extended "
              "since (recompile it)");
  case tessel::seal::Result::WrongSize:
    loadError(TESSEL_INVALID_ARTIFACT, path,
              "damaged: the seal records another file size (the file was "
              "truncated or extended after tessel-compile wrote it)");
  case tessel::seal::Result::Mismatch:
    loadError(TESSEL_INVALID_ARTIFACT, path,
              "damaged: the checksum of its contents does not match its "
              "seal (the file was modified after tessel-compile wrote it)");
  }
  checkElf(bytes.data(), bytes.size() - tessel::seal::kSize, path);
  return bytes;
}

/// A sealed memfd holding `bytes`: the library is loaded from this private
/// copy, so a file replaced, rewritten or truncated after loading cannot
/// change (or fault) the code that runs.
int copyToMemfd(const std::string &path, const std::string &bytes) {
  // The name only labels the mapping (/proc/PID/maps, debuggers); memfd
  // names are limited to 249 bytes.
  std::string base = path.substr(path.find_last_of('/') + 1).substr(0, 200);
  int fd = ::memfd_create(("tessel:" + base).c_str(),
                          MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0)
    loadError(TESSEL_IO_ERROR, path,
              std::string("cannot make a private copy (memfd_create: ") +
                  std::strerror(errno) + ")");
  Fd guard(new int(fd));
  for (size_t done = 0; done < bytes.size();) {
    ssize_t w = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (w < 0 && errno == EINTR)
      continue;
    if (w < 0)
      loadError(TESSEL_IO_ERROR, path,
                std::string("cannot make a private copy: ") +
                    std::strerror(errno));
    done += size_t(w);
  }
  // Best effort: nothing in this process writes to it, the seals say so
  // to the kernel too.
  (void)::fcntl(fd, F_ADD_SEALS,
                F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
  *guard = -1;
  return fd;
}

/// dlopen with the load-error messages of docs/runtime.md.
Handle openLibrary(const std::string &path, const std::string &dlPath) {
  ::dlerror();
  Handle handle(::dlopen(dlPath.c_str(), RTLD_NOW | RTLD_LOCAL));
  if (!handle) {
    const char *err = ::dlerror();
    loadError(TESSEL_INVALID_ARTIFACT, path,
              "dlopen failed: " +
                  std::string(err ? err : "unknown dlopen error"));
  }
  return handle;
}

/// Whether a library of that name is loaded in this process.
bool isLoaded(const std::string &dlPath) {
  void *h = ::dlopen(dlPath.c_str(), RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
  if (h)
    ::dlclose(h);
  return h != nullptr;
}

/// Whether `sym` lies in the library that defines `anchor` (dlsym also
/// finds the symbols of the library's dependencies, libc's malloc say).
bool sameLibrary(const void *sym, const void *anchor) {
  Dl_info a, b;
  return ::dladdr(sym, &a) && ::dladdr(anchor, &b) &&
         a.dli_fbase == b.dli_fbase;
}

/// Where the caller wants an artifact to run (tessel_artifact_load_on):
/// any (the artifact's own device), "cpu", "cuda" or "cuda:N".
struct DeviceRequest {
  std::string kind; // empty: any
  int ordinal = -1; // cuda:N; -1: the device runtime's default
};

DeviceRequest parseDeviceRequest(const char *text) {
  DeviceRequest r;
  std::string s = text ? text : "";
  if (s.empty())
    return r;
  if (s == "cpu" || s == "cuda") {
    r.kind = s;
    return r;
  }
  if (s.rfind("cuda:", 0) == 0 && s.size() > 5 && s.size() <= 9 &&
      s.find_first_not_of("0123456789", 5) == std::string::npos) {
    r.kind = "cuda";
    r.ordinal = std::stoi(s.substr(5));
    return r;
  }
  fail(TESSEL_INVALID_ARGUMENT,
       "unknown device '" + s + "' (expected cpu, cuda or cuda:N)");
}

/// The artifact runs where it was compiled for: a request for another
/// device fails before anything starts on either.
void checkDeviceKind(const Manifest &m, const DeviceRequest &request,
                     const std::string &path) {
  if (request.kind.empty())
    return;
  std::string has = m.deviceKind.empty() ? "cpu" : m.deviceKind;
  if (has == request.kind)
    return;
  std::string compiled =
      m.deviceKind.empty()
          ? std::string("the CPU (--target=cpu)")
          : m.deviceKind + " " + m.deviceArch + " (--target=" + m.deviceKind +
                ")";
  loadError(TESSEL_UNSUPPORTED, path,
            "it was compiled for " + compiled + " and cannot run on device '" +
                request.kind + "': recompile it with --target=" +
                request.kind);
}

/// A device artifact (ABI v5 `device` record) carries its device runtime
/// (lib/DeviceRuntime): it must be there, and say the device can run it.
void checkDevice(tessel_artifact &artifact, void *handle, const void *manifest,
                 const Manifest &m, const std::string &path,
                 const DeviceRequest &request) {
  auto symbol = [&](const char *name) {
    ::dlerror();
    void *sym = ::dlsym(handle, name);
    if (!sym || !sameLibrary(sym, manifest))
      loadError(TESSEL_INVALID_ARTIFACT, path,
                "the manifest names device '" + m.deviceKind +
                    "' but the library does not define '" + name + "'");
    return sym;
  };
  auto check = reinterpret_cast<int (*)(const char *, char *, size_t)>(
      symbol("__tessel_cuda_check"));
  artifact.takeDeviceError = reinterpret_cast<int (*)(char *, size_t)>(
      symbol("__tessel_cuda_take_error"));
  artifact.deviceName =
      reinterpret_cast<const char *(*)()>(symbol("__tessel_cuda_device"));
  artifact.deviceTiming =
      reinterpret_cast<void (*)(int)>(symbol("__tessel_cuda_timing"));
  artifact.lastKernelMs = reinterpret_cast<double (*)()>(
      symbol("__tessel_cuda_last_kernel_ms"));
  char message[1024] = "";
  if (request.ordinal >= 0) {
    // Optional: artifacts from before device selection lack it.
    ::dlerror();
    auto select = reinterpret_cast<int (*)(int, char *, size_t)>(
        ::dlsym(handle, "__tessel_cuda_select"));
    if (!select || !sameLibrary(reinterpret_cast<void *>(select), manifest))
      loadError(TESSEL_UNSUPPORTED, path,
                "its device runtime cannot choose a device (it predates "
                "--device=cuda:N): recompile it, or set TESSEL_CUDA_DEVICE");
    if (select(request.ordinal, message, sizeof message) != 0)
      loadError(TESSEL_UNSUPPORTED, path, message);
  }
  if (check(m.deviceArch.c_str(), message, sizeof message) != 0)
    loadError(TESSEL_UNSUPPORTED, path, message);
  artifact.deviceKind = m.deviceKind;
  artifact.deviceArch = m.deviceArch;
  artifact.deviceText = m.deviceKind + " " + artifact.deviceName();
}

/// An expert-parallel artifact (ABI v8 `ranks` record) carries its MPI
/// runtime part (lib/RuntimeMPI): it starts MPI (once per process) and
/// checks that the job has as many processes as the artifact was compiled
/// for, so a wrong `mpirun -np` fails here, before any collective could
/// wait forever for a process that does not exist.
void checkRanks(tessel_artifact &artifact, void *handle, const void *manifest,
                const Manifest &m, const std::string &path) {
  auto symbol = [&](const char *name) {
    ::dlerror();
    void *sym = ::dlsym(handle, name);
    if (!sym || !sameLibrary(sym, manifest))
      loadError(TESSEL_INVALID_ARTIFACT, path,
                "the manifest names " + std::to_string(m.ranks) +
                    " MPI processes but the library does not define '" + name +
                    "'");
    return sym;
  };
  auto init = reinterpret_cast<int32_t (*)(int32_t, char *, int64_t)>(
      symbol("__tessel_mpi_init"));
  auto rank = reinterpret_cast<int32_t (*)()>(symbol("__tessel_mpi_rank"));
  artifact.mpiBroadcast =
      reinterpret_cast<void (*)(void *, int64_t)>(symbol("__tessel_mpi_bcast"));
  artifact.mpiMax =
      reinterpret_cast<double (*)(double)>(symbol("__tessel_mpi_max"));
  artifact.mpiAbort =
      reinterpret_cast<void (*)(int32_t)>(symbol("__tessel_mpi_abort"));
  char message[1024] = "";
  if (init(m.ranks, message, sizeof message) != 0)
    loadError(TESSEL_UNSUPPORTED, path, message);
  artifact.ranks = m.ranks;
  artifact.rank = rank();
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

ArtifactPtr load(const std::string &path,
                 const DeviceRequest &request = DeviceRequest()) {
  checkFile(path);
  ArtifactPtr artifact(new tessel_artifact, freeArtifact);
  artifact->privateFd = copyToMemfd(path, readSealed(path));
  // dlopen matches loaded libraries by name: were a library of an earlier
  // load under this fd's name still loaded (glibc may keep one loaded past
  // dlclose), this load would share its instance and import table. Such a
  // name is skipped by moving the copy to another descriptor.
  std::vector<int> skipped;
  while (isLoaded("/proc/self/fd/" + std::to_string(artifact->privateFd))) {
    skipped.push_back(artifact->privateFd);
    artifact->privateFd = ::fcntl(skipped.back(), F_DUPFD_CLOEXEC, 0);
    if (artifact->privateFd < 0 || skipped.size() > 64) {
      for (int fd : skipped)
        ::close(fd);
      loadError(TESSEL_IO_ERROR, path, "cannot find an unused descriptor "
                                       "name for the private copy");
    }
  }
  for (int fd : skipped)
    ::close(fd);
  std::string dlPath = "/proc/self/fd/" + std::to_string(artifact->privateFd);
  Handle handle = openLibrary(path, dlPath);

  ::dlerror();
  const char *manifest = static_cast<const char *>(
      ::dlsym(handle.get(), TESSEL_MANIFEST_SYMBOL));
  if (!manifest)
    loadError(TESSEL_INVALID_ARTIFACT, path,
              "not a Tessel artifact: the shared library does not export '" +
                  std::string(TESSEL_MANIFEST_SYMBOL) + "'");

  // dlsym also searches the library's dependencies: the manifest must be
  // this library's own.
  Dl_info owner;
  if (!::dladdr(manifest, &owner) || !owner.dli_fname ||
      std::string(owner.dli_fname) != dlPath)
    loadError(TESSEL_INVALID_ARTIFACT, path,
              "not a Tessel artifact: '" + std::string(TESSEL_MANIFEST_SYMBOL) +
                  "' is not defined by the library itself");
  Manifest m = parseManifest(manifest, "artifact " + quoted(path));
  std::vector<std::string> missing = missingCpuFeatures(m.requiredFeatures);
  if (!missing.empty()) {
    std::string list;
    for (const std::string &f : missing)
      list += (list.empty() ? "" : ", ") + f;
    loadError(TESSEL_UNSUPPORTED, path,
              "compiled for a CPU with features this one lacks: " + list +
                  " (recompile it with --mcpu=native, or for a CPU "
                  "this machine has)");
  }
  checkDeviceKind(m, request, path);
  if (!m.deviceKind.empty())
    checkDevice(*artifact, handle.get(), manifest, m, path, request);
  if (m.ranks > 1)
    checkRanks(*artifact, handle.get(), manifest, m, path);
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
    if (!sameLibrary(sym, manifest))
      fail(TESSEL_INVALID_ARTIFACT,
           "artifact " + quoted(path) + ": entry symbol '" + f.symbol +
               "' of function '" + f.name +
               "' is not defined by the artifact (it resolves to another "
               "library)");
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

ArtifactPtr detail::loadArtifact(const std::string &path) {
  return load(path);
}

extern "C" {

tessel_status_t *tessel_artifact_load(const char *path,
                                      tessel_artifact_t **out) {
  return guard([&] {
    if (!path || !out)
      fail(TESSEL_INVALID_ARGUMENT, "tessel_artifact_load: NULL argument");
    *out = load(path).release();
  });
}

tessel_status_t *tessel_artifact_load_on(const char *path, const char *device,
                                         tessel_artifact_t **out) {
  return guard([&] {
    if (!path || !out)
      fail(TESSEL_INVALID_ARGUMENT, "tessel_artifact_load_on: NULL argument");
    DeviceRequest request = parseDeviceRequest(device);
    *out = load(path, request).release();
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
const char *tessel_artifact_device(const tessel_artifact_t *a) {
  if (!a || a->deviceKind.empty())
    return "cpu";
  return a->deviceText.c_str();
}
int tessel_artifact_ranks(const tessel_artifact_t *a) {
  return a && a->ranks > 1 ? a->ranks : 1;
}
int tessel_artifact_rank(const tessel_artifact_t *a) {
  return a && a->ranks > 1 ? a->rank : 0;
}
double tessel_artifact_max_over_ranks(const tessel_artifact_t *a,
                                      double value) {
  return a && a->ranks > 1 && a->mpiMax ? a->mpiMax(value) : value;
}
void tessel_artifact_abort_ranks(const tessel_artifact_t *a, int code) {
  if (a && a->ranks > 1 && a->mpiAbort)
    a->mpiAbort(code);
}
void tessel_artifact_set_device_timing(tessel_artifact_t *a, int on) {
  if (a && a->deviceTiming)
    a->deviceTiming(on);
}
double tessel_artifact_last_kernel_ms(const tessel_artifact_t *a) {
  return a && a->lastKernelMs ? a->lastKernelMs() : -1.0;
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
const char *tessel_function_input_part(const tessel_function_t *fn,
                                       size_t index) {
  return fn && index < fn->info.inputs.size() &&
                 !fn->info.inputs[index].part.empty()
             ? fn->info.inputs[index].part.c_str()
             : nullptr;
}
const char *tessel_function_output_part(const tessel_function_t *fn,
                                        size_t index) {
  return fn && index < fn->info.outputs.size() &&
                 !fn->info.outputs[index].part.empty()
             ? fn->info.outputs[index].part.c_str()
             : nullptr;
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
