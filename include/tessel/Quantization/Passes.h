//===- Passes.h - quantization passes ---------------------------*- C++ -*-===//
#ifndef TESSEL_QUANTIZATION_PASSES_H
#define TESSEL_QUANTIZATION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Quant/IR/Quant.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::tessel {

#define GEN_PASS_DECL
#include "tessel/Quantization/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tessel/Quantization/Passes.h.inc"

} // namespace mlir::tessel

#endif // TESSEL_QUANTIZATION_PASSES_H
