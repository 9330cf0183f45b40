//===- TesselDialect.h - Tessel graph dialect -------------------*- C++ -*-===//
#ifndef TESSEL_DIALECT_TESSEL_IR_TESSELDIALECT_H
#define TESSEL_DIALECT_TESSEL_IR_TESSELDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/MPI/IR/MPI.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::tessel {
/// ODS I64Attr accessors return the attribute's bits as uint64_t, but axes
/// may be negative (counting from the back): this reads them as signed and
/// normalizes into [0, rank).
inline int64_t normalizeAxis(uint64_t axisBits, int64_t rank) {
  int64_t axis = static_cast<int64_t>(axisBits);
  return axis < 0 ? axis + rank : axis;
}
} // namespace mlir::tessel

#include "tessel/Dialect/Tessel/IR/TesselOpsDialect.h.inc"
#include "tessel/Dialect/Tessel/IR/TesselEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "tessel/Dialect/Tessel/IR/TesselAttrs.h.inc"

#define GET_OP_CLASSES
#include "tessel/Dialect/Tessel/IR/TesselOps.h.inc"

#endif // TESSEL_DIALECT_TESSEL_IR_TESSELDIALECT_H
