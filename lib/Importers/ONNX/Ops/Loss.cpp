//===- Loss.cpp - ONNX Loss converters ------------------------------------===//
#include "Common.h"

using namespace mlir;
using namespace mlir::tessel::onnx_import;

void mlir::tessel::onnx_import::registerLossConverters(ConverterMap &map) {}
