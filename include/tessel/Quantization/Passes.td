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
    `tessel-fold-qdq` runs before it to turn DQ -> op -> Q chains
    into integer ops. Storage of 32 bits (the accumulators `tessel-fold-qdq`
    produces) dequantizes through an f32 conversion, rounded as ONNX
    Runtime's integer-to-float matmuls round it.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::quant::QuantDialect",
                           "::mlir::tosa::TosaDialect"];
}

def TesselFoldQDQ : Pass<"tessel-fold-qdq", "::mlir::func::FuncOp"> {
  let summary = "Run products of dequantized operands on their integers";
  let description = [{
    A `tosa.matmul` whose operands are both dequantized 8-bit values
    (`quant.dcast` of `quant.scast`, seen through `tosa.reshape`s) becomes
    a `tosa.matmul` of the stored integers with their zero points (i32
    accumulation), whose result is dequantized with the product of the
    scales:

    ```mlir
    %a = quant.dcast(quant.scast %x : ... !quant.uniform<u8:f32, sa:za>)
    %b = quant.dcast(quant.scast %w : ... !quant.uniform<i8:f32:2, {sb_n:zb}>)
    %y = tosa.matmul %a, %b, %fzero, %fzero    // f32
    // becomes
    %acc = tosa.matmul %x', %w, %za', %zb       // i8 x i8 -> i32
    %y = quant.dcast(quant.scast %acc : !quant.uniform<i32:f32:2, {sa*sb_n}>)
    ```

    The integer sum is exact, so the result differs from the float one by
    rounding only. uint8 storage is moved into int8 range by flipping the
    top bit (x - 128), its zero point alike. The activation must be
    quantized per tensor, the weights per tensor or per output column with
    one zero point (TOSA's zero point is a scalar); anything else stays in
    float. A `quant.qcast` that follows is left to `tessel-lower-quant`.

    Convolutions of one group (`tessel.conv2d`, `tosa.conv2d`) fold alike:
    a pointwise one into the same integer matmul over its pixels, any other
    into an i8 x i8 -> i32 `tosa.conv2d` with the input's zero point (its
    padding reads as 0.0), the float bias added after dequantization.

    Where integers do not pay, the options leave products in float, as
    ONNX's QDQ semantics compute them: `depthwise=false` keeps depthwise
    convolutions (and grouped ones of one input channel per group) in
    float; `min-reduction=N` keeps matmuls and convolutions whose reduction
    (K; KH*KW*C per group) is below N. The pipeline folds everything today;
    on CPUs without AVX-512 VNNI, whose int8 kernels use exact 16-bit
    products, both measured faster in float (docs/quantization.md), for
    the compiler driver to set from the target.
  }];
  let options = [
    Option<"depthwise", "depthwise", "bool", /*default=*/"true",
           "Fold depthwise convolutions (one input channel per group)">,
    Option<"minReduction", "min-reduction", "int64_t", /*default=*/"0",
           "Leave products with a shorter reduction (K; KH*KW*C per group) "
           "in float">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::quant::QuantDialect",
                           "::mlir::tosa::TosaDialect"];
}

