//===- TesselOps.td - Tessel graph ops --------------------*- tablegen -*-===//
#ifndef TESSEL_OPS_TD
#define TESSEL_OPS_TD

include "tessel/Dialect/Tessel/IR/TesselDialect.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

def Tessel_FloatTensor : RankedTensorOf<[F16, BF16, F32, F64]>;
def Tessel_Float1DTensor : 1DTensorOf<[F16, BF16, F32, F64]>;
// TOSA convolutions accumulate in at most f32, so conv2d takes no f64.
def Tessel_ConvFloat4DTensor : 4DTensorOf<[F16, BF16, F32]>;
def Tessel_ConvFloat1DTensor : 1DTensorOf<[F16, BF16, F32]>;

def Tessel_GeluApproximation : I32EnumAttr<"GeluApproximation",
    "how GELU is evaluated", [
      I32EnumAttrCase<"None", 0, "none">,
      I32EnumAttrCase<"Tanh", 1, "tanh">]> {
  let cppNamespace = "::mlir::tessel";
  let genSpecializedAttr = 0;
}
def Tessel_GeluApproximationAttr
    : EnumAttr<Tessel_Dialect, Tessel_GeluApproximation, "gelu_approximation"> {
  let assemblyFormat = "`<` $value `>`";
}

def Tessel_ScatterReduction : I32EnumAttr<"ScatterReduction",
    "how a scatter combines an update with the element it lands on", [
      I32EnumAttrCase<"None", 0, "none">,
      I32EnumAttrCase<"Add", 1, "add">,
      I32EnumAttrCase<"Mul", 2, "mul">,
      I32EnumAttrCase<"Max", 3, "max">,
      I32EnumAttrCase<"Min", 4, "min">]> {
  let cppNamespace = "::mlir::tessel";
  let genSpecializedAttr = 0;
}
def Tessel_ScatterReductionAttr
    : EnumAttr<Tessel_Dialect, Tessel_ScatterReduction, "scatter_reduction"> {
  let assemblyFormat = "`<` $value `>`";
}

//===----------------------------------------------------------------------===//
// Softmax / LogSoftmax
//===----------------------------------------------------------------------===//

class Tessel_SoftmaxLikeOp<string mnemonic, string what>
    : Tessel_Op<mnemonic, [Pure, SameOperandsAndResultType]> {
  let summary = what # " along one axis";
  let arguments = (ins Tessel_FloatTensor:$input, I64Attr:$axis);
  let results = (outs Tessel_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($output)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The axis normalized into [0, rank).
    int64_t getNormalizedAxis() {
      int64_t rank = getInput().getType().getRank();
      return normalizeAxis(getAxis(), rank);
    }
  }];
}

def Tessel_SoftmaxOp : Tessel_SoftmaxLikeOp<"softmax", "Softmax"> {
  let description = [{
    `exp(x - max(x)) / sum(exp(x - max(x)))` along `axis` (negative counts
    from the back), numerically stable. Example:

    ```mlir
    %y = tessel.softmax %x {axis = -1 : i64} : tensor<2x8xf32>
    ```
  }];
}

