//===- EmitArtifactABI.cpp - Manifest and entry points --------------------===//
//
// Implements docs/artifact-abi.md on the LLVM dialect: every exported
// function gets a uniform `i32 (ptr buffers, ptr context)` entry that builds
// the static memref descriptors the lowered function expects, so the runtime
// never needs to know MLIR's descriptor layout.
//
//===----------------------------------------------------------------------===//
#include "tessel/Conversion/Passes.h"
// The ABI's names come from the one header both sides share.
#include "tessel/Runtime/tessel_abi.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringSet.h"
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

struct FunctionSig {
  StringRef name, symbol, entry;
  SmallVector<TensorSig> inputs, outputs;
};

/// Reads one record of `tessel.functions`; the attribute may come from
/// hand-written IR, so every field is checked.
FailureOr<FunctionSig> readFunction(ModuleOp module, Attribute attr) {
  auto bad = [&](StringRef what) {
    module.emitError() << "malformed '" << tessel::kFunctionsAttrName
                       << "' record (" << what << "): " << attr;
    return failure();
  };
  auto fn = dyn_cast<DictionaryAttr>(attr);
  if (!fn)
    return bad("not a dictionary");
  FunctionSig sig;
  for (auto [key, field] : {std::pair<StringRef, StringRef *>{"name", &sig.name},
                            {"symbol", &sig.symbol},
                            {"entry", &sig.entry}}) {
    auto str = fn.getAs<StringAttr>(key);
    if (!str || str.getValue().empty())
      return bad(("missing string '" + key + "'").str());
    *field = str.getValue();
  }
  for (auto [key, list] : {std::pair<StringRef, SmallVector<TensorSig> *>{
                               "inputs", &sig.inputs},
                           {"outputs", &sig.outputs}}) {
    auto array = fn.getAs<ArrayAttr>(key);
    if (!array)
      return bad(("missing array '" + key + "'").str());
    for (Attribute a : array) {
      auto d = dyn_cast<DictionaryAttr>(a);
      auto name = d ? d.getAs<StringAttr>("name") : StringAttr();
      auto dtype = d ? d.getAs<StringAttr>("dtype") : StringAttr();
      auto shape = d ? d.getAs<DenseI64ArrayAttr>("shape") : DenseI64ArrayAttr();
      if (!name || !dtype || !shape)
        return bad(("an entry of '" + key + "' lacks name/dtype/shape").str());
      list->push_back({name.getValue(), dtype.getValue(), shape.asArrayRef()});
    }
  }
  return sig;
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
    os << TESSEL_MANIFEST_MAGIC " 1\n" << "target " << triple << "\n";
    if (module.lookupSymbol(TESSEL_MANIFEST_SYMBOL)) {
      module.emitError() << "the symbol '" TESSEL_MANIFEST_SYMBOL
                            "' is reserved for the artifact manifest";
      return signalPassFailure();
    }
    llvm::StringSet<> entries;
    for (Attribute a : functions) {
      FailureOr<FunctionSig> sig = readFunction(module, a);
      if (failed(sig) || failed(emitEntry(module, *sig)))
        return signalPassFailure();
      entries.insert(sig->entry);
      os << "function " << sig->name << ' ' << sig->entry << "\n";
      for (const TensorSig &t : sig->inputs)
        printTensorLine(os, "input", t);
      for (const TensorSig &t : sig->outputs)
        printTensorLine(os, "output", t);
      os << "end\n";
    }
    emitManifest(module, manifest);
    module->removeAttr(tessel::kFunctionsAttrName);
    // Only entries and the manifest are the artifact's interface; every
    // other function defined here (the model's, helpers) is internal.
    for (auto fn : module.getOps<LLVM::LLVMFuncOp>())
      if (!fn.isExternal() && !entries.contains(fn.getName()))
        fn.setLinkage(LLVM::Linkage::Internal);
  }

  LogicalResult emitEntry(ModuleOp module, const FunctionSig &sig) {
    StringRef name = sig.name, entry = sig.entry;
    auto target = module.lookupSymbol<LLVM::LLVMFuncOp>(sig.symbol);
    if (!target)
      return module.emitError() << "function '" << name << "' (symbol '"
                                << sig.symbol
                                << "') was not lowered to llvm.func";
    if (module.lookupSymbol(entry))
      return module.emitError() << "the entry symbol '" << entry
                                << "' of function '" << name
                                << "' is already defined";
    if (!isa<LLVM::LLVMVoidType>(target.getFunctionType().getReturnType()))
      return target.emitError()
             << "lowered function still returns values; results must have "
                "become out-params (buffer-results-to-out-params)";
    SmallVector<TensorSig> buffers(sig.inputs);
    llvm::append_range(buffers, sig.outputs);
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
    // The kernel library reads its thread count from the invoke context.
    if (LLVM::LLVMFuncOp setContext = kernelContextSetter(module, b, loc))
      LLVM::CallOp::create(b, loc, setContext,
                           ValueRange{body->getArgument(1)});
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
    return success();
  }

  /// tessel_kernel_set_context, declared on demand, if the module calls
  /// into the kernel library (include/tessel/Kernels/tessel_kernels.h).
  static LLVM::LLVMFuncOp kernelContextSetter(ModuleOp module, OpBuilder &b,
                                              Location loc) {
    constexpr StringLiteral name = "tessel_kernel_set_context";
    if (auto fn = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
      return fn;
    bool usesKernels = false;
    for (auto fn : module.getOps<LLVM::LLVMFuncOp>())
      usesKernels |= fn.isExternal() && fn.getName().starts_with("tessel_kernel_");
    if (!usesKernels)
      return nullptr;
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(module.getBody());
    auto ptrTy = LLVM::LLVMPointerType::get(b.getContext());
    return LLVM::LLVMFuncOp::create(
        b, loc, name,
        LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(b.getContext()),
                                    {ptrTy}));
  }

  void emitManifest(ModuleOp module, StringRef text) {
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    std::string withNul = text.str();
    withNul.push_back('\0');
    auto arrTy = LLVM::LLVMArrayType::get(b.getI8Type(), withNul.size());
    LLVM::GlobalOp::create(b, module.getLoc(), arrTy, /*isConstant=*/true,
                           LLVM::Linkage::External, TESSEL_MANIFEST_SYMBOL,
                           b.getStringAttr(withNul));
  }
};

} // namespace
