//===- ShareConcatPrefixes.cpp - concatenations that extend one another ---===//
//
// A DenseNet block concatenates its input with every layer's output so far,
// each time anew: [x0, y1], [x0, y1, y2], ... Bufferized as written, layer k
// copies all k earlier pieces into a fresh buffer (quadratic bytes, and a
// copy loop per piece to compile). When each concatenation starts with the
// pieces of the one before, one tensor as wide as the last holds them all,
// each piece is inserted once, and every concatenation is a leading slice of
// it. The pieces' producers then write into that tensor directly once
// `eliminate-empty-tensors` has run.
//
//===----------------------------------------------------------------------===//
#include "tessel/Dialect/Tessel/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELSHARECONCATPREFIXES
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;

namespace {

/// A concatenation: insert_slices that fill a tensor.empty along `dim`, in
/// order, each piece spanning every other dimension whole.
struct Concat {
  SmallVector<tensor::InsertSliceOp> inserts;
  unsigned dim = 0;
  RankedTensorType type;

  Value result() { return inserts.back().getResult(); }
  int64_t width() { return type.getDimSize(dim); }
  Value piece(unsigned i) { return inserts[i].getSource(); }
  int64_t pieceWidth(unsigned i) {
    return inserts[i].getSourceType().getDimSize(dim);
  }
  /// The same shape but along `dim`: concatenations that could share.
  bool compatible(Concat &o) {
    if (o.dim != dim || o.type.getElementType() != type.getElementType() ||
        o.type.getRank() != type.getRank())
      return false;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (d != dim && o.type.getDimSize(d) != type.getDimSize(d))
        return false;
    return true;
  }
  /// True if `o` starts with every piece of this one (same values, hence
  /// the same offsets) and has more.
  bool isPrefixOf(Concat &o) {
    if (!compatible(o) || o.inserts.size() <= inserts.size())
      return false;
    for (unsigned i = 0; i < inserts.size(); ++i)
      if (o.piece(i) != piece(i))
        return false;
    return true;
  }
};

/// The concatenation whose first insert is `first`, if it is one.
std::optional<Concat> matchConcat(tensor::InsertSliceOp first) {
  if (!first.getDest().getDefiningOp<tensor::EmptyOp>())
    return std::nullopt;
  Concat c;
  c.type = first.getDestType();
  if (!c.type.hasStaticShape())
    return std::nullopt;
  Block *block = first->getBlock();
  tensor::InsertSliceOp op = first;
  while (true) {
    c.inserts.push_back(op);
    Value r = op.getResult();
    if (!r.hasOneUse())
      break;
    auto next = dyn_cast<tensor::InsertSliceOp>(*r.getUsers().begin());
    if (!next || next.getDest() != r || next->getBlock() != block)
      break;
    op = next;
  }
  if (c.inserts.size() < 2)
    return std::nullopt;
  // Along which dimension: the one where the first piece is narrower.
  int64_t rank = c.type.getRank();
  std::optional<unsigned> dim;
  for (int64_t d = 0; d < rank; ++d)
    if (c.inserts.front().getSourceType().getRank() == rank &&
        c.inserts.front().getSourceType().getDimSize(d) != c.type.getDimSize(d))
      dim = d;
  if (!dim)
    return std::nullopt;
  c.dim = *dim;
  int64_t next = 0;
  for (tensor::InsertSliceOp ins : c.inserts) {
    RankedTensorType src = ins.getSourceType();
    if (src.getRank() != rank || !src.hasStaticShape())
      return std::nullopt;
    ArrayRef<int64_t> offsets = ins.getStaticOffsets();
    ArrayRef<int64_t> strides = ins.getStaticStrides();
    for (int64_t d = 0; d < rank; ++d) {
      if (strides[d] != 1)
        return std::nullopt;
      int64_t want = d == c.dim ? next : 0;
      if (offsets[d] != want)
        return std::nullopt;
      if (d != c.dim && src.getDimSize(d) != c.type.getDimSize(d))
        return std::nullopt;
    }
    next += src.getDimSize(c.dim);
  }
  if (next != c.width())
    return std::nullopt;
  return c;
}

struct ShareConcatPrefixesPass
    : tessel::impl::TesselShareConcatPrefixesBase<ShareConcatPrefixesPass> {
  void runOnOperation() override {
    // Concatenations in program order of their last insert (where each
    // becomes available).
    SmallVector<Concat> concats;
    DenseSet<Operation *> inChain;
    getOperation().walk([&](tensor::InsertSliceOp op) {
      if (inChain.contains(op))
        return;
      if (std::optional<Concat> c = matchConcat(op)) {
        for (tensor::InsertSliceOp i : c->inserts)
          inChain.insert(i);
        concats.push_back(std::move(*c));
      }
    });
    DenseMap<Operation *, int64_t> position;
    getOperation().walk<WalkOrder::PreOrder>(
        [&](Operation *op) { position[op] = position.size(); });
    // Positions are distinct: a plain sort is deterministic.
    llvm::sort(concats, [&](const Concat &a, const Concat &b) {
      return position[a.inserts.back()] < position[b.inserts.back()];
    });

    // Groups: each member extends the one before it, in the same block.
    SmallVector<SmallVector<unsigned>> groups;
    for (unsigned i = 0; i < concats.size(); ++i) {
      SmallVector<unsigned> *best = nullptr;
      for (SmallVector<unsigned> &g : groups) {
        Concat &last = concats[g.back()];
        if (last.inserts.back()->getBlock() !=
                concats[i].inserts.back()->getBlock() ||
            !last.isPrefixOf(concats[i]))
          continue;
        if (!best || concats[(*best).back()].inserts.size() <
                         last.inserts.size())
          best = &g;
      }
      if (best)
        best->push_back(i);
      else
        groups.push_back({i});
    }

    IRRewriter rewriter(&getContext());
    for (SmallVector<unsigned> &g : groups) {
      if (g.size() < 2)
        continue;
      Concat &widest = concats[g.back()];
      Location loc = widest.inserts.back().getLoc();
      rewriter.setInsertionPoint(concats[g.front()].inserts.front());
      Value whole = tensor::EmptyOp::create(
          rewriter, loc, widest.type.getShape(), widest.type.getElementType());
      int64_t rank = widest.type.getRank();
      unsigned done = 0;
      for (unsigned idx : g) {
        Concat &c = concats[idx];
        rewriter.setInsertionPointAfter(c.inserts.back());
        for (unsigned p = done; p < c.inserts.size(); ++p) {
          tensor::InsertSliceOp old = c.inserts[p];
          whole = tensor::InsertSliceOp::create(
              rewriter, old.getLoc(), old.getSource(), whole,
              old.getMixedOffsets(), old.getMixedSizes(),
              old.getMixedStrides());
        }
        done = c.inserts.size();
        Value replacement = whole;
        if (c.width() != widest.width()) {
          SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
          SmallVector<OpFoldResult> sizes, strides(rank,
                                                   rewriter.getIndexAttr(1));
          for (int64_t d = 0; d < rank; ++d)
            sizes.push_back(rewriter.getIndexAttr(c.type.getDimSize(d)));
          replacement = tensor::ExtractSliceOp::create(
              rewriter, loc, c.type, whole, offsets, sizes, strides);
        }
        rewriter.replaceAllUsesWith(c.result(), replacement);
        for (tensor::InsertSliceOp ins : llvm::reverse(c.inserts))
          rewriter.eraseOp(ins);
      }
    }
  }
};

} // namespace
