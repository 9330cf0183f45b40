//===- Registry.cpp - All ONNX op converters, by op type -------------------===//
#include "Common.h"

using namespace mlir::tessel::onnx_import;

const ConverterMap &mlir::tessel::onnx_import::getConverters() {
  static const ConverterMap map = [] {
    ConverterMap m;
    registerElementwiseConverters(m);
    registerMiscConverters(m);
    registerConvPoolConverters(m);
    registerMatMulConverters(m);
    registerNormalizationConverters(m);
    registerShapeConverters(m);
    registerReductionConverters(m);
    registerLossConverters(m);
    registerRecurrentConverters(m);
    registerQuantizationConverters(m);
    return m;
  }();
  return map;
}
