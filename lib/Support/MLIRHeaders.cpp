//===- MLIRHeaders.cpp - Anchor of the shared precompiled header ----------===//
//
// Empty on purpose: the target TesselMLIRHeaders compiles this file only so
// that CMake builds upstream MLIR's precompiled headers once, with the
// compiler libraries' flags; every library reuses that header
// (CMakeLists.txt, TESSEL_PRECOMPILE_MLIR_HEADERS).
//
//===----------------------------------------------------------------------===//
