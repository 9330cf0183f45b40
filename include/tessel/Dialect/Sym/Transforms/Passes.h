//===- Passes.h - sym dialect passes ----------------------------*- C++ -*-===//
#ifndef TESSEL_DIALECT_SYM_TRANSFORMS_PASSES_H
#define TESSEL_DIALECT_SYM_TRANSFORMS_PASSES_H

#include "tessel/Dialect/Sym/IR/SymDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
class TypeConverter;
} // namespace mlir

namespace mlir::tessel::sym {

#define GEN_PASS_DECL
#include "tessel/Dialect/Sym/Transforms/Passes.h.inc"

/// Adds the rewrites of tessel-simplify-sym to `patterns`.
void populateSimplifySymPatterns(RewritePatternSet &patterns,
                                 bool assumeFiniteWeights);

/// Adds the conversions of tessel-lower-sym (sym ops to TOSA) to `patterns`;
/// `converter` maps symbol tensors to i32 tensors.
void populateLowerSymPatterns(const TypeConverter &converter,
                              RewritePatternSet &patterns);

#define GEN_PASS_REGISTRATION
#include "tessel/Dialect/Sym/Transforms/Passes.h.inc"

} // namespace mlir::tessel::sym

#endif // TESSEL_DIALECT_SYM_TRANSFORMS_PASSES_H
