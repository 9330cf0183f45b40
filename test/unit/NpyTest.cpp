//===- NpyTest.cpp - .npy reading and writing -----------------------------===//
//
// Fixtures are built byte by byte here (no binary files in the repository);
// numpy interop is covered by numpy_interop.py when numpy is available.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "tessel/Runtime/Npy.h"

#include <cstring>

using namespace tessel;
using namespace tessel::test;
using rt::Tensor;

namespace {

/// An .npy image with the given version and header dict (padded with
/// spaces to a 64-byte boundary like numpy does) followed by `data`.
std::string npyImage(int major, const std::string &dict,
                     const std::string &data) {
  size_t prefix = major == 1 ? 10 : 12;
  std::string header = dict;
  while ((prefix + header.size() + 1) % 64)
    header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += char(major);
  out += char(0);
  for (size_t i = 0; i < prefix - 8; ++i)
    out += char((header.size() >> (8 * i)) & 0xff);
  return out + header + data;
}

std::string floatBytes(std::initializer_list<float> values) {
  std::string s;
  for (float v : values)
    s.append(reinterpret_cast<const char *>(&v), 4);
  return s;
}

Tensor parse(const std::string &bytes) {
  return rt::parseNpy(bytes.data(), bytes.size(), "buf");
}

/// Fills `t` with a recognisable byte pattern valid for every dtype.
void fillPattern(Tensor &t) {
  auto *p = t.data<uint8_t>();
  for (size_t i = 0; i < t.byteSize(); ++i)
    p[i] = uint8_t(t.dtype() == TESSEL_DTYPE_I1 ? (i * 7) % 2 : i * 37 + 1);
}

TEST(Npy, RoundTripsEveryDType) {
  const tessel_dtype_t dtypes[] = {
      TESSEL_DTYPE_F32, TESSEL_DTYPE_F16, TESSEL_DTYPE_F64, TESSEL_DTYPE_I64,
      TESSEL_DTYPE_I32, TESSEL_DTYPE_I16, TESSEL_DTYPE_I8,  TESSEL_DTYPE_U8,
      TESSEL_DTYPE_I1,  TESSEL_DTYPE_U16, TESSEL_DTYPE_U32, TESSEL_DTYPE_U64};
  const std::vector<std::vector<int64_t>> shapes = {{}, {5}, {2, 3}, {2, 0, 3},
                                                    {1, 2, 3, 4}};
  for (tessel_dtype_t dtype : dtypes) {
    for (const auto &shape : shapes) {
      SCOPED_TRACE(rt::shapeTypeString(dtype, shape));
      Tensor t = Tensor::allocate(dtype, shape);
      fillPattern(t);
      std::string path = tmpPath(rt::shapeTypeString(dtype, shape) + ".npy");
      rt::writeNpy(path, t);
      Tensor back = rt::readNpy(path);
      EXPECT_EQ(back.dtype(), dtype);
      EXPECT_EQ(back.dims(), shape);
      ASSERT_EQ(back.byteSize(), t.byteSize());
      EXPECT_EQ(std::memcmp(back.data(), t.data(), t.byteSize()), 0);
    }
  }
}

TEST(Npy, WritesVersion1WithAlignedData) {
  Tensor t = Tensor::allocate(TESSEL_DTYPE_F32, {3});
  std::string bytes = rt::serializeNpy(t);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  size_t headerLen = uint8_t(bytes[8]) | uint8_t(bytes[9]) << 8;
  EXPECT_EQ((10 + headerLen) % 64, 0u);
  EXPECT_EQ(bytes.size(), 10 + headerLen + 12);
  std::string header = bytes.substr(10, headerLen);
  EXPECT_EQ(header.find("{'descr': '<f4', 'fortran_order': False, "
                        "'shape': (3,), }"),
            0u);
  EXPECT_EQ(header.back(), '\n');
}

TEST(Npy, ReadsVersions123AndOddSpacing) {
  std::string data = floatBytes({1, 2, 3, 4, 5, 6});
  const std::string dicts[] = {
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
      "{\"descr\":\"<f4\",\"fortran_order\":False,\"shape\":(2,3)}",
      "{'shape': (2,3), 'fortran_order': False, 'descr': '<f4'}",
  };
  for (int major : {1, 2, 3})
    for (const std::string &dict : dicts) {
      SCOPED_TRACE(std::to_string(major) + " " + dict);
      Tensor t = parse(npyImage(major, dict, data));
      EXPECT_EQ(t.dims(), (std::vector<int64_t>{2, 3}));
      EXPECT_EQ(t.data<float>()[5], 6.0f);
    }
}

TEST(Npy, ReadsByteTypesWithPipeOrder) {
  Tensor b = parse(npyImage(
      1, "{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }",
      std::string("\x01\x00", 2)));
  EXPECT_EQ(b.dtype(), TESSEL_DTYPE_I1);
  EXPECT_EQ(b.data<uint8_t>()[0], 1);
  Tensor u = parse(npyImage(
      1, "{'descr': '|u1', 'fortran_order': False, 'shape': (), }", "\xff"));
  EXPECT_EQ(u.dtype(), TESSEL_DTYPE_U8);
  EXPECT_EQ(u.rank(), 0u);
  EXPECT_EQ(u.data<uint8_t>()[0], 255);
}

TEST(Npy, ErrorTruncatedHeader) {
  std::string image = npyImage(
      1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }",
      floatBytes({1}));
  expectError([&] { parse(image.substr(0, 40)); }, TESSEL_IO_ERROR,
              {"buf: truncated .npy header", "declares 118 header bytes"});
  expectError([&] { parse(image.substr(0, 9)); }, TESSEL_IO_ERROR,
              {"truncated .npy header"});
}

