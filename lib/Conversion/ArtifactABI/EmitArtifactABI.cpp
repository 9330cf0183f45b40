//===- EmitArtifactABI.cpp - Manifest and entry points --------------------===//
//
// Implements docs/artifact-abi.md on the LLVM dialect: every exported
// function gets a uniform `i32 (ptr buffers, ptr context)` entry that builds
// the static memref descriptors the lowered function expects, so the runtime
// never needs to know MLIR's descriptor layout.
//
//===----------------------------------------------------------------------===//
#include "tessel/Conversion/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELEMITARTIFACTABI
#include "tessel/Conversion/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;

namespace {

struct TensorSig {
  StringRef name, dtype;
  ArrayRef<int64_t> shape;
};

SmallVector<TensorSig> readTensors(DictionaryAttr fn, StringRef key) {
  SmallVector<TensorSig> out;
  for (Attribute a : fn.getAs<ArrayAttr>(key)) {
    auto d = cast<DictionaryAttr>(a);
    out.push_back({d.getAs<StringAttr>("name").getValue(),
                   d.getAs<StringAttr>("dtype").getValue(),
                   d.getAs<DenseI64ArrayAttr>("shape").asArrayRef()});
  }
  return out;
}

void printTensorLine(llvm::raw_ostream &os, StringRef kind,
                     const TensorSig &t) {
  os << kind << ' ' << t.name << ' ' << t.dtype << " [";
  llvm::interleave(t.shape, os, ",");
  os << "]\n";
}

struct TesselEmitArtifactABIPass
    : tessel::impl::TesselEmitArtifactABIBase<TesselEmitArtifactABIPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto functions = module->getAttrOfType<ArrayAttr>(tessel::kFunctionsAttrName);
    if (!functions) {
      module.emitError() << "missing '" << tessel::kFunctionsAttrName
                         << "': run tessel-record-signature on the model "
                            "before lowering";
      return signalPassFailure();
    }
    std::string triple = targetTriple.empty()
                             ? llvm::sys::getDefaultTargetTriple()
                             : targetTriple;
    std::string manifest;
    llvm::raw_string_ostream os(manifest);
    os << "tessel-artifact 1\n" << "target " << triple << "\n";
    for (Attribute a : functions) {
      auto fn = cast<DictionaryAttr>(a);
      StringRef name = fn.getAs<StringAttr>("name").getValue();
      SmallVector<TensorSig> inputs = readTensors(fn, "inputs");
      SmallVector<TensorSig> outputs = readTensors(fn, "outputs");
      std::string entry = ("tessel_entry_" + name).str();
      if (failed(emitEntry(module, name, entry, inputs, outputs)))
        return signalPassFailure();
      os << "function " << name << ' ' << entry << "\n";
      for (const TensorSig &t : inputs)
        printTensorLine(os, "input", t);
      for (const TensorSig &t : outputs)
        printTensorLine(os, "output", t);
      os << "end\n";
    }
    emitManifest(module, manifest);
    module->removeAttr(tessel::kFunctionsAttrName);
  }

  LogicalResult emitEntry(ModuleOp module, StringRef name, StringRef entry,
                          ArrayRef<TensorSig> inputs,
                          ArrayRef<TensorSig> outputs) {
    auto target = module.lookupSymbol<LLVM::LLVMFuncOp>(name);
    if (!target)
      return module.emitError() << "function '" << name
                                << "' was not lowered to llvm.func";
    if (!isa<LLVM::LLVMVoidType>(target.getFunctionType().getReturnType()))
      return target.emitError()
             << "lowered function still returns values; results must have "
                "become out-params (buffer-results-to-out-params)";
    SmallVector<TensorSig> buffers(inputs);
    llvm::append_range(buffers, outputs);
    unsigned expectedArgs = 0;
    for (const TensorSig &t : buffers)
      expectedArgs += 3 + 2 * t.shape.size();
    if (target.getNumArguments() != expectedArgs)
      return target.emitError()
             << "lowered function takes " << target.getNumArguments()
             << " arguments, but its signature needs " << expectedArgs
             << " for expanded memref descriptors";

    MLIRContext *ctx = module.getContext();
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    Location loc = target.getLoc();
    auto ptrTy = LLVM::LLVMPointerType::get(ctx);
    auto i32 = b.getI32Type(), i64 = b.getI64Type();
    auto fnTy = LLVM::LLVMFunctionType::get(i32, {ptrTy, ptrTy});
    auto entryFn = LLVM::LLVMFuncOp::create(b, loc, entry, fnTy);
    Block *body = entryFn.addEntryBlock(b);
    b.setInsertionPointToStart(body);
    auto c64 = [&](int64_t v) {
      return LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(v));
    };
    SmallVector<Value> args;
    for (auto [i, t] : llvm::enumerate(buffers)) {
      Value slot = LLVM::GEPOp::create(b, loc, ptrTy, ptrTy,
                                       body->getArgument(0),
                                       ArrayRef<LLVM::GEPArg>{(int32_t)i});
      Value data = LLVM::LoadOp::create(b, loc, ptrTy, slot);
      // allocated ptr, aligned ptr, offset, sizes..., strides (row-major).
      args.append({data, data, c64(0)});
      for (int64_t d : t.shape)
        args.push_back(c64(d));
      SmallVector<int64_t> strides(t.shape.size(), 1);
      for (int64_t k = (int64_t)t.shape.size() - 2; k >= 0; --k)
        strides[k] = strides[k + 1] * t.shape[k + 1];
      for (int64_t s : strides)
        args.push_back(c64(s));
    }
    LLVM::CallOp::create(b, loc, target, args);
    LLVM::ReturnOp::create(
        b, loc, LLVM::ConstantOp::create(b, loc, i32, b.getI32IntegerAttr(0)));
    // Only entries and the manifest are the artifact's interface.
    target.setLinkage(LLVM::Linkage::Internal);
    return success();
  }

  void emitManifest(ModuleOp module, StringRef text) {
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    std::string withNul = text.str();
    withNul.push_back('\0');
    auto arrTy = LLVM::LLVMArrayType::get(b.getI8Type(), withNul.size());
    LLVM::GlobalOp::create(b, module.getLoc(), arrTy, /*isConstant=*/true,
                           LLVM::Linkage::External, "tessel_artifact_manifest",
                           b.getStringAttr(withNul));
  }
};

} // namespace
