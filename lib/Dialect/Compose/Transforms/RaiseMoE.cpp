//===- RaiseMoE.cpp - dense top-k gated mixtures of experts -> route -------===//
//
// Structure first (a sum of gate x expert terms over one tessel.top_k),
// semantics second: the gate factors are folded on synthetic scores in
// batches of the graph's own token count (so every static shape stays
// valid) and must equal the top-k weights exactly as compose.route defines
// them. A candidate that fails any check is left as it is.
//
//===----------------------------------------------------------------------===//

#include "ConstantEvaluator.h"
#include "DensifyIndexedExperts.h"
#include "OutlineSlice.h"

#include "tessel/Dialect/Compose/Transforms/GeneralizeTokenDim.h"
#include "tessel/Dialect/Compose/Transforms/Passes.h"
#include "tessel/Dialect/Tessel/Utils/TosaBuilder.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <set>

namespace mlir::tessel::compose {
#define GEN_PASS_DEF_TESSELRAISEMOE
#include "tessel/Dialect/Compose/Transforms/Passes.h.inc"
} // namespace mlir::tessel::compose

using namespace mlir;
using namespace mlir::tessel;
using namespace mlir::tessel::compose;

namespace {

/// How the gate weight of a routed expert is formed from the top-k values.
enum class GateForm { Plain, Renormalized, Softmax, Count };

struct Term {
  Value gate;                   // T x 1, gate side
  Value expert;                 // T x Do, the expert's output
  SmallVector<Value> conds;     // select masks that must hold where routed
  SmallVector<Operation *> ops; // the mul / select ops
};

struct Route {
  TopKOp topk;
  Value tokens; // x: T x D
  bool softmaxOfScores = false;
  bool renormalize = false;
  /// Per expert e: its ops in block order and its output.
  SmallVector<SmallVector<Operation *>> expertOps;
  SmallVector<Value> expertOutputs;
  /// Unrouted addends of the sum, as the operands that hold them.
  SmallVector<OpOperand *> extras;
  Operation *root = nullptr;
  /// Every op the route replaces (sum tree, terms, experts).
  SetVector<Operation *> replaced;
};

RankedTensorType staticType(Value v, int64_t rank) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.getRank() == rank && t.hasStaticShape() ? t
                                                        : RankedTensorType();
}

/// The k largest of `row` (lowest index first on ties), like tessel.top_k.
SmallVector<int64_t> topK(ArrayRef<double> row, int64_t k) {
  SmallVector<int64_t> order(row.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return row[a] > row[b]; });
  order.resize(k);
  return order;
}

class Raiser {
public:
  Raiser(ModuleOp module, func::FuncOp fn)
      : module(module), fn(fn), block(fn.getBody().front()) {}

  /// Rewrites each batched contraction of a gate matrix with stacked expert
  /// outputs (einsum "te,etd->td") into the sum of gate-column x expert
  /// terms the matcher reads.
  void expandContractions();
  /// Raises one route; false when no candidate is left.
  bool raiseOne();
  bool raisedAny() const { return raised; }

private:
  bool onGateSide(Value v) const {
    return isConstantValue(v) || gateSide.contains(v);
  }
  bool isZeroConstant(Value v) {
    if (!isConstantValue(v))
      return false;
    std::optional<Folded> f = ConstantEvaluator().eval(v);
    return f && llvm::all_of(f->data, [](double d) { return d == 0.0; });
  }
  /// The values computed from the scores, the top-k results and constants.
  void collectGateSide(TopKOp topk);
  /// Expands `matmul` (see expandContractions) if it contracts a gate-side
  /// matrix with stacked values; true if it did.
  bool expandContraction(Operation *op);
  bool parseTerm(Value leaf, Term &term);
  /// Leaves of the single-use tosa.add tree rooted at `root`, its adds.
  void flattenSum(Operation *root, SmallVector<OpOperand *> &leaves,
                  SmallVector<Operation *> &inner);
  /// The private slice computing `y` (block order) and its one non-constant
  /// input; false if there is no such slice.
  bool expertSlice(Value y, SmallVector<Operation *> &ops, Value &tokens);
  std::optional<Route> match(TopKOp topk, Operation *root);
  bool checkGates(Route &route, ArrayRef<Term> terms,
                  SmallVector<int64_t> &expertOfTerm, GateForm &form);
  /// Emits the route; on failure (an expert cannot be outlined) leaves the
  /// IR unchanged and says why.
  LogicalResult emit(Route &route, std::string &why);

