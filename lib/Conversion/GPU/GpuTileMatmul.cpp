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

#include "GpuEmitter.h"
#include "GpuZeroFill.h"
#include "GpuWgmmaMatmul.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"

#include <functional>

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELGPUTILEMATMUL
#include "tessel/Conversion/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;

namespace {

// The tile: a 16x16 grid of threads, each an 8x8 block of the result
// (128x128), or 4x4 (64x64: products with few 128x128 tiles).
constexpr int64_t kThreads = 256;
constexpr int64_t kTileM = 128, kTileN = 128, kTileK = 8;
constexpr int64_t kSmallTile = 64;
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

using Emitter = tessel::GpuEmitter;

/// A product C[batch][m][n] += sum_k A(batch, m, k) * B(batch, k, n) whose
/// operands are read through loaders: a matmul's are its buffers, a
/// convolution's a gather from its input (implicit GEMM).
struct Gemm {
  Value rows, cols, depth, batches; // M, N, K and the batch count
  /// B(k, n) is contiguous along k (a convolution's filter) rather than n.
  bool bAlongK = false;
  /// An implicit GEMM of a convolution (its rows gathered).
  bool convolution = false;
  /// The launch asks for its constants back before outlining
  /// (kSinkConstantsAttr): measured faster for contractions on an H200,
  /// slower for the convolutions' gathers (ResNet-18: 3.5 -> 4.1 ms).
  bool sinkConstants = false;
  /// The element at in-bounds indices.
  std::function<Value(Emitter &, Value batch, Value m, Value k)> loadA;
  std::function<Value(Emitter &, Value batch, Value k, Value n)> loadB;
  /// Adds `sum` to the result element (m, n), or stores it there
  /// (`overwrite`).
  std::function<void(Emitter &, Value batch, Value m, Value n, Value sum,
                     bool overwrite)>
      accumulate;
  /// The output was zero-filled just before (zeroFillBefore): the sums are
  /// stored, not added, and the fill goes.
  linalg::FillOp zeroFill;
  /// Whether the sizes may be zero (then the launch is skipped).
  bool mayBeEmpty = true;
  /// The sizes where static (M, N, K, batches), else ShapedType::kDynamic.
  int64_t staticRows = ShapedType::kDynamic, staticCols = ShapedType::kDynamic;
  int64_t staticDepth = ShapedType::kDynamic;
  int64_t staticBatches = ShapedType::kDynamic;
  /// Slices of K computed by separate blocks (split-K), whose partial sums
  /// a second kernel adds up: for products with few output tiles and a
  /// long K (a ResNet's last convolutions: 49 x 512 outputs, K = 4608).
  int64_t splitK = 1;
  /// The block's output tile (square): 128, or 64 for the f32 kernel on
  /// products with few 128x128 tiles (chooseTile).
  int64_t tile = kTileM;
};

/// The operand element (i, j), or 0 outside [0, rows) x [0, cols): the
/// loader gets clamped (in-bounds) indices and the value is selected away.
Value loadOrZero(Emitter &e, Value i, Value j, Value rows, Value cols,
                 Value rowsMinus1, Value colsMinus1,
                 llvm::function_ref<Value(Value, Value)> load) {
  Value in = arith::AndIOp::create(e.b, e.loc, e.lt(i, rows), e.lt(j, cols));
  Value v = load(e.min(i, rowsMinus1), e.min(j, colsMinus1));
  Value zero = arith::ConstantOp::create(e.b, e.loc, e.b.getF32FloatAttr(0));
  return arith::SelectOp::create(e.b, e.loc, in, v, zero);
}

/// What the two kernel bodies share: the launch (with its emptiness guard
/// and split-K workspace) and, per block, its batch and share of K.
struct Launch {
  gpu::LaunchOp op;
  Value workspace, slices, perSlice;
  Value tid, bz, batch, kBegin, kEnd, row0, col0;
  Value rowsM1, colsM1, depthM1;
};

/// Creates the launch of 256-thread blocks, each a 128x128 output tile of
/// a batch and K slice, with `shared` workgroup buffers; the builder is
/// left at the start of its body.
Launch beginLaunch(OpBuilder &b, Location loc, const Gemm &g, int64_t stepK,
                   TypeRange shared) {
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
  Launch l;
  // Split-K: a workspace of partial sums per slice, and each slice's share
  // of K (whole steps).
  l.slices = e.idx(g.splitK);
  if (g.splitK > 1) {
    auto type = MemRefType::get(
        {g.staticBatches * g.splitK, g.staticRows, g.staticCols},
        b.getF32Type());
    l.workspace = memref::AllocOp::create(b, loc, type);
  }
  l.perSlice = e.mul(ceil(ceil(g.depth, g.splitK), stepK), e.idx(stepK));
  l.op = gpu::LaunchOp::create(
      b, loc, ceil(g.cols, g.tile), ceil(g.rows, g.tile),
      e.mul(g.batches, l.slices), e.idx(kThreads), one, one,
      /*dynamicSharedMemorySize=*/nullptr,
      /*asyncTokenType=*/nullptr, /*asyncDependencies=*/{}, shared);
  if (g.sinkConstants)
    l.op->setAttr(tessel::kSinkConstantsAttrName, b.getUnitAttr());
  b.setInsertionPointToStart(&l.op.getBody().front());
  l.tid = l.op.getThreadIds().x;
  l.bz = l.op.getBlockIds().z;
  l.batch = g.splitK > 1 ? e.div(l.bz, l.slices) : l.bz;
  l.kBegin = g.splitK > 1 ? e.mul(e.rem(l.bz, l.slices), l.perSlice) : zero;
  l.kEnd = g.splitK > 1 ? e.min(g.depth, e.add(l.kBegin, l.perSlice))
                        : g.depth;
  l.row0 = e.mul(l.op.getBlockIds().y, e.idx(g.tile));
  l.col0 = e.mul(l.op.getBlockIds().x, e.idx(g.tile));
  l.rowsM1 = arith::SubIOp::create(b, loc, g.rows, one);
  l.colsM1 = arith::SubIOp::create(b, loc, g.cols, one);
  l.depthM1 = arith::SubIOp::create(b, loc, g.depth, one);
  return l;
}

/// One sum of the block's: added to the output element (the fill's value),
/// or stored in the slice's workspace; past-the-edge elements skipped.
void storeSum(Emitter &e, const Gemm &g, const Launch &l, Value r, Value c,
              Value sum) {
  Value in = arith::AndIOp::create(e.b, e.loc, e.lt(r, g.rows),
                                   e.lt(c, g.cols));
  auto store = scf::IfOp::create(e.b, e.loc, in, /*withElse=*/false);
  OpBuilder::InsertionGuard guard(e.b);
  e.b.setInsertionPointToStart(store.thenBlock());
  if (l.workspace)
    memref::StoreOp::create(e.b, e.loc, sum, l.workspace,
                            ValueRange{l.bz, r, c});
  else
    g.accumulate(e, l.batch, r, c, sum, static_cast<bool>(g.zeroFill));
}

/// Ends the kernel; with split-K, the slices' partial sums are added up in
/// slice order (deterministic) by a loop nest that becomes its own kernel.
void endLaunch(OpBuilder &b, Location loc, const Gemm &g, const Launch &l) {
  gpu::TerminatorOp::create(b, loc);
  if (!l.workspace)
    return;
  Emitter e{b, loc};
  b.setInsertionPointAfter(l.op);
  Value zero = e.idx(0), one = e.idx(1);
  auto reduce = scf::ParallelOp::create(
      b, loc, ValueRange{zero, zero, zero},
      ValueRange{g.batches, g.rows, g.cols}, ValueRange{one, one, one});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(reduce.getBody());
    Value bi = reduce.getInductionVars()[0], r = reduce.getInductionVars()[1],
          c = reduce.getInductionVars()[2];
    Value base = e.mul(bi, l.slices);
    Value sum =
        memref::LoadOp::create(b, loc, l.workspace, ValueRange{base, r, c});
    for (int64_t sl = 1; sl < g.splitK; ++sl)
      sum = arith::AddFOp::create(
          b, loc, sum,
          memref::LoadOp::create(b, loc, l.workspace,
                                 ValueRange{e.add(base, e.idx(sl)), r, c}));
    g.accumulate(e, bi, r, c, sum, static_cast<bool>(g.zeroFill));
  }
  memref::DeallocOp::create(b, loc, l.workspace);
}

