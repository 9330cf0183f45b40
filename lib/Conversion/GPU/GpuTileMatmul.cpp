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

#include <functional>

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
// Slices loaded along k are stored transposed ([k][row]); 4 words of
// padding per row put the 8 k rows a warp stores at once in 8 banks.
constexpr int64_t kPad = 4;

bool isF32Buffer(Value v) {
  auto t = dyn_cast<MemRefType>(v.getType());
  return t && t.getElementType().isF32();
}

bool staticNonEmpty(Value v) {
  auto t = cast<MemRefType>(v.getType());
  return t.hasStaticShape() && t.getNumElements() > 0;
}

struct Emitter {
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
  Value min(Value x, Value y) { return arith::MinUIOp::create(b, loc, x, y); }
  Value dim(Value v, int64_t d) { return memref::DimOp::create(b, loc, v, d); }
};

/// A product C[batch][m][n] += sum_k A(batch, m, k) * B(batch, k, n) whose
/// operands are read through loaders: a matmul's are its buffers, a
/// convolution's a gather from its input (implicit GEMM).
struct Gemm {
  Value rows, cols, depth, batches; // M, N, K and the batch count
  /// B(k, n) is contiguous along k (a convolution's filter) rather than n.
  bool bAlongK = false;
  /// The element at in-bounds indices.
  std::function<Value(Emitter &, Value batch, Value m, Value k)> loadA;
  std::function<Value(Emitter &, Value batch, Value k, Value n)> loadB;
  /// Adds `sum` to the result element (m, n).
  std::function<void(Emitter &, Value batch, Value m, Value n, Value sum)>
      accumulate;
  /// Whether the sizes may be zero (then the launch is skipped).
  bool mayBeEmpty = true;
};

/// The operand element (i, j), or 0 past the edge: the loader gets clamped
/// (in-bounds) indices and the value is selected away.
Value loadOrZero(Emitter &e, Value i, Value j, Value rows, Value cols,
                 Value rowsMinus1, Value colsMinus1,
                 llvm::function_ref<Value(Value, Value)> load) {
  Value in = arith::AndIOp::create(e.b, e.loc, e.lt(i, rows), e.lt(j, cols));
  Value v = load(e.min(i, rowsMinus1), e.min(j, colsMinus1));
  Value zero = arith::ConstantOp::create(e.b, e.loc, e.b.getF32FloatAttr(0));
  return arith::SelectOp::create(e.b, e.loc, in, v, zero);
}

