//===- PlanBuffers.cpp - one arena for a function's intermediate buffers ---===//
//
// Static buffer planning: every statically shaped intermediate buffer of the
// function body (a `memref.alloc` in the entry block, freed by a
// `memref.dealloc` in the same block) gets an offset in one arena, chosen so
// that buffers whose live ranges overlap never share bytes. A live range runs
// from the alloc to the last use of the buffer or of any view of it
// (subview, reshape, ...): the deallocation pipeline frees at the end of the
// block, which says nothing about when a buffer is really dead.
// The allocs become `memref.view`s of the arena; their deallocs go away.
// One allocation per call remains (served from the kernel library's buffer
// cache at -O2+), and the arena is usually far smaller than the sum of the
// buffers: a CNN's activations of layer i are dead by layer i+2.
//
// Offsets come from the greedy "largest first, lowest non-conflicting
// offset" heuristic (as in TFLite's arena planner and IREE's stream
// allocation), aligned to 64 bytes.
//
//===----------------------------------------------------------------------===//
#include "tessel/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELPLANBUFFERS
#include "tessel/Conversion/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;

namespace {

constexpr int64_t kAlign = 64;

struct Buffer {
  memref::AllocOp alloc;
  memref::DeallocOp dealloc;
  int64_t begin, end; // op indices in the block: first .. last use
  int64_t bytes;
  int64_t offset = -1;
};

int64_t alignUp(int64_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

struct PlanBuffersPass
    : tessel::impl::TesselPlanBuffersBase<PlanBuffersPass> {
  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    if (fn.isExternal())
      return;
    Block &block = fn.getBody().front();
    DenseMap<Operation *, int64_t> index;
    int64_t i = 0;
    for (Operation &op : block)
      index[&op] = i++;

    SmallVector<Buffer> buffers;
    for (Operation &op : block) {
      auto alloc = dyn_cast<memref::AllocOp>(&op);
      if (!alloc)
        continue;
      MemRefType ty = alloc.getType();
      if (!ty.hasStaticShape() || !ty.getLayout().isIdentity() ||
          !ty.getElementType().isIntOrFloat() ||
          ty.getMemorySpace() || ty.getElementTypeBitWidth() % 8 != 0)
        continue;
      // Exactly one dealloc, in this block; every other use is in this block
      // too (nested regions could run after the dealloc point only if the
      // IR were already wrong, but stay conservative).
      memref::DeallocOp dealloc;
      bool ok = true;
      for (Operation *user : alloc->getUsers()) {
        if (user->getBlock() != &block) {
          // Uses inside nested regions of an op of this block are fine:
          // that op is within the live range.
          Operation *anc = block.findAncestorOpInBlock(*user);
          if (!anc) {
            ok = false;
            break;
          }
          continue;
        }
        if (auto d = dyn_cast<memref::DeallocOp>(user)) {
          if (dealloc)
            ok = false;
          dealloc = d;
        }
      }
      if (!ok || !dealloc)
        continue;
      // First and last use of the buffer through any chain of views. Views
      // only compute addresses, so the range starts at the first other use:
      // bufferization may place an alloc (and the views of it that producers
      // write through, as for a concatenation built in place) long before
      // anything touches its bytes.
      int64_t begin = -1, end = index[alloc];
      SmallVector<Value> worklist = {alloc.getResult()};
      while (!worklist.empty() && ok) {
        Value v = worklist.pop_back_val();
        for (OpOperand &use : v.getUses()) {
          Operation *user = use.getOwner();
          if (user == dealloc)
            continue;
          Operation *anc = block.findAncestorOpInBlock(*user);
          if (!anc) {
            ok = false;
            break;
          }
          end = std::max(end, index[anc]);
          auto view = dyn_cast<ViewLikeOpInterface>(user);
          if (view && view.getViewSource() == v) {
            for (Value r : user->getResults())
              worklist.push_back(r);
            continue;
          }
          begin = begin < 0 ? index[anc] : std::min(begin, index[anc]);
        }
      }
      if (!ok)
        continue;
      if (begin < 0)
        begin = index[alloc];
      int64_t bytes = ty.getNumElements() * (ty.getElementTypeBitWidth() / 8);
      buffers.push_back({alloc, dealloc, begin, end,
                         alignUp(std::max<int64_t>(bytes, 1))});
    }
    if (buffers.size() < 2)
      return;

    // Largest first; place each at the lowest offset that does not overlap
    // a placed buffer whose live range intersects its own.
    SmallVector<Buffer *> order;
    for (Buffer &b : buffers)
      order.push_back(&b);
    llvm::stable_sort(order, [](Buffer *a, Buffer *b) {
      return a->bytes > b->bytes;
    });
    SmallVector<Buffer *> placed;
    int64_t arenaBytes = 0, totalBytes = 0;
    for (Buffer *b : order) {
      SmallVector<std::pair<int64_t, int64_t>> taken;
      for (Buffer *p : placed)
        if (p->begin <= b->end && b->begin <= p->end)
          taken.push_back({p->offset, p->offset + p->bytes});
      llvm::sort(taken);
      int64_t offset = 0;
      for (auto [lo, hi] : taken) {
        if (offset + b->bytes <= lo)
          break;
        offset = std::max(offset, hi);
      }
      b->offset = offset;
      placed.push_back(b);
      arenaBytes = std::max(arenaBytes, offset + b->bytes);
      totalBytes += b->bytes;
    }

    OpBuilder builder(&block, block.begin());
    Location loc = fn.getLoc();
    auto arenaTy = MemRefType::get({arenaBytes}, builder.getI8Type());
    auto arena = memref::AllocOp::create(builder, loc, arenaTy,
                                         builder.getI64IntegerAttr(kAlign));
    for (Buffer &b : buffers) {
      builder.setInsertionPoint(b.alloc);
      Value off = arith::ConstantIndexOp::create(builder, b.alloc.getLoc(),
                                                 b.offset);
      Value view = memref::ViewOp::create(builder, b.alloc.getLoc(),
                                          b.alloc.getType(), arena, off,
                                          ValueRange{});
      b.alloc.getResult().replaceAllUsesWith(view);
      b.dealloc.erase();
      b.alloc.erase();
    }
    builder.setInsertionPoint(block.getTerminator());
    memref::DeallocOp::create(builder, loc, arena);
    fn->setAttr("tessel.arena_bytes", builder.getI64IntegerAttr(arenaBytes));
    fn->setAttr("tessel.planned_bytes", builder.getI64IntegerAttr(totalBytes));
  }
};

} // namespace