/// A thread's share of staging one slice of both operands: the global
/// loads (values in a fixed order) and their stores to workgroup memory.
struct Staging {
  std::function<SmallVector<Value>(Value k0)> load;
  std::function<void(ArrayRef<Value>)> store;
  /// Each value stored as soon as it is loaded (fewest live registers).
  std::function<void(Value k0)> loadAndStore;
};

/// The block's k loop, software-pipelined through registers: the next
/// slice's global loads are issued before the current slice's products (so
/// their latency hides behind the math) and stored once every thread is
/// done reading the current one. Loads past the block's share of K read
/// zeros at clamped addresses, so the last iteration needs no branch.
/// Returns the final sums.
/// Without `pipelined`: load, store, barrier, products, barrier (fewer
/// live registers; what the tensor-core kernel uses).
scf::ForOp pipelinedLoop(
    OpBuilder &b, Location loc, const Launch &l, int64_t step,
    const Staging &staging, ValueRange init,
    llvm::function_ref<SmallVector<Value>(ValueRange)> compute,
    bool pipelined = true) {
  Emitter e{b, loc};
  if (!pipelined) {
    auto loop =
        scf::ForOp::create(b, loc, l.kBegin, l.kEnd, e.idx(step), init);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    if (staging.loadAndStore)
      staging.loadAndStore(loop.getInductionVar());
    else
      staging.store(staging.load(loop.getInductionVar()));
    gpu::BarrierOp::create(b, loc);
    SmallVector<Value> acc = compute(loop.getRegionIterArgs());
    gpu::BarrierOp::create(b, loc);
    scf::YieldOp::create(b, loc, acc);
    return loop;
  }
  staging.store(staging.load(l.kBegin));
  gpu::BarrierOp::create(b, loc);
  auto loop = scf::ForOp::create(b, loc, l.kBegin, l.kEnd, e.idx(step), init);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  SmallVector<Value> next =
      staging.load(e.add(loop.getInductionVar(), e.idx(step)));
  SmallVector<Value> acc = compute(loop.getRegionIterArgs());
  gpu::BarrierOp::create(b, loc);
  staging.store(next);
  gpu::BarrierOp::create(b, loc);
  scf::YieldOp::create(b, loc, acc);
  return loop;
}

