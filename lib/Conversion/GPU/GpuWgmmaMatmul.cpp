//===- GpuWgmmaMatmul.cpp - 16-bit matmuls on Hopper's TMA and wgmma ------===//
//
// On Hopper the tensor cores' full rate is out of reach of `mma.sync` fed
// from registers: the threads cannot move operands fast enough. Hopper's own
// path is asynchronous on both ends: the TMA unit copies operand tiles into
// swizzled shared memory without the threads, and `wgmma` multiplies them
// straight from shared memory for a warpgroup (128 threads) at a time. This
// is the kernel CUTLASS and cuBLAS use there, built from upstream's nvgpu
// ops (TMA descriptors, mbarriers, warpgroup MMAs):
//
//   block of 384 threads = 3 warpgroups, output tile 128 x TN (TN 256|128)
//   warpgroup 2 (producer, one thread): for each 64-deep step of K, waits
//     until stage s is free, then TMA-copies A[128][64] and B[64][TN] into
//     it; the copies complete the stage's `full` mbarrier
//   warpgroups 0, 1 (consumers): rows 64 w .. 64 w + 63 of the tile; wait
//     for `full[s]`, issue wgmma m64nTNk16 x 4 with f32 sums in registers,
//     and once the previous step's wgmma has retired, free its stage
//     (`empty` mbarrier, one arrival per consumer)
//   epilogue: the sums through shared memory (padded rows), then 16-byte
//     coalesced stores (or read-add-stores when the output was not just
//     zero-filled), converted to the output's type
//
//===----------------------------------------------------------------------===//
#include "GpuWgmmaMatmul.h"
#include "GpuEmitter.h"
#include "GpuZeroFill.h"

#include "tessel/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

using namespace mlir;
using mlir::tessel::kSinkConstantsAttrName;

namespace {

constexpr int64_t kWgmmaTileM = 128, kWgmmaTileK = 64;
constexpr int64_t kWarpgroup = 128, kWgmmaThreads = 3 * kWarpgroup;
constexpr int64_t kConsumerThreads = 2 * kWarpgroup;
/// Dynamic shared memory a block may use on sm_90 (227 KiB), less the
/// 1 KiB the kernel may skip to align the stages.
constexpr int64_t kSharedBytes = 227 * 1024 - 1024;
/// 128-byte swizzling repeats every 8 rows of 128 bytes: TMA writes and
/// wgmma reads agree on the pattern when every tile starts at a multiple.
constexpr int64_t kSwizzleAtom = 1024;
/// The epilogue's rows are padded by 8 words so that the 8 rows one
/// fragment store touches fall in different banks.
constexpr int64_t kEpiloguePad = 8;
constexpr int kMaxStages = 8;
/// Register budgets after warp specialization (65536 per SM, one block):
/// the producer needs few, the consumers hold the sums (setmaxnreg).
constexpr int kProducerRegs = 40, kConsumerRegs = 232;

struct Plan {
  Value a, b, c; // the op's buffers
  Type elem;     // f16
  int64_t batches, m, n, k, tileN, stages;
  bool overwrite; // the output was zero-filled just before: store, no add
  linalg::FillOp fill;
};

MemRefType staticIdentity(Value v) {
  auto t = dyn_cast<MemRefType>(v.getType());
  if (!t || !t.hasStaticShape() || !t.getLayout().isIdentity() ||
      t.getNumElements() == 0)
    return {};
  return t;
}

std::optional<Plan> plan(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics())
    return std::nullopt;
  auto matmul = dyn_cast<linalg::MatmulOp>(op.getOperation());
  auto batch = dyn_cast<linalg::BatchMatmulOp>(op.getOperation());
  if (!matmul && !batch)
    return std::nullopt;
  SmallVector<AffineMap> defaults =
      matmul ? linalg::MatmulOp::getDefaultIndexingMaps(op.getContext())
             : linalg::BatchMatmulOp::getDefaultIndexingMaps(op.getContext());
  if (op.getIndexingMapsArray() != defaults)
    return std::nullopt;
  Plan p;
  p.a = op.getDpsInputs()[0];
  p.b = op.getDpsInputs()[1];
  p.c = op.getDpsInits()[0];
  MemRefType ta = staticIdentity(p.a), tb = staticIdentity(p.b),
             tc = staticIdentity(p.c);
  if (!ta || !tb || !tc)
    return std::nullopt;
  p.elem = ta.getElementType();
  // f16 only: the same kernel with bf16 operands (TMA type, wgmma .bf16)
  // has not run on a GPU yet, and an unchecked kernel is no place for a
  // model's results. bf16 products stay on the loop-nest kernels.
  if (!p.elem.isF16() || tb.getElementType() != p.elem)
    return std::nullopt;
  Type out = tc.getElementType();
  if (!(out.isF32() || out == p.elem))
    return std::nullopt;
  int64_t r = ta.getRank();
  p.batches = batch ? ta.getDimSize(0) : 1;
  p.m = ta.getDimSize(r - 2);
  p.k = ta.getDimSize(r - 1);
  p.n = tb.getDimSize(r - 1);
  // TMA: every row but the last starts 16-byte aligned.
  if (p.k % 8 != 0 || p.n % 8 != 0)
    return std::nullopt;
  // Batches are folded into rows: a tile must not reach into the next
  // batch's rows of A or of B.
  if (p.batches > 1 && (p.m % kWgmmaTileM != 0 || p.k % kWgmmaTileK != 0))
    return std::nullopt;
  // The descriptors' lowering puts its arguments on the stack where it
  // stands (upstream, by design): in a host loop (a decoder's steps) the
  // stack would grow with every iteration. Such matmuls keep the loop-nest
  // kernels until the descriptors are made outside the loop.
  for (Operation *parent = op->getParentOp(); parent;
       parent = parent->getParentOp())
    if (isa<LoopLikeOpInterface>(parent))
      return std::nullopt;
  // Row tiles and batches are the grid's y and z (at most 65535 each).
  if (llvm::divideCeil(p.m, kWgmmaTileM) > 65535 || p.batches > 65535)
    return std::nullopt;
  p.tileN = p.n % 256 == 0 ? 256 : 128;
  int64_t stageBytes = (kWgmmaTileM * kWgmmaTileK + kWgmmaTileK * p.tileN) * 2;
  p.stages = std::min<int64_t>(kMaxStages, kSharedBytes / stageBytes);
  assert(p.stages * stageBytes >= kWgmmaTileM * (p.tileN + kEpiloguePad) * 4 &&
         "the epilogue reuses the stages' memory");
  // `linalg.fill 0` right before into the same buffer: the kernel stores
  // its sums instead of adding them to the output.
  p.fill = tessel::zeroFillBefore(op, p.c);
  p.overwrite = static_cast<bool>(p.fill);
  return p;
}

