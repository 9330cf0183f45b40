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
      {"function f s\ninput x f32 [a-]\nend\n", "invalid dimension 'a-'"},
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
  expectError([] { parseManifest("tessel-artifact 9\n", "m"); },
              TESSEL_UNSUPPORTED, {"ABI version 9 is newer"});
}

const std::string kHeader2 =
    "tessel-artifact 2\ntarget x86_64-unknown-linux-gnu\n";

Manifest parse2(const std::string &body) {
  return parseManifest(kHeader2 + body, "m");
}

TEST(Manifest, ParsesImportsUsesAndVocabularies) {
  Manifest m = parse2("import decoder 0\n"
                      "input ids i32 [6] vocab=12\n"
                      "output emb f32 [6,4]\n"
                      "end\n"
                      "import other 1\n"
                      "output o f32 []\n"
                      "end\n"
                      "function main tessel_entry_main\n"
                      "input x f32 [6,5]\n"
                      "output y f32 [6,4]\n"
                      "output s i32 [6] vocab=2147483648\n"
                      "uses other\n"
                      "uses decoder\n"
                      "end\n");
  EXPECT_EQ(m.version, 2u);
  ASSERT_EQ(m.imports.size(), 2u);
  EXPECT_EQ(m.imports[0].name, "decoder");
  EXPECT_EQ(m.imports[0].symbol, "");
  EXPECT_EQ(m.imports[0].inputs.at(0).vocab, 12);
  EXPECT_EQ(m.imports[0].outputs.at(0).vocab, 0);
  ASSERT_EQ(m.functions.size(), 1u);
  EXPECT_EQ(m.functions[0].uses, (std::vector<size_t>{1, 0}));
  EXPECT_EQ(m.functions[0].outputs.at(1).vocab, int64_t(1) << 31);
}

TEST(Manifest, RejectsMalformedImports) {
  const BadCase cases[] = {
      {"import f 1\noutput o f32 []\nend\nfunction g s\nend\n",
       "line 3: import 'f' has slot '1', expected 0"},
      {"function g s\nend\nimport f 0\noutput o f32 []\nend\n",
       "line 5: 'import' after a function"},
      {"import f 0\nend\nfunction g s\nend\n", "import 'f' has no outputs"},
      {"import f 0\noutput o f32 []\nend\nimport f 1\noutput o f32 []\nend\n"
       "function g s\nend\n",
       "duplicate import 'f'"},
      {"import f 0\noutput o f32 []\nend\nfunction f s\nend\n",
       "function 'f' is also an import"},
      {"function g s\nuses f\nend\n",
       "function 'g' uses 'f', which no 'import' record declares"},
      {"import f 0\noutput o f32 []\nend\nfunction g s\nuses f\nuses f\nend\n",
       "uses 'f' twice"},
      {"import f 0\noutput o f32 []\nuses f\nend\nfunction g s\nend\n",
       "'uses' outside a function"},
      {"import f 0\nfunction g s\nend\n", "'function' inside 'f'"},
      {"function g s\ninput x f32 [2] vocab=3\nend\n",
       "'x' has a vocabulary but dtype f32; symbol ids are i32"},
      {"function g s\ninput x i32 [2] vocab=0\nend\n",
       "expected 'vocab=V' with V in [1, 2^31], got 'vocab=0'"},
      {"function g s\ninput x i32 [2] vocab=2147483649\nend\n",
       "expected 'vocab=V'"},
      {"function g s\ninput x i32 [2] sym=3\nend\n", "expected 'vocab=V'"},
      {"function g s\ninput x i32 [2] vocab=3 more\nend\n",
       "unexpected 'more' after the shape of 'x'"},
      {"function g s\ninput x i32 [2] vocab=3 a b\nend\n",
       "expected 'input NAME DTYPE SHAPE [vocab=V] [part=ROLE:OWNER]'"},
  };
  for (const BadCase &c : cases) {
    SCOPED_TRACE(c.body);
    expectError([&] { parse2(c.body); }, TESSEL_INVALID_ARTIFACT,
                {"m: malformed manifest", c.message});
  }
}

