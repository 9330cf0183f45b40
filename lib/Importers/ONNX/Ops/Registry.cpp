//===- Registry.cpp - All ONNX op converters, by op type -------------------===//
#include "Common.h"

using namespace mlir::tessel::onnx_import;

const ConverterMap &mlir::tessel::onnx_import::getConverters() {
  static const ConverterMap map = [] {
    ConverterMap m;
    registerElementwiseConverters(m);
    registerMiscConverters(m);
    registerRandomConverters(m);
    registerConvPoolConverters(m);
    registerMatMulConverters(m);
    registerNormalizationConverters(m);
    registerShapeConverters(m);
    registerReductionConverters(m);
    registerLossConverters(m);
    registerRecurrentConverters(m);
    registerQuantizationConverters(m);
    registerGridSampleConverters(m);
    registerSignalConverters(m);
    registerRoiAlignConverters(m);
    registerTfIdfConverters(m);
    return m;
  }();
  return map;
}

bool mlir::tessel::onnx_import::widensUnsignedInputs(llvm::StringRef opType) {
  // Integer ops whose unsigned result equals the signless one computed on
  // zero-extended inputs (see convertViaSignless).
  static const llvm::StringSet<> ops = {
      "Add", "Sub", "Mul", "Div", "Mod", "Max", "Min", "Sum", "BitShift",
      "Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual", "MaxPool",
      "ReduceMax", "ReduceMin", "ArgMax", "ArgMin", "Clip", "Where",
      "BitwiseAnd", "BitwiseOr", "BitwiseXor"};
  return ops.contains(opType);
}
