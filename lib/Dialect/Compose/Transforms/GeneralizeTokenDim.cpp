//===- GeneralizeTokenDim.cpp - static token count -> dynamic -------------===//
//
// Walks the body once in order, tracking for every value where its token dim
// is (or that it has none: weights, shapes, broadcast constants), and retypes
// each op that carries the token dim with `?` there. An op outside the known
// token-wise set, or one that would mix tokens (a reduction, slice, concat or
// matmul over the token dim), makes the rewrite fail. The work is done on a
// detached copy, so a failure leaves the component as it was.
//
//===----------------------------------------------------------------------===//

#include "tessel/Dialect/Compose/Transforms/GeneralizeTokenDim.h"
#include "tessel/Dialect/Compose/Transforms/Passes.h"
#include "tessel/Dialect/Tessel/IR/TesselDialect.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::tessel::compose {
#define GEN_PASS_DEF_COMPOSEGENERALIZETOKENDIM
#include "tessel/Dialect/Compose/Transforms/Passes.h.inc"
} // namespace mlir::tessel::compose

using namespace mlir;
using namespace mlir::tessel;
using namespace mlir::tessel::compose;

namespace {

constexpr int kNone = -1;

RankedTensorType withDynamicDim(Type t, int pos) {
  auto rt = cast<RankedTensorType>(t);
  SmallVector<int64_t> shape(rt.getShape());
  shape[pos] = ShapedType::kDynamic;
  return RankedTensorType::get(shape, rt.getElementType(), rt.getEncoding());
}

std::string describe(Operation *op, const Twine &why) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "'" << op->getName() << "' at " << op->getLoc() << " " << why;
  return s;
}

class Generalizer {
public:
  Generalizer(ComponentOp component, int64_t tokens)
      : component(component), tokens(tokens) {}

  LogicalResult run(std::string &why);

private:
  int pos(Value v) const {
    auto it = tokenPos.find(v);
    return it == tokenPos.end() ? kNone : it->second;
  }
  LogicalResult fail(Operation *op, const Twine &reason) {
    why = describe(op, reason);
    return failure();
  }
  Value tokenCount(OpBuilder &b, Location loc) {
    return tensor::DimOp::create(b, loc, component.getBody().getArgument(0),
                                 0);
  }
  /// A token-free operand that spans all T tokens at `p` (a broadcast
  /// materialized by the importer: a splat constant or a tile) as a value
  /// of size 1 there, or null when it is anything else.
  Value shrinkToOne(OpBuilder &b, Value v, int p);
  /// `small` (size 1 at `p`) broadcast to the run-time token count, for ops
  /// without implicit broadcasting (arith/math on tensors).
  Value expandToTokens(OpBuilder &b, Location loc, Value small, int p);

  LogicalResult visit(Operation *op);
  LogicalResult visitElementwise(Operation *op, bool broadcasts);
  LogicalResult visitReshape(tosa::ReshapeOp op);

  void retype(Value v, int p) {
    v.setType(withDynamicDim(v.getType(), p));
    tokenPos[v] = p;
  }

  ComponentOp component;
  int64_t tokens;
  std::string why;
  DenseMap<Value, int> tokenPos;
};

Value Generalizer::shrinkToOne(OpBuilder &b, Value v, int p) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> shape(type.getShape());
  shape[p] = 1;
  auto smallType = RankedTensorType::get(shape, type.getElementType());
  DenseElementsAttr attr;
  if (matchPattern(v, m_Constant(&attr)) && attr.isSplat()) {
    auto c = tosa::ConstOp::create(b, v.getLoc(), smallType,
                                   attr.resizeSplat(smallType));
    return c;
  }
  auto tile = v.getDefiningOp<tosa::TileOp>();
  SmallVector<int64_t> multiples;
  if (!tile || failed(tile.getConstantMultiples(multiples)) ||
      cast<RankedTensorType>(tile.getInput1().getType()).getDimSize(p) != 1 ||
      pos(tile.getInput1()) != kNone)
    return {};
  multiples[p] = 1;
  auto shapeType = tosa::shapeType::get(b.getContext(), multiples.size());
  auto m = tosa::ConstShapeOp::create(
      b, tile.getLoc(), shapeType,
      DenseIntElementsAttr::get(
          RankedTensorType::get({int64_t(multiples.size())}, b.getIndexType()),
          multiples));
  return tosa::TileOp::create(b, tile.getLoc(), smallType, tile.getInput1(),
                              m);
}

