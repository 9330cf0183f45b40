//===- FuseAttention.cpp - matmul/softmax/matmul -> tessel.attention -------===//
//
// Attention as importers leave it (ONNX MatMul/Mul/Add/Softmax/MatMul, or
// torch's scaled dot product decomposed the same way) materializes the
// B x M x N score matrix twice (scores, then probabilities) and walks it
// three times. tessel.attention computes it block by block in registers
// (lib/Kernels/AttentionF32.c). The match is at the model level, before
// softmax is decomposed into reductions that no longer say "softmax".
//
//===----------------------------------------------------------------------===//
#include "tessel/Dialect/Tessel/IR/TesselDialect.h"
#include "tessel/Dialect/Tessel/Transforms/Passes.h"
#include "tessel/Dialect/Tessel/Utils/IndexMath.h"
#include "tessel/Runtime/tessel_abi.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELFUSEATTENTION
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {

bool isF32Rank3(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.getRank() == 3 && t.getElementType().isF32();
}

/// Whether every user of `v` is `user` or a tensor.dim: sizes read for
/// the importers' run-time checks, which the fused op checks anew.
bool usedOnlyBy(Value v, Operation *user) {
  return llvm::all_of(v.getUsers(), [&](Operation *u) {
    return u == user || isa<tensor::DimOp>(u);
  });
}

/// Whether `v` has one user but sizes read.
bool exclusive(Value v) {
  llvm::SmallPtrSet<Operation *, 2> users;
  for (Operation *u : v.getUsers())
    if (!isa<tensor::DimOp>(u))
      users.insert(u);
  return users.size() == 1;
}

/// Whether shape entry `e` of a view of `src` is its dim `d`, or that
/// emptied where a check fails (`select(ok, dim, 0)`).
bool isSizeOrEmpty(Value e, Value src, int64_t d) {
  if (auto sel = e.getDefiningOp<arith::SelectOp>())
    if (matchPattern(sel.getFalseValue(), m_Zero()))
      e = sel.getTrueValue();
  int64_t size = cast<RankedTensorType>(src.getType()).getDimSize(d);
  APInt c;
  if (matchPattern(e, m_ConstantInt(&c)))
    return !ShapedType::isDynamic(size) && c.getSExtValue() == size;
  auto dim = e.getDefiningOp<tensor::DimOp>();
  std::optional<int64_t> at = dim ? dim.getConstantIndex() : std::nullopt;
  return dim && dim.getSource() == src && at == d;
}

/// The run-time checks importers wrap a matmul with run-time sizes in
/// (ONNX MatMul: lib/Importers/ONNX/Ops/MatMul.cpp), which keep the
/// values unless a check fails: a `tessel.require` whose fallback is its
/// value (the failure is reported), and a tensor.reshape to the source's
/// own sizes, empty where a check failed. The fused op makes the same
/// checks on its operands, so the chain can be fused through them.
Value checkedSource(Value v) {
  if (auto r = v.getDefiningOp<RequireOp>())
    return r.getValue() == r.getFallback() &&
                   r.getStatus() == TESSEL_ENTRY_SHAPE_MISMATCH
               ? r.getValue()
               : Value();
  auto r = v.getDefiningOp<tensor::ReshapeOp>();
  if (!r || r.getSource().getType() != r.getType())
    return {};
  auto shape = r.getShape().getDefiningOp<tensor::FromElementsOp>();
  if (!shape)
    return {};
  for (auto [d, e] : llvm::enumerate(shape.getElements()))
    if (!isSizeOrEmpty(e, r.getSource(), d))
      return {};
  return r.getSource();
}

/// The value behind `v` through reshapes that keep the type (importers
/// leave them around every matmul) and run-time checks (checkedSource),
/// provided each value passed has no other user (but sizes read): the
/// chain is replaced, so nothing else may read it. The requires passed
/// are added to `requires`.
Value producer(Value v, SmallVectorImpl<RequireOp> &requires) {
  while (Operation *def = v.getDefiningOp()) {
    Value in;
    if (auto r = dyn_cast<tosa::ReshapeOp>(def);
        r && r.getInput1().getType() == r.getType())
      in = r.getInput1();
    else
      in = checkedSource(v);
    if (!in || !usedOnlyBy(in, def))
      break;
    // A check is dropped with the chain: it must check nothing else.
    if (auto r = dyn_cast<RequireOp>(def)) {
      if (!exclusive(v))
        break;
      requires.push_back(r);
    }
    v = in;
  }
  return v;
}

/// An operand of the chain (q, k, v): `v` behind the views of checks
/// (checkedSource), which the fused op's own checks replace; not behind a
/// require, which stays for its other users (it is its value anyway).
Value operandBehindViews(Value v) {
  while (v.getDefiningOp<tensor::ReshapeOp>())
    if (Value in = checkedSource(v))
      v = in;
    else
      break;
  return v;
}

/// The float of a splat constant, looking through reshapes and tiles of it.
std::optional<float> splatFloat(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto r = dyn_cast<tosa::ReshapeOp>(def))
      v = r.getInput1();
    else if (auto t = dyn_cast<tosa::TileOp>(def))
      v = t.getInput1();
    else
      break;
  }
  DenseElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)) || !attr.isSplat() ||
      !attr.getElementType().isF32())
    return std::nullopt;
  return attr.getSplatValue<APFloat>().convertToFloat();
}

