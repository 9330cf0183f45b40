//===- TestUtil.h - helpers shared by the runtime unit tests ---*- C++ -*-===//
#ifndef TESSEL_TEST_UNIT_TESTUTIL_H
#define TESSEL_TEST_UNIT_TESTUTIL_H

#include "tessel/Runtime/Runtime.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <vector>
#include <string>

namespace tessel::test {

/// A scratch file path unique to the running test (ctest runs tests in
/// parallel, each in its own process).
inline std::string tmpPath(const std::string &suffix) {
  const auto *info = ::testing::UnitTest::GetInstance()->current_test_info();
  return std::string(TESSEL_TEST_TMPDIR) + "/" + info->test_suite_name() +
         "." + info->name() + "." + suffix;
}

inline void writeFile(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

/// Expects `body` to throw rt::Error with `code` and a message containing
/// every one of `parts`.
template <typename F>
void expectError(F &&body, tessel_status_code_t code,
                 std::initializer_list<std::string> parts) {
  try {
    body();
    ADD_FAILURE() << "expected an error containing '" << *parts.begin() << "'";
  } catch (const rt::Error &e) {
    EXPECT_EQ(e.code(), code) << tessel_status_code_name(e.code()) << ": "
                              << e.what();
    for (const std::string &p : parts)
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos)
          << "message '" << e.what() << "' lacks '" << p << "'";
  }
}

/// An f32 tensor of `dims` holding `values`.
inline rt::Tensor f32(const std::vector<int64_t> &dims,
                      const std::vector<float> &values) {
  rt::Tensor t = rt::Tensor::allocate(TESSEL_DTYPE_F32, dims);
  std::copy(values.begin(), values.end(), t.data<float>());
  return t;
}

/// The linked fixtures' `twice` (scale(x) + 1) on x = [x0, x0+1, x0+2].
inline std::vector<float> runTwice(const rt::Function &twice, float x0 = 1) {
  std::vector<rt::Tensor> in;
  in.push_back(f32({3}, {x0, x0 + 1, x0 + 2}));
  std::vector<rt::Tensor> out = twice.invoke(in);
  const float *y = out.at(0).data<float>();
  return {y[0], y[1], y[2]};
}

} // namespace tessel::test

#endif // TESSEL_TEST_UNIT_TESTUTIL_H
