//===- GpuTileMatmul.cpp - f32 matmuls as tiled GPU kernels ----------------===//
//
// One thread per output element (tessel-gpu-map-parallel-loops) reads each
// operand element from memory M or N times; a 4096^3 matmul then runs at
// ~1 TFLOP/s. Here a block computes a 128x128 tile from 8-deep operand
// slices staged in shared memory, each thread an 8x8 block of sums held in
// registers: every shared-memory word read feeds 8 FMAs.
//
//===----------------------------------------------------------------------===//
#include "tessel/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELGPUTILEMATMUL
#include "tessel/Conversion/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;

namespace {

// The tile: a 16x16 grid of threads, each an 8x8 block of the result.
constexpr int64_t kThreads = 256;
constexpr int64_t kTileM = 128, kTileN = 128, kTileK = 8;
constexpr int64_t kPerThread = 8; // rows (and columns) per thread
constexpr int64_t kThreadsPerRow = 16;
// A's slice is stored transposed ([k][m]); 4 words of padding per row put
// the 8 k rows a warp stores at once in 8 different banks.
constexpr int64_t kPadA = 4;

struct Matmul {
  Value a, b, c;
  bool batched;
};

bool isF32Buffer(Value v) {
  auto t = dyn_cast<MemRefType>(v.getType());
  return t && t.getElementType().isF32();
}

std::optional<Matmul> match(Operation *op) {
  Matmul m;
  if (auto mm = dyn_cast<linalg::MatmulOp>(op)) {
    if (mm.hasUserDefinedMaps())
      return std::nullopt;
    m = {mm.getInputs()[0], mm.getInputs()[1], mm.getOutputs()[0], false};
  } else if (auto bmm = dyn_cast<linalg::BatchMatmulOp>(op)) {
    if (bmm.hasUserDefinedMaps())
      return std::nullopt;
    m = {bmm.getInputs()[0], bmm.getInputs()[1], bmm.getOutputs()[0], true};
  } else {
    return std::nullopt;
  }
  if (!isF32Buffer(m.a) || !isF32Buffer(m.b) || !isF32Buffer(m.c))
    return std::nullopt;
  return m;
}

struct Emitter {
  OpBuilder &b;
  Location loc;

  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value lt(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, y);
  }
  Value min(Value x, Value y) { return arith::MinUIOp::create(b, loc, x, y); }
  Value dim(Value v, int64_t d) { return memref::DimOp::create(b, loc, v, d); }

  /// v[batch?, i, j]
  SmallVector<Value> at(Value batch, Value i, Value j) {
    if (batch)
      return {batch, i, j};
    return {i, j};
  }

  /// The element (i, j) of a matrix operand, or 0 past its edge: the load
  /// uses clamped indices (always in bounds) and the value is selected
  /// away.
  Value loadOrZero(Value mat, Value batch, Value i, Value j, Value rows,
                   Value cols, Value rowsMinus1, Value colsMinus1) {
    Value in = arith::AndIOp::create(b, loc, lt(i, rows), lt(j, cols));
    Value v = memref::LoadOp::create(
        b, loc, mat, at(batch, min(i, rowsMinus1), min(j, colsMinus1)));
    Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
    return arith::SelectOp::create(b, loc, in, v, zero);
  }
};

