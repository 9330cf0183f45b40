//===- MatMul.cpp - ONNX MatMul converters ------------------------------------===//
#include "Common.h"

using namespace mlir;
using namespace mlir::tessel::onnx_import;

void mlir::tessel::onnx_import::registerMatMulConverters(ConverterMap &map) {}
