//===- GpuPlaceBuffers.cpp - Device buffers for a GPU target ---------------===//
//
// The artifact ABI hands a function host buffers (docs/artifact-abi.md); on
// a GPU target every loop nest becomes a kernel, so every buffer those
// kernels touch must live in device memory. This pass gives each host-level
// buffer a device home and adds the copies across the boundary: inputs in
// at entry, outputs back before each return, constants in at entry.
//
//===----------------------------------------------------------------------===//
#include "tessel/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELGPUPLACEBUFFERS
#include "tessel/Conversion/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;

namespace {

/// Inside a loop nest that becomes a kernel (or already is one).
bool inKernel(Operation *op) {
  return op->getParentOfType<scf::ParallelOp>() ||
         op->getParentOfType<gpu::LaunchOp>();
}

/// The number of leading arguments that are inputs, from the signature
/// record of tessel-record-signature; every other argument is an output
/// (an out-param of buffer-results-to-out-params). Without a record, all
/// arguments are both.
std::optional<size_t> numInputs(func::FuncOp fn) {
  auto module = fn->getParentOfType<ModuleOp>();
  auto records =
      module ? module->getAttrOfType<ArrayAttr>(tessel::kFunctionsAttrName)
             : ArrayAttr();
  if (!records)
    return std::nullopt;
  for (Attribute a : records) {
    auto record = dyn_cast<DictionaryAttr>(a);
    auto symbol = record ? record.getAs<StringAttr>("symbol") : StringAttr();
    if (!symbol || symbol.getValue() != fn.getSymName())
      continue;
    auto inputs = record.getAs<ArrayAttr>("inputs");
    return inputs ? std::optional<size_t>(inputs.size()) : std::nullopt;
  }
  return std::nullopt;
}

/// gpu.alloc with the dynamic sizes of `like` (a host buffer of the same
/// type).
Value allocLike(OpBuilder &b, Location loc, MemRefType type, Value like) {
  SmallVector<Value> sizes;
  for (int64_t d = 0, e = type.getRank(); d < e; ++d)
    if (type.isDynamicDim(d))
      sizes.push_back(memref::DimOp::create(b, loc, like, d));
  return gpu::AllocOp::create(b, loc, type, /*asyncToken=*/Type(),
                              /*asyncDependencies=*/ValueRange(), sizes,
                              /*symbolOperands=*/ValueRange(),
                              /*hostShared=*/false)
      .getMemref();
}

void copy(OpBuilder &b, Location loc, Value dst, Value src) {
  gpu::MemcpyOp::create(b, loc, /*asyncToken=*/Type(), ValueRange(), dst, src);
}

void dealloc(OpBuilder &b, Location loc, Value buffer) {
  gpu::DeallocOp::create(b, loc, /*asyncToken=*/Type(), ValueRange(), buffer);
}

struct TesselGpuPlaceBuffersPass
    : tessel::impl::TesselGpuPlaceBuffersBase<TesselGpuPlaceBuffersPass> {
  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    if (fn.isExternal())
      return;
    Block &entry = fn.getBody().front();
    OpBuilder b(&entry, entry.begin());
    Location loc = fn.getLoc();
    SmallVector<func::ReturnOp> returns;
    fn.walk([&](func::ReturnOp r) { returns.push_back(r); });

    // Device twins of the arguments and constants, freed before each
    // return (after the outputs are copied back).
    SmallVector<Value> entryBuffers;
    SmallVector<std::pair<Value, Value>> outputs; // (host arg, device twin)
    std::optional<size_t> inputs = numInputs(fn);
    for (BlockArgument arg : entry.getArguments()) {
      auto type = dyn_cast<MemRefType>(arg.getType());
      if (!type)
        continue;
      if (!type.getLayout().isIdentity()) {
        fn.emitError() << "argument #" << arg.getArgNumber()
                       << " has a strided layout; the GPU target needs "
                          "identity-layout arguments";
        return signalPassFailure();
      }
      Value device = allocLike(b, loc, type, arg);
      // Every use but the sizes of the twin reads the twin.
      Operation *twin = device.getDefiningOp();
      arg.replaceUsesWithIf(device, [&](OpOperand &use) {
        return use.getOwner() != twin &&
               !(isa<memref::DimOp>(use.getOwner()) &&
                 llvm::is_contained(use.getOwner()->getUsers(), twin));
      });
      bool isInput = !inputs || arg.getArgNumber() < *inputs;
      bool isOutput = !inputs || arg.getArgNumber() >= *inputs;
      if (isInput)
        copy(b, loc, device, arg);
      if (isOutput)
        outputs.push_back({arg, device});
      entryBuffers.push_back(device);
    }
    llvm::DenseMap<StringAttr, Value> globals;
    SmallVector<Operation *> hostOps, erase;
    fn.walk([&](Operation *op) {
      if (!inKernel(op))
        hostOps.push_back(op);
    });
    for (Operation *op : hostOps) {
      OpBuilder here(op);
      if (auto get = dyn_cast<memref::GetGlobalOp>(op)) {
        Value &device = globals[get.getNameAttr().getAttr()];
        if (!device) {
          // At entry, after the argument copies: a constant copied once
          // per call.
          OpBuilder atEntry(get);
          atEntry.setInsertionPoint(&entry, b.getInsertionPoint());
          Value host = memref::GetGlobalOp::create(
              atEntry, get.getLoc(), get.getType(), get.getNameAttr());
          device = allocLike(atEntry, get.getLoc(), get.getType(), host);
          copy(atEntry, get.getLoc(), device, host);
          entryBuffers.push_back(device);
        }
        get.getResult().replaceAllUsesWith(device);
        erase.push_back(op);
      } else if (isa<memref::AllocOp, memref::AllocaOp>(op)) {
        auto type = cast<MemRefType>(op->getResult(0).getType());
        Value device =
            gpu::AllocOp::create(here, op->getLoc(), type, Type(), ValueRange(),
                                 op->getOperands(), ValueRange(), false)
                .getMemref();
        op->getResult(0).replaceAllUsesWith(device);
        erase.push_back(op);
        // An alloca is freed by its scope's end, not by a dealloc.
        if (isa<memref::AllocaOp>(op))
          for (func::ReturnOp r : returns) {
            OpBuilder atReturn(r);
            dealloc(atReturn, op->getLoc(), device);
          }
      } else if (auto free = dyn_cast<memref::DeallocOp>(op)) {
        dealloc(here, op->getLoc(), free.getMemref());
        erase.push_back(op);
      } else if (auto c = dyn_cast<memref::CopyOp>(op)) {
        auto src = cast<MemRefType>(c.getSource().getType());
        auto dst = cast<MemRefType>(c.getTarget().getType());
        if (src.getLayout().isIdentity() && dst.getLayout().isIdentity()) {
          copy(here, op->getLoc(), c.getTarget(), c.getSource());
          erase.push_back(op);
        }
      }
    }
    for (Operation *op : erase)
      op->erase();
    for (func::ReturnOp r : returns) {
      OpBuilder atReturn(r);
      for (auto [host, device] : outputs)
        copy(atReturn, r.getLoc(), host, device);
      for (Value device : entryBuffers)
        dealloc(atReturn, r.getLoc(), device);
    }
  }
};

} // namespace
