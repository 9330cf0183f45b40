//===- SymDialect.h - symbolic component interfaces -------------*- C++ -*-===//
#ifndef TESSEL_DIALECT_SYM_IR_SYMDIALECT_H
#define TESSEL_DIALECT_SYM_IR_SYMDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "tessel/Dialect/Sym/IR/SymOpsDialect.h.inc"

#define GET_TYPEDEF_CLASSES
#include "tessel/Dialect/Sym/IR/SymTypes.h.inc"

#define GET_OP_CLASSES
#include "tessel/Dialect/Sym/IR/SymOps.h.inc"

namespace mlir::tessel::sym {
/// The symbol type of a tensor of symbols, or null for any other type.
inline SymbolType getSymbolElementType(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  return shaped ? dyn_cast<SymbolType>(shaped.getElementType()) : SymbolType();
}
} // namespace mlir::tessel::sym

#endif // TESSEL_DIALECT_SYM_IR_SYMDIALECT_H
