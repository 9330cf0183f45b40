//===- FuseGathers.cpp - gathers computed where their consumer reads them -===//
//
// ONNX Resize, Gather along a constant index list and the like reach linalg
// as gathers: a parallel generic whose body reads its source with
// tensor.extract at positions taken from a constant index list, then
// reshaped (tosa.gather works on [N, K, C]) and read by an elementwise
// generic. A bilinear resize to 224 x 224 is two such gathers per axis and
// a weighted sum: upstream fusion does not take a producer across a
// collapse_shape followed by an expand_shape, so each gather wrote the whole
// 224 x 224 output once more (DeepLabV3's last resize: three passes over
// 4 MB instead of one).
//
// Here the consumer computes the gathered value itself: its indices of the
// operand go back through the reshapes (an expand_shape linearizes a group,
// a collapse_shape delinearizes one; unit dims are constant 0) to the
// gather's loop indices, and the gather's body is cloned into the
// consumer's with each of its inputs read by tensor.extract at its
// indexing map. Only where the consumer reads each gathered element once (a
// permutation map, reshapes that keep the element count): nothing is
// recomputed.
//
//===----------------------------------------------------------------------===//
#include "FuseGathers.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;

namespace {

/// A parallel generic of static shape with one result, written in its
/// loops' order (a permutation) without reading the init, whose body is
/// free of side effects and regions and reads some tensor by
/// tensor.extract.
bool isGather(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() != 0 || op.hasDynamicShape())
    return false;
  OpOperand *init = op.getDpsInitOperand(0);
  if (op.payloadUsesValueFromOperand(init) ||
      !op.getMatchingIndexingMap(init).isPermutation())
    return false;
  bool extracts = false;
  for (Operation &o : op.getBody()->without_terminator()) {
    if (o.getNumRegions() != 0 || !isMemoryEffectFree(&o))
      return false;
    extracts |= isa<tensor::ExtractOp>(o);
  }
  return extracts;
}

Value indexConst(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// The source indices of an expand_shape from its result's: each group
/// linearized (row-major), its unit dims left out.
SmallVector<Value> throughExpand(OpBuilder &b, Location loc,
                                 tensor::ExpandShapeOp e, ArrayRef<Value> idx) {
  ArrayRef<int64_t> shape = e.getResultType().getShape();
  SmallVector<Value> src;
  for (const ReassociationIndices &group : e.getReassociationIndices()) {
    Value acc;
    for (int64_t d : group) {
      if (shape[d] == 1)
        continue;
      acc = acc ? arith::AddIOp::create(
                      b, loc,
                      arith::MulIOp::create(b, loc, acc,
                                            indexConst(b, loc, shape[d])),
                      idx[d])
                : idx[d];
    }
    src.push_back(acc ? acc : indexConst(b, loc, 0));
  }
  return src;
}

/// The source indices of a collapse_shape from its result's: each result
/// index delinearized over its group (row-major), unit dims 0.
SmallVector<Value> throughCollapse(OpBuilder &b, Location loc,
                                   tensor::CollapseShapeOp c,
                                   ArrayRef<Value> idx) {
  ArrayRef<int64_t> shape = c.getSrcType().getShape();
  SmallVector<Value> src(shape.size());
  for (auto [j, group] : llvm::enumerate(c.getReassociationIndices())) {
    // Floats per step of each dim of the group: the product of the sizes
    // after it.
    int64_t stride = 1;
    bool outermost = true;
    for (int64_t d : llvm::reverse(group))
      stride *= shape[d];
    for (int64_t d : group) {
      stride /= shape[d];
      if (shape[d] == 1) {
        src[d] = indexConst(b, loc, 0);
        continue;
      }
      Value v = idx[j];
      if (stride != 1)
        v = arith::DivUIOp::create(b, loc, v, indexConst(b, loc, stride));
      // The outermost dim needs no remainder: the index is in range.
      if (!outermost)
        v = arith::RemUIOp::create(b, loc, v, indexConst(b, loc, shape[d]));
      outermost = false;
      src[d] = v;
    }
  }
  return src;
}

/// A consumer generic reading a gather through reshapes computes it.
struct FuseGatherIntoConsumer : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() || op.hasDynamicShape())
      return failure();
    for (OpOperand *operand : op.getDpsInputOperands()) {
      SmallVector<Operation *> reshapes; // from the consumer down
      linalg::GenericOp gather;
      if (!op.getMatchingIndexingMap(operand).isPermutation() ||
          !othersSpanTheLoops(op, operand) ||
          !findGather(operand->get(), reshapes, gather) ||
          gather->getBlock() != op->getBlock())
        continue;
      fuse(op, operand->getOperandNumber(), reshapes, gather, rewriter);
      return success();
    }
    return failure();
  }