def TesselQuantizeDynamic : Pass<"tessel-quantize-dynamic", "::mlir::func::FuncOp"> {
  let summary = "int8 matmuls with constant weights, activations quantized at run time";
  let description = [{
    Dynamic quantization (`tessel-compile --quantize=int8-dynamic`): every
    f32 `tosa.matmul` whose weights are constant (seen through
    `tosa.reshape` / `tosa.transpose`) runs on int8. The weights are
    quantized here, symmetric per output column; the activations at run
    time, symmetric per row (`max |a| / 127`); the i8 x i8 -> i32 product is
    exact and is rescaled by both scales:

    ```mlir
    %y = tosa.matmul %a, %w_f32, %zero, %zero      // f32
    // becomes
    %sa  = max(reduce_max(abs(%a), axis 2) / 127, FLT_MIN)
    %qa  = tosa.cast(%a * reciprocal(%sa))          // f32 -> i8, ties to even
    %acc = tosa.matmul %qa, %w_i8, %zp0, %zp0      // i8 x i8 -> i32
    %y   = tosa.cast(%acc) * %sa * %sw             // f32
    ```

    Matmuls of two run-time values (attention's scores) stay in float.
  }];
  let dependentDialects = ["::mlir::tosa::TosaDialect"];
}

def TesselExposeCalibrationTaps : Pass<"tessel-expose-calibration-taps", "::mlir::ModuleOp"> {
  let summary = "Return the activations static quantization calibrates";
  let description = [{
    The first step of static (post-training) quantization: every public
    function with a body also returns, after its own results, the float
    activation operands of each quantization site (see
    `tessel-quantize-static`), site by site in walk order, and with
    `outputs` each site's result after its activations. The compiler driver
    compiles the module so instrumented, runs it on the calibration samples
    and turns the values it sees into each site's ranges; with `outputs`
    it compares the float and int8 results of every site for
    `--quantize-report`. The taps are named `calibration_tap_<n>`.

    ```mlir
    func.func @main(%x: tensor<1x2x8xf32>) -> tensor<1x2x4xf32> {
      %y = tosa.matmul %x, %w, %z, %z : ... -> tensor<1x2x4xf32>
      return %y : tensor<1x2x4xf32>
    }
    // becomes
    func.func @main(%x: tensor<1x2x8xf32>) -> (tensor<1x2x4xf32>,
        tensor<1x2x8xf32> {tessel.name = "calibration_tap_0"}) {
      ...
      return %y, %x : tensor<1x2x4xf32>, tensor<1x2x8xf32>
    }
    ```
  }];
  let options = [
    Option<"outputs", "outputs", "bool", /*default=*/"false",
           "Also return each site's result">,
  ];
}

def TesselQuantizeStatic : Pass<"tessel-quantize-static", "::mlir::func::FuncOp"> {
  let summary = "Quantize calibrated matmuls and convolutions to int8";
  let description = [{
    Static (post-training) int8 quantization, the last step: each
    quantization site that carries calibrated ranges
    (`tessel.calibrated_ranges = array<f64: lo, hi, ...>`, one pair per
    activation operand, written by the compiler driver from the
    calibration run) gets

    - its activations quantized per tensor to uint8 over their range
      (widened to hold 0): `quant.qcast` then `quant.dcast`;
    - its constant weights quantized here, symmetric int8 per output
      channel (zero point 0, values in [-127, 127]): an i8 constant,
      `quant.scast`, `quant.dcast`.

    That is the form of a QDQ model, which `tessel-fold-qdq` runs on
    integers. Sites are f32 `tosa.matmul`s (constant weights, or two
    run-time operands as in attention) and single-group `tessel.conv2d` /
    `tosa.conv2d`s with constant weights; their results stay float (the
    next site quantizes what it reads), so no rounding is added that no
    integer product needs. Ops without ranges (excluded by
    `--quantize-exclude`, or with no int8 form) stay float.

    ```mlir
    %y = tosa.matmul %x, %w, %z, %z {tessel.calibrated_ranges = array<f64: -1.0, 3.0>}
    // becomes
    %q = quant.qcast %x : tensor<1x2x8xf32> to tensor<1x2x8x!quant.uniform<u8:f32, 0.0156..:64>>
    %a = quant.dcast %q : ... to tensor<1x2x8xf32>
    %c = "tosa.const"() : () -> tensor<1x8x4xi8>
    %s = quant.scast %c : tensor<1x8x4xi8> to tensor<1x8x4x!quant.uniform<i8<-127:127>:f32:2, {...}>>
    %b = quant.dcast %s : ... to tensor<1x8x4xf32>
    %y = tosa.matmul %a, %b, %z, %z
    ```
  }];
  let dependentDialects = ["::mlir::quant::QuantDialect",
                           "::mlir::tosa::TosaDialect"];
}

#endif // TESSEL_QUANTIZATION_PASSES
