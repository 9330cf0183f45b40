//===- RaiseMoE.cpp - find top-k gated mixtures of experts in ONNX --------===//
//
// Structure first (a sum of gate x expert terms over one TopK), semantics
// second: the gate factors are evaluated on synthetic scores in batches of
// the graph's own token count (so every static shape stays valid) and must
// equal the top-k weights exactly as compose.route defines them. A pattern
// that fails any check is left to the ordinary importer.
//
//===----------------------------------------------------------------------===//

#include "RaiseMoE.h"
#include "GateEvaluator.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

using namespace mlir;
using namespace mlir::tessel::onnx_import;

namespace {

using Shape = llvm::SmallVector<int64_t>;

/// How the gate weight of a routed expert is formed from the top-k values.
enum class GateForm { Plain, Renormalized, Softmax, Count };

struct Term {
  std::string gate;               // T x 1, gate side
  std::string expert;             // T x Do, the expert's output
  std::vector<std::string> conds; // Where masks that must hold where routed
  std::vector<int> nodes;         // the Mul / Where nodes
};

class Finder {
public:
  Finder(MLIRContext *context, const onnx::GraphProto &graph, int64_t opset,
         const ShapeMap &shapes)
      : context(context), graph(graph), opset(opset), shapes(shapes) {
    for (int i = 0; i < graph.node_size(); ++i) {
      const auto &n = graph.node(i);
      for (const auto &o : n.output())
        producer[o] = i;
      for (const auto &in : n.input())
        if (!in.empty())
          consumers[in].push_back(i);
    }
    for (const auto &o : graph.output())
      graphOutputs.insert(o.name());
    for (const auto &t : graph.initializer())
      initializers[t.name()] = &t;
  }

  std::vector<MoERoute> run();

private:
  const onnx::NodeProto &node(int i) const { return graph.node(i); }
  std::optional<Shape> shapeOf(const std::string &name) const {
    auto it = shapes.find(name);
    if (it == shapes.end())
      return std::nullopt;
    return it->second;
  }
  int producerOf(const std::string &name) const {
    auto it = producer.find(name);
    return it == producer.end() ? -1 : it->second;
  }
  size_t numConsumers(const std::string &name) const {
    auto it = consumers.find(name);
    return it == consumers.end() ? 0 : it->second.size();
  }
  bool isConstant(const std::string &name) const {
    if (initializers.count(name))
      return true;
    int p = producerOf(name);
    return p >= 0 && node(p).op_type() == "Constant";
  }
  bool isZeroConstant(const std::string &name) {
    std::optional<EvalTensor> v;
    if (isConstant(name))
      v = evaluator().eval(name);
    return v && std::all_of(v->data.begin(), v->data.end(),
                            [](double d) { return d == 0.0; });
  }
  /// The values computed from the outputs of TopK node `topk`, its input
  /// and constants only: one pass in graph (topological) order.
  std::set<std::string> gateSideOf(int topk) const;
  bool onGateSide(const std::string &name) const {
    return isConstant(name) || gateSide.count(name);
  }
  bool parseTerm(const std::string &name, Term &term);
  /// Leaves of the Add/Sum tree rooted at node `root`, and its inner nodes.
  void flattenSum(int root, std::vector<std::string> &leaves,
                  std::vector<int> &inner);
  /// The private subgraph computing `y`: nodes in graph order, and its one
  /// non-constant input (the tokens); false if it is not private.
  bool expertClosure(const std::string &y, std::vector<int> &nodes,
                     std::string &tokens);
  std::optional<MoERoute> match(int topk, int root);
  bool checkGates(const MoERoute &route, const std::vector<Term> &terms,
                  int64_t tokens, int64_t experts, int topk,
                  std::vector<int64_t> &expertOfTerm, GateForm &form);
  GateEvaluator &evaluator() {
    if (!eval)
      eval.emplace(context, graph, opset, producer, initializers);
    return *eval;
  }

  MLIRContext *context;
  const onnx::GraphProto &graph;
  int64_t opset;
  const ShapeMap &shapes;
  std::map<std::string, int> producer;
  std::map<std::string, std::vector<int>> consumers;
  std::set<std::string> graphOutputs;
  std::map<std::string, const onnx::TensorProto *> initializers;
  std::optional<GateEvaluator> eval;
  std::set<int> claimed; // nodes already replaced by a found route
  std::set<std::string> gateSide; // of the TopK being matched
};

std::set<std::string> Finder::gateSideOf(int topk) const {
  std::set<std::string> side = {node(topk).input(0)};
  for (const auto &o : node(topk).output())
    side.insert(o);
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto &n = node(i);
    if (i == topk || n.input_size() == 0)
      continue;
    bool ok = true;
    for (const auto &in : n.input())
      ok &= in.empty() || isConstant(in) || side.count(in) > 0;
    if (ok)
      side.insert(n.output().begin(), n.output().end());
  }
  return side;
}

