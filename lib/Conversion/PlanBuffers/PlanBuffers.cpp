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
// Buffers whose sizes are known only at run time (a symbolic batch) are
// planned the same way, per set of run-time sizes: every buffer of
// `memref.alloc(%n)` is %n times a fixed number of bytes, so the plan in
// those units holds for every %n, and the arena is %n times the plan's
// size. Left to the allocator one by one, a network's activations filled
// as many blocks as it has buffers instead of reusing a few: MobileNetV2
// exported with a symbolic batch ran 1.2x its static export.
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
  int64_t bytes;      // per unit of the run-time sizes' product
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
      if (!ty.getLayout().isIdentity() || !ty.getElementType().isIntOrFloat() ||
          ty.getMemorySpace() || ty.getElementTypeBitWidth() % 8 != 0 ||
          !alloc.getSymbolOperands().empty())
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
      int64_t bytes = ty.getElementTypeBitWidth() / 8;
      for (int64_t d : ty.getShape())
        bytes *= ShapedType::isDynamic(d) ? 1 : d;
      buffers.push_back({alloc, dealloc, begin, end,
                         alignUp(std::max<int64_t>(bytes, 1))});
    }
    // One arena per multiset of run-time sizes (none: the static buffers),
    // in the order of their first buffer, so the output is deterministic.
    SmallVector<std::pair<SmallVector<Value>, SmallVector<Buffer *>>> groups;
    for (Buffer &b : buffers) {
      SmallVector<Value> key(b.alloc.getDynamicSizes());
      llvm::sort(key, [](Value x, Value y) {
        return x.getAsOpaquePointer() < y.getAsOpaquePointer();
      });
      auto it = llvm::find_if(groups, [&](auto &g) { return g.first == key; });
      if (it == groups.end())
        groups.push_back({key, {&b}});
      else
        it->second.push_back(&b);
    }
    for (auto &[key, group] : groups)
      if (group.size() >= 2)
        plan(fn, block, key, group);
  }

  /// Places `group` in one arena whose size is the product of `key` (the
  /// group's run-time sizes; empty for static buffers) times its planned
  /// bytes.
  void plan(func::FuncOp fn, Block &block, ArrayRef<Value> key,
            ArrayRef<Buffer *> group) {

    // Largest first; place each at the lowest offset that does not overlap
    // a placed buffer whose live range intersects its own.
    SmallVector<Buffer *> order(group);
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

    Location loc = fn.getLoc();
    if (key.empty()) {
      OpBuilder builder(&block, block.begin());
      auto arenaTy = MemRefType::get({arenaBytes}, builder.getI8Type());
      Value arena = memref::AllocOp::create(builder, loc, arenaTy,
                                            builder.getI64IntegerAttr(kAlign));
      replaceWithViews(block, arena, Value(), group);
      fn->setAttr("tessel.arena_bytes", builder.getI64IntegerAttr(arenaBytes));
      fn->setAttr("tessel.planned_bytes",
                  builder.getI64IntegerAttr(totalBytes));
      return;
    }
    // The arena at the group's first buffer, whose sizes dominate it.
    Buffer *first = *llvm::min_element(group, [](Buffer *a, Buffer *b) {
      return a->alloc->isBeforeInBlock(b->alloc);
    });
    OpBuilder builder(first->alloc);
    Value units = key.front();
    for (Value v : key.drop_front())
      units = arith::MulIOp::create(builder, loc, units, v);
    Value bytes = arith::MulIOp::create(
        builder, loc, units,
        arith::ConstantIndexOp::create(builder, loc, arenaBytes));
    auto arenaTy = MemRefType::get({ShapedType::kDynamic}, builder.getI8Type());
    Value arena = memref::AllocOp::create(builder, loc, arenaTy,
                                          ValueRange{bytes}, ValueRange{},
                                          builder.getI64IntegerAttr(kAlign));
    replaceWithViews(block, arena, units, group);
  }

  /// Each buffer of `group` becomes a view of `arena` at its offset (times
  /// `units` where the sizes are run-time ones); the arena is freed before
  /// the return.
  void replaceWithViews(Block &block, Value arena, Value units,
                        ArrayRef<Buffer *> group) {
    OpBuilder builder(block.getParentOp()->getContext());
    for (Buffer *b : group) {
      builder.setInsertionPoint(b->alloc);
      Location l = b->alloc.getLoc();
      Value off = arith::ConstantIndexOp::create(builder, l, b->offset);
      if (units)
        off = arith::MulIOp::create(builder, l, units, off);
      Value view = memref::ViewOp::create(builder, l, b->alloc.getType(),
                                          arena, off,
                                          b->alloc.getDynamicSizes());
      b->alloc.getResult().replaceAllUsesWith(view);
      b->dealloc.erase();
      b->alloc.erase();
    }
    builder.setInsertionPoint(block.getTerminator());
    memref::DeallocOp::create(builder, arena.getLoc(), arena);
  }
};

} // namespace
