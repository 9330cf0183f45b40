//===- DecomposeGatherScatter.cpp - tessel.gather / scatter_elements -------===//
//
// The expansions of the two ops whose positions are read at run time
// (part of tessel-decompose-graph-ops): a range check over the indices
// that fails the call (tessel.require, INDEX_OUT_OF_RANGE) and the
// element-wise gather or the loop of scatters. Shapes may be dynamic.
//
//===----------------------------------------------------------------------===//
#include "tessel/Dialect/Tessel/IR/TesselDialect.h"
#include "tessel/Dialect/Tessel/Transforms/Passes.h"
#include "tessel/Dialect/Tessel/Utils/IndexMath.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::tessel;

namespace {

/// `indices` (any rank) as 1-D, for the loop that checks every index.
Value flattened(IndexMath &m, Value indices) {
  auto type = cast<RankedTensorType>(indices.getType());
  if (type.getRank() == 1)
    return indices;
  if (type.getRank() == 0)
    return tensor::FromElementsOp::create(
        m.b, m.loc, RankedTensorType::get({1}, type.getElementType()),
        ValueRange{tensor::ExtractOp::create(m.b, m.loc, indices,
                                             ValueRange{})});
  SmallVector<ReassociationIndices> all(1);
  for (int64_t d = 0; d < type.getRank(); ++d)
    all[0].push_back(d);
  return tensor::CollapseShapeOp::create(m.b, m.loc, indices, all);
}

/// Index `i` (any integer type) as an index, counted from the end where
/// negative; `inRange` whether it lies in [-dim, dim).
Value wrapIndex(IndexMath &n, Value i, Value dim, Value *inRange) {
  Value k = arith::IndexCastOp::create(n.b, n.loc, n.b.getIndexType(), i);
  k = n.select(n.lt(k, n.c(0)), n.add(k, dim), k);
  *inRange = n.both(n.le(n.c(0), k), n.lt(k, dim));
  return k;
}

struct DecomposeGather : OpRewritePattern<GatherOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GatherOp op,
                                PatternRewriter &rewriter) const override {
    IndexMath m(rewriter, op.getLoc());
    Value x = op.getInput(), indices = op.getIndices();
    auto outType = cast<RankedTensorType>(op.getType());
    int64_t axis = op.getAxis();
    int64_t iRank = cast<RankedTensorType>(indices.getType()).getRank();
    Value dim = m.dim(x, axis);
    auto xType = cast<RankedTensorType>(x.getType());
    bool mayBeEmpty = xType.getDimSize(axis) == 0 || xType.isDynamicDim(axis);
    Type elem = xType.getElementType();
    // Every index in range, over the flattened indices.
    Value flat = flattened(m, indices);
    auto check = scf::ForOp::create(
        m.b, m.loc, m.c(0), m.dim(flat, 0), m.c(1), ValueRange{m.yes()},
        [&](OpBuilder &fb, Location l, Value k, ValueRange acc) {
          IndexMath n(fb, l);
          Value inRange;
          wrapIndex(n, tensor::ExtractOp::create(fb, l, flat, ValueRange{k}),
                    dim, &inRange);
          scf::YieldOp::create(fb, l, ValueRange{n.both(acc[0], inRange)});
        });
    // The result's run-time sizes: the input's around the axis, the
    // indices' in its place.
    SmallVector<Value> sizes;
    for (int64_t d = 0; d < outType.getRank(); ++d) {
      if (!outType.isDynamicDim(d))
        continue;
      if (d < axis)
        sizes.push_back(m.dim(x, d));
      else if (d < axis + iRank)
        sizes.push_back(m.dim(indices, d - axis));
      else
        sizes.push_back(m.dim(x, d - iRank + 1));
    }
    Value out = tensor::GenerateOp::create(
        m.b, m.loc, outType, sizes,
        [&](OpBuilder &nb, Location l, ValueRange iv) {
          IndexMath n(nb, l);
          Value inRange;
          Value k = wrapIndex(
              n,
              tensor::ExtractOp::create(nb, l, indices, iv.slice(axis, iRank)),
              dim, &inRange);
          // The index is wrapped and checked again here, not only in the
          // check loop: the read must stay in bounds even when the call
          // fails. Out of range: element 0 of the axis (the call fails), or,
          // where the axis may be empty and has no element to read, a
          // branch around the read that yields zero.
          auto position = [&](Value k) {
            SmallVector<Value> at(iv.take_front(axis));
            at.push_back(k);
            llvm::append_range(at, iv.drop_front(axis + iRank));
            return at;
          };
          if (!mayBeEmpty) {
            tensor::YieldOp::create(
                nb, l,
                tensor::ExtractOp::create(
                    nb, l, x, position(n.select(inRange, k, n.c(0))))
                    .getResult());
            return;
          }
          auto read = scf::IfOp::create(
              nb, l, inRange,
              [&](OpBuilder &tb, Location tl) {
                scf::YieldOp::create(
                    tb, tl,
                    ValueRange{tensor::ExtractOp::create(tb, tl, x,
                                                         position(k))});
              },
              [&](OpBuilder &eb, Location el) {
                scf::YieldOp::create(
                    eb, el,
                    ValueRange{arith::ConstantOp::create(
                        eb, el, cast<TypedAttr>(eb.getZeroAttr(elem)))});
              });
          tensor::YieldOp::create(nb, l, read.getResult(0));
        });
    rewriter.replaceOp(op, required(m, check.getResult(0), out, out,
                                    TESSEL_ENTRY_INDEX_OUT_OF_RANGE));
    return success();
  }
};

