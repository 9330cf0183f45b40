//===- RuntimeTest.cpp - artifact loading and invocation ------------------===//
//
// Uses the hand-written artifacts from fake_artifact.c (paths come from
// CMake as FAKE_* macros).
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <fstream>
#include <iterator>

#include <cmath>

using namespace tessel;
using namespace tessel::test;
using rt::Artifact;
using rt::Tensor;

namespace {

Tensor f32(const std::vector<int64_t> &dims, std::vector<float> values) {
  Tensor t = Tensor::allocate(TESSEL_DTYPE_F32, dims);
  EXPECT_EQ(t.numElements(), values.size());
  std::copy(values.begin(), values.end(), t.data<float>());
  return t;
}

std::vector<Tensor> addInputs() {
  std::vector<Tensor> in;
  in.push_back(f32({2, 3}, {1, 2, 3, 4, 5, 6}));
  in.push_back(f32({2, 3}, {10, 20, 30, 40, 50, 60}));
  return in;
}

TEST(Artifact, LoadsManifest) {
  Artifact a = Artifact::load(FAKE_MULTI);
  EXPECT_EQ(a.path(), FAKE_MULTI);
  EXPECT_EQ(a.target(), "x86_64-unknown-linux-gnu");
  EXPECT_EQ(tessel_artifact_abi_version(a.get()), 1u);
  std::vector<std::string> names;
  for (const rt::Function &f : a.functions())
    names.push_back(f.name());
  EXPECT_EQ(names, (std::vector<std::string>{"add", "iota", "fail", "threads",
                                             "cast", "copy"}));
  EXPECT_EQ(tessel_artifact_function_at(a.get(), 6), nullptr);
}

TEST(Artifact, SignatureQuery) {
  Artifact a = Artifact::load(FAKE_MULTI);
  rt::Function add = a.function("add");
  EXPECT_EQ(add.symbol(), "tessel_entry_add");
  ASSERT_EQ(add.inputs().size(), 2u);
  EXPECT_EQ(add.inputs()[1].name, "y");
  EXPECT_EQ(add.inputs()[1].dtype, TESSEL_DTYPE_F32);
  EXPECT_EQ(add.inputs()[1].dims, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(add.signature(),
            "add(x: 2x3xf32, y: 2x3xf32) -> (out0: 2x3xf32)");
  EXPECT_EQ(a.function("fail").signature(), "fail(x: f32) -> (out0: f32)");

  tessel_value_info_t info;
  tessel_status_t *s = tessel_function_output(add.get(), 1, &info);
  EXPECT_EQ(tessel_status_code(s), TESSEL_INVALID_ARGUMENT);
  tessel_status_free(s);
}

TEST(Artifact, LookupMissingFunctionListsAvailable) {
  Artifact a = Artifact::load(FAKE_MULTI);
  expectError([&] { a.function("nope"); }, TESSEL_NOT_FOUND,
              {"no function 'nope'", "add, iota, fail, threads, cast, copy"});
}

TEST(Invoke, AddsTensors) {
  Artifact a = Artifact::load(FAKE_MULTI);
  std::vector<Tensor> out = a.function("add").invoke(addInputs());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(out[0].data()) % 64, 0u);
  const float want[] = {11, 22, 33, 44, 55, 66};
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(out[0].data<float>()[i], want[i]);
}

TEST(Invoke, NoInputsI64Output) {
  Artifact a = Artifact::load(FAKE_MULTI);
  std::vector<Tensor> out = a.function("iota").invoke({});
  ASSERT_EQ(out[0].dtype(), TESSEL_DTYPE_I64);
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(out[0].data<int64_t>()[i], i);
}

TEST(Invoke, MultipleOutputsAndBool) {
  Artifact a = Artifact::load(FAKE_MULTI);
  std::vector<Tensor> in;
  in.push_back(Tensor::allocate(TESSEL_DTYPE_I32, {3}));
  int32_t xs[] = {-2, 0, 6};
  std::copy(xs, xs + 3, in[0].data<int32_t>());
  std::vector<Tensor> out = a.function("cast").invoke(in);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].data<double>()[2], 3.0);
  EXPECT_EQ(out[1].dtype(), TESSEL_DTYPE_I1);
  EXPECT_EQ(out[1].data<uint8_t>()[0], 0);
  EXPECT_EQ(out[1].data<uint8_t>()[2], 1);
}