  ModuleOp module;
  func::FuncOp fn;
  Block &block;
  DenseSet<Value> gateSide; // of the top_k being matched
  /// (top_k, root) pairs that did not match.
  std::set<std::pair<Operation *, Operation *>> rejected;
  bool raised = false;
};

void Raiser::collectGateSide(TopKOp topk) {
  gateSide.clear();
  gateSide.insert(topk.getInput());
  gateSide.insert(topk.getValues());
  gateSide.insert(topk.getIndices());
  for (Operation &op : block) {
    if (&op == topk || op.getNumRegions() || op.getNumOperands() == 0)
      continue;
    if (llvm::all_of(op.getOperands(),
                     [&](Value v) { return onGateSide(v); }))
      gateSide.insert(op.result_begin(), op.result_end());
  }
}

/// `v` through reshapes that keep its type (importers emit such no-ops).
Value skipNoOpReshapes(Value v) {
  while (auto r = v.getDefiningOp<tosa::ReshapeOp>()) {
    if (r.getInput1().getType() != r.getType())
      break;
    v = r.getInput1();
  }
  return v;
}

/// The E values y_e ([T, D] each) that `b` (rank 3, with T, E and D at
/// dims tPos, ePos, dPos) stacks, each used only there: a concat along E of
/// reshapes of the y_e (T before D), possibly transposed.
std::optional<SmallVector<Value>> unstack(Value b, int64_t tPos, int64_t ePos,
                                          int64_t dPos) {
  auto bType = dyn_cast<RankedTensorType>(b.getType());
  if (!bType || bType.getRank() != 3 || !bType.hasStaticShape())
    return std::nullopt;
  int64_t T = bType.getDimSize(tPos), E = bType.getDimSize(ePos),
          D = bType.getDimSize(dPos);
  b = skipNoOpReshapes(b);
  SmallVector<int32_t> perms = {0, 1, 2};
  if (auto tr = b.getDefiningOp<tosa::TransposeOp>()) {
    if (!b.hasOneUse())
      return std::nullopt;
    perms.assign(tr.getPerms().begin(), tr.getPerms().end());
    b = skipNoOpReshapes(tr.getInput1());
  }
  int64_t inT = perms[tPos], inE = perms[ePos], inD = perms[dPos];
  auto concat = b.getDefiningOp<tosa::ConcatOp>();
  if (inT > inD || !concat || concat.getAxis() != inE ||
      int64_t(concat->getNumOperands()) != E || !b.hasOneUse())
    return std::nullopt;
  auto yType = RankedTensorType::get({T, D}, bType.getElementType());
  SmallVector<Value> ys;
  for (Value part : concat->getOperands()) {
    auto r = part.getDefiningOp<tosa::ReshapeOp>();
    ArrayRef<int64_t> shape = r ? r.getType().getShape() : ArrayRef<int64_t>();
    if (!r || !part.hasOneUse() || r.getInput1().getType() != yType ||
        shape[inT] != T || shape[inE] != 1 || shape[inD] != D)
      return std::nullopt;
    ys.push_back(r.getInput1());
  }
  return ys;
}

/// The gate matrix [T, E] that `v` (of type [T, 1, E] or [T, E, 1]) reshapes.
Value gatesBehind(Value v) {
  while (auto r = v.getDefiningOp<tosa::ReshapeOp>()) {
    v = r.getInput1();
    if (staticType(v, 2))
      return v;
  }
  return Value();
}

