//===- Calibration.h - static quantization's calibration run ----*- C++ -*-===//
#ifndef TESSEL_LIB_COMPILER_CALIBRATION_H
#define TESSEL_LIB_COMPILER_CALIBRATION_H

#include "tessel/Compiler/Compiler.h"

namespace mlir::tessel {

/// Static int8 quantization's calibration: compiles `module` in float with
/// its quantization sites' activations as extra results
/// (tessel-expose-calibration-taps), runs it on `options.calibration`,
/// and annotates each site not excluded with the ranges its activations
/// are quantized over (tessel.calibrated_ranges), which
/// tessel-quantize-static then reads. Writes `options.quantizeReport` if
/// set. Errors (bad samples, unknown excluded nodes) are emitted on the
/// module.
LogicalResult calibrateModule(ModuleOp module, const CompileOptions &options,
                              TimingScope &timing);

} // namespace mlir::tessel

#endif // TESSEL_LIB_COMPILER_CALIBRATION_H