TEST(Invoke, WritesIntoCallerOutputs) {
  Artifact a = Artifact::load(FAKE_MULTI);
  std::vector<Tensor> out;
  out.push_back(Tensor::allocate(TESSEL_DTYPE_F32, {2, 3}));
  void *before = out[0].data();
  a.function("add").invoke(addInputs(), out);
  EXPECT_EQ(out[0].data(), before);
  EXPECT_EQ(out[0].data<float>()[5], 66.0f);
}

TEST(Invoke, AcceptsViewsOfCallerMemory) {
  Artifact a = Artifact::load(FAKE_MULTI);
  float x[6] = {1, 1, 1, 1, 1, 1}, y[6] = {0, 1, 2, 3, 4, 5}, o[6] = {};
  std::vector<Tensor> in, out;
  in.push_back(Tensor::wrap(TESSEL_DTYPE_F32, {2, 3}, x, sizeof x));
  in.push_back(Tensor::wrap(TESSEL_DTYPE_F32, {2, 3}, y, sizeof y));
  out.push_back(Tensor::wrap(TESSEL_DTYPE_F32, {2, 3}, o, sizeof o));
  EXPECT_TRUE(in[0].isView());
  a.function("add").invoke(in, out);
  EXPECT_EQ(o[5], 6.0f);
}

TEST(Invoke, PassesThreadCountInContext) {
  Artifact a = Artifact::load(FAKE_MULTI);
  rt::Function fn = a.function("threads");
  EXPECT_EQ(fn.invoke({})[0].data<int32_t>()[0], 1);
  EXPECT_EQ(fn.invoke({}, rt::InvokeOptions{4})[0].data<int32_t>()[0], 4);

  // C API: NULL options mean the defaults.
  tessel_tensor_t *out = nullptr;
  ASSERT_EQ(tessel_function_invoke(fn.get(), nullptr, 0, &out, 1, nullptr),
            nullptr);
  EXPECT_EQ(*static_cast<int32_t *>(tessel_tensor_data(out)), 1);
  tessel_tensor_free(out);
}

TEST(Invoke, WrongInputCount) {
  Artifact a = Artifact::load(FAKE_MULTI);
  std::vector<Tensor> in = addInputs();
  in.pop_back();
  expectError([&] { a.function("add").invoke(in); }, TESSEL_INVALID_ARGUMENT,
              {"function 'add' expects 2 input(s), got 1"});
}

TEST(Invoke, WrongInputShape) {
  Artifact a = Artifact::load(FAKE_MULTI);
  std::vector<Tensor> in = addInputs();
  in[1] = f32({3, 2}, {1, 2, 3, 4, 5, 6});
  expectError([&] { a.function("add").invoke(in); }, TESSEL_INVALID_ARGUMENT,
              {"input 1 ('y') has shape [3,2], expected [2,3]"});
}

TEST(Invoke, WrongInputDType) {
  Artifact a = Artifact::load(FAKE_MULTI);
  std::vector<Tensor> in = addInputs();
  in[0] = Tensor::allocate(TESSEL_DTYPE_F64, {2, 3});
  expectError([&] { a.function("add").invoke(in); }, TESSEL_INVALID_ARGUMENT,
              {"input 0 ('x') has dtype f64, expected f32"});
}

TEST(Invoke, WrongScalarVersusVector) {
  Artifact a = Artifact::load(FAKE_MULTI);
  std::vector<Tensor> in;
  in.push_back(f32({1}, {1}));
  expectError([&] { a.function("fail").invoke(in); }, TESSEL_INVALID_ARGUMENT,
              {"input 0 ('x') has shape [1], expected []"});
}

TEST(Invoke, WrongCallerOutput) {
  Artifact a = Artifact::load(FAKE_MULTI);
  std::vector<Tensor> out;
  out.push_back(Tensor::allocate(TESSEL_DTYPE_F32, {6}));
  expectError([&] { a.function("add").invoke(addInputs(), out); },
              TESSEL_INVALID_ARGUMENT,
              {"output 0 ('out0') has shape [6], expected [2,3]"});
}