/// The operand elements one thread stages for a slice `stepK` deep of a
/// block's T-row (A) and T-column (B) tiles (T = g.tile): `perOperand`
/// items of A, then as many of B. A k-contiguous slice (A's, and B's when
/// bAlongK): thread t loads (t / stepK + (256 / stepK) r, t % stepK),
/// neighbours one contiguous run along k. An n-contiguous one (B
/// otherwise): thread t loads (k, n) = (t / T + (256 / T) r, t % T), a warp
/// one contiguous row.
struct SliceItems {
  Emitter &e;
  const Gemm &g;
  const Launch &l;
  int64_t stepK;
  int64_t perOperand;
  Value runRow, runK, bK, bCol;

  SliceItems(Emitter &e, const Gemm &g, const Launch &l, int64_t stepK)
      : e(e), g(g), l(l), stepK(stepK),
        perOperand(g.tile * stepK / kThreads) {
    runRow = e.div(l.tid, e.idx(stepK));
    runK = e.rem(l.tid, e.idx(stepK));
    bK = e.div(l.tid, e.idx(g.tile));
    bCol = e.rem(l.tid, e.idx(g.tile));
  }

  int64_t size() const { return 2 * perOperand; }
  bool isA(int64_t i) const { return i < perOperand; }

  /// Item i's place in its tile: (row of A or column of B, k).
  std::pair<Value, Value> coords(int64_t i) {
    int64_t r = i % perOperand;
    if (isA(i) || g.bAlongK)
      return {e.add(runRow, e.idx(r * kThreads / stepK)), runK};
    return {bCol, e.add(bK, e.idx(r * kThreads / g.tile))};
  }

  /// Item i of the slice starting at k0 (0 past the edges).
  Value load(Value k0, int64_t i) {
    auto [mn, k] = coords(i);
    Value gk = e.add(k0, k);
    if (isA(i))
      return loadOrZero(e, e.add(l.row0, mn), gk, g.rows, l.kEnd, l.rowsM1,
                        l.depthM1, [&](Value m, Value kk) {
                          return g.loadA(e, l.batch, m, kk);
                        });
    return loadOrZero(e, gk, e.add(l.col0, mn), l.kEnd, g.cols, l.depthM1,
                      l.colsM1, [&](Value kk, Value n) {
                        return g.loadB(e, l.batch, kk, n);
                      });
  }
};

