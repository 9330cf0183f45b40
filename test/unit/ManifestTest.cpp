//===- ManifestTest.cpp - manifest grammar on strings ---------------------===//

#include "Manifest.h"
#include "TestUtil.h"

using namespace tessel;
using namespace tessel::rt::detail;
using namespace tessel::test;

namespace {

const std::string kHeader =
    "tessel-artifact 1\ntarget x86_64-unknown-linux-gnu\n";

Manifest parse(const std::string &body) {
  return parseManifest(kHeader + body, "m");
}

TEST(Manifest, ParsesFunctions) {
  Manifest m = parse("function main tessel_entry_main\n"
                     "input x f32 [2,3]\n"
                     "input s i1 []\n"
                     "output out0 bf16 [0,4]\n"
                     "end\n"
                     "function other sym\n"
                     "end\n");
  EXPECT_EQ(m.version, 1u);
  EXPECT_EQ(m.target, "x86_64-unknown-linux-gnu");
  ASSERT_EQ(m.functions.size(), 2u);
  const ManifestFunction &f = m.functions[0];
  EXPECT_EQ(f.symbol, "tessel_entry_main");
  ASSERT_EQ(f.inputs.size(), 2u);
  EXPECT_EQ(f.inputs[0].dims, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(f.inputs[1].dtype, TESSEL_DTYPE_I1);
  EXPECT_TRUE(f.inputs[1].dims.empty());
  EXPECT_EQ(f.outputs[0].dtype, TESSEL_DTYPE_BF16);
  EXPECT_EQ(f.outputs[0].dims, (std::vector<int64_t>{0, 4}));
  EXPECT_TRUE(m.functions[1].inputs.empty());
}

TEST(Manifest, AcceptsCrLfAndBlankLines) {
  Manifest m = parseManifest("tessel-artifact 1\r\ntarget t\r\n\r\n"
                             "function f s\r\nend\r\n",
                             "m");
  EXPECT_EQ(m.functions.at(0).name, "f");
}

struct BadCase {
  const char *body;
  const char *message;
};

TEST(Manifest, RejectsMalformedLines) {
  const BadCase cases[] = {
      {"function f s\ninput x f33 [1]\nend\n", "line 4: unknown dtype 'f33'"},
      {"function f s\ninput x bool [1]\nend\n", "unknown dtype 'bool'"},
      {"function f s\ninput x f32 [1]\n", "function 'f' is not closed"},
      {"input x f32 [1]\n", "line 3: 'input' outside a function"},
      {"function f s\nweights w\nend\n", "line 4: unknown record 'weights'"},
      {"function f s\nend\nfunction f t\nend\n", "duplicate function 'f'"},
      {"function f s\nfunction g t\nend\n", "missing 'end'"},
      {"end\n", "'end' without 'function'"},
      {"function f\nend\n", "expected 'function NAME SYMBOL'"},
      {"function f s\ninput x f32 [1,-2]\nend\n", "invalid dimension '-2'"},
      {"function f s\ninput x f32 [1,]\nend\n", "invalid dimension"},
      {"function f s\ninput x f32 [a]\nend\n", "invalid dimension 'a'"},
      {"function f s\nend\ntarget y\n", "'target' must appear once"},
      {"", "declares no functions"},
  };
  for (const BadCase &c : cases) {
    SCOPED_TRACE(c.body);
    expectError([&] { parse(c.body); }, TESSEL_INVALID_ARTIFACT,
                {"m: malformed manifest", c.message});
  }
}

TEST(Manifest, RejectsBadHeader) {
  expectError([] { parseManifest("", "m"); }, TESSEL_INVALID_ARTIFACT,
              {"manifest is empty"});
  expectError([] { parseManifest("tessel-artifact\n", "m"); },
              TESSEL_INVALID_ARTIFACT, {"not a Tessel artifact manifest"});
  expectError([] { parseManifest("tessel-artifact 0\n", "m"); },
              TESSEL_INVALID_ARTIFACT, {"invalid ABI version '0'"});
  expectError([] { parseManifest("tessel-artifact v1\n", "m"); },
              TESSEL_INVALID_ARTIFACT, {"invalid ABI version 'v1'"});
  expectError([] { parseManifest("tessel-artifact 3\n", "m"); },
              TESSEL_UNSUPPORTED, {"ABI version 3 is newer"});
}

TEST(Manifest, RejectsDynamicDimensions) {
  expectError([] { parse("function f s\noutput y f32 [4,?]\nend\n"); },
              TESSEL_UNSUPPORTED,
              {"m: manifest line 4: dynamic dimensions are not supported by "
               "ABI version 1"});
}

} // namespace
