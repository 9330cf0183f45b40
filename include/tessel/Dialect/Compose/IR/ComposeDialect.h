//===- ComposeDialect.h - Composable-model dialect --------------*- C++ -*-===//
#ifndef TESSEL_DIALECT_COMPOSE_IR_COMPOSEDIALECT_H
#define TESSEL_DIALECT_COMPOSE_IR_COMPOSEDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "tessel/Dialect/Compose/IR/ComposeOpsDialect.h.inc"
#include "tessel/Dialect/Compose/IR/ComposeEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "tessel/Dialect/Compose/IR/ComposeAttrs.h.inc"

#define GET_OP_CLASSES
#include "tessel/Dialect/Compose/IR/ComposeOps.h.inc"

namespace mlir::tessel::compose {
/// Whether a value of type `actual` may flow where the interface declares
/// `declared`: same element type and rank, equal sizes where both are
/// static (a dynamic interface dimension accepts any size).
bool isInterfaceCompatible(Type actual, Type declared);
} // namespace mlir::tessel::compose

#endif // TESSEL_DIALECT_COMPOSE_IR_COMPOSEDIALECT_H