/// `cur` combined with `upd` by `reduction` (None: `upd`).
Value combine(OpBuilder &b, Location l, ScatterReduction reduction, Value cur,
              Value upd) {
  bool isFloat = isa<FloatType>(cur.getType());
  switch (reduction) {
  case ScatterReduction::None:
    return upd;
  case ScatterReduction::Add:
    return isFloat ? Value(arith::AddFOp::create(b, l, cur, upd))
                   : Value(arith::AddIOp::create(b, l, cur, upd));
  case ScatterReduction::Mul:
    return isFloat ? Value(arith::MulFOp::create(b, l, cur, upd))
                   : Value(arith::MulIOp::create(b, l, cur, upd));
  case ScatterReduction::Max:
    return isFloat ? Value(arith::MaximumFOp::create(b, l, cur, upd))
                   : Value(arith::MaxSIOp::create(b, l, cur, upd));
  case ScatterReduction::Min:
    return isFloat ? Value(arith::MinimumFOp::create(b, l, cur, upd))
                   : Value(arith::MinSIOp::create(b, l, cur, upd));
  }
  llvm_unreachable("every reduction is covered");
}

/// One loop over the updates in row-major order, each read, combined with
/// the element it lands on and written back (repeated positions combine in
/// that order). Nothing is read or written out of the input's bounds:
/// indices or updates larger than it along another dim run no step.
struct DecomposeScatterElements : OpRewritePattern<ScatterElementsOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ScatterElementsOp op,
                                PatternRewriter &rewriter) const override {
    IndexMath m(rewriter, op.getLoc());
    Value data = op.getInput(), indices = op.getIndices(),
          updates = op.getUpdates();
    int64_t rank = cast<RankedTensorType>(data.getType()).getRank();
    int64_t axis = op.getAxis();
    ScatterReduction reduction = op.getReduction();
    // Indices and updates must have one shape; otherwise nothing is
    // written and the call fails.
    // Along the other dims the positions must lie within the input too.
    Value ok = m.yes();
    SmallVector<Value> extents;
    for (int64_t d = 0; d < rank; ++d) {
      Value n = m.dim(indices, d);
      ok = m.both(ok, m.eq(n, m.dim(updates, d)));
      if (d != axis)
        ok = m.both(ok, m.le(n, m.dim(data, d)));
      extents.push_back(n);
    }
    Value count = m.product(extents, m.numElements(updates));
    Value dimSize = m.dim(data, axis);
    auto loop = scf::ForOp::create(
        m.b, m.loc, m.c(0), m.select(ok, count, m.c(0)), m.c(1),
        ValueRange{data, ok},
        [&](OpBuilder &nb, Location l, Value i, ValueRange acc) {
          IndexMath n(nb, l);
          SmallVector<Value> at(rank);
          Value rest = i;
          for (int64_t d = rank - 1; d >= 0; --d) {
            at[d] = n.rem(rest, extents[d]);
            rest = n.div(rest, extents[d]);
          }
          Value inRange;
          Value k = wrapIndex(n, tensor::ExtractOp::create(nb, l, indices, at),
                              dimSize, &inRange);
          // Out of range: nothing is read or written (the axis may be
          // empty), the element is left as it is and the call fails.
          auto write = scf::IfOp::create(
              nb, l, inRange,
              [&](OpBuilder &tb, Location tl) {
                SmallVector<Value> target(at);
                target[axis] = k;
                Value upd = tensor::ExtractOp::create(tb, tl, updates, at);
                Value cur = tensor::ExtractOp::create(tb, tl, acc[0], target);
                scf::YieldOp::create(
                    tb, tl,
                    ValueRange{tensor::InsertOp::create(
                        tb, tl, combine(tb, tl, reduction, cur, upd), acc[0],
                        target)});
              },
              [&](OpBuilder &eb, Location el) {
                scf::YieldOp::create(eb, el, ValueRange{acc[0]});
              });
          scf::YieldOp::create(
              nb, l, ValueRange{write.getResult(0), n.both(acc[1], inRange)});
        });
    rewriter.replaceOp(op, required(m, loop.getResult(1), loop.getResult(0),
                                    loop.getResult(0),
                                    TESSEL_ENTRY_INDEX_OUT_OF_RANGE));
    return success();
  }
};

} // namespace

void mlir::tessel::populateDecomposeGatherScatterPatterns(
    RewritePatternSet &patterns) {
  patterns.add<DecomposeGather, DecomposeScatterElements>(
      patterns.getContext());
}
