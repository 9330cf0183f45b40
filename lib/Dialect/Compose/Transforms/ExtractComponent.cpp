//===- ExtractComponent.cpp - one component as the module's entry ----------===//
//
// Separate compilation starts here: `tessel-compile --component=NAME` keeps
// one component as the artifact's only entry point, so each component of a
// composition can be built, shipped and replaced on its own.
//
//===----------------------------------------------------------------------===//
#include "tessel/Dialect/Compose/Transforms/Passes.h"
#include "tessel/Dialect/Compose/Transforms/TokenDims.h"

namespace mlir::tessel::compose {
#define GEN_PASS_DEF_COMPOSEEXTRACTCOMPONENT
#include "tessel/Dialect/Compose/Transforms/Passes.h.inc"
} // namespace mlir::tessel::compose

using namespace mlir;
using namespace mlir::tessel::compose;

namespace {

struct ComposeExtractComponentPass
    : mlir::tessel::compose::impl::ComposeExtractComponentBase<
          ComposeExtractComponentPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (component.empty())
      return;
    auto comp = dyn_cast_or_null<ComponentOp>(
        SymbolTable::lookupSymbolIn(module, component));
    if (!comp) {
      module.emitError() << "no compose.component named '" << component
                         << "' to compile";
      return signalPassFailure();
    }
    if (comp.isExternal()) {
      comp.emitOpError() << "is external (no body): it is compiled where it "
                            "is defined";
      return signalPassFailure();
    }
    for (auto fn : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
      fn.erase();
    // Keep only what the component uses (through calls, routes and
    // instances), so no leftover refers to the symbol that changes kind.
    llvm::SmallPtrSet<Operation *, 8> used;
    SmallVector<Operation *> work = {comp};
    while (!work.empty()) {
      Operation *op = work.pop_back_val();
      op->walk([&](Operation *inner) {
        SmallVector<FlatSymbolRefAttr> refs;
        if (auto call = dyn_cast<CallOp>(inner))
          refs.push_back(call.getCalleeAttr());
        else if (auto route = dyn_cast<RouteOp>(inner))
          for (Attribute a : route.getExperts())
            refs.push_back(cast<FlatSymbolRefAttr>(a));
        else if (auto inst = dyn_cast<InstanceOp>(inner))
          refs.push_back(inst.getComponentAttr());
        for (FlatSymbolRefAttr ref : refs)
          if (Operation *target = SymbolTable::lookupSymbolIn(module, ref))
            if (used.insert(target).second)
              work.push_back(target);
      });
    }
    for (Operation &op : llvm::make_early_inc_range(module.getOps()))
      if (isa<ComponentOp, InstanceOp>(op) && &op != comp.getOperation() &&
          !used.contains(&op))
        op.erase();
    OpBuilder b(comp);
    auto fn = func::FuncOp::create(b, comp.getLoc(), component,
                                   comp.getFunctionType());
    if (ArrayAttr args = comp.getArgAttrsAttr())
      fn.setArgAttrsAttr(args);
    if (ArrayAttr results = comp.getResAttrsAttr())
      fn.setResAttrsAttr(results);
    fn.getBody().takeBody(comp.getBody());
    auto ret = cast<ReturnOp>(fn.getBody().front().getTerminator());
    b.setInsertionPoint(ret);
    func::ReturnOp::create(b, ret.getLoc(), ret.getOperands());
    ret.erase();
    comp.erase();
    // A route expert keeps its dynamic token dimension: the artifact runs
    // on however many tokens the importer passes.
    if (failed(nameTokenDims(fn)))
      return signalPassFailure();
  }
};

} // namespace