bool Raiser::expandContraction(Operation *op) {
  // Σ_e G[t, e] y_e[t, :] written as one batched contraction over e:
  //   matmul(G: [T, 1, E], Y: [T, E, D])   (einsum "te,etd->td")
  //   matmul(Y: [T, D, E], G: [T, E, 1])   (einsum "etd,te->td")
  //   reduce_sum(mul(G: [T, E, 1], Y: [T, E, D]), axis 1)
  // each read back as [T, D] through reshapes.
  Value g, y;
  int64_t tPos = 0, ePos = 1, dPos = 2;
  if (auto mm = dyn_cast<tosa::MatMulOp>(op)) {
    auto aType = cast<RankedTensorType>(mm.getA().getType());
    if (aType.getDimSize(1) == 1) {
      g = mm.getA();
      y = mm.getB();
    } else {
      g = mm.getB();
      y = mm.getA();
      std::swap(ePos, dPos);
    }
  } else if (auto sum = dyn_cast<tosa::ReduceSumOp>(op)) {
    auto mul = sum.getInput().getDefiningOp<tosa::MulOp>();
    if (sum.getAxis() != 1 || !mul || !sum.getInput().hasOneUse())
      return false;
    bool firstIsGate =
        cast<RankedTensorType>(mul.getInput1().getType()).getDimSize(2) == 1;
    g = firstIsGate ? mul.getInput1() : mul.getInput2();
    y = firstIsGate ? mul.getInput2() : mul.getInput1();
  } else {
    return false;
  }
  Value gates = gatesBehind(g);
  RankedTensorType gType = gates ? staticType(gates, 2) : RankedTensorType();
  std::optional<SmallVector<Value>> ys = unstack(y, tPos, ePos, dPos);
  if (!gType || !gateSide.contains(gates) || !ys)
    return false;
  auto yType = cast<RankedTensorType>(ys->front().getType());
  int64_t T = yType.getDimSize(0), E = ys->size();
  if (gType.getShape() != ArrayRef<int64_t>({T, E}))
    return false;
  // The result, read back as [T, D] through single-use reshapes.
  Value out = op->getResult(0);
  while (out.getType() != yType) {
    auto r = out.hasOneUse()
                 ? dyn_cast<tosa::ReshapeOp>(*out.getUsers().begin())
                 : tosa::ReshapeOp();
    if (!r)
      return false;
    out = r.getResult();
  }
  // Σ_e G[:, e] * y_e, in expert order, at the contraction.
  OpBuilder b(op);
  TosaBuilder tb(b, op->getLoc());
  Value sum;
  for (auto [e, ye] : llvm::enumerate(*ys)) {
    Value term = tb.mul(tb.slice(gates, {0, int64_t(e)}, {T, 1}), ye);
    sum = sum ? tb.add(sum, term) : term;
  }
  Operation *readBack = out.getDefiningOp();
  out.replaceAllUsesWith(sum);
  // The stack, the contraction and the read-back are dead now. (A set: an
  // op shared by two of them must be queued, and erased, once.)
  SetVector<Operation *> worklist;
  worklist.insert(readBack);
  while (!worklist.empty()) {
    Operation *dead = worklist.pop_back_val();
    if (!isOpTriviallyDead(dead))
      continue;
    for (Value in : dead->getOperands())
      if (Operation *def = in.getDefiningOp())
        worklist.insert(def);
    dead->erase();
  }
  return true;
}

void Raiser::expandContractions() {
  for (TopKOp topk : llvm::to_vector(block.getOps<TopKOp>())) {
    // An expansion erases ops: look again from the start after each.
    bool expanded = true;
    while (expanded) {
      collectGateSide(topk);
      expanded = false;
      for (Operation &op : block)
        if (isa<tosa::MatMulOp, tosa::ReduceSumOp>(op) &&
            topk->isBeforeInBlock(&op) && expandContraction(&op)) {
          expanded = true;
          break;
        }
    }
  }
}

