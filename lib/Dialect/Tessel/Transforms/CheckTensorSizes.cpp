//===- CheckTensorSizes.cpp - reject tensors too large to compile ----------===//
//
// The parser accepts `dense<1.0> : tensor<100000000000xf32>` (a splat is one
// value), and an importer may build a Tile or Expand of 2^80 elements; left
// alone such a module aborts with "LLVM ERROR: out of memory" in a folder,
// or compiles into an artifact whose manifest the runtime refuses. One walk
// at the start of the pipeline turns all of these into an error at the op.
//
//===----------------------------------------------------------------------===//
#include "tessel/Dialect/Tessel/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELCHECKTENSORSIZES
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;

namespace {

/// The element count of a static shape, or nullopt when it overflows.
std::optional<int64_t> elementCount(ShapedType type) {
  int64_t n = 1;
  for (int64_t d : type.getShape()) {
    if (ShapedType::isDynamic(d))
      continue;
    if (d < 0 || llvm::MulOverflow(n, d, n))
      return std::nullopt;
  }
  return n;
}

struct TesselCheckTensorSizesPass
    : tessel::impl::TesselCheckTensorSizesBase<TesselCheckTensorSizesPass> {
  using Base::Base;

  /// Checks `type` and the types nested in it (function types, tuples).
  LogicalResult check(Operation *op, Type type, StringRef what) {
    if (auto fn = dyn_cast<FunctionType>(type)) {
      for (Type t : llvm::concat<const Type>(fn.getInputs(), fn.getResults()))
        if (failed(check(op, t, what)))
          return failure();
      return success();
    }
    auto shaped = dyn_cast<ShapedType>(type);
    if (!shaped || !shaped.hasRank())
      return success();
    std::optional<int64_t> n = elementCount(shaped);
    int64_t limit = maxElements.getValue();
    if (n && *n <= limit)
      return success();
    InFlightDiagnostic diag = op->emitError() << what << " of type " << type;
    if (n)
      diag << " has " << *n << " elements";
    else
      diag << " has more elements than a 64-bit count holds";
    diag << "; Tessel compiles tensors of at most " << limit << " elements";
    return failure();
  }

  void runOnOperation() override {
    WalkResult result = getOperation()->walk([&](Operation *op) {
      for (Type t : op->getResultTypes())
        if (failed(check(op, t, "a result")))
          return WalkResult::interrupt();
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            if (failed(check(op, arg.getType(), "a block argument")))
              return WalkResult::interrupt();
      for (NamedAttribute attr : op->getAttrs()) {
        Type t;
        if (auto typed = dyn_cast<TypedAttr>(attr.getValue()))
          t = typed.getType();
        else if (auto type = dyn_cast<TypeAttr>(attr.getValue()))
          t = type.getValue();
        if (t && failed(check(op, t,
                              ("attribute '" + attr.getName().strref() + "'")
                                  .str())))
          return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
