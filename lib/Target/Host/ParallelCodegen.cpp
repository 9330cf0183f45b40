//===- ParallelCodegen.cpp - LLVM optimization and codegen on threads -----===//
//
// A model lowers to one large LLVM module: the entry function and one
// function per outlined parallel loop. LLVM's optimizer and code generator
// run on one module on one thread, so a large model (Swin-T: 113k lines of
// IR) spent 20 s there on one core. As lld's and LTO's parallel code
// generation do, the module is split into parts (llvm::SplitModule), each
// part is serialized to bitcode and parsed back in a context of its own
// (an LLVMContext is not thread-safe), and each is optimized and compiled
// on a thread of its own. Nothing is lost to the split that Tessel's code
// uses: the parts call each other only through the thread pool's function
// pointers and the kernel library, never inline.
//
//===----------------------------------------------------------------------===//
#include "ParallelCodegen.h"

#include "NativeCodegen.h"

#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"
#include "llvm/Transforms/Utils/SplitModule.h"

#include <mutex>

using namespace llvm;

namespace {

/// Below this many instructions a module compiles in about a second on one
/// thread, less than the split and the bitcode round trip would save.
constexpr uint64_t kMinInstructionsToSplit = 20000;
constexpr unsigned kMaxParts = 8;

std::unique_ptr<TargetMachine> copyOf(const TargetMachine &tm) {
  return std::unique_ptr<TargetMachine>(tm.getTarget().createTargetMachine(
      tm.getTargetTriple(), tm.getTargetCPU(), tm.getTargetFeatureString(),
      tm.Options, Reloc::PIC_, std::nullopt, tm.getOptLevel()));
}

} // namespace

unsigned mlir::tessel::codegenParts(const Module &module, unsigned requested) {
  if (requested != 0)
    return requested;
  uint64_t instructions = 0;
  for (const Function &f : module)
    instructions += f.getInstructionCount();
  if (instructions < kMinInstructionsToSplit)
    return 1;
  return std::min<unsigned>(
      kMaxParts, llvm::hardware_concurrency().compute_thread_count());
}

Expected<std::vector<std::string>> mlir::tessel::compileInParts(
    std::unique_ptr<LLVMContext> context, std::unique_ptr<Module> module,
    const TargetMachine &host,
    unsigned optLevel, unsigned parts,
    function_ref<Expected<std::string>(unsigned)> objectPath) {
  std::vector<SmallString<0>> bitcode;
  SplitModule(
      *module, parts,
      [&](std::unique_ptr<Module> part) {
        SmallString<0> buffer;
        raw_svector_ostream os(buffer);
        WriteBitcodeToFile(*part, os);
        bitcode.push_back(std::move(buffer));
      },
      /*PreserveLocals=*/false);
  // The context owns the constants (the weights): free it with the module
  // before the parts are parsed, so the weights are not held twice more.
  module.reset();
  context.reset();

  std::vector<std::string> objects;
  std::vector<std::unique_ptr<TargetMachine>> machines;
  for (unsigned i = 0; i < bitcode.size(); ++i) {
    Expected<std::string> path = objectPath(i);
    if (!path)
      return path.takeError();
    objects.push_back(*path);
    machines.push_back(copyOf(host));
    if (!machines.back())
      return createStringError(inconvertibleErrorCode(),
                               "cannot create a target machine for '" +
                                   host.getTargetTriple().str() + "'");
  }

  std::mutex errorsMutex;
  std::string errors;
  DefaultThreadPool pool(hardware_concurrency(bitcode.size()));
  for (unsigned i = 0; i < bitcode.size(); ++i) {
    pool.async([&, i] {
      auto fail = [&](Error e) {
        std::lock_guard<std::mutex> lock(errorsMutex);
        errors += (errors.empty() ? "" : "\n") + ("part " + Twine(i) + ": ").str() +
                  toString(std::move(e));
      };
      LLVMContext context;
      Expected<std::unique_ptr<Module>> part = parseBitcodeFile(
          MemoryBufferRef(bitcode[i].str(), "tessel-model-part"), context);
      if (!part)
        return fail(part.takeError());
      bitcode[i] = SmallString<0>();
      optimizeModule(**part, *machines[i], optLevel);
      if (Error e = writeObjectFile(**part, *machines[i], objects[i]))
        return fail(std::move(e));
    });
  }
  pool.wait();
  if (!errors.empty())
    return createStringError(inconvertibleErrorCode(), errors);
  return objects;
}
