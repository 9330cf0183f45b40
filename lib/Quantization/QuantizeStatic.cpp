//===- QuantizeStatic.cpp - int8 from calibrated ranges --------------------===//
//
// Static quantization rewrites a float model into the form of a QDQ model
// (the one ONNX Runtime's quantizer writes), so that everything after it
// (tessel-fold-qdq, the int8 kernels) is shared with imported QDQ models:
// a calibrated activation goes through quant.qcast / quant.dcast, constant
// weights become int8 constants read through quant.scast / quant.dcast.
// docs/quantization.md.
//
//===----------------------------------------------------------------------===//
#include "tessel/Quantization/Passes.h"
#include "tessel/Quantization/StaticQuantization.h"

#include "mlir/Dialect/Quant/IR/QuantTypes.h"

#include <cmath>

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELQUANTIZESTATIC
#include "tessel/Quantization/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;

namespace {

/// `x` quantized to uint8 over [lo, hi] and dequantized back.
Value quantizeActivation(OpBuilder &b, Location loc, Value x, double lo,
                         double hi) {
  auto ty = cast<RankedTensorType>(x.getType());
  tessel::ActivationQuantization q = tessel::activationQuantization(lo, hi);
  auto elem = quant::UniformQuantizedType::get(
      /*flags=*/0, b.getIntegerType(8), ty.getElementType(), q.scale,
      q.zeroPoint, 0, 255);
  Value qx = quant::QuantizeCastOp::create(b, loc, ty.clone(elem), x);
  return quant::DequantizeCastOp::create(b, loc, ty, qx);
}

/// The constant weights `values` (in `w`'s shape) as symmetric int8 per
/// `axis`, dequantized back to `w`'s type.
Value quantizeWeights(OpBuilder &b, Location loc, Value w,
                      ArrayRef<float> values, int64_t axis) {
  auto ty = cast<RankedTensorType>(w.getType());
  ArrayRef<int64_t> shape = ty.getShape();
  std::vector<float> scales = tessel::symmetricScales(values, shape, axis);
  int64_t inner = 1;
  for (int64_t d = axis + 1, e = shape.size(); d < e; ++d)
    inner *= shape[d];
  std::vector<int8_t> q(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    q[i] = tessel::quantizeSymmetricInt8(values[i],
                                         scales[(i / inner) % shape[axis]]);
  }
  auto storageTy = ty.clone(b.getIntegerType(8));
  Value stored = tosa::ConstOp::create(
      b, loc, storageTy,
      DenseElementsAttr::get(storageTy, ArrayRef<int8_t>(q)));
  SmallVector<double> dscales(scales.begin(), scales.end());
  SmallVector<int64_t> zeroPoints(scales.size(), 0);
  auto elem = quant::UniformQuantizedPerAxisType::get(
      quant::QuantizationFlags::Signed, b.getIntegerType(8),
      ty.getElementType(), dscales, zeroPoints, int32_t(axis), -127, 127);
  Value typed =
      quant::StorageCastOp::create(b, loc, ty.clone(elem), stored);
  return quant::DequantizeCastOp::create(b, loc, ty, typed);
}

struct TesselQuantizeStaticPass
    : tessel::impl::TesselQuantizeStaticBase<TesselQuantizeStaticPass> {
  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    llvm::SmallPtrSet<Operation *, 16> quantized;
    for (const tessel::QuantizationSite &site :
         tessel::findQuantizationSites(fn)) {
      auto ranges = site.op->getAttrOfType<DenseF64ArrayAttr>(
          tessel::kCalibratedRangesAttr);
      if (!ranges)
        continue;
      if (ranges.size() != int64_t(2 * site.activations.size())) {
        site.op->emitOpError()
            << "has " << ranges.size() << " calibrated range bounds, expected "
            << 2 * site.activations.size() << " (lo, hi per activation)";
        return signalPassFailure();
      }
      for (unsigned i = 0; i < site.activations.size(); ++i) {
        double lo = ranges[2 * i], hi = ranges[2 * i + 1];
        if (!std::isfinite(lo) || !std::isfinite(hi) || lo > hi) {
          site.op->emitOpError() << "has an invalid calibrated range [" << lo
                                 << ", " << hi << "] for operand "
                                 << site.activations[i];
          return signalPassFailure();
        }
      }
      OpBuilder b(site.op);
      Location loc = site.op->getLoc();
      for (unsigned i = 0; i < site.activations.size(); ++i) {
        unsigned n = site.activations[i];
        site.op->setOperand(n, quantizeActivation(b, loc,
                                                  site.op->getOperand(n),
                                                  ranges[2 * i],
                                                  ranges[2 * i + 1]));
      }
      if (site.weightOperand >= 0) {
        Value w = site.op->getOperand(site.weightOperand);
        std::optional<std::vector<float>> values = tessel::constantValues(w);
        site.op->setOperand(site.weightOperand,
                            quantizeWeights(b, loc, w, *values,
                                            site.weightAxis));
      }
      site.op->removeAttr(tessel::kCalibratedRangesAttr);
      quantized.insert(site.op);
    }
    fn.walk([&](Operation *op) {
      if (!quantized.contains(op) &&
          op->hasAttr(tessel::kCalibratedRangesAttr)) {
        op->emitWarning("calibrated ranges on an op that static "
                        "quantization does not quantize; it stays float");
        op->removeAttr(tessel::kCalibratedRangesAttr);
      }
    });
  }
};

} // namespace
