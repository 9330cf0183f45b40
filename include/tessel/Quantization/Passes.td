//===- Passes.td - quantization passes --------------------*- tablegen -*-===//
#ifndef TESSEL_QUANTIZATION_PASSES
#define TESSEL_QUANTIZATION_PASSES

include "mlir/Pass/PassBase.td"

def TesselLowerQuant : Pass<"tessel-lower-quant", "::mlir::func::FuncOp"> {
  let summary = "Lower quant.qcast / quant.dcast on tensors with ONNX semantics";
  let description = [{
    The model IR keeps quantization visible as upstream `quant` casts on
    `!quant.uniform` tensors (per-tensor and per-axis; docs/quantization.md):

    ```mlir
    %q = quant.scast %x : tensor<4xi8> to tensor<4x!quant.uniform<i8:f32, 5.000000e-01:3>>
    %y = quant.dcast %q : tensor<4x!quant.uniform<i8:f32, 5.000000e-01:3>> to tensor<4xf32>
    ```

    This pass gives them their meaning, the one place that does:

    - `quant.dcast`: `y = (x - zero_point) * scale`, computed in f32 (exact
      for 8/16-bit storage), then converted to the expressed type;
    - `quant.qcast`: `q = saturate(round_half_to_even(x / scale) + zero_point)`,
      with an exact division, as ONNX's QuantizeLinear (upstream
      `lower-quant-ops` rounds differently);

    per axis the scales and zero points broadcast along the quantized
    dimension. Storage casts that meet (`scast(scast(x))`) cancel; a
    quantized value left over afterwards (an op with no lowering consumed
    it) is an error naming the op. Runs before TOSA is lowered to linalg;
    `tessel-fold-qdq` (to come) runs before it to turn DQ -> op -> Q chains
    into integer ops.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::quant::QuantDialect",
                           "::mlir::tosa::TosaDialect"];
}

#endif // TESSEL_QUANTIZATION_PASSES
