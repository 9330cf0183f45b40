//===- CalibrationTaps.cpp - return what static quantization calibrates ---===//
//
// Calibration runs the float model and looks at the activations each
// quantization site will quantize. Rather than an interpreter, the model
// is compiled as usual with those activations added to its results, so
// calibration sees exactly the values the compiled model computes.
//
//===----------------------------------------------------------------------===//
#include "tessel/Quantization/Passes.h"
#include "tessel/Quantization/StaticQuantization.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELEXPOSECALIBRATIONTAPS
#include "tessel/Quantization/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;

namespace {

struct TesselExposeCalibrationTapsPass
    : tessel::impl::TesselExposeCalibrationTapsBase<
          TesselExposeCalibrationTapsPass> {
  using Base::Base;

  void runOnOperation() override {
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      if (fn.isDeclaration() || !fn.isPublic())
        continue;
      if (failed(expose(fn)))
        return signalPassFailure();
    }
  }

  LogicalResult expose(func::FuncOp fn) {
    SmallVector<Value> taps;
    for (const tessel::QuantizationSite &site :
         tessel::findQuantizationSites(fn)) {
      for (unsigned operand : site.activations)
        taps.push_back(site.op->getOperand(operand));
      if (outputs)
        taps.push_back(site.op->getResult(0));
    }
    if (taps.empty())
      return success();
    if (!fn.getBody().hasOneBlock())
      return fn.emitError("calibration needs a function of one block");
    auto ret = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
    unsigned first = ret.getNumOperands();
    ret->insertOperands(first, taps);
    SmallVector<Type> results(fn.getResultTypes());
    for (Value v : taps)
      results.push_back(v.getType());
    fn.setType(FunctionType::get(&getContext(), fn.getArgumentTypes(),
                                 results));
    Builder b(&getContext());
    for (unsigned i = 0, e = taps.size(); i < e; ++i)
      fn.setResultAttr(first + i, "tessel.name",
                       b.getStringAttr("calibration_tap_" + Twine(i)));
    return success();
  }
};

} // namespace
