//===- LinkTest.cpp - linking artifacts into compositions -----------------===//
//
// Uses the hand-written artifacts of fake_linked_artifact.c (paths come
// from CMake as LINKED_* macros): resolution by name, the call through the
// import table, every link error class, composition files, and private
// instances (one importer linked to two providers at once).
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <filesystem>

using namespace tessel;
using namespace tessel::test;
using rt::Artifact;
using rt::Composition;
using rt::Tensor;

namespace {



TEST(Link, CallsThroughTheImportTable) {
  Composition c = Composition::link({LINKED_IMPORTER, LINKED_PROVIDER});
  EXPECT_EQ(runTwice(c.function("twice")), (std::vector<float>{3, 5, 7}));
  EXPECT_EQ(c.artifactPaths(),
            (std::vector<std::string>{LINKED_IMPORTER, LINKED_PROVIDER}));
  EXPECT_EQ(c.path(), "");

  // Symbols cross as i32 ids; the vocabulary is part of the signature.
  rt::Function embed = c.function("embed");
  EXPECT_EQ(embed.inputs().at(0).vocab, 10);
  EXPECT_EQ(embed.outputs().at(0).vocab, 0);
  Tensor ids = Tensor::allocate(TESSEL_DTYPE_I32, {4});
  for (int i = 0; i < 4; ++i)
    ids.data<int32_t>()[i] = i * 3;
  std::vector<Tensor> in;
  in.push_back(std::move(ids));
  std::vector<Tensor> out = embed.invoke(in);
  EXPECT_EQ(out[0].data<float>()[3], 9.5f);
}

TEST(Link, ImportsNameTheirProviders) {
  Composition c = Composition::link({LINKED_IMPORTER, LINKED_PROVIDER});
  const tessel_artifact_t *importer = tessel_composition_artifact_at(c.get(), 0);
  ASSERT_EQ(tessel_artifact_num_imports(importer), 3u);
  EXPECT_STREQ(tessel_artifact_import_name(importer, 1), "ids");
  const tessel_function_t *p = tessel_artifact_import_provider(importer, 1);
  ASSERT_NE(p, nullptr);
  EXPECT_STREQ(tessel_function_name(p), "ids");
  EXPECT_STREQ(tessel_artifact_path(tessel_function_artifact(p)),
               LINKED_PROVIDER);
  EXPECT_STREQ(tessel_artifact_import_name(importer, 3), "");
  EXPECT_EQ(tessel_artifact_import_provider(importer, 3), nullptr);
}

TEST(Link, ForwardsTheInvokeContext) {
  Composition c = Composition::link({LINKED_PROVIDER, LINKED_IMPORTER});
  std::vector<Tensor> out =
      c.function("threads_via").invoke({}, rt::InvokeOptions{3});
  EXPECT_EQ(out[0].data<int32_t>()[0], 3);
}

TEST(Link, UnresolvedImportFailsTheCallNotTheProcess) {
  Artifact a = Artifact::load(LINKED_IMPORTER);
  EXPECT_EQ(a.imports(),
            (std::vector<std::string>{"scale", "ids", "nthreads"}));
  EXPECT_EQ(tessel_artifact_import_provider(a.get(), 0), nullptr);
  expectError([&] { runTwice(a.function("twice")); }, TESSEL_NOT_FOUND,
              {"function 'twice' of artifact '" LINKED_IMPORTER
               "' calls import 'scale', which is not linked",
               "with an artifact that exports 'scale'"});
  // A function that calls no import runs.
  std::vector<Tensor> in;
  in.push_back(f32({}, {41}));
  EXPECT_EQ(a.function("plain").invoke(in)[0].data<float>()[0], 42.0f);
}

TEST(Link, MissingProvider) {
  expectError([] { Composition::link({LINKED_IMPORTER}); }, TESSEL_NOT_FOUND,
              {"artifact '" LINKED_IMPORTER "' imports 'scale', which no "
               "artifact of the composition exports",
               "(exported: embed, plain, threads_via, twice)"});
}

TEST(Link, TwoProviders) {
  expectError(
      [] {
        Composition::link(
            {LINKED_IMPORTER, LINKED_PROVIDER, LINKED_PROVIDER_ALT});
      },
      TESSEL_INVALID_ARGUMENT,
      {"function 'scale' is exported by two artifacts of the composition: '" LINKED_PROVIDER
       "' and '" LINKED_PROVIDER_ALT "'"});
}

TEST(Link, InterfaceMismatches) {
  expectError(
      [] { Composition::link({LINKED_IMPORTER, LINKED_PROVIDER_SHAPE}); },
      TESSEL_INVALID_ARGUMENT,
      {"import 'scale' of artifact '" LINKED_IMPORTER
       "' does not match function 'scale' of artifact '" LINKED_PROVIDER_SHAPE
       "': input 0 differs in shape (import: x: f32 [3]; function: x: f32 "
       "[4])"});
  expectError(
      [] { Composition::link({LINKED_IMPORTER, LINKED_PROVIDER_DTYPE}); },
      TESSEL_INVALID_ARGUMENT,
      {"output 0 differs in dtype (import: y: f32 [3]; function: y: i32 [3])"});
  expectError(
      [] { Composition::link({LINKED_IMPORTER, LINKED_PROVIDER_VOCAB}); },
      TESSEL_INVALID_ARGUMENT,
      {"import 'ids'", "input 0 differs in symbol vocabulary (import: s: i32 "
                       "[4] vocab=10; function: s: i32 [4] vocab=11)"});
  expectError(
      [] { Composition::link({LINKED_IMPORTER, LINKED_PROVIDER_RUN_TIME}); },
      TESSEL_INVALID_ARGUMENT,
      {"import 'scale'", "output 0 of the function has a size that follows "
                         "from the data (y: f32 [?]), which an import cannot "
                         "take: its caller allocates the outputs"});
}

TEST(Link, Cycle) {
  expectError([] { Composition::link({LINKED_CYCLE_A, LINKED_CYCLE_B}); },
              TESSEL_INVALID_ARGUMENT,
              {"the composition's imports form a cycle: ping (" LINKED_CYCLE_A
               ") -> pong (" LINKED_CYCLE_B ") -> ping (" LINKED_CYCLE_A ")"});
}

TEST(Link, ManifestImportsNeedTheTable) {
  expectError([] { Artifact::load(LINKED_NO_TABLE); }, TESSEL_INVALID_ARTIFACT,
              {"declares 1 import(s) but the library does not export "
               "'tessel_artifact_imports'"});
}

TEST(Link, FailedLinkLeavesNothingHalfLinked) {
  expectError(
      [] { Composition::link({LINKED_IMPORTER, LINKED_PROVIDER_VOCAB}); },
      TESSEL_INVALID_ARGUMENT, {"does not match"});
  Artifact a = Artifact::load(LINKED_IMPORTER);
  for (size_t i = 0; i < 3; ++i)
    EXPECT_EQ(tessel_artifact_import_provider(a.get(), i), nullptr);
}

// The same importer file linked to two providers at once, and loaded
// alone: each load has its own import table.
TEST(Link, CompositionsDoNotShareImportTables) {
  Artifact alone = Artifact::load(LINKED_IMPORTER);
  Composition two = Composition::link({LINKED_IMPORTER, LINKED_PROVIDER});
  Composition three = Composition::link({LINKED_IMPORTER, LINKED_PROVIDER_ALT});
  EXPECT_EQ(runTwice(two.function("twice")), (std::vector<float>{3, 5, 7}));
  EXPECT_EQ(runTwice(three.function("twice")), (std::vector<float>{4, 7, 10}));
  expectError([&] { runTwice(alone.function("twice")); }, TESSEL_NOT_FOUND,
              {"not linked"});
  two = Composition::link({LINKED_PROVIDER_ALT, LINKED_IMPORTER});
  EXPECT_EQ(runTwice(two.function("twice")), (std::vector<float>{4, 7, 10}));
  EXPECT_EQ(runTwice(three.function("twice")), (std::vector<float>{4, 7, 10}));
}

// Swapping a provider: a new file renamed over the old one is what the next
// link uses, although the old library is still loaded under that name; the
// composition linked before keeps the old one.
TEST(Link, ReplacedProviderFileIsReadAgain) {
  namespace fs = std::filesystem;
  std::string provider = tmpPath("provider.so"), next = tmpPath("next.so");
  fs::copy_file(LINKED_PROVIDER, provider, fs::copy_options::overwrite_existing);
  Composition before = Composition::link({LINKED_IMPORTER, provider});
  EXPECT_EQ(runTwice(before.function("twice")), (std::vector<float>{3, 5, 7}));
  fs::copy_file(LINKED_PROVIDER_ALT, next, fs::copy_options::overwrite_existing);
  fs::rename(next, provider);
  Composition after = Composition::link({LINKED_IMPORTER, provider});
  EXPECT_EQ(runTwice(after.function("twice")), (std::vector<float>{4, 7, 10}));
  EXPECT_EQ(runTwice(before.function("twice")), (std::vector<float>{3, 5, 7}));
}

/// A composition file in the test's scratch folder, with symlinks to the
/// artifacts so that relative paths are exercised.
std::string writeComposition(const std::string &body) {
  namespace fs = std::filesystem;
  fs::path dir = tmpPath("dir");
  fs::remove_all(dir);
  fs::create_directories(dir / "sub");
  fs::create_symlink(LINKED_IMPORTER, dir / "importer.so");
  fs::create_symlink(LINKED_PROVIDER, dir / "sub" / "provider.so");
  std::string path = (dir / "model.composition").string();
  writeFile(path, body);
  return path;
}

TEST(CompositionFile, LoadsAndLinksRelativeToItsFolder) {
  std::string path = writeComposition("tessel-composition 1\n"
                                      "artifact importer.so\n"
                                      "artifact sub/provider.so\n"
                                      "entry twice\n");
  EXPECT_TRUE(rt::isCompositionFile(path));
  EXPECT_FALSE(rt::isCompositionFile(LINKED_IMPORTER));
  Composition c = Composition::load(path);
  EXPECT_EQ(c.path(), path);
  EXPECT_EQ(c.entry(), "twice");
  EXPECT_EQ(c.defaultFunction().name(), "twice");
  EXPECT_EQ(runTwice(c.defaultFunction()), (std::vector<float>{3, 5, 7}));
}

TEST(CompositionFile, DefaultFunctionWithoutEntry) {
  // Four functions nothing imports and none is 'main'.
  std::string path = writeComposition(
      "tessel-composition 1\nartifact importer.so\nartifact sub/provider.so\n");
  Composition c = Composition::load(path);
  expectError([&] { c.defaultFunction(); }, TESSEL_INVALID_ARGUMENT,
              {"4 functions no artifact imports and none is 'main' (twice, "
               "embed, threads_via, plain)"});
}

TEST(CompositionFile, Errors) {
  std::string missing = writeComposition("tessel-composition 1\n"
                                         "artifact importer.so\n"
                                         "artifact nope.so\n");
  expectError([&] { Composition::load(missing); }, TESSEL_NOT_FOUND,
              {"composition '" + missing + "', line 3: cannot load artifact '",
               "nope.so': no such file"});
  std::string badEntry = writeComposition("tessel-composition 1\n"
                                          "artifact importer.so\n"
                                          "artifact sub/provider.so\n"
                                          "entry nope\n");
  expectError([&] { Composition::load(badEntry); }, TESSEL_NOT_FOUND,
              {"entry 'nope' is not exported by any of its artifacts"});
  std::string malformed =
      writeComposition("tessel-composition 1\nartifact importer.so\nlink x\n");
  expectError([&] { Composition::load(malformed); }, TESSEL_INVALID_ARGUMENT,
              {"composition '" + malformed + "', line 3: unknown record 'link'"});
  std::string unlinked = writeComposition("tessel-composition 1\n"
                                          "artifact importer.so\n");
  expectError([&] { Composition::load(unlinked); }, TESSEL_NOT_FOUND,
              {"imports 'scale', which no artifact of the composition exports"});
  expectError([] { Composition::load("/nonexistent/model.composition"); },
              TESSEL_NOT_FOUND,
              {"cannot load composition '/nonexistent/model.composition': no "
               "such file"});
  expectError([] { Composition::link({}); }, TESSEL_INVALID_ARGUMENT,
              {"needs at least one artifact"});
}

TEST(CompositionFile, CApiNullArguments) {
  tessel_composition_t *c = nullptr;
  tessel_status_t *s = tessel_composition_load(nullptr, &c);
  EXPECT_EQ(tessel_status_code(s), TESSEL_INVALID_ARGUMENT);
  tessel_status_free(s);
  EXPECT_STREQ(tessel_composition_path(nullptr), "");
  EXPECT_EQ(tessel_composition_artifact_at(nullptr, 0), nullptr);
  tessel_composition_free(nullptr);
}

} // namespace
