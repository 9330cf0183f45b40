//===- OutlineSlice.cpp - a slice of a function as a component ------------===//

#include "OutlineSlice.h"
#include "ConstantEvaluator.h"

#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::tessel::compose;

ComponentOp mlir::tessel::compose::outlineSlice(OpBuilder &b, Location loc,
                                                StringRef name,
                                                ArrayRef<Operation *> ops,
                                                Value x, Value y) {
  OpBuilder::InsertionGuard guard(b);
  auto component = ComponentOp::create(
      b, loc, name, b.getFunctionType({x.getType()}, {}), StringAttr(),
      ArrayAttr(), ArrayAttr(), ComponentStateAttr(), TypeAttr(), StringAttr());
  Block *body = component.addEntryBlock();
  b.setInsertionPointToStart(body);
  IRMapping map;
  map.map(x, body->getArgument(0));
  for (Operation *op : ops) {
    for (Value in : op->getOperands())
      if (!map.contains(in) && isConstantValue(in))
        b.clone(*in.getDefiningOp(), map);
    b.clone(*op, map);
  }
  Value out = map.lookup(y);
  ReturnOp::create(b, loc, out);
  component.setFunctionType(b.getFunctionType({x.getType()}, {out.getType()}));
  return component;
}
