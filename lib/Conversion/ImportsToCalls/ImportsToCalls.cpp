//===- ImportsToCalls.cpp - tessel.call_import -> call through the table ---===//
//
// An import is another artifact's entry point, so it is called with the
// entry ABI (docs/artifact-abi.md): an array of pointers to dense row-major
// buffers, inputs then outputs. The call goes through the artifact's
// helper `__tessel_call_import(slot, buffers)`, defined by
// tessel-emit-artifact-abi next to the import table, which loads the slot,
// forwards the invoke context of the running entry and records a failure
// for the entry to return. The lowered function has no way to stop early,
// so a failed import's outputs are zero-filled here: what follows computes
// on defined values, and the entry still reports the failure.
//
//===----------------------------------------------------------------------===//
#include "tessel/Conversion/ArtifactSignature.h"
#include "tessel/Conversion/BufferPointers.h"
#include "tessel/Conversion/Passes.h"
#include "tessel/Dialect/Tessel/IR/TesselDialect.h"

#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELIMPORTSTOCALLS
#include "tessel/Conversion/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {

/// What a call site needs of an import's record.
struct ImportInfo {
  unsigned slot = 0;
  /// Per input, then per output: the name of each dimension ("" when
  /// static).
  SmallVector<SmallVector<StringRef>> dimNames;
  unsigned numInputs = 0;
};

/// Each import's record, by name; its slot is its position in
/// `tessel.imports`.
FailureOr<llvm::StringMap<ImportInfo>> importInfos(ModuleOp module) {
  llvm::StringMap<ImportInfo> infos;
  auto records =
      module->getAttrOfType<ArrayAttr>(TesselDialect::getImportsAttrName());
  if (!records)
    return infos;
  for (auto [i, a] : llvm::enumerate(records)) {
    auto bad = [&, a = a](StringRef what) {
      return module.emitError()
             << "malformed '" << TesselDialect::getImportsAttrName()
             << "' record (" << what << "): " << a;
    };
    auto d = dyn_cast<DictionaryAttr>(a);
    auto name = d ? d.getAs<StringAttr>("name") : StringAttr();
    if (!name)
      return bad("missing string 'name'");
    ImportInfo info;
    info.slot = i;
    for (StringRef key : {"inputs", "outputs"}) {
      auto values = d.getAs<ArrayAttr>(key);
      if (!values)
        return bad(("missing array '" + key + "'").str());
      if (key == "outputs")
        info.numInputs = info.dimNames.size();
      for (Attribute v : values) {
        auto value = dyn_cast<DictionaryAttr>(v);
        if (!value)
          return bad(("an entry of '" + key + "' is not a dictionary").str());
        FailureOr<SmallVector<StringRef>> names = recordDimNames(value);
        if (failed(names))
          return bad("'dim_names' must hold strings");
        info.dimNames.push_back(*names);
      }
    }
    infos[name.getValue()] = std::move(info);
  }
  return infos;
}

/// `__tessel_call_import(i32 slot, !llvm.ptr buffers) -> i32`, declared on
/// first use.
FailureOr<func::FuncOp> helperDecl(ModuleOp module, OpBuilder &b,
                                   Location loc) {
  auto ptrTy = LLVM::LLVMPointerType::get(b.getContext());
  FunctionType type =
      b.getFunctionType({b.getI32Type(), ptrTy}, {b.getI32Type()});
  if (auto fn = module.lookupSymbol<func::FuncOp>(kCallImportHelperName)) {
    if (fn.getFunctionType() != type)
      return fn.emitError() << "'" << kCallImportHelperName
                            << "' is declared with a different type";
    return fn;
  }
  if (module.lookupSymbol(kCallImportHelperName))
    return module.emitError() << "the symbol '" << kCallImportHelperName
                              << "' is reserved for import calls";
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(module.getBody());
  auto fn = func::FuncOp::create(b, loc, kCallImportHelperName, type);
  fn.setPrivate();
  return fn;
}