bool Raiser::parseTerm(Value leaf, Term &term) {
  Operation *p = leaf.getDefiningOp();
  if (!p || !leaf.hasOneUse() || p->getBlock() != &block)
    return false;
  // A masked term: select(routed, term, 0).
  if (auto sel = dyn_cast<tosa::SelectOp>(p)) {
    if (!onGateSide(sel.getInput1()) || !isZeroConstant(sel.getInput3()))
      return false;
    term.conds.push_back(sel.getInput1());
    term.ops.push_back(p);
    return parseTerm(sel.getInput2(), term);
  }
  auto mul = dyn_cast<tosa::MulOp>(p);
  if (!mul || term.gate)
    return false;
  bool a = onGateSide(mul.getInput1()), b = onGateSide(mul.getInput2());
  if (a == b)
    return false;
  term.gate = a ? mul.getInput1() : mul.getInput2();
  term.ops.push_back(p);
  // The expert side may itself be masked: select(routed, expert(x), 0).
  Value y = a ? mul.getInput2() : mul.getInput1();
  while (true) {
    Operation *q = y.getDefiningOp();
    if (!q || !y.hasOneUse() || q->getBlock() != &block)
      return false;
    auto sel = dyn_cast<tosa::SelectOp>(q);
    if (!sel || !onGateSide(sel.getInput1()) ||
        !isZeroConstant(sel.getInput3()))
      break;
    term.conds.push_back(sel.getInput1());
    term.ops.push_back(q);
    y = sel.getInput2();
  }
  term.expert = y;
  return true;
}

void Raiser::flattenSum(Operation *root, SmallVector<OpOperand *> &leaves,
                        SmallVector<Operation *> &inner) {
  inner.push_back(root);
  for (OpOperand &use : root->getOpOperands()) {
    Operation *p = use.get().getDefiningOp();
    if (p && isa<tosa::AddOp>(p) && use.get().hasOneUse() &&
        p->getBlock() == &block)
      flattenSum(p, leaves, inner);
    else
      leaves.push_back(&use);
  }
}

bool Raiser::expertSlice(Value y, SmallVector<Operation *> &ops,
                         Value &tokens) {
  Operation *last = y.getDefiningOp();
  if (!last || last->getBlock() != &block || isConstantValue(y))
    return false;
  DenseSet<Operation *> inSlice = {last};
  DenseSet<Value> needed(last->operand_begin(), last->operand_end());
  for (Operation *op = last->getPrevNode(); op; op = op->getPrevNode()) {
    if (op->hasTrait<OpTrait::ConstantLike>() || op->getNumRegions())
      continue;
    bool feeds = llvm::any_of(op->getResults(),
                              [&](Value r) { return needed.contains(r); });
    bool private_ = llvm::all_of(op->getUsers(), [&](Operation *u) {
      return inSlice.contains(block.findAncestorOpInBlock(*u));
    });
    if (!feeds || !private_)
      continue;
    inSlice.insert(op);
    needed.insert(op->operand_begin(), op->operand_end());
  }
  tokens = Value();
  ops.clear();
  for (Operation &op : block) {
    if (!inSlice.contains(&op))
      continue;
    ops.push_back(&op);
    for (Value in : op.getOperands()) {
      if (isConstantValue(in))
        continue;
      Operation *p = in.getDefiningOp();
      if (p && inSlice.contains(p))
        continue;
      if (tokens && tokens != in)
        return false; // two non-constant inputs: not a function of x alone
      tokens = in;
    }
  }
  return bool(tokens);
}