Value Generalizer::expandToTokens(OpBuilder &b, Location loc, Value small,
                                  int p) {
  auto type = cast<RankedTensorType>(small.getType());
  int64_t rank = type.getRank();
  // Drop dim p (size 1) by folding it into a neighbour, then broadcast it
  // back at the run-time size.
  SmallVector<ReassociationIndices> groups;
  SmallVector<int64_t> collapsedShape;
  for (int64_t d = 0; d < rank; ++d) {
    if (d == p)
      continue;
    groups.push_back({d});
    collapsedShape.push_back(type.getDimSize(d));
  }
  if (!groups.empty()) {
    if (p < rank - 1)
      groups[p].insert(groups[p].begin(), p);
    else
      groups.back().push_back(p);
  }
  Value collapsed = tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get(collapsedShape, type.getElementType()),
      small, groups);
  SmallVector<OpFoldResult> sizes;
  for (int64_t d = 0; d < rank; ++d)
    sizes.push_back(d == p ? OpFoldResult(tokenCount(b, loc))
                           : OpFoldResult(b.getIndexAttr(type.getDimSize(d))));
  Value init = tensor::EmptyOp::create(b, loc, sizes, type.getElementType());
  return linalg::BroadcastOp::create(b, loc, collapsed, init,
                                     ArrayRef<int64_t>{p})
      ->getResult(0);
}

LogicalResult Generalizer::visitElementwise(Operation *op, bool broadcasts) {
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  int64_t rank = resultType.getRank();
  int p = kNone;
  for (Value v : op->getOperands()) {
    int q = pos(v);
    if (q == kNone)
      continue;
    if (p != kNone && p != q)
      return fail(op, "combines operands whose token dims differ");
    p = q;
  }
  OpBuilder b(op);
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<RankedTensorType>(operand.get().getType());
    // Skip non-data operands (tosa.mul's shift) and token-carrying ones.
    if (!type || type.getRank() != rank || pos(operand.get()) != kNone)
      continue;
    if (type.getDimSize(p) == 1 && broadcasts)
      continue;
    if (type.getDimSize(p) != tokens && type.getDimSize(p) != 1)
      return fail(op, "has an operand whose token dim is neither 1 nor the "
                      "token count");
    Value small = type.getDimSize(p) == 1 ? operand.get()
                                          : shrinkToOne(b, operand.get(), p);
    if (!small)
      return fail(op, "has a token-free operand that spans every token and "
                      "is neither a splat constant nor a tile");
    operand.set(broadcasts ? small
                           : expandToTokens(b, op->getLoc(), small, p));
  }
  for (Value r : op->getResults())
    retype(r, p);
  return success();
}

LogicalResult Generalizer::visitReshape(tosa::ReshapeOp op) {
  int p = pos(op.getInput1());
  auto in = cast<RankedTensorType>(op.getInput1().getType());
  auto out = cast<RankedTensorType>(op.getType());
  auto product = [](ArrayRef<int64_t> dims) {
    int64_t n = 1;
    for (int64_t d : dims)
      n *= d;
    return n;
  };
  int64_t before = product(in.getShape().take_front(p));
  int64_t after = product(in.getShape().drop_front(p + 1));
  int q = kNone;
  for (int j = 0; j < out.getRank() && q == kNone; ++j)
    if (out.getDimSize(j) == tokens &&
        product(out.getShape().take_front(j)) == before &&
        product(out.getShape().drop_front(j + 1)) == after)
      q = j;
  if (q == kNone)
    return fail(op, "merges or splits the token dim");
  SmallVector<int64_t> shape(out.getShape());
  shape[q] = -1;
  OpBuilder b(op);
  auto shapeType = tosa::shapeType::get(b.getContext(), shape.size());
  auto newShape = tosa::ConstShapeOp::create(
      b, op.getLoc(), shapeType,
      DenseIntElementsAttr::get(
          RankedTensorType::get({int64_t(shape.size())}, b.getIndexType()),
          shape));
  op.getShapeMutable().assign(newShape);
  retype(op.getResult(), q);
  return success();
}

