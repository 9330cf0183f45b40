//===- ExpertParallelRoute.cpp - compose.route across MPI processes -------===//
//
// Expert parallelism (GShard, DeepSpeed-MoE, Tutel): N processes each hold
// a contiguous block of the experts and a contiguous share of the tokens
// (S = ceil(T / N) rows; the last share is padded, its padding rows routed
// to no expert). Every process runs the same code:
//
//   1. top-k gating and the counting sort by expert of its own rows
//      (RouteLowering), so its rows for each process are contiguous;
//   2. tessel.all_gather of the per-expert counts: every process knows how
//      many rows each process sends each expert;
//   3. tessel.all_to_all_v of the sorted rows to the experts' owners;
//   4. its own experts, each on the rows every process sent it (one call per
//      sending process: the rows arrive grouped by sender, then by expert);
//   5. tessel.all_to_all_v of the results back, in the order they came, so
//      each process gets its rows' results where the rows were;
//   6. the gate-weighted combine of its own tokens, and tessel.all_gather of
//      the combined rows: the route's result on every process.
//
// No row is dropped. The receive buffers are sized for the worst case (every
// process sends all its rows to one process: N * S * k rows); only the rows
// received are computed on.
//
//===----------------------------------------------------------------------===//
#include "RouteLowering.h"

#include "mlir/Dialect/MPI/IR/MPI.h"
#include "mlir/Dialect/Tensor/Utils/Utils.h"

using namespace mlir;
using namespace mlir::tessel;
using namespace mlir::tessel::compose;

namespace {

struct ExpertParallel {
  RouteOp op;
  OpBuilder &b;
  Location loc;
  int64_t N;
  ArrayRef<int64_t> first; // N + 1: process q owns [first[q], first[q + 1])
  RouteLowering L;
  Value comm, rank;

  ExpertParallel(RouteOp op, OpBuilder &b, int64_t N, ArrayRef<int64_t> first)
      : op(op), b(b), loc(op.getLoc()), N(N), first(first), L(op, b) {}