bool Raiser::checkGates(Route &route, ArrayRef<Term> terms,
                        SmallVector<int64_t> &expertOfTerm, GateForm &form) {
  TopKOp topk = route.topk;
  Value scores = topk.getInput();
  auto sType = cast<RankedTensorType>(scores.getType());
  int64_t tokens = sType.getDimSize(0), experts = sType.getDimSize(1);
  int64_t k = topk.getK();
  // Probabilities (a softmax along the experts, through no-op reshapes)
  // make masks such as `gate > 0` hold; logits would not.
  auto softmax = skipNoOpReshapes(scores).getDefiningOp<SoftmaxOp>();
  bool scoresAreProbs = softmax && softmax.getNormalizedAxis() == 1;
  size_t nt = terms.size();
  constexpr int kForms = int(GateForm::Count);
  // candidate[t][form][e]: term t is expert e's gate in that form so far.
  std::vector<std::vector<std::vector<bool>>> candidate(
      nt, std::vector<std::vector<bool>>(kForms,
                                         std::vector<bool>(experts, true)));
  std::vector<std::vector<bool>> condOk(nt, std::vector<bool>(experts, true));
  std::mt19937 rng(20261121);
  std::uniform_real_distribution<double> logit(-3.0, 3.0);
  int64_t rowsWanted = std::max<int64_t>(256, 32 * experts);
  int64_t batches = std::min<int64_t>((rowsWanted + tokens - 1) / tokens, 64);
  ConstantEvaluator ev;
  for (int64_t b = 0; b < batches; ++b) {
    Folded s, v, idx;
    s.shape = {tokens, experts};
    v.shape = idx.shape = {tokens, k};
    std::vector<SmallVector<int64_t>> chosen(tokens);
    std::vector<std::vector<double>> values(tokens);
    for (int64_t t = 0; t < tokens; ++t) {
      std::vector<double> row(experts);
      for (double &x : row)
        x = logit(rng);
      if (scoresAreProbs) {
        double mx = *std::max_element(row.begin(), row.end()), sum = 0;
        for (double &x : row)
          sum += (x = std::exp(x - mx));
        for (double &x : row)
          x /= sum;
      }
      s.data.insert(s.data.end(), row.begin(), row.end());
      chosen[t] = topK(row, k);
      for (int64_t j : chosen[t]) {
        values[t].push_back(row[j]);
        v.data.push_back(row[j]);
        idx.data.push_back(double(j));
      }
    }
    ev.bind(scores, s);
    ev.bind(topk.getValues(), v);
    ev.bind(topk.getIndices(), idx);
    for (size_t i = 0; i < nt; ++i) {
      std::optional<Folded> g = ev.eval(terms[i].gate);
      if (!g || g->shape != SmallVector<int64_t>({tokens, 1}))
        return false;
      SmallVector<std::optional<Folded>> conds;
      for (Value c : terms[i].conds) {
        conds.push_back(ev.eval(c));
        if (!conds.back() || conds.back()->shape.empty() ||
            conds.back()->shape.front() != tokens)
          return false;
      }
      for (int64_t t = 0; t < tokens; ++t) {
        double sum = 0, expSum = 0, mx = values[t].front();
        for (double x : values[t]) {
          sum += x;
          mx = std::max(mx, x);
        }
        for (double x : values[t])
          expSum += std::exp(x - mx);
        for (int64_t e = 0; e < experts; ++e) {
          double plain = 0, soft = 0;
          for (int64_t j = 0; j < k; ++j)
            if (chosen[t][j] == e) {
              plain = values[t][j];
              soft = std::exp(values[t][j] - mx) / expSum;
            }
          double expect[kForms] = {plain, sum ? plain / sum : 0.0, soft};
          for (int f = 0; f < kForms; ++f)
            if (std::fabs(g->data[t] - expect[f]) >
                1e-6 * std::max(1.0, std::fabs(expect[f])))
              candidate[i][f][e] = false;
          // A mask must keep every token routed to the expert.
          if (llvm::is_contained(chosen[t], e))
            for (const std::optional<Folded> &c : conds) {
              int64_t per = c->numElements() / tokens;
              for (int64_t j = 0; j < per; ++j)
                if (c->data[t * per + j] == 0.0)
                  condOk[i][e] = false;
            }
        }
      }
    }
  }
  // One form for all terms; each term exactly one expert; all distinct.
  for (int f = 0; f < kForms; ++f) {
    SmallVector<int64_t> assign(nt, -1);
    std::set<int64_t> seen;
    bool ok = true;
    for (size_t i = 0; ok && i < nt; ++i) {
      for (int64_t e = 0; e < experts; ++e)
        if (candidate[i][f][e] && condOk[i][e]) {
          ok &= assign[i] < 0;
          assign[i] = e;
        }
      ok &= assign[i] >= 0 && seen.insert(assign[i]).second;
    }
    if (ok && int64_t(seen.size()) == experts) {
      expertOfTerm = assign;
      form = GateForm(f);
      return true;
    }
  }
  return false;
}

