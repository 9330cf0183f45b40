//===- ApproximateMath.cpp - vectorizable transcendental functions ---------===//
#include "tessel/Dialect/Tessel/Transforms/Passes.h"

#include "mlir/Dialect/Math/Transforms/Approximation.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELAPPROXIMATEMATH
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;

namespace {
struct ApproximateMathPass
    : tessel::impl::TesselApproximateMathBase<ApproximateMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    // The functions whose approximations stay within a few ulp over the
    // whole f32 range (sin/cos/atan lose accuracy for large arguments).
    auto wanted = [](StringRef name) {
      return llvm::is_contained({"math.exp", "math.expm1", "math.log",
                                 "math.log1p", "math.log2", "math.tanh",
                                 "math.erf"},
                                name);
    };
    populateMathPolynomialApproximationPatterns(patterns, wanted);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
