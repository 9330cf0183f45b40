//===- Passes.h - Tessel graph-dialect passes -------------------*- C++ -*-===//
#ifndef TESSEL_DIALECT_TESSEL_TRANSFORMS_PASSES_H
#define TESSEL_DIALECT_TESSEL_TRANSFORMS_PASSES_H

#include "tessel/Dialect/Tessel/IR/TesselDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Pass/Pass.h"
// Pass option defaults name the kernel library's constants (TESSEL_KERNEL_NR).
#include "tessel/Kernels/tessel_kernels.h"

namespace mlir::tessel {

/// Fewest input and output channels for which tessel-convert-to-kernels
/// runs a 3x3, stride-1 convolution as Winograd (F(2x2, 3x3) or F(4x4,
/// 3x3)) by default;
/// tessel-sparsify-weights weighs a sparse convolution against that.
constexpr int64_t kWinogradMinChannels = 32;

#define GEN_PASS_DECL
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"

/// Adds the rewrite patterns of tessel-decompose-graph-ops to `patterns`.
/// `keepGrouped`: the pass's keep-grouped option.
/// tessel.gather and tessel.scatter_elements expanded (run-time sizes
/// allowed); part of populateDecomposeGraphOpsPatterns.
void populateDecomposeGatherScatterPatterns(RewritePatternSet &patterns);
void populateDecomposeGraphOpsPatterns(RewritePatternSet &patterns,
                                       bool keepGrouped = false);

/// Registers the bufferization model of tessel.packed_conv2d.
void registerBufferizableOpInterfaceExternalModels(DialectRegistry &registry);

#define GEN_PASS_REGISTRATION
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"

} // namespace mlir::tessel

#endif // TESSEL_DIALECT_TESSEL_TRANSFORMS_PASSES_H