void emitTiledGemm(OpBuilder &b, Location loc, const Gemm &g) {
  Emitter e{b, loc};
  Value zero = e.idx(0), one = e.idx(1);
  // Empty products leave the output as it is; the clamped loads need at
  // least one element. Static shapes need no check (a host-level branch
  // would also cost a synchronization of the stream).
  if (g.mayBeEmpty) {
    Value nonEmpty = arith::AndIOp::create(
        b, loc,
        arith::AndIOp::create(b, loc, e.lt(zero, g.rows), e.lt(zero, g.cols)),
        arith::AndIOp::create(b, loc, e.lt(zero, g.depth),
                              e.lt(zero, g.batches)));
    auto guard = scf::IfOp::create(b, loc, nonEmpty, /*withElse=*/false);
    b.setInsertionPointToStart(guard.thenBlock());
  }

  auto ceil = [&](Value x, int64_t d) {
    return arith::CeilDivUIOp::create(b, loc, x, e.idx(d)).getResult();
  };
  auto workgroup = gpu::AddressSpaceAttr::get(b.getContext(),
                                              gpu::AddressSpace::Workgroup);
  auto sliceA = MemRefType::get({kTileK, kTileM + kPad}, b.getF32Type(),
                                MemRefLayoutAttrInterface(), workgroup);
  auto sliceB = MemRefType::get({kTileK, kTileN + (g.bAlongK ? kPad : 0)},
                                b.getF32Type(), MemRefLayoutAttrInterface(),
                                workgroup);
  auto launch = gpu::LaunchOp::create(
      b, loc, ceil(g.cols, kTileN), ceil(g.rows, kTileM), g.batches,
      e.idx(kThreads), one, one, /*dynamicSharedMemorySize=*/nullptr,
      /*asyncTokenType=*/nullptr, /*asyncDependencies=*/{},
      TypeRange{sliceA, sliceB});
  Block &body = launch.getBody().front();
  b.setInsertionPointToStart(&body);
  Value sharedA = launch.getWorkgroupAttributions()[0];
  Value sharedB = launch.getWorkgroupAttributions()[1];

  Value tid = launch.getThreadIds().x;
  Value batch = launch.getBlockIds().z;
  Value tx = e.rem(tid, e.idx(kThreadsPerRow));
  Value ty = e.div(tid, e.idx(kThreadsPerRow));
  Value row0 = e.mul(launch.getBlockIds().y, e.idx(kTileM));
  Value col0 = e.mul(launch.getBlockIds().x, e.idx(kTileN));
  Value rowsM1 = arith::SubIOp::create(b, loc, g.rows, one);
  Value colsM1 = arith::SubIOp::create(b, loc, g.cols, one);
  Value depthM1 = arith::SubIOp::create(b, loc, g.depth, one);

  Value f0 = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
  SmallVector<Value> init(kPerThread * kPerThread, f0);
  auto kLoop = scf::ForOp::create(b, loc, zero, g.depth, e.idx(kTileK), init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(kLoop.getBody());
    Value k0 = kLoop.getInductionVar();
    // A k-contiguous slice (A's, and B's when bAlongK) of 128 x 8: thread t
    // loads (t / 8 + 32 r, t % 8), eight neighbours one 32-byte run; stored
    // transposed ([k][row]) in the padded buffer.
    Value runRow = e.div(tid, e.idx(kTileK));
    Value runK = e.rem(tid, e.idx(kTileK));
    for (int64_t r = 0; r < kTileM * kTileK / kThreads; ++r) {
      Value local = e.add(runRow, e.idx(r * kThreads / kTileK));
      Value v = loadOrZero(e, e.add(row0, local), e.add(k0, runK), g.rows,
                           g.depth, rowsM1, depthM1, [&](Value m, Value k) {
                             return g.loadA(e, batch, m, k);
                           });
      memref::StoreOp::create(b, loc, v, sharedA, ValueRange{runK, local});
    }
    if (g.bAlongK) {
      for (int64_t r = 0; r < kTileN * kTileK / kThreads; ++r) {
        Value local = e.add(runRow, e.idx(r * kThreads / kTileK));
        Value v = loadOrZero(e, e.add(col0, local), e.add(k0, runK), g.cols,
                             g.depth, colsM1, depthM1, [&](Value n, Value k) {
                               return g.loadB(e, batch, k, n);
                             });
        memref::StoreOp::create(b, loc, v, sharedB, ValueRange{runK, local});
      }
    } else {
      // An n-contiguous slice of 8 x 128: thread t loads (t / 128 + 2 r,
      // t % 128), a warp one 128-byte row.
      Value bK = e.div(tid, e.idx(kTileN));
      Value bCol = e.rem(tid, e.idx(kTileN));
      for (int64_t r = 0; r < kTileN * kTileK / kThreads; ++r) {
        Value local = e.add(bK, e.idx(r * kThreads / kTileN));
        Value v = loadOrZero(e, e.add(k0, local), e.add(col0, bCol), g.depth,
                             g.cols, depthM1, colsM1, [&](Value k, Value n) {
                               return g.loadB(e, batch, k, n);
                             });
        memref::StoreOp::create(b, loc, v, sharedB, ValueRange{local, bCol});
      }
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
          Value &sum = acc[i * kPerThread + j];
          sum = math::FmaOp::create(b, loc, av[i], bv[j], sum);
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
      Value in = arith::AndIOp::create(b, loc, e.lt(r, g.rows), e.lt(c, g.cols));
      auto store = scf::IfOp::create(b, loc, in, /*withElse=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(store.thenBlock());
      g.accumulate(e, batch, r, c, kLoop.getResult(i * kPerThread + j));
    }
  }
  gpu::TerminatorOp::create(b, loc);
}

/// C[batch?][m][n] += A[batch?][m][k] * B[batch?][k][n].
std::optional<Gemm> matmulGemm(Emitter &e, Operation *op) {
  Value a, bm, c;
  bool batched;
  if (auto mm = dyn_cast<linalg::MatmulOp>(op)) {
    if (mm.hasUserDefinedMaps())
      return std::nullopt;
    a = mm.getInputs()[0], bm = mm.getInputs()[1], c = mm.getOutputs()[0];
    batched = false;
  } else if (auto bmm = dyn_cast<linalg::BatchMatmulOp>(op)) {
    if (bmm.hasUserDefinedMaps())
      return std::nullopt;
    a = bmm.getInputs()[0], bm = bmm.getInputs()[1], c = bmm.getOutputs()[0];
    batched = true;
  } else {
    return std::nullopt;
  }
  if (!isF32Buffer(a) || !isF32Buffer(bm) || !isF32Buffer(c))
    return std::nullopt;
  int64_t off = batched ? 1 : 0;
  auto at = [batched](Value batch, Value i, Value j) {
    return batched ? SmallVector<Value>{batch, i, j} : SmallVector<Value>{i, j};
  };
  Gemm g;
  g.rows = e.dim(c, off);
  g.cols = e.dim(c, off + 1);
  g.depth = e.dim(a, off + 1);
  g.batches = batched ? e.dim(c, 0) : e.idx(1);
  g.mayBeEmpty = !staticNonEmpty(a) || !staticNonEmpty(bm) || !staticNonEmpty(c);
  g.loadA = [=](Emitter &e, Value batch, Value m, Value k) {
    return memref::LoadOp::create(e.b, e.loc, a, at(batch, m, k)).getResult();
  };
  g.loadB = [=](Emitter &e, Value batch, Value k, Value n) {
    return memref::LoadOp::create(e.b, e.loc, bm, at(batch, k, n)).getResult();
  };
  g.accumulate = [=](Emitter &e, Value batch, Value m, Value n, Value sum) {
    Value old = memref::LoadOp::create(e.b, e.loc, c, at(batch, m, n));
    Value v = arith::AddFOp::create(e.b, e.loc, old, sum);
    memref::StoreOp::create(e.b, e.loc, v, c, at(batch, m, n));
  };
  return g;
}

/// out[n][oh][ow][f] += in[n][oh*sh + kh*dh][ow*sw + kw*dw][c] *
/// w[f][kh][kw][c], as the GEMM of rows m = (n, oh, ow), columns f and depth
/// k = (kh, kw, c): the operand rows are gathered from the input as they
/// are loaded (no im2col buffer).
std::optional<Gemm> convGemm(Emitter &e, Operation *op) {
  auto conv = dyn_cast<linalg::Conv2DNhwcFhwcOp>(op);
  if (!conv)
    return std::nullopt;
  Value in = conv.getInputs()[0], w = conv.getInputs()[1];
  Value out = conv.getOutputs()[0];
  if (!isF32Buffer(in) || !isF32Buffer(w) || !isF32Buffer(out))
    return std::nullopt;
  auto strides = llvm::to_vector(conv.getStrides().getValues<int64_t>());
  auto dilations = llvm::to_vector(conv.getDilations().getValues<int64_t>());
  Value oh = e.dim(out, 1), ow = e.dim(out, 2);
  Value kw = e.dim(w, 2), ch = e.dim(w, 3);
  Value ohow = e.mul(oh, ow), kwc = e.mul(kw, ch);
  Gemm g;
  g.rows = e.mul(e.dim(out, 0), ohow);
  g.cols = e.dim(out, 3);
  g.depth = e.mul(e.dim(w, 1), kwc);
  g.batches = e.idx(1);
  g.bAlongK = true;
  g.mayBeEmpty =
      !staticNonEmpty(in) || !staticNonEmpty(w) || !staticNonEmpty(out);
  g.loadA = [=](Emitter &e, Value, Value m, Value k) {
    Value n = e.div(m, ohow), p = e.rem(m, ohow);
    Value y = e.div(p, ow), x = e.rem(p, ow);
    Value ky = e.div(k, kwc), q = e.rem(k, kwc);
    Value kx = e.div(q, ch), c = e.rem(q, ch);
    Value iy = e.add(e.mul(y, e.idx(strides[0])), e.mul(ky, e.idx(dilations[0])));
    Value ix = e.add(e.mul(x, e.idx(strides[1])), e.mul(kx, e.idx(dilations[1])));
    return memref::LoadOp::create(e.b, e.loc, in, ValueRange{n, iy, ix, c})
        .getResult();
  };
  g.loadB = [=](Emitter &e, Value, Value k, Value f) {
    Value ky = e.div(k, kwc), q = e.rem(k, kwc);
    Value kx = e.div(q, ch), c = e.rem(q, ch);
    return memref::LoadOp::create(e.b, e.loc, w, ValueRange{f, ky, kx, c})
        .getResult();
  };
  g.accumulate = [=](Emitter &e, Value, Value m, Value f, Value sum) {
    Value n = e.div(m, ohow), p = e.rem(m, ohow);
    Value y = e.div(p, ow), x = e.rem(p, ow);
    SmallVector<Value> at = {n, y, x, f};
    Value old = memref::LoadOp::create(e.b, e.loc, out, at);
    Value v = arith::AddFOp::create(e.b, e.loc, old, sum);
    memref::StoreOp::create(e.b, e.loc, v, out, at);
  };
  return g;
}

std::optional<Gemm> asGemm(Emitter &e, Operation *op) {
  if (std::optional<Gemm> g = matmulGemm(e, op))
    return g;
  return convGemm(e, op);
}

struct TesselGpuTileMatmulPass
    : tessel::impl::TesselGpuTileMatmulBase<TesselGpuTileMatmulPass> {
  void runOnOperation() override {
    SmallVector<Operation *> candidates;
    getOperation().walk([&](Operation *op) {
      if (isa<linalg::MatmulOp, linalg::BatchMatmulOp,
              linalg::Conv2DNhwcFhwcOp>(op) &&
          !op->getParentOfType<gpu::LaunchOp>())
        candidates.push_back(op);
    });
    for (Operation *op : candidates) {
      OpBuilder b(op);
      Emitter e{b, op->getLoc()};
      std::optional<Gemm> g = asGemm(e, op);
      if (!g)
        continue; // its size queries are dead code, folded later
      emitTiledGemm(b, op->getLoc(), *g);
      op->erase();
    }
  }
};

} // namespace