bool Finder::parseTerm(const std::string &name, Term &term) {
  int p = producerOf(name);
  if (p < 0 || numConsumers(name) != 1 || graphOutputs.count(name))
    return false;
  const auto &n = node(p);
  if (n.op_type() == "Where" && n.input_size() == 3 &&
      onGateSide(n.input(0)) && isZeroConstant(n.input(2))) {
    term.conds.push_back(n.input(0));
    term.nodes.push_back(p);
    return parseTerm(n.input(1), term);
  }
  if (n.op_type() != "Mul" || n.input_size() != 2 || !term.gate.empty())
    return false;
  bool a = onGateSide(n.input(0));
  bool b = onGateSide(n.input(1));
  if (a == b)
    return false;
  term.gate = n.input(a ? 0 : 1);
  term.nodes.push_back(p);
  // The expert side may itself be masked: Where(routed, expert(x), 0).
  std::string y = n.input(a ? 1 : 0);
  while (true) {
    int q = producerOf(y);
    if (q < 0 || numConsumers(y) != 1 || graphOutputs.count(y))
      return false;
    const auto &m = node(q);
    if (m.op_type() == "Where" && m.input_size() == 3 &&
        onGateSide(m.input(0)) && isZeroConstant(m.input(2))) {
      term.conds.push_back(m.input(0));
      term.nodes.push_back(q);
      y = m.input(1);
      continue;
    }
    break;
  }
  term.expert = y;
  return true;
}

void Finder::flattenSum(int root, std::vector<std::string> &leaves,
                        std::vector<int> &inner) {
  inner.push_back(root);
  for (const auto &in : node(root).input()) {
    int p = producerOf(in);
    bool isSum = p >= 0 && (node(p).op_type() == "Add" ||
                            node(p).op_type() == "Sum");
    if (isSum && numConsumers(in) == 1 && !graphOutputs.count(in))
      flattenSum(p, leaves, inner);
    else
      leaves.push_back(in);
  }
}

bool Finder::expertClosure(const std::string &y, std::vector<int> &nodes,
                           std::string &tokens) {
  int last = producerOf(y);
  if (last < 0 || node(last).op_type() == "Constant")
    return false;
  std::set<int> inClosure = {last};
  std::set<std::string> needed(node(last).input().begin(),
                               node(last).input().end());
  for (int i = last - 1; i >= 0; --i) {
    const auto &n = node(i);
    bool feeds = false, private_ = true;
    for (const auto &o : n.output()) {
      if (o.empty())
        continue;
      feeds |= needed.count(o) > 0;
      if (graphOutputs.count(o))
        private_ = false;
      auto it = consumers.find(o);
      if (it != consumers.end())
        for (int c : it->second)
          private_ &= inClosure.count(c) > 0;
    }
    if (!feeds || !private_)
      continue;
    inClosure.insert(i);
    needed.insert(n.input().begin(), n.input().end());
  }
  tokens.clear();
  for (int i : inClosure)
    for (const auto &in : node(i).input()) {
      if (in.empty() || isConstant(in))
        continue;
      int p = producerOf(in);
      if (p >= 0 && inClosure.count(p))
        continue;
      if (!tokens.empty() && tokens != in)
        return false; // two non-constant inputs: not a function of x alone
      tokens = in;
    }
  nodes.assign(inClosure.begin(), inClosure.end());
  return !tokens.empty();
}

/// The k largest of `row` (lowest index first on ties), like ONNX TopK.
std::vector<int64_t> topK(const std::vector<double> &row, int64_t k) {
  std::vector<int64_t> order(row.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return row[a] > row[b] || (row[a] == row[b] && a < b);
  });
  order.resize(k);
  return order;
}

