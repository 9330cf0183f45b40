//===- Linker.cpp - Link an object into the shared-library artifact --------===//
//
// There is no lld in Debian's LLVM packages that Tessel depends on, so the
// artifact is linked by the system compiler driver, which knows the host's
// crt files and library paths.
//
//===----------------------------------------------------------------------===//
#include "Linker.h"

#include "tessel/Runtime/ArtifactSeal.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

static Expected<std::string> findLinker() {
  if (std::optional<std::string> env = sys::Process::GetEnv("TESSEL_LINKER")) {
    if (ErrorOr<std::string> p = sys::findProgramByName(*env))
      return *p;
    return createStringError(inconvertibleErrorCode(),
                             "TESSEL_LINKER='" + *env + "' was not found");
  }
  for (const char *name : {"cc", "clang-22", "clang", "gcc"})
    if (ErrorOr<std::string> p = sys::findProgramByName(name))
      return *p;
  return createStringError(inconvertibleErrorCode(),
                           "no linker found: install a C compiler (cc) or "
                           "set TESSEL_LINKER");
}

Error mlir::tessel::linkSharedLibrary(ArrayRef<std::string> objects,
                                      ArrayRef<std::string> archives,
                                      StringRef outputPath) {
  Expected<std::string> linker = findLinker();
  if (!linker)
    return linker.takeError();
  SmallString<128> logPath;
  if (std::error_code ec =
          sys::fs::createTemporaryFile("tessel-link", "log", logPath))
    return createStringError(ec, "cannot create a temporary file");
  std::string out = outputPath.str();
  SmallVector<StringRef> args = {*linker, "-shared", "-o", out};
  for (const std::string &o : objects)
    args.push_back(o);
  for (const std::string &a : archives)
    args.push_back(a);
  args.append({"-lm", "-lpthread", "-Wl,-z,noexecstack"});
#ifndef TESSEL_SANITIZED_BUILD
  // An unresolved symbol is a compiler bug: fail here, not at dlopen. (A
  // sanitizer build's kernel archives are instrumented: their __asan_* and
  // __ubsan_* calls resolve against the loading process's sanitizer
  // runtime, as every instrumented shared library's do.)
  args.push_back("-Wl,-z,defs");
#endif
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(logPath),
                                          StringRef(logPath)};
  std::string errMsg;
  int rc = sys::ExecuteAndWait(*linker, args, std::nullopt, redirects, 0, 0,
                               &errMsg);
  std::string log;
  if (auto buf = MemoryBuffer::getFile(logPath))
    log = (*buf)->getBuffer().str();
  sys::fs::remove(logPath);
  if (rc != 0)
    return createStringError(inconvertibleErrorCode(),
                             "linking '" + out + "' with " + *linker +
                                 " failed" +
                                 (errMsg.empty() ? "" : ": " + errMsg) +
                                 (log.empty() ? "" : "\n" + log));
  return sealArtifact(outputPath);
}

Error mlir::tessel::sealArtifact(StringRef path) {
  // Read in chunks, not mapped whole: a mapped file's pages count as the
  // compiler's memory, and a large model's artifact is as large as its
  // weights.
  Expected<sys::fs::file_t> file = sys::fs::openNativeFileForRead(path);
  if (!file)
    return createStringError(errorToErrorCode(file.takeError()),
                             "cannot read '" + path + "' to seal it");
  ::tessel::seal::Xxh64Stream hash;
  std::vector<char> chunk(1 << 20);
  for (;;) {
    Expected<size_t> n = sys::fs::readNativeFile(
        *file, MutableArrayRef<char>(chunk.data(), chunk.size()));
    if (!n) {
      sys::fs::closeFile(*file);
      return createStringError(errorToErrorCode(n.takeError()),
                               "cannot read '" + path + "' to seal it");
    }
    if (*n == 0)
      break;
    hash.update(chunk.data(), *n);
  }
  sys::fs::closeFile(*file);
  std::string seal = ::tessel::seal::make(hash.size(), hash.digest());
  std::error_code ec;
  raw_fd_ostream os(path, ec, sys::fs::OF_Append);
  if (!ec) {
    os << seal;
    os.close();
    ec = os.error();
  }
  if (ec)
    return createStringError(ec, "cannot seal '" + path + "': " +
                                     ec.message());
  return Error::success();
}