def Tessel_LogSoftmaxOp : Tessel_SoftmaxLikeOp<"log_softmax", "LogSoftmax"> {
  let description = [{
    `x - max(x) - log(sum(exp(x - max(x))))` along `axis`.
  }];
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

def Tessel_LayerNormOp : Tessel_Op<"layer_norm",
    [Pure, AttrSizedOperandSegments, AllTypesMatch<["input", "output"]>]> {
  let summary = "Layer normalization over the trailing dimensions";
  let description = [{
    Normalizes `input` over dimensions `[axis, rank)`:
    `(x - mean) / sqrt(var + epsilon) * scale + bias` with the biased
    variance, like ONNX LayerNormalization and `torch.nn.LayerNorm`. `scale`
    and `bias`, when present, have the shape of the normalized dimensions.

    ```mlir
    %y = tessel.layer_norm %x scale %g bias %b {axis = -1 : i64, epsilon = 1.0e-5 : f32}
        : tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<4x16xf32>
    ```
  }];
  let arguments = (ins Tessel_FloatTensor:$input,
                       Optional<Tessel_FloatTensor>:$scale,
                       Optional<Tessel_FloatTensor>:$bias,
                       I64Attr:$axis,
                       DefaultValuedAttr<F32Attr, "1.0e-5">:$epsilon);
  let results = (outs Tessel_FloatTensor:$output);
  let assemblyFormat = [{
    $input (`scale` $scale^)? (`bias` $bias^)? attr-dict `:` type($input)
    (`,` type($scale)^)? (`,` type($bias)^)? `->` type($output)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getNormalizedAxis() {
      int64_t rank = getInput().getType().getRank();
      return normalizeAxis(getAxis(), rank);
    }
  }];
}

def Tessel_BatchNormOp : Tessel_Op<"batch_norm",
    [Pure, AllTypesMatch<["input", "output"]>,
     AllTypesMatch<["scale", "bias", "mean", "variance"]>]> {
  let summary = "Batch normalization in inference mode";
  let description = [{
    `(x - mean[c]) / sqrt(variance[c] + epsilon) * scale[c] + bias[c]` where
    `c` indexes `channel_axis` (3 for NHWC, Tessel's layout; 1 for NCHW).

    ```mlir
    %y = tessel.batch_norm %x, %s, %b, %m, %v {channel_axis = 3 : i64, epsilon = 1.0e-5 : f32}
        : tensor<1x8x8x4xf32>, tensor<4xf32> -> tensor<1x8x8x4xf32>
    ```
  }];
  let arguments = (ins Tessel_FloatTensor:$input,
                       Tessel_Float1DTensor:$scale,
                       Tessel_Float1DTensor:$bias,
                       Tessel_Float1DTensor:$mean,
                       Tessel_Float1DTensor:$variance,
                       I64Attr:$channel_axis,
                       DefaultValuedAttr<F32Attr, "1.0e-5">:$epsilon);
  let results = (outs Tessel_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $scale `,` $bias `,` $mean `,` $variance attr-dict `:`
    type($input) `,` type($scale) `->` type($output)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Activations
//===----------------------------------------------------------------------===//

def Tessel_GeluOp : Tessel_Op<"gelu", [Pure, SameOperandsAndResultType]> {
  let summary = "Gaussian error linear unit";
  let description = [{
    `approximate = none`: `0.5 * x * (1 + erf(x / sqrt(2)))`;
    `approximate = tanh`: `0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))`,
    as ONNX Gelu-20 and `torch.nn.GELU(approximate=...)`.

    ```mlir
    %y = tessel.gelu %x {approximate = #tessel.gelu_approximation<tanh>} : tensor<4xf32>
    ```
  }];
  let arguments = (ins Tessel_FloatTensor:$input,
      DefaultValuedAttr<Tessel_GeluApproximationAttr,
                        "GeluApproximation::None">:$approximate);
  let results = (outs Tessel_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($output)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Run-time index checks
//===----------------------------------------------------------------------===//

def Tessel_CheckIndicesOp : Tessel_Op<"check_indices",
    [SameOperandsAndResultType]> {
  let summary = "Indices that must lie in [lower, upper), checked at run time";
  let description = [{
    The result is `indices` when every element lies in `[lower, upper)`;
    otherwise the entry call fails with `TESSEL_ENTRY_INDEX_OUT_OF_RANGE`
    and the result is zeros (in range: `lower <= 0 < upper`), so that the
    gather or scatter reading it stays in bounds. Importers put it where
    their format defines an out-of-range index as an error (ONNX Gather,
    GatherElements, GatherND, ScatterElements, ScatterND: `[-dim, dim)`);
    `tessel-lower-index-checks` expands it before the TOSA lowering. It has
    an effect (failing the call), so it is neither folded away nor hoisted
    out of a branch that does not run.

    ```mlir
    %i = tessel.check_indices %idx {lower = -5 : i64, upper = 5 : i64} : tensor<3xi64>
    ```
  }];
  let arguments = (ins RankedTensorOf<[AnySignlessInteger]>:$indices,
                       I64Attr:$lower, I64Attr:$upper);
  let results = (outs RankedTensorOf<[AnySignlessInteger]>:$result);
  let assemblyFormat = "$indices attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Tessel_RequireOp : Tessel_Op<"require",
    [AllTypesMatch<["value", "fallback", "result"]>]> {
  let summary = "A value that needs a run-time condition, else the call fails";
  let description = [{
    The result is `value` where the scalar `condition` holds; otherwise the
    entry call fails with `status` (a `TESSEL_ENTRY_*` code of
    `tessel_abi.h`: -3 a shape mismatch, -4 an index out of range, -5 a
    division by zero) and the result is `fallback`, which keeps the code
    after it in bounds. Importers put it where their format makes data an
    error that only the run can see: ONNX Reshape's `shape` input holding
    another element count than its data, Expand's shape that does not
    broadcast. `tessel-lower-index-checks` expands it before the TOSA
    lowering (on a target whose host cannot read device values, to a plain
    select). It has an effect (failing the call), so it is not folded
    away, except where `condition` is a constant true: then it is `value`.

    ```mlir
    %d = tessel.require %ok, %dims else %safe {status = -3 : i32}
        : tensor<i1>, tensor<2xindex>
    ```
  }];
  let arguments = (ins 0DTensorOf<[I1]>:$condition, AnyRankedTensor:$value,
                       AnyRankedTensor:$fallback, I32Attr:$status);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat =
      "$condition `,` $value `else` $fallback attr-dict `:` type($condition) "
      "`,` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Grouped 2-D convolution
//===----------------------------------------------------------------------===//

def Tessel_Conv2DOp : Tessel_Op<"conv2d", [Pure]> {
  let summary = "2-D convolution with groups (NHWC input, OHWI weights)";
  let description = [{
    TOSA's `conv2d` has no groups and `depthwise_conv2d` only covers
    `groups == C`. This op covers every group count: `input` is
    `N x H x W x C`, `weight` is `F x KH x KW x (C / groups)`, `bias` is `F`
    and `F` is a multiple of `groups`. `pad` is `[top, bottom, left, right]`.
    Output size per spatial dim:
    `(in + pad_lo + pad_hi - dilation * (k - 1) - 1) / stride + 1`.

    ```mlir
    %y = tessel.conv2d %x, %w, %b {groups = 2 : i64, pad = array<i64: 1, 1, 1, 1>,
        stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
        : (tensor<1x8x8x4xf32>, tensor<6x3x3x2xf32>, tensor<6xf32>) -> tensor<1x8x8x6xf32>
    ```
  }];
  let arguments = (ins Tessel_ConvFloat4DTensor:$input,
                       Tessel_ConvFloat4DTensor:$weight,
                       Tessel_ConvFloat1DTensor:$bias,
                       DenseI64ArrayAttr:$pad,
                       DenseI64ArrayAttr:$stride,
                       DenseI64ArrayAttr:$dilation,
                       I64Attr:$groups);
  let results = (outs Tessel_ConvFloat4DTensor:$output);
  let assemblyFormat = [{
    $input `,` $weight `,` $bias attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

def Tessel_ReduceMeanOp : Tessel_Op<"reduce_mean", [Pure]> {
  let summary = "Arithmetic mean along one axis, keeping it with size 1";
  let description = [{
    Same convention as `tosa.reduce_sum`: the reduced axis stays with size 1.

    ```mlir
    %m = tessel.reduce_mean %x {axis = 1 : i64} : (tensor<2x8xf32>) -> tensor<2x1xf32>
    ```
  }];
  let arguments = (ins Tessel_FloatTensor:$input, I64Attr:$axis);
  let results = (outs Tessel_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Selection
//===----------------------------------------------------------------------===//

def Tessel_TopKOp : Tessel_Op<"top_k", [Pure]> {
  let summary = "The k largest (or smallest) elements along one axis, sorted";
  let description = [{
    `values` holds the `k` largest elements of `input` along `axis` (the
    smallest with `largest = false`), in that order; `indices` their
    positions along the axis. Ties go to the lower index, as in ONNX TopK and
    `torch.topk`. The op stays whole through the graph passes so that
    routing (`tessel-raise-moe`) can see it; `tessel-decompose-graph-ops`
    expands it into k rounds of argmax.

    ```mlir
    %v, %i = tessel.top_k %s {axis = 1 : i64, k = 2 : i64}
        : tensor<6x4xf32> -> tensor<6x2xf32>, tensor<6x2xi64>
    ```
  }];
  let arguments = (ins RankedTensorOf<[AnyFloat, AnySignlessInteger,
                                       AnyUnsignedInteger]>:$input,
                       I64Attr:$k, I64Attr:$axis,
                       DefaultValuedAttr<BoolAttr, "true">:$largest);
  let results = (outs AnyRankedTensor:$values,
                      RankedTensorOf<[I64]>:$indices);
  let assemblyFormat = [{
    $input attr-dict `:` type($input) `->` type($values) `,` type($indices)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getNormalizedAxis() {
      return normalizeAxis(getAxis(), getInput().getType().getRank());
    }
  }];
}

//===----------------------------------------------------------------------===//
// NonZero
//===----------------------------------------------------------------------===//

def Tessel_NonZeroOp : Tessel_Op<"nonzero", [Pure]> {
  let summary = "The coordinates of the nonzero elements, in row-major order";
  let description = [{
    Column `j` of the result holds the coordinates (one per dimension of
    `input`) of its `j`-th nonzero element in row-major order: ONNX
    NonZero, numpy's `nonzero` stacked. Their count is known only at run
    time. The op stays whole through the graph passes so that they can see
    which elements a data-dependent gather or scatter selects (a mixture of
    experts routed with `torch.where`); `tessel-decompose-graph-ops`
    expands it into a counting loop and a filling loop.

    ```mlir
    %c = tessel.nonzero %mask : tensor<6x2xi1> -> tensor<2x?xi64>
    ```
  }];
  let arguments = (ins RankedTensorOf<[AnyFloat, AnyInteger]>:$input);
  let results = (outs RankedTensorOf<[I64]>:$coordinates);
  let assemblyFormat = [{
    $input attr-dict `:` type($input) `->` type($coordinates)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Gather, ScatterElements (positions known at run time)
//===----------------------------------------------------------------------===//

def Tessel_GatherOp : Tessel_Op<"gather", [Pure]> {
  let summary = "Slices of a tensor along one axis at positions read at run "
                "time";
  let description = [{
    ONNX Gather: `result[i..., j..., l...] = input[i..., indices[j...],
    l...]`, the `j...` indexing `indices` in place of `input`'s dimension
    `axis`. A negative index counts from the end. An index outside
    `[-dim, dim)` fails the call (`TESSEL_ENTRY_INDEX_OUT_OF_RANGE`; the
    result then holds element 0 of the axis there).

    The importers use it where the indices' count is known only at run time
    (positions from `tessel.nonzero`: `torch.index_select` of the tokens
    routed to an expert). It stays whole through the graph passes so that
    they can see which rows a data-dependent path reads;
    `tessel-decompose-graph-ops` expands it into the range check and a
    `tensor.generate`.

    ```mlir
    %rows = tessel.gather %x, %tok {axis = 0 : i64}
        : tensor<6x8xf32>, tensor<?xi64> -> tensor<?x8xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input,
                       RankedTensorOf<[AnySignlessInteger]>:$indices,
                       I64Attr:$axis);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `,` $indices attr-dict `:` type($input) `,` type($indices) `->`
    type($result)
  }];
  let hasVerifier = 1;
}

def Tessel_ScatterElementsOp : Tessel_Op<"scatter_elements", [Pure]> {
  let summary = "A tensor with updates written at positions read at run time";
  let description = [{
    ONNX ScatterElements: the result is `input` with, for every position
    `p` of `indices` (and of `updates`, which has its sizes) in row-major
    order, `result[p with p[axis] = indices[p]] = updates[p]`, or combined
    with the element there by `reduction` (add, mul, max, min; repeated
    positions combine in that order). A negative index counts from the end.
    An index outside `[-dim, dim)` leaves the element as it is and fails
    the call (`TESSEL_ENTRY_INDEX_OUT_OF_RANGE`), as do `indices` and
    `updates` of different sizes (no element is written then).

    The importers use it where the sizes are known only at run time (the
    `index_add` of an expert's results back to its tokens). It stays whole
    through the graph passes; `tessel-decompose-graph-ops` expands it into
    one loop over the updates.

    ```mlir
    %y = tessel.scatter_elements %zeros, %idx, %upd
        {axis = 0 : i64, reduction = #tessel.scatter_reduction<add>}
        : tensor<6x8xf32>, tensor<?x8xi64>, tensor<?x8xf32> -> tensor<6x8xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input,
                       RankedTensorOf<[AnySignlessInteger]>:$indices,
                       AnyRankedTensor:$updates, I64Attr:$axis,
                       DefaultValuedAttr<Tessel_ScatterReductionAttr,
                                         "ScatterReduction::None">:$reduction);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `,` $indices `,` $updates attr-dict `:` type($input) `,`
    type($indices) `,` type($updates) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Random values
//===----------------------------------------------------------------------===//

class Tessel_RandomOp<string mnemonic, string distribution>
    : Tessel_Op<mnemonic, [DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "A tensor of independent " # distribution # " samples";
  let results = (outs Tessel_FloatTensor:$result);
  let assemblyFormat = [{
    (`(` $dynamicSizes^ `)`)? attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

def Tessel_RandomUniformOp : Tessel_RandomOp<"random_uniform", "uniform"> {
  let description = [{
    Each element is drawn from the uniform distribution on `[low, high)`
    (ONNX RandomUniform, RandomUniformLike; Bernoulli and training-mode
    Dropout compare such draws). `dynamicSizes` give the result's dynamic
    dimensions, in order.

    Element `i` (row-major) is a function of the key and `i` alone: the
    SplitMix64 output for `key + (i + 1) * 0x9E3779B97F4A7C15`, its top 24
    bits (53 for f64) scaled to `[0, 1)`. With `seed`, the key is SplitMix64
    of the seed, so every call draws the same values (and so does every
    op with that seed and type). Without, the key is SplitMix64 of a
    per-artifact counter that each execution of each such op advances
    atomically: calls and ops draw different values. This is not the
    generator of numpy, PyTorch or ONNX Runtime; their values are not
    reproduced (ONNX does not define them). `tessel-lower-random` expands
    the op.

    ```mlir
    %u = tessel.random_uniform {low = 0.0, high = 1.0, seed = 5 : i64}
        : tensor<2x3xf32>
    %v = tessel.random_uniform(%n) {low = -1.0, high = 1.0} : tensor<?x8xf16>
    ```
  }];
  let arguments = (ins Variadic<Index>:$dynamicSizes,
                       DefaultValuedAttr<F64Attr, "0.0">:$low,
                       DefaultValuedAttr<F64Attr, "1.0">:$high,
                       OptionalAttr<I64Attr>:$seed);
}

def Tessel_RandomNormalOp : Tessel_RandomOp<"random_normal", "normal"> {
  let description = [{
    Each element is drawn from the normal distribution with mean `mean` and
    standard deviation `scale` (ONNX RandomNormal, RandomNormalLike): the
    Box-Muller transform of two uniform draws, made as `tessel.random_uniform`
    makes its draws from stream positions `2i` and `2i + 1`. `seed` as
    there.

    ```mlir
    %n = tessel.random_normal {mean = 0.0, scale = 1.0, seed = 5 : i64}
        : tensor<4x4xf32>
    ```
  }];
  let arguments = (ins Variadic<Index>:$dynamicSizes,
                       DefaultValuedAttr<F64Attr, "0.0">:$mean,
                       DefaultValuedAttr<F64Attr, "1.0">:$scale,
                       OptionalAttr<I64Attr>:$seed);
}

include "tessel/Dialect/Tessel/IR/TesselKernelOps.td"
include "tessel/Dialect/Tessel/IR/TesselImportOps.td"
include "tessel/Dialect/Tessel/IR/TesselCollectiveOps.td"

#endif // TESSEL_OPS_TD
