//===- SealTest.cpp - the artifact seal (ArtifactSeal.h) ------------------===//

#include "tessel/Runtime/ArtifactSeal.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace {

// Reference values of XXH64 with seed 0 (xxHash's own test vectors).
TEST(Seal, Xxh64MatchesTheReference) {
  EXPECT_EQ(tessel::seal::xxh64("", 0), 0xEF46DB3751D8E999ULL);
  EXPECT_EQ(tessel::seal::xxh64("a", 1), 0xD24EC4F1A98C6E5BULL);
  EXPECT_EQ(tessel::seal::xxh64("abc", 3), 0x44BC2CF5AD770999ULL);
}

// The stream (the compiler seals files in chunks) gives xxh64's value for
// every size (the 32-byte stripes, the 8/4/1-byte tails) and every way of
// cutting the bytes, pieces that fill the stripe buffer or span stripes.
TEST(Seal, StreamMatchesOneShot) {
  std::string data(1000, '\0');
  for (size_t i = 0; i < data.size(); ++i)
    data[i] = char(i * 131 + (i >> 3));
  EXPECT_EQ(tessel::seal::Xxh64Stream().digest(), 0xEF46DB3751D8E999ULL);
  for (size_t size : {1, 3, 4, 7, 8, 31, 32, 33, 63, 64, 65, 100, 999, 1000})
    for (size_t piece : {1, 5, 31, 32, 33, 64, 1000}) {
      tessel::seal::Xxh64Stream s(7);
      for (size_t at = 0; at < size; at += piece)
        s.update(data.data() + at, std::min(piece, size - at));
      EXPECT_EQ(s.digest(), tessel::seal::xxh64(data.data(), size, 7))
          << "size " << size << " piece " << piece;
      EXPECT_EQ(s.size(), size);
    }
}

TEST(Seal, ChecksSizeAndContents) {
  std::string payload(1000, '\0');
  for (size_t i = 0; i < payload.size(); ++i)
    payload[i] = char(i * 7);
  std::string file = payload + tessel::seal::make(payload.data(),
                                                  payload.size());
  using tessel::seal::Result;
  EXPECT_EQ(tessel::seal::check(file.data(), file.size()), Result::Ok);
  std::string edited = file;
  edited[500] ^= 1;
  EXPECT_EQ(tessel::seal::check(edited.data(), edited.size()),
            Result::Mismatch);
  std::string truncated = file.substr(0, 900);
  EXPECT_EQ(tessel::seal::check(truncated.data(), truncated.size()),
            Result::Missing);
  std::string shifted = file.substr(100);
  EXPECT_EQ(tessel::seal::check(shifted.data(), shifted.size()),
            Result::WrongSize);
  EXPECT_EQ(tessel::seal::check(file.data(), 3), Result::Missing);
}

} // namespace
