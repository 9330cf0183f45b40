//===- IndexMath.h - scalar index arithmetic for run-time sizes -*- C++ -*-===//
//
// The index (and i1) arithmetic that code building values with run-time
// sizes shares: the ONNX importer's converters (RunTimeShapes.cpp,
// Sequences.cpp) and the passes that expand ops of run-time sizes
// (tessel-decompose-graph-ops' gather and scatter, tessel-fuse-attention's
// size checks). One spelling of each operation, constants folded where a
// size is static.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_DIALECT_TESSEL_UTILS_INDEXMATH_H
#define TESSEL_DIALECT_TESSEL_UTILS_INDEXMATH_H

#include "tessel/Dialect/Tessel/IR/TesselDialect.h"
#include "tessel/Runtime/tessel_abi.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::tessel {

/// Scalar index (and i1) arithmetic at one location.
class IndexMath {
public:
  IndexMath(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  Value c(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value yes() { return arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivSIOp::create(b, loc, x, y); }
  Value rem(Value x, Value y) { return arith::RemSIOp::create(b, loc, x, y); }
  Value min(Value x, Value y) { return arith::MinSIOp::create(b, loc, x, y); }
  Value max(Value x, Value y) { return arith::MaxSIOp::create(b, loc, x, y); }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value eq(Value x, Value y) { return cmp(arith::CmpIPredicate::eq, x, y); }
  Value ne(Value x, Value y) { return cmp(arith::CmpIPredicate::ne, x, y); }
  Value lt(Value x, Value y) { return cmp(arith::CmpIPredicate::slt, x, y); }
  Value le(Value x, Value y) { return cmp(arith::CmpIPredicate::sle, x, y); }
  Value both(Value x, Value y) { return arith::AndIOp::create(b, loc, x, y); }
  Value either(Value x, Value y) { return arith::OrIOp::create(b, loc, x, y); }
  Value no(Value x) { return arith::XOrIOp::create(b, loc, x, yes()); }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
  /// 1 where `x` holds, else 0.
  Value count(Value x) { return select(x, c(1), c(0)); }
  /// Element k of the integer tensor `t` (1-D, or rank 0 with k = 0), as
  /// an index.
  Value element(Value t, int64_t k) {
    SmallVector<Value> at;
    if (cast<RankedTensorType>(t.getType()).getRank() == 1)
      at.push_back(c(k));
    Value e = tensor::ExtractOp::create(b, loc, t, at);
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), e);
  }
  /// `values[i]` for a run-time `i` in [0, values.size()) (else `dflt`).
  Value pick(ArrayRef<int64_t> values, Value i, int64_t dflt) {
    Value v = c(dflt);
    for (auto [k, x] : llvm::enumerate(values))
      v = select(eq(i, c(k)), c(x), v);
    return v;
  }
  /// The product of `dims` (each >= 0), saturated at cap + 1 so that it
  /// never wraps: a count above `cap` compares as too large.
  Value product(ArrayRef<Value> dims, int64_t cap) {
    Value p = c(1), top = c(cap + 1);
    for (Value d : dims)
      p = min(mul(p, min(d, top)), top);
    return p;
  }
  /// The same, capped at the run-time `cap` (at most 2^31).
  Value product(ArrayRef<Value> dims, Value cap) {
    Value p = c(1), top = add(cap, c(1));
    for (Value d : dims)
      p = min(mul(p, min(d, top)), top);
    return p;
  }
  /// An index as i64 (the ONNX integer of shapes and positions).
  Value toI64(Value x) {
    return arith::IndexCastOp::create(b, loc, b.getI64Type(), x);
  }
  /// Dim `d` of tensor `x`: a constant where static.
  Value dim(Value x, int64_t d) {
    int64_t size = cast<RankedTensorType>(x.getType()).getDimSize(d);
    return ShapedType::isDynamic(size) ? tensor::DimOp::create(b, loc, x, d).getResult()
                                       : c(size);
  }
  /// The element count of tensor `x`.
  Value numElements(Value x) {
    Value n = c(1);
    for (int64_t d = 0; d < cast<RankedTensorType>(x.getType()).getRank(); ++d)
      n = mul(n, dim(x, d));
    return n;
  }
  /// Whether every one of `dims` is >= 0.
  Value allNonNegative(ArrayRef<Value> dims) {
    Value ok = yes();
    for (Value d : dims)
      ok = both(ok, le(c(0), d));
    return ok;
  }

  OpBuilder &b;
  Location loc;
};

/// `value` where `ok` holds; else the call fails with a shape mismatch and
/// the result is `fallback`.
/// (`fallback` must have `value`'s sizes: the check lowers to a select.)
/// `status` is another TESSEL_ENTRY_* failure where the error is not a
/// shape mismatch.
inline Value required(IndexMath &m, Value ok, Value value, Value fallback,
                      int32_t status = TESSEL_ENTRY_SHAPE_MISMATCH) {
  Value okTensor = tensor::FromElementsOp::create(
      m.b, m.loc, RankedTensorType::get({}, m.b.getI1Type()), ValueRange{ok});
  return tessel::RequireOp::create(m.b, m.loc, value.getType(), okTensor,
                                   value, fallback,
                                   m.b.getI32IntegerAttr(status));
}

} // namespace mlir::tessel

#endif