/// A Staging of `items` whose `put(isA, mn, k, value)` stores one value.
Staging makeStaging(SliceItems &items,
                    std::function<void(bool, Value, Value, Value)> put) {
  Staging staging;
  staging.load = [&items](Value k0) {
    SmallVector<Value> v;
    for (int64_t i = 0; i < items.size(); ++i)
      v.push_back(items.load(k0, i));
    return v;
  };
  staging.store = [&items, put](ArrayRef<Value> v) {
    for (int64_t i = 0; i < items.size(); ++i) {
      auto [mn, k] = items.coords(i);
      put(items.isA(i), mn, k, v[i]);
    }
  };
  staging.loadAndStore = [&items, put](Value k0) {
    for (int64_t i = 0; i < items.size(); ++i) {
      Value v = items.load(k0, i);
      auto [mn, k] = items.coords(i);
      put(items.isA(i), mn, k, v);
    }
  };
  return staging;
}

/// f32 on the CUDA cores: 8-deep slices, an 8x8 (4x4 in 64x64 tiles)
/// block of sums per thread.
void emitTiledGemm(OpBuilder &b, Location loc, const Gemm &g) {
  Emitter e{b, loc};
  const int64_t kPerThread = g.tile / kThreadsPerRow;
  auto workgroup = gpu::AddressSpaceAttr::get(b.getContext(),
                                              gpu::AddressSpace::Workgroup);
  auto sliceA = MemRefType::get({kTileK, g.tile + kPad}, b.getF32Type(),
                                MemRefLayoutAttrInterface(), workgroup);
  auto sliceB = MemRefType::get({kTileK, g.tile + (g.bAlongK ? kPad : 0)},
                                b.getF32Type(), MemRefLayoutAttrInterface(),
                                workgroup);
  Launch l = beginLaunch(b, loc, g, kTileK, TypeRange{sliceA, sliceB});
  Value sharedA = l.op.getWorkgroupAttributions()[0];
  Value sharedB = l.op.getWorkgroupAttributions()[1];
  Value tid = l.tid, row0 = l.row0, col0 = l.col0, batch = l.batch;
  Value kEnd = l.kEnd, rowsM1 = l.rowsM1, colsM1 = l.colsM1,
        depthM1 = l.depthM1;
  Value tx = e.rem(tid, e.idx(kThreadsPerRow));
  Value ty = e.div(tid, e.idx(kThreadsPerRow));

  Value f0 = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
  SmallVector<Value> init(kPerThread * kPerThread, f0);
  // Both slices stored [k][row or column] (A's transposed, padded).
  SliceItems items(e, g, l, kTileK);
  Staging staging =
      makeStaging(items, [&](bool isA, Value mn, Value k, Value v) {
        memref::StoreOp::create(b, loc, v, isA ? sharedA : sharedB,
                                ValueRange{k, mn});
      });
  SmallVector<Value> rowIdx, colIdx;
  for (int64_t i = 0; i < kPerThread; ++i) {
    rowIdx.push_back(e.add(ty, e.idx(kThreadsPerRow * i)));
    colIdx.push_back(e.add(tx, e.idx(kThreadsPerRow * i)));
  }
  auto kLoop = pipelinedLoop(
      b, loc, l, kTileK, staging, init, [&](ValueRange sums) {
        SmallVector<Value> acc(sums.begin(), sums.end());
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
        return acc;
      });
  for (int64_t i = 0; i < kPerThread; ++i) {
    Value r = e.add(row0, e.add(ty, e.idx(kThreadsPerRow * i)));
    for (int64_t j = 0; j < kPerThread; ++j) {
      Value c = e.add(col0, e.add(tx, e.idx(kThreadsPerRow * j)));
      storeSum(e, g, l, r, c, kLoop.getResult(i * kPerThread + j));
    }
  }
  endLaunch(b, loc, g, l);
}

