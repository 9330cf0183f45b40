//===- Passes.h - compose dialect lowerings ---------------------*- C++ -*-===//
#ifndef TESSEL_DIALECT_COMPOSE_TRANSFORMS_PASSES_H
#define TESSEL_DIALECT_COMPOSE_TRANSFORMS_PASSES_H

#include "tessel/Dialect/Compose/IR/ComposeDialect.h"
#include "tessel/Dialect/Tessel/IR/TesselDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::tessel::compose {

#define GEN_PASS_DECL
#include "tessel/Dialect/Compose/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tessel/Dialect/Compose/Transforms/Passes.h.inc"

/// Runs tessel-raise-moe on `module`: the front ends (ONNX and torch import,
/// tessel-compile's MLIR input) call it on what they load.
LogicalResult raiseMixturesOfExperts(ModuleOp module);

} // namespace mlir::tessel::compose

#endif // TESSEL_DIALECT_COMPOSE_TRANSFORMS_PASSES_H
