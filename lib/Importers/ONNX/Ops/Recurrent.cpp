//===- Recurrent.cpp - ONNX Recurrent converters ------------------------------------===//
#include "Common.h"

using namespace mlir;
using namespace mlir::tessel::onnx_import;

void mlir::tessel::onnx_import::registerRecurrentConverters(ConverterMap &map) {}