/// One mma.sync m16n8k16 with f32 sums: A's fragment vector<4x2xT>, B's
/// vector<2x2xT>, the sums vector<2x2xf32> (row-major: c0..c3). f16 through
/// nvgpu.mma.sync; bf16 straight to nvvm.mma.sync, since upstream's nvgpu
/// lowering deduces PTX types for f16, f32 (tf32), f64 and integers only
/// ("failed to deduce operand PTX types"). A bf16 pair is one 32-bit
/// register, in the fragment order the f16 pairs have (PTX ISA, "Matrix
/// Fragments for mma.m16n8k16 with floating point type").
Value mmaSync(OpBuilder &b, Location loc, Value aFrag, Value bFrag, Value sum) {
  auto elem = cast<VectorType>(aFrag.getType()).getElementType();
  if (!elem.isBF16())
    return nvgpu::MmaSyncOp::create(b, loc, aFrag, bFrag, sum,
                                    ArrayRef<int64_t>{16, 8, 16});
  auto pairs = [&](Value frag, int64_t n) {
    SmallVector<Value> regs;
    auto word = VectorType::get({1}, b.getI32Type());
    for (int64_t p = 0; p < n; ++p) {
      Value pair = vector::ExtractOp::create(b, loc, frag, p);
      Value bits = vector::BitCastOp::create(b, loc, word, pair);
      regs.push_back(vector::ExtractOp::create(b, loc, bits, 0));
    }
    return regs;
  };
  SmallVector<Value> c;
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t q = 0; q < 2; ++q)
      c.push_back(
          vector::ExtractOp::create(b, loc, sum, ArrayRef<int64_t>{h, q}));
  Type f32 = b.getF32Type();
  auto resultType =
      LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
  Value d = NVVM::MmaOp::create(
      b, loc, resultType, pairs(aFrag, 4), pairs(bFrag, 2), c,
      ArrayRef<int64_t>{16, 8, 16}, std::nullopt, std::nullopt,
      std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16, NVVM::MMATypes::bf16},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  SmallVector<Value> out;
  for (int64_t i = 0; i < 4; ++i)
    out.push_back(LLVM::ExtractValueOp::create(b, loc, d, i));
  return vector::FromElementsOp::create(b, loc, sum.getType(), out);
}

