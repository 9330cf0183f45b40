//===- LowerRoute.cpp - compose.route -> top-k, expert calls, combine ------===//
//
// Two lowerings of a top-k mixture of experts:
//
//  grouped (MegaBlocks): assignments (token t, choice j) are counting-sorted
//    by expert; the tokens are gathered in that order, expert e runs on its
//    own contiguous rows [offset_e, offset_e + count_e) whose count is known
//    only at run time, and the combine gathers each token's k rows back and
//    sums them weighted by the gate. Work is T*k expert rows, not T*E.
//  dense (reference): every expert on every token, outputs summed with a
//    T x E gate matrix that is zero outside each token's top k.
//
//===----------------------------------------------------------------------===//
#include "RouteLowering.h"
#include "tessel/Dialect/Tessel/IR/TesselDialect.h"

namespace mlir::tessel::compose {
#define GEN_PASS_DEF_COMPOSELOWERROUTE
#include "tessel/Dialect/Compose/Transforms/Passes.h.inc"
} // namespace mlir::tessel::compose

using namespace mlir;
using namespace mlir::tessel;
using namespace mlir::tessel::compose;

namespace {

struct ComposeLowerRoutePass
    : mlir::tessel::compose::impl::ComposeLowerRouteBase<ComposeLowerRoutePass> {
  using Base::Base;
  void runOnOperation() override {
    if (mode != "grouped" && mode != "dense") {
      getOperation().emitError()
          << "compose-lower-route: option 'mode' must be 'grouped' or "
             "'dense', got '"
          << mode << "'";
      return signalPassFailure();
    }
    if (expertParallel < 1) {
      getOperation().emitError()
          << "compose-lower-route: option 'expert-parallel' must be at least "
             "1, got "
          << static_cast<int64_t>(expertParallel);
      return signalPassFailure();
    }
    if (expertParallel > 1 && mode != "grouped") {
      getOperation().emitError()
          << "compose-lower-route: expert parallelism runs the grouped "
             "lowering, not '"
          << mode << "'";
      return signalPassFailure();
    }
    if (!placement.empty() &&
        static_cast<int64_t>(placement.size()) != expertParallel) {
      getOperation().emitError()
          << "compose-lower-route: 'placement' needs one expert count per "
             "process ("
          << static_cast<int64_t>(expertParallel) << "), got "
          << placement.size();
      return signalPassFailure();
    }
    SmallVector<RouteOp> routes;
    getOperation().walk([&](RouteOp r) { routes.push_back(r); });
    // Without a route the artifact would run as N unrelated copies under
    // mpirun: say so instead (a mixture of experts the raiser did not
    // recognize ends up here too).
    if (expertParallel > 1 && routes.empty()) {
      getOperation().emitError()
          << "expert parallelism (" << static_cast<int64_t>(expertParallel)
          << " processes) needs a mixture of experts, and the model has no "
             "compose.route (was its MoE raised? see tessel-raise-moe)";
      return signalPassFailure();
    }
    for (RouteOp route : routes) {
      auto tokTy = route.getTokens().getType();
      if (!tokTy.hasStaticShape() || !route.getScores().getType().hasStaticShape() ||
          !route.getOutput().getType().hasStaticShape()) {
        route.emitOpError() << "needs static token, score and result shapes "
                               "to be lowered";
        return signalPassFailure();
      }
      OpBuilder b(route);
      Value out;
      if (expertParallel > 1) {
        FailureOr<SmallVector<int64_t>> first = expertBlocks(route);
        if (failed(first))
          return signalPassFailure();
        out = lowerExpertParallel(route, b, expertParallel, *first);
      } else {
        RouteLowering lowering(route, b);
        out = mode == "dense" ? lowering.lowerDense() : lowering.lowerGrouped();
      }
      route.replaceAllUsesWith(out);
      route.erase();
    }
    if (expertParallel > 1 && !routes.empty())
      getOperation()->setAttr(
          tessel::TesselDialect::getRanksAttrName(),
          OpBuilder(&getContext()).getI64IntegerAttr(expertParallel));
  }

  /// The first expert of each process and the end (N + 1 values): the
  /// placement's counts, or blocks as even as possible.
  FailureOr<SmallVector<int64_t>> expertBlocks(RouteOp route) {
    int64_t n = expertParallel;
    int64_t experts = route.getExperts().size();
    SmallVector<int64_t> first = {0};
    int64_t sum = 0;
    for (int64_t q = 0; q < n; ++q) {
      int64_t take = placement.empty() ? experts / n + (q < experts % n ? 1 : 0)
                                       : placement[q];
      if (take < 0) {
        route.emitOpError()
            << "placement gives process " << q << " " << take << " experts";
        return failure();
      }
      sum += take;
      first.push_back(sum);
    }
    if (sum != experts) {
      route.emitOpError() << "placement places " << sum << " experts, but the "
                          << "route has " << experts;
      return failure();
    }
    return first;
  }
};

} // namespace
