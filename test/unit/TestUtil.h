//===- TestUtil.h - helpers shared by the runtime unit tests ---*- C++ -*-===//
#ifndef TESSEL_TEST_UNIT_TESTUTIL_H
#define TESSEL_TEST_UNIT_TESTUTIL_H

#include "tessel/Runtime/Runtime.h"

#include <gtest/gtest.h>

#include <fstream>
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

} // namespace tessel::test

#endif // TESSEL_TEST_UNIT_TESTUTIL_H