void emitTiledMatmul(OpBuilder &b, Location loc, const Matmul &m) {
  Emitter e{b, loc};
  int64_t off = m.batched ? 1 : 0;
  Value rows = e.dim(m.c, off), cols = e.dim(m.c, off + 1);
  Value depth = e.dim(m.a, off + 1);
  Value batches = m.batched ? e.dim(m.c, 0) : e.idx(1);
  Value zero = e.idx(0), one = e.idx(1);
  // Empty products leave the output as it is; the clamped loads need at
  // least one element. Static shapes need no check (a host-level branch
  // would also cost a synchronization of the stream).
  auto staticNonEmpty = [](Value v) {
    auto t = cast<MemRefType>(v.getType());
    return t.hasStaticShape() && t.getNumElements() > 0;
  };
  if (!staticNonEmpty(m.a) || !staticNonEmpty(m.b) || !staticNonEmpty(m.c)) {
    Value nonEmpty = arith::AndIOp::create(
        b, loc,
        arith::AndIOp::create(b, loc, e.lt(zero, rows), e.lt(zero, cols)),
        arith::AndIOp::create(b, loc, e.lt(zero, depth),
                              e.lt(zero, batches)));
    auto guard = scf::IfOp::create(b, loc, nonEmpty, /*withElse=*/false);
    b.setInsertionPointToStart(guard.thenBlock());
  }

  auto ceil = [&](Value x, int64_t d) {
    return arith::CeilDivUIOp::create(b, loc, x, e.idx(d)).getResult();
  };
  auto workgroup = gpu::AddressSpaceAttr::get(b.getContext(),
                                              gpu::AddressSpace::Workgroup);
  auto sliceA = MemRefType::get({kTileK, kTileM + kPadA}, b.getF32Type(),
                                MemRefLayoutAttrInterface(), workgroup);
  auto sliceB = MemRefType::get({kTileK, kTileN}, b.getF32Type(),
                                MemRefLayoutAttrInterface(), workgroup);
  auto launch = gpu::LaunchOp::create(
      b, loc, ceil(cols, kTileN), ceil(rows, kTileM), batches, e.idx(kThreads),
      one, one, /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
      /*asyncDependencies=*/{}, TypeRange{sliceA, sliceB});
  Block &body = launch.getBody().front();
  b.setInsertionPointToStart(&body);
  Value sharedA = launch.getWorkgroupAttributions()[0];
  Value sharedB = launch.getWorkgroupAttributions()[1];

  Value tid = launch.getThreadIds().x;
  Value batch = m.batched ? Value(launch.getBlockIds().z) : Value();
  Value tx = arith::RemUIOp::create(b, loc, tid, e.idx(kThreadsPerRow));
  Value ty = arith::DivUIOp::create(b, loc, tid, e.idx(kThreadsPerRow));
  Value row0 = e.mul(launch.getBlockIds().y, e.idx(kTileM));
  Value col0 = e.mul(launch.getBlockIds().x, e.idx(kTileN));
  Value rowsM1 = arith::SubIOp::create(b, loc, rows, one);
  Value colsM1 = arith::SubIOp::create(b, loc, cols, one);
  Value depthM1 = arith::SubIOp::create(b, loc, depth, one);

  Value f0 = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
  SmallVector<Value> init(kPerThread * kPerThread, f0);
  auto kLoop =
      scf::ForOp::create(b, loc, zero, depth, e.idx(kTileK), init);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(kLoop.getBody());
    Value k0 = kLoop.getInductionVar();
    // A's slice: 128 rows x 8 k, thread t loads (t / 8 + 32 r, t % 8);
    // stored transposed.
    Value aRow = arith::DivUIOp::create(b, loc, tid, e.idx(kTileK));
    Value aK = arith::RemUIOp::create(b, loc, tid, e.idx(kTileK));
    for (int64_t r = 0; r < kTileM * kTileK / kThreads; ++r) {
      Value local = e.add(aRow, e.idx(r * kThreads / kTileK));
      Value v = e.loadOrZero(m.a, batch, e.add(row0, local), e.add(k0, aK),
                             rows, depth, rowsM1, depthM1);
      memref::StoreOp::create(b, loc, v, sharedA, ValueRange{aK, local});
    }
    // B's slice: 8 k x 128 columns, thread t loads (t / 128 + 2 r, t % 128).
    Value bK = arith::DivUIOp::create(b, loc, tid, e.idx(kTileN));
    Value bCol = arith::RemUIOp::create(b, loc, tid, e.idx(kTileN));
    for (int64_t r = 0; r < kTileN * kTileK / kThreads; ++r) {
      Value local = e.add(bK, e.idx(r * kThreads / kTileN));
      Value v = e.loadOrZero(m.b, batch, e.add(k0, local), e.add(col0, bCol),
                             depth, cols, depthM1, colsM1);
      memref::StoreOp::create(b, loc, v, sharedB, ValueRange{local, bCol});
    }
    gpu::BarrierOp::create(b, loc);
    SmallVector<Value> acc(kLoop.getRegionIterArgs().begin(),
                           kLoop.getRegionIterArgs().end());
    SmallVector<Value> rowIdx, colIdx;
    for (int64_t i = 0; i < kPerThread; ++i) {
      rowIdx.push_back(e.add(ty, e.idx(kThreadsPerRow * i)));
      colIdx.push_back(e.add(tx, e.idx(kThreadsPerRow * i)));
    }
    for (int64_t k = 0; k < kTileK; ++k) {
      Value kk = e.idx(k);
      SmallVector<Value> av, bv;
      for (int64_t i = 0; i < kPerThread; ++i) {
        av.push_back(memref::LoadOp::create(b, loc, sharedA,
                                            ValueRange{kk, rowIdx[i]}));
        bv.push_back(memref::LoadOp::create(b, loc, sharedB,
                                            ValueRange{kk, colIdx[i]}));
      }
      for (int64_t i = 0; i < kPerThread; ++i)
        for (int64_t j = 0; j < kPerThread; ++j) {
          Value &s = acc[i * kPerThread + j];
          s = math::FmaOp::create(b, loc, av[i], bv[j], s);
        }
    }
    gpu::BarrierOp::create(b, loc);
    scf::YieldOp::create(b, loc, acc);
  }
  // The result: added to what the output holds (the fill), past-the-edge
  // elements skipped.
  for (int64_t i = 0; i < kPerThread; ++i) {
    Value r = e.add(row0, e.add(ty, e.idx(kThreadsPerRow * i)));
    for (int64_t j = 0; j < kPerThread; ++j) {
      Value c = e.add(col0, e.add(tx, e.idx(kThreadsPerRow * j)));
      Value in = arith::AndIOp::create(b, loc, e.lt(r, rows), e.lt(c, cols));
      auto store = scf::IfOp::create(b, loc, in, /*withElse=*/false);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(store.thenBlock());
      Value old = memref::LoadOp::create(b, loc, m.c, e.at(batch, r, c));
      Value sum = arith::AddFOp::create(
          b, loc, old, kLoop.getResult(i * kPerThread + j));
      memref::StoreOp::create(b, loc, sum, m.c, e.at(batch, r, c));
    }
  }
  gpu::TerminatorOp::create(b, loc);
}

struct TesselGpuTileMatmulPass
    : tessel::impl::TesselGpuTileMatmulBase<TesselGpuTileMatmulPass> {
  void runOnOperation() override {
    SmallVector<Operation *> matmuls;
    getOperation().walk([&](Operation *op) {
      if (match(op) && !op->getParentOfType<gpu::LaunchOp>())
        matmuls.push_back(op);
    });
    for (Operation *op : matmuls) {
      OpBuilder b(op);
      emitTiledMatmul(b, op->getLoc(), *match(op));
      op->erase();
    }
  }
};

} // namespace
