//===- StatusHelper.h - fail an entry call from compiled code ---*- C++ -*-===//
//
// Compiled code reports a run-time error (a shape that does not match) by
// calling `__tessel_set_status(i32)`, which tessel-emit-artifact-abi defines
// and the entry returns; the code then goes on with safe values, never reads
// or writes out of bounds.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_CONVERSION_STATUSHELPER_H
#define TESSEL_CONVERSION_STATUSHELPER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::tessel {

/// `__tessel_set_status(i32)` in the module of `anchor`, declared on first
/// use; fails (with a diagnostic) when the symbol is something else.
FailureOr<func::FuncOp> getOrDeclareStatusHelper(Operation *anchor,
                                                 OpBuilder &b, Location loc);

/// A tensor of `type` filled with zeros; `dynamicSizes` gives its dynamic
/// dimensions, in order.
Value zeroTensor(OpBuilder &b, Location loc, RankedTensorType type,
                 ValueRange dynamicSizes);

/// Whether `holds(element)` is true for every element of ranked tensor `t`,
/// as an i1: one linalg.generic reduction into a rank-0 tensor. `holds`
/// builds its i1 test in the reduction body.
Value allElements(OpBuilder &b, Location loc, Value t,
                  function_ref<Value(OpBuilder &, Location, Value)> holds);

/// `values` where `ok` holds; otherwise the entry call fails with `status`
/// (a TESSEL_ENTRY_* code) and `safe` builds what stands in for them (same
/// types), so that the code after runs in bounds. Built at `b`'s insertion
/// point as one scf.if; fails when the status helper cannot be declared.
FailureOr<SmallVector<Value>>
valuesOrFail(Operation *anchor, OpBuilder &b, Location loc, Value ok,
             int32_t status, ValueRange values,
             function_ref<SmallVector<Value>(OpBuilder &, Location)> safe);

/// valuesOrFail with TESSEL_ENTRY_SHAPE_MISMATCH.
FailureOr<SmallVector<Value>>
valuesOrShapeMismatch(Operation *anchor, OpBuilder &b, Location loc, Value ok,
                      ValueRange values,
                      function_ref<SmallVector<Value>(OpBuilder &, Location)>
                          safe);

} // namespace mlir::tessel

#endif // TESSEL_CONVERSION_STATUSHELPER_H
