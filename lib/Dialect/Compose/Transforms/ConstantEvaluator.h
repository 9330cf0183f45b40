//===- ConstantEvaluator.h - fold a slice of graph ops on constants -*- C++ -*-===//
//
// tessel-raise-moe proves that a dense graph's per-expert gate factor is the
// top-k weight a compose.route computes, whatever ops the front end spelled
// it with (scatter + slice, one-hot sums, equality masks, selects). It does
// so by folding the gate's slice of the IR with the scores and the top-k
// results bound to synthetic constants, and comparing the folded factors
// with the expected weights. This evaluator is that folding: each TOSA (and
// tessel graph) op the gating forms use, on dense double arrays. Any other
// op makes evaluation fail, and the graph is then left dense.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_DIALECT_COMPOSE_TRANSFORMS_CONSTANTEVALUATOR_H
#define TESSEL_LIB_DIALECT_COMPOSE_TRANSFORMS_CONSTANTEVALUATOR_H

#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <vector>

namespace mlir::tessel::compose {

/// A dense row-major array; integers and booleans are held exactly (the
/// gating forms stay far below 2^53).
struct Folded {
  llvm::SmallVector<int64_t> shape;
  std::vector<double> data;
  int64_t numElements() const;
};

class ConstantEvaluator {
public:
  /// Fixes the value of `v` and forgets everything computed before.
  void bind(Value v, Folded value);
  /// The value of `v`, folded from bindings and constants; nullopt if it
  /// depends on anything else or on an op the evaluator lacks.
  std::optional<Folded> eval(Value v);
  /// Forgets computed values (keeps bindings).
  void clear() { memo.clear(); }

private:
  std::optional<Folded> evalOp(Operation *op, unsigned result);

  llvm::DenseMap<Value, Folded> bound;
  llvm::DenseMap<Value, std::optional<Folded>> memo;
};

/// True where `v` is defined by a constant op (tosa.const, tosa.const_shape,
/// arith.constant).
bool isConstantValue(Value v);

} // namespace mlir::tessel::compose

#endif // TESSEL_LIB_DIALECT_COMPOSE_TRANSFORMS_CONSTANTEVALUATOR_H
