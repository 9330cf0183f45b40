//===- GpuEmitter.h - Index arithmetic for the GPU kernel builders -*- C++ -*-===//
//
// The one-line arith builders the kernel emitters of tessel-gpu-tile-matmul
// (GpuTileMatmul.cpp, GpuWgmmaMatmul.cpp) write their index math with.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_CONVERSION_GPU_GPUEMITTER_H
#define TESSEL_LIB_CONVERSION_GPU_GPUEMITTER_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

namespace mlir::tessel {

struct GpuEmitter {
  OpBuilder &b;
  Location loc;

  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivUIOp::create(b, loc, x, y); }
  Value rem(Value x, Value y) { return arith::RemUIOp::create(b, loc, x, y); }
  Value lt(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, y);
  }
  Value eq(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, y);
  }
  Value land(Value x, Value y) { return arith::AndIOp::create(b, loc, x, y); }
  Value min(Value x, Value y) { return arith::MinUIOp::create(b, loc, x, y); }
  Value dim(Value v, int64_t d) { return memref::DimOp::create(b, loc, v, d); }
};

} // namespace mlir::tessel

#endif
