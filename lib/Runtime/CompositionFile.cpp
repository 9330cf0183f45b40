//===- CompositionFile.cpp - composition file parser ----------------------===//
//
// Hand-written by users, unlike the manifest, but just as strict: a typo in
// a keyword or a second `entry` is reported with its line rather than
// silently changing which artifacts make up the model.
//
//===----------------------------------------------------------------------===//

#include "CompositionFile.h"
#include "Internal.h"

#include <set>
#include <sstream>

using namespace tessel::rt;
using namespace tessel::rt::detail;

namespace {

std::string trim(const std::string &s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos)
    return "";
  size_t e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

} // namespace

CompositionFile detail::parseCompositionFile(const std::string &text,
                                             const std::string &source) {
  CompositionFile file;
  std::istringstream in(text);
  std::string raw;
  size_t lineNo = 0;
  auto error = [&](const std::string &msg) {
    fail(TESSEL_INVALID_ARGUMENT,
         source + ", line " + std::to_string(lineNo) + ": " + msg);
  };
  std::set<std::string> paths;
  bool sawEntry = false;
  while (std::getline(in, raw)) {
    ++lineNo;
    if (!raw.empty() && raw.back() == '\r')
      raw.pop_back();
    if (raw.find('\0') != std::string::npos)
      error("contains a NUL byte (not a text file?)");
    std::string line = trim(raw);
    if (lineNo == 1) {
      std::istringstream ls(line);
      std::string magic, version, extra;
      ls >> magic >> version >> extra;
      if (magic != kCompositionMagic || version.empty() || !extra.empty())
        error("not a composition file: expected '" +
              std::string(kCompositionMagic) + " " +
              std::to_string(kCompositionVersion) + "', got '" + line + "'");
      if (version.find_first_not_of("0123456789") != std::string::npos ||
          version.size() > 9 || std::stoul(version) == 0)
        error("invalid version '" + version + "'");
      if (std::stoul(version) > kCompositionVersion)
        fail(TESSEL_UNSUPPORTED,
             source + ", line 1: composition version " + version +
                 " is newer than this runtime supports (version " +
                 std::to_string(kCompositionVersion) + ")");
      continue;
    }
    if (line.empty() || line[0] == '#')
      continue;
    size_t space = line.find_first_of(" \t");
    std::string keyword = line.substr(0, space);
    std::string arg = space == std::string::npos ? "" : trim(line.substr(space));
    if (keyword == "artifact") {
      if (arg.empty())
        error("expected 'artifact PATH'");
      if (!paths.insert(arg).second)
        error("artifact '" + arg + "' is listed twice");
      file.artifacts.push_back({arg, lineNo});
    } else if (keyword == "entry") {
      if (arg.empty() || arg.find_first_of(" \t") != std::string::npos)
        error("expected 'entry NAME'");
      if (sawEntry)
        error("'entry' given twice");
      sawEntry = true;
      file.entry = arg;
    } else {
      error("unknown record '" + keyword +
            "' (expected 'artifact PATH', 'entry NAME' or a '#' comment)");
    }
  }
  if (lineNo == 0)
    fail(TESSEL_INVALID_ARGUMENT, source + ": the file is empty");
  if (file.artifacts.empty())
    fail(TESSEL_INVALID_ARGUMENT, source + ": lists no artifacts");
  return file;
}

std::string detail::resolveAgainst(const std::string &file,
                                   const std::string &path) {
  if (!path.empty() && path[0] == '/')
    return path;
  size_t slash = file.find_last_of('/');
  if (slash == std::string::npos)
    return path;
  return file.substr(0, slash + 1) + path;
}
