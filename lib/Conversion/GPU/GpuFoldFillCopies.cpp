//===- GpuFoldFillCopies.cpp - Copies of a constant become fills ----------===//
//
// Bufferization fills one buffer with a constant (a matmul's zero init) and
// copies it into each buffer that needs it, as the tensors' SSA form said:
// on a GPU that is a fill kernel once and a device copy per use, where a
// fill of the target alone would do, and then tessel-gpu-tile-matmul folds
// a zero fill into the product's kernel (it stores its sums instead of
// adding them). Runs on buffers before they are planned into one arena, so
// a buffer is its allocation: one whose only writer is a fill and whose
// other uses are copies out of it (and its dealloc) holds the constant at
// every copy; one used in place later (the last use of bufferization's
// fill) holds it until then, and the fill moves down to that use.
//
//===----------------------------------------------------------------------===//
#include "tessel/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELGPUFOLDFILLCOPIES
#include "tessel/Conversion/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;

namespace {

struct TesselGpuFoldFillCopiesPass
    : tessel::impl::TesselGpuFoldFillCopiesBase<TesselGpuFoldFillCopiesPass> {
  void runOnOperation() override {
    SmallVector<memref::AllocOp> allocs;
    getOperation().walk([&](memref::AllocOp a) { allocs.push_back(a); });
    for (memref::AllocOp alloc : allocs) {
      Value buffer = alloc.getResult();
      Block *block = alloc->getBlock();
      linalg::FillOp fill;
      SmallVector<memref::CopyOp> copies;
      SmallVector<memref::DeallocOp> deallocs;
      // The first op of the block (after the fill) that uses the buffer in
      // any other way, through views too: the buffer may hold something
      // else from there on.
      Operation *firstOther = nullptr;
      auto other = [&](Operation *user) {
        Operation *op = block->findAncestorOpInBlock(*user);
        if (!op)
          return false;
        if (!firstOther || op->isBeforeInBlock(firstOther))
          firstOther = op;
        return true;
      };
      bool ok = true;
      for (Operation *user : alloc->getUsers()) {
        auto f = dyn_cast<linalg::FillOp>(user);
        auto c = dyn_cast<memref::CopyOp>(user);
        if (f && !fill && f->getBlock() == block &&
            f.getOutputs()[0] == buffer && f.hasPureBufferSemantics())
          fill = f;
        else if (c && c->getBlock() == block && c.getSource() == buffer &&
                 c.getTarget() != buffer)
          copies.push_back(c);
        else if (auto d = dyn_cast<memref::DeallocOp>(user))
          deallocs.push_back(d);
        else
          ok = other(user) && ok;
      }
      if (!ok || !fill)
        continue;
      // A second fill counts as another writer.
      for (Operation *user : alloc->getUsers())
        if (isa<linalg::FillOp>(user) && user != fill.getOperation())
          other(user);
      if (firstOther && firstOther->isBeforeInBlock(fill))
        continue;
      // The copies between the fill and the first other use read the
      // constant.
      bool allFolded = true;
      for (memref::CopyOp c : copies) {
        if (!fill->isBeforeInBlock(c) ||
            (firstOther && !c->isBeforeInBlock(firstOther))) {
          allFolded = false;
          continue;
        }
        OpBuilder b(c);
        linalg::FillOp::create(b, c.getLoc(), fill.getInputs()[0],
                               c.getTarget());
        c->erase();
      }
      if (firstOther) {
        // Nothing reads the constant before firstOther now: the fill moves
        // down to it, where a product writing the buffer in place folds it.
        fill->moveBefore(firstOther);
        continue;
      }
      if (!allFolded)
        continue; // a copy before the fill reads the buffer
      fill->erase();
      for (memref::DeallocOp d : deallocs)
        d->erase();
      alloc->erase();
    }
  }
};

} // namespace
