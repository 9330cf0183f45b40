//===- GpuResidentConstants.cpp - Weights stay on the device ---------------===//
//
// tessel-gpu-place-buffers copies each constant to the device in every call
// (gpu.alloc + gpu.memcpy + gpu.dealloc): correct, but ResNet-50 then moves
// its 100 MB of weights over the bus per call. After gpu-to-llvm those are
// three runtime calls around the address of a constant global; here they
// become one call that the device runtime answers from its cache.
//
//===----------------------------------------------------------------------===//
#include "tessel/Conversion/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELGPURESIDENTCONSTANTS
#include "tessel/Conversion/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;

namespace {

constexpr StringLiteral kConstantFn = "__tessel_cuda_constant";

bool calls(LLVM::CallOp call, StringRef callee) {
  return call.getCallee() && *call.getCallee() == callee;
}

/// The constant global whose first element `v` addresses (the global's
/// address, possibly through all-zero GEPs), or null.
LLVM::GlobalOp constantGlobal(Value v, ModuleOp module) {
  while (auto gep = v.getDefiningOp<LLVM::GEPOp>()) {
    if (!gep.getDynamicIndices().empty() ||
        llvm::any_of(gep.getRawConstantIndices(),
                     [](int32_t i) { return i != 0; }))
      return nullptr;
    v = gep.getBase();
  }
  auto address = v.getDefiningOp<LLVM::AddressOfOp>();
  if (!address)
    return nullptr;
  auto global = module.lookupSymbol<LLVM::GlobalOp>(address.getGlobalName());
  return global && global.getConstant() ? global : nullptr;
}

struct TesselGpuResidentConstantsPass
    : tessel::impl::TesselGpuResidentConstantsBase<
          TesselGpuResidentConstantsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<LLVM::CallOp> copies;
    module.walk([&](LLVM::CallOp call) {
      if (calls(call, "mgpuMemcpy") && call.getNumOperands() == 4)
        copies.push_back(call);
    });
    bool declared = false;
    for (LLVM::CallOp copy : copies) {
      Value dst = copy.getOperand(0), src = copy.getOperand(1);
      auto alloc = dst.getDefiningOp<LLVM::CallOp>();
      if (!alloc || !calls(alloc, "mgpuMemAlloc") ||
          !constantGlobal(src, module))
        continue;
      // The buffer must be only filled (this copy), read by kernels and
      // freed: anything else could write to the shared copy.
      SmallVector<LLVM::CallOp> frees;
      bool onlyRead = true;
      for (Operation *user : dst.getUsers()) {
        auto call = dyn_cast<LLVM::CallOp>(user);
        if (call == copy)
          continue;
        if (call && calls(call, "mgpuMemFree"))
          frees.push_back(call);
        else if (call && calls(call, "mgpuMemcpy") &&
                 call.getOperand(1) == dst && call.getOperand(0) != dst)
          continue; // copied from
        else if (call)
          onlyRead = false; // another runtime call might write to it
        // Else a kernel argument or a descriptor field: kernels only read
        // constants (writing one would be undefined in the IR).
      }
      if (!onlyRead)
        continue;
      if (!declared) {
        OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
        if (!module.lookupSymbol(kConstantFn)) {
          auto ptr = LLVM::LLVMPointerType::get(module.getContext());
          LLVM::LLVMFuncOp::create(
              b, module.getLoc(), kConstantFn,
              LLVM::LLVMFunctionType::get(
                  ptr, {ptr, b.getI64Type(), ptr}));
        }
        declared = true;
      }
      // The call replaces the allocation, so the source address (pure
      // address arithmetic on a global) must be computed before it.
      SmallVector<Operation *> chain;
      for (Value v = src; Operation *def = v.getDefiningOp();) {
        chain.push_back(def);
        auto gep = dyn_cast<LLVM::GEPOp>(def);
        if (!gep)
          break;
        v = gep.getBase();
      }
      for (Operation *def : llvm::reverse(chain))
        if (def->getBlock() == alloc->getBlock() &&
            alloc->isBeforeInBlock(def))
          def->moveBefore(alloc);
      OpBuilder b(alloc);
      auto resident = LLVM::CallOp::create(
          b, alloc.getLoc(), LLVM::LLVMPointerType::get(module.getContext()),
          kConstantFn,
          // The allocation's size and stream: defined before it (the
          // copy's size is the same number, possibly computed later).
          ValueRange{src, alloc.getOperand(0), alloc.getOperand(1)});
      dst.replaceAllUsesWith(resident.getResult());
      for (LLVM::CallOp free : frees)
        free.erase();
      copy.erase();
      alloc.erase();
    }
  }
};

} // namespace