/// f16 or bf16 products on the tensor cores (mma.sync m16n8k16, f32
/// sums): 16-deep slices rounded to `elem` as they are staged (the
/// precision's rounding of the operands), both stored [row][k] so that each
/// thread's fragment pairs are one 32-bit shared-memory load; 8 warps in a
/// 2 x 4 grid, each a 64 x 32 block of 4 x 4 mma tiles.
void emitTensorCoreGemm(OpBuilder &b, Location loc, const Gemm &g,
                        Type elem) {
  constexpr int64_t kStepK = 16, kPadK = 8, kMmaK = 16;
  constexpr int64_t kWarpRows = 64, kWarpCols = 32, kWarpGridN = 4;
  constexpr int64_t kTilesM = kWarpRows / 16, kTilesN = kWarpCols / 8;
  Emitter e{b, loc};
  auto workgroup = gpu::AddressSpaceAttr::get(b.getContext(),
                                              gpu::AddressSpace::Workgroup);
  auto slice = MemRefType::get({kTileM, kStepK + kPadK}, elem,
                               MemRefLayoutAttrInterface(), workgroup);
  Launch l = beginLaunch(b, loc, g, kStepK, TypeRange{slice, slice});
  Value sharedA = l.op.getWorkgroupAttributions()[0];
  Value sharedB = l.op.getWorkgroupAttributions()[1];
  Value tid = l.tid;
  Value lane = e.rem(tid, e.idx(32)), warp = e.div(tid, e.idx(32));
  Value warpRow = e.mul(e.div(warp, e.idx(kWarpGridN)), e.idx(kWarpRows));
  Value warpCol = e.mul(e.rem(warp, e.idx(kWarpGridN)), e.idx(kWarpCols));
  Value group = e.div(lane, e.idx(4));
  Value pair = e.mul(e.rem(lane, e.idx(4)), e.idx(2));

  auto accType = VectorType::get({2, 2}, b.getF32Type());
  Value zeroAcc = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(accType, b.getF32FloatAttr(0)));
  SmallVector<Value> init(kTilesM * kTilesN, zeroAcc);
  // Both slices stored [row or column][k], rounded to the product type
  // as they are staged (the precision's rounding of the operands). 16 deep:
  // 32-deep slices hold twice the gathered convolution rows' addresses in
  // registers, and spill.
  SliceItems items(e, g, l, kStepK);
  Staging staging =
      makeStaging(items, [&](bool isA, Value mn, Value k, Value v) {
        Value h = arith::TruncFOp::create(b, loc, elem, v);
        memref::StoreOp::create(b, loc, h, isA ? sharedA : sharedB,
                                ValueRange{mn, k});
      });
  auto pairType = VectorType::get({2}, elem);
  auto load2 = [&](Value shared, Value row, Value k) {
    return vector::LoadOp::create(b, loc, pairType, shared, ValueRange{row, k})
        .getResult();
  };
  auto kLoop = pipelinedLoop(
      b, loc, l, kStepK, staging, init, [&](ValueRange sums) {
        SmallVector<Value> acc(sums.begin(), sums.end());
        for (int64_t ks = 0; ks < kStepK; ks += kMmaK) {
          Value kLo = e.add(pair, e.idx(ks)), kHi = e.add(pair, e.idx(ks + 8));
          // Fragments (PTX ISA, mma.m16n8k16): A's rows group and
          // group + 8, columns pair and pair + 8; B's column group, rows
          // pair and pair + 8.
          SmallVector<Value> aFrag, bFrag;
          for (int64_t i = 0; i < kTilesM; ++i) {
            Value r = e.add(warpRow, e.add(group, e.idx(16 * i)));
            Value r8 = e.add(r, e.idx(8));
            Value frag = arith::ConstantOp::create(
                b, loc,
                DenseElementsAttr::get(VectorType::get({4, 2}, elem),
                                       b.getFloatAttr(elem, 0)));
            Value parts[] = {load2(sharedA, r, kLo), load2(sharedA, r8, kLo),
                             load2(sharedA, r, kHi), load2(sharedA, r8, kHi)};
            for (int64_t p = 0; p < 4; ++p)
              frag = vector::InsertOp::create(b, loc, parts[p], frag, p);
            aFrag.push_back(frag);
          }
          for (int64_t j = 0; j < kTilesN; ++j) {
            Value n = e.add(warpCol, e.add(group, e.idx(8 * j)));
            Value frag = arith::ConstantOp::create(
                b, loc,
                DenseElementsAttr::get(VectorType::get({2, 2}, elem),
                                       b.getFloatAttr(elem, 0)));
            frag = vector::InsertOp::create(b, loc, load2(sharedB, n, kLo),
                                            frag, 0);
            frag = vector::InsertOp::create(b, loc, load2(sharedB, n, kHi),
                                            frag, 1);
            bFrag.push_back(frag);
          }
          for (int64_t i = 0; i < kTilesM; ++i)
            for (int64_t j = 0; j < kTilesN; ++j) {
              Value &sum = acc[i * kTilesN + j];
              sum = mmaSync(b, loc, aFrag[i], bFrag[j], sum);
            }
        }
        return acc;
      },
      // Pipelined through registers, the f16 4096^3 GEMM took 5.65 ms
      // instead of 2.78 on an H200 (more live registers around the mma
      // loop); gathered convolutions also spill.
      /*pipelined=*/false);
  // Accumulator (i, j): rows group and group + 8, columns pair, pair + 1.
  for (int64_t i = 0; i < kTilesM; ++i)
    for (int64_t j = 0; j < kTilesN; ++j) {
      Value sums = kLoop.getResult(i * kTilesN + j);
      for (int64_t h = 0; h < 2; ++h) {
        Value r = e.add(l.row0, e.add(warpRow, e.add(group, e.idx(16 * i + 8 * h))));
        for (int64_t q = 0; q < 2; ++q) {
          Value c = e.add(l.col0, e.add(warpCol, e.add(pair, e.idx(8 * j + q))));
          Value v = vector::ExtractOp::create(b, loc, sums,
                                              ArrayRef<int64_t>{h, q});
          storeSum(e, g, l, r, c, v);
        }
      }
    }
  endLaunch(b, loc, g, l);
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
  g.convolution = true;
  auto ot = cast<MemRefType>(out.getType());
  auto wt = cast<MemRefType>(w.getType());
  if (ot.hasStaticShape() && wt.hasStaticShape()) {
    g.staticRows = ot.getDimSize(0) * ot.getDimSize(1) * ot.getDimSize(2);
    g.staticCols = ot.getDimSize(3);
    g.staticDepth = wt.getDimSize(1) * wt.getDimSize(2) * wt.getDimSize(3);
  }
  g.staticBatches = 1;
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
  g.accumulate = [=](Emitter &e, Value, Value m, Value f, Value sum,
                     bool overwrite) {
    Value n = e.div(m, ohow), p = e.rem(m, ohow);
    Value y = e.div(p, ow), x = e.rem(p, ow);
    SmallVector<Value> at = {n, y, x, f};
    Value v = sum;
    if (!overwrite)
      v = arith::AddFOp::create(
          e.b, e.loc, memref::LoadOp::create(e.b, e.loc, out, at), sum);
    memref::StoreOp::create(e.b, e.loc, v, out, at);
  };
  return g;
}

