//===- DensifyIndexedExperts.cpp - index_select MoE -> dense terms --------===//
//
// A mixture written with indices runs each expert on just its tokens:
//
//   tok, slot = torch.where(i == e)        # i: the top-k indices, T x k
//   y = expert(x.index_select(0, tok)) * w[tok, slot].unsqueeze(-1)
//   out = out.index_add(0, tok, y)
//
// which ONNX spells NonZero(Equal(i, e)) -> Transpose -> column slices,
// Gather(x, tok), Gather(Reshape(w, [T*k, 1]), tok*k + slot), and a
// ScatterElements of the product into zeros added to the sum. When the
// expert treats tokens independently, that term equals the dense
//
//   (sum_s select(i[:, s] == e, w[:, s], 0)) * expert(x)
//
// (each row of i names e at most once, so the scatter's positions are
// distinct and replacing equals adding), which tessel-raise-moe then
// proves and raises like any dense mixture. Each rewrite is exact on its
// own (for finite expert outputs): the gate factors are not interpreted
// here, the raiser checks them, and a mixture it then cannot raise runs
// densely. All experts of a top-k are rewritten, or none.
// The expert is re-typed for all T rows by each op's shape inference, and
// taken only where generalizeTokenDim accepts it (the test the raiser's
// outlining applies), so a term is never densified that the raiser could
// not then outline for a reason of token mixing.
//
//===----------------------------------------------------------------------===//

#include "DensifyIndexedExperts.h"
#include "ConstantEvaluator.h"

#include "tessel/Dialect/Compose/IR/ComposeDialect.h"
#include "tessel/Dialect/Compose/Transforms/GeneralizeTokenDim.h"
#include "tessel/Dialect/Tessel/IR/TesselDialect.h"
#include "tessel/Dialect/Tessel/Utils/TosaBuilder.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::tessel;
using namespace mlir::tessel::compose;