std::optional<Route> Raiser::match(TopKOp topk, Operation *root) {
  Route route;
  route.topk = topk;
  RankedTensorType sType = staticType(topk.getInput(), 2);
  if (!sType || !isa<FloatType>(sType.getElementType()) ||
      topk.getNormalizedAxis() != 1 || !topk.getLargest())
    return std::nullopt;
  int64_t tokens = sType.getDimSize(0), experts = sType.getDimSize(1);
  RankedTensorType outType = staticType(root->getResult(0), 2);
  if (!outType || outType.getDimSize(0) != tokens)
    return std::nullopt;

  SmallVector<OpOperand *> leaves;
  SmallVector<Operation *> inner;
  flattenSum(root, leaves, inner);
  // Cheap structural filter first: one product (or mask) per expert.
  int64_t products = llvm::count_if(leaves, [](OpOperand *leaf) {
    return isa_and_nonnull<tosa::MulOp, tosa::SelectOp>(
        leaf->get().getDefiningOp());
  });
  if (products < experts)
    return std::nullopt;
  SmallVector<Term> terms;
  for (OpOperand *leaf : leaves) {
    Term term;
    if (parseTerm(leaf->get(), term))
      terms.push_back(term);
    else if (!isZeroConstant(leaf->get()))
      route.extras.push_back(leaf);
  }
  if (int64_t(terms.size()) != experts)
    return std::nullopt;
  for (OpOperand *extra : route.extras)
    if (extra->get().getType() != outType)
      return std::nullopt;

  SmallVector<int64_t> expertOf;
  GateForm form;
  if (!checkGates(route, terms, expertOf, form))
    return std::nullopt;
  route.renormalize = form != GateForm::Plain;
  route.softmaxOfScores = form == GateForm::Softmax;

  route.expertOps.resize(experts);
  route.expertOutputs.resize(experts);
  for (auto [i, term] : llvm::enumerate(terms)) {
    SmallVector<Operation *> ops;
    Value x;
    if (!expertSlice(term.expert, ops, x))
      return std::nullopt;
    if (!route.tokens)
      route.tokens = x;
    RankedTensorType xType = staticType(x, 2);
    if (x != route.tokens || !xType || xType.getDimSize(0) != tokens ||
        !isa<FloatType>(xType.getElementType()) ||
        term.expert.getType() != outType)
      return std::nullopt;
    int64_t e = expertOf[i];
    route.expertOps[e] = ops;
    route.expertOutputs[e] = term.expert;
    route.replaced.insert(ops.begin(), ops.end());
    route.replaced.insert(term.ops.begin(), term.ops.end());
  }
  route.replaced.insert(inner.begin(), inner.end());
  route.root = root;
  return route;
}

