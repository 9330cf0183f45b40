//===- Manifest.cpp - artifact manifest parser ----------------------------===//
//
// Strict on purpose: the manifest is machine-written by tessel-compile, so
// anything unexpected is a compiler/runtime mismatch worth reporting with its
// line number rather than guessing.
//
//===----------------------------------------------------------------------===//

#include "Manifest.h"
#include "CpuFeatures.h"
#include "Internal.h"
#include "tessel/Runtime/tessel_abi.h"

#include <algorithm>
#include <cctype>
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
    bool openIsImport = false;
    std::set<std::string> names, importNames;
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
        if (open || !m_.functions.empty() || !m_.imports.empty() || sawTarget_)
          error("'target' must appear once, before the first function");
        sawTarget_ = true;
        m_.target = tok[1];
      } else if (kw == "requires") {
        if (m_.version < 4)
          error("'requires' records need ABI version 4 (the manifest says " +
                std::to_string(m_.version) + ")");
        if (tok.size() < 2)
          error("expected 'requires FEATURE...'");
        if (!sawTarget_ || open || !m_.functions.empty() ||
            !m_.imports.empty() || sawRequires_)
          error("'requires' must appear once, after 'target' and before "
                "the first function");
        sawRequires_ = true;
        for (size_t i = 1; i < tok.size(); ++i) {
          if (!isKnownCpuFeature(tok[i]))
            error("unknown CPU feature '" + tok[i] +
                  "' (the artifact is newer than this runtime?)");
          m_.requiredFeatures.push_back(tok[i]);
        }
      } else if (kw == "device") {
        if (m_.version < 5)
          error("'device' records need ABI version 5 (the manifest says " +
                std::to_string(m_.version) + ")");
        expectArgs(tok, 2, "device KIND ARCH");
        if (!sawTarget_ || open || !m_.functions.empty() ||
            !m_.imports.empty() || !m_.deviceKind.empty())
          error("'device' must appear once, after 'target' and before the "
                "first function");
        if (tok[1] != "cuda")
          error("unknown device kind '" + tok[1] +
                "' (the artifact is newer than this runtime?)");
        m_.deviceKind = tok[1];
        m_.deviceArch = tok[2];
      } else if (kw == "ranks") {
        if (m_.version < 8)
          error("'ranks' records need ABI version 8 (the manifest says " +
                std::to_string(m_.version) + ")");
        expectArgs(tok, 1, "ranks N");
        if (!sawTarget_ || open || !m_.functions.empty() ||
            !m_.imports.empty() || m_.ranks != 0)
          error("'ranks' must appear once, after 'target' and before the "
                "first function");
        const std::string &n = tok[1];
        if (n.empty() || n.size() > 7 ||
            n.find_first_not_of("0123456789") != std::string::npos ||
            std::stoll(n) < 2)
          error("'ranks' needs a process count of 2 or more, got '" + n + "'");
        m_.ranks = static_cast<int>(std::stoll(n));
      } else if (kw == "function") {
        expectArgs(tok, 2, "function NAME SYMBOL");
        if (open)
          error("'function' inside '" + open->name + "' (missing 'end')");
        if (!names.insert(tok[1]).second)
          error("duplicate function '" + tok[1] + "'");
        if (importNames.count(tok[1]))
          error("function '" + tok[1] + "' is also an import");
        m_.functions.push_back({tok[1], tok[2], {}, {}, {}});
        open = &m_.functions.back();
        openIsImport = false;
      } else if (kw == "import") {
        requireVersion2(kw);
        expectArgs(tok, 2, "import NAME SLOT");
        if (open)
          error("'import' inside '" + open->name + "' (missing 'end')");
        if (!m_.functions.empty())
          error("'import' after a function: imports come first");
        if (!importNames.insert(tok[1]).second)
          error("duplicate import '" + tok[1] + "'");
        if (tok[2] != std::to_string(m_.imports.size()))
          error("import '" + tok[1] + "' has slot '" + tok[2] +
                "', expected " + std::to_string(m_.imports.size()) +
                " (slots are numbered in order)");
        m_.imports.push_back({tok[1], "", {}, {}, {}});
        open = &m_.imports.back();
        openIsImport = true;
      } else if (kw == "input" || kw == "output") {
        if (tok.size() < 4 || tok.size() > 6)
          error("expected '" + kw + " NAME DTYPE SHAPE [vocab=V] "
                "[part=ROLE:OWNER]'");
        if (!open)
          error("'" + kw + "' outside a function");
        ManifestValue v;
        v.name = tok[1];
        v.dtype = parseDType(tok[2]);
        parseShape(tok[3], v);
        if (hasRunTimeDim(v) && (kw == "input" || openIsImport))
          error(kw + " '" + v.name + "' has a run-time dimension '?' in " +
                tok[3] + ": only an entry point's outputs have them");
        for (size_t t = 4; t < tok.size(); ++t) {
          if (tok[t].compare(0, 5, "part=") == 0 && v.part.empty())
            v.part = parsePart(tok[t], v);
          else if (t == 4)
            v.vocab = parseVocab(tok[t], v);
          else
            error("unexpected '" + tok[t] + "' after the shape of '" +
                  v.name + "'");
        }
        (kw == "input" ? open->inputs : open->outputs).push_back(v);
      } else if (kw == "uses") {
        requireVersion2(kw);
        expectArgs(tok, 1, "uses IMPORT");
        if (!open || openIsImport)
          error("'uses' outside a function");
        size_t slot = 0;
        while (slot < m_.imports.size() && m_.imports[slot].name != tok[1])
          ++slot;
        if (slot == m_.imports.size())
          error("function '" + open->name + "' uses '" + tok[1] +
                "', which no 'import' record declares");
        for (size_t used : open->uses)
          if (used == slot)
            error("function '" + open->name + "' uses '" + tok[1] +
                  "' twice");
        open->uses.push_back(slot);
      } else if (kw == "end") {
        expectArgs(tok, 0, "end");
        if (!open)
          error("'end' without 'function'");
        if (open->outputs.empty() && openIsImport)
          error("import '" + open->name + "' has no outputs");
        bindDimensions(*open);
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

  /// Imports and vocabularies came with version 2; in a version 1
  /// manifest they are a mismatch between writer and header.
  void requireVersion2(const std::string &what) {
    if (m_.version < 2)
      error("'" + what + "' records need ABI version 2 (the manifest says " +
            std::to_string(m_.version) + ")");
  }

  int64_t parseVocab(const std::string &s, const ManifestValue &v) {
    requireVersion2("vocab=");
    const std::string prefix = "vocab=";
    std::string n = s.compare(0, prefix.size(), prefix) == 0
                        ? s.substr(prefix.size())
                        : std::string();
    if (n.empty() || n.size() > 10 ||
        n.find_first_not_of("0123456789") != std::string::npos ||
        std::stoll(n) < 1 || std::stoll(n) > (int64_t(1) << 31))
      error("expected 'vocab=V' with V in [1, 2^31], got '" + s + "'");
    if (v.dtype != TESSEL_DTYPE_I32)
      error("'" + v.name + "' has a vocabulary but dtype " +
            tessel_dtype_name(v.dtype) + "; symbol ids are i32");
    return std::stoll(n);
  }

  /// "part=ROLE:OWNER" (version 7): ROLE is sizes or data (a sequence
  /// packed as its elements' sizes [count, rank] and their elements, one
  /// after another), present (an optional's flag) or value (an optional's
  /// tensor).
  std::string parsePart(const std::string &s, const ManifestValue &v) {
    if (m_.version < 7)
      error("'part=' needs ABI version 7 (the manifest says " +
            std::to_string(m_.version) + ")");
    std::string body = s.substr(5);
    size_t colon = body.find(':');
    std::string role = colon == std::string::npos ? "" : body.substr(0, colon);
    if ((role != "sizes" && role != "data" && role != "present" &&
         role != "value") ||
        colon + 1 >= body.size())
      error("expected 'part=ROLE:OWNER' with ROLE sizes, data, present or "
            "value, got '" + s + "'");
    if ((role == "sizes" && (v.dtype != TESSEL_DTYPE_I64 || v.dims.size() != 2)) ||
        (role == "data" && v.dims.size() != 1) ||
        (role == "present" && (v.dtype != TESSEL_DTYPE_I1 || !v.dims.empty())))
      error("'" + v.name + "' cannot be the " + role + " of '" +
            body.substr(colon + 1) + "' (sizes are i64 [count,rank], data is "
            "1-D, present is an i1 scalar)");
    return body;
  }

  tessel_dtype_t parseDType(const std::string &s) {
    tessel_dtype_t d = tessel_dtype_from_name(s.c_str());
    if (d == TESSEL_DTYPE_INVALID || s == "bool")
      error("unknown dtype '" + s + "'");
    return d;
  }

  /// "[4,T,256]": static sizes, or (version 3) names of dimensions.
  void parseShape(const std::string &s, ManifestValue &v) {
    if (s.size() < 2 || s.front() != '[' || s.back() != ']')
      error("shape '" + s + "' is not of the form [d0,d1,...]");
    std::string body = s.substr(1, s.size() - 2);
    if (body.empty())
      return; // scalar
    std::istringstream bs(body);
    for (std::string d; std::getline(bs, d, ',');) {
      if (d == "?") {
        // A run-time dimension (version 6): only outputs have them
        // (checked by the caller, which knows the record).
        if (m_.version < 6)
          error("run-time dimension '?' in shape '" + s +
                "' needs ABI version 6 (the manifest says " +
                std::to_string(m_.version) + ")");
        v.dims.push_back(-1);
        v.dimNames.push_back(d);
        continue;
      }
      bool number = !d.empty() && d.size() <= 18 &&
                    d.find_first_not_of("0123456789") == std::string::npos;
      bool name = !d.empty() && !std::isdigit((unsigned char)d[0]) &&
                  d.find_first_not_of("abcdefghijklmnopqrstuvwxyz"
                                      "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                      "0123456789_") == std::string::npos;
      if (name && m_.version < 3)
        error("named dimension '" + d + "' in shape '" + s +
              "' needs ABI version 3 (the manifest says " +
              std::to_string(m_.version) + ")");
      if (!number && !name)
        error("invalid dimension '" + d + "' in shape '" + s + "'");
      v.dims.push_back(number ? std::stoll(d) : -1);
      v.dimNames.push_back(number ? std::string() : d);
    }
    if (body.back() == ',')
      error("invalid dimension '' in shape '" + s + "'");
  }

  /// The order of `f`'s named dimensions; an output may only use names its
  /// inputs bind.
  void bindDimensions(ManifestFunction &f) {
    for (const ManifestValue &v : f.inputs)
      for (const std::string &n : v.dimNames)
        if (!n.empty() &&
            std::find(f.dimOrder.begin(), f.dimOrder.end(), n) ==
                f.dimOrder.end())
          f.dimOrder.push_back(n);
    for (const ManifestValue &v : f.outputs)
      for (const std::string &n : v.dimNames)
        if (!n.empty() && n != "?" && std::find(f.dimOrder.begin(), f.dimOrder.end(),
                                    n) == f.dimOrder.end())
          error("output '" + v.name + "' of '" + f.name +
                "' has the dimension '" + n +
                "', which no input has: its size would be unknown");
  }

  const std::string &source_;
  size_t lineNo_ = 0;
  bool sawTarget_ = false;
  bool sawRequires_ = false;
  Manifest m_;
};

} // namespace

Manifest detail::parseManifest(const std::string &text,
                               const std::string &source) {
  return Parser(source).parse(text);
}

std::string detail::shapeString(const ManifestValue &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.dims.size(); ++i)
    s += (i ? "," : "") + (v.dimNames[i].empty() ? std::to_string(v.dims[i])
                                                 : v.dimNames[i]);
  return s + "]";
}

void detail::fillDimNamePointers(ManifestFunction &f) {
  for (auto *values : {&f.inputs, &f.outputs})
    for (ManifestValue &v : *values) {
      v.dimNamePtrs.clear();
      for (const std::string &n : v.dimNames)
        v.dimNamePtrs.push_back(n.empty() ? nullptr : n.c_str());
    }
}