/// A contraction on buffers (matmul, batch matmul, a matmul with transposed
/// operands, a linalg.generic of one multiply-add: attention's Q·Kᵀ and
/// P·V, an einsum): its loop dimensions grouped into batch, M, N and K
/// (linalg::inferContractionDims), each group linearized (innermost
/// fastest), and the operands indexed through their indexing maps.
std::optional<Gemm> contractionGemm(Emitter &e, Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || !linalgOp.hasPureBufferSemantics() ||
      linalgOp.getNumDpsInputs() != 2 || linalgOp.getNumDpsInits() != 1 ||
      !linalg::isaContractionOpInterface(linalgOp))
    return std::nullopt;
  Value a = linalgOp.getDpsInputs()[0], bm = linalgOp.getDpsInputs()[1];
  Value c = linalgOp.getDpsInits()[0];
  if (!isF32Buffer(a) || !isF32Buffer(bm) || !isF32Buffer(c))
    return std::nullopt;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(linalgOp);
  if (failed(dims) || dims->m.empty() || dims->n.empty() || dims->k.empty())
    return std::nullopt;
  SmallVector<AffineMap> maps = linalgOp.getIndexingMapsArray();
  if (!llvm::all_of(maps, [](AffineMap m) { return m.isProjectedPermutation(); }))
    return std::nullopt;
  SmallVector<int64_t> staticSizes = linalgOp.getStaticLoopRanges();
  SmallVector<Value> sizes;
  for (Range r : linalgOp.createLoopRanges(e.b, e.loc))
    sizes.push_back(getValueOrCreateConstantIndexOp(e.b, e.loc, r.size));
  auto product = [&](ArrayRef<unsigned> group, int64_t &staticProduct) {
    Value p = e.idx(1);
    staticProduct = 1;
    for (unsigned d : group) {
      p = e.mul(p, sizes[d]);
      staticProduct = ShapedType::isDynamic(staticSizes[d]) ||
                              ShapedType::isDynamic(staticProduct)
                          ? ShapedType::kDynamic
                          : staticProduct * staticSizes[d];
    }
    return p;
  };
  Gemm g;
  g.sinkConstants = true;
  g.rows = product(dims->m, g.staticRows);
  g.cols = product(dims->n, g.staticCols);
  g.depth = product(dims->k, g.staticDepth);
  g.batches = product(dims->batch, g.staticBatches);
  g.mayBeEmpty = !staticNonEmpty(a) || !staticNonEmpty(bm) || !staticNonEmpty(c);
  // B is read along K when its innermost index is a reduction dimension.
  AffineMap mapB = maps[1];
  g.bAlongK = mapB.getNumResults() > 0 &&
              llvm::is_contained(
                  dims->k, cast<AffineDimExpr>(mapB.getResults().back())
                               .getPosition());
  // The loop dimensions' values of one linear index per group.
  auto split = [sizes](Emitter &e, ArrayRef<unsigned> group, Value linear,
                       SmallVectorImpl<Value> &loops) {
    for (int64_t i = int64_t(group.size()) - 1; i >= 0; --i) {
      if (i == 0) {
        loops[group[i]] = linear;
        break;
      }
      loops[group[i]] = e.rem(linear, sizes[group[i]]);
      linear = e.div(linear, sizes[group[i]]);
    }
  };
  // An operand's indices for a linear index of each of two groups.
  unsigned numLoops = linalgOp.getNumLoops();
  linalg::ContractionDimensions d = *dims;
  auto at = [=](Emitter &e, AffineMap map, Value batch,
                ArrayRef<unsigned> first, Value x, ArrayRef<unsigned> second,
                Value y) {
    SmallVector<Value> loops(numLoops);
    split(e, d.batch, batch, loops);
    split(e, first, x, loops);
    split(e, second, y, loops);
    SmallVector<Value> idx;
    for (AffineExpr r : map.getResults())
      idx.push_back(loops[cast<AffineDimExpr>(r).getPosition()]);
    return idx;
  };
  g.loadA = [=](Emitter &e, Value batch, Value m, Value k) {
    return memref::LoadOp::create(e.b, e.loc, a,
                                  at(e, maps[0], batch, d.m, m, d.k, k))
        .getResult();
  };
  g.loadB = [=](Emitter &e, Value batch, Value k, Value n) {
    return memref::LoadOp::create(e.b, e.loc, bm,
                                  at(e, maps[1], batch, d.k, k, d.n, n))
        .getResult();
  };
  g.accumulate = [=](Emitter &e, Value batch, Value m, Value n, Value sum,
                     bool overwrite) {
    SmallVector<Value> idx = at(e, maps[2], batch, d.m, m, d.n, n);
    Value v = sum;
    if (!overwrite)
      v = arith::AddFOp::create(
          e.b, e.loc, memref::LoadOp::create(e.b, e.loc, c, idx), sum);
    memref::StoreOp::create(e.b, e.loc, v, c, idx);
  };
  return g;
}