LogicalResult Generalizer::visit(Operation *op) {
  bool carries = llvm::any_of(op->getOperands(),
                              [&](Value v) { return pos(v) != kNone; });
  if (!carries)
    return success(); // weights, shapes, constants: token-free
  if (op->getNumResults() == 0 && !isa<ReturnOp>(op))
    return fail(op, "has no results");
  if (!llvm::all_of(op->getResultTypes(), llvm::IsaPred<RankedTensorType>) &&
      !isa<ReturnOp>(op))
    return fail(op, "has a result that is not a ranked tensor");
  auto axisOk = [&](int64_t axis, int64_t rank, int p) {
    return (axis < 0 ? axis + rank : axis) != p;
  };
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](ReturnOp ret) -> LogicalResult {
        for (Value v : ret.getOperands())
          if (pos(v) != 0)
            return fail(op, "returns a value whose dim 0 is not the token dim");
        return success();
      })
      .Case([&](tosa::ReshapeOp r) { return visitReshape(r); })
      .Case([&](tosa::MatMulOp m) -> LogicalResult {
        if (pos(m.getA()) != 1 || pos(m.getB()) != kNone)
          return fail(op, "is not a matmul of token rows by a token-free "
                          "right operand");
        retype(m.getResult(), 1);
        return success();
      })
      .Case([&](tosa::TransposeOp t) -> LogicalResult {
        int p = pos(t.getInput1());
        ArrayRef<int32_t> perms = t.getPerms();
        int q = llvm::find(perms, p) - perms.begin();
        retype(t.getResult(), q);
        return success();
      })
      .Case([&](tosa::TileOp t) -> LogicalResult {
        int p = pos(t.getInput1());
        SmallVector<int64_t> multiples;
        if (failed(t.getConstantMultiples(multiples)) || multiples[p] != 1)
          return fail(op, "repeats the token dim");
        retype(t.getResult(), p);
        return success();
      })
      .Case<tosa::ReduceSumOp, tosa::ReduceMaxOp, tosa::ReduceMinOp,
            tosa::ReduceProductOp, tosa::ReduceAllOp, tosa::ReduceAnyOp>(
          [&](auto r) -> LogicalResult {
            int p = pos(r.getInput());
            if (int64_t(r.getAxis()) == p)
              return fail(op, "reduces over the token dim");
            retype(r.getResult(), p);
            return success();
          })
      .Case([&](tosa::ArgMaxOp a) -> LogicalResult {
        int p = pos(a.getInput());
        if (int64_t(a.getAxis()) == p)
          return fail(op, "reduces over the token dim");
        retype(a.getResult(), int64_t(a.getAxis()) < p ? p - 1 : p);
        return success();
      })
      .Case([&](tosa::ConcatOp c) -> LogicalResult {
        int p = pos(c.getInput1().front());
        for (Value v : c.getInput1())
          if (pos(v) != p)
            return fail(op, "concatenates values without the same token dim");
        if (int64_t(c.getAxis()) == p)
          return fail(op, "concatenates along the token dim");
        retype(c.getResult(), p);
        return success();
      })
      .Case<SoftmaxOp, LogSoftmaxOp>([&](auto s) -> LogicalResult {
        int p = pos(s.getInput());
        if (!axisOk(s.getAxis(), s.getType().getRank(), p))
          return fail(op, "normalizes over the token dim");
        retype(s.getResult(), p);
        return success();
      })
      .Case([&](LayerNormOp l) -> LogicalResult {
        int p = pos(l.getInput());
        if (l.getNormalizedAxis() <= p || pos(l.getScale()) != kNone ||
            pos(l.getBias()) != kNone)
          return fail(op, "normalizes over the token dim");
        retype(l.getResult(), p);
        return success();
      })
      .Default([&](Operation *op) -> LogicalResult {
        bool tosaElementwise =
            op->hasTrait<OpTrait::tosa::TosaElementwiseOperator>() ||
            isa<tosa::CastOp, tosa::ClampOp, tosa::MulOp>(op);
        if (tosaElementwise)
          return visitElementwise(op, /*broadcasts=*/true);
        if (op->hasTrait<OpTrait::Elementwise>() ||
            op->hasTrait<OpTrait::SameOperandsAndResultType>())
          return visitElementwise(op, /*broadcasts=*/false);
        return fail(op, "is not known to treat tokens independently");
      });
}