LogicalResult Raiser::emit(Route &route, std::string &why) {
  Location loc = route.root->getLoc();
  OpBuilder b(module.getContext());
  SymbolTable symbols(module);
  int64_t n = 0;
  while (symbols.lookup("moe" + std::to_string(n) + "_expert0"))
    ++n;
  std::string prefix = "moe" + std::to_string(n);

  // One component per expert, cloned from its slice (constants copied), then
  // made to accept any token count.
  SmallVector<ComponentOp> experts;
  auto discard = [&] {
    for (ComponentOp c : experts)
      c->erase();
  };
  for (auto [e, ops] : llvm::enumerate(route.expertOps)) {
    b.setInsertionPoint(fn);
    ComponentOp component =
        outlineSlice(b, loc, prefix + "_expert" + std::to_string(e), ops,
                     route.tokens, route.expertOutputs[e]);
    experts.push_back(component);
    if (failed(generalizeTokenDim(component, why))) {
      why = "expert " + std::to_string(e) + ": " + why;
      discard();
      return failure();
    }
  }

  // The route replaces the sum; unrouted addends are added back.
  b.setInsertionPoint(route.root);
  Value gate = route.topk.getInput();
  if (route.softmaxOfScores)
    gate = SoftmaxOp::create(b, loc, gate.getType(), gate,
                             b.getI64IntegerAttr(-1));
  SmallVector<Attribute> names;
  for (ComponentOp c : experts)
    names.push_back(FlatSymbolRefAttr::get(c.getSymNameAttr()));
  auto outType = cast<RankedTensorType>(route.root->getResult(0).getType());
  Value out = RouteOp::create(
      b, loc, outType, route.tokens, gate, b.getArrayAttr(names),
      b.getI64IntegerAttr(route.topk.getK()),
      route.renormalize ? b.getUnitAttr() : UnitAttr(), IntegerAttr());
  for (OpOperand *extra : route.extras)
    out = tosa::AddOp::create(b, loc, outType, out, extra->get());
  route.root->getResult(0).replaceAllUsesWith(out);
  // Users before producers: every user of a replaced op is replaced too.
  SmallVector<Operation *> dead(route.replaced.begin(), route.replaced.end());
  llvm::sort(dead, [](Operation *x, Operation *y) {
    return y->isBeforeInBlock(x);
  });
  for (Operation *op : dead) {
    for (auto it = rejected.begin(); it != rejected.end();)
      it = it->second == op ? rejected.erase(it) : std::next(it);
    op->erase();
  }
  return success();
}

bool Raiser::raiseOne() {
  SmallVector<TopKOp> topks(block.getOps<TopKOp>());
  for (TopKOp topk : topks) {
    collectGateSide(topk);
    for (Operation *root = block.getTerminator(); root && root != topk;
         root = root->getPrevNode()) {
      if (!isa<tosa::AddOp>(root) || rejected.count({topk, root}))
        continue;
      std::optional<Route> route = match(topk, root);
      if (!route) {
        rejected.insert({topk, root});
        continue;
      }
      std::string why;
      if (failed(emit(*route, why))) {
        // At the sum's location, named after its node where it has one.
        Location loc = route->root->getLoc();
        InFlightDiagnostic remark = emitRemark(loc) << "mixture of experts";
        if (auto name = dyn_cast<NameLoc>(loc))
          remark << " at '" << name.getName().getValue() << "'";
        remark << " left dense: " << why;
        rejected.insert({topk, root});
        continue;
      }
      raised = true;
      return true;
    }
  }
  return false;
}

struct TesselRaiseMoEPass
    : compose::impl::TesselRaiseMoEBase<TesselRaiseMoEPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> fns(module.getOps<func::FuncOp>());
    for (func::FuncOp fn : fns) {
      if (fn.isDeclaration() || !fn.getBody().hasOneBlock())
        continue;
      densifyIndexedExperts(fn);
      Raiser raiser(module, fn);
      raiser.expandContractions();
      while (raiser.raiseOne()) {
      }
      if (!raiser.raisedAny())
        continue;
      // The gate's top-k and what only it used are dead now.
      Block &body = fn.getBody().front();
      for (Operation *op = body.getTerminator(); op;) {
        Operation *prev = op->getPrevNode();
        if (isOpTriviallyDead(op))
          op->erase();
        op = prev;
      }
    }
  }
};

} // namespace

LogicalResult mlir::tessel::compose::raiseMixturesOfExperts(ModuleOp module) {
  PassManager pm(module.getContext());
  pm.addPass(createTesselRaiseMoE());
  return pm.run(module);
}