namespace {

/// A ranked tensor with at most one dim other than 1: a vector, whatever
/// reshapes say about its rank.
bool isVectorLike(Type t) {
  auto r = dyn_cast<RankedTensorType>(t);
  return r &&
         llvm::count_if(r.getShape(), [](int64_t d) { return d != 1; }) <= 1;
}

/// `v` through the reshapes and casts between vectors that importers put
/// around index and weight columns (they keep every element in order).
Value vectorSource(Value v) {
  while (isVectorLike(v.getType())) {
    Operation *def = v.getDefiningOp();
    Value in;
    if (auto r = dyn_cast_if_present<tosa::ReshapeOp>(def))
      in = r.getInput1();
    else if (auto r = dyn_cast_if_present<tensor::ReshapeOp>(def))
      in = r.getSource();
    else if (auto c = dyn_cast_if_present<tensor::CastOp>(def))
      in = c.getSource();
    else if (auto c = dyn_cast_if_present<tensor::CollapseShapeOp>(def))
      in = c.getSrc();
    else if (auto c = dyn_cast_if_present<tensor::ExpandShapeOp>(def))
      in = c.getSrc();
    if (!in || !isVectorLike(in.getType()))
      break;
    v = in;
  }
  return v;
}

/// `v` through identity copies (an ONNX Expand to the shape a value
/// already has: a linalg.generic that yields its input where it reads it,
/// its size guarded by a tessel.require that the run checks).
Value skipCopies(Value v) {
  while (auto g = v.getDefiningOp<linalg::GenericOp>()) {
    if (g.getNumDpsInputs() != 1 || g.getNumDpsInits() != 1 ||
        g->getNumResults() != 1)
      break;
    SmallVector<AffineMap> maps = g.getIndexingMapsArray();
    Block &body = g.getRegion().front();
    auto yield = dyn_cast<linalg::YieldOp>(body.getTerminator());
    Value in = g.getDpsInputs()[0];
    if (!maps[0].isIdentity() || !maps[1].isIdentity() || !yield ||
        body.getOperations().size() != 1 ||
        yield.getValues().front() != body.getArgument(0) ||
        getElementTypeOrSelf(in.getType()) != getElementTypeOrSelf(v.getType()))
      break;
    v = in;
  }
  return v;
}

/// The single element of `v` where it folds from constants (through
/// reshapes and casts).
std::optional<double> scalarConstant(Value v) {
  std::optional<Folded> f = ConstantEvaluator().eval(v);
  if (!f || f->numElements() != 1)
    return std::nullopt;
  return f->data.front();
}

/// Where `v` is column `c` of transpose(nonzero(mask)) (the coordinates
/// along dim c of the true elements of a rank-2 mask), the mask and c.
std::optional<std::pair<Value, int64_t>> nonzeroColumn(Value v) {
  auto slice = v.getDefiningOp<tensor::ExtractSliceOp>();
  if (!slice || slice.getSourceType().getRank() != 2)
    return std::nullopt;
  ArrayRef<int64_t> off = slice.getStaticOffsets(),
                    size = slice.getStaticSizes(),
                    stride = slice.getStaticStrides();
  if (off[0] != 0 || ShapedType::isDynamic(off[1]) || size[1] != 1 ||
      stride[0] != 1 || stride[1] != 1)
    return std::nullopt;
  // Every row: the source's static size, or its tensor.dim 0.
  Value src = slice.getSource();
  if (ShapedType::isDynamic(size[0])) {
    auto dim = slice.getSizes().front().getDefiningOp<tensor::DimOp>();
    std::optional<int64_t> at = dim ? dim.getConstantIndex() : std::nullopt;
    if (!dim || dim.getSource() != src || at != 0)
      return std::nullopt;
  } else if (size[0] != slice.getSourceType().getDimSize(0)) {
    return std::nullopt;
  }
  auto tr = src.getDefiningOp<tosa::TransposeOp>();
  if (!tr || tr.getPerms() != ArrayRef<int32_t>({1, 0}))
    return std::nullopt;
  auto nz = tr.getInput1().getDefiningOp<NonZeroOp>();
  if (!nz || nz.getInput().getType().getRank() != 2 || off[1] >= 2)
    return std::nullopt;
  return std::make_pair(nz.getInput(), off[1]);
}

/// Whether `mask` is (i == constant) for top-k indices i (through integer
/// casts, which keep the small expert numbers): at most one true per row.
bool isExpertMask(Value mask, Value &indices) {
  auto eq = mask.getDefiningOp<tosa::EqualOp>();
  if (!eq)
    return false;
  for (auto [a, b] : {std::pair(eq.getInput1(), eq.getInput2()),
                      std::pair(eq.getInput2(), eq.getInput1())}) {
    Value i = a;
    while (auto c = i.getDefiningOp<tosa::CastOp>()) {
      if (!isa<IntegerType>(getElementTypeOrSelf(c.getInput().getType())))
        break;
      i = c.getInput();
    }
    auto topk = i.getDefiningOp<TopKOp>();
    if (topk && i == topk.getIndices() && topk.getAxis() == 1 &&
        scalarConstant(b)) {
      indices = i;
      return true;
    }
  }
  return false;
}

/// Whether `idx` holds tok * k + slot (the flat positions of w[tok, slot] in
/// a row-major T x k table), given the two columns' sources.
bool isFlatPosition(Value idx, Value tok, Value slot, int64_t k) {
  auto add = vectorSource(idx).getDefiningOp<tosa::AddOp>();
  if (!add)
    return false;
  for (auto [a, b] : {std::pair(add.getInput1(), add.getInput2()),
                      std::pair(add.getInput2(), add.getInput1())}) {
    if (vectorSource(a) != slot)
      continue;
    auto mul = vectorSource(b).getDefiningOp<tosa::MulOp>();
    if (!mul)
      continue;
    for (auto [p, q] : {std::pair(mul.getInput1(), mul.getInput2()),
                        std::pair(mul.getInput2(), mul.getInput1())}) {
      std::optional<double> s = scalarConstant(mul.getShift());
      std::optional<double> c = scalarConstant(q);
      if (vectorSource(p) == tok && c && *c == double(k) && s && *s == 0)
        return true;
    }
  }
  return false;
}

/// Whether `idx` (rows x cols) repeats a column [rows, 1] of `tok` along
/// its columns (linalg's broadcast as a generic: out[r][c] = in[r][0]).
bool isRowBroadcastOf(Value idx, Value tok) {
  auto g = idx.getDefiningOp<linalg::GenericOp>();
  if (!g || g.getNumDpsInputs() != 1 || g.getNumDpsInits() != 1 ||
      g.getNumLoops() != 2 || g.getNumParallelLoops() != 2)
    return false;
  MLIRContext *ctx = g.getContext();
  AffineExpr d0 = getAffineDimExpr(0, ctx);
  auto in = AffineMap::get(2, 0, {d0, getAffineConstantExpr(0, ctx)}, ctx);
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  Block &body = g.getRegion().front();
  auto yield = dyn_cast<linalg::YieldOp>(body.getTerminator());
  return maps[0] == in && maps[1].isIdentity() && yield &&
         body.getOperations().size() == 1 &&
         yield.getValues().front() == body.getArgument(0) &&
         vectorSource(g.getDpsInputs()[0]) == tok;
}

/// The ops computing `y` from `from` and constants, in block order; empty
/// where `y` needs anything else.
SmallVector<Operation *> chainFrom(Value y, Value from) {
  SetVector<Operation *> ops;
  SmallVector<Value> work = {y};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (v == from || isConstantValue(v))
      continue;
    Operation *def = v.getDefiningOp();
    if (!def || def->getNumRegions() ||
        def->getBlock() != from.getParentBlock())
      return {};
    if (ops.insert(def))
      llvm::append_range(work, def->getOperands());
  }
  SmallVector<Operation *> sorted(ops.begin(), ops.end());
  llvm::sort(sorted,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return sorted;
}

/// Clones `chain` with `from` replaced by `to`, each result re-typed by its
/// op's shape inference; the new `y`, or null (nothing left behind) where
/// an op cannot say its shape.
Value cloneRetyped(OpBuilder &b, ArrayRef<Operation *> chain, Value from,
                   Value to, Value y, SmallVector<Operation *> &cloned) {
  IRMapping map;
  map.map(from, to);
  for (Operation *op : chain) {
    Operation *c = b.clone(*op, map);
    cloned.push_back(c);
    auto infer = dyn_cast<InferShapedTypeOpInterface>(c);
    SmallVector<ShapedTypeComponents> shapes;
    if (!infer ||
        failed(infer.inferReturnTypeComponents(
            c->getContext(), c->getLoc(), c->getOperands(),
            c->getAttrDictionary(), c->getPropertiesStorage(), c->getRegions(),
            shapes)) ||
        shapes.size() != c->getNumResults()) {
      for (Operation *dead : llvm::reverse(cloned))
        dead->erase();
      cloned.clear();
      return Value();
    }
    for (auto [r, s] : llvm::zip(c->getResults(), shapes)) {
      Type elem = s.getElementType() ? s.getElementType()
                                     : getElementTypeOrSelf(r.getType());
      r.setType(s.hasRank() ? Type(RankedTensorType::get(s.getDims(), elem))
                            : Type(UnrankedTensorType::get(elem)));
    }
  }
  return map.lookup(y);
}

/// Whether the expert `ops` (from `x` to `y`) treats tokens independently,
/// by the test the raiser's outlining applies: generalizeTokenDim on a
/// throw-away component of them.
bool isTokenWise(func::FuncOp fn, ArrayRef<Operation *> ops, Value x, Value y) {
  OpBuilder b(fn);
  Location loc = fn.getLoc();
  auto component = ComponentOp::create(
      b, loc, "__tessel_densify_check", b.getFunctionType({x.getType()}, {}),
      StringAttr(), ArrayAttr(), ArrayAttr(), ComponentStateAttr(), TypeAttr(),
      StringAttr());
  Block *body = component.addEntryBlock();
  b.setInsertionPointToStart(body);
  IRMapping map;
  map.map(x, body->getArgument(0));
  for (Operation *op : ops) {
    for (Value in : op->getOperands())
      if (!map.contains(in) && isConstantValue(in))
        b.clone(*in.getDefiningOp(), map);
    b.clone(*op, map);
  }
  Value out = map.lookup(y);
  ReturnOp::create(b, loc, out);
  component.setFunctionType(b.getFunctionType({x.getType()}, {out.getType()}));
  std::string why;
  bool ok = succeeded(generalizeTokenDim(component, why));
  component->erase();
  return ok;
}

/// Erases the sparse expert a densified term replaced: everything computed
/// from the positions `nz` (the gathers, the expert on the gathered rows,
/// the scatter, and the tessel.require checks of their run-time sizes,
/// which guard values that are gone), where nothing else uses it.
void eraseSparseExpert(Operation *nz) {
  Block *block = nz->getBlock();
  SetVector<Operation *> derived;
  SmallVector<Operation *> work = {nz};
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    if (!derived.insert(op))
      continue;
    for (Operation *user : op->getUsers())
      work.push_back(block->findAncestorOpInBlock(*user));
  }
  for (Operation *op : derived)
    if (!op || op->hasTrait<OpTrait::IsTerminator>() ||
        (!isa<RequireOp>(op) && !isMemoryEffectFree(op) &&
         !op->hasTrait<OpTrait::HasRecursiveMemoryEffects>()))
      return; // it reaches the results, or something with an effect
  SmallVector<Operation *> sorted(derived.begin(), derived.end());
  llvm::sort(sorted,
             [](Operation *a, Operation *b) { return b->isBeforeInBlock(a); });
  for (Operation *op : sorted) {
    op->dropAllUses();
    op->erase();
  }
}

