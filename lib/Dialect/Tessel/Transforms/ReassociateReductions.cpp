//===- ReassociateReductions.cpp - vectorizable float reductions -----------===//
#include "tessel/Dialect/Tessel/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELREASSOCIATEREDUCTIONS
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;

namespace {
struct ReassociateReductionsPass
    : tessel::impl::TesselReassociateReductionsBase<
          ReassociateReductionsPass> {
  void runOnOperation() override {
    getOperation()->walk([](linalg::GenericOp gen) {
      if (gen.getNumReductionLoops() == 0)
        return;
      gen.getRegion().walk([](arith::ArithFastMathInterface op) {
        arith::FastMathFlags flags = arith::FastMathFlags::none;
        if (arith::FastMathFlagsAttr old = op.getFastMathFlagsAttr())
          flags = old.getValue();
        op->setAttr(op.getFastMathAttrName(),
                    arith::FastMathFlagsAttr::get(
                        op->getContext(), flags |
                                              arith::FastMathFlags::reassoc |
                                              arith::FastMathFlags::contract));
      });
    });
  }
};
} // namespace
