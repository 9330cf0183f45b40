//===- InlineComponents.cpp - compose.call -> the component's body ---------===//
//
// The CPU pipeline compiles one function per artifact entry, so a
// composition is flattened: each call site gets a copy of the component's
// body. Copies of shared weights are merged again by the CSE that follows
// in the pipeline (constants are pure), so an instance called from several
// tasks still costs one copy of its weights.
//
//===----------------------------------------------------------------------===//
#include "tessel/Dialect/Compose/Transforms/Passes.h"
#include "tessel/Dialect/Tessel/Utils/TosaBuilder.h"

#include "mlir/IR/IRMapping.h"

namespace mlir::tessel::compose {
#define GEN_PASS_DEF_COMPOSEINLINECOMPONENTS
#include "tessel/Dialect/Compose/Transforms/Passes.h.inc"
} // namespace mlir::tessel::compose

using namespace mlir;
using namespace mlir::tessel::compose;
using mlir::tessel::castTo;

namespace {

LogicalResult inlineCall(CallOp call, SymbolTableCollection &symbols) {
  ComponentOp component = call.resolveComponent(symbols);
  if (!component)
    return call.emitOpError() << "callee " << call.getCalleeAttr()
                              << " does not resolve to a component";
  if (component.isExternal())
    return call.emitOpError()
           << "calls external component '" << component.getSymName()
           << "', which has no body to inline; run "
              "compose-lower-external-calls first to call it through the "
              "import table (it is linked from another artifact at load "
              "time)";
  Region &body = component.getBody();
  if (!body.hasOneBlock())
    return component.emitOpError()
           << "has " << body.getBlocks().size()
           << " blocks; only single-block components can be inlined";
  OpBuilder b(call);
  Location loc = call.getLoc();
  IRMapping map;
  Block &block = body.front();
  for (auto [arg, operand] : llvm::zip(block.getArguments(), call.getOperands()))
    map.map(arg, castTo(b, loc, operand, arg.getType()));
  for (Operation &op : block.without_terminator())
    b.clone(op, map);
  auto ret = cast<ReturnOp>(block.getTerminator());
  SmallVector<Value> results;
  for (auto [v, t] : llvm::zip(ret.getOperands(), call.getResultTypes()))
    results.push_back(castTo(b, loc, map.lookupOrDefault(v), t));
  call.replaceAllUsesWith(results);
  call.erase();
  return success();
}

struct ComposeInlineComponentsPass
    : mlir::tessel::compose::impl::ComposeInlineComponentsBase<ComposeInlineComponentsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTableCollection symbols;
    unsigned numComponents = 0;
    module.walk([&](ComponentOp) { ++numComponents; });
    // Calls inside components are copied with their component's body and
    // inlined in the next round; a cycle would never end, so the rounds are
    // bounded by the nesting depth a call chain can have.
    for (unsigned round = 0;; ++round) {
      SmallVector<CallOp> calls;
      module.walk([&](CallOp call) {
        if (!call->getParentOfType<ComponentOp>())
          calls.push_back(call);
      });
      if (calls.empty())
        break;
      if (round > numComponents) {
        calls.front().emitOpError()
            << "components call each other recursively";
        return signalPassFailure();
      }
      for (CallOp call : calls)
        if (failed(inlineCall(call, symbols)))
          return signalPassFailure();
    }
    for (Operation &op : llvm::make_early_inc_range(module.getOps()))
      if (isa<ComponentOp, InstanceOp>(op))
        op.erase();
  }
};

} // namespace
