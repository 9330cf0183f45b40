//===- CompositionFileTest.cpp - composition file grammar on strings ------===//

#include "CompositionFile.h"
#include "TestUtil.h"

using namespace tessel;
using namespace tessel::rt::detail;
using namespace tessel::test;

namespace {

TEST(CompositionFile, ParsesArtifactsEntryAndComments) {
  CompositionFile f = parseCompositionFile(
      "tessel-composition 1\r\n"
      "# the encoder side calls the decoder through an import\n"
      "\n"
      "artifact encoder.so\n"
      "  artifact   sub dir/decoder v2.so  \n"
      "entry main\n",
      "c");
  ASSERT_EQ(f.artifacts.size(), 2u);
  EXPECT_EQ(f.artifacts[0].path, "encoder.so");
  EXPECT_EQ(f.artifacts[0].line, 4u);
  EXPECT_EQ(f.artifacts[1].path, "sub dir/decoder v2.so");
  EXPECT_EQ(f.entry, "main");
  EXPECT_EQ(parseCompositionFile("tessel-composition 1\nartifact a.so", "c")
                .entry,
            "");
}

TEST(CompositionFile, RejectsMalformedLines) {
  struct Case {
    const char *text;
    const char *message;
  } cases[] = {
      {"tessel-composition 1\nartefact a.so\n",
       "c, line 2: unknown record 'artefact'"},
      {"tessel-composition 1\nartifact\n", "c, line 2: expected 'artifact PATH'"},
      {"tessel-composition 1\nartifact a.so\nartifact a.so\n",
       "c, line 3: artifact 'a.so' is listed twice"},
      {"tessel-composition 1\nartifact a.so\nentry\n",
       "c, line 3: expected 'entry NAME'"},
      {"tessel-composition 1\nartifact a.so\nentry a b\n",
       "line 3: expected 'entry NAME'"},
      {"tessel-composition 1\nentry a\nartifact a.so\nentry b\n",
       "c, line 4: 'entry' given twice"},
      {"artifact a.so\n", "c, line 1: not a composition file"},
      {"tessel-composition\nartifact a.so\n", "c, line 1: not a composition"},
      {"tessel-composition 1 2\nartifact a.so\n", "not a composition file"},
      {"tessel-composition x\nartifact a.so\n", "c, line 1: invalid version 'x'"},
      {"tessel-composition 0\nartifact a.so\n", "invalid version '0'"},
      {"tessel-composition 1\n# nothing\n", "c: lists no artifacts"},
      {"", "c: the file is empty"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.text);
    expectError([&] { parseCompositionFile(c.text, "c"); },
                TESSEL_INVALID_ARGUMENT, {c.message});
  }
  std::string binary("tessel-composition 1\nartifact a\0b\n", 34);
  expectError([&] { parseCompositionFile(binary, "c"); },
              TESSEL_INVALID_ARGUMENT, {"c, line 2: contains a NUL byte"});
}

TEST(CompositionFile, RejectsNewerVersion) {
  expectError(
      [] { parseCompositionFile("tessel-composition 2\nartifact a.so\n", "c"); },
      TESSEL_UNSUPPORTED, {"composition version 2 is newer"});
}

TEST(CompositionFile, ResolvesPathsAgainstItsFolder) {
  EXPECT_EQ(resolveAgainst("dir/sub/c.txt", "a.so"), "dir/sub/a.so");
  EXPECT_EQ(resolveAgainst("/abs/c.txt", "../x/a.so"), "/abs/../x/a.so");
  EXPECT_EQ(resolveAgainst("c.txt", "a.so"), "a.so");
  EXPECT_EQ(resolveAgainst("dir/c.txt", "/opt/a.so"), "/opt/a.so");
}

} // namespace
