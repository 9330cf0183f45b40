//===- QuantizeDynamic.cpp - int8 matmuls with run-time activation scales -===//
//
// Dynamic quantization (ONNX Runtime's quantize_dynamic, PyTorch's
// torch.ao.quantization.quantize_dynamic) for the linear layers of
// transformers: the weights are quantized once, here, and the activations
// at run time, per row, so no calibration data is needed. A
// `tosa.matmul` of a float activation and constant float weights becomes
//
//   s_a[b,m]  = max_k |a[b,m,k]| / 127            (per row, run time)
//   q_a       = round_half_even(a / s_a)          (int8, in [-127, 127])
//   s_w[n]    = max_k |w[k,n]| / 127              (per column, compile time)
//   q_w       = round_half_even(w / s_w)          (int8 constant)
//   acc       = tosa.matmul(q_a, q_w)             (i8 x i8 -> i32, exact)
//   y         = float(acc) * s_a[b,m] * s_w[n]
//
// The integer matmul is what tessel-convert-to-kernels gives the VNNI kernel;
// the reductions and casts are elementwise work that fuses.
// docs/quantization.md.
//
//===----------------------------------------------------------------------===//
#include "tessel/Quantization/Passes.h"

#include "QuantParams.h"

#include "tessel/Quantization/StaticQuantization.h"

#include "tessel/Dialect/Tessel/Utils/TosaBuilder.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

#include <cfloat>
#include <cmath>

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELQUANTIZEDYNAMIC
#include "tessel/Quantization/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;

namespace {

struct QuantizeMatMul : OpRewritePattern<tosa::MatMulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tosa::MatMulOp op,
                                PatternRewriter &rewriter) const override {
    auto outTy = cast<RankedTensorType>(op.getType());
    auto aTy = cast<RankedTensorType>(op.getA().getType());
    if (!outTy.getElementType().isF32() || !aTy.getElementType().isF32() ||
        !outTy.hasStaticShape() || !aTy.hasStaticShape() ||
        !tessel::isZeroConstant(op.getAZp()) ||
        !tessel::isZeroConstant(op.getBZp()))
      return rewriter.notifyMatchFailure(op, "not a static f32 matmul");
    std::optional<std::vector<float>> w = tessel::constantValues(op.getB());
    if (!w)
      return rewriter.notifyMatchFailure(op, "weights are not constant");
    auto bTy = cast<RankedTensorType>(op.getB().getType());
    const int64_t batches = bTy.getDimSize(0), k = bTy.getDimSize(1),
                  n = bTy.getDimSize(2);

    // Weights: symmetric int8 per output column (per batch entry).
    std::vector<int8_t> qw(w->size());
    std::vector<float> sw(batches * n);
    for (int64_t b = 0; b < batches; ++b) {
      ArrayRef<float> slice(w->data() + b * k * n, k * n);
      std::vector<float> scales = tessel::symmetricScales(slice, {k, n}, 1);
      llvm::copy(scales, sw.begin() + b * n);
      for (int64_t i = 0; i < k * n; ++i)
        qw[b * k * n + i] = tessel::quantizeSymmetricInt8(slice[i], scales[i % n]);
    }
    Location loc = op.getLoc();
    tessel::TosaBuilder tb(rewriter, loc);
    Type f32 = rewriter.getF32Type(), i8 = rewriter.getI8Type();
    auto qwTy = RankedTensorType::get(bTy.getShape(), i8);
    Value qwV = tosa::ConstOp::create(
        rewriter, loc, qwTy,
        DenseElementsAttr::get(qwTy, ArrayRef<int8_t>(qw)));
    auto swTy = RankedTensorType::get({batches, 1, n}, f32);
    Value swV = tosa::ConstOp::create(
        rewriter, loc, swTy, DenseElementsAttr::get(swTy, ArrayRef<float>(sw)));

    // Activations: symmetric int8 per row, scales at run time. The floor
    // on the scale keeps an all-zero row at zero (not 0 * inf).
    Value absA = tosa::AbsOp::create(rewriter, loc, aTy, op.getA());
    Value maxAbs = tb.reduceMax(absA, 2);
    Value sa = tb.maximum(tb.mul(maxAbs, tb.scalar(f32, 1.0 / 127.0, 3)),
                          tb.scalar(f32, FLT_MIN, 3));
    Value qa = tb.cast(tb.mul(op.getA(), tb.reciprocal(sa)), i8);

    auto accTy = RankedTensorType::get(outTy.getShape(), rewriter.getI32Type());
    Value acc = tosa::MatMulOp::create(rewriter, loc, accTy, qa, qwV,
                                       tb.zeroPoint(i8), tb.zeroPoint(i8));
    Value y = tb.mul(tb.mul(tb.cast(acc, f32), sa), swV);
    rewriter.replaceOp(op, y);
    return success();
  }
};

struct TesselQuantizeDynamicPass
    : tessel::impl::TesselQuantizeDynamicBase<TesselQuantizeDynamicPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<QuantizeMatMul>(&getContext());
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace
