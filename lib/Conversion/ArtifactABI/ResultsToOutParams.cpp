//===- ResultsToOutParams.cpp - out-params, except run-time shapes --------===//
//
// The runtime allocates an entry's outputs before the call, so results
// become out-params (upstream buffer-results-to-out-params). An output
// whose size follows from the data (ABI v6, dimension name "?") cannot be
// allocated before the call: its function keeps returning buffers, and its
// entry copies them out (tessel-emit-artifact-abi).
//
//===----------------------------------------------------------------------===//
#include "tessel/Conversion/ArtifactSignature.h"
#include "tessel/Conversion/Passes.h"

#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELRESULTSTOOUTPARAMS
#include "tessel/Conversion/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;

namespace {

/// The symbols of the recorded entries with a run-time-shaped output.
llvm::StringSet<> runTimeShapedEntries(ModuleOp module) {
  llvm::StringSet<> symbols;
  auto records = module->getAttrOfType<ArrayAttr>(tessel::kFunctionsAttrName);
  for (Attribute a : records ? records : ArrayAttr()) {
    auto record = dyn_cast<DictionaryAttr>(a);
    auto symbol = record ? record.getAs<StringAttr>("symbol") : StringAttr();
    auto outputs = record ? record.getAs<ArrayAttr>("outputs") : ArrayAttr();
    if (!symbol || !outputs)
      continue; // malformed records are tessel-emit-artifact-abi's to report
    for (Attribute out : outputs) {
      FailureOr<SmallVector<StringRef>> names = tessel::recordDimNames(out);
      if (succeeded(names) && tessel::hasRunTimeDim(*names))
        symbols.insert(symbol.getValue());
    }
  }
  return symbols;
}

struct TesselResultsToOutParamsPass
    : tessel::impl::TesselResultsToOutParamsBase<TesselResultsToOutParamsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::StringSet<> returning = runTimeShapedEntries(module);
    if (!runTimeResults && !returning.empty()) {
      module.emitError()
          << "function '" << returning.begin()->getKey()
          << "' has an output whose size follows from the data, which this "
             "target cannot return yet";
      return signalPassFailure();
    }
    // A returned buffer that is a view (a slice cast to the identity
    // layout keeps the strides of what it views) becomes a fresh, dense
    // copy: the entry copies each returned buffer out as one block.
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (!returning.contains(fn.getName()))
        continue;
      fn.walk([&](func::ReturnOp ret) {
        OpBuilder b(ret);
        for (OpOperand &operand : ret->getOpOperands()) {
          auto type = dyn_cast<MemRefType>(operand.get().getType());
          if (!type || operand.get().getDefiningOp<memref::AllocOp>())
            continue;
          SmallVector<Value> sizes;
          for (int64_t d = 0; d < type.getRank(); ++d)
            if (type.isDynamicDim(d))
              sizes.push_back(
                  memref::DimOp::create(b, ret.getLoc(), operand.get(), d));
          Value fresh = memref::AllocOp::create(
              b, ret.getLoc(), MemRefType::get(type.getShape(),
                                               type.getElementType()),
              sizes);
          linalg::CopyOp::create(b, ret.getLoc(), operand.get(), fresh);
          operand.set(fresh);
        }
      });
    }
    bufferization::BufferResultsToOutParamsOpts options;
    options.hoistStaticAllocs = true;
    options.modifyPublicFunctions = true;
    options.filterFn = [&](func::FuncOp *fn) {
      return !returning.contains(fn->getName());
    };
    if (failed(bufferization::promoteBufferResultsToOutParams(module, options)))
      signalPassFailure();
  }
};

} // namespace