TEST(Manifest, Version1HasNoImportsOrVocabularies) {
  expectError(
      [] { parse("import f 0\noutput o f32 []\nend\nfunction g s\nend\n"); },
      TESSEL_INVALID_ARTIFACT,
      {"line 3: 'import' records need ABI version 2 (the manifest says 1)"});
  expectError([] { parse("function g s\ninput x i32 [2] vocab=3\nend\n"); },
              TESSEL_INVALID_ARTIFACT, {"'vocab=' records need ABI version 2"});
  expectError([] { parse("function g s\nuses f\nend\n"); },
              TESSEL_INVALID_ARTIFACT, {"'uses' records need ABI version 2"});
}

Manifest parse3(const std::string &body) {
  return parseManifest(
      "tessel-artifact 3\ntarget x86_64-unknown-linux-gnu\n" + body, "m");
}

TEST(Manifest, ParsesNamedDimensions) {
  Manifest m = parse3("import expert 0\n"
                      "input x f32 [N,4]\n"
                      "output y f32 [N,4]\n"
                      "end\n"
                      "function main s\n"
                      "input a f32 [B,T_1,4]\n"
                      "input b f32 [T_1]\n"
                      "output y f32 [T_1,B]\n"
                      "uses expert\n"
                      "end\n");
  const ManifestFunction &f = m.functions[0];
  EXPECT_EQ(f.inputs[0].dims, (std::vector<int64_t>{-1, -1, 4}));
  EXPECT_EQ(f.inputs[0].dimNames,
            (std::vector<std::string>{"B", "T_1", ""}));
  // The sizes array follows first appearance among the inputs.
  EXPECT_EQ(f.dimOrder, (std::vector<std::string>{"B", "T_1"}));
  EXPECT_EQ(shapeString(f.outputs[0]), "[T_1,B]");
  EXPECT_EQ(m.imports[0].dimOrder, (std::vector<std::string>{"N"}));
}

TEST(Manifest, RejectsBadDynamicDimensions) {
  struct BadCase {
    std::string body, message;
  };
  const std::vector<BadCase> cases = {
      {"function f s\noutput y f32 [4,?]\nend\n",
       "line 4: run-time dimension '?' in shape '[4,?]' needs ABI version 6 "
       "(the manifest says 3)"},
      {"function f s\ninput x f32 [2T]\nend\n",
       "line 4: invalid dimension '2T' in shape '[2T]'"},
      {"function f s\ninput x f32 [T]\noutput y f32 [N]\nend\n",
       "line 6: output 'y' of 'f' has the dimension 'N', which no input has"},
  };
  for (const BadCase &c : cases) {
    SCOPED_TRACE(c.body);
    expectError([&] { parse3(c.body); }, TESSEL_INVALID_ARTIFACT,
                {"m: malformed manifest", c.message});
  }
  // Names came with version 3.
  expectError([] { parse("function f s\noutput y f32 [T]\nend\n"); },
              TESSEL_INVALID_ARTIFACT,
              {"line 4: named dimension 'T' in shape '[T]' needs ABI version "
               "3 (the manifest says 1)"});
}

} // namespace

TEST(Manifest, ParsesRunTimeDimensions) {
  Manifest m = parseManifest("tessel-artifact 6\ntarget t\n"
                             "function f s\ninput x f32 [T,4]\n"
                             "output y i64 [2,?]\noutput z f32 [T,?]\nend\n",
                             "m");
  const ManifestFunction &f = m.functions[0];
  EXPECT_EQ(f.outputs[0].dims, (std::vector<int64_t>{2, -1}));
  EXPECT_EQ(f.outputs[0].dimNames, (std::vector<std::string>{"", "?"}));
  EXPECT_TRUE(hasRunTimeDim(f.outputs[0]));
  EXPECT_FALSE(hasRunTimeDim(f.inputs[0]));
  // "?" is not a name the inputs bind.
  EXPECT_EQ(f.dimOrder, (std::vector<std::string>{"T"}));
  EXPECT_EQ(shapeString(f.outputs[1]), "[T,?]");
}

