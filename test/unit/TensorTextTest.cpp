//===- TensorTextTest.cpp - inline tensor parsing / printing --------------===//

#include "TestUtil.h"
#include "tessel/Runtime/TensorText.h"

#include <cmath>
#include <cstdlib>

using namespace tessel;
using namespace tessel::test;
using rt::Tensor;

namespace {

TEST(TensorText, ParsesMatrix) {
  Tensor t = rt::parseTensorText("2x3xf32=1 2 3 4 5 6.5");
  EXPECT_EQ(t.dtype(), TESSEL_DTYPE_F32);
  EXPECT_EQ(t.dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t.data<float>()[5], 6.5f);
}

TEST(TensorText, ParsesScalarCommasAndBool) {
  Tensor s = rt::parseTensorText("f32=5");
  EXPECT_EQ(s.rank(), 0u);
  EXPECT_EQ(s.data<float>()[0], 5.0f);
  Tensor i = rt::parseTensorText("4xi64=1,2, 3 ,-9223372036854775807");
  EXPECT_EQ(i.data<int64_t>()[3], -9223372036854775807LL);
  Tensor b = rt::parseTensorText("4xi1=0 1 true false");
  EXPECT_EQ(b.dtype(), TESSEL_DTYPE_I1);
  EXPECT_EQ(b.data<uint8_t>()[2], 1);
  EXPECT_EQ(b.data<uint8_t>()[3], 0);
  Tensor e = rt::parseTensorText("0x3xf32=");
  EXPECT_EQ(e.numElements(), 0u);
}

TEST(TensorText, ParsesEveryDTypeAndSpecialFloats) {
  EXPECT_EQ(rt::parseTensorText("2xf16=1.5 -2").elementAsDouble(0), 1.5);
  EXPECT_EQ(rt::parseTensorText("bf16=3").elementAsDouble(0), 3.0);
  EXPECT_EQ(rt::parseTensorText("f64=0.1").data<double>()[0], 0.1);
  EXPECT_EQ(rt::parseTensorText("i32=-7").data<int32_t>()[0], -7);
  EXPECT_EQ(rt::parseTensorText("i16=-300").data<int16_t>()[0], -300);
  EXPECT_EQ(rt::parseTensorText("i8=-128").data<int8_t>()[0], -128);
  EXPECT_EQ(rt::parseTensorText("u8=255").data<uint8_t>()[0], 255);
  EXPECT_EQ(rt::parseTensorText("u16=65535").data<uint16_t>()[0], 65535);
  EXPECT_EQ(rt::parseTensorText("u32=4294967295").data<uint32_t>()[0],
            4294967295u);
  Tensor u64 = rt::parseTensorText("2xu64=18446744073709551615 0");
  EXPECT_EQ(u64.data<uint64_t>()[0], UINT64_MAX);
  // Printed exactly, not through double.
  EXPECT_EQ(rt::formatElement(u64, 0), "18446744073709551615");
  Tensor f = rt::parseTensorText("3xf32=nan inf -inf");
  EXPECT_TRUE(std::isnan(f.data<float>()[0]));
  EXPECT_TRUE(std::isinf(f.data<float>()[2]));
}

TEST(TensorText, Errors) {
  expectError([] { rt::parseTensorText("2x3xf32=1 2 3 4 5"); },
              TESSEL_INVALID_ARGUMENT,
              {"shape [2,3] needs 6 value(s), got 5"});
  expectError([] { rt::parseTensorText("2x2xf32=1 2 3 4 5"); },
              TESSEL_INVALID_ARGUMENT, {"needs 4 value(s), got 5"});
  expectError([] { rt::parseTensorText("2x3xf32"); }, TESSEL_INVALID_ARGUMENT,
              {"missing '='"});
  expectError([] { rt::parseTensorText("2x3xfloat=1"); },
              TESSEL_INVALID_ARGUMENT, {"unknown dtype 'float'"});
  expectError([] { rt::parseTensorText("2xax3xf32=1"); },
              TESSEL_INVALID_ARGUMENT, {"invalid dimension 'a'"});
  expectError([] { rt::parseTensorText("2xf32=1 x"); },
              TESSEL_INVALID_ARGUMENT, {"invalid f32 value 'x'"});
  expectError([] { rt::parseTensorText("i32=1.5"); }, TESSEL_INVALID_ARGUMENT,
              {"invalid i32 value '1.5'", "expected an integer"});
  expectError([] { rt::parseTensorText("i8=128"); }, TESSEL_INVALID_ARGUMENT,
              {"invalid i8 value '128' (out of range)"});
  expectError([] { rt::parseTensorText("u8=-1"); }, TESSEL_INVALID_ARGUMENT,
              {"out of range"});
  expectError([] { rt::parseTensorText("i1=2"); }, TESSEL_INVALID_ARGUMENT,
              {"invalid i1 value '2'"});
  expectError([] { rt::parseTensorText("u16=65536"); },
              TESSEL_INVALID_ARGUMENT, {"out of range"});
  expectError([] { rt::parseTensorText("u64=-1"); }, TESSEL_INVALID_ARGUMENT,
              {"expected a non-negative integer"});
  expectError([] { rt::parseTensorText("u64=18446744073709551616"); },
              TESSEL_INVALID_ARGUMENT, {"out of range"});
}

TEST(TensorText, Formats) {
  EXPECT_EQ(rt::formatTensorText(rt::parseTensorText("2x3xf32=1 2 3 4 5 6")),
            "2x3xf32=[1 2 3][4 5 6]");
  EXPECT_EQ(rt::formatTensorText(rt::parseTensorText("2x2x2xi32=1 2 3 4 5 6 7 8")),
            "2x2x2xi32=[[1 2][3 4]][[5 6][7 8]]");
  EXPECT_EQ(rt::formatTensorText(rt::parseTensorText("3xf32=0.1 -2.5e-8 nan")),
            "3xf32=0.1 -2.5e-08 nan");
  EXPECT_EQ(rt::formatTensorText(rt::parseTensorText("f64=0.1")), "f64=0.1");
  EXPECT_EQ(rt::formatTensorText(rt::parseTensorText("f32=3.14159274")),
            "f32=3.141593");
  EXPECT_EQ(rt::formatTensorText(rt::parseTensorText("2xi1=true 0")),
            "2xi1=1 0");
  EXPECT_EQ(rt::formatTensorText(
                rt::parseTensorText("i64=9007199254740993")),
            "i64=9007199254740993");
  EXPECT_EQ(rt::formatTensorText(rt::parseTensorText("0x2xf32=")),
            "0x2xf32=");
}

TEST(TensorText, FormattedTextParsesBack) {
  Tensor a = rt::parseTensorText("2x2xf64=1.25 -3 1e-300 7");
  Tensor b = rt::parseTensorText(rt::formatTensorText(a));
  for (size_t i = 0; i < 4; ++i)
    EXPECT_EQ(a.data<double>()[i], b.data<double>()[i]);
}

TEST(TensorText, CApi) {
  tessel_tensor_t *t = nullptr;
  ASSERT_EQ(tessel_tensor_parse("2xu8=3 4", &t), nullptr);
  char *s = tessel_tensor_format(t);
  EXPECT_STREQ(s, "2xu8=3 4");
  std::free(s);
  tessel_tensor_free(t);
  tessel_status_t *st = tessel_tensor_parse("2xu8=3", &t);
  EXPECT_EQ(tessel_status_code(st), TESSEL_INVALID_ARGUMENT);
  tessel_status_free(st);
}

} // namespace
