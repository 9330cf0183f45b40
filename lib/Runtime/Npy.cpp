//===- Npy.cpp - NumPy .npy reader / writer -------------------------------===//
//
// Format: "\x93NUMPY", major, minor, header length (u16 for 1.x, u32 for
// 2.x/3.x, little-endian), then a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces and ending in '\n', then the raw data. The dict is parsed
// with a tiny literal parser instead of string searching so that odd but
// valid spacing/quoting from other writers still works.
//
//===----------------------------------------------------------------------===//

#include "tessel/Runtime/Npy.h"
#include "Internal.h"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

using namespace tessel::rt;
using namespace tessel::rt::detail;

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;

struct DescrEntry {
  const char *descr; // without the byte-order character
  DType dtype;
};
const DescrEntry kDescrs[] = {
    {"f4", TESSEL_DTYPE_F32}, {"f2", TESSEL_DTYPE_F16},
    {"f8", TESSEL_DTYPE_F64}, {"i8", TESSEL_DTYPE_I64},
    {"i4", TESSEL_DTYPE_I32}, {"i2", TESSEL_DTYPE_I16},
    {"i1", TESSEL_DTYPE_I8},  {"u1", TESSEL_DTYPE_U8},
    {"b1", TESSEL_DTYPE_I1},  {"u2", TESSEL_DTYPE_U16},
    {"u4", TESSEL_DTYPE_U32}, {"u8", TESSEL_DTYPE_U64},
};

/// Header fields we need; set by HeaderParser.
struct Header {
  std::string descr;
  bool fortranOrder = false;
  std::vector<int64_t> shape;
  bool hasDescr = false, hasFortran = false, hasShape = false;
};

/// Recursive-descent parser for the header's dict literal.
class HeaderParser {
public:
  HeaderParser(const std::string &text, const std::string &source)
      : s_(text), source_(source) {}

  Header parse() {
    expect('{');
    while (true) {
      skipSpace();
      if (peek() == '}')
        break;
      std::string key = parseString();
      expect(':');
      parseValue(key);
      skipSpace();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      expect('}');
      --pos_; // let the loop see the brace
    }
    if (!h_.hasDescr || !h_.hasFortran || !h_.hasShape)
      error("header lacks 'descr', 'fortran_order' or 'shape'");
    return h_;
  }

private:
  [[noreturn]] void error(const std::string &msg) {
    fail(TESSEL_INVALID_ARGUMENT,
         source_ + ": invalid .npy header: " + msg + " (header: " + s_ + ")");
  }
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void skipSpace() {
    while (pos_ < s_.size() && std::strchr(" \t\r\n", s_[pos_]))
      ++pos_;
  }
  void expect(char c) {
    skipSpace();
    if (peek() != c)
      error(std::string("expected '") + c + "' at offset " +
            std::to_string(pos_));
    ++pos_;
  }
  std::string parseString() {
    skipSpace();
    char q = peek();
    if (q != '\'' && q != '"')
      error("expected a quoted string at offset " + std::to_string(pos_));
    size_t end = s_.find(q, pos_ + 1);
    if (end == std::string::npos)
      error("unterminated string");
    std::string v = s_.substr(pos_ + 1, end - pos_ - 1);
    pos_ = end + 1;
    return v;
  }
  bool parseBool() {
    skipSpace();
    for (const char *word : {"True", "False"})
      if (s_.compare(pos_, std::strlen(word), word) == 0) {
        pos_ += std::strlen(word);
        return word[0] == 'T';
      }
    error("expected True or False at offset " + std::to_string(pos_));
  }
  std::vector<int64_t> parseTuple() {
    expect('(');
    std::vector<int64_t> dims;
    while (true) {
      skipSpace();
      if (peek() == ')')
        break;
      size_t start = pos_;
      while (std::isdigit(static_cast<unsigned char>(peek())))
        ++pos_;
      if (start == pos_ || pos_ - start > 18)
        error("invalid dimension in 'shape' at offset " +
              std::to_string(start));
      dims.push_back(std::stoll(s_.substr(start, pos_ - start)));
      skipSpace();
      if (peek() == ',')
        ++pos_;
      else if (peek() != ')')
        error("expected ',' or ')' in 'shape'");
    }
    ++pos_;
    return dims;
  }
  void parseValue(const std::string &key) {
    skipSpace();
    if (key == "descr") {
      if (peek() == '[')
        fail(TESSEL_UNSUPPORTED,
             source_ + ": unsupported .npy dtype: structured dtypes (descr "
                       "is a list) are not supported");
      h_.descr = parseString();
      h_.hasDescr = true;
    } else if (key == "fortran_order") {
      h_.fortranOrder = parseBool();
      h_.hasFortran = true;
    } else if (key == "shape") {
      h_.shape = parseTuple();
      h_.hasShape = true;
    } else {
      error("unexpected key '" + key + "'");
    }
  }