  RankedTensorType tensor(ArrayRef<int64_t> shape, Type t) {
    return RankedTensorType::get(shape, t);
  }
  Value empty(ArrayRef<int64_t> shape, Type t) {
    return tensor::EmptyOp::create(b, loc, shape, t);
  }
  Value i32Tensor(ArrayRef<int64_t> shape, ArrayRef<int32_t> values) {
    auto type = tensor(shape, L.i32);
    return tosa::ConstOp::create(b, loc, type,
                                 DenseElementsAttr::get(type, values));
  }
  /// Rows [offset, offset + rows) of a 2-D tensor (`offset` an index value).
  Value rowsAt(Value t, Value offset, int64_t rows) {
    int64_t cols = cast<RankedTensorType>(t.getType()).getDimSize(1);
    return tensor::ExtractSliceOp::create(
        b, loc, tensor({rows, cols}, getElementTypeOrSelf(t.getType())), t,
        SmallVector<OpFoldResult>{offset, b.getIndexAttr(0)},
        SmallVector<OpFoldResult>{b.getIndexAttr(rows), b.getIndexAttr(cols)},
        SmallVector<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
  }
  /// Column `col` (an index value) of an `N x N` i32 matrix, as `[N]`.
  Value column(Value m, Value col) {
    Value c = tensor::ExtractSliceOp::create(
        b, loc, tensor({N, 1}, L.i32), m,
        SmallVector<OpFoldResult>{b.getIndexAttr(0), col},
        SmallVector<OpFoldResult>{b.getIndexAttr(N), b.getIndexAttr(1)},
        SmallVector<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
    return L.tb.reshape(c, {N});
  }
  Value addI32(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }

  Value lower() {
    MLIRContext *ctx = b.getContext();
    int64_t T = L.T, E = L.E, D = L.D, Do = L.Do, k = L.k;
    int64_t S = (T + N - 1) / N;
    bool padded = S * N != T;
    comm = mpi::CommWorldOp::create(b, loc, mpi::CommType::get(ctx));
    rank = L.toIndex(
        mpi::CommRankOp::create(b, loc, Type(), L.i32, comm).getRank());
    Value row0 = arith::MulIOp::create(b, loc, rank, L.indexConst(S));

    // 1. This process's rows, gated and sorted by expert.
    auto share = [&](Value v) -> Value {
      if (padded) {
        auto type = cast<RankedTensorType>(v.getType());
        Value zero = arith::ConstantOp::create(
            b, loc, b.getZeroAttr(type.getElementType()));
        v = tensor::createPadHighOp(
            tensor({N * S, type.getDimSize(1)}, type.getElementType()), v, zero,
            /*nofold=*/false, loc, b);
      }
      return rowsAt(v, row0, S);
    };
    L.tokens = share(op.getTokens());
    L.scores = share(op.getScores());
    L.T = S;
    TopK top = L.selectTopK();
    if (padded) {
      // Rows past the model's T go to group E, which is sorted last and
      // sent nowhere.
      L.groups = E + 1;
      Value valid = arith::IndexCastOp::create(
          b, loc, L.i32, arith::SubIOp::create(b, loc, L.indexConst(T), row0));
      Value validT = tensor::FromElementsOp::create(
          b, loc, tensor({1, 1}, L.i32), ValueRange{valid});
      SmallVector<int32_t> iota(S);
      for (int64_t i = 0; i < S; ++i)
        iota[i] = static_cast<int32_t>(i);
      Value inRange =
          tosa::GreaterOp::create(b, loc, tensor({S, 1}, b.getI1Type()), validT,
                                  i32Tensor({S, 1}, iota));
      Value none = i32Tensor({1, 1}, {static_cast<int32_t>(E)});
      for (Value &e : top.experts)
        e = tosa::SelectOp::create(b, loc, e.getType(), inRange, e, none);
    }
    // With a capacity, which rows an expert takes depends on every
    // process's counts: decided after their exchange.
    L.dropPastCapacity = false;
    RouteLowering::Dispatch d = L.dispatch(top);
    Value xs = L.gatherRows(L.tokens, d.src, S, S * k, D);

    // 2. Every process's per-expert counts: C[s][e].
    Value mine = padded ? L.tb.slice(d.counts, {0}, {E}) : d.counts;
    Value counts = AllGatherOp::create(b, loc, tensor({N, E}, L.i32),
                                       L.tb.reshape(mine, {1, E}), comm,
                                       empty({N, E}, L.i32))
                       .getResult();
    if (std::optional<uint64_t> capacity = op.getCapacity())
      d.keep = keptRows(top, d, counts, L.tb.reshape(mine, {1, E}),
                        static_cast<int32_t>(*capacity));
    // rows[s][q]: how many rows process s sends process q.
    SmallVector<Value> perOwner;
    for (int64_t q = 0; q < N; ++q) {
      int64_t n = first[q + 1] - first[q];
      perOwner.push_back(
          n == 0
              ? i32Tensor({N, 1}, SmallVector<int32_t>(N, 0))
              : L.tb.reduceSum(L.tb.slice(counts, {0, first[q]}, {N, n}), 1));
    }
    Value rows = N == 1 ? perOwner.front() : L.tb.concat(perOwner, 1);
    Value rowsT = L.tb.transpose(rows, {1, 0});
    Value sendRows = column(rowsT, rank); // rows[rank][q]
    Value recvRows = column(rows, rank);  // rows[s][rank]

    // 3. The rows to the experts' owners.
    int64_t bound = N * S * k;
    Value received =
        AllToAllVOp::create(b, loc, tensor({bound, D}, L.elem), xs, sendRows,
                            recvRows, comm, empty({bound, D}, L.elem))
            .getResult();

    // 4. This process's experts on what each process sent them.
    Value ys = empty({bound, Do}, L.elem);
    for (int64_t e = 0; e < E; ++e) {
      int64_t q = llvm::upper_bound(first, e) - first.begin() - 1;
      Value owns = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rank,
                                         L.indexConst(q));
      auto ifOp = scf::IfOp::create(
          b, loc, owns,
          [&](OpBuilder &nb, Location) {
            OpBuilder::InsertionGuard g(b);
            b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
            scf::YieldOp::create(
                b, loc, runOnSenders(e, q, received, ys, counts, recvRows));
          },
          [&](OpBuilder &nb, Location) { scf::YieldOp::create(nb, loc, ys); });
      ys = ifOp.getResult(0);
    }

    // 5. The results back where their rows came from.
    Value back =
        AllToAllVOp::create(b, loc, tensor({S * k, Do}, L.elem), ys, recvRows,
                            sendRows, comm, empty({S * k, Do}, L.elem))
            .getResult();

    // 6. Combine this process's tokens; every process gets every row.
    Value out = L.combine(back, d, top);
    Value all = AllGatherOp::create(b, loc, tensor({N * S, Do}, L.elem), out,
                                    comm, empty({N * S, Do}, L.elem))
                    .getResult();
    return padded ? L.tb.slice(all, {0, 0}, {T, Do}) : all;
  }

  /// How many of `count` rows an expert takes when `taken` rows of earlier
  /// tokens reached it before (capacity: in token order, as the
  /// single-process route; the processes' shares are in token order).
  Value underCapacity(int32_t capacity, Value taken, Value count) {
    Value room = arith::SubIOp::create(b, loc, L.i32Const(capacity), taken);
    room = arith::MaxSIOp::create(b, loc, room, L.i32Const(0));
    return arith::MinSIOp::create(b, loc, room, count);
  }

  /// Which of this process's sorted assignments their experts take: the
  /// first `min(max(capacity - earlier, 0), mine[e])` of each expert's
  /// group, `earlier` being the rows the processes before this one send it.
  Value keptRows(const TopK &top, const RouteLowering::Dispatch &d,
                 Value counts, Value mine, int32_t capacity) {
    int64_t E = L.E, R = L.T * L.k;
    SmallVector<int32_t> iota(N);
    for (int64_t q = 0; q < N; ++q)
      iota[q] = static_cast<int32_t>(q);
    Value rankT = tensor::FromElementsOp::create(
        b, loc, tensor({1, 1}, L.i32),
        ValueRange{arith::IndexCastOp::create(b, loc, L.i32, rank)});
    Value before = tosa::GreaterOp::create(
        b, loc, tensor({N, 1}, b.getI1Type()), rankT, i32Tensor({N, 1}, iota));
    Value earlier =
        L.tb.reduceSum(tosa::SelectOp::create(b, loc, counts.getType(), before,
                                              counts, i32Tensor({1, 1}, {0})),
                       0);
    Value flat = L.tb.reshape(L.tb.concat(top.experts, 1), {R});
    Value c0 = L.indexConst(0), c1 = L.indexConst(1);
    Value init =
        tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{R}, b.getI1Type());
    auto loop = scf::ForOp::create(
        b, loc, c0, L.indexConst(R), c1, ValueRange{init},
        [&](OpBuilder &nb, Location, Value r, ValueRange it) {
          OpBuilder::InsertionGuard g(b);
          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          Value e = L.toIndex(L.extract(flat, r));
          // Padding rows (group E) are kept by no expert.
          Value real = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                             e, L.indexConst(E));
          Value eSafe = arith::SelectOp::create(b, loc, real, e, c0);
          Value taken = underCapacity(
              capacity,
              tensor::ExtractOp::create(b, loc, earlier, ValueRange{c0, eSafe}),
              tensor::ExtractOp::create(b, loc, mine, ValueRange{c0, eSafe}));
          Value inTime = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::slt, L.extract(d.rank, r), taken);
          Value keep = arith::AndIOp::create(b, loc, real, inTime);
          scf::YieldOp::create(b, loc, L.insert(keep, it[0], r));
        });
    return loop.getResult(0);
  }

  /// `ys` with expert `e` (owned by `q`) run on the rows each process sent
  /// it: sender s's rows start after those of the senders before it, then
  /// after s's rows for q's experts before e. With a capacity, only the
  /// rows it takes (the first of each sender's, in token order).
  Value runOnSenders(int64_t e, int64_t q, Value received, Value ys,
                     Value counts, Value recvRows) {
    Value c0 = L.indexConst(0), c1 = L.indexConst(1);
    std::optional<uint64_t> capacity = op.getCapacity();
    auto loop = scf::ForOp::create(
        b, loc, c0, L.indexConst(N), c1,
        ValueRange{ys, L.i32Const(0), L.i32Const(0)},
        [&](OpBuilder &nb, Location, Value s, ValueRange it) {
          OpBuilder::InsertionGuard g(b);
          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          Value at = it[1];
          for (int64_t before = first[q]; before < e; ++before)
            at = addI32(
                at, tensor::ExtractOp::create(
                        b, loc, counts, ValueRange{s, L.indexConst(before)}));
          Value sent = tensor::ExtractOp::create(
              b, loc, counts, ValueRange{s, L.indexConst(e)});
          Value cnt = capacity ? underCapacity(static_cast<int32_t>(*capacity),
                                               it[2], sent)
                               : sent;
          Value next =
              L.runExpert(e, received, it[0], L.toIndex(at), L.toIndex(cnt));
          Value nextAt =
              addI32(it[1], tensor::ExtractOp::create(b, loc, recvRows, s));
          scf::YieldOp::create(b, loc,
                               ValueRange{next, nextAt, addI32(it[2], sent)});
        });
    return loop.getResult(0);
  }
};

} // namespace

Value mlir::tessel::compose::lowerExpertParallel(RouteOp op, OpBuilder &b,
                                                 int64_t ranks,
                                                 ArrayRef<int64_t> first) {
  return ExpertParallel(op, b, ranks, first).lower();
}
