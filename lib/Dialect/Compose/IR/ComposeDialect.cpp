//===- ComposeDialect.cpp - Composable-model dialect registration ----------===//
#include "tessel/Dialect/Compose/IR/ComposeDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tessel::compose;

#include "tessel/Dialect/Compose/IR/ComposeOpsDialect.cpp.inc"
#include "tessel/Dialect/Compose/IR/ComposeEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "tessel/Dialect/Compose/IR/ComposeAttrs.cpp.inc"

void ComposeDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "tessel/Dialect/Compose/IR/ComposeOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "tessel/Dialect/Compose/IR/ComposeAttrs.cpp.inc"
      >();
}
