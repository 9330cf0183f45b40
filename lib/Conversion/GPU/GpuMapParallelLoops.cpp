//===- GpuMapParallelLoops.cpp - Loop nests to GPU kernels -----------------===//
//
// Upstream's gpu-map-parallel-loops maps loop dimensions to grid and block
// dimensions one to one, which gives blocks of one thread for the shapes
// models have (a [1, 8, 128] loop launches 8 x 128 blocks of 1 thread) and
// cannot map more than three dimensions. Here the whole iteration space of
// a nest is linearized instead, innermost dimension fastest, and cut into
// blocks of `block-size` threads: every nest, of any rank and shape, gets
// full blocks and coalesced accesses along its innermost dimension.
//
//===----------------------------------------------------------------------===//
#include "tessel/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Utils/GPUUtils.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELGPUMAPPARALLELLOOPS
#include "tessel/Conversion/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;

namespace {

/// Whether `op` (or an op nested in it) reads or writes memory. The gpu
/// dialect's own ops (allocations, copies) are host-side runtime calls.
bool touchesMemory(Operation *op) {
  bool touches = false;
  op->walk<WalkOrder::PreOrder>([&](Operation *nested) {
    // A kernel already formed (a tiled matmul) runs on the device.
    if (isa<gpu::LaunchOp>(nested))
      return WalkResult::skip();
    if (isa<gpu::GPUDialect>(nested->getDialect()))
      return WalkResult::advance();
    // A TMA descriptor is encoded by the driver from the buffer's address
    // and sizes: a host call that reads no device memory.
    if (isa<nvgpu::TmaCreateDescriptorOp>(nested))
      return WalkResult::advance();
    auto effects = dyn_cast<MemoryEffectOpInterface>(nested);
    if (effects && (effects.hasEffect<MemoryEffects::Read>() ||
                    effects.hasEffect<MemoryEffects::Write>())) {
      touches = true;
      return WalkResult::interrupt();
    }
    // Ops with unknown effects (calls) count as touching memory.
    if (!effects && !nested->hasTrait<OpTrait::HasRecursiveMemoryEffects>() &&
        !isa<func::ReturnOp>(nested) && nested->getNumRegions() == 0 &&
        !isPure(nested)) {
      touches = true;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return touches;
}

Value ceilDiv(OpBuilder &b, Location loc, Value a, Value d) {
  return arith::CeilDivUIOp::create(b, loc, a, d);
}

struct TesselGpuMapParallelLoopsPass
    : tessel::impl::TesselGpuMapParallelLoopsBase<
          TesselGpuMapParallelLoopsPass> {
  using Base::Base;

  /// `loop` as a launch of one thread per iteration.
  LogicalResult mapLoop(scf::ParallelOp loop) {
    if (loop.getNumResults() != 0)
      return loop.emitError()
             << "a parallel loop with reductions (scf.reduce) cannot run as "
                "a GPU kernel yet";
    OpBuilder b(loop);
    Location loc = loop.getLoc();
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    SmallVector<Value> extents;
    Value total = one;
    for (auto [lb, ub, step] : llvm::zip(loop.getLowerBound(),
                                         loop.getUpperBound(),
                                         loop.getStep())) {
      Value span = arith::SubIOp::create(b, loc, ub, lb);
      // An empty range (ub < lb) has no iterations.
      span = arith::MaxSIOp::create(b, loc, span, zero);
      Value n = ceilDiv(b, loc, span, step);
      extents.push_back(n);
      total = arith::MulIOp::create(b, loc, total, n);
    }
    Value block = arith::ConstantIndexOp::create(b, loc, blockSize);
    // A grid of at least one block: CUDA rejects an empty launch.
    Value grid = arith::MaxUIOp::create(
        b, loc, ceilDiv(b, loc, total, block), one);
    auto launch = gpu::LaunchOp::create(b, loc, grid, one, one, block, one, one);
    OpBuilder body = OpBuilder::atBlockBegin(&launch.getBody().front());
    Value id = arith::AddIOp::create(
        body, loc,
        arith::MulIOp::create(body, loc, launch.getBlockIds().x, block),
        launch.getThreadIds().x);
    Value inRange = arith::CmpIOp::create(body, loc, arith::CmpIPredicate::ult,
                                          id, total);
    auto guard = scf::IfOp::create(body, loc, inRange, /*withElse=*/false);
    gpu::TerminatorOp::create(body, loc);

    OpBuilder inner = guard.getThenBodyBuilder();
    IRMapping map;
    Value rest = id;
    SmallVector<Value> index(extents.size());
    for (int64_t d = int64_t(extents.size()) - 1; d >= 0; --d) {
      if (d == 0) {
        index[d] = rest;
        break;
      }
      index[d] = arith::RemUIOp::create(inner, loc, rest, extents[d]);
      rest = arith::DivUIOp::create(inner, loc, rest, extents[d]);
    }
    for (auto [d, iv] : llvm::enumerate(loop.getInductionVars())) {
      Value offset =
          arith::MulIOp::create(inner, loc, index[d], loop.getStep()[d]);
      map.map(iv, arith::AddIOp::create(inner, loc, loop.getLowerBound()[d],
                                        offset));
    }
    for (Operation &op : loop.getBody()->without_terminator())
      inner.clone(op, map);
    loop.erase();
    return success();
  }

  /// `op` alone in a one-thread kernel.
  LogicalResult wrapSerial(Operation *op) {
    if (!op->use_empty())
      return op->emitError()
             << "the host would read a value computed from device memory "
                "(data-dependent shapes or control flow), which the GPU "
                "target does not support yet";
    OpBuilder b(op);
    Location loc = op->getLoc();
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    auto launch = gpu::LaunchOp::create(b, loc, one, one, one, one, one, one);
    OpBuilder body = OpBuilder::atBlockBegin(&launch.getBody().front());
    Operation *moved = body.clone(*op);
    (void)moved;
    gpu::TerminatorOp::create(body, loc);
    op->erase();
    return success();
  }

  LogicalResult mapBlock(Block &block) {
    for (Operation &op : llvm::make_early_inc_range(block)) {
      if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
        if (failed(mapLoop(loop)))
          return failure();
        continue;
      }
      if (isa<gpu::LaunchOp>(op) || !touchesMemory(&op))
        continue;
      bool hasNestedLoops = false;
      op.walk([&](scf::ParallelOp) { hasNestedLoops = true; });
      if (!hasNestedLoops) {
        if (failed(wrapSerial(&op)))
          return failure();
        continue;
      }
      // Host control flow around kernels (a loop of a while body): map
      // inside, provided the control itself reads no device memory.
      for (Region &region : op.getRegions())
        for (Block &nested : region)
          if (failed(mapBlock(nested)))
            return failure();
      bool hostReads = false;
      op.walk([&](Operation *nested) {
        if (nested != &op && !nested->getParentOfType<gpu::LaunchOp>() &&
            !isa<gpu::LaunchOp>(nested) && nested->getNumRegions() == 0 &&
            touchesMemory(nested))
          hostReads = true;
      });
      if (hostReads)
        return op.emitError()
               << "control flow that reads device memory on the host "
                  "(data-dependent loops or branches) is not supported by "
                  "the GPU target yet";
    }
    return success();
  }

  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    if (blockSize < 1 || blockSize > 1024) {
      fn.emitError() << "block-size must be 1..1024, got "
                     << static_cast<int64_t>(blockSize);
      return signalPassFailure();
    }
    for (Block &block : fn.getBody())
      if (failed(mapBlock(block)))
        return signalPassFailure();
    // Canonicalizations since the tiled kernels were formed (greedy
    // rewrites between tessel-gpu-tile-matmul and here) hoisted their
    // constants to the function, and outlining would pass them as
    // parameters: the kernel's index arithmetic stays unfolded (64-bit
    // divisions by a parameter in its loops). Kernels that asked for it get
    // their own copies back.
    fn.walk([](gpu::LaunchOp launch) {
      if (!launch->removeAttr(tessel::kSinkConstantsAttrName))
        return;
      (void)sinkOperationsIntoLaunchOp(
          launch, [](Operation *op) { return isa<arith::ConstantOp>(op); });
    });
  }
};

} // namespace
