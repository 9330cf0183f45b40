//===- QuantizationSites.cpp - the ops static quantization quantizes ------===//
//
// One definition of a quantization site (include/tessel/Quantization/
// StaticQuantization.h) for the calibration taps, the compiler driver's
// calibration and tessel-quantize-static, so the three number the same ops
// the same way.
//
//===----------------------------------------------------------------------===//
#include "tessel/Quantization/StaticQuantization.h"

#include "QuantParams.h"

#include "tessel/Dialect/Tessel/IR/TesselDialect.h"
#include "tessel/Dialect/Tessel/Utils/ConstantData.h"

#include "mlir/Dialect/Quant/IR/Quant.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Matchers.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

using namespace mlir;
using namespace mlir::tessel;

std::optional<std::vector<float>> mlir::tessel::constantValues(Value v) {
  auto ty = dyn_cast<RankedTensorType>(v.getType());
  if (!ty || !ty.hasStaticShape() || !ty.getElementType().isF32())
    return std::nullopt;
  DenseFPElementsAttr attr;
  if (matchPattern(v, m_Constant(&attr))) {
    std::vector<float> out;
    out.reserve(ty.getNumElements());
    if (attr.isSplat())
      out.assign(ty.getNumElements(), attr.getSplatValue<float>());
    else
      for (float x : attr.getValues<float>())
        out.push_back(x);
    return out;
  }
  Operation *def = v.getDefiningOp();
  if (auto r = dyn_cast_or_null<tosa::ReshapeOp>(def))
    return constantValues(r.getInput1());
  auto t = dyn_cast_or_null<tosa::TransposeOp>(def);
  if (!t)
    return std::nullopt;
  std::optional<std::vector<float>> in = constantValues(t.getInput1());
  if (!in)
    return std::nullopt;
  auto inTy = cast<RankedTensorType>(t.getInput1().getType());
  return transposeRowMajor<float>(*in, inTy.getShape(), t.getPerms());
}

std::vector<float> mlir::tessel::symmetricScales(ArrayRef<float> values,
                                                 ArrayRef<int64_t> shape,
                                                 int64_t axis) {
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  for (int64_t d = axis + 1, e = shape.size(); d < e; ++d)
    inner *= shape[d];
  const int64_t channels = shape[axis];
  std::vector<float> maxAbs(channels, 0.0f);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t i = 0; i < inner; ++i)
        maxAbs[c] = std::max(maxAbs[c],
                             std::fabs(values[(o * channels + c) * inner + i]));
  // A scale below f32's normal range is no valid quantized type (and such
  // weights are 0 to any precision that matters): 1 then.
  for (float &s : maxAbs)
    s = std::isfinite(s) && s / 127.0f >= FLT_MIN ? s / 127.0f : 1.0f;
  return maxAbs;
}

ActivationQuantization mlir::tessel::activationQuantization(double lo,
                                                            double hi) {
  lo = std::min(lo, 0.0);
  hi = std::max(hi, 0.0);
  ActivationQuantization q;
  q.scale = (hi - lo) / 255.0;
  if (!(q.scale >= FLT_MIN) || !std::isfinite(q.scale))
    q.scale = 1.0; // an empty (or subnormal) range: every value is 0
  q.zeroPoint = std::clamp<int64_t>(std::llrint(-lo / q.scale), 0, 255);
  return q;
}

std::string mlir::tessel::nodeName(Operation *op) {
  Location loc = op->getLoc();
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location l : fused.getLocations())
      if (auto name = dyn_cast<NameLoc>(l))
        return name.getName().str();
  return "";
}

namespace {

bool isStaticF32(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.hasStaticShape() && t.getElementType().isF32();
}

/// Already dequantized (a QDQ model): tessel-fold-qdq handles it as written.
bool isDequantized(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (isa<quant::DequantizeCastOp>(def))
      return true;
    if (!isa<tosa::ReshapeOp, tosa::TransposeOp>(def))
      return false;
    v = def->getOperand(0);
  }
  return false;
}

/// Why `op` (an f32 matmul or convolution) has no int8 form here, or "" if
/// it is a site (then `site` is filled in).
std::string classify(Operation *op, QuantizationSite &site) {
  site.op = op;
  for (Value v : op->getOperands().take_front(2))
    if (isDequantized(v))
      return "already quantized (QDQ)";
  auto convSite = [&](Value weight) -> std::string {
    if (!constantValues(weight))
      return "the weights are not constant";
    site.activations = {0};
    site.weightOperand = 1;
    site.weightAxis = 0; // OHWI
    return "";
  };
  if (auto mm = dyn_cast<tosa::MatMulOp>(op)) {
    if (!tessel::isZeroConstant(mm.getAZp()) ||
        !tessel::isZeroConstant(mm.getBZp()))
      return "non-zero float zero points";
    if (constantValues(mm.getA()))
      return "the first operand is constant";
    site.activations = {0};
    if (constantValues(mm.getB())) {
      site.weightOperand = 1;
      site.weightAxis = 2; // B x K x N: per output column
    } else {
      site.activations.push_back(1);
    }
    return "";
  }
  if (auto conv = dyn_cast<tessel::Conv2DOp>(op))
    // Every grouping: one group, depthwise (with any channel multiplier)
    // and groups in between fold onto the int8 kernels (tessel-fold-qdq).
    return convSite(conv.getWeight());
  if (auto conv = dyn_cast<tosa::Conv2DOp>(op)) {
    if (!tessel::isZeroConstant(conv.getInputZp()) ||
        !tessel::isZeroConstant(conv.getWeightZp()))
      return "non-zero float zero points";
    return convSite(conv.getWeight());
  }
  if (isa<tosa::DepthwiseConv2DOp>(op))
    return "depthwise convolution: no int8 kernel yet";
  return "no int8 form";
}

} // namespace

SmallVector<QuantizationSite>
mlir::tessel::findQuantizationSites(func::FuncOp fn,
                                    SmallVectorImpl<SkippedSite> *skipped) {
  SmallVector<QuantizationSite> sites;
  Block *body = fn.isDeclaration() ? nullptr : &fn.front();
  fn.walk([&](Operation *op) {
    if (!isa<tosa::MatMulOp, tosa::Conv2DOp, tosa::DepthwiseConv2DOp,
             tessel::Conv2DOp>(op))
      return;
    auto isF32 = [](Value v) {
      auto t = dyn_cast<RankedTensorType>(v.getType());
      return t && t.getElementType().isF32();
    };
    if (!llvm::all_of(op->getOperands().take_front(2), isF32) ||
        !isF32(op->getResult(0)))
      return; // integer and non-f32 products are not ours to quantize
    QuantizationSite site;
    std::string why;
    if (op->getBlock() != body)
      // Taps return values from the function's body; control-flow regions
      // (tosa.cond_if, tosa.while_loop) cannot return theirs there.
      why = "inside control flow";
    else if (!llvm::all_of(op->getOperands().take_front(2), isStaticF32) ||
             !isStaticF32(op->getResult(0)))
      why = "dynamic shape";
    else
      why = classify(op, site);
    if (why.empty())
      sites.push_back(site);
    else if (skipped)
      skipped->push_back({op, why});
  });
  return sites;
}