struct Builder : tessel::GpuEmitter {
  /// The parity (i1) of the use `round` of a stage's barrier.
  Value parity(Value round) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                 rem(round, idx(2)), idx(0));
  }
  /// A 2-D row-major view of `bytes` of dynamic shared memory at `offset`.
  Value view(Value dyn, Value offset, ArrayRef<int64_t> shape, Type elem) {
    auto space = gpu::AddressSpaceAttr::get(b.getContext(),
                                            gpu::AddressSpace::Workgroup);
    auto type = MemRefType::get(shape, elem, AffineMap(), space);
    return memref::ViewOp::create(b, loc, type, dyn, offset, ValueRange{});
  }
  /// Folds a batch dimension into the rows: [B][R][C] -> [B*R][C].
  Value rows2d(Value v) {
    auto t = cast<MemRefType>(v.getType());
    if (t.getRank() == 2)
      return v;
    return memref::CollapseShapeOp::create(
        b, loc, v, ArrayRef<ReassociationIndices>{{0, 1}, {2}});
  }
  /// scf.if without results; the builder moves into its then-block.
  scf::IfOp ifThen(Value cond, bool withElse = false) {
    auto op = scf::IfOp::create(b, loc, cond, withElse);
    b.setInsertionPointToStart(op.thenBlock());
    return op;
  }
};

