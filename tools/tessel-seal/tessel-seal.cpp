//===- tessel-seal.cpp - seal a hand-written artifact ---------------------===//
//
//   tessel-seal LIB.so [--check]
//
// tessel-compile seals every artifact it links; the runtime refuses a
// library without a valid seal (include/tessel/Runtime/ArtifactSeal.h). A
// shared library that implements the artifact ABI by hand (a provider
// written in C, a test fixture) is sealed with this tool after linking.
// --check only verifies. Exit status: 0 done / valid, 1 error, 2 usage.
//
//===----------------------------------------------------------------------===//
#include "tessel/Runtime/ArtifactSeal.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

namespace {

int error(const std::string &msg) {
  std::fprintf(stderr, "tessel-seal: error: %s\n", msg.c_str());
  return 1;
}

bool readFile(const char *path, std::string &bytes, std::string &why) {
  std::FILE *f = std::fopen(path, "rb");
  if (!f) {
    why = std::strerror(errno);
    return false;
  }
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0)
    bytes.append(buf, n);
  bool bad = std::ferror(f);
  std::fclose(f);
  if (bad)
    why = "read failed";
  return !bad;
}

} // namespace

int main(int argc, char **argv) {
  bool checkOnly = argc == 3 && std::strcmp(argv[2], "--check") == 0;
  if (argc != 2 && !checkOnly) {
    std::fprintf(stderr, "usage: tessel-seal LIB.so [--check]\n");
    return 2;
  }
  const char *path = argv[1];
  std::string bytes, why;
  if (!readFile(path, bytes, why))
    return error(std::string("cannot read '") + path + "': " + why);
  if (bytes.size() < 4 || std::memcmp(bytes.data(), "\x7f" "ELF", 4) != 0)
    return error(std::string("'") + path + "' is not an ELF file");
  tessel::seal::Result r = tessel::seal::check(bytes.data(), bytes.size());
  if (checkOnly) {
    if (r == tessel::seal::Result::Ok) {
      std::printf("%s: sealed\n", path);
      return 0;
    }
    return error(std::string("'") + path + "': " +
                 (r == tessel::seal::Result::Missing ? "not sealed"
                                                     : "seal does not match"));
  }
  if (r == tessel::seal::Result::Ok)
    return 0; // sealing twice would make the old seal part of the payload
  std::FILE *f = std::fopen(path, "ab");
  if (!f)
    return error(std::string("cannot open '") + path +
                 "': " + std::strerror(errno));
  std::string seal = tessel::seal::make(bytes.data(), bytes.size());
  bool ok = std::fwrite(seal.data(), 1, seal.size(), f) == seal.size();
  ok = std::fclose(f) == 0 && ok;
  return ok ? 0 : error(std::string("cannot write '") + path + "'");
}
