//===- LowerExternalCalls.cpp - external components become imports --------===//
//
// Separate compilation, the caller's side. A component without a body is
// compiled into another artifact; here each call of it becomes a
// `tessel.call_import`, a destination-passing call through the artifact's
// import table, which the runtime fills by component name when it links a
// composition. The component itself becomes a `func.func` declaration
// marked `tessel.import`, so that the later signature passes (symbol
// vocabularies, the manifest's import record) treat the import's interface
// exactly like an entry point's.
//
//===----------------------------------------------------------------------===//
#include "tessel/Dialect/Compose/Transforms/Passes.h"
#include "tessel/Dialect/Compose/Transforms/TokenDims.h"
#include "tessel/Dialect/Tessel/Utils/TosaBuilder.h"

#include "llvm/ADT/MapVector.h"

namespace mlir::tessel::compose {
#define GEN_PASS_DEF_COMPOSELOWEREXTERNALCALLS
#include "tessel/Dialect/Compose/Transforms/Passes.h.inc"
} // namespace mlir::tessel::compose

using namespace mlir;
using namespace mlir::tessel::compose;
using mlir::tessel::castTo;

namespace {

/// The artifact ABI passes dense buffers of ranked tensors. A dynamic
/// dimension is the component's token dimension (TokenDims.h): one run-time
/// size, which the caller must know from its inputs to size the results.
LogicalResult checkInterface(CallOp call, ComponentOp component) {
  bool dynamicArg = false;
  auto check = [&](Type t, StringRef kind, unsigned i) -> LogicalResult {
    auto tensor = dyn_cast<RankedTensorType>(t);
    if (!tensor)
      return call.emitOpError()
             << "calls external component '" << component.getSymName()
             << "', whose " << kind << " #" << i << " has type " << t
             << "; an imported component crosses the artifact ABI, which "
                "needs ranked tensors";
    if (tensor.hasStaticShape())
      return success();
    if (kind == "argument") {
      dynamicArg = true;
      return success();
    }
    if (dynamicArg)
      return success();
    return call.emitOpError()
           << "calls external component '" << component.getSymName()
           << "', whose result #" << i << " has type " << t
           << " with a dynamic token dimension but no argument has one: "
              "the size of its result cannot be known from its inputs";
  };
  for (auto [i, t] : llvm::enumerate(component.getArgumentTypes()))
    if (failed(check(t, "argument", i)))
      return failure();
  for (auto [i, t] : llvm::enumerate(component.getResultTypes()))
    if (failed(check(t, "result", i)))
      return failure();
  if (component.getResultTypes().empty())
    return call.emitOpError() << "calls external component '"
                              << component.getSymName()
                              << "', which returns nothing";
  return success();
}

/// The run-time token count of a call: the size of the first dynamic
/// dimension among the inputs (cast to the interface's types). Null when
/// the interface is static.
Value tokenCount(OpBuilder &b, Location loc, ValueRange inputs) {
  for (Value v : inputs) {
    auto tensor = cast<RankedTensorType>(v.getType());
    for (auto [pos, d] : llvm::enumerate(tensor.getShape()))
      if (ShapedType::isDynamic(d))
        return tensor::DimOp::create(b, loc, v, pos);
  }
  return {};
}

void lowerCall(CallOp call, ComponentOp component) {
  OpBuilder b(call);
  Location loc = call.getLoc();
  SmallVector<Value> inputs, inits;
  for (auto [v, t] : llvm::zip(call.getOperands(),
                               component.getArgumentTypes()))
    inputs.push_back(castTo(b, loc, v, t));
  Value tokens = tokenCount(b, loc, inputs);
  for (Type t : component.getResultTypes()) {
    auto tensor = cast<RankedTensorType>(t);
    SmallVector<Value> sizes(tensor.getNumDynamicDims(), tokens);
    inits.push_back(tensor::EmptyOp::create(b, loc, tensor.getShape(),
                                            tensor.getElementType(), sizes));
  }
  auto import = tessel::CallImportOp::create(
      b, loc, component.getResultTypes(),
      FlatSymbolRefAttr::get(component.getSymNameAttr()), inputs, inits);
  SmallVector<Value> results;
  for (auto [v, t] : llvm::zip(import.getResults(), call.getResultTypes()))
    results.push_back(castTo(b, loc, v, t));
  call.replaceAllUsesWith(results);
  call.erase();
}

struct ComposeLowerExternalCallsPass
    : mlir::tessel::compose::impl::ComposeLowerExternalCallsBase<
          ComposeLowerExternalCallsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTableCollection symbols;
    // Calls anywhere, component bodies included: a component that calls an
    // external one is inlined later with its import call.
    llvm::MapVector<ComponentOp, SmallVector<CallOp>> external;
    module.walk([&](CallOp call) {
      ComponentOp component = call.resolveComponent(symbols);
      if (component && component.isExternal())
        external[component].push_back(call);
    });
    for (auto &[component, calls] : external)
      for (CallOp call : calls)
        if (failed(checkInterface(call, component)))
          return signalPassFailure();
    for (auto &[component, calls] : external)
      for (CallOp call : calls)
        lowerCall(call, component);

    for (auto &[component, calls] : external) {
      // Instances of an external component add nothing to an import: the
      // weights live in the providing artifact.
      for (auto instance :
           llvm::make_early_inc_range(module.getOps<InstanceOp>())) {
        if (instance.getComponent() != component.getSymName())
          continue;
        if (!SymbolTable::symbolKnownUseEmpty(instance, module)) {
          instance.emitOpError()
              << "of external component '" << component.getSymName()
              << "' is still used by something other than compose.call; "
                 "only calls can reach a component of another artifact";
          return signalPassFailure();
        }
        instance.erase();
      }
      // The import calls just created name the component too; any other
      // use could not be lowered.
      std::optional<SymbolTable::UseRange> uses =
          SymbolTable::getSymbolUses(component, module);
      if (!uses || llvm::any_of(*uses, [](const SymbolTable::SymbolUse &use) {
            return !isa<tessel::CallImportOp>(use.getUser());
          })) {
        component.emitOpError()
            << "is external and still used by something other than "
               "compose.call (a compose.route expert?); only calls can "
               "reach a component of another artifact";
        return signalPassFailure();
      }
      // The declaration takes the component's place (and symbol name).
      OpBuilder b(component->getContext());
      b.setInsertionPointAfter(component);
      std::string name = component.getSymName().str();
      FunctionType type = component.getFunctionType();
      ArrayAttr argAttrs = component.getArgAttrsAttr();
      ArrayAttr resAttrs = component.getResAttrsAttr();
      Location loc = component.getLoc();
      component.erase();
      auto decl = func::FuncOp::create(b, loc, name, type);
      decl.setPrivate();
      decl->setAttr(tessel::TesselDialect::getImportAttrName(),
                    b.getUnitAttr());
      if (argAttrs)
        decl.setArgAttrsAttr(argAttrs);
      if (resAttrs)
        decl.setResAttrsAttr(resAttrs);
      if (failed(nameTokenDims(decl)))
        return signalPassFailure();
    }
  }
};

} // namespace
