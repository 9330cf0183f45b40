//===- EmitArtifactABI.cpp - Manifest and entry points --------------------===//
//
// Implements docs/artifact-abi.md on the LLVM dialect: every exported
// function gets a uniform `i32 (ptr buffers, ptr context)` entry that builds
// the static memref descriptors the lowered function expects, so the runtime
// never needs to know MLIR's descriptor layout.
//
// An artifact that calls functions of other artifacts (imports) also gets
// the import table (ImportTable.cpp), and each of its entries checks that
// its imports are linked and hands its context to its import calls.
//
//===----------------------------------------------------------------------===//
#include "ImportTable.h"
#include "tessel/Conversion/ArtifactSignature.h"
#include "tessel/Conversion/Passes.h"
#include "tessel/Dialect/Tessel/IR/TesselDialect.h"
// The ABI's names come from the one header both sides share.
#include "tessel/Runtime/tessel_abi.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"
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
  int64_t vocab = 0; // a symbol vocabulary; 0 for plain values
  StringRef part;    // "ROLE:OWNER" of a sequence/optional part; 
  /// The name of each dimension ("" for a static one); empty when the
  /// shape is static.
  SmallVector<StringRef> dimNames;
};

struct FunctionSig {
  StringRef name, symbol, entry;
  SmallVector<TensorSig, 2> inputs, outputs;
  SmallVector<StringRef> imports; // an entry's imports; empty for an import
};


/// Reads the {inputs, outputs} of a record.
LogicalResult readValues(DictionaryAttr record, FunctionSig &sig,
                         llvm::function_ref<LogicalResult(StringRef)> bad) {
  for (auto [key, list] : {std::pair<StringRef, SmallVector<TensorSig, 2> *>{
                               "inputs", &sig.inputs},
                           {"outputs", &sig.outputs}}) {
    auto array = record.getAs<ArrayAttr>(key);
    if (!array)
      return bad(("missing array '" + key + "'").str());
    for (Attribute a : array) {
      auto d = dyn_cast<DictionaryAttr>(a);
      auto name = d ? d.getAs<StringAttr>("name") : StringAttr();
      auto dtype = d ? d.getAs<StringAttr>("dtype") : StringAttr();
      auto shape = d ? d.getAs<DenseI64ArrayAttr>("shape") : DenseI64ArrayAttr();
      if (!name || !dtype || !shape)
        return bad(("an entry of '" + key + "' lacks name/dtype/shape").str());
      TensorSig t{name.getValue(), dtype.getValue(), shape.asArrayRef()};
      FailureOr<SmallVector<StringRef>> names = tessel::recordDimNames(d);
      if (failed(names) ||
          (!names->empty() && names->size() != t.shape.size()))
        return bad(("an entry of '" + key + "' has bad dim_names").str());
      t.dimNames = std::move(*names);
      for (auto [i, dim] : llvm::enumerate(t.shape)) {
        bool named = !t.dimNames.empty() && !t.dimNames[i].empty();
        if (ShapedType::isDynamic(dim) != named || (!named && dim < 0))
          return bad(("an entry of '" + key +
                      "' has a dynamic dimension without a name, or a name "
                      "on a static one")
                         .str());
      }
      if (Attribute v = d.get("vocab")) {
        auto vocab = dyn_cast<IntegerAttr>(v);
        if (!vocab || vocab.getInt() < 1)
          return bad(("an entry of '" + key + "' has a bad vocab").str());
        t.vocab = vocab.getInt();
      }
      if (Attribute p = d.get("part")) {
        auto part = dyn_cast<StringAttr>(p);
        StringRef role =
            part ? part.getValue().split(':').first : StringRef();
        if (!part || !llvm::is_contained({"sizes", "data", "present", "value"},
                                         role) ||
            part.getValue().size() <= role.size() + 1)
          return bad(("an entry of '" + key + "' has a bad part").str());
        t.part = part.getValue();
      }
      list->push_back(t);
    }
  }
  return success();
}

