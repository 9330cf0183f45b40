//===- ImportTable.cpp - the import table and its call helper -------------===//
//
// An artifact that calls functions of other artifacts (imports) exports a
// table the runtime fills when it links a composition (docs/artifact-abi.md)
// and defines the helper its call sites use (see tessel-imports-to-calls).
// The running entry's context and the first import failure are kept in
// thread-locals: the lowered function has no context argument and returns
// nothing, and entries run concurrently on several threads.
//
//===----------------------------------------------------------------------===//
#include "ImportTable.h"
#include "tessel/Conversion/Passes.h"
// The ABI's names come from the one header both sides share.
#include "tessel/Runtime/tessel_abi.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"

using namespace mlir;

namespace {

/// A zero-initialized global; `exported` ones are the ABI's, the rest are
/// internal.
LLVM::GlobalOp zeroGlobal(ModuleOp module, OpBuilder &b, Location loc,
                          Type type, StringRef name, bool exported,
                          bool threadLocal) {
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(module.getBody());
  auto global = LLVM::GlobalOp::create(
      b, loc, type, /*isConstant=*/false,
      exported ? LLVM::Linkage::External : LLVM::Linkage::Internal, name,
      /*value=*/Attribute(), /*alignment=*/0, /*addrSpace=*/0,
      /*dsoLocal=*/false, threadLocal);
  Block *init = b.createBlock(&global.getInitializerRegion());
  b.setInsertionPointToStart(init);
  LLVM::ReturnOp::create(b, loc,
                         LLVM::ZeroOp::create(b, loc, type).getResult());
  return global;
}

/// `__tessel_set_status(rc)`: the first failure of the running entry wins.
///
///   if status == 0: status = rc
LogicalResult defineSetStatus(LLVM::LLVMFuncOp helper) {
  MLIRContext *ctx = helper.getContext();
  OpBuilder b(ctx);
  Location loc = helper.getLoc();
  auto i32 = b.getI32Type();
  auto ptrTy = LLVM::LLVMPointerType::get(ctx);
  auto fnTy = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {i32});
  if (helper.getFunctionType() != fnTy || !helper.isExternal())
    return helper.emitError() << "'" << tessel::kSetStatusHelperName
                              << "' must be an external declaration of type "
                              << fnTy;
  Block *entry = helper.addEntryBlock(b);
  Block *set = b.createBlock(&helper.getBody());
  Block *done = b.createBlock(&helper.getBody());
  b.setInsertionPointToStart(entry);
  Value statusAddr =
      LLVM::AddressOfOp::create(b, loc, ptrTy, tessel::kStatusGlobal);
  Value status = LLVM::LoadOp::create(b, loc, i32, statusAddr);
  Value first = LLVM::ICmpOp::create(
      b, loc, LLVM::ICmpPredicate::eq, status,
      LLVM::ConstantOp::create(b, loc, i32, b.getI32IntegerAttr(0)));
  LLVM::CondBrOp::create(b, loc, first, set, done);
  b.setInsertionPointToStart(set);
  LLVM::StoreOp::create(b, loc, entry->getArgument(0), statusAddr);
  LLVM::BrOp::create(b, loc, ValueRange{}, done);
  b.setInsertionPointToStart(done);
  LLVM::ReturnOp::create(b, loc, ValueRange{});
  helper.setLinkage(LLVM::Linkage::Internal);
  return success();
}

} // namespace