TEST(Invoke, CApiArgumentErrors) {
  Artifact a = Artifact::load(FAKE_MULTI);
  const tessel_function_t *add = a.function("add").get();
  std::vector<Tensor> in = addInputs();
  tessel_tensor_t *inputs[2] = {in[0].get(), nullptr};
  tessel_tensor_t *outputs[2] = {nullptr, nullptr};

  tessel_status_t *s = tessel_function_invoke(add, inputs, 2, outputs, 1, nullptr);
  EXPECT_EQ(tessel_status_code(s), TESSEL_INVALID_ARGUMENT);
  EXPECT_NE(std::string(tessel_status_message(s)).find("input 1 ('y') is NULL"),
            std::string::npos);
  tessel_status_free(s);

  inputs[1] = in[1].get();
  s = tessel_function_invoke(add, inputs, 2, outputs, 2, nullptr);
  EXPECT_NE(std::string(tessel_status_message(s)).find("got 2 output slot(s)"),
            std::string::npos);
  tessel_status_free(s);
  EXPECT_EQ(outputs[0], nullptr);
}

TEST(Invoke, NonZeroEntryReturnIsAnError) {
  Artifact a = Artifact::load(FAKE_MULTI);
  tessel_tensor_t *x = nullptr, *out = nullptr;
  ASSERT_EQ(tessel_tensor_allocate(TESSEL_DTYPE_F32, 0, nullptr, &x), nullptr);
  tessel_status_t *s = tessel_function_invoke(a.function("fail").get(), &x, 1,
                                              &out, 1, nullptr);
  EXPECT_EQ(tessel_status_code(s), TESSEL_EXECUTION_FAILED);
  EXPECT_STREQ(tessel_status_message(s),
               "function 'fail' failed: entry point 'tessel_entry_fail' "
               "returned 7");
  EXPECT_EQ(out, nullptr); // the runtime's output was released
  tessel_status_free(s);
  tessel_tensor_free(x);
}

// ---- load errors -------------------------------------------------------

TEST(LoadError, MissingFile) {
  expectError([] { Artifact::load("/nonexistent/model.so"); },
              TESSEL_NOT_FOUND,
              {"cannot load artifact '/nonexistent/model.so'", "no such file"});
}

TEST(LoadError, Directory) {
  expectError([] { Artifact::load(TESSEL_TEST_TMPDIR); },
              TESSEL_INVALID_ARGUMENT, {"is a directory"});
}