  const std::string &s_;
  const std::string &source_;
  size_t pos_ = 0;
  Header h_;
};

DType dtypeFromDescr(const std::string &descr, const std::string &source) {
  auto unsupported = [&](const std::string &why) {
    fail(TESSEL_UNSUPPORTED, source + ": unsupported .npy dtype descr '" +
                                 descr + "'" + why);
  };
  if (descr.size() < 2)
    unsupported("");
  char order = descr[0];
  if (order == '>')
    unsupported(": big-endian data is not supported");
  if (order != '<' && order != '|')
    unsupported(": expected a '<' or '|' byte-order prefix");
  for (const DescrEntry &e : kDescrs)
    if (descr.compare(1, std::string::npos, e.descr) == 0)
      return e.dtype;
  unsupported(" (supported: f4 f2 f8 i8 i4 i2 i1 u1 u2 u4 u8 b1)");
  return TESSEL_DTYPE_INVALID; // unreachable
}

std::string descrFor(DType dtype) {
  for (const DescrEntry &e : kDescrs)
    if (e.dtype == dtype)
      return std::string(tessel_dtype_size(dtype) == 1 ? "|" : "<") + e.descr;
  fail(TESSEL_UNSUPPORTED, std::string("dtype ") + tessel_dtype_name(dtype) +
                               " cannot be stored in a .npy file");
}

uint32_t readLE(const unsigned char *p, size_t n) {
  uint32_t v = 0;
  for (size_t i = 0; i < n; ++i)
    v |= uint32_t(p[i]) << (8 * i);
  return v;
}

} // namespace

namespace {
/// The data size a complete prefix + header declares.
size_t npyDataBytes(const std::string &prefixAndHeader,
                    const std::string &source) {
  size_t lenBytes = prefixAndHeader[6] == 1 ? 2 : 4;
  size_t prefix = kMagicLen + 2 + lenBytes;
  std::string text = prefixAndHeader.substr(prefix);
  Header h = HeaderParser(text, source).parse();
  DType dtype = dtypeFromDescr(h.descr, source);
  return checkedNumElements(h.shape, tessel_dtype_size(dtype)) *
         tessel_dtype_size(dtype);
}
} // namespace

Tensor tessel::rt::parseNpy(const void *data, size_t size,
                            const std::string &source) {
  const auto *p = static_cast<const unsigned char *>(data);
  if (size < kMagicLen || std::memcmp(p, kMagic, kMagicLen) != 0)
    fail(TESSEL_INVALID_ARGUMENT,
         source + ": not a .npy file (bad magic; expected \\x93NUMPY)");
  if (size < kMagicLen + 2)
    fail(TESSEL_IO_ERROR, source + ": truncated .npy header");
  unsigned major = p[6], minor = p[7];
  if (major < 1 || major > 3)
    fail(TESSEL_UNSUPPORTED, source + ": unsupported .npy format version " +
                                 std::to_string(major) + "." +
                                 std::to_string(minor));
  size_t lenBytes = major == 1 ? 2 : 4;
  size_t prefix = kMagicLen + 2 + lenBytes;
  if (size < prefix)
    fail(TESSEL_IO_ERROR, source + ": truncated .npy header");
  size_t headerLen = readLE(p + 8, lenBytes);
  if (size - prefix < headerLen)
    fail(TESSEL_IO_ERROR,
         source + ": truncated .npy header: declares " +
             std::to_string(headerLen) + " header bytes, file has only " +
             std::to_string(size - prefix));
  std::string text(reinterpret_cast<const char *>(p + prefix), headerLen);
  Header h = HeaderParser(text, source).parse();
  DType dtype = dtypeFromDescr(h.descr, source);
  if (h.fortranOrder)
    fail(TESSEL_UNSUPPORTED,
         source + ": Fortran-order (column-major) .npy files are not "
                  "supported; save a C-contiguous array "
                  "(numpy.ascontiguousarray)");

  size_t count = checkedNumElements(h.shape, tessel_dtype_size(dtype));
  size_t need = count * tessel_dtype_size(dtype);
  size_t have = size - prefix - headerLen;
  // Check before allocating: a corrupt shape must not trigger a huge malloc.
  if (have < need)
    fail(TESSEL_IO_ERROR,
         source + ": truncated .npy data: shape " + shapeString(h.shape) +
             " of " + h.descr + " needs " + std::to_string(need) +
             " bytes, file has " + std::to_string(have));
  Tensor t = allocateTensor(dtype, h.shape);
  if (need)
    std::memcpy(t.data(), p + prefix + headerLen, need);
  return t;
}

namespace {
/// Appends up to `n` bytes of `f` to `bytes`; false at end of file.
bool readSome(std::FILE *f, size_t n, std::string &bytes) {
  size_t old = bytes.size();
  bytes.resize(old + n);
  size_t got = std::fread(bytes.data() + old, 1, n, f);
  bytes.resize(old + got);
  return got == n;
}
} // namespace