/// Erases the ops of `block` left unused and free of effects.
void eraseDeadOps(Block &block) {
  for (Operation *op = block.getTerminator(); op;) {
    Operation *prev = op->getPrevNode();
    if (isOpTriviallyDead(op))
      op->erase();
    op = prev;
  }
}

/// One expert term to densify: its dense rows (cloned before the scatter,
/// not used yet) and what its gate factor is made of.
struct Plan {
  ScatterElementsOp scatter;
  Value mask, table, dense, topkIndices;
  Operation *nonzero = nullptr;
  SmallVector<Operation *> cloned;
};

/// The plan for the expert summed back by `scatter`, if it is one.
std::optional<Plan> prepare(func::FuncOp fn, ScatterElementsOp scatter) {
  // Into zeros along the token dim, each token's row once (see above).
  auto outType = dyn_cast<RankedTensorType>(scatter.getType());
  if (scatter.getAxis() != 0 || !outType || outType.getRank() != 2 ||
      !outType.hasStaticShape() ||
      (scatter.getReduction() != ScatterReduction::None &&
       scatter.getReduction() != ScatterReduction::Add))
    return std::nullopt;
  DenseElementsAttr base;
  if (!matchPattern(scatter.getInput(), m_Constant(&base)) || !base.isSplat() ||
      !isa<FloatType>(base.getElementType()) ||
      !base.getSplatValue<APFloat>().isZero())
    return std::nullopt;
  // The updates: expert rows times their tokens' weights.
  auto mul = skipCopies(scatter.getUpdates()).getDefiningOp<tosa::MulOp>();
  if (!mul || scalarConstant(mul.getShift()) != 0.0)
    return std::nullopt;
  for (auto [y, wcol] : {std::pair(mul.getInput1(), mul.getInput2()),
                         std::pair(mul.getInput2(), mul.getInput1())}) {
    // w[tok, slot]: a gather of the flattened T x k table.
    auto wGather = vectorSource(wcol).getDefiningOp<GatherOp>();
    if (!isVectorLike(wcol.getType()) || !wGather || wGather.getAxis() != 0)
      continue;
    // The table a reshape flattened (row-major: element (t, s) at t*k+s).
    Value table = vectorSource(wGather.getInput());
    if (auto r = table.getDefiningOp<tosa::ReshapeOp>())
      table = r.getInput1();
    else if (auto r = table.getDefiningOp<tensor::CollapseShapeOp>())
      table = r.getSrc();
    auto tableType = dyn_cast<RankedTensorType>(table.getType());
    if (!isVectorLike(wGather.getInput().getType()) || !tableType ||
        tableType.getRank() != 2 || !tableType.hasStaticShape() ||
        tableType.getDimSize(0) != outType.getDimSize(0))
      continue;
    // The rows: the one gather in y's slice, of x at tok.
    GatherOp xGather;
    {
      SetVector<Operation *> seen;
      SmallVector<Value> work = {y};
      while (!work.empty()) {
        Value v = work.pop_back_val();
        Operation *def = v.getDefiningOp();
        if (!def || isConstantValue(v) || !seen.insert(def))
          continue;
        if (auto g = dyn_cast<GatherOp>(def)) {
          if (xGather && xGather != g)
            return std::nullopt;
          xGather = g;
          continue;
        }
        llvm::append_range(work, def->getOperands());
      }
    }
    if (!xGather || xGather.getAxis() != 0)
      return std::nullopt;
    Value x = xGather.getInput();
    auto xType = dyn_cast<RankedTensorType>(x.getType());
    if (!xType || xType.getRank() != 2 || !xType.hasStaticShape() ||
        xType.getDimSize(0) != outType.getDimSize(0))
      return std::nullopt;
    // tok and slot: columns 0 and 1 of the nonzero of one expert mask.
    Value tok = vectorSource(xGather.getIndices());
    std::optional<std::pair<Value, int64_t>> tokCol = nonzeroColumn(tok);
    if (!tokCol || tokCol->second != 0 ||
        !isRowBroadcastOf(scatter.getIndices(), tok))
      return std::nullopt;
    Value mask = tokCol->first, topkIndices;
    if (!isExpertMask(mask, topkIndices) ||
        cast<RankedTensorType>(mask.getType()).getShape() !=
            tableType.getShape())
      return std::nullopt;
    Value slot;
    auto add = vectorSource(wGather.getIndices()).getDefiningOp<tosa::AddOp>();
    for (Value in : add ? add->getOperands() : ValueRange()) {
      std::optional<std::pair<Value, int64_t>> col =
          nonzeroColumn(vectorSource(in));
      if (col && col->first == mask && col->second == 1)
        slot = vectorSource(in);
    }
    if (!slot || !isFlatPosition(wGather.getIndices(), tok, slot,
                                 tableType.getDimSize(1)))
      return std::nullopt;
    // The expert on every row: re-typed, token-wise.
    SmallVector<Operation *> chain = chainFrom(y, xGather.getResult());
    if (chain.empty())
      return std::nullopt;
    OpBuilder b(scatter);
    SmallVector<Operation *> cloned;
    Value dense = cloneRetyped(b, chain, xGather.getResult(), x, y, cloned);
    auto denseType =
        dense ? dyn_cast<RankedTensorType>(dense.getType()) : nullptr;
    if (!denseType || denseType.getRank() != 2 ||
        denseType.getDimSize(0) != outType.getDimSize(0) ||
        denseType.getDimSize(1) != outType.getDimSize(1) ||
        denseType.getElementType() != outType.getElementType() ||
        !isTokenWise(fn, cloned, x, dense)) {
      for (Operation *dead : llvm::reverse(cloned))
        dead->erase();
      return std::nullopt;
    }
    if (denseType != outType) { // a static size inference left dynamic
      dense = tensor::CastOp::create(b, scatter.getLoc(), outType, dense);
      cloned.push_back(dense.getDefiningOp());
    }
    Operation *nz = tok.getDefiningOp<tensor::ExtractSliceOp>()
                        .getSource()
                        .getDefiningOp<tosa::TransposeOp>()
                        .getInput1()
                        .getDefiningOp();
    return Plan{scatter, mask, table, dense, topkIndices, nz, cloned};
  }
  return std::nullopt;
}