/// Reads one record of `tessel.functions` (or, with `isImport`, of
/// `tessel.imports`); the attribute may come from hand-written IR, so every
/// field is checked.
FailureOr<FunctionSig> readFunction(ModuleOp module, Attribute attr,
                                    bool isImport) {
  StringRef attrName = isImport ? tessel::TesselDialect::getImportsAttrName()
                                : StringRef(tessel::kFunctionsAttrName);
  auto bad = [&](StringRef what) -> LogicalResult {
    module.emitError() << "malformed '" << attrName << "' record (" << what
                       << "): " << attr;
    return failure();
  };
  auto fn = dyn_cast<DictionaryAttr>(attr);
  if (!fn) {
    (void)bad("not a dictionary");
    return failure();
  }
  FunctionSig sig;
  SmallVector<std::pair<StringRef, StringRef *>> strings = {{"name", &sig.name}};
  if (!isImport)
    strings.append({{"symbol", &sig.symbol}, {"entry", &sig.entry}});
  for (auto [key, field] : strings) {
    auto str = fn.getAs<StringAttr>(key);
    if (!str || str.getValue().empty()) {
      (void)bad(("missing string '" + key + "'").str());
      return failure();
    }
    *field = str.getValue();
  }
  if (failed(readValues(fn, sig, bad)))
    return failure();
  if (Attribute used = fn.get("imports")) {
    auto array = dyn_cast<ArrayAttr>(used);
    if (isImport || !array) {
      (void)bad("'imports' must be an array of names on an entry");
      return failure();
    }
    for (Attribute a : array) {
      auto name = dyn_cast<StringAttr>(a);
      if (!name) {
        (void)bad("'imports' must be an array of names on an entry");
        return failure();
      }
      sig.imports.push_back(name.getValue());
    }
  }
  return sig;
}

void printTensorLine(llvm::raw_ostream &os, StringRef kind,
                     const TensorSig &t) {
  os << kind << ' ' << t.name << ' ' << t.dtype << " [";
  llvm::interleave(llvm::seq<size_t>(0, t.shape.size()), os,
                   [&](size_t i) {
                     if (ShapedType::isDynamic(t.shape[i]))
                       os << t.dimNames[i];
                     else
                       os << t.shape[i];
                   },
                   ",");
  os << "]";
  if (t.vocab)
    os << " vocab=" << t.vocab;
  if (!t.part.empty())
    os << " part=" << t.part;
  os << "\n";
}

void printValues(llvm::raw_ostream &os, const FunctionSig &sig) {
  for (const TensorSig &t : sig.inputs)
    printTensorLine(os, "input", t);
  for (const TensorSig &t : sig.outputs)
    printTensorLine(os, "output", t);
}

/// The oldest ABI version that can describe the artifact, so that older
/// runtimes still load what they can: version 1 has neither imports nor
/// vocabularies, version 2 has no named (dynamic) dimensions, version 3 no
/// `requires` record, version 4 no `device` record, version 5 no run-time
/// output dimensions, version 6 no parts (sequences and optionals),
/// version 7 no `ranks` record (MPI processes).
unsigned abiVersion(ArrayRef<FunctionSig> functions,
                    ArrayRef<FunctionSig> imports, bool requiresFeatures,
                    bool onDevice, bool ranks) {
  if (ranks)
    return 8;
  for (const FunctionSig &f : functions)
    for (const TensorSig &t : llvm::concat<const TensorSig>(f.inputs, f.outputs))
      if (!t.part.empty())
        return 7;
  for (const FunctionSig &f : functions)
    for (const TensorSig &t : f.outputs)
      if (tessel::hasRunTimeDim(t.dimNames))
        return 6;
  if (onDevice)
    return 5;
  if (requiresFeatures)
    return 4;
  unsigned version = imports.empty() ? 1 : 2;
  for (const FunctionSig &f : llvm::concat<const FunctionSig>(functions, imports))
    for (const TensorSig &t : llvm::concat<const TensorSig>(f.inputs, f.outputs)) {
      if (!t.dimNames.empty())
        return 3;
      if (t.vocab)
        version = 2;
    }
  return version;
}

/// The bytes of one element of an ABI dtype ("f32", "bf16", "i1", "u64"):
/// its bit width, rounded up to whole bytes.
int64_t dtypeBytes(StringRef dtype) {
  unsigned bits = 0;
  dtype.drop_while([](char c) { return !isdigit(static_cast<unsigned char>(c)); })
      .getAsInteger(10, bits);
  return std::max<int64_t>(1, (bits + 7) / 8);
}

