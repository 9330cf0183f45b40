//===- RouteLowering.h - compose.route's top-k, dispatch and combine -*- C++
//-*-===//
//
// The pieces of a route lowering, shared by the single-process forms
// (LowerRoute.cpp: grouped and dense) and the expert-parallel one
// (ExpertParallelRoute.cpp), which runs the same top-k and counting sort on
// each process's share of the tokens.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_DIALECT_COMPOSE_TRANSFORMS_ROUTELOWERING_H
#define TESSEL_LIB_DIALECT_COMPOSE_TRANSFORMS_ROUTELOWERING_H

#include "tessel/Dialect/Compose/Transforms/Passes.h"
#include "tessel/Dialect/Tessel/Utils/TosaBuilder.h"

namespace mlir::tessel::compose {

/// Each token's top-k choices, as k columns.
struct TopK {
  SmallVector<Value> experts; // k x [T, 1] i32
  SmallVector<Value> weights; // k x [T, 1] float
  SmallVector<Value> masks;   // k x [T, E] i1: the expert chosen by round j
};

struct RouteLowering {
  RouteOp op;
  OpBuilder &b;
  Location loc;
  TosaBuilder tb;
  int64_t T, E, D, Do, k;
  Type elem;
  Type i32;
  /// The rows routed (`T x D`) and their scores (`T x E`): the op's, or one
  /// process's share of them (expert parallelism).
  Value tokens, scores;
  /// Groups of the counting sort: the E experts, and one more (sorted last)
  /// where padding rows are assigned to no expert.
  int64_t groups;
  /// Whether the sort drops assignments past the op's capacity (expert
  /// parallelism decides that after the processes' counts are known).
  bool dropPastCapacity = true;

  RouteLowering(RouteOp op, OpBuilder &b)
      : op(op), b(b), loc(op.getLoc()), tb(b, op.getLoc()),
        tokens(op.getTokens()), scores(op.getScores()) {
    auto tokTy = op.getTokens().getType();
    T = tokTy.getDimSize(0);
    D = tokTy.getDimSize(1);
    E = op.getExperts().size();
    Do = op.getOutput().getType().getDimSize(1);
    k = op.getK();
    elem = tokTy.getElementType();
    i32 = b.getI32Type();
    groups = E;
  }