bool Finder::checkGates(const MoERoute &route, const std::vector<Term> &terms,
                        int64_t tokens, int64_t experts, int topk,
                        std::vector<int64_t> &expertOfTerm, GateForm &form) {
  const auto &tk = node(topk);
  int64_t k = route.k;
  bool scoresAreProbs = producerOf(route.scores) >= 0 &&
                        node(producerOf(route.scores)).op_type() == "Softmax";
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
  GateEvaluator &ev = evaluator();
  for (int64_t b = 0; b < batches; ++b) {
    EvalTensor s, v, idx;
    s.shape = {tokens, experts};
    v.shape = idx.shape = {tokens, k};
    idx.kind = EvalTensor::Kind::Int;
    std::vector<std::vector<int64_t>> chosen(tokens);
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
    ev.bind(route.scores, s);
    ev.bind(tk.output(0), v);
    ev.bind(tk.output(1), idx);
    for (size_t i = 0; i < nt; ++i) {
      std::optional<EvalTensor> g = ev.eval(terms[i].gate);
      if (!g || g->numElements() != tokens ||
          g->shape != Shape({tokens, 1}))
        return false;
      std::vector<std::optional<EvalTensor>> conds;
      for (const auto &c : terms[i].conds) {
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
          bool routed = std::find(chosen[t].begin(), chosen[t].end(), e) !=
                        chosen[t].end();
          if (routed)
            for (const auto &c : conds) {
              int64_t per = c->numElements() / tokens;
              for (int64_t j = 0; j < per; ++j)
                if (c->data[t * per + j] == 0.0)
                  condOk[i][e] = false;
            }
        }
      }
    }
  }
  ev.clear();
  // One form for all terms; each term exactly one expert; all distinct.
  for (int f = 0; f < kForms; ++f) {
    std::vector<int64_t> assign(nt, -1);
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

std::optional<MoERoute> Finder::match(int topk, int root) {
  const auto &tk = node(topk);
  MoERoute route;
  route.scores = tk.input(0);
  auto sShape = shapeOf(route.scores);
  if (!sShape || sShape->size() != 2 || tk.output_size() != 2)
    return std::nullopt;
  int64_t tokens = (*sShape)[0], experts = (*sShape)[1];
  // TopK over the experts, largest first.
  for (const auto &a : tk.attribute()) {
    if (a.name() == "axis" && a.i() != 1 && a.i() != -1)
      return std::nullopt;
    if (a.name() == "largest" && a.i() != 1)
      return std::nullopt;
    if (a.name() == "k")
      route.k = a.i();
  }
  if (opset >= 10) {
    if (tk.input_size() < 2)
      return std::nullopt;
    std::optional<EvalTensor> k;
    if (isConstant(tk.input(1)))
      k = evaluator().eval(tk.input(1));
    if (!k || k->numElements() != 1)
      return std::nullopt;
    route.k = int64_t(k->data[0]);
  }
  if (route.k < 1 || route.k > experts)
    return std::nullopt;

  std::vector<std::string> leaves;
  std::vector<int> inner;
  flattenSum(root, leaves, inner);
  // Cheap structural filter first: one product (or mask) per expert.
  int64_t products = llvm::count_if(leaves, [&](const std::string &leaf) {
    int p = producerOf(leaf);
    return p >= 0 && (node(p).op_type() == "Mul" || node(p).op_type() == "Where");
  });
  if (products < experts)
    return std::nullopt;
  std::vector<Term> terms;
  for (const auto &leaf : leaves) {
    Term term;
    if (parseTerm(leaf, term))
      terms.push_back(term);
    else if (!isZeroConstant(leaf))
      route.extraAddends.push_back(leaf);
  }
  if (int64_t(terms.size()) != experts)
    return std::nullopt;

  route.output = node(root).output(0);
  auto outShape = shapeOf(route.output);
  if (!outShape || outShape->size() != 2 || (*outShape)[0] != tokens)
    return std::nullopt;
  for (const auto &extra : route.extraAddends)
    if (shapeOf(extra) != outShape)
      return std::nullopt;

  std::vector<int64_t> expertOf;
  GateForm form;
  if (!checkGates(route, terms, tokens, experts, topk, expertOf, form))
    return std::nullopt;
  route.renormalize = form != GateForm::Plain;
  route.softmaxOfScores = form == GateForm::Softmax;

  route.expertNodes.resize(experts);
  route.expertOutputs.resize(experts);
  for (size_t i = 0; i < terms.size(); ++i) {
    std::vector<int> nodes;
    std::string x;
    if (!expertClosure(terms[i].expert, nodes, x))
      return std::nullopt;
    if (route.tokens.empty())
      route.tokens = x;
    auto xShape = shapeOf(x), yShape = shapeOf(terms[i].expert);
    if (x != route.tokens || !xShape || xShape->size() != 2 ||
        (*xShape)[0] != tokens || yShape != outShape)
      return std::nullopt;
    int64_t e = expertOf[i];
    route.expertNodes[e] = nodes;
    route.expertOutputs[e] = terms[i].expert;
    route.replacedNodes.insert(nodes.begin(), nodes.end());
    route.replacedNodes.insert(terms[i].nodes.begin(), terms[i].nodes.end());
  }
  route.replacedNodes.insert(inner.begin(), inner.end());
  for (int n : route.replacedNodes)
    if (claimed.count(n))
      return std::nullopt;
  route.rootNode = root;
  return route;
}

std::vector<MoERoute> Finder::run() {
  std::vector<MoERoute> routes;
  for (int t = 0; t < graph.node_size(); ++t) {
    if (node(t).op_type() != "TopK")
      continue;
    gateSide = gateSideOf(t);
    for (int r = graph.node_size() - 1; r > t; --r) {
      const std::string &op = node(r).op_type();
      if ((op != "Add" && op != "Sum") || claimed.count(r))
        continue;
      if (std::optional<MoERoute> route = match(t, r)) {
        claimed.insert(route->replacedNodes.begin(),
                       route->replacedNodes.end());
        routes.push_back(std::move(*route));
      }
    }
  }
  return routes;
}

} // namespace

std::vector<MoERoute>
mlir::tessel::onnx_import::findMoERoutes(MLIRContext *context,
                                         const onnx::GraphProto &graph,
                                         int64_t opset,
                                         const ShapeMap &shapes) {
  // Most models have no TopK: cost them nothing.
  bool anyTopK = llvm::any_of(graph.node(), [](const onnx::NodeProto &n) {
    return n.op_type() == "TopK";
  });
  if (!anyTopK)
    return {};
  return Finder(context, graph, opset, shapes).run();
}
