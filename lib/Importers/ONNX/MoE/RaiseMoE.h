//===- RaiseMoE.h - find top-k gated mixtures of experts in ONNX --*- C++ -*-===//
//
// Exported mixture-of-experts layers arrive as dense graphs: every expert
// runs on every token and its output is multiplied by a gate factor that is
// zero for the tokens not routed to it. findMoERoutes recognizes
//
//   (V, I) = TopK(S, k)            S: T x E gate scores
//   out    = sum over e of g_e * expert_e(x) [+ other addends]
//
// where each g_e (a T x 1 gate-side value computed from S, V, I and
// constants, optionally with Where(routed, ., 0) masks) is *proven* by
// evaluation on synthetic top-k results to equal the top-k gate weight of
// expert e: plain, renormalized over the k, or a softmax over the k top
// logits (Mixtral). Each expert_e must be a private subgraph of the token
// matrix x and constants. The importer then emits one compose.component per
// expert and a compose.route, which the route lowering runs on just each
// expert's tokens. See docs/importers/onnx.md ("Mixture of experts").
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_IMPORTERS_ONNX_MOE_RAISEMOE_H
#define TESSEL_LIB_IMPORTERS_ONNX_MOE_RAISEMOE_H

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/SmallVector.h"

#include "onnx/onnx_pb.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace mlir::tessel::onnx_import {

struct MoERoute {
  std::string tokens; ///< x: T x D
  std::string scores; ///< the TopK input S: T x E
  /// The gate is a softmax over the k top values of S (S holds logits), so
  /// the route's scores are softmax(S), renormalized.
  bool softmaxOfScores = false;
  bool renormalize = false;
  int64_t k = 0;
  /// Per expert e (0 .. E-1): its nodes in graph order and its output.
  std::vector<std::vector<int>> expertNodes;
  std::vector<std::string> expertOutputs;
  /// Addends of the combine that are not routed (e.g. a shared expert).
  std::vector<std::string> extraAddends;
  int rootNode = -1;  ///< the node producing `output`
  std::string output; ///< T x Do, the combined result
  /// Expert, gate-multiply, mask and sum nodes the route replaces.
  std::set<int> replacedNodes;
};

/// Static shapes of graph values (inputs, initializers, shape inference).
using ShapeMap = std::map<std::string, llvm::SmallVector<int64_t>>;

std::vector<MoERoute> findMoERoutes(MLIRContext *context,
                                    const onnx::GraphProto &graph,
                                    int64_t opset, const ShapeMap &shapes);

} // namespace mlir::tessel::onnx_import

#endif // TESSEL_LIB_IMPORTERS_ONNX_MOE_RAISEMOE_H