TEST(Manifest, ParsesParts) {
  Manifest m = parseManifest(
      "tessel-artifact 7\ntarget t\nfunction f s\n"
      "input s.present i1 [] part=present:s\n"
      "input s.sizes i64 [s_count,2] part=sizes:s\n"
      "input s.data f32 [s_total] part=data:s\n"
      "output y.sizes i64 [?,?] part=sizes:y\noutput y.data f32 [?] "
      "part=data:y\noutput z i32 [2] vocab=5\nend\n",
      "m");
  const ManifestFunction &f = m.functions[0];
  EXPECT_EQ(f.inputs[0].part, "present:s");
  EXPECT_EQ(f.inputs[1].part, "sizes:s");
  EXPECT_EQ(f.inputs[2].part, "data:s");
  EXPECT_EQ(f.outputs[1].part, "data:y");
  EXPECT_EQ(f.outputs[2].part, "");
  EXPECT_EQ(f.outputs[2].vocab, 5);
}

TEST(Manifest, RejectsBadParts) {
  struct BadCase {
    std::string version, body, message;
  };
  const std::vector<BadCase> cases = {
      {"6", "input s i64 [2,2] part=sizes:s",
       "'part=' needs ABI version 7 (the manifest says 6)"},
      {"7", "input s i64 [2,2] part=shape:s",
       "expected 'part=ROLE:OWNER' with ROLE sizes, data, present or value"},
      {"7", "input s i64 [2,2] part=sizes:", "expected 'part=ROLE:OWNER'"},
      {"7", "input s f32 [2,2] part=sizes:s",
       "'s' cannot be the sizes of 's'"},
      {"7", "input s i1 [1] part=present:s",
       "'s' cannot be the present of 's'"},
      {"7", "input s f32 [2] part=data:s part=data:s",
       "unexpected 'part=data:s' after the shape of 's'"},
  };
  for (const BadCase &c : cases) {
    SCOPED_TRACE(c.body);
    expectError(
        [&] {
          parseManifest("tessel-artifact " + c.version +
                            "\ntarget t\nfunction f s\n" + c.body + "\nend\n",
                        "m");
        },
        TESSEL_INVALID_ARTIFACT, {"line 4: ", c.message});
  }
}

TEST(Manifest, RejectsRunTimeDimensionsOutsideEntryOutputs) {
  auto parse6 = [](const std::string &body) {
    return parseManifest("tessel-artifact 6\ntarget t\n" + body, "m");
  };
  expectError([&] { parse6("function f s\ninput x f32 [?]\nend\n"); },
              TESSEL_INVALID_ARTIFACT,
              {"line 4: input 'x' has a run-time dimension '?' in [?]: only "
               "an entry point's outputs have them"});
  expectError(
      [&] {
        parse6("import g 0\ninput x f32 [2]\noutput y f32 [?]\nend\n"
               "function f s\nend\n");
      },
      TESSEL_INVALID_ARTIFACT,
      {"line 5: output 'y' has a run-time dimension '?' in [?]"});
}

TEST(Manifest, ParsesRequiredCpuFeatures) {
  Manifest m = parseManifest("tessel-artifact 4\ntarget t\n"
                             "requires avx2 avx512f sse4.2\n"
                             "function f s\nend\n",
                             "m");
  EXPECT_EQ(m.version, 4u);
  EXPECT_EQ(m.requiredFeatures,
            (std::vector<std::string>{"avx2", "avx512f", "sse4.2"}));
}

TEST(Manifest, ParsesDevice) {
  Manifest m = parseManifest("tessel-artifact 5\ntarget t\ndevice cuda sm_90\n"
                             "function f s\nend\n",
                             "m");
  EXPECT_EQ(m.version, 5u);
  EXPECT_EQ(m.deviceKind, "cuda");
  EXPECT_EQ(m.deviceArch, "sm_90");
  Manifest cpu = parseManifest("tessel-artifact 4\ntarget t\nfunction f s\nend\n",
                               "m");
  EXPECT_TRUE(cpu.deviceKind.empty());
}

