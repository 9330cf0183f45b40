//===- TokenDims.cpp - name the token dimension of an interface -----------===//
#include "tessel/Dialect/Compose/Transforms/TokenDims.h"
#include "tessel/Conversion/Passes.h"

#include "mlir/IR/Builders.h"

using namespace mlir;

/// The dim names of `t` ("T" at each `?`, "" elsewhere), or null when it has
/// no dynamic dimension.
static ArrayAttr tokenDimNames(Builder &b, Type t) {
  auto tensor = dyn_cast<RankedTensorType>(t);
  if (!tensor || tensor.hasStaticShape())
    return {};
  SmallVector<Attribute> names;
  for (int64_t d : tensor.getShape())
    names.push_back(b.getStringAttr(
        ShapedType::isDynamic(d) ? tessel::compose::kTokenDimName : ""));
  return b.getArrayAttr(names);
}

LogicalResult tessel::compose::nameTokenDims(func::FuncOp fn) {
  Builder b(fn.getContext());
  bool dynamicArg = false;
  for (auto [i, t] : llvm::enumerate(fn.getArgumentTypes()))
    if (ArrayAttr names = tokenDimNames(b, t)) {
      fn.setArgAttr(i, tessel::kDimNamesAttrName, names);
      dynamicArg = true;
    }
  for (auto [i, t] : llvm::enumerate(fn.getResultTypes()))
    if (ArrayAttr names = tokenDimNames(b, t)) {
      if (!dynamicArg)
        return fn.emitError()
               << "component '" << fn.getName() << "' has result #" << i
               << " of type " << t
               << " with a dynamic token dimension but no argument with "
                  "one: its size cannot be known from the inputs";
      fn.setResultAttr(i, tessel::kDimNamesAttrName, names);
    }
  return success();
}
