//===- Manifest.cpp - artifact manifest parser ----------------------------===//
//
// Strict on purpose: the manifest is machine-written by tessel-compile, so
// anything unexpected is a compiler/runtime mismatch worth reporting with its
// line number rather than guessing.
//
//===----------------------------------------------------------------------===//

#include "Manifest.h"
#include "Internal.h"
#include "tessel/Runtime/tessel_abi.h"

#include <set>
#include <sstream>

using namespace tessel::rt;
using namespace tessel::rt::detail;

namespace {

class Parser {
public:
  Parser(const std::string &source) : source_(source) {}

  Manifest parse(const std::string &text) {
    std::istringstream in(text);
    std::string line;
    ManifestFunction *open = nullptr;
    std::set<std::string> names;
    while (std::getline(in, line)) {
      ++lineNo_;
      if (!line.empty() && line.back() == '\r')
        line.pop_back();
      std::vector<std::string> tok = split(line);
      if (lineNo_ == 1) {
        parseHeader(tok, line);
        continue;
      }
      if (tok.empty())
        continue; // tolerate blank lines (e.g. a trailing newline)
      const std::string &kw = tok[0];
      if (kw == "target") {
        expectArgs(tok, 1, "target TRIPLE");
        if (open || !m_.functions.empty() || sawTarget_)
          error("'target' must appear once, before the first function");
        sawTarget_ = true;
        m_.target = tok[1];
      } else if (kw == "function") {
        expectArgs(tok, 2, "function NAME SYMBOL");
        if (open)
          error("'function' inside function '" + open->name +
                "' (missing 'end')");
        if (!names.insert(tok[1]).second)
          error("duplicate function '" + tok[1] + "'");
        m_.functions.push_back({tok[1], tok[2], {}, {}});
        open = &m_.functions.back();
      } else if (kw == "input" || kw == "output") {
        expectArgs(tok, 3, kw + " NAME DTYPE SHAPE");
        if (!open)
          error("'" + kw + "' outside a function");
        ManifestValue v{tok[1], parseDType(tok[2]), parseShape(tok[3])};
        (kw == "input" ? open->inputs : open->outputs).push_back(v);
      } else if (kw == "end") {
        expectArgs(tok, 0, "end");
        if (!open)
          error("'end' without 'function'");
        open = nullptr;
      } else {
        error("unknown record '" + kw + "'");
      }
    }
    if (lineNo_ == 0)
      fail(TESSEL_INVALID_ARTIFACT, source_ + ": manifest is empty");
    if (open)
      error("function '" + open->name + "' is not closed by 'end'");
    if (m_.functions.empty())
      error("manifest declares no functions");
    return m_;
  }

private:
  static std::vector<std::string> split(const std::string &line) {
    std::istringstream ls(line);
    std::vector<std::string> tok;
    for (std::string t; ls >> t;)
      tok.push_back(t);
    return tok;
  }

  [[noreturn]] void error(const std::string &msg) {
    fail(TESSEL_INVALID_ARTIFACT, source_ + ": malformed manifest, line " +
                                      std::to_string(lineNo_) + ": " + msg);
  }

  void expectArgs(const std::vector<std::string> &tok, size_t n,
                  const std::string &form) {
    if (tok.size() != n + 1)
      error("expected '" + form + "'");
  }

  void parseHeader(const std::vector<std::string> &tok,
                   const std::string &line) {
    if (tok.size() != 2 || tok[0] != TESSEL_MANIFEST_MAGIC)
      fail(TESSEL_INVALID_ARTIFACT,
           source_ + ": not a Tessel artifact manifest: line 1 is '" + line +
               "', expected 'tessel-artifact <version>'");
    const std::string &v = tok[1];
    if (v.empty() || v.size() > 9 ||
        v.find_first_not_of("0123456789") != std::string::npos ||
        std::stoul(v) == 0)
      error("invalid ABI version '" + v + "'");
    m_.version = uint32_t(std::stoul(v));
    if (m_.version > TESSEL_ABI_VERSION)
      fail(TESSEL_UNSUPPORTED,
           source_ + ": artifact ABI version " + v +
               " is newer than this runtime supports (version " +
               std::to_string(TESSEL_ABI_VERSION) +
               "); rebuild it with a matching tessel-compile or upgrade the "
               "runtime");
  }

  tessel_dtype_t parseDType(const std::string &s) {
    tessel_dtype_t d = tessel_dtype_from_name(s.c_str());
    if (d == TESSEL_DTYPE_INVALID || s == "bool")
      error("unknown dtype '" + s + "'");
    return d;
  }

  std::vector<int64_t> parseShape(const std::string &s) {
    if (s.size() < 2 || s.front() != '[' || s.back() != ']')
      error("shape '" + s + "' is not of the form [d0,d1,...]");
    std::vector<int64_t> dims;
    std::string body = s.substr(1, s.size() - 2);
    if (body.empty())
      return dims; // scalar
    std::istringstream bs(body);
    for (std::string d; std::getline(bs, d, ',');) {
      if (d == "?")
        fail(TESSEL_UNSUPPORTED,
             source_ + ": manifest line " + std::to_string(lineNo_) +
                 ": dynamic dimensions are not supported by ABI version 1 "
                 "(shape '" + s + "')");
      if (d.empty() || d.size() > 18 ||
          d.find_first_not_of("0123456789") != std::string::npos)
        error("invalid dimension '" + d + "' in shape '" + s + "'");
      dims.push_back(std::stoll(d));
    }
    if (body.back() == ',')
      error("invalid dimension '' in shape '" + s + "'");
    return dims;
  }

  const std::string &source_;
  size_t lineNo_ = 0;
  bool sawTarget_ = false;
  Manifest m_;
};

} // namespace

Manifest detail::parseManifest(const std::string &text,
                               const std::string &source) {
  return Parser(source).parse(text);
}