bool hasZeroPoints(tosa::MatMulOp mm) {
  FailureOr<int64_t> a = mm.getAZeroPoint(), b = mm.getBZeroPoint();
  return succeeded(a) && succeeded(b) && *a == 0 && *b == 0;
}

/// Whether `mask` broadcasts to `full` (rank 3, each dim 1 or equal).
bool broadcastsTo(Value mask, RankedTensorType full) {
  if (!isF32Rank3(mask))
    return false;
  auto m = cast<RankedTensorType>(mask.getType());
  for (int64_t d = 0; d < 3; ++d)
    if (m.getDimSize(d) != 1 && m.getDimSize(d) != full.getDimSize(d))
      return false;
  return true;
}

/// A constant scaling `x * c` or `x / c`.
struct Scaling {
  Value x;
  float c;
  bool divide;
  /// `scale` scaled the same way: a division stays a division, as the
  /// model computes it (1/c rounded first would differ in the last bit).
  float apply(float scale) const { return divide ? scale / c : scale * c; }
};

/// If `v` is `x * c` or `x / c` with `c` a splat constant (tosa.mul,
/// arith.divf on tensors, or an elementwise linalg.generic: the importers'
/// division with run-time sizes), and `x` has no other user than `v`'s op.
std::optional<Scaling> scaling(Value v) {
  auto ty = v.getType();
  auto of = [&](Value x, std::optional<float> c,
                bool divide) -> std::optional<Scaling> {
    if (!c || x.getType() != ty || !usedOnlyBy(x, v.getDefiningOp()))
      return std::nullopt;
    return Scaling{x, *c, divide};
  };
  if (auto mul = v.getDefiningOp<tosa::MulOp>()) {
    for (int side = 0; side < 2; ++side)
      if (auto r = of(mul->getOperand(side),
                      splatFloat(mul->getOperand(1 - side)), false))
        return r;
  } else if (auto div = v.getDefiningOp<arith::DivFOp>()) {
    return of(div.getLhs(), splatFloat(div.getRhs()), true);
  } else if (auto gen = v.getDefiningOp<linalg::GenericOp>()) {
    // out = in0 op in1 over identity maps for `x` and the result.
    if (gen.getNumDpsInputs() != 2 || gen.getNumDpsInits() != 1 ||
        gen.getNumReductionLoops() != 0 ||
        !gen.getIndexingMapsArray().back().isIdentity())
      return std::nullopt;
    Block &body = gen.getRegion().front();
    if (body.getOperations().size() != 2)
      return std::nullopt;
    Operation *op = &body.front();
    if (!isa<arith::MulFOp, arith::DivFOp>(op) ||
        body.getTerminator()->getOperand(0) != op->getResult(0))
      return std::nullopt;
    for (int side = 0; side < 2; ++side) {
      auto xArg = dyn_cast<BlockArgument>(op->getOperand(side));
      auto cArg = dyn_cast<BlockArgument>(op->getOperand(1 - side));
      bool divide = isa<arith::DivFOp>(op);
      if (!xArg || !cArg || xArg.getOwner() != &body ||
          cArg.getOwner() != &body || xArg.getArgNumber() >= 2 ||
          cArg.getArgNumber() >= 2 || xArg == cArg || (divide && side == 1) ||
          !gen.getMatchingIndexingMap(gen.getDpsInputOperand(
                  xArg.getArgNumber())).isIdentity())
        continue;
      // The constant broadcasts from size 1 in every dim, so the op
      // implies no check of sizes that dropping it would lose.
      Value c = gen.getDpsInputs()[cArg.getArgNumber()];
      auto cTy = dyn_cast<RankedTensorType>(c.getType());
      if (!cTy || !llvm::all_of(cTy.getShape(),
                                [](int64_t d) { return d == 1; }))
        continue;
      return of(gen.getDpsInputs()[xArg.getArgNumber()], splatFloat(c), divide);
    }
  }
  return std::nullopt;
}