void emit(linalg::LinalgOp op, const Plan &p) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  MLIRContext *ctx = b.getContext();
  Builder e{{b, loc}};

  // Host: TMA descriptors of the operands, batches folded into rows.
  Value a2 = e.rows2d(p.a), b2 = e.rows2d(p.b), c2 = e.rows2d(p.c);
  auto smemSpace = b.getI64IntegerAttr(3);
  auto tmaType = [&](int64_t rows, int64_t cols) {
    return nvgpu::TensorMapDescriptorType::get(
        ctx, MemRefType::get({rows, cols}, p.elem, AffineMap(), smemSpace),
        nvgpu::TensorMapSwizzleKind::SWIZZLE_128B,
        nvgpu::TensorMapL2PromoKind::L2PROMO_256B,
        nvgpu::TensorMapOOBKind::OOB_ZERO,
        nvgpu::TensorMapInterleaveKind::INTERLEAVE_NONE);
  };
  auto descriptor = [&](Value buffer, int64_t rows, int64_t cols) {
    auto unranked = UnrankedMemRefType::get(p.elem, Attribute());
    Value cast = memref::CastOp::create(b, loc, unranked, buffer);
    return nvgpu::TmaCreateDescriptorOp::create(
               b, loc, tmaType(rows, cols), cast,
               ValueRange{e.idx(rows), e.idx(cols)})
        .getResult();
  };
  // A: 128 rows x 64 deep (128 bytes a row, the swizzle's width); B: 64
  // deep x 64 columns, TN / 64 boxes side by side.
  Value mapA = descriptor(a2, kWgmmaTileM, kWgmmaTileK);
  Value mapB = descriptor(b2, kWgmmaTileK, 64);

  int64_t aBytes = kWgmmaTileM * kWgmmaTileK * 2,
          bBytes = kWgmmaTileK * p.tileN * 2;
  int64_t smem = kSwizzleAtom + p.stages * (aBytes + bBytes);
  auto launch = gpu::LaunchOp::create(
      b, loc, e.idx(llvm::divideCeil(p.n, p.tileN)),
      e.idx(llvm::divideCeil(p.m, kWgmmaTileM)), e.idx(p.batches),
      e.idx(kWgmmaThreads), e.idx(1), e.idx(1),
      arith::ConstantIntOp::create(b, loc, b.getI32Type(), smem),
      /*asyncTokenType=*/nullptr, /*asyncDependencies=*/{},
      /*workgroupAttributions=*/{});
  // Its index arithmetic (stage, phase, offsets) folds with the constants.
  launch->setAttr(kSinkConstantsAttrName, b.getUnitAttr());
  b.setInsertionPointToStart(&launch.getBody().front());

  Value tid = launch.getThreadIds().x;
  Value batch = launch.getBlockIds().z;
  Value m0 = e.mul(launch.getBlockIds().y, e.idx(kWgmmaTileM));
  Value n0 = e.mul(launch.getBlockIds().x, e.idx(p.tileN));
  Value wg = e.div(tid, e.idx(kWarpgroup));
  Value lane = e.rem(tid, e.idx(kWarpgroup));
  Value zero = e.idx(0), one = e.idx(1);
  Value stages = e.idx(p.stages);
  Value steps = e.idx(llvm::divideCeil(p.k, kWgmmaTileK));
  Value ticks = e.idx(10000000);

  // The stages start at the first 1 KiB boundary of dynamic shared memory
  // (static shared memory, the mbarriers, comes first).
  auto wgSpace = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  Value dyn = gpu::DynamicSharedMemoryOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(), AffineMap(),
                      wgSpace));
  Value addr = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, dyn);
  Value base = arith::AndIOp::create(
      b, loc,
      arith::SubIOp::create(b, loc, e.idx(kSwizzleAtom),
                            arith::AndIOp::create(b, loc, addr,
                                                  e.idx(kSwizzleAtom - 1))),
      e.idx(kSwizzleAtom - 1));
  auto stageA = [&](Value s) { return e.add(base, e.mul(s, e.idx(aBytes))); };
  auto stageB = [&](Value s) {
    return e.add(base, e.add(e.idx(p.stages * aBytes), e.mul(s, e.idx(bBytes))));
  };

  auto barrierType = nvgpu::MBarrierGroupType::get(ctx, wgSpace, p.stages);
  Value full = nvgpu::MBarrierCreateOp::create(b, loc, barrierType);
  Value empty = nvgpu::MBarrierCreateOp::create(b, loc, barrierType);
  {
    OpBuilder::InsertionGuard guard(b);
    e.ifThen(e.eq(tid, zero));
    auto init = scf::ForOp::create(b, loc, zero, stages, one);
    b.setInsertionPointToStart(init.getBody());
    Value s = init.getInductionVar();
    // `full`: the producer's arrival plus the copies' bytes; `empty`: one
    // arrival per consumer warpgroup.
    nvgpu::MBarrierInitOp::create(b, loc, full, one, s, Value());
    nvgpu::MBarrierInitOp::create(b, loc, empty, e.idx(2), s, Value());
    b.setInsertionPointAfter(init);
    nvgpu::TmaPrefetchOp::create(b, loc, mapA, Value());
    nvgpu::TmaPrefetchOp::create(b, loc, mapB, Value());
  }
  gpu::BarrierOp::create(b, loc);

  auto roles = e.ifThen(e.eq(wg, e.idx(2)), /*withElse=*/true);
  // ---- Producer: one thread issues the copies.
  NVVM::SetMaxRegisterOp::create(
      b, loc, b.getI32IntegerAttr(kProducerRegs),
      NVVM::SetMaxRegisterActionAttr::get(ctx,
                                          NVVM::SetMaxRegisterAction::decrease));
  {
    OpBuilder::InsertionGuard guard(b);
    e.ifThen(e.eq(lane, zero));
    auto loop = scf::ForOp::create(b, loc, zero, steps, one);
    b.setInsertionPointToStart(loop.getBody());
    Value kt = loop.getInductionVar();
    Value s = e.rem(kt, stages);
    // Free when the consumers released its previous use (the first round
    // waits on the phase before the first, complete from the start).
    Value notParity = arith::XOrIOp::create(
        b, loc, e.parity(e.div(kt, stages)),
        arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1));
    nvgpu::MBarrierTryWaitParityOp::create(b, loc, empty, notParity, ticks, s);
    nvgpu::MBarrierArriveExpectTxOp::create(b, loc, full,
                                            e.idx(aBytes + bBytes), s, Value());
    Value kc = e.mul(kt, e.idx(kWgmmaTileK));
    Value rowA = e.add(e.mul(batch, e.idx(p.m)), m0);
    Value rowB = e.add(e.mul(batch, e.idx(p.k)), kc);
    // Coordinates are innermost first: (column, row).
    nvgpu::TmaAsyncLoadOp::create(
        b, loc, e.view(dyn, stageA(s), {kWgmmaTileM, kWgmmaTileK}, p.elem),
        full, mapA, ValueRange{kc, rowA}, s, Value(), Value());
    for (int64_t j = 0; j < p.tileN / 64; ++j)
      nvgpu::TmaAsyncLoadOp::create(
          b, loc,
          e.view(dyn, e.add(stageB(s), e.idx(j * kWgmmaTileK * 64 * 2)),
                 {kWgmmaTileK, 64}, p.elem),
          full, mapB, ValueRange{e.add(n0, e.idx(j * 64)), rowB}, s, Value(),
          Value());
  }

  // ---- Consumers: warpgroup w computes rows 64 w .. 64 w + 63.
  b.setInsertionPointToStart(roles.elseBlock());
  NVVM::SetMaxRegisterOp::create(
      b, loc, b.getI32IntegerAttr(kConsumerRegs),
      NVVM::SetMaxRegisterActionAttr::get(ctx,
                                          NVVM::SetMaxRegisterAction::increase));
  auto accType = nvgpu::WarpgroupAccumulatorType::get(
      ctx, VectorType::get({64, p.tileN}, b.getF32Type()));
  auto descA = nvgpu::WarpgroupMatrixDescriptorType::get(
      ctx, MemRefType::get({64, kWgmmaTileK}, p.elem, AffineMap(), wgSpace));
  auto descB = nvgpu::WarpgroupMatrixDescriptorType::get(
      ctx,
      MemRefType::get({kWgmmaTileK, p.tileN}, p.elem, AffineMap(), wgSpace));
  Value acc0 = nvgpu::WarpgroupMmaInitAccumulatorOp::create(b, loc, accType);
  auto loop = scf::ForOp::create(b, loc, zero, steps, one, ValueRange{acc0});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value kt = loop.getInductionVar();
    Value s = e.rem(kt, stages);
    nvgpu::MBarrierTryWaitParityOp::create(
        b, loc, full, e.parity(e.div(kt, stages)), ticks, s);
    Value tileA =
        e.view(dyn, e.add(stageA(s), e.mul(wg, e.idx(64 * kWgmmaTileK * 2))),
               {64, kWgmmaTileK}, p.elem);
    Value tileB = e.view(dyn, stageB(s), {kWgmmaTileK, p.tileN}, p.elem);
    Value da =
        nvgpu::WarpgroupGenerateDescriptorOp::create(b, loc, descA, tileA, mapA);
    Value db =
        nvgpu::WarpgroupGenerateDescriptorOp::create(b, loc, descB, tileB, mapB);
    // Waits for all but this step's group: the previous step's products
    // are done with their stage, which is then released.
    Value sum = nvgpu::WarpgroupMmaOp::create(
        b, loc, accType, da, db, b.getI64IntegerAttr(1), UnitAttr(),
        b.getUnitAttr(), loop.getRegionIterArgs()[0]);
    {
      OpBuilder::InsertionGuard inner(b);
      e.ifThen(e.land(e.lt(zero, kt), e.eq(lane, zero)));
      Value prev = e.rem(e.add(kt, e.idx(p.stages - 1)), stages);
      nvgpu::MBarrierArriveOp::create(b, loc, nvgpu::MBarrierTokenType::get(ctx),
                                      empty, prev);
    }
    scf::YieldOp::create(b, loc, sum);
  }
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, b.getI64IntegerAttr(0));

  // ---- Epilogue: every stage has landed and been read once both
  // consumers pass this barrier (named: the producer does not take part).
  Value barId = arith::ConstantIntOp::create(b, loc, b.getI32Type(), 1);
  Value barCount =
      arith::ConstantIntOp::create(b, loc, b.getI32Type(), kConsumerThreads);
  auto consumersSync = [&] {
    NVVM::BarrierOp::create(b, loc, Type(), barId, barCount,
                            NVVM::BarrierReductionAttr(), Value());
  };
  consumersSync();
  // The store's lowering places a thread's fragment by the index of its
  // warp in the block, not in its warpgroup: warps 4-7 (warpgroup 1) write
  // 64 rows further. So both warpgroups name rows 0-63 of the tile (the
  // op wants a 64-row destination) and warpgroup 1's sums land in rows
  // 64-127 of the same buffer (checked on the device:
  // test/gpu/prepare_wgmma_check.py).
  int64_t pitch = p.tileN + kEpiloguePad;
  Value tile = e.view(dyn, base, {kWgmmaTileM, pitch}, b.getF32Type());
  Value sums = memref::SubViewOp::create(
      b, loc, tile, ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(0)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(64), b.getIndexAttr(p.tileN)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
  nvgpu::WarpgroupMmaStoreOp::create(b, loc, loop.getResult(0), sums);
  consumersSync();

  // 4 columns a thread, consecutive threads along a row: 16-byte loads of
  // shared memory and coalesced stores.
  int64_t rowThreads = p.tileN / 4, rowsPerPass = kConsumerThreads / rowThreads;
  Value col = e.mul(e.rem(tid, e.idx(rowThreads)), e.idx(4));
  Value row0 = e.div(tid, e.idx(rowThreads));
  Value cRowBase = e.add(e.mul(batch, e.idx(p.m)), m0);
  auto out =
      scf::ForOp::create(b, loc, zero, e.idx(kWgmmaTileM / rowsPerPass), one);
  b.setInsertionPointToStart(out.getBody());
  Value r = e.add(e.mul(out.getInductionVar(), e.idx(rowsPerPass)), row0);
  Value gc = e.add(n0, col);
  e.ifThen(e.land(e.lt(e.add(m0, r), e.idx(p.m)), e.lt(gc, e.idx(p.n))));
  auto f32x4 = VectorType::get({4}, b.getF32Type());
  Value v = vector::LoadOp::create(b, loc, f32x4, tile, ValueRange{r, col});
  Value gr = e.add(cRowBase, r);
  Type outElem = cast<MemRefType>(c2.getType()).getElementType();
  auto outVec = VectorType::get({4}, outElem);
  if (!p.overwrite) {
    Value old = vector::LoadOp::create(b, loc, outVec, c2, ValueRange{gr, gc});
    if (outElem != b.getF32Type())
      old = arith::ExtFOp::create(b, loc, f32x4, old);
    v = arith::AddFOp::create(b, loc, v, old);
  }
  if (outElem != b.getF32Type())
    v = arith::TruncFOp::create(b, loc, outVec, v);
  vector::StoreOp::create(b, loc, v, c2, ValueRange{gr, gc});

  b.setInsertionPointToEnd(&launch.getBody().front());
  gpu::TerminatorOp::create(b, loc);
}

} // namespace

bool mlir::tessel::rewriteAsWgmmaGemm(linalg::LinalgOp op) {
  std::optional<Plan> p = plan(op);
  if (!p)
    return false;
  emit(op, *p);
  if (p->fill)
    p->fill->erase();
  op->erase();
  return true;
}