TEST(LoadError, NotElf) {
  std::string path = tmpPath("so");
  writeFile(path, "this is not a shared library\n");
  expectError([&] { Artifact::load(path); }, TESSEL_INVALID_ARTIFACT,
              {path, "not an ELF shared library"});
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The seal (include/tessel/Runtime/ArtifactSeal.h) is checked before
// dlopen: a damaged file is an error, never a SIGBUS in the loader.
TEST(LoadError, TruncatedAnywhere) {
  std::string bytes = readFile(FAKE_SINGLE);
  ASSERT_GT(bytes.size(), 1000u);
  for (size_t size : {size_t(4), size_t(64), size_t(600), bytes.size() / 2,
                      bytes.size() - 33, bytes.size() - 1}) {
    std::string path = tmpPath(std::to_string(size) + ".so");
    writeFile(path, bytes.substr(0, size));
    expectError([&] { Artifact::load(path); }, TESSEL_INVALID_ARTIFACT,
                {path});
  }
}

TEST(LoadError, UnsealedOrEdited) {
  std::string bytes = readFile(FAKE_SINGLE);
  std::string unsealed = tmpPath("unsealed.so");
  writeFile(unsealed, bytes.substr(0, bytes.size() - 32));
  expectError([&] { Artifact::load(unsealed); }, TESSEL_INVALID_ARTIFACT,
              {"no Tessel seal"});
  // Edit the manifest in place: an output shape [2,3] -> [1,1].
  size_t at = bytes.find("[2,3]");
  ASSERT_NE(at, std::string::npos);
  std::string edited = bytes;
  edited.replace(at, 5, "[1,1]");
  std::string path = tmpPath("edited.so");
  writeFile(path, edited);
  expectError([&] { Artifact::load(path); }, TESSEL_INVALID_ARTIFACT,
              {"checksum of its contents does not match"});
  std::string extended = tmpPath("extended.so");
  writeFile(extended, bytes + "x");
  expectError([&] { Artifact::load(extended); }, TESSEL_INVALID_ARTIFACT,
              {"no Tessel seal"});
}

TEST(LoadError, EntryResolvesToAnotherLibrary) {
  expectError([] { Artifact::load(FAKE_FOREIGN_ENTRY); },
              TESSEL_INVALID_ARTIFACT,
              {"entry symbol 'malloc'", "not defined by the artifact"});
}

// The library runs from a private copy: the file may change underneath.
TEST(Load, FileReplacedAfterLoading) {
  std::string path = tmpPath("so");
  writeFile(path, readFile(FAKE_SINGLE));
  Artifact a = Artifact::load(path);
  writeFile(path, "x"); // truncated and rewritten in place
  auto f = a.function("main");
  std::vector<Tensor> in;
  in.push_back(Tensor::allocate(TESSEL_DTYPE_F32, {2, 3}));
  in.push_back(Tensor::allocate(TESSEL_DTYPE_F32, {2, 3}));
  std::vector<Tensor> out = f.invoke(in);
  EXPECT_EQ(out.size(), 2u);
}

TEST(LoadError, NotATesselArtifact) {
  expectError([] { Artifact::load(FAKE_NO_MANIFEST); },
              TESSEL_INVALID_ARTIFACT,
              {FAKE_NO_MANIFEST, "not a Tessel artifact",
               "tessel_artifact_manifest"});
}

TEST(LoadError, BadMagic) {
  expectError([] { Artifact::load(FAKE_BAD_MAGIC); }, TESSEL_INVALID_ARTIFACT,
              {FAKE_BAD_MAGIC, "not a Tessel artifact manifest",
               "onnx-artifact 1"});
}

TEST(LoadError, NewerVersion) {
  expectError(
      [] { Artifact::load(FAKE_NEWER_VERSION); }, TESSEL_UNSUPPORTED,
      {FAKE_NEWER_VERSION, "ABI version 9 is newer", "supports (version 8)"});
}

TEST(LoadError, DeviceWithoutItsRuntime) {
  expectError([] { Artifact::load(FAKE_DEVICE_WITHOUT_RUNTIME); },
              TESSEL_INVALID_ARTIFACT,
              {FAKE_DEVICE_WITHOUT_RUNTIME, "the manifest names device 'cuda'",
               "does not define '__tessel_cuda_check'"});
}

TEST(LoadError, RanksWithoutTheirRuntime) {
  expectError([] { Artifact::load(FAKE_RANKS_WITHOUT_RUNTIME); },
              TESSEL_INVALID_ARTIFACT,
              {FAKE_RANKS_WITHOUT_RUNTIME, "the manifest names 2 MPI processes",
               "does not define '__tessel_mpi_init'"});
}

TEST(LoadError, MissingEntrySymbol) {
  expectError([] { Artifact::load(FAKE_MISSING_ENTRY); },
              TESSEL_INVALID_ARTIFACT,
              {FAKE_MISSING_ENTRY,
               "entry symbol 'tessel_entry_g' of function 'g' is missing"});
}

TEST(LoadError, MalformedManifestLine) {
  expectError([] { Artifact::load(FAKE_MALFORMED); }, TESSEL_INVALID_ARTIFACT,
              {FAKE_MALFORMED, "malformed manifest, line 4",
               "shape '2,3' is not of the form"});
}

TEST(LoadError, DynamicDimension) {
  expectError([] { Artifact::load(FAKE_DYNAMIC_DIM); },
              TESSEL_INVALID_ARTIFACT,
              {FAKE_DYNAMIC_DIM, "run-time dimension '?' in shape '[?,3]' "
                                 "needs ABI version 6"});
}

TEST(LoadError, CApiLeavesOutUntouched) {
  tessel_artifact_t *a = reinterpret_cast<tessel_artifact_t *>(0x1);
  tessel_status_t *s = tessel_artifact_load("/nonexistent.so", &a);
  EXPECT_EQ(tessel_status_code(s), TESSEL_NOT_FOUND);
  EXPECT_EQ(a, reinterpret_cast<tessel_artifact_t *>(0x1));
  tessel_status_free(s);
}

TEST(Status, NullIsOk) {
  EXPECT_EQ(tessel_status_code(nullptr), TESSEL_OK);
  EXPECT_STREQ(tessel_status_message(nullptr), "OK");
  EXPECT_STREQ(tessel_status_code_name(TESSEL_EXECUTION_FAILED),
               "EXECUTION_FAILED");
  tessel_status_free(nullptr);
}

} // namespace
