//===- Passes.td - Tessel graph-dialect passes ------------*- tablegen -*-===//
#ifndef TESSEL_DIALECT_TESSEL_TRANSFORMS_PASSES
#define TESSEL_DIALECT_TESSEL_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def TesselDecomposeGraphOps : Pass<"tessel-decompose-graph-ops"> {
  let summary = "Decompose tessel graph ops into TOSA and math ops";
  let description = [{
    Rewrites every `tessel` op (softmax, log_softmax, layer_norm, batch_norm,
    gelu, conv2d with groups, reduce_mean) into upstream `tosa` ops (plus
    `math.sqrt` on tensors where TOSA has no op), so that the upstream
    TOSA->linalg lowering handles the rest. Grouped convolution becomes one
    `tosa.conv2d` when `groups == 1`, a `tosa.depthwise_conv2d` when
    `groups == C`, and per-group slices + `tosa.conv2d` + `tosa.concat`
    otherwise.
  }];
  let dependentDialects = ["::mlir::tosa::TosaDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::arith::ArithDialect"];
}

#endif // TESSEL_DIALECT_TESSEL_TRANSFORMS_PASSES