Tensor tessel::rt::readNpy(const std::string &path) {
  // stdio rather than iostreams: errno is reliable, so "No such file" and
  // "Permission denied" reach the user.
  std::FILE *f = std::fopen(path.c_str(), "rb");
  if (!f) {
    int err = errno;
    fail(err == ENOENT ? TESSEL_NOT_FOUND : TESSEL_IO_ERROR,
         "cannot open '" + path + "': " + std::strerror(err));
  }
  std::unique_ptr<std::FILE, int (*)(std::FILE *)> guard(f, std::fclose);
  std::string source = "'" + path + "'";
  // Read only what the header declares, checking the magic first: a
  // device or pipe (/dev/zero) or a large file of something else is never
  // read whole.
  std::string bytes;
  readSome(f, kMagicLen + 2, bytes);
  if (bytes.size() < kMagicLen || std::memcmp(bytes.data(), kMagic, kMagicLen))
    return parseNpy(bytes.data(), bytes.size(), source); // bad magic
  if (bytes.size() == kMagicLen + 2) {
    size_t lenBytes = bytes[6] == 1 ? 2 : 4;
    readSome(f, lenBytes, bytes);
    if (bytes.size() == kMagicLen + 2 + lenBytes) {
      size_t headerLen = readLE(
          reinterpret_cast<const unsigned char *>(bytes.data()) + 8, lenBytes);
      // Real headers are a few hundred bytes; a huge length is corruption.
      if (headerLen > (size_t(1) << 20))
        fail(TESSEL_INVALID_ARGUMENT,
             source + ": .npy header length " + std::to_string(headerLen) +
                 " is implausibly large (corrupt file?)");
      if (readSome(f, headerLen, bytes)) {
        size_t need = npyDataBytes(bytes, source);
        readSome(f, need, bytes);
      }
    }
  }
  if (std::ferror(f))
    fail(TESSEL_IO_ERROR, "cannot read '" + path + "'");
  return parseNpy(bytes.data(), bytes.size(), source);
}

namespace {
std::string serialize(const tessel_tensor &t) {
  std::string shape = "(";
  for (int64_t d : t.dims)
    shape += std::to_string(d) + ", ";
  if (t.dims.size() == 1)
    shape.resize(shape.size() - 1); // "(3,)", Python's 1-tuple
  else if (t.dims.size() > 1)
    shape.resize(shape.size() - 2);
  shape += ")";
  std::string dict = "{'descr': '" + descrFor(t.dtype) +
                     "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Version 1.0 stores the header length in 16 bits; only absurd ranks need
  // 2.0.
  bool v1 = dict.size() + 64 <= 65535;
  size_t prefix = v1 ? 10 : 12;
  // Pad so the data starts at a multiple of 64 bytes, as numpy does.
  size_t total = (prefix + dict.size() + 1 + 63) / 64 * 64;
  dict.append(total - prefix - dict.size() - 1, ' ');
  dict += '\n';

  std::string out(kMagic, kMagicLen);
  out += char(v1 ? 1 : 2);
  out += char(0);
  for (size_t i = 0; i < prefix - 8; ++i)
    out += char((dict.size() >> (8 * i)) & 0xff);
  out += dict;
  out.append(static_cast<const char *>(t.data), t.byteSize);
  return out;
}

void write(const std::string &path, const tessel_tensor &t) {
  std::string bytes = serialize(t);
  std::FILE *f = std::fopen(path.c_str(), "wb");
  if (!f)
    fail(TESSEL_IO_ERROR,
         "cannot write '" + path + "': " + std::strerror(errno));
  bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  ok = std::fclose(f) == 0 && ok;
  if (!ok)
    fail(TESSEL_IO_ERROR, "cannot write '" + path + "': write failed");
}
} // namespace

std::string tessel::rt::serializeNpy(const Tensor &tensor) {
  if (!tensor)
    fail(TESSEL_INVALID_ARGUMENT, "cannot serialize a NULL tensor");
  return serialize(*tensor.get());
}

void tessel::rt::writeNpy(const std::string &path, const Tensor &tensor) {
  if (!tensor)
    fail(TESSEL_INVALID_ARGUMENT, "cannot write a NULL tensor");
  write(path, *tensor.get());
}

extern "C" {

tessel_status_t *tessel_npy_read(const char *path, tessel_tensor_t **out) {
  return guard([&] {
    if (!path || !out)
      fail(TESSEL_INVALID_ARGUMENT, "tessel_npy_read: NULL argument");
    *out = readNpy(path).release();
  });
}

tessel_status_t *tessel_npy_write(const char *path,
                                  const tessel_tensor_t *tensor) {
  return guard([&] {
    if (!path || !tensor)
      fail(TESSEL_INVALID_ARGUMENT, "tessel_npy_write: NULL argument");
    write(path, *tensor);
  });
}

} // extern "C"