TEST(Npy, ErrorTruncatedData) {
  std::string image = npyImage(
      1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
      floatBytes({1, 2, 3, 4, 5, 6}));
  std::string path = tmpPath("npy");
  writeFile(path, image.substr(0, image.size() - 3));
  expectError([&] { rt::readNpy(path); }, TESSEL_IO_ERROR,
              {path, "truncated .npy data", "needs 24 bytes, file has 21"});
}

TEST(Npy, ErrorHugeShapeIsTruncationNotAllocation) {
  std::string image = npyImage(
      1,
      "{'descr': '<f8', 'fortran_order': False, 'shape': (100000, 100000, "
      "100000), }",
      "");
  expectError([&] { parse(image); }, TESSEL_IO_ERROR, {"truncated .npy data"});
}

TEST(Npy, ErrorBadMagic) {
  expectError([] { parse("PK\x03\x04 this is a zip"); },
              TESSEL_INVALID_ARGUMENT, {"buf: not a .npy file (bad magic"});
  expectError([] { parse(""); }, TESSEL_INVALID_ARGUMENT, {"bad magic"});
}

TEST(Npy, ErrorFortranOrder) {
  expectError(
      [] {
        parse(npyImage(
            1, "{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }",
            floatBytes({1})));
      },
      TESSEL_UNSUPPORTED, {"Fortran-order"});
}

TEST(Npy, ErrorUnsupportedDescr) {
  auto image = [](const std::string &descr) {
    return npyImage(1,
                    "{'descr': '" + descr +
                        "', 'fortran_order': False, 'shape': (1,), }",
                    std::string(16, '\0'));
  };
  expectError([&] { parse(image("<c8")); }, TESSEL_UNSUPPORTED,
              {"unsupported .npy dtype descr '<c8'"});
  expectError([&] { parse(image(">f4")); }, TESSEL_UNSUPPORTED,
              {"'>f4'", "big-endian"});
  expectError([&] { parse(image("<U3")); }, TESSEL_UNSUPPORTED, {"'<U3'"});
  expectError(
      [] {
        parse(npyImage(1,
                       "{'descr': [('a', '<f4')], 'fortran_order': False, "
                       "'shape': (1,), }",
                       floatBytes({1})));
      },
      TESSEL_UNSUPPORTED, {"structured dtypes"});
}

TEST(Npy, ErrorUnsupportedVersionAndMalformedDict) {
  std::string v4 = npyImage(1, "{}", "");
  v4[6] = 4;
  expectError([&] { parse(v4); }, TESSEL_UNSUPPORTED,
              {"unsupported .npy format version 4.0"});
  expectError([] { parse(npyImage(1, "{'descr': '<f4'}", "")); },
              TESSEL_INVALID_ARGUMENT, {"invalid .npy header"});
  expectError(
      [] {
        parse(npyImage(1, "{'descr': '<f4', 'fortran_order': False, "
                          "'shape': (a,)}",
                       ""));
      },
      TESSEL_INVALID_ARGUMENT, {"invalid dimension"});
}

TEST(Npy, ErrorMissingFile) {
  expectError([] { rt::readNpy("/nonexistent/x.npy"); }, TESSEL_NOT_FOUND,
              {"cannot open '/nonexistent/x.npy'", "No such file"});
}

TEST(Npy, ErrorWritingBf16) {
  Tensor t = Tensor::allocate(TESSEL_DTYPE_BF16, {2});
  expectError([&] { rt::serializeNpy(t); }, TESSEL_UNSUPPORTED,
              {"bf16 cannot be stored in a .npy file"});
}

TEST(Npy, CApi) {
  std::string path = tmpPath("npy");
  tessel_tensor_t *t = nullptr;
  int64_t dims[] = {2};
  ASSERT_EQ(tessel_tensor_allocate(TESSEL_DTYPE_I64, 1, dims, &t), nullptr);
  static_cast<int64_t *>(tessel_tensor_data(t))[1] = -9;
  ASSERT_EQ(tessel_npy_write(path.c_str(), t), nullptr);
  tessel_tensor_t *back = nullptr;
  ASSERT_EQ(tessel_npy_read(path.c_str(), &back), nullptr);
  EXPECT_EQ(static_cast<int64_t *>(tessel_tensor_data(back))[1], -9);
  tessel_tensor_free(back);
  tessel_tensor_free(t);

  tessel_status_t *s = tessel_npy_read("/nonexistent/x.npy", &back);
  EXPECT_EQ(tessel_status_code(s), TESSEL_NOT_FOUND);
  tessel_status_free(s);
}

} // namespace
