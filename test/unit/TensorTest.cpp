//===- TensorTest.cpp - tensors and dtype helpers (C API) -----------------===//

#include "TestUtil.h"

#include <cmath>
#include <cstring>

using namespace tessel;
using namespace tessel::test;
using rt::Tensor;

namespace {

TEST(DType, NamesSizesAndParsing) {
  const tessel_dtype_t all[] = {
      TESSEL_DTYPE_F32, TESSEL_DTYPE_F16, TESSEL_DTYPE_BF16, TESSEL_DTYPE_F64,
      TESSEL_DTYPE_I64, TESSEL_DTYPE_I32, TESSEL_DTYPE_I16,  TESSEL_DTYPE_I8,
      TESSEL_DTYPE_U8,  TESSEL_DTYPE_I1,   TESSEL_DTYPE_U16, TESSEL_DTYPE_U32,
      TESSEL_DTYPE_U64};
  const size_t sizes[] = {4, 2, 2, 8, 8, 4, 2, 1, 1, 1, 2, 4, 8};
  for (size_t i = 0; i < 13; ++i) {
    EXPECT_EQ(tessel_dtype_from_name(tessel_dtype_name(all[i])), all[i]);
    EXPECT_EQ(tessel_dtype_size(all[i]), sizes[i]);
  }
  EXPECT_EQ(tessel_dtype_from_name("bool"), TESSEL_DTYPE_I1);
  EXPECT_EQ(tessel_dtype_from_name("float32"), TESSEL_DTYPE_INVALID);
  EXPECT_EQ(tessel_dtype_from_name(nullptr), TESSEL_DTYPE_INVALID);
  EXPECT_EQ(tessel_dtype_size(TESSEL_DTYPE_INVALID), 0u);
  EXPECT_STREQ(tessel_dtype_name(TESSEL_DTYPE_INVALID), "invalid");
}

TEST(Tensor, AllocatesAlignedZeroedStorage) {
  Tensor t = Tensor::allocate(TESSEL_DTYPE_F64, {3, 5});
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data()) % 64, 0u);
  EXPECT_EQ(t.numElements(), 15u);
  EXPECT_EQ(t.byteSize(), 120u);
  EXPECT_FALSE(t.isView());
  for (size_t i = 0; i < 15; ++i)
    EXPECT_EQ(t.data<double>()[i], 0.0);
  EXPECT_EQ(t.typeString(), "3x5xf64");
}

TEST(Tensor, ScalarAndEmpty) {
  Tensor s = Tensor::allocate(TESSEL_DTYPE_I32, {});
  EXPECT_EQ(s.rank(), 0u);
  EXPECT_EQ(s.numElements(), 1u);
  EXPECT_EQ(s.typeString(), "i32");
  Tensor e = Tensor::allocate(TESSEL_DTYPE_F32, {0, 7});
  EXPECT_EQ(e.numElements(), 0u);
  EXPECT_NE(e.data(), nullptr);
}

TEST(Tensor, RejectsBadShapesAndTypes) {
  expectError([] { Tensor::allocate(TESSEL_DTYPE_F32, {2, -1}); },
              TESSEL_INVALID_ARGUMENT, {"negative dimension -1"});
  expectError(
      [] { Tensor::allocate(TESSEL_DTYPE_F32, {int64_t(1) << 40, 1 << 30}); },
      TESSEL_INVALID_ARGUMENT, {"too large"});
  expectError([] { Tensor::allocate(TESSEL_DTYPE_INVALID, {1}); },
              TESSEL_INVALID_ARGUMENT, {"invalid tensor dtype"});
}

TEST(Tensor, WrapsCallerMemory) {
  int16_t buf[4] = {1, -2, 3, -4};
  Tensor v = Tensor::wrap(TESSEL_DTYPE_I16, {2, 2}, buf, sizeof buf);
  EXPECT_TRUE(v.isView());
  EXPECT_EQ(v.data(), static_cast<void *>(buf));
  EXPECT_EQ(v.elementAsDouble(3), -4.0);
  expectError([&] { Tensor::wrap(TESSEL_DTYPE_I16, {3}, buf, sizeof buf); },
              TESSEL_INVALID_ARGUMENT, {"buffer has 8 bytes but 3xi16 needs 6"});
}

TEST(Tensor, ElementAsDoubleDecodesHalfTypes) {
  uint16_t h[3] = {0x3c00, 0xc000, 0x7e00}; // 1, -2, nan
  Tensor f16 = Tensor::wrap(TESSEL_DTYPE_F16, {3}, h, sizeof h);
  EXPECT_EQ(f16.elementAsDouble(0), 1.0);
  EXPECT_EQ(f16.elementAsDouble(1), -2.0);
  EXPECT_TRUE(std::isnan(f16.elementAsDouble(2)));
  uint16_t b[1] = {0x3fc0}; // 1.5
  EXPECT_EQ(Tensor::wrap(TESSEL_DTYPE_BF16, {1}, b, 2).elementAsDouble(0), 1.5);
  EXPECT_TRUE(std::isnan(f16.elementAsDouble(3))); // out of range
}

} // namespace