LogicalResult Generalizer::run(std::string &whyOut) {
  FunctionType type = component.getFunctionType();
  Block &body = component.getBody().front();
  for (BlockArgument arg : body.getArguments())
    retype(arg, 0);
  for (Operation &op : body.without_terminator())
    if (failed(visit(&op))) {
      whyOut = why;
      return failure();
    }
  if (failed(visit(body.getTerminator()))) {
    whyOut = why;
    return failure();
  }
  SmallVector<Type> ins, outs;
  for (Type t : type.getInputs())
    ins.push_back(withDynamicDim(t, 0));
  for (Type t : type.getResults())
    outs.push_back(withDynamicDim(t, 0));
  component.setFunctionType(FunctionType::get(type.getContext(), ins, outs));
  return success();
}

} // namespace

LogicalResult mlir::tessel::compose::generalizeTokenDim(ComponentOp component,
                                                        std::string &why) {
  if (component.isExternal()) {
    why = "the component has no body";
    return failure();
  }
  FunctionType type = component.getFunctionType();
  int64_t tokens = ShapedType::kDynamic;
  for (Type t : llvm::concat<const Type>(type.getInputs(), type.getResults())) {
    auto rt = dyn_cast<RankedTensorType>(t);
    if (!rt || rt.getRank() == 0 || rt.isDynamicDim(0) ||
        (tokens != ShapedType::kDynamic && rt.getDimSize(0) != tokens)) {
      why = "the interface's tensors do not share one static dim 0";
      return failure();
    }
    tokens = rt.getDimSize(0);
  }
  if (type.getNumInputs() == 0) {
    why = "the component has no arguments";
    return failure();
  }
  // Rewrite a detached copy; adopt its body only when it verifies.
  auto copy = cast<ComponentOp>(component->clone());
  Generalizer g(copy, tokens);
  if (failed(g.run(why))) {
    copy->erase();
    return failure();
  }
  {
    // A type the ops' verifiers reject is a gap in the rules above; report
    // it as a failure to generalize, not as a diagnostic.
    ScopedDiagnosticHandler silence(component.getContext(),
                                    [](Diagnostic &) { return success(); });
    if (failed(verify(copy))) {
      why = "the retyped body does not verify";
      copy->erase();
      return failure();
    }
  }
  component.getBody().takeBody(copy.getBody());
  component.setFunctionType(copy.getFunctionType());
  copy->erase();
  return success();
}

namespace {

/// Whether the default (every-component) mode should rewrite `component`.
bool hasStaticTokenDim(ComponentOp component) {
  if (component.isExternal())
    return false;
  FunctionType type = component.getFunctionType();
  std::optional<int64_t> tokens;
  for (Type t : llvm::concat<const Type>(type.getInputs(), type.getResults())) {
    auto rt = dyn_cast<RankedTensorType>(t);
    if (!rt || rt.getRank() == 0 || rt.isDynamicDim(0) ||
        (tokens && *tokens != rt.getDimSize(0)))
      return false;
    tokens = rt.getDimSize(0);
  }
  return type.getNumInputs() > 0;
}

struct ComposeGeneralizeTokenDimPass
    : mlir::tessel::compose::impl::ComposeGeneralizeTokenDimBase<
          ComposeGeneralizeTokenDimPass> {
  using Base::Base;

  void runOnOperation() override {
    llvm::StringSet<> wanted;
    for (const std::string &name : components)
      wanted.insert(name);
    bool failed = false, all = wanted.empty();
    getOperation().walk([&](ComponentOp component) {
      if (all ? !hasStaticTokenDim(component)
              : !wanted.contains(component.getSymName()))
        return;
      std::string why;
      if (mlir::failed(generalizeTokenDim(component, why))) {
        component.emitError() << "cannot make the token dim of component '"
                              << component.getSymName()
                              << "' dynamic: " << why;
        failed = true;
      }
      wanted.erase(component.getSymName());
    });
    for (const auto &name : wanted) {
      getOperation().emitError() << "no component named '" << name.getKey()
                                 << "'";
      failed = true;
    }
    if (failed)
      signalPassFailure();
  }
};

} // namespace