/// The named dimensions of `sig` in the order of the dims array.
SmallVector<StringRef> dimensionOrder(const FunctionSig &sig) {
  SmallVector<SmallVector<StringRef>> names;
  for (const TensorSig &t : sig.inputs)
    names.push_back(t.dimNames);
  return tessel::dimensionOrder(names);
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
    for (StringRef reserved :
         {StringRef(TESSEL_MANIFEST_SYMBOL), StringRef(TESSEL_IMPORTS_SYMBOL),
          StringRef(tessel::kContextGlobal), StringRef(tessel::kStatusGlobal)})
      if (module.lookupSymbol(reserved)) {
        module.emitError() << "the symbol '" << reserved
                           << "' is reserved for the artifact ABI";
        return signalPassFailure();
      }
    SmallVector<FunctionSig, 4> imports, entries;
    llvm::StringMap<unsigned> slots;
    if (auto records = module->getAttrOfType<ArrayAttr>(
            tessel::TesselDialect::getImportsAttrName())) {
      for (Attribute a : records) {
        FailureOr<FunctionSig> sig = readFunction(module, a, /*isImport=*/true);
        if (failed(sig))
          return signalPassFailure();
        if (!slots.try_emplace(sig->name, imports.size()).second) {
          module.emitError() << "import '" << sig->name << "' is recorded twice";
          return signalPassFailure();
        }
        imports.push_back(*sig);
      }
    }
    for (Attribute a : functions) {
      FailureOr<FunctionSig> sig = readFunction(module, a, /*isImport=*/false);
      if (failed(sig))
        return signalPassFailure();
      for (StringRef used : sig->imports)
        if (!slots.count(used)) {
          module.emitError() << "function '" << sig->name << "' uses import '"
                             << used << "', which '"
                             << tessel::TesselDialect::getImportsAttrName()
                             << "' does not record";
          return signalPassFailure();
        }
      entries.push_back(*sig);
    }
    FailureOr<bool> usesStatus =
        tessel::emitImportTable(module, imports.size());
    if (failed(usesStatus))
      return signalPassFailure();

    std::string triple = targetTriple.empty()
                             ? llvm::sys::getDefaultTargetTriple()
                             : targetTriple;
    SmallVector<StringRef> features;
    StringRef(cpuFeatures).split(features, ',', -1, /*KeepEmpty=*/false);
    for (StringRef f : features)
      if (f.empty() || f.find_first_of(" \t\n") != StringRef::npos) {
        module.emitError() << "invalid CPU feature name '" << f << "'";
        return signalPassFailure();
      }
    // Expert parallelism (compose-lower-route's expert-parallel): the
    // artifact runs on that many MPI processes.
    int64_t ranks = 1;
    if (auto attr = module->getAttrOfType<IntegerAttr>(
            tessel::TesselDialect::getRanksAttrName()))
      ranks = attr.getInt();
    std::string manifest;
    llvm::raw_string_ostream os(manifest);
    os << TESSEL_MANIFEST_MAGIC " "
       << abiVersion(entries, imports, !features.empty(), !device.empty(),
                     ranks > 1)
       << "\n"
       << "target " << triple << "\n";
    if (!features.empty()) {
      os << "requires";
      for (StringRef f : features)
        os << ' ' << f;
      os << "\n";
    }
    if (!device.empty())
      os << "device " << device << "\n";
    if (ranks > 1)
      os << "ranks " << ranks << "\n";
    for (auto [slot, sig] : llvm::enumerate(imports)) {
      os << "import " << sig.name << ' ' << slot << "\n";
      printValues(os, sig);
      os << "end\n";
    }
    llvm::StringSet<> entrySymbols;
    for (const FunctionSig &sig : entries) {
      if (failed(emitEntry(module, sig, slots, *usesStatus)))
        return signalPassFailure();
      entrySymbols.insert(sig.entry);
      os << "function " << sig.name << ' ' << sig.entry << "\n";
      printValues(os, sig);
      for (StringRef used : sig.imports)
        os << "uses " << used << "\n";
      os << "end\n";
    }
    emitManifest(module, manifest);
    module->removeAttr(tessel::kFunctionsAttrName);
    module->removeAttr(tessel::TesselDialect::getImportsAttrName());
    // Only entries, the manifest and the import table are the artifact's
    // interface; every other function defined here (the model's, helpers)
    // is internal.
    for (auto fn : module.getOps<LLVM::LLVMFuncOp>())
      if (!fn.isExternal() && !entrySymbols.contains(fn.getName()))
        fn.setLinkage(LLVM::Linkage::Internal);
  }

  LogicalResult emitEntry(ModuleOp module, const FunctionSig &sig,
                          const llvm::StringMap<unsigned> &slots,
                          bool usesStatus) {
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
    // An entry with a run-time-shaped output returns all its buffers
    // (tessel-results-to-out-params); every other one writes out-params.
    bool returnsBuffers = llvm::any_of(sig.outputs, [](const TensorSig &t) {
      return tessel::hasRunTimeDim(t.dimNames);
    });
    if (isa<LLVM::LLVMVoidType>(target.getFunctionType().getReturnType()) ==
        returnsBuffers)
      return target.emitError()
             << (returnsBuffers
                     ? "lowered function returns nothing, but its outputs' "
                       "sizes follow from the data (tessel-results-to-out-"
                       "params keeps them as results)"
                     : "lowered function still returns values; results must "
                       "have become out-params (tessel-results-to-out-"
                       "params)");
    // The results' model attributes (names, dim names) mean nothing to
    // LLVM, which would warn about each.
    if (returnsBuffers)
      target.removeResAttrsAttr();
    SmallVector<TensorSig, 4> buffers(sig.inputs.begin(), sig.inputs.end());
    llvm::append_range(buffers, sig.outputs);
    SmallVector<StringRef> dims = dimensionOrder(sig);
    unsigned expectedArgs = 0;
    for (const TensorSig &t : ArrayRef<TensorSig>(buffers).take_front(
             returnsBuffers ? sig.inputs.size() : buffers.size()))
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
    Value context = body->getArgument(1);
    b.setInsertionPointToStart(body);
    // An import that was never linked fails the entry before it touches
    // anything (the runtime checks the same before calling; this guards
    // callers that use the ABI directly).
    auto tableTy = LLVM::LLVMArrayType::get(ptrTy, slots.size());
    for (StringRef used : sig.imports) {
      Block *check = b.getInsertionBlock();
      Value table =
          LLVM::AddressOfOp::create(b, loc, ptrTy, TESSEL_IMPORTS_SYMBOL);
      Value at = LLVM::GEPOp::create(
          b, loc, ptrTy, tableTy, table,
          ArrayRef<LLVM::GEPArg>{0, int32_t(slots.lookup(used))});
      Value fn = LLVM::LoadOp::create(b, loc, ptrTy, at);
      Value isNull = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq, fn,
                                          LLVM::ZeroOp::create(b, loc, ptrTy));
      Block *fail = b.createBlock(&entryFn.getBody());
      LLVM::ReturnOp::create(
          b, loc,
          LLVM::ConstantOp::create(
              b, loc, i32, b.getI32IntegerAttr(TESSEL_ENTRY_UNRESOLVED_IMPORT))
              .getResult());
      Block *next = b.createBlock(&entryFn.getBody());
      b.setInsertionPointToEnd(check);
      LLVM::CondBrOp::create(b, loc, isNull, fail, next);
      b.setInsertionPointToStart(next);
    }
    // The kernel library reads its thread count from the invoke context.
    if (LLVM::LLVMFuncOp setContext = kernelContextSetter(module, b, loc))
      LLVM::CallOp::create(b, loc, setContext, ValueRange{context});
    // Import calls forward this entry's context and report into this
    // entry's status; the previous values are restored on return, so an
    // entry re-entered through an import on the same thread stays correct.
    Value contextAddr, statusAddr, savedContext, savedStatus;
    if (usesStatus) {
      contextAddr =
          LLVM::AddressOfOp::create(b, loc, ptrTy, tessel::kContextGlobal);
      statusAddr =
          LLVM::AddressOfOp::create(b, loc, ptrTy, tessel::kStatusGlobal);
      savedContext = LLVM::LoadOp::create(b, loc, ptrTy, contextAddr);
      savedStatus = LLVM::LoadOp::create(b, loc, i32, statusAddr);
      LLVM::StoreOp::create(b, loc, context, contextAddr);
      LLVM::StoreOp::create(
          b, loc, LLVM::ConstantOp::create(b, loc, i32, b.getI32IntegerAttr(0)),
          statusAddr);
    }
    auto c64 = [&](int64_t v) {
      return LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(v));
    };
    // The run-time sizes of the named dimensions: an array of int64 behind
    // the last buffer slot (ABI v3), in dimensionOrder.
    llvm::StringMap<Value> dimValues;
    if (!dims.empty()) {
      Value slot = LLVM::GEPOp::create(
          b, loc, ptrTy, ptrTy, body->getArgument(0),
          ArrayRef<LLVM::GEPArg>{int32_t(buffers.size())});
      Value array = LLVM::LoadOp::create(b, loc, ptrTy, slot);
      for (auto [k, name] : llvm::enumerate(dims)) {
        Value at = LLVM::GEPOp::create(b, loc, ptrTy, i64, array,
                                       ArrayRef<LLVM::GEPArg>{int32_t(k)});
        dimValues[name] = LLVM::LoadOp::create(b, loc, i64, at);
      }
    }
    SmallVector<Value> args;
    for (auto [i, t] : llvm::enumerate(buffers)) {
      if (returnsBuffers && i >= sig.inputs.size())
        break;
      Value slot = LLVM::GEPOp::create(b, loc, ptrTy, ptrTy,
                                       body->getArgument(0),
                                       ArrayRef<LLVM::GEPArg>{(int32_t)i});
      Value data = LLVM::LoadOp::create(b, loc, ptrTy, slot);
      // allocated ptr, aligned ptr, offset, sizes..., strides (row-major).
      args.append({data, data, c64(0)});
      SmallVector<Value> sizes;
      for (auto [k, d] : llvm::enumerate(t.shape))
        sizes.push_back(ShapedType::isDynamic(d)
                            ? dimValues.lookup(t.dimNames[k])
                            : Value(c64(d)));
      if (llvm::is_contained(sizes, Value()))
        return module.emitError()
               << "function '" << name << "' has an output dimension that "
               << "no input names";
      SmallVector<Value> strides(sizes.size());
      Value stride = c64(1);
      for (int64_t k = int64_t(sizes.size()) - 1; k >= 0; --k) {
        strides[k] = stride;
        if (k > 0)
          stride = LLVM::MulOp::create(b, loc, stride, sizes[k]);
      }
      llvm::append_range(args, sizes);
      llvm::append_range(args, strides);
    }
    auto call = LLVM::CallOp::create(b, loc, target, args);
    if (returnsBuffers &&
        failed(copyOutResults(module, b, loc, sig, body->getArgument(0),
                              call.getResult())))
      return failure();
    Value rc;
    if (usesStatus) {
      rc = LLVM::LoadOp::create(b, loc, i32, statusAddr);
      LLVM::StoreOp::create(b, loc, savedContext, contextAddr);
      LLVM::StoreOp::create(b, loc, savedStatus, statusAddr);
    } else {
      rc = LLVM::ConstantOp::create(b, loc, i32, b.getI32IntegerAttr(0));
    }
    LLVM::ReturnOp::create(b, loc, rc);
    return success();
  }

  /// Hands the buffers `results` (the lowered function's returned memref
  /// descriptors, one per output) to the caller: a run-time-shaped output
  /// gets its sizes and a fresh aligned_alloc'ed copy in the slot's
  /// tessel_run_time_output; any other is copied into the caller's buffer.
  /// Each returned buffer is then freed: the deallocation pipeline makes a
  /// returned buffer the caller's (a fresh allocation or a clone).
  LogicalResult copyOutResults(ModuleOp module, OpBuilder &b, Location loc,
                               const FunctionSig &sig, Value buffersArg,
                               Value results) {
    MLIRContext *ctx = module.getContext();
    auto ptrTy = LLVM::LLVMPointerType::get(ctx);
    auto i64 = b.getI64Type();
    auto i8 = b.getI8Type();
    auto voidTy = LLVM::LLVMVoidType::get(ctx);
    // The deallocation function the lowered module frees buffers with.
    StringRef freeName = module.lookupSymbol("_mlir_memref_to_llvm_alloc") ||
                                 module.lookupSymbol(
                                     "_mlir_memref_to_llvm_aligned_alloc")
                             ? "_mlir_memref_to_llvm_free"
                             : "free";
    LLVM::LLVMFuncOp freeFn = declare(module, b, loc, freeName,
                                      LLVM::LLVMFunctionType::get(voidTy, {ptrTy}));
    LLVM::LLVMFuncOp allocFn =
        declare(module, b, loc, "aligned_alloc",
                LLVM::LLVMFunctionType::get(ptrTy, {i64, i64}));
    if (!freeFn || !allocFn)
      return module.emitError() << "'" << freeName
                                << "' or 'aligned_alloc' is defined with "
                                   "another type";
    auto c64 = [&](int64_t v) {
      return LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(v));
    };
    for (auto [j, t] : llvm::enumerate(sig.outputs)) {
      Value desc = sig.outputs.size() == 1
                       ? results
                       : LLVM::ExtractValueOp::create(b, loc, results,
                                                      ArrayRef<int64_t>{int64_t(j)})
                             .getResult();
      Value allocated = LLVM::ExtractValueOp::create(b, loc, desc, 0);
      Value aligned = LLVM::ExtractValueOp::create(b, loc, desc, 1);
      Value offset = LLVM::ExtractValueOp::create(b, loc, desc, 2);
      int64_t elem = dtypeBytes(t.dtype);
      Value count = c64(1);
      SmallVector<Value> sizes;
      for (int64_t k = 0; k < int64_t(t.shape.size()); ++k) {
        sizes.push_back(LLVM::ExtractValueOp::create(
            b, loc, desc, ArrayRef<int64_t>{3, k}));
        count = LLVM::MulOp::create(b, loc, count, sizes.back());
      }
      Value bytes = LLVM::MulOp::create(b, loc, count, c64(elem));
      Value src = LLVM::GEPOp::create(
          b, loc, ptrTy, i8, aligned,
          ValueRange{LLVM::MulOp::create(b, loc, offset, c64(elem))});
      Value slot = LLVM::GEPOp::create(
          b, loc, ptrTy, ptrTy, buffersArg,
          ArrayRef<LLVM::GEPArg>{int32_t(sig.inputs.size() + j)});
      Value dst = LLVM::LoadOp::create(b, loc, ptrTy, slot);
      if (tessel::hasRunTimeDim(t.dimNames)) {
        // dst is the caller's tessel_run_time_output {data, sizes}.
        Value sizesAt = LLVM::GEPOp::create(b, loc, ptrTy, ptrTy, dst,
                                            ArrayRef<LLVM::GEPArg>{1});
        Value sizesArray = LLVM::LoadOp::create(b, loc, ptrTy, sizesAt);
        for (auto [k, size] : llvm::enumerate(sizes))
          LLVM::StoreOp::create(
              b, loc, size,
              LLVM::GEPOp::create(b, loc, ptrTy, i64, sizesArray,
                                  ArrayRef<LLVM::GEPArg>{int32_t(k)}));
        // aligned_alloc wants a multiple of the alignment, and never 0.
        Value padded = LLVM::AndOp::create(
            b, loc, LLVM::AddOp::create(b, loc, bytes, c64(64)), c64(~63));
        Value copy = LLVM::CallOp::create(b, loc, allocFn,
                                          ValueRange{c64(64), padded})
                         .getResult();
        LLVM::StoreOp::create(b, loc, copy, dst);
        dst = copy;
      }
      LLVM::MemcpyOp::create(b, loc, dst, src, bytes, /*isVolatile=*/false);
      LLVM::CallOp::create(b, loc, freeFn, ValueRange{allocated});
    }
    return success();
  }

  /// The function `name` of `type`, declared on first use; null when the
  /// module has `name` with another type.
  static LLVM::LLVMFuncOp declare(ModuleOp module, OpBuilder &b, Location loc,
                                  StringRef name,
                                  LLVM::LLVMFunctionType type) {
    if (auto fn = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
      return fn.getFunctionType() == type ? fn : LLVM::LLVMFuncOp();
    if (module.lookupSymbol(name))
      return LLVM::LLVMFuncOp();
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(module.getBody());
    return LLVM::LLVMFuncOp::create(b, loc, name, type);
  }

  /// tessel_kernel_set_context, declared on demand, if the module calls
  /// into the kernel library (include/tessel/Kernels/Kernels.td).
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
