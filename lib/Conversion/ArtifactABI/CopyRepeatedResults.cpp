//===- CopyRepeatedResults.cpp - One tensor per entry-point result --------===//
//
// buffer-results-to-out-params turns each returned buffer into the
// caller's out-param; the same buffer returned twice cannot be two
// out-params (upstream crashes on it), so repeats are copied first.
//
//===----------------------------------------------------------------------===//
#include "tessel/Conversion/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELCOPYREPEATEDRESULTS
#include "tessel/Conversion/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;

namespace {

struct TesselCopyRepeatedResultsPass
    : tessel::impl::TesselCopyRepeatedResultsBase<
          TesselCopyRepeatedResultsPass> {
  void runOnOperation() override {
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      if (fn.isExternal() || !fn.isPublic())
        continue;
      fn.walk([](func::ReturnOp ret) {
        llvm::SmallDenseSet<Value> seen;
        OpBuilder b(ret);
        for (OpOperand &operand : ret->getOpOperands()) {
          Value v = operand.get();
          auto type = dyn_cast<RankedTensorType>(v.getType());
          if (!type || seen.insert(v).second)
            continue;
          Value copy = bufferization::AllocTensorOp::create(
              b, ret.getLoc(), type, /*dynamicSizes=*/ValueRange(),
              /*copy=*/v);
          operand.set(copy);
        }
      });
    }
  }
};

} // namespace