/// With imports: the exported table (one entry-function pointer per
/// import, written by the runtime at link time), the thread-locals and
/// the body of `__tessel_call_import(slot, buffers)`:
///
///   fn = table[slot]
///   if buffers == null: rc = TESSEL_ENTRY_SHAPE_MISMATCH (the call site
///                       found its named dimensions inconsistent)
///   elif fn == null: rc = TESSEL_ENTRY_UNRESOLVED_IMPORT
///   else:          rc = fn(buffers, context of the running entry)
///   if rc != 0 and status == 0: status = rc
///   return rc
FailureOr<bool> mlir::tessel::emitImportTable(ModuleOp module,
                                              size_t numImports) {
  auto helper =
      module.lookupSymbol<LLVM::LLVMFuncOp>(tessel::kCallImportHelperName);
  auto setStatusHelper =
      module.lookupSymbol<LLVM::LLVMFuncOp>(tessel::kSetStatusHelperName);
  if (numImports == 0 && helper)
    return helper.emitError()
           << "'" << tessel::kCallImportHelperName
           << "' is called, but the module records no imports";
  if (numImports == 0 && !setStatusHelper)
    return false;
  MLIRContext *ctx = module.getContext();
  OpBuilder b(ctx);
  Location loc = module.getLoc();
  auto ptrTy = LLVM::LLVMPointerType::get(ctx);
  auto i32 = b.getI32Type();
  auto tableTy = LLVM::LLVMArrayType::get(ptrTy, numImports);
  if (numImports > 0)
    zeroGlobal(module, b, loc, tableTy, TESSEL_IMPORTS_SYMBOL,
               /*exported=*/true, /*threadLocal=*/false);
  zeroGlobal(module, b, loc, ptrTy, tessel::kContextGlobal, false, true);
  zeroGlobal(module, b, loc, i32, tessel::kStatusGlobal, false, true);
  if (setStatusHelper && failed(defineSetStatus(setStatusHelper)))
    return failure();
  if (numImports == 0)
    return true;
  if (!helper)
    return true; // every import call was folded away
  auto fnTy = LLVM::LLVMFunctionType::get(i32, {i32, ptrTy});
  if (helper.getFunctionType() != fnTy)
    return helper.emitError()
           << "'" << tessel::kCallImportHelperName << "' has type "
           << helper.getFunctionType() << ", expected " << fnTy;
  if (!helper.isExternal())
    return helper.emitError()
           << "'" << tessel::kCallImportHelperName << "' is already defined";
  Block *entry = helper.addEntryBlock(b);
  Block *lookup = b.createBlock(&helper.getBody());
  Block *unresolved = b.createBlock(&helper.getBody());
  Block *call = b.createBlock(&helper.getBody());
  Block *record = b.createBlock(&helper.getBody(), {}, {i32}, {loc});
  Block *setStatus = b.createBlock(&helper.getBody());
  Block *done = b.createBlock(&helper.getBody());

  b.setInsertionPointToStart(entry);
  Value noBuffers = LLVM::ICmpOp::create(
      b, loc, LLVM::ICmpPredicate::eq, entry->getArgument(1),
      LLVM::ZeroOp::create(b, loc, ptrTy));
  Value mismatch = LLVM::ConstantOp::create(
      b, loc, i32, b.getI32IntegerAttr(TESSEL_ENTRY_SHAPE_MISMATCH));
  LLVM::CondBrOp::create(b, loc, noBuffers, record, ValueRange{mismatch},
                         lookup, ValueRange{});

  b.setInsertionPointToStart(lookup);
  Value table = LLVM::AddressOfOp::create(b, loc, ptrTy, TESSEL_IMPORTS_SYMBOL);
  Value at = LLVM::GEPOp::create(
      b, loc, ptrTy, tableTy, table,
      ArrayRef<LLVM::GEPArg>{0, Value(entry->getArgument(0))});
  Value fn = LLVM::LoadOp::create(b, loc, ptrTy, at);
  Value null = LLVM::ZeroOp::create(b, loc, ptrTy);
  Value isNull =
      LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq, fn, null);
  LLVM::CondBrOp::create(b, loc, isNull, unresolved, call);

  b.setInsertionPointToStart(unresolved);
  LLVM::BrOp::create(
      b, loc,
      ValueRange{LLVM::ConstantOp::create(
          b, loc, i32, b.getI32IntegerAttr(TESSEL_ENTRY_UNRESOLVED_IMPORT))},
      record);

  b.setInsertionPointToStart(call);
  Value context = LLVM::LoadOp::create(
      b, loc, ptrTy,
      LLVM::AddressOfOp::create(b, loc, ptrTy, tessel::kContextGlobal));
  auto entryTy = LLVM::LLVMFunctionType::get(i32, {ptrTy, ptrTy});
  Value rc =
      LLVM::CallOp::create(b, loc, entryTy,
                           ValueRange{fn, entry->getArgument(1), context})
          .getResult();
  LLVM::BrOp::create(b, loc, ValueRange{rc}, record);

  b.setInsertionPointToStart(record);
  Value result = record->getArgument(0);
  Value zero = LLVM::ConstantOp::create(b, loc, i32, b.getI32IntegerAttr(0));
  Value statusAddr =
      LLVM::AddressOfOp::create(b, loc, ptrTy, tessel::kStatusGlobal);
  Value status = LLVM::LoadOp::create(b, loc, i32, statusAddr);
  Value failedCall =
      LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ne, result, zero);
  Value firstFailure =
      LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq, status, zero);
  Value keep = LLVM::AndOp::create(b, loc, failedCall, firstFailure);
  LLVM::CondBrOp::create(b, loc, keep, setStatus, done);

  b.setInsertionPointToStart(setStatus);
  LLVM::StoreOp::create(b, loc, result, statusAddr);
  LLVM::BrOp::create(b, loc, ValueRange{}, done);

  b.setInsertionPointToStart(done);
  LLVM::ReturnOp::create(b, loc, result);
  helper.setLinkage(LLVM::Linkage::Internal);
  return true;
}