std::optional<Gemm> asGemm(Emitter &e, Operation *op) {
  if (std::optional<Gemm> g = convGemm(e, op))
    return g;
  return contractionGemm(e, op);
}

/// The output's `tile`x`tile` tiles times its batches: the blocks of a
/// kernel without split-K. None where a size is dynamic.
std::optional<int64_t> staticBlocks(const Gemm &g, int64_t tile) {
  if (ShapedType::isDynamic(g.staticRows) ||
      ShapedType::isDynamic(g.staticCols) ||
      ShapedType::isDynamic(g.staticBatches))
    return std::nullopt;
  return llvm::divideCeil(g.staticRows, tile) *
         llvm::divideCeil(g.staticCols, tile) * g.staticBatches;
}

/// Enough blocks to fill a large GPU (132 SMs on an H100/H200, two blocks
/// each) when the output has few tiles, with every slice at least 64 deep.
/// Static sizes only (the workspace is statically shaped).
int64_t chooseSplitK(const Gemm &g) {
  std::optional<int64_t> blocks = staticBlocks(g, g.tile);
  if (!blocks || ShapedType::isDynamic(g.staticDepth))
    return 1;
  constexpr int64_t kTargetBlocks = 264, kMinSliceDepth = 64;
  if (*blocks == 0 || *blocks >= kTargetBlocks / 2)
    return 1;
  int64_t byDepth = g.staticDepth / kMinSliceDepth;
  int64_t split =
      std::min<int64_t>(llvm::divideCeil(kTargetBlocks, *blocks), byDepth);
  return std::max<int64_t>(split, 1);
}

/// The f32 kernel's tile: 64x64 where 128x128 tiles would leave most of a
/// large GPU idle (fewer blocks than an H100/H200's 132 SMs), as BERT's
/// 128-token products (one 128-row tile); split-K then fills the rest.
/// Contractions only: a convolution's gathered rows in 64x64 tiles spilled
/// registers in one of ResNet-18's kernels (sm_90), and the convolutions'
/// kernels are tuned as they are (see Gemm::sinkConstants).
int64_t chooseTile(const Gemm &g) {
  static_assert(kTileM == kTileN, "square tiles");
  if (g.convolution)
    return kTileM;
  std::optional<int64_t> blocks = staticBlocks(g, kTileM);
  return blocks && *blocks < 132 ? kSmallTile : kTileM;
}

struct TesselGpuTileMatmulPass
    : tessel::impl::TesselGpuTileMatmulBase<TesselGpuTileMatmulPass> {
  using Base::Base;

  void runOnOperation() override {
    if (precision != "f32" && precision != "f16" && precision != "bf16") {
      getOperation().emitError()
          << "precision must be f32, f16 or bf16, got '" << precision << "'";
      return signalPassFailure();
    }
    SmallVector<Operation *> candidates;
    getOperation().walk([&](Operation *op) {
      auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
      if (linalgOp && !op->getParentOfType<gpu::LaunchOp>() &&
          (isa<linalg::Conv2DNhwcFhwcOp>(op) ||
           linalg::isaContractionOpInterface(linalgOp)))
        candidates.push_back(op);
    });
    for (Operation *op : candidates) {
      if (wgmma && tessel::rewriteAsWgmmaGemm(cast<linalg::LinalgOp>(op)))
        continue;
      OpBuilder b(op);
      Emitter e{b, op->getLoc()};
      std::optional<Gemm> g = asGemm(e, op);
      if (!g)
        continue; // its size queries are dead code, folded later
      // A zero fill just before: stored sums instead (not where the product
      // may be empty: the skipped launch would leave the output unfilled).
      if (!g->mayBeEmpty)
        g->zeroFill = tessel::zeroFillBefore(
            op, cast<linalg::LinalgOp>(op).getDpsInits()[0]);
      if (precision == "f32")
        g->tile = chooseTile(*g);
      g->splitK = chooseSplitK(*g);
      if (precision == "f32")
        emitTiledGemm(b, op->getLoc(), *g);
      else
        emitTensorCoreGemm(b, op->getLoc(), *g,
                           precision == "f16" ? Type(b.getF16Type())
                                              : Type(b.getBF16Type()));
      if (g->zeroFill)
        g->zeroFill->erase();
      op->erase();
    }
  }
};

} // namespace
