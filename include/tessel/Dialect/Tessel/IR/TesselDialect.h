//===- TesselDialect.h - Tessel graph dialect -------------------*- C++ -*-===//
#ifndef TESSEL_DIALECT_TESSEL_IR_TESSELDIALECT_H
#define TESSEL_DIALECT_TESSEL_IR_TESSELDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "tessel/Dialect/Tessel/IR/TesselOpsDialect.h.inc"
#include "tessel/Dialect/Tessel/IR/TesselEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "tessel/Dialect/Tessel/IR/TesselAttrs.h.inc"

#define GET_OP_CLASSES
#include "tessel/Dialect/Tessel/IR/TesselOps.h.inc"

#endif // TESSEL_DIALECT_TESSEL_IR_TESSELDIALECT_H