private:
  /// Whether the consumer's other operands still give every loop its
  /// extent (a linalg op's loop ranges come from its operands' shapes): an
  /// argmax reads the gathered tensor as the only operand over the
  /// reduced dim.
  static bool othersSpanTheLoops(linalg::GenericOp op, OpOperand *fused) {
    llvm::SmallBitVector spanned(op.getNumLoops());
    for (OpOperand &o : op->getOpOperands()) {
      if (&o == fused)
        continue;
      for (AffineExpr e : op.getMatchingIndexingMap(&o).getResults())
        if (auto d = dyn_cast<AffineDimExpr>(e))
          spanned.set(d.getPosition());
    }
    return spanned.all();
  }

  /// Follows single-use reshapes from `v` to a single-use gather.
  static bool findGather(Value v, SmallVectorImpl<Operation *> &reshapes,
                         linalg::GenericOp &gather) {
    for (;;) {
      Operation *def = v.getDefiningOp();
      if (!def || !def->hasOneUse())
        return false;
      if (auto g = dyn_cast<linalg::GenericOp>(def)) {
        if (!isGather(g))
          return false;
        gather = g;
        return true;
      }
      if (auto e = dyn_cast<tensor::ExpandShapeOp>(def)) {
        if (!e.getResultType().hasStaticShape())
          return false;
        reshapes.push_back(e);
        v = e.getSrc();
        continue;
      }
      if (auto c = dyn_cast<tensor::CollapseShapeOp>(def)) {
        if (!c.getSrcType().hasStaticShape())
          return false;
        reshapes.push_back(c);
        v = c.getSrc();
        continue;
      }
      return false;
    }
  }

  static void fuse(linalg::GenericOp op, unsigned fused,
                   ArrayRef<Operation *> reshapes, linalg::GenericOp gather,
                   PatternRewriter &rewriter) {
    Location loc = op.getLoc();
    SmallVector<Value> inputs;
    SmallVector<AffineMap> maps;
    for (OpOperand &o : op->getOpOperands()) {
      if (o.getOperandNumber() == fused)
        continue;
      if (!op.isDpsInit(&o))
        inputs.push_back(o.get());
      maps.push_back(op.getMatchingIndexingMap(&o));
    }
    AffineMap fusedMap = op.getMatchingIndexingMap(&op->getOpOperand(fused));
    auto fusedOp = linalg::GenericOp::create(rewriter, loc, op.getResultTypes(),
                                             inputs, op.getDpsInits(), maps,
                                             op.getIteratorTypesArray());
    rewriter.inlineRegionBefore(op.getRegion(), fusedOp.getRegion(),
                                fusedOp.getRegion().end());
    Block &body = fusedOp.getRegion().front();
    rewriter.setInsertionPointToStart(&body);

    // The operand's indices in the consumer's loops, back to the gather's.
    SmallVector<Value> idx;
    for (AffineExpr e : fusedMap.getResults())
      idx.push_back(linalg::IndexOp::create(
          rewriter, loc, cast<AffineDimExpr>(e).getPosition()));
    for (Operation *r : reshapes)
      idx = isa<tensor::ExpandShapeOp>(r)
                ? throughExpand(rewriter, loc, cast<tensor::ExpandShapeOp>(r),
                                idx)
                : throughCollapse(rewriter, loc,
                                  cast<tensor::CollapseShapeOp>(r), idx);
    AffineMap out = gather.getMatchingIndexingMap(gather.getDpsInitOperand(0));
    SmallVector<Value> loops(gather.getNumLoops());
    for (auto [k, e] : llvm::enumerate(out.getResults()))
      loops[cast<AffineDimExpr>(e).getPosition()] = idx[k];

    // The gather's body, its inputs read at their indexing maps.
    IRMapping mapping;
    Block *gbody = gather.getBody();
    for (OpOperand *in : gather.getDpsInputOperands()) {
      Value arg = gbody->getArgument(in->getOperandNumber());
      if (!isa<RankedTensorType>(in->get().getType())) {
        mapping.map(arg, in->get());
        continue;
      }
      SmallVector<Value> at;
      for (AffineExpr e : gather.getMatchingIndexingMap(in).getResults()) {
        if (auto d = dyn_cast<AffineDimExpr>(e))
          at.push_back(loops[d.getPosition()]);
        else if (auto c = dyn_cast<AffineConstantExpr>(e))
          at.push_back(indexConst(rewriter, loc, c.getValue()));
        else
          at.push_back(affine::AffineApplyOp::create(
              rewriter, loc, AffineMap::get(gather.getNumLoops(), 0, e),
              loops));
      }
      mapping.map(arg, tensor::ExtractOp::create(rewriter, loc, in->get(), at));
    }
    for (Operation &o : gbody->without_terminator()) {
      if (auto index = dyn_cast<linalg::IndexOp>(o)) {
        mapping.map(index.getResult(), loops[index.getDim()]);
        continue;
      }
      rewriter.clone(o, mapping);
    }
    Value value = mapping.lookupOrDefault(
        cast<linalg::YieldOp>(gbody->getTerminator()).getOperand(0));
    rewriter.replaceAllUsesWith(body.getArgument(fused), value);
    body.eraseArgument(fused);
    rewriter.replaceOp(op, fusedOp.getResults());
  }
};

} // namespace

void mlir::tessel::populateFuseGatherPatterns(RewritePatternSet &patterns) {
  patterns.add<FuseGatherIntoConsumer>(patterns.getContext());
}