  RankedTensorType tensor(ArrayRef<int64_t> shape, Type t) {
    return RankedTensorType::get(shape, t);
  }
  Value indexConst(int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  }
  Value i32Const(int32_t v) {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v));
  }
  Value toIndex(Value v) {
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
  }
  Value extract(Value t, Value i) {
    return tensor::ExtractOp::create(b, loc, t, i);
  }
  Value insert(Value v, Value t, Value i) {
    return tensor::InsertOp::create(b, loc, v, t, i);
  }
  Value zerosI32(int64_t n) {
    auto ty = tensor({n}, i32);
    return arith::ConstantOp::create(
        b, loc, ty, DenseElementsAttr::get(ty, b.getI32IntegerAttr(0)));
  }

  /// Each token's top k by tessel.top_k (lowest index on ties; expanded by
  /// tessel-decompose-graph-ops), as k columns.
  TopK selectTopK() {
    TopK top;
    SmallVector<int32_t> iota(E);
    for (int64_t e = 0; e < E; ++e)
      iota[e] = e;
    auto iotaTy = tensor({1, E}, i32);
    Value iotaV = tosa::ConstOp::create(
        b, loc, iotaTy, DenseElementsAttr::get(iotaTy, ArrayRef(iota)));
    auto topk = TopKOp::create(
        b, loc, tensor({T, k}, elem), tensor({T, k}, b.getI64Type()), scores,
        b.getI64IntegerAttr(k), b.getI64IntegerAttr(1), b.getBoolAttr(true));
    for (int64_t j = 0; j < k; ++j) {
      Value col =
          tosa::CastOp::create(b, loc, tensor({T, 1}, i32),
                               tb.slice(topk.getIndices(), {0, j}, {T, 1}));
      top.experts.push_back(col);
      top.weights.push_back(tb.slice(topk.getValues(), {0, j}, {T, 1}));
      top.masks.push_back(tosa::EqualOp::create(
          b, loc, tensor({T, E}, b.getI1Type()), iotaV, col));
    }
    if (op.getRenormalize()) {
      Value sum = top.weights[0];
      for (int64_t j = 1; j < k; ++j)
        sum = tb.add(sum, top.weights[j]);
      Value inv = tb.reciprocal(sum);
      for (Value &w : top.weights)
        w = tb.mul(w, inv);
    }
    return top;
  }

  /// The counting sort of the T*k assignments r = t*k + j by expert.
  struct Dispatch {
    Value counts;  // [groups] i32: assignments each expert takes
    Value offsets; // [groups] i32: first row of each expert's group
    Value src;     // [R] i32: the token of each sorted row
    Value dst;     // [R] i32: the sorted row of assignment r (0 if dropped)
    Value keep;    // [R] i1, only with a capacity: assignment r was taken
    Value rank;    // [R] i32: assignment r's place in its expert's group
  };

  Dispatch dispatch(const TopK &top) {
    int64_t R = T * k;
    std::optional<uint64_t> capacity =
        dropPastCapacity ? op.getCapacity() : std::nullopt;
    Value flat = tb.reshape(tb.concat(top.experts, 1), {R});
    Value c0 = indexConst(0), c1 = indexConst(1), cR = indexConst(R);
    Value one = i32Const(1);
    // Pass 1: per-expert counts and each assignment's rank in its group.
    SmallVector<Value> init = {zerosI32(groups), zerosI32(R)};
    if (capacity)
      init.push_back(
          tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{R}, b.getI1Type()));
    auto count = scf::ForOp::create(
        b, loc, c0, cR, c1, init,
        [&](OpBuilder &nb, Location, Value r, ValueRange it) {
          OpBuilder::InsertionGuard g(b);
          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          Value e = toIndex(extract(flat, r));
          Value c = extract(it[0], e);
          SmallVector<Value> next;
          Value taken = one;
          if (capacity) {
            Value ok = arith::CmpIOp::create(
                b, loc, arith::CmpIPredicate::slt, c,
                i32Const(static_cast<int32_t>(*capacity)));
            taken = arith::ExtUIOp::create(b, loc, i32, ok);
            next = {insert(arith::AddIOp::create(b, loc, c, taken), it[0], e),
                    insert(c, it[1], r), insert(ok, it[2], r)};
          } else {
            next = {insert(arith::AddIOp::create(b, loc, c, taken), it[0], e),
                    insert(c, it[1], r)};
          }
          scf::YieldOp::create(b, loc, next);
        });
    Dispatch d;
    d.counts = count.getResult(0);
    Value rank = count.getResult(1);
    d.rank = rank;
    if (capacity)
      d.keep = count.getResult(2);
    // Exclusive prefix sum: each group's first row.
    auto scan = scf::ForOp::create(
        b, loc, c0, indexConst(groups), c1,
        ValueRange{zerosI32(groups), i32Const(0)},
        [&](OpBuilder &nb, Location, Value e, ValueRange it) {
          OpBuilder::InsertionGuard g(b);
          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          Value offs = insert(it[1], it[0], e);
          Value acc =
              arith::AddIOp::create(b, loc, it[1], extract(d.counts, e));
          scf::YieldOp::create(b, loc, ValueRange{offs, acc});
        });
    d.offsets = scan.getResult(0);
    // Pass 2: place each assignment at offset + rank.
    Value kC = indexConst(k);
    auto place = scf::ForOp::create(
        b, loc, c0, cR, c1, ValueRange{zerosI32(R), zerosI32(R)},
        [&](OpBuilder &nb, Location, Value r, ValueRange it) {
          OpBuilder::InsertionGuard g(b);
          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          Value e = toIndex(extract(flat, r));
          Value pos = arith::AddIOp::create(b, loc, extract(d.offsets, e),
                                            extract(rank, r));
          Value token = arith::IndexCastOp::create(
              b, loc, i32, arith::DivUIOp::create(b, loc, r, kC));
          auto placed = [&]() -> SmallVector<Value> {
            return {insert(token, it[0], toIndex(pos)), insert(pos, it[1], r)};
          };
          if (!capacity) {
            scf::YieldOp::create(b, loc, placed());
            return;
          }
          // A dropped assignment takes no row; its dst (0) is masked out
          // by the combine. scf.if keeps both updates in place.
          auto ifOp = scf::IfOp::create(
              b, loc, extract(d.keep, r),
              [&](OpBuilder &tb, Location) {
                OpBuilder::InsertionGuard g2(b);
                b.setInsertionPoint(tb.getInsertionBlock(),
                                    tb.getInsertionPoint());
                scf::YieldOp::create(b, loc, placed());
              },
              [&](OpBuilder &eb, Location) {
                OpBuilder::InsertionGuard g2(b);
                b.setInsertionPoint(eb.getInsertionBlock(),
                                    eb.getInsertionPoint());
                scf::YieldOp::create(
                    b, loc, ValueRange{it[0], insert(i32Const(0), it[1], r)});
              });
          scf::YieldOp::create(b, loc, ifOp.getResults());
        });
    d.src = place.getResult(0);
    d.dst = place.getResult(1);
    return d;
  }

  /// Rows of `table` (`N x C`) at `rows` (`[M]` i32) as `M x C`.
  Value gatherRows(Value table, Value rows, int64_t n, int64_t m, int64_t c) {
    Value values = tb.reshape(table, {1, n, c});
    Value idx = tb.reshape(rows, {1, m});
    Value g =
        tosa::GatherOp::create(b, loc, tensor({1, m, c}, elem), values, idx);
    return tb.reshape(g, {m, c});
  }

  Value callExpert(int64_t e, Value input, Type resultTy) {
    auto name = cast<FlatSymbolRefAttr>(op.getExperts()[e]);
    return CallOp::create(b, loc, TypeRange{resultTy}, name, ValueRange{input})
        .getResult(0);
  }

  /// `ys` with rows [off, off + cnt) replaced by expert `e` on those rows
  /// of `xs` (index values). An expert no token chose is skipped (and never
  /// sees an empty batch).
  Value runExpert(int64_t e, Value xs, Value ys, Value off, Value cnt) {
    auto dynIn = tensor({ShapedType::kDynamic, D}, elem);
    auto dynOut = tensor({ShapedType::kDynamic, Do}, elem);
    Value any = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, cnt,
                                      indexConst(0));
    auto ifOp = scf::IfOp::create(
        b, loc, any,
        [&](OpBuilder &nb, Location) {
          OpBuilder::InsertionGuard g(b);
          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          SmallVector<OpFoldResult> offs = {off, b.getIndexAttr(0)};
          SmallVector<OpFoldResult> ones = {b.getIndexAttr(1),
                                            b.getIndexAttr(1)};
          Value xe = tensor::ExtractSliceOp::create(
              b, loc, dynIn, xs, offs,
              SmallVector<OpFoldResult>{cnt, b.getIndexAttr(D)}, ones);
          Value ye = callExpert(e, xe, dynOut);
          Value upd = tensor::InsertSliceOp::create(
              b, loc, ye, ys, offs,
              SmallVector<OpFoldResult>{cnt, b.getIndexAttr(Do)}, ones);
          scf::YieldOp::create(b, loc, upd);
        },
        [&](OpBuilder &nb, Location) { scf::YieldOp::create(nb, loc, ys); });
    return ifOp.getResult(0);
  }

  Value lowerGrouped() {
    int64_t R = T * k;
    TopK top = selectTopK();
    Dispatch d = dispatch(top);
    Value xs = gatherRows(tokens, d.src, T, R, D);
    Value ys = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{R, Do}, elem);
    for (int64_t e = 0; e < E; ++e) {
      Value eIdx = indexConst(e);
      ys = runExpert(e, xs, ys, toIndex(extract(d.offsets, eIdx)),
                     toIndex(extract(d.counts, eIdx)));
    }
    return combine(ys, d, top);
  }

  /// Each token's k result rows (`ys` holds the expert's output for each
  /// sorted row), summed weighted by the gate.
  Value combine(Value ys, const Dispatch &d, const TopK &top) {
    int64_t R = T * k;
    Value picked = tb.reshape(gatherRows(ys, d.dst, R, R, Do), {T, k, Do});
    Value w = tb.reshape(tb.concat(top.weights, 1), {T, k, 1});
    Value weighted = tb.mul(picked, w);
    if (d.keep) {
      Value keep = tb.reshape(d.keep, {T, k, 1});
      weighted = tosa::SelectOp::create(b, loc, weighted.getType(), keep,
                                        weighted, tb.scalar(elem, 0.0, 3));
    }
    return tb.reshape(tb.reduceSum(weighted, 1), {T, Do});
  }

  Value lowerDense() {
    TopK top = selectTopK();
    Value zero = tb.scalar(elem, 0.0, 2);
    std::optional<Value> keep;
    if (op.getCapacity())
      keep = tb.reshape(dispatch(top).keep, {T, k});
    // gates[t, e]: the weight of e if it is among t's (kept) top k, else 0.
    Value gates;
    for (int64_t j = 0; j < k; ++j) {
      Value w = top.weights[j];
      if (keep)
        w = tosa::SelectOp::create(b, loc, w.getType(),
                                   tb.slice(*keep, {0, j}, {T, 1}), w, zero);
      Value g = tosa::SelectOp::create(b, loc, tensor({T, E}, elem),
                                       top.masks[j], w, zero);
      gates = gates ? tb.add(gates, g) : g;
    }
    Value out;
    auto outTy = tensor({T, Do}, elem);
    for (int64_t e = 0; e < E; ++e) {
      Value y = callExpert(e, tokens, outTy);
      Value term = tb.mul(y, tb.slice(gates, {0, e}, {T, 1}));
      out = out ? tb.add(out, term) : term;
    }
    return out;
  }
};

/// The expert-parallel lowering of `op` on `ranks` processes, process q
/// holding experts [firstExpert[q], firstExpert[q + 1])
/// (ExpertParallelRoute.cpp).
Value lowerExpertParallel(RouteOp op, OpBuilder &b, int64_t ranks,
                          ArrayRef<int64_t> firstExpert);

} // namespace mlir::tessel::compose

#endif // TESSEL_LIB_DIALECT_COMPOSE_TRANSFORMS_ROUTELOWERING_H
