//===- TesselKernelOps.td - ops that become kernel-library calls -*- tablegen -*-===//
//
// Codegen-level ops, produced by `tessel-convert-to-kernels` from linalg
// named ops and lowered by `tessel-lower-kernels-to-calls` into calls of
// the kernel library linked into every artifact
// (include/tessel/Kernels/Kernels.td). They work on tensors (so that
// weight packing folds into constants and bufferization plans their
// buffers) and on memrefs (after bufferization), like linalg ops.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_KERNEL_OPS_TD
#define TESSEL_KERNEL_OPS_TD

include "tessel/Dialect/Tessel/IR/TesselDialect.td"
include "mlir/Interfaces/DestinationStyleOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Tessel_PackedConv2DOp : Tessel_Op<"packed_conv2d",
    [DestinationStyleOpInterface,
     DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "NHWC convolution with a panel-packed filter and an epilogue";
  let description = [{
    `init` + (optionally) bias + convolution, then an optional clamp:

    ```
    acc[n,oh,ow,f] = sum_{kh,kw,c} input[n, oh*sh + kh*dh - pad_top,
                                         ow*sw + kw*dw - pad_left, c]
                                   * W[f, kh, kw, c]
                     (out-of-range input positions count as 0)
    out = clamp((accumulate ? init : 0) + acc + bias[f], clamp_min, clamp_max)
    ```

    `input` is `N x H x W x C`; the optional `pad` (`[top, bottom, left,
    right]`, default none) is zero padding done by the kernel, so no padded
    copy of the input is made. The filter is packed in
    column panels of `NR` output channels:
    `packed_filter[p, (kh*KW + kw)*C + c, j] = W[p*NR + j, kh, kw, c]`,
    zero beyond `F` (what `linalg.pack` with `inner_tiles = [NR]` on the
    `F` dimension of the `F x (KH*KW*C)` filter produces). A rank-4
    `packed_filter` has one packed filter per batch image (how
    `batch_matmul` uses this op). A matmul is the 1x1 case over a
    `1 x M` image.

    With `winograd`, the convolution (3x3, stride 1) runs as Winograd's
    F(2x2, 3x3) or F(4x4, 3x3), told apart by `packed_filter`'s first
    dimension (16 or 36 transform positions), which holds the transformed
    filter `U = G g G^T`, one packed `C x F` matrix per transform position:
    `packed_filter[a, p, c, j] = U[a, c, p*NR + j]` (`16 x P x C x NR` or
    `36 x P x C x NR`) with `U[L*i + j, c, f] = sum_{kh,kw} G[i, kh] *
    W[f, kh, kw, c] * G[j, kw]`, for F(2x2, 3x3) `L = 4` and `G = [[1, 0,
    0], [1/2, 1/2, 1/2], [1/2, -1/2, 1/2], [0, 0, 1]]`, for F(4x4, 3x3)
    `L = 6` and `G = [[1/4, 0, 0], [-1/6, -1/6, -1/6], [-1/6, 1/6, -1/6],
    [1/24, 1/12, 1/6], [1/24, -1/12, 1/6], [0, 0, 1]]`
    (docs/pipeline/kernels.md). The result is the same convolution, up to
    rounding.

    A `bf16` packed filter (what `tessel-compute-bf16` leads to) makes the
    products bf16: `input` is rounded to bf16 (nearest even) and each
    product of two bf16 values, exact in f32, is summed in f32. The filter
    then holds pairs of consecutive reduction elements per output channel,
    `packed_filter[p, k/2, 2*j + k%2] = W[p*NR + j, kh, kw, c]` with `k =
    (kh*KW + kw)*C + c`, zero for `k >= KH*KW*C`: `P x ceil(KH*KW*C/2) x
    2*NR` (rank 4 with one per batch image), what `linalg.pack` with
    `inner_tiles = [NR, 2]` on the `F x (KH*KW*C)` filter produces with its
    two tile dimensions collapsed, and what AVX512_BF16's `vdpbf16ps`
    multiplies. Not with `winograd`.

    ```mlir
    %y = tessel.packed_conv2d ins(%x, %wp : tensor<1x9x9x8xf32>, tensor<1x72x64xf32>)
        bias(%b : tensor<16xf32>) outs(%init : tensor<1x7x7x16xf32>)
        {kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>,
         dilations = array<i64: 1, 1>, clamp_min = 0.0 : f32}
        -> tensor<1x7x7x16xf32>
    ```
  }];
  let arguments = (ins
      AnyShaped:$input,
      AnyShaped:$packed_filter,
      Optional<AnyShaped>:$bias,
      AnyShaped:$init,
      DenseI64ArrayAttr:$kernel_size,
      DenseI64ArrayAttr:$strides,
      DenseI64ArrayAttr:$dilations,
      OptionalAttr<DenseI64ArrayAttr>:$pad,
      UnitAttr:$accumulate,
      OptionalAttr<F32Attr>:$clamp_min,
      OptionalAttr<F32Attr>:$clamp_max,
      UnitAttr:$winograd);
  let results = (outs Variadic<AnyRankedTensor>:$result);
  let assemblyFormat = [{
    `ins` `(` $input `,` $packed_filter `:` type($input) `,` type($packed_filter) `)`
    (`bias` `(` $bias^ `:` type($bias) `)`)?
    `outs` `(` $init `:` type($init) `)`
    attr-dict (`->` type($result)^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    MutableOperandRange getDpsInitsMutable() { return getInitMutable(); }
    /// [top, bottom, left, right]; zeros when there is no `pad`.
    SmallVector<int64_t> getPadOrZero() {
      if (std::optional<ArrayRef<int64_t>> p = getPad())
        return SmallVector<int64_t>(*p);
      return {0, 0, 0, 0};
    }
    /// Transform positions of the `winograd` form (the packed filter's first
    /// dimension: 16 for F(2x2, 3x3), 36 for F(4x4, 3x3)).
    int64_t getWinogradPositions() {
      return cast<ShapedType>(getPackedFilter().getType()).getDimSize(0);
    }
    /// Verifies the `winograd` form (C: input channels, F: outputs).
    LogicalResult verifyWinograd(int64_t c, int64_t f);
    /// Whether the products are bf16 (a bf16 packed filter).
    bool isBF16() {
      return cast<ShapedType>(getPackedFilter().getType())
          .getElementType().isBF16();
    }
    /// NR: output channels per packed panel.
    int64_t getPanelWidth() {
      auto t = cast<ShapedType>(getPackedFilter().getType());
      int64_t last = t.getDimSize(t.getRank() - 1);
      return isBF16() ? last / 2 : last;
    }
  }];
}

def Tessel_DepthwiseConv2DOp : Tessel_Op<"depthwise_conv2d",
    [DestinationStyleOpInterface,
     DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "NHWC depthwise convolution with implicit zero padding and an epilogue";
  let description = [{
    Channel multiplier 1, zero padding done by the kernel (no padded copy of
    the input is made):

    ```
    acc[n,oh,ow,c] = sum_{kh,kw} in[n, oh*sh + kh*dh - pad_top,
                                    ow*sw + kw*dw - pad_left, c] * filter[kh,kw,c]
                     (out-of-range input positions count as 0)
    out = clamp((accumulate ? init : 0) + acc + bias[c], clamp_min, clamp_max)
    out = silu ? out * sigmoid(out) : out
    ```

    `pad` is `[top, bottom, left, right]`; `filter` is `KH x KW x C`.
    `silu` applies SiLU (x * sigmoid(x), EfficientNet's activation) in the
    kernel, so the activation costs no pass over the output.

    ```mlir
    %y = tessel.depthwise_conv2d ins(%x, %w : tensor<1x112x112x32xf32>, tensor<3x3x32xf32>)
        bias(%b : tensor<32xf32>) outs(%init : tensor<1x112x112x32xf32>)
        {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>,
         pad = array<i64: 1, 1, 1, 1>, clamp_min = 0.0 : f32, clamp_max = 6.0 : f32}
        -> tensor<1x112x112x32xf32>
    ```
  }];
  let arguments = (ins
      AnyShaped:$input,
      AnyShaped:$filter,
      Optional<AnyShaped>:$bias,
      AnyShaped:$init,
      DenseI64ArrayAttr:$strides,
      DenseI64ArrayAttr:$dilations,
      DenseI64ArrayAttr:$pad,
      UnitAttr:$accumulate,
      OptionalAttr<F32Attr>:$clamp_min,
      OptionalAttr<F32Attr>:$clamp_max,
      UnitAttr:$silu);
  let results = (outs Variadic<AnyRankedTensor>:$result);
  let assemblyFormat = [{
    `ins` `(` $input `,` $filter `:` type($input) `,` type($filter) `)`
    (`bias` `(` $bias^ `:` type($bias) `)`)?
    `outs` `(` $init `:` type($init) `)`
    attr-dict (`->` type($result)^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    MutableOperandRange getDpsInitsMutable() { return getInitMutable(); }
  }];
}

def Tessel_AttentionOp : Tessel_Op<"attention",
    [DestinationStyleOpInterface,
     DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "fused scaled-dot-product attention (online softmax)";
  let description = [{
    Batched attention in one kernel, without materializing the score matrix:

    ```
    s[b,i,j] = scale * sum_d query[b,i,d] * key[b,j,d]  (+ mask[b,i,j])
    out[b,i,e] = sum_j softmax_j(s[b,i,:])[j] * value[b,j,e]
    ```

    `query` is `B x M x D`, `key` `B x N x D` (not transposed), `value`
    `B x N x Dv`, `init` `B x M x Dv`. The optional additive `mask` is rank
    3 and broadcasts: each of its dims is 1 or the matching dim of
    `B x M x N` (causal masks are `1 x M x N` with `-inf` above the
    diagonal). The kernel walks the keys in blocks and keeps a running
    maximum and sum per query row (the "online softmax" of
    FlashAttention), so the `B x M x N` scores never exist in memory. A
    row whose scores are all `-inf` gives NaN, as `softmax` does.

    `tessel-fuse-attention` raises `matmul -> [mul] -> [add mask] ->
    softmax -> matmul` chains to this op; `tessel-kernels-to-calls` lowers
    it to `tessel_kernel_attention_f32`.

    ```mlir
    %o = tessel.attention ins(%q, %k, %v : tensor<4x128x64xf32>,
                              tensor<4x128x64xf32>, tensor<4x128x64xf32>)
        outs(%init : tensor<4x128x64xf32>) {scale = 0.125 : f32}
        -> tensor<4x128x64xf32>
    ```
  }];
  let arguments = (ins
      AnyShaped:$query,
      AnyShaped:$key,
      AnyShaped:$value,
      Optional<AnyShaped>:$mask,
      AnyShaped:$init,
      DefaultValuedAttr<F32Attr, "1.0f">:$scale);
  let results = (outs Variadic<AnyRankedTensor>:$result);
  let assemblyFormat = [{
    `ins` `(` $query `,` $key `,` $value `:` type($query) `,` type($key) `,` type($value) `)`
    (`mask` `(` $mask^ `:` type($mask) `)`)?
    `outs` `(` $init `:` type($init) `)`
    attr-dict (`->` type($result)^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    MutableOperandRange getDpsInitsMutable() { return getInitMutable(); }
    /// The kernel overwrites init; it never reads it.
    bool getAccumulate() { return false; }
  }];
}

// The convolution form of the int8 matmul ops: `input` is an image read
// through a convolution window (the matmul of its im2col matrix, whose
// rows the kernel reads in place). Declared once for both ops.
defvar Tessel_ConvolutionWindowArgs = (ins
    OptionalAttr<DenseI64ArrayAttr>:$kernel_size,
    OptionalAttr<DenseI64ArrayAttr>:$strides,
    OptionalAttr<DenseI64ArrayAttr>:$dilations);

def Tessel_PackedMatmulI8Op : Tessel_Op<"packed_matmul_i8",
    [DestinationStyleOpInterface, AttrSizedOperandSegments,
     DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "batched int8 matmul with VNNI-packed weights, exact int32 result";
  let description = [{
    ```
    acc[b, m, n] = sum_k (input[b, m, k] - a_zp) * (B[b, k, n] - b_zp)
    out = (accumulate ? init : 0) + acc
    ```

    `input` is `Batch x M x K` 8-bit (signed with `a_signed`, else
    unsigned), `init` `Batch x M x N` i32. `packed_b` is `B` (signed 8-bit)
    packed in panels of `NR` columns and groups of 4 consecutive `k`:
    `packed_b[p, g, j, t] = B[g*4 + t, p*NR + j]`, zero beyond `K` and
    `N` (`P x G x NR x 4`, one `B` for every batch entry; rank 5 with a
    leading batch dim: one per entry). The optional `column_sums` holds
    `sum_k B[k, n]` (`N`, or `Batch x N`), which the zero-point correction
    needs; without it the kernel computes them. This is what
    `linalg.quantized_batch_matmul` (and an i8 x i8 -> i32
    `linalg.batch_matmul`) with constant weights becomes;
    `tessel-kernels-to-calls` calls `tessel_kernel_matmul_u8s8_i32`.

    With `kernel_size`, `strides` and `dilations` (two values each), the op
    is a convolution: `input` is an `N x H x W x C` image, `init`
    `N x OH x OW x F`, and `input[b, m, k]` above stands for the im2col
    matrix's element

    ```
    A[n, oh*OW + ow, (kh*KW + kw)*C + c] = input[n, oh*sh + kh*dh, ow*sw + kw*dw, c]
    ```

    (`K = KH*KW*C`; every position read lies inside `input`: pad it
    first). The kernel (`tessel_kernel_conv2d_u8s8_i32`) reads the rows
    where they lie, so no im2col copy is made. `packed_b` is then rank 4
    (one filter for every image). This is what an int8
    `linalg.conv_2d_nhwc_fhwc[_q]` with a constant filter becomes.

    With `sparse(%block_ptr, %block_k)` and `block_size`, B is stored as
    `tessel.packed_matmul_i8_requant` stores sparse weights (quad blocks,
    `tessel-sparsify-int8-weights`; that op's description defines the
    format), and `tessel_kernel_sparse_{matmul,conv2d}_u8s8_i32` compute
    the same int32 result: what a QDQ model's MatMul keeps when the float
    chain after it (a bias added after the dequantization, say) is not
    the requantizing epilogue's.

    ```mlir
    %y = tessel.packed_matmul_i8 ins(%x, %wp : tensor<1x128x768xi8>, tensor<12x192x64x4xi8>)
        column_sums(%cs : tensor<768xi32>) outs(%init : tensor<1x128x768xi32>)
        {a_zp = 2 : i32, b_zp = 0 : i32, a_signed} -> tensor<1x128x768xi32>
    ```
  }];
  let arguments = !con((ins
      AnyShaped:$input,
      AnyShaped:$packed_b,
      Optional<AnyShaped>:$column_sums,
      AnyShaped:$init,
      I32Attr:$a_zp,
      I32Attr:$b_zp,
      UnitAttr:$a_signed,
      UnitAttr:$accumulate), Tessel_ConvolutionWindowArgs, (ins
      Optional<AnyShaped>:$block_ptr,
      Optional<AnyShaped>:$block_k,
      OptionalAttr<I64Attr>:$block_size));
  let results = (outs Variadic<AnyRankedTensor>:$result);
  let assemblyFormat = [{
    `ins` `(` $input `,` $packed_b `:` type($input) `,` type($packed_b) `)`
    (`sparse` `(` $block_ptr^ `,` $block_k `:` type($block_ptr) `,`
     type($block_k) `)`)?
    (`column_sums` `(` $column_sums^ `:` type($column_sums) `)`)?
    `outs` `(` $init `:` type($init) `)`
    attr-dict (`->` type($result)^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    MutableOperandRange getDpsInitsMutable() { return getInitMutable(); }
    /// The convolution form (kernel_size and the rest present).
    bool isConvolution() { return getKernelSize().has_value(); }
    /// B in quad blocks (block_ptr, block_k, block_size), not packed dense.
    bool isSparse() { return getBlockPtr() != nullptr; }
  }];
}

// The quantizing end of the int8 kernels' epilogue (the steps after the
// clamp in tessel.packed_matmul_i8_requant's description), declared once
// for every op that has it.
defvar Tessel_RequantOutputArgs = (ins
    OptionalAttr<F32Attr>:$out_scale,
    DefaultValuedAttr<F32Attr, "0.0f">:$out_zp,
    DefaultValuedAttr<F32Attr, "0.0f">:$qmin,
    DefaultValuedAttr<F32Attr, "255.0f">:$qmax,
    OptionalAttr<F32Attr>:$dequant_scale,
    DefaultValuedAttr<F32Attr, "0.0f">:$dequant_zp,
    UnitAttr:$dequant_signed,
    DefaultValuedAttr<F32Attr, "-INFINITY">:$dequant_min,
    DefaultValuedAttr<F32Attr, "INFINITY">:$dequant_max);

def Tessel_PackedMatmulI8RequantOp : Tessel_Op<"packed_matmul_i8_requant",
    [DestinationStyleOpInterface, AttrSizedOperandSegments,
     DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "int8 matmul with a fused dequantize / requantize epilogue";
  let description = [{
    The product of `tessel.packed_matmul_i8`, finished per element in
    registers instead of a pass over an int32 buffer:

    ```
    acc[b, m, n] = sum_k (input[b, m, k] - a_zp) * (B[b, k, n] - b_zp)
    y = f32(acc) * scale[n]            (then + bias[n] with `bias`)
    y = maximumf(minimumf(y, clamp_max), clamp_min)
    without out_scale:  out = y                            (init f32)
    with out_scale:     q = roundeven(y / out_scale) + out_zp
                        q = maximumf(minimumf(q, qmax), qmin)
                        v = the 8-bit pattern of q
                        out = table ? table[v] : v          (init i8 or f32)
    with dequant_scale: w = table ? table[v] : v       (table i8)
                        out = (f32(w) - dequant_zp) * dequant_scale  (init f32;
                        w read signed with dequant_signed, else unsigned),
                        then maximumf(minimumf(out, dequant_max), dequant_min)
    with residual:      out = maximumf(minimumf(out + residual[b, m, n],
                                                residual_max), residual_min)
                        (out f32 as above: a residual connection's add and
                        its ReLU, ResNet's and MobileNetV2's blocks)
    ```

    Every step is one f32 operation, rounded as the arith op of the same
    name rounds it (no fused multiply-add), so the result is bit for bit
    that of the `linalg.generic` it replaces (`tessel-fuse-requantize`).
    `[qmin, qmax]` lies in `[-128, 255]`: a u8 or an s8 range, whose value
    `v` is the 8-bit pattern of. `table` (256 values, indexed by `v` read
    unsigned) is what the rest of an elementwise chain after the
    quantization computes: a dequantize, a clip and a requantize of a QDQ
    model's activation, say; its element type is the output's. The common
    case of an f32 table, the dequantization of `v` or of an 8-bit function
    of it, is `dequant_scale` and `dequant_zp` (and an i8 table) instead: a
    few vector operations rather than a gather.
    Operands, packing, zero points and the convolution form are those of
    `tessel.packed_matmul_i8`, except with `sparse(%block_ptr, %block_k)`:
    then B is sparse (`tessel-sparsify-int8-weights`), stored as blocks of
    4 consecutive `k` ("a quad") x `block_size` consecutive columns (1 or
    4) that hold a nonzero: block column `c` (columns `[c*R, c*R + R)`)
    has blocks `e` in `[block_ptr[c], block_ptr[c+1])` (`ceil(N/R) + 1`
    i32 entries), at quad `block_k[e]` (k ascending within a column), and
    `packed_b` (`nnz x R x 4`) holds their bytes:
    `packed_b[e, r, t] = B[4*block_k[e] + t, c*R + r]`, zero past `K` and
    `N`. Every other element of B is zero. `scale` and `bias` have `N` (or `F`) f32
    values; `residual` is f32 and shaped as `init` (it may be the same
    buffer: each element is read before it is written). `tessel-kernels-to-calls` calls
    `tessel_kernel_matmul_u8s8_requant` (`..._conv2d_u8s8_requant` for a
    convolution; `tessel_kernel_sparse_...` for sparse weights).

    ```mlir
    %y = tessel.packed_matmul_i8_requant ins(%x, %wp : tensor<1x128x768xi8>, tensor<12x192x64x4xi8>)
        column_sums(%cs : tensor<768xi32>) scale(%s : tensor<768xf32>)
        bias(%b : tensor<768xf32>) outs(%init : tensor<1x128x768xi8>)
        {a_zp = 2 : i32, b_zp = 0 : i32, a_signed, clamp_min = 0.0 : f32,
         clamp_max = 0x7F800000 : f32, out_scale = 0.05 : f32,
         out_zp = 0.0 : f32, qmin = 0.0 : f32, qmax = 255.0 : f32}
        -> tensor<1x128x768xi8>
    ```
  }];
  let arguments = !con((ins
      AnyShaped:$input,
      AnyShaped:$packed_b,
      Optional<AnyShaped>:$column_sums,
      AnyShaped:$scale,
      Optional<AnyShaped>:$bias,
      Optional<AnyShaped>:$table,
      Optional<AnyShaped>:$residual,
      AnyShaped:$init,
      I32Attr:$a_zp,
      I32Attr:$b_zp,
      UnitAttr:$a_signed,
      F32Attr:$clamp_min,
      F32Attr:$clamp_max), Tessel_RequantOutputArgs,
      Tessel_ConvolutionWindowArgs, (ins
      DefaultValuedAttr<F32Attr, "-INFINITY">:$residual_min,
      DefaultValuedAttr<F32Attr, "INFINITY">:$residual_max,
      Optional<AnyShaped>:$block_ptr,
      Optional<AnyShaped>:$block_k,
      OptionalAttr<I64Attr>:$block_size));
  let results = (outs Variadic<AnyRankedTensor>:$result);
  let assemblyFormat = [{
    `ins` `(` $input `,` $packed_b `:` type($input) `,` type($packed_b) `)`
    (`sparse` `(` $block_ptr^ `,` $block_k `:` type($block_ptr) `,`
     type($block_k) `)`)?
    (`column_sums` `(` $column_sums^ `:` type($column_sums) `)`)?
    `scale` `(` $scale `:` type($scale) `)`
    (`bias` `(` $bias^ `:` type($bias) `)`)?
    (`table` `(` $table^ `:` type($table) `)`)?
    (`residual` `(` $residual^ `:` type($residual) `)`)?
    `outs` `(` $init `:` type($init) `)`
    attr-dict (`->` type($result)^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    MutableOperandRange getDpsInitsMutable() { return getInitMutable(); }
    /// The kernel overwrites init; it never reads it.
    bool getAccumulate() { return false; }
    /// The convolution form (kernel_size and the rest present).
    bool isConvolution() { return getKernelSize().has_value(); }
    /// B in quad blocks (block_ptr, block_k, block_size), not packed dense.
    bool isSparse() { return getBlockPtr() != nullptr; }
  }];
}

def Tessel_DepthwiseConv2DI8Op : Tessel_Op<"depthwise_conv2d_i8",
    [DestinationStyleOpInterface, AttrSizedOperandSegments,
     DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "int8 depthwise NHWC convolution, exact int32 or with the "
                "requantizing epilogue";
  let description = [{
    Channel multiplier 1; padding is done by the kernel and reads as the
    input's zero point (ONNX's zero padding of the dequantized input):

    ```
    acc[n,oh,ow,c] = sum_{kh,kw} (x - a_zp) * w[kh,kw,c]
    x = input[n, oh*sh + kh*dh - pad_top, ow*sw + kw*dw - pad_left, c]
        (a_zp outside the input)
    without scale:  out = acc                              (init i32)
    with scale:     out = acc finished as tessel.packed_matmul_i8_requant
                          finishes column c (scale[c], bias[c], clamp,
                          out_scale ... dequant_max)
    ```

    `input` is 8-bit (signed with `a_signed`, else unsigned) and `a_zp` a
    value of its type; `kernel_size` is `[KH, KW]`. The weights `w`
    (signed 8-bit, symmetric: no weight zero point) are packed at compile
    time for `vpdpbusd`, 4 kernel rows side by side:
    `packed_filter[g, kw, c, j] = w[4g + j, kw, c]`, `ceil(KH/4) x KW x Cp
    x 4` with `Cp` the channels rounded up to 16, zero where `4g + j >= KH`
    or `c >= C`; `column_sums[c] = sum_{kh,kw} w[kh,kw,c]` corrects for the
    zero point. `tessel-convert-to-kernels` makes it from
    `linalg.depthwise_conv_2d_nhwc_hwcm_q` (tosa-to-linalg's form of an
    int8 `tosa.depthwise_conv2d`), `tessel-fuse-requantize` gives it its
    epilogue, and `tessel-kernels-to-calls` calls
    `tessel_kernel_depthwise_conv2d_u8s8`.

    ```mlir
    %y = tessel.depthwise_conv2d_i8 ins(%x, %wp : tensor<1x56x56x144xi8>, tensor<1x3x144x4xi8>)
        column_sums(%cs : tensor<144xi32>) outs(%init : tensor<1x56x56x144xi32>)
        {kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>,
         dilations = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>,
         a_zp = -3 : i32, a_signed} -> tensor<1x56x56x144xi32>
    ```
  }];
  let arguments = !con((ins
      AnyShaped:$input,
      AnyShaped:$packed_filter,
      AnyShaped:$column_sums,
      Optional<AnyShaped>:$scale,
      Optional<AnyShaped>:$bias,
      Optional<AnyShaped>:$table,
      AnyShaped:$init,
      DenseI64ArrayAttr:$kernel_size,
      DenseI64ArrayAttr:$strides,
      DenseI64ArrayAttr:$dilations,
      DenseI64ArrayAttr:$pad,
      I32Attr:$a_zp,
      UnitAttr:$a_signed,
      DefaultValuedAttr<F32Attr, "-INFINITY">:$clamp_min,
      DefaultValuedAttr<F32Attr, "INFINITY">:$clamp_max),
      Tessel_RequantOutputArgs);
  let results = (outs Variadic<AnyRankedTensor>:$result);
  let assemblyFormat = [{
    `ins` `(` $input `,` $packed_filter `:` type($input) `,` type($packed_filter) `)`
    `column_sums` `(` $column_sums `:` type($column_sums) `)`
    (`scale` `(` $scale^ `:` type($scale) `)`)?
    (`bias` `(` $bias^ `:` type($bias) `)`)?
    (`table` `(` $table^ `:` type($table) `)`)?
    `outs` `(` $init `:` type($init) `)`
    attr-dict (`->` type($result)^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    MutableOperandRange getDpsInitsMutable() { return getInitMutable(); }
    /// The kernel overwrites init; it never reads it.
    bool getAccumulate() { return false; }
  }];
}

def Tessel_SparseMatmulOp : Tessel_Op<"sparse_matmul",
    [DestinationStyleOpInterface,
     DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "Matmul with a constant sparse right operand in R x 1 blocks";
  let description = [{
    `init` + (optionally) bias + `input x B`, then an optional clamp, where
    `B` (`K x N`) is mostly zeros and stored by its nonzero blocks of `R =
    block_size` consecutive columns at one `k` (the `R x 1` blocks of a
    framework's `[out, in]` weight; `R = 1` is unstructured):

    ```
    acc[m, n] = sum_k input[m, k] * B[k, n]
    out = clamp((accumulate ? init : 0) + acc + bias[n], clamp_min, clamp_max)
    ```

    Block column `b` holds columns `[b*R, b*R + R)`; its nonzero blocks are
    `e` in `[block_ptr[b], block_ptr[b+1])` (`block_ptr` has `ceil(N/R) + 1`
    entries, from 0, non-decreasing), at `k = block_k[e]` (in `[0, K)`),
    with `values[e*R + r] = B[block_k[e], b*R + r]` (0 past `N`). Every
    other element of `B` is 0. `k_ascending` says that each block column's
    `k` ascend (verified where `block_ptr` and `block_k` are constants):
    the kernel then takes `k` in chunks without checking.

    `n_of_m = array<i64: n, m>` (with `block_size` 1 and `k_ascending`)
    says that `B` is N:M sparse: every column stores exactly `n` of each
    aligned group of `m` consecutive `k` (stored zeros fill groups with
    fewer nonzeros), `0 < n < m`, `m` dividing 64 and `K`, so
    `block_ptr[b] = b * K / m * n`; and the arrays are in the N:M kernel's
    chunk-major order instead of column order: chunk `q` covers `k` in
    `[64 q, 64 q + 64)`, and entry `q * N * (64 / m * n) + c * nz_q + i`
    (`nz_q = 64 / m * n`, fewer in a last, shorter chunk) is column `c`'s
    `i`-th nonzero of chunk `q`, `k` ascending. The kernel then runs the
    same count of nonzeros for every column (`TESSEL_KERNEL_NM_SHIFT`,
    `TESSEL_KERNEL_NM_CHUNK_K`, docs/sparsity.md). The verifier checks the
    order and the counts where the arrays are constants.

    `lanes` (with `n_of_m`, `m` dividing 16, `N` a multiple of 16) puts
    the arrays in the lane order instead: column `c`'s `i`-th nonzero (`k`
    ascending, `n` per group) at entry `(c / 16) * 16 * P + i * 16 + c %
    16`, `P = K / m * n`, so the 16 columns of a vector have their `i`-th
    nonzeros side by side. The kernel then vectorizes over output columns,
    reading `input` and writing the result in place
    (`TESSEL_KERNEL_LANES`, docs/sparsity.md).

    `tessel-sparsify-weights` makes this op from a matmul with constant
    weights; the kernel
    (`tessel_kernel_sparse_matmul_f32`) spends nothing on the zeros.

    ```mlir
    %y = tessel.sparse_matmul ins(%x, %ptr, %k, %v : tensor<16x64xf32>,
             tensor<13xi32>, tensor<40xi32>, tensor<160xf32>)
        outs(%init : tensor<16x48xf32>) {block_size = 4 : i64}
        -> tensor<16x48xf32>
    ```
  }];
  let arguments = (ins
      AnyShaped:$input,
      AnyShaped:$block_ptr,
      AnyShaped:$block_k,
      AnyShaped:$values,
      Optional<AnyShaped>:$bias,
      AnyShaped:$init,
      I64Attr:$block_size,
      UnitAttr:$k_ascending,
      OptionalAttr<DenseI64ArrayAttr>:$n_of_m,
      UnitAttr:$lanes,
      UnitAttr:$accumulate,
      OptionalAttr<F32Attr>:$clamp_min,
      OptionalAttr<F32Attr>:$clamp_max);
  let results = (outs Variadic<AnyRankedTensor>:$result);
  let assemblyFormat = [{
    `ins` `(` $input `,` $block_ptr `,` $block_k `,` $values `:`
        type($input) `,` type($block_ptr) `,` type($block_k) `,` type($values) `)`
    (`bias` `(` $bias^ `:` type($bias) `)`)?
    `outs` `(` $init `:` type($init) `)`
    attr-dict (`->` type($result)^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    MutableOperandRange getDpsInitsMutable() { return getInitMutable(); }
  }];
}

def Tessel_SparseConv2DOp : Tessel_Op<"sparse_conv2d",
    [DestinationStyleOpInterface,
     DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "NHWC convolution with a constant sparse filter in R x 1 blocks";
  let description = [{
    `tessel.packed_conv2d`'s convolution (same `kernel_size`, `strides`,
    `dilations`, optional zero `pad` `[top, bottom, left, right]` and
    epilogue) with the filter stored as `tessel.sparse_matmul` stores its
    `B`: `B` is the `(KH*KW*C) x F` matrix `B[(kh*KW + kw)*C + c, f] =
    W[f, kh, kw, c]`, kept by its nonzero blocks of `R = block_size`
    consecutive output channels at one reduction element (`k_ascending`
    and `n_of_m` as tessel.sparse_matmul's):

    ```
    acc[n,oh,ow,f] = sum_{kh,kw,c} input[n, oh*sh + kh*dh - pad_top,
                                         ow*sw + kw*dw - pad_left, c]
                                   * B[(kh*KW + kw)*C + c, f]
                     (out-of-range input positions count as 0)
    out = clamp((accumulate ? init : 0) + acc + bias[f], clamp_min, clamp_max)
    ```

    `tessel-sparsify-weights` makes this op from a convolution with a
    constant, mostly-zero filter; the kernel
    (`tessel_kernel_sparse_conv2d_f32`) lays the input out as channel
    planes, so that the products are the sparse matmul's, and spends
    nothing on the zeros (docs/sparsity.md).

    ```mlir
    %y = tessel.sparse_conv2d ins(%x, %ptr, %k, %v : tensor<1x8x8x4xf32>,
             tensor<9xi32>, tensor<20xi32>, tensor<20xf32>)
        outs(%init : tensor<1x8x8x8xf32>)
        {kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>,
         dilations = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>,
         block_size = 1 : i64} -> tensor<1x8x8x8xf32>
    ```
  }];
  let arguments = (ins
      AnyShaped:$input,
      AnyShaped:$block_ptr,
      AnyShaped:$block_k,
      AnyShaped:$values,
      Optional<AnyShaped>:$bias,
      AnyShaped:$init,
      DenseI64ArrayAttr:$kernel_size,
      DenseI64ArrayAttr:$strides,
      DenseI64ArrayAttr:$dilations,
      OptionalAttr<DenseI64ArrayAttr>:$pad,
      I64Attr:$block_size,
      UnitAttr:$k_ascending,
      OptionalAttr<DenseI64ArrayAttr>:$n_of_m,
      UnitAttr:$accumulate,
      OptionalAttr<F32Attr>:$clamp_min,
      OptionalAttr<F32Attr>:$clamp_max);
  let results = (outs Variadic<AnyRankedTensor>:$result);
  let assemblyFormat = [{
    `ins` `(` $input `,` $block_ptr `,` $block_k `,` $values `:`
        type($input) `,` type($block_ptr) `,` type($block_k) `,` type($values) `)`
    (`bias` `(` $bias^ `:` type($bias) `)`)?
    `outs` `(` $init `:` type($init) `)`
    attr-dict (`->` type($result)^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    MutableOperandRange getDpsInitsMutable() { return getInitMutable(); }
    /// [top, bottom, left, right]; zeros when there is no `pad`.
    SmallVector<int64_t> getPadOrZero() {
      if (std::optional<ArrayRef<int64_t>> p = getPad())
        return SmallVector<int64_t>(*p);
      return {0, 0, 0, 0};
    }
  }];
}

def Tessel_GroupedConv2DOp : Tessel_Op<"grouped_conv2d",
    [DestinationStyleOpInterface,
     DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "Grouped NHWC convolution with a packed filter";
  let description = [{
    A convolution of `groups` groups of `cg = C / groups` input and
    `fg = F / groups` output channels, with `tessel.packed_conv2d`'s
    `kernel_size`, `strides`, `dilations`, optional zero `pad` `[top,
    bottom, left, right]` and epilogue:

    ```
    acc[n,oh,ow,g*fg+f] = sum_{kh,kw,j} input[n, oh*sh + kh*dh - pad_top,
                                              ow*sw + kw*dw - pad_left, g*cg+j]
                                        * W[g*fg+f, kh, kw, j]
    out = clamp((accumulate ? init : 0) + acc + bias, clamp_min, clamp_max)
    ```

    `packed_filter` is `W` in the kernel's layout `packing` (Kernels.td's
    `tessel_kernel_grouped_conv2d_nhwc_f32`): "rotated" (square groups, `fg`
    dividing 16): `KH*KW x ceil(F/16) x fg x 16`; "cmajor" (square groups,
    `fg` at least 16 and a multiple of 8): `KH*KW x groups x fg x fg`
    rounded up to 16; "panels" (any groups): per group the dense kernel's
    panels, `groups x ceil(fg/NR) x KH*KW*cg x NR`.
    `tessel-convert-to-kernels` makes it from a
    `linalg.conv_2d_nhwgc_gfhwc` with a constant filter.

    ```mlir
    %y = tessel.grouped_conv2d ins(%x, %w : tensor<1x8x8x32xf32>,
             tensor<9x2x4x16xf32>) outs(%init : tensor<1x8x8x32xf32>)
        {groups = 8 : i64, packing = "rotated",
         kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>,
         dilations = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>}
        -> tensor<1x8x8x32xf32>
    ```
  }];
  let arguments = (ins
      AnyShaped:$input,
      AnyShaped:$packed_filter,
      Optional<AnyShaped>:$bias,
      AnyShaped:$init,
      I64Attr:$groups,
      StrAttr:$packing,
      DenseI64ArrayAttr:$kernel_size,
      DenseI64ArrayAttr:$strides,
      DenseI64ArrayAttr:$dilations,
      OptionalAttr<DenseI64ArrayAttr>:$pad,
      UnitAttr:$accumulate,
      OptionalAttr<F32Attr>:$clamp_min,
      OptionalAttr<F32Attr>:$clamp_max);
  let results = (outs Variadic<AnyRankedTensor>:$result);
  let assemblyFormat = [{
    `ins` `(` $input `,` $packed_filter `:` type($input) `,`
        type($packed_filter) `)`
    (`bias` `(` $bias^ `:` type($bias) `)`)?
    `outs` `(` $init `:` type($init) `)`
    attr-dict (`->` type($result)^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    MutableOperandRange getDpsInitsMutable() { return getInitMutable(); }
    /// [top, bottom, left, right]; zeros when there is no `pad`.
    /// The kernel's code for `packing` (TESSEL_KERNEL_GROUPED_*).
    int64_t getPackingCode();
    SmallVector<int64_t> getPadOrZero() {
      if (std::optional<ArrayRef<int64_t>> p = getPad())
        return SmallVector<int64_t>(*p);
      return {0, 0, 0, 0};
    }
  }];
}

#endif // TESSEL_KERNEL_OPS_TD