LogicalResult lowerCall(ModuleOp module, CallImportOp op,
                        const llvm::StringMap<ImportInfo> &imports) {
  if (!op.hasPureBufferSemantics())
    return op.emitOpError() << "must be bufferized before "
                               "tessel-imports-to-calls";
  auto import = imports.find(op.getCallee());
  if (import == imports.end())
    return op.emitOpError() << "calls " << op.getCalleeAttr()
                            << ", which has no record in '"
                            << TesselDialect::getImportsAttrName()
                            << "' (run tessel-record-signature first)";
  auto fn = op->getParentOfType<FunctionOpInterface>();
  if (!fn)
    return op.emitOpError() << "must be inside a function";
  Location loc = op.getLoc();
  MLIRContext *ctx = op.getContext();
  auto ptrTy = LLVM::LLVMPointerType::get(ctx);
  OpBuilder b(op);
  FailureOr<func::FuncOp> helper = helperDecl(module, b, loc);
  if (failed(helper))
    return failure();

  // One pointer array per call site, in the caller's frame: allocated at
  // function entry, so a call in a loop does not grow the stack.
  const ImportInfo &info = import->second;
  unsigned numBuffers = op.getInputs().size() + op.getInits().size();
  if (info.dimNames.size() != numBuffers ||
      info.numInputs != op.getInputs().size())
    return op.emitOpError() << "has " << op.getInputs().size() << " inputs and "
                            << op.getInits().size()
                            << " outputs, but the record of "
                            << op.getCalleeAttr() << " has "
                            << info.numInputs << " and "
                            << info.dimNames.size() - info.numInputs;
  for (auto [value, names] : llvm::zip(op->getOperands(), info.dimNames))
    if (!names.empty() &&
        names.size() != size_t(cast<MemRefType>(value.getType()).getRank()))
      return op.emitOpError() << "has an operand whose rank differs from "
                                 "the record of "
                              << op.getCalleeAttr();
  SmallVector<StringRef> dims =
      dimensionOrder(ArrayRef(info.dimNames).take_front(info.numInputs));
  // The sizes of the named dimensions follow the buffers (ABI v3).
  Value array, dimArray;
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&fn.getFunctionBody().front());
    Value count = LLVM::ConstantOp::create(
        b, loc, b.getI64Type(),
        b.getI64IntegerAttr(numBuffers + (dims.empty() ? 0 : 1)));
    array = LLVM::AllocaOp::create(b, loc, ptrTy, ptrTy, count);
    if (!dims.empty()) {
      Value numDims = LLVM::ConstantOp::create(
          b, loc, b.getI64Type(), b.getI64IntegerAttr(dims.size()));
      dimArray =
          LLVM::AllocaOp::create(b, loc, ptrTy, b.getI64Type(), numDims);
    }
  }

  // The callee walks each buffer densely: strided views get a dense copy
  // (inputs before the call, outputs written back after it).
  SmallVector<Value> temps, dense;
  SmallVector<std::pair<Value, Value>> writeBack;
  for (OpOperand &operand : op->getOpOperands()) {
    Value v = operand.get();
    auto type = cast<MemRefType>(v.getType());
    if (isContiguousRowMajor(type)) {
      dense.push_back(v);
      continue;
    }
    Value copy = allocDenseLike(b, loc, v);
    temps.push_back(copy);
    dense.push_back(copy);
    if (op.isDpsInit(&operand))
      writeBack.push_back({copy, v});
    else
      memref::CopyOp::create(b, loc, v, copy);
  }
  for (auto [i, v] : llvm::enumerate(dense)) {
    Value at = LLVM::GEPOp::create(b, loc, ptrTy, ptrTy, array,
                                   ArrayRef<LLVM::GEPArg>{int32_t(i)});
    LLVM::StoreOp::create(b, loc, firstElement(b, loc, v), at);
  }
  // Each named dimension's size comes from its first input; every other
  // dimension of that name must agree, or the callee would read past a
  // buffer: the call then passes no buffers and fails instead.
  Value buffersArg = array;
  if (!dims.empty()) {
    llvm::StringMap<Value> sizes;
    Value mismatch = arith::ConstantOp::create(b, loc, b.getBoolAttr(false));
    for (auto [v, names] : llvm::zip(op->getOperands(), info.dimNames))
      for (auto [k, name] : llvm::enumerate(names)) {
        if (name.empty())
          continue;
        Value size = memref::DimOp::create(b, loc, v, k);
        auto [it, first] = sizes.try_emplace(name, size);
        if (!first)
          mismatch = arith::OrIOp::create(
              b, loc, mismatch,
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                    it->second, size));
      }
    for (auto [k, name] : llvm::enumerate(dims)) {
      Value size = arith::IndexCastOp::create(b, loc, b.getI64Type(),
                                              sizes.lookup(name));
      Value at = LLVM::GEPOp::create(b, loc, ptrTy, b.getI64Type(), dimArray,
                                     ArrayRef<LLVM::GEPArg>{int32_t(k)});
      LLVM::StoreOp::create(b, loc, size, at);
    }
    Value at = LLVM::GEPOp::create(b, loc, ptrTy, ptrTy, array,
                                   ArrayRef<LLVM::GEPArg>{int32_t(numBuffers)});
    LLVM::StoreOp::create(b, loc, dimArray, at);
    buffersArg = arith::SelectOp::create(
        b, loc, mismatch, LLVM::ZeroOp::create(b, loc, ptrTy), array);
  }
  Value slotIndex = arith::ConstantOp::create(
      b, loc, b.getI32IntegerAttr(int32_t(info.slot)));
  Value rc =
      func::CallOp::create(b, loc, *helper, ValueRange{slotIndex, buffersArg})
          .getResult(0);
  Value zero = arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(0));
  Value failedCall =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, rc, zero);
  auto ifFailed = scf::IfOp::create(b, loc, failedCall, /*withElse=*/false);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifFailed.thenBlock());
    for (Value init : ArrayRef<Value>(dense).drop_front(op.getInputs().size())) {
      Type elem = cast<MemRefType>(init.getType()).getElementType();
      Value fill = arith::ConstantOp::create(
          b, loc, cast<TypedAttr>(b.getZeroAttr(elem)));
      linalg::FillOp::create(b, loc, ValueRange{fill}, ValueRange{init});
    }
  }
  for (auto [from, to] : writeBack)
    memref::CopyOp::create(b, loc, from, to);
  for (Value t : temps)
    memref::DeallocOp::create(b, loc, t);
  op.erase();
  return success();
}

struct TesselImportsToCallsPass
    : tessel::impl::TesselImportsToCallsBase<TesselImportsToCallsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<CallImportOp> calls;
    module.walk([&](CallImportOp op) { calls.push_back(op); });
    if (calls.empty())
      return;
    FailureOr<llvm::StringMap<ImportInfo>> imports = importInfos(module);
    if (failed(imports))
      return signalPassFailure();
    for (CallImportOp op : calls)
      if (failed(lowerCall(module, op, *imports)))
        return signalPassFailure();
  }
};

} // namespace