TEST(Manifest, RejectsBadDevice) {
  const BadCase cases[] = {
      {"tessel-artifact 4\ntarget t\ndevice cuda sm_90\nfunction f s\nend\n",
       "line 3: 'device' records need ABI version 5"},
      {"tessel-artifact 5\ntarget t\ndevice rocm gfx942\nfunction f s\nend\n",
       "line 3: unknown device kind 'rocm'"},
      {"tessel-artifact 5\ntarget t\ndevice cuda\nfunction f s\nend\n",
       "device KIND ARCH"},
      {"tessel-artifact 5\ndevice cuda sm_90\ntarget t\nfunction f s\nend\n",
       "'device' must appear once, after 'target'"},
      {"tessel-artifact 5\ntarget t\ndevice cuda sm_90\ndevice cuda sm_80\n"
       "function f s\nend\n",
       "'device' must appear once"},
  };
  for (const BadCase &c : cases)
    expectError([&] { parseManifest(c.body, "m"); }, TESSEL_INVALID_ARTIFACT,
                {"m: malformed manifest", c.message});
}

TEST(Manifest, ParsesRanks) {
  Manifest m = parseManifest("tessel-artifact 8\ntarget t\nranks 4\n"
                             "function f s\nend\n",
                             "m");
  EXPECT_EQ(m.version, 8u);
  EXPECT_EQ(m.ranks, 4);
  Manifest one = parseManifest("tessel-artifact 8\ntarget t\nfunction f s\n"
                               "end\n",
                               "m");
  EXPECT_EQ(one.ranks, 0);
}

TEST(Manifest, RejectsBadRanks) {
  const BadCase cases[] = {
      {"tessel-artifact 7\ntarget t\nranks 2\nfunction f s\nend\n",
       "line 3: 'ranks' records need ABI version 8"},
      {"tessel-artifact 8\ntarget t\nranks 1\nfunction f s\nend\n",
       "'ranks' needs a process count of 2 or more, got '1'"},
      {"tessel-artifact 8\ntarget t\nranks two\nfunction f s\nend\n",
       "got 'two'"},
      {"tessel-artifact 8\ntarget t\nranks\nfunction f s\nend\n", "ranks N"},
      {"tessel-artifact 8\nranks 2\ntarget t\nfunction f s\nend\n",
       "'ranks' must appear once, after 'target'"},
      {"tessel-artifact 8\ntarget t\nranks 2\nranks 2\nfunction f s\nend\n",
       "'ranks' must appear once"},
  };
  for (const BadCase &c : cases)
    expectError([&] { parseManifest(c.body, "m"); }, TESSEL_INVALID_ARTIFACT,
                {"m: malformed manifest", c.message});
}

TEST(Manifest, RejectsBadRequires) {
  const BadCase cases[] = {
      {"tessel-artifact 3\ntarget t\nrequires avx2\nfunction f s\nend\n",
       "line 3: 'requires' records need ABI version 4"},
      {"tessel-artifact 4\ntarget t\nrequires avx9000\nfunction f s\nend\n",
       "line 3: unknown CPU feature 'avx9000'"},
      {"tessel-artifact 4\ntarget t\nrequires\nfunction f s\nend\n",
       "expected 'requires FEATURE...'"},
      {"tessel-artifact 4\nrequires avx2\ntarget t\nfunction f s\nend\n",
       "'requires' must appear once, after 'target'"},
      {"tessel-artifact 4\ntarget t\nrequires avx2\nrequires fma\n"
       "function f s\nend\n",
       "'requires' must appear once"},
  };
  for (const BadCase &c : cases)
    expectError([&] { parseManifest(c.body, "m"); }, TESSEL_INVALID_ARTIFACT,
                {"m: malformed manifest", c.message});
}
