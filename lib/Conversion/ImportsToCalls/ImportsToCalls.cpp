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

/// Slot of each import: its position in `tessel.imports`.
FailureOr<llvm::StringMap<unsigned>> importSlots(ModuleOp module) {
  llvm::StringMap<unsigned> slots;
  auto records =
      module->getAttrOfType<ArrayAttr>(TesselDialect::getImportsAttrName());
  if (!records)
    return slots;
  for (auto [i, a] : llvm::enumerate(records)) {
    auto d = dyn_cast<DictionaryAttr>(a);
    auto name = d ? d.getAs<StringAttr>("name") : StringAttr();
    if (!name)
      return module.emitError()
             << "malformed '" << TesselDialect::getImportsAttrName()
             << "' record (missing string 'name'): " << a;
    slots[name.getValue()] = i;
  }
  return slots;
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

/// Pointer to the first element of a contiguous buffer.
Value firstElement(OpBuilder &b, Location loc, Value memref) {
  auto md = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(
      b, loc, md.getBaseBuffer());
  // i1 is stored one byte per element, as in the ABI.
  unsigned bytes =
      (cast<MemRefType>(memref.getType()).getElementTypeBitWidth() + 7) / 8;
  Value byteOff = arith::MulIOp::create(
      b, loc, md.getOffset(), arith::ConstantIndexOp::create(b, loc, bytes));
  Value addr = arith::AddIOp::create(b, loc, base, byteOff);
  Value addr64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), addr);
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext()), addr64);
}

LogicalResult lowerCall(ModuleOp module, CallImportOp op,
                        const llvm::StringMap<unsigned> &slots) {
  if (!op.hasPureBufferSemantics())
    return op.emitOpError() << "must be bufferized before "
                               "tessel-imports-to-calls";
  auto slot = slots.find(op.getCallee());
  if (slot == slots.end())
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
  unsigned numBuffers = op.getInputs().size() + op.getInits().size();
  Value array;
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&fn.getFunctionBody().front());
    Value count = LLVM::ConstantOp::create(b, loc, b.getI64Type(),
                                           b.getI64IntegerAttr(numBuffers));
    array = LLVM::AllocaOp::create(b, loc, ptrTy, ptrTy, count);
  }

  // The callee walks each buffer densely: strided views get a dense copy
  // (inputs before the call, outputs written back after it).
  SmallVector<Value> temps, dense;
  SmallVector<std::pair<Value, Value>> writeBack;
  for (OpOperand &operand : op->getOpOperands()) {
    Value v = operand.get();
    auto type = cast<MemRefType>(v.getType());
    if (memref::isStaticShapeAndContiguousRowMajor(type)) {
      dense.push_back(v);
      continue;
    }
    Value copy = memref::AllocOp::create(
        b, loc, MemRefType::get(type.getShape(), type.getElementType()));
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
  Value slotIndex = arith::ConstantOp::create(
      b, loc, b.getI32IntegerAttr(int32_t(slot->second)));
  Value rc = func::CallOp::create(b, loc, *helper, ValueRange{slotIndex, array})
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
    FailureOr<llvm::StringMap<unsigned>> slots = importSlots(module);
    if (failed(slots))
      return signalPassFailure();
    for (CallImportOp op : calls)
      if (failed(lowerCall(module, op, *slots)))
        return signalPassFailure();
  }
};

} // namespace