/// If `v` is a constant scaling of x (scaling()), multiplies `scale` by
/// its factor and returns `x` (behind reshapes and checks); else `v`.
Value peelScale(Value v, float &scale, SmallVectorImpl<RequireOp> &requires) {
  std::optional<Scaling> s = scaling(v);
  if (!s)
    return v;
  scale = s->apply(scale);
  return producer(s->x, requires);
}

bool isStaticDim(Value x, int64_t d) {
  return !cast<RankedTensorType>(x.getType()).isDynamicDim(d);
}

/// `x` with its dim `d` 0 where `ok` does not hold.
Value emptiedUnless(IndexMath &z, Value ok, Value x, int64_t d) {
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<Value> sizes;
  for (int64_t j = 0; j < type.getRank(); ++j)
    sizes.push_back(z.dim(x, j));
  sizes[d] = z.select(ok, sizes[d], z.c(0));
  Value shape = tensor::FromElementsOp::create(
      z.b, z.loc, RankedTensorType::get({type.getRank()}, z.b.getIndexType()),
      sizes);
  return tensor::ReshapeOp::create(z.b, z.loc, type, x, shape);
}

struct FuseAttentionPattern : OpRewritePattern<tosa::MatMulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tosa::MatMulOp pv,
                                PatternRewriter &rewriter) const override {
    if (!isF32Rank3(pv.getA()) || !isF32Rank3(pv.getB()) || !hasZeroPoints(pv))
      return failure();
    // The importers' checks of the chain, replaced by the fused op's own.
    SmallVector<RequireOp> requires;
    Value probs = producer(pv.getA(), requires);
    auto softmax = probs.getDefiningOp<SoftmaxOp>();
    if (!softmax || !exclusive(probs) || softmax.getNormalizedAxis() != 2)
      return rewriter.notifyMatchFailure(pv, "A is not a last-axis softmax");
    Value s = producer(softmax.getInput(), requires);
    auto scoresTy = cast<RankedTensorType>(s.getType());
    if (!exclusive(s))
      return failure();

    Value mask;
    if (auto add = s.getDefiningOp<tosa::AddOp>()) {
      if (add.getType() != scoresTy)
        return failure();
      // The scores are the side that comes from the matmul chain.
      for (int side = 0; side < 2 && !mask; ++side) {
        Value chain = producer(add->getOperand(side), requires);
        Value other = add->getOperand(1 - side);
        if (chain.getType() == scoresTy && exclusive(chain) &&
            isa_and_nonnull<tosa::MatMulOp, tosa::MulOp, arith::DivFOp,
                            linalg::GenericOp>(chain.getDefiningOp()) &&
            broadcastsTo(other, scoresTy)) {
          mask = other;
          s = chain;
        }
      }
      if (!mask)
        return rewriter.notifyMatchFailure(pv, "add is not a mask add");
    }

    float scale = 1.0f;
    s = peelScale(s, scale, requires);
    auto qk = s.getDefiningOp<tosa::MatMulOp>();
    if (!qk || !isF32Rank3(qk.getA()) || !isF32Rank3(qk.getB()) ||
        !hasZeroPoints(qk) || qk.getType() != scoresTy)
      return rewriter.notifyMatchFailure(pv, "scores are not a matmul");

    // A constant scaling of the queries (BERT's q / sqrt(d)) is the same
    // scaling of the scores: fold it too.
    Value q = operandBehindViews(
        peelScale(producer(qk.getA(), requires), scale, requires));
    Value kT = operandBehindViews(qk.getB());
    Value v = operandBehindViews(pv.getB());
    // The importers' check after the last matmul goes with the chain.
    Operation *root = pv;
    if (Value out = pv.getResult(); exclusive(out))
      for (Operation *user : out.getUsers())
        if (auto r = dyn_cast<RequireOp>(user); r && checkedSource(r)) {
          requires.push_back(r);
          root = r;
        }

    Location loc = pv.getLoc();
    auto kTTy = cast<RankedTensorType>(kT.getType());
    auto kTy = RankedTensorType::get(
        {kTTy.getDimSize(0), kTTy.getDimSize(2), kTTy.getDimSize(1)},
        kTTy.getElementType());
    IndexMath z(rewriter, loc);
    // The sizes the chain's matmuls and mask add need equal, checked at
    // run time where one is dynamic (the kernel trusts them): batch, head
    // dim, key length, and the mask's broadcast. Where they differ the
    // call fails and the kernel gets no rows (B or M of the queries, else
    // N of the keys, is 0), so nothing is read out of bounds.
    struct Pair {
      Value a;
      int64_t da;
      Value b;
      int64_t db;
    };
    Pair pairs[] = {{q, 0, kT, 0}, {q, 0, v, 0}, {q, 2, kT, 1}, {kT, 2, v, 1}};
    Value ok; // null while nothing needs checking
    auto also = [&](Value holds) { ok = ok ? z.both(ok, holds) : holds; };
    for (const Pair &p : pairs)
      if (!isStaticDim(p.a, p.da) || !isStaticDim(p.b, p.db))
        also(z.eq(z.dim(p.a, p.da), z.dim(p.b, p.db)));
    if (mask) {
      std::pair<Value, int64_t> full[3] = {{q, 0}, {q, 1}, {kT, 2}};
      for (int64_t d = 0; d < 3; ++d) {
        if (isStaticDim(mask, d) &&
            isStaticDim(full[d].first, full[d].second))
          continue;
        Value m = z.dim(mask, d);
        also(z.either(z.eq(m, z.c(1)),
                      z.eq(m, z.dim(full[d].first, full[d].second))));
      }
    }
    Value k = tosa::TransposeOp::create(rewriter, loc, kTy, kT,
                                        ArrayRef<int32_t>{0, 2, 1});
    if (ok) {
      if (!isStaticDim(q, 0) || !isStaticDim(q, 1))
        q = emptiedUnless(z, ok, q, isStaticDim(q, 0) ? 1 : 0);
      else if (!isStaticDim(k, 1))
        k = emptiedUnless(z, ok, k, 1);
      else
        return rewriter.notifyMatchFailure(
            pv, "run-time sizes the kernel's loops cannot be emptied on");
    }
    auto outTy = cast<RankedTensorType>(pv.getType());
    SmallVector<Value> dynSizes;
    std::pair<Value, int64_t> sizeOf[3] = {{q, 0}, {q, 1}, {v, 2}};
    for (int64_t d = 0; d < 3; ++d)
      if (outTy.isDynamicDim(d))
        dynSizes.push_back(tensor::DimOp::create(
            rewriter, loc, sizeOf[d].first, sizeOf[d].second));
    Value init = tensor::EmptyOp::create(rewriter, loc, outTy.getShape(),
                                         outTy.getElementType(), dynSizes);
    Value result = AttentionOp::create(rewriter, loc, TypeRange{outTy}, q, k,
                                       v, mask, init,
                                       rewriter.getF32FloatAttr(scale))
                       .getResult()[0];
    if (ok) {
      Value holds = tensor::FromElementsOp::create(
          rewriter, loc, RankedTensorType::get({}, rewriter.getI1Type()),
          ValueRange{ok});
      result = RequireOp::create(rewriter, loc, outTy, holds, result, result,
                                 rewriter.getI32IntegerAttr(
                                     TESSEL_ENTRY_SHAPE_MISMATCH));
    }
    rewriter.replaceOp(root, result);
    // The chain's own checks, now dead but for their effect: the fused
    // op's check covers them. (What is left of the chain is pure and
    // goes with its last user.)
    for (RequireOp r : requires)
      if (r != root)
        rewriter.replaceOp(r, r.getValue());
    return success();
  }
};

struct FuseAttentionPass
    : tessel::impl::TesselFuseAttentionBase<FuseAttentionPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseAttentionPattern>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
