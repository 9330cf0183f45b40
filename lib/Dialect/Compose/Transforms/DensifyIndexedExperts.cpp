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
// densely. All experts of a top-k are rewritten, or none. The expert is
// re-typed for all T rows by each op's shape inference (every size it had
// kept), and taken only where generalizeTokenDim accepts it: the test the
// raiser's outlining applies, so no expert that mixes tokens is densified.
//
//===----------------------------------------------------------------------===//

#include "DensifyIndexedExperts.h"
#include "ConstantEvaluator.h"
#include "OutlineSlice.h"

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

#include <array>
#include <cmath>
#include <set>

using namespace mlir;
using namespace mlir::tessel;
using namespace mlir::tessel::compose;

namespace {

/// Both orders of a commutative op's two operands.
std::array<std::pair<Value, Value>, 2> eitherOrder(Value a, Value b) {
  return {std::pair(a, b), std::pair(b, a)};
}

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

/// The input of a linalg.generic with one input and one init whose body
/// only yields the input element, if `v` is its result, and its maps.
std::optional<std::pair<Value, SmallVector<AffineMap>>> copiedFrom(Value v) {
  auto g = v.getDefiningOp<linalg::GenericOp>();
  if (!g || g.getNumDpsInputs() != 1 || g.getNumDpsInits() != 1 ||
      g->getNumResults() != 1 || g.getNumLoops() != g.getNumParallelLoops())
    return std::nullopt;
  Block &body = g.getRegion().front();
  auto yield = dyn_cast<linalg::YieldOp>(body.getTerminator());
  if (!yield || body.getOperations().size() != 1 ||
      yield.getValues().front() != body.getArgument(0))
    return std::nullopt;
  return std::make_pair(g.getDpsInputs()[0], g.getIndexingMapsArray());
}

/// `v` through identity copies (an ONNX Expand to the shape a value
/// already has, its size guarded by a tessel.require the run checks).
Value skipCopies(Value v) {
  while (auto copy = copiedFrom(v)) {
    auto [in, maps] = *copy;
    if (!maps[0].isIdentity() || !maps[1].isIdentity())
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

/// Whether `v` is a constant splat of floating-point zero.
bool isZeroSplat(Value v) {
  DenseElementsAttr z;
  return matchPattern(v, m_Constant(&z)) && z.isSplat() &&
         isa<FloatType>(z.getElementType()) &&
         z.getSplatValue<APFloat>().isZero();
}

/// Column `column` of transpose(nonzero(mask)): the coordinates along
/// that dim of the true elements of a rank-2 mask.
struct NonzeroColumn {
  NonZeroOp nonzero;
  int64_t column;
};

/// The nonzero column `v` is, if it is one.
std::optional<NonzeroColumn> nonzeroColumn(Value v) {
  auto slice = v.getDefiningOp<tensor::ExtractSliceOp>();
  if (!slice || slice.getSourceType().getRank() != 2)
    return std::nullopt;
  ArrayRef<int64_t> off = slice.getStaticOffsets(),
                    size = slice.getStaticSizes(),
                    stride = slice.getStaticStrides();
  if (off[0] != 0 || ShapedType::isDynamic(off[1]) || off[1] >= 2 ||
      size[1] != 1 || stride[0] != 1 || stride[1] != 1)
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
  if (!nz || nz.getInput().getType().getRank() != 2)
    return std::nullopt;
  return NonzeroColumn{nz, off[1]};
}

/// The expert `mask` selects where it is (i == e) for top-k indices i
/// (through casts that keep every index: to integers at least as wide):
/// then a row has at most one true. Sets `indices` to i.
std::optional<int64_t> expertOfMask(Value mask, Value &indices) {
  auto eq = mask.getDefiningOp<tosa::EqualOp>();
  if (!eq)
    return std::nullopt;
  for (auto [a, b] : eitherOrder(eq.getInput1(), eq.getInput2())) {
    Value i = a;
    while (auto c = i.getDefiningOp<tosa::CastOp>()) {
      auto from = dyn_cast<IntegerType>(getElementTypeOrSelf(c.getInput()));
      auto to = dyn_cast<IntegerType>(getElementTypeOrSelf(c.getType()));
      if (!from || !to || from.getWidth() <= 1 ||
          to.getWidth() < from.getWidth())
        break;
      i = c.getInput();
    }
    auto topk = i.getDefiningOp<TopKOp>();
    std::optional<double> e = scalarConstant(b);
    if (topk && i == topk.getIndices() && topk.getAxis() == 1 && e && *e >= 0 &&
        *e == std::floor(*e)) {
      indices = i;
      return int64_t(*e);
    }
  }
  return std::nullopt;
}

/// Whether `idx` holds tok * k + slot (the flat positions of w[tok, slot] in
/// a row-major T x k table), given the two columns' sources.
bool isFlatPosition(Value idx, Value tok, Value slot, int64_t k) {
  auto add = vectorSource(idx).getDefiningOp<tosa::AddOp>();
  if (!add)
    return false;
  for (auto [a, b] : eitherOrder(add.getInput1(), add.getInput2())) {
    auto mul = vectorSource(b).getDefiningOp<tosa::MulOp>();
    if (vectorSource(a) != slot || !mul ||
        scalarConstant(mul.getShift()) != 0.0)
      continue;
    for (auto [p, q] : eitherOrder(mul.getInput1(), mul.getInput2()))
      if (vectorSource(p) == tok && scalarConstant(q) == double(k))
        return true;
  }
  return false;
}

/// Whether `idx` (rows x cols) repeats the column [rows, 1] of `tok` along
/// cols columns (linalg's broadcast as a generic: out[r][c] = in[r][0]).
/// A count of columns known only at run time the scatter checks against
/// its updates' (the call fails where they differ).
bool isRowBroadcastOf(Value idx, Value tok, int64_t cols) {
  std::optional<std::pair<Value, SmallVector<AffineMap>>> copy =
      copiedFrom(idx);
  auto type = cast<RankedTensorType>(idx.getType());
  if (!copy || type.getRank() != 2 ||
      (!type.isDynamicDim(1) && type.getDimSize(1) != cols))
    return false;
  MLIRContext *ctx = idx.getContext();
  auto column = AffineMap::get(
      2, 0, {getAffineDimExpr(0, ctx), getAffineConstantExpr(0, ctx)}, ctx);
  return copy->second[0] == column && copy->second[1].isIdentity() &&
         vectorSource(copy->first) == tok;
}

/// The one tessel.gather in `y`'s backward slice (through any op but
/// constants and gathers), if there is exactly one.
GatherOp onlyGatherBehind(Value y) {
  GatherOp found;
  SetVector<Operation *> seen;
  SmallVector<Value> work = {y};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    Operation *def = v.getDefiningOp();
    if (!def || isConstantValue(v) || !seen.insert(def))
      continue;
    if (auto g = dyn_cast<GatherOp>(def)) {
      if (found && found != g)
        return GatherOp();
      found = g;
      continue;
    }
    llvm::append_range(work, def->getOperands());
  }
  return found;
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

/// Erases `ops`, users after producers.
void eraseAll(ArrayRef<Operation *> ops) {
  for (Operation *op : llvm::reverse(ops))
    op->erase();
}

/// Clones `chain` with `from` replaced by `to`, each result re-typed by its
/// op's shape inference; the new `y`, or null (nothing left behind) where
/// an op cannot say its shape or would change more than its run-time
/// sizes (an axis would then mean another dim).
Value cloneRetyped(OpBuilder &b, ArrayRef<Operation *> chain, Value from,
                   Value to, Value y, SmallVector<Operation *> &cloned) {
  IRMapping map;
  map.map(from, to);
  for (Operation *op : chain) {
    Operation *c = b.clone(*op, map);
    cloned.push_back(c);
    auto infer = dyn_cast<InferShapedTypeOpInterface>(c);
    SmallVector<ShapedTypeComponents> shapes;
    bool ok = infer &&
              succeeded(infer.inferReturnTypeComponents(
                  c->getContext(), c->getLoc(), c->getOperands(),
                  c->getAttrDictionary(), c->getPropertiesStorage(),
                  c->getRegions(), shapes)) &&
              shapes.size() == c->getNumResults();
    for (auto [r, s] : llvm::zip(c->getResults(), shapes)) {
      Type elem = s.getElementType() ? s.getElementType()
                                     : getElementTypeOrSelf(r.getType());
      Type now =
          s.hasRank() ? RankedTensorType::get(s.getDims(), elem) : Type();
      ok = ok && now && tensor::preservesStaticInformation(r.getType(), now);
      if (ok)
        r.setType(now);
    }
    if (!ok) {
      eraseAll(cloned);
      cloned.clear();
      return Value();
    }
  }
  return map.lookup(y);
}

/// Whether the expert `ops` (from `x` to `y`) treats tokens independently,
/// by the test the raiser's outlining applies: generalizeTokenDim on a
/// throw-away component of them.
bool isTokenWise(func::FuncOp fn, ArrayRef<Operation *> ops, Value x, Value y) {
  OpBuilder b(fn);
  ComponentOp component =
      outlineSlice(b, fn.getLoc(), "__tessel_densify_check", ops, x, y);
  std::string why;
  bool ok = succeeded(generalizeTokenDim(component, why));
  component->erase();
  return ok;
}

/// Erases the sparse expert a densified term replaced: everything computed
/// from the positions `nz` (the gathers, the expert on the gathered rows,
/// the scatter, and the tessel.require checks of their run-time sizes,
/// which guard values that are gone), where nothing else uses it and
/// nothing in it has another effect.
void eraseSparseExpert(Operation *nz) {
  Block *block = nz->getBlock();
  SetVector<Operation *> derived;
  SmallVector<Operation *> work = {nz};
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    if (!derived.insert(op))
      continue;
    for (Operation *user : op->getUsers()) {
      Operation *at = block->findAncestorOpInBlock(*user);
      if (!at)
        return; // used in another block
      work.push_back(at);
    }
  }
  for (Operation *op : derived)
    if (op->hasTrait<OpTrait::IsTerminator>() ||
        (!isa<RequireOp>(op) && !isMemoryEffectFree(op)))
      return; // it reaches the results, or something with an effect
  SmallVector<Operation *> sorted(derived.begin(), derived.end());
  llvm::sort(sorted,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  for (Operation *op : sorted)
    op->dropAllUses();
  eraseAll(sorted);
}

/// One expert term to densify: its rows for every token (cloned before the
/// scatter, not used yet) and what its gate factor is made of.
struct DenseTerm {
  ScatterElementsOp scatter;
  Value mask, table, dense, topkIndices;
  int64_t expert;
  NonZeroOp nonzero;
  SmallVector<Operation *> cloned;
};

/// The dense term for the expert summed back by `scatter`, if it is one.
std::optional<DenseTerm> planDenseTerm(func::FuncOp fn,
                                       ScatterElementsOp scatter) {
  // Into zeros along the token dim, each token's row once (see above).
  auto outType = dyn_cast<RankedTensorType>(scatter.getType());
  if (scatter->use_empty() || scatter.getAxis() != 0 || !outType ||
      outType.getRank() != 2 || !outType.hasStaticShape() ||
      !isZeroSplat(scatter.getInput()) ||
      (scatter.getReduction() != ScatterReduction::None &&
       scatter.getReduction() != ScatterReduction::Add))
    return std::nullopt;
  int64_t tokens = outType.getDimSize(0), width = outType.getDimSize(1);
  // The updates: expert rows times their tokens' weights, one per row.
  auto mul = skipCopies(scatter.getUpdates()).getDefiningOp<tosa::MulOp>();
  if (!mul || scalarConstant(mul.getShift()) != 0.0)
    return std::nullopt;
  for (auto [y, wcol] : eitherOrder(mul.getInput1(), mul.getInput2())) {
    // w[tok, slot]: a column ([rows, 1]) gathered from the flattened T x k
    // table (row-major: element (t, s) at t * k + s).
    auto wType = cast<RankedTensorType>(wcol.getType());
    auto wGather = vectorSource(wcol).getDefiningOp<GatherOp>();
    if (wType.getRank() != 2 || wType.getDimSize(1) != 1 || !wGather ||
        wGather.getAxis() != 0 || !isVectorLike(wGather.getInput().getType()))
      continue;
    Value table = vectorSource(wGather.getInput());
    if (auto r = table.getDefiningOp<tosa::ReshapeOp>())
      table = r.getInput1();
    else if (auto r = table.getDefiningOp<tensor::CollapseShapeOp>())
      table = r.getSrc();
    auto tableType = dyn_cast<RankedTensorType>(table.getType());
    if (!tableType || tableType.getRank() != 2 || !tableType.hasStaticShape() ||
        tableType.getDimSize(0) != tokens)
      continue;
    // The rows: the one gather behind y, of x's rows (rank-1 indices) at
    // tok, which the scatter's positions repeat along the width.
    GatherOp xGather = onlyGatherBehind(y);
    if (!xGather || xGather.getAxis() != 0)
      return std::nullopt;
    Value x = xGather.getInput();
    auto xType = dyn_cast<RankedTensorType>(x.getType());
    if (!xType || xType.getRank() != 2 || !xType.hasStaticShape() ||
        xType.getDimSize(0) != tokens ||
        xGather.getType().getRank() != xType.getRank())
      return std::nullopt;
    Value tok = vectorSource(xGather.getIndices());
    std::optional<NonzeroColumn> tokCol = nonzeroColumn(tok);
    if (!tokCol || tokCol->column != 0 ||
        !isRowBroadcastOf(scatter.getIndices(), tok, width))
      return std::nullopt;
    // tok and slot: columns 0 and 1 of the nonzero of one expert's mask.
    Value mask = tokCol->nonzero.getInput(), topkIndices;
    std::optional<int64_t> expert = expertOfMask(mask, topkIndices);
    if (!expert || cast<RankedTensorType>(mask.getType()).getShape() !=
                       tableType.getShape())
      return std::nullopt;
    Value slot;
    auto add = vectorSource(wGather.getIndices()).getDefiningOp<tosa::AddOp>();
    for (Value in : add ? add->getOperands() : ValueRange()) {
      std::optional<NonzeroColumn> col = nonzeroColumn(vectorSource(in));
      if (col && col->nonzero == tokCol->nonzero && col->column == 1)
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
    if (!dense || dense.getType() != outType ||
        !isTokenWise(fn, cloned, x, dense)) {
      eraseAll(cloned);
      return std::nullopt;
    }
    return DenseTerm{scatter,     mask,    table,           dense,
                     topkIndices, *expert, tokCol->nonzero, cloned};
  }
  return std::nullopt;
}

/// Replaces the term's scatter with gate * dense rows, the gate
/// sum_s select(mask, table, 0) (T x 1).
void applyDenseTerm(DenseTerm &term) {
  ScatterElementsOp scatter = term.scatter;
  auto tableType = cast<RankedTensorType>(term.table.getType());
  OpBuilder b(scatter);
  Location loc = scatter.getLoc();
  TosaBuilder tb(b, loc);
  Value zeros = tosa::ConstOp::create(
      b, loc, tableType,
      DenseElementsAttr::get(tableType,
                             b.getZeroAttr(tableType.getElementType())));
  Value picked =
      tosa::SelectOp::create(b, loc, tableType, term.mask, term.table, zeros);
  Value sum = tb.mul(tb.reduceSum(picked, 1), term.dense);
  scatter.getResult().replaceAllUsesWith(sum);
  // x + 0 where the scatter's sum began with zeros.
  for (Operation *user : llvm::to_vector(sum.getUsers())) {
    auto add = dyn_cast<tosa::AddOp>(user);
    if (!add || add.getType() != sum.getType())
      continue;
    Value other = add.getInput1() == sum ? add.getInput2() : add.getInput1();
    if (isZeroSplat(other)) {
      add.getResult().replaceAllUsesWith(sum);
      add->erase();
    }
  }
}

} // namespace

int mlir::tessel::compose::densifyIndexedExperts(func::FuncOp fn) {
  // All of a top-k's experts or none: a mixture densified in part would
  // run those experts on every token and still not be raised.
  Block &block = fn.getBody().front();
  llvm::MapVector<Value, SmallVector<DenseTerm>> byTopK;
  for (auto scatter : llvm::to_vector(block.getOps<ScatterElementsOp>()))
    if (std::optional<DenseTerm> term = planDenseTerm(fn, scatter))
      byTopK[term->topkIndices].push_back(std::move(*term));
  int n = 0;
  for (auto &[indices, terms] : byTopK) {
    // One term per expert 0 .. E-1, each with its own positions.
    auto topk = indices.getDefiningOp<TopKOp>();
    int64_t experts =
        cast<RankedTensorType>(topk.getInput().getType()).getDimSize(1);
    std::set<int64_t> seen;
    DenseSet<Operation *> nonzeros;
    for (DenseTerm &term : terms) {
      if (term.expert < experts)
        seen.insert(term.expert);
      nonzeros.insert(term.nonzero);
    }
    if (int64_t(terms.size()) != experts || int64_t(seen.size()) != experts ||
        int64_t(nonzeros.size()) != experts) {
      for (DenseTerm &term : terms)
        eraseAll(term.cloned);
      continue;
    }
    for (DenseTerm &term : terms)
      applyDenseTerm(term);
    for (DenseTerm &term : terms)
      eraseSparseExpert(term.nonzero);
    n += terms.size();
  }
  // What the sparse forms alone used (the flattened weights, the masks'
  // constants): every op of the function left unused and free of effects.
  if (n)
    for (Operation *op = block.getTerminator(); op;) {
      Operation *prev = op->getPrevNode();
      if (isOpTriviallyDead(op))
        op->erase();
      op = prev;
    }
  return n;
}