/// Replaces the plan's scatter with gate * dense rows, the gate
/// sum_s select(mask, table, 0) (T x 1), and erases the sparse expert.
void apply(Plan &plan) {
  ScatterElementsOp scatter = plan.scatter;
  auto outType = cast<RankedTensorType>(scatter.getType());
  auto tableType = cast<RankedTensorType>(plan.table.getType());
  OpBuilder b(scatter);
  Location loc = scatter.getLoc();
  TosaBuilder tb(b, loc);
  Value zeros = tosa::ConstOp::create(
      b, loc, tableType,
      DenseElementsAttr::get(tableType,
                             b.getZeroAttr(tableType.getElementType())));
  Value picked =
      tosa::SelectOp::create(b, loc, tableType, plan.mask, plan.table, zeros);
  Value gate = tb.reduceSum(picked, 1);
  if (getElementTypeOrSelf(gate.getType()) != outType.getElementType())
    gate = tb.cast(gate, outType.getElementType());
  Value term = tb.mul(gate, plan.dense);
  scatter.getResult().replaceAllUsesWith(term);
  // x + 0 where the scatter's sum began with zeros.
  for (Operation *user : llvm::to_vector(term.getUsers())) {
    auto sum = dyn_cast<tosa::AddOp>(user);
    DenseElementsAttr z;
    Value other = sum && sum.getInput1() == term ? sum.getInput2()
                  : sum                          ? sum.getInput1()
                                                 : Value();
    if (other && sum.getType() == term.getType() &&
        matchPattern(other, m_Constant(&z)) && z.isSplat() &&
        isa<FloatType>(z.getElementType()) &&
        z.getSplatValue<APFloat>().isZero()) {
      sum.getResult().replaceAllUsesWith(term);
      sum->erase();
    }
  }
  eraseSparseExpert(plan.nonzero);
}

} // namespace

int mlir::tessel::compose::densifyIndexedExperts(func::FuncOp fn) {
  // All of a top-k's experts or none: a mixture densified in part would
  // run those experts on every token and still not be raised.
  llvm::MapVector<Value, SmallVector<Plan>> byTopK;
  for (auto scatter :
       llvm::to_vector(fn.getBody().front().getOps<ScatterElementsOp>()))
    if (std::optional<Plan> plan = prepare(fn, scatter))
      byTopK[plan->topkIndices].push_back(std::move(*plan));
  int n = 0;
  for (auto &[indices, plans] : byTopK) {
    auto topk = indices.getDefiningOp<TopKOp>();
    int64_t experts =
        cast<RankedTensorType>(topk.getInput().getType()).getDimSize(1);
    if (int64_t(plans.size()) == experts) {
      for (Plan &plan : plans)
        apply(plan);
      n += plans.size();
      continue;
    }
    for (Plan &plan : plans)
      for (Operation *dead : llvm::reverse(plan.cloned))
        dead->erase();
  }
  if (n)
    eraseDeadOps(fn.getBody().front());
  return n;
}
