//===- GpuExternDynamicShared.cpp - Dynamic shared memory as extern -------===//
//
// See the pass description (Passes.td): the zero-length shared global that
// stands for a kernel's dynamic shared memory must keep external linkage,
// or NVPTX places it among the static shared variables.
//
//===----------------------------------------------------------------------===//
#include "tessel/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELGPUEXTERNDYNAMICSHARED
#include "tessel/Conversion/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;

namespace {

struct TesselGpuExternDynamicSharedPass
    : tessel::impl::TesselGpuExternDynamicSharedBase<
          TesselGpuExternDynamicSharedPass> {
  void runOnOperation() override {
    for (auto global : getOperation().getOps<LLVM::GlobalOp>()) {
      auto array = dyn_cast<LLVM::LLVMArrayType>(global.getGlobalType());
      if (global.getAddrSpace() !=
              static_cast<unsigned>(NVVM::NVVMMemorySpace::Shared) ||
          !array || array.getNumElements() != 0 || !global.getInitializer().empty() ||
          global.getValueOrNull())
        continue;
      global.setLinkage(LLVM::Linkage::External);
    }
  }
};

} // namespace
