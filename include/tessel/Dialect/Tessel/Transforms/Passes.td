//===- Passes.td - Tessel graph-dialect passes ------------*- tablegen -*-===//
#ifndef TESSEL_DIALECT_TESSEL_TRANSFORMS_PASSES
#define TESSEL_DIALECT_TESSEL_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def TesselCheckTensorSizes : Pass<"tessel-check-tensor-sizes", "::mlir::ModuleOp"> {
  let summary = "Reject tensors too large to compile or run";
  let description = [{
    The first pass of the pipeline. Every statically shaped type in the
    module (op results and operands, block arguments, function signatures,
    typed attributes such as `dense<1.0> : tensor<100000000000xf32>`) must
    have at most `max-elements` elements, and its element count must not
    overflow 64 bits. Such a module is otherwise accepted by the parser (a
    splat is one value) and fails much later: an out-of-memory abort while
    folding or materializing the constant, or an artifact whose manifest the
    runtime refuses. The error names the type and the op.
  }];
  let options = [
    Option<"maxElements", "max-elements", "int64_t",
           /*default=*/"int64_t(1) << 31",
           "The most elements one tensor may have (default 2^31, the ONNX "
           "importer's limit)">,
  ];
}

def TesselPadInPlace : Pass<"tessel-pad-in-place", "::mlir::func::FuncOp"> {
  let summary = "A padded value's producer writes into the padded tensor";
  let description = [{
    On linalg on tensors, before `eliminate-empty-tensors`. A `tensor.pad`
    with a constant value, static sizes and low padding whose source is
    computed by a destination-style op in the same block becomes a
    `linalg.fill` of a `tensor.empty` (placed before the producer) and a
    `tensor.insert_slice` of the source at the low padding. Empty-tensor
    elimination then makes the producer compute into that slice (the
    source's other users read it there, a strided view), so
    bufferization fills the padded buffer and copies nothing; as a
    `tensor.pad`, it copied the whole source into a fresh buffer (pooling
    inputs with a counted or ceil-mode border: GoogLeNet, Inception). Any
    other pad is left as it is.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def TesselShareConcatPrefixes
    : Pass<"tessel-share-concat-prefixes", "::mlir::func::FuncOp"> {
  let summary = "Concatenations that extend one another share one tensor";
  let description = [{
    On linalg on tensors, before bufferization. A concatenation is a chain of
    `tensor.insert_slice`s that fill a `tensor.empty` along one dimension,
    in order. When a later concatenation starts with all the pieces of an
    earlier one, at the same offsets (DenseNet: block input `x0`, then
    `[x0, y1]`, `[x0, y1, y2]`, ...), every piece is inserted once into one
    tensor as wide as the last of them, and each concatenation becomes a
    slice of it (`tensor.extract_slice`, offset 0):

      %a = concat(%x, %y)        %w  = insert %x, %y, %z into empty(wide)
      %b = concat(%x, %y, %z)  ->  %a = extract_slice %w' [0, |x|+|y|)

    (with `%w'` the chain after %y). Bufferized in place, each piece is
    written once (by its producer, once `eliminate-empty-tensors` has made
    it write into the slice) and no concatenation copies the earlier
    pieces again: O(L) bytes moved for L layers instead of O(L^2), and one
    copy loop per layer less to compile.
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def TesselDropUnitBroadcasts : Pass<"tessel-drop-unit-broadcasts"> {
  let summary = "Drop the run-time broadcasts of operands whose sizes "
                "equal the result's";
  let description = [{
    On linalg on tensors, after `tosa-to-linalg`: an elementwise TOSA op
    whose operand has a dynamic size (a run-time batch) is lowered with a
    guard per operand, `scf.if (%n == 1) { copy broadcasting index 0 }
    else { the operand }`, since a size of 1 would broadcast. The copy runs
    at every call where the size is 1 (batch 1: every elementwise op reads
    and writes its operands once more) and keeps elementwise fusion from
    merging the ops around it. Where the operand's broadcast dimensions are
    provably `%n` and the copy keeps the operand's sizes, the copy is the
    operand itself: the result is replaced by it. Guards it cannot prove
    stay.

    One walk in program order, so that a model's hundreds of guards cost
    one pass (ConvNeXt's 120: ~1 s, against 24 s for 16 greedy rounds):
    - each run-time size is read once and mapped to a representative:
      `tensor.dim`s that ValueBoundsOpInterface proves equal (the same
      graph input's batch through any chain of ops), the results of a
      `tessel-check-broadcasts` guard whose condition checks their sizes
      equal and whose failure branch yields zeros of one size (equal in
      both branches), `size / c` where the
      size is provably `s * c`, the size a reshape or `expand_shape` was
      given, and `max(n, n)` (tosa-to-linalg's broadcast result size);
    - an `scf.if` with results whose condition becomes a comparison of a
      size with itself that holds (the size checks `tessel-check-broadcasts`
      adds, conjunctions of them) is replaced by its `then` branch;
    - the guarded copy is dropped as above.
    Guards between two different batch names stay (lit `@two_batches`).
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect"];
}

def TesselSplatsToFills : Pass<"tessel-splats-to-fills"> {
  let summary = "Large splat constants become fills, not data";
  let description = [{
    On linalg on tensors, before bufferization: an `arith.constant` splat
    tensor with more than `min-elements` elements becomes
    `linalg.fill(tensor.empty)`. Bufferized as a constant it would be a
    global of its full size in the artifact (a ConstantOfShape of
    1024x1024x1024 is 4 GiB of object file and minutes of code generation);
    filled, it is one loop at run time. Small splats stay constants, which
    later passes fold.
  }];
  let options = [
    Option<"minElements", "min-elements", "int64_t", /*default=*/"65536",
           "Splats with more elements than this become fills">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def TesselLowerRandom : Pass<"tessel-lower-random", "::mlir::ModuleOp"> {
  let summary = "Expand tessel.random_uniform and tessel.random_normal into "
                "counter-based generators";
  let description = [{
    Each op becomes a `linalg.generic` that computes every element from its
    row-major position and the op's key (the SplitMix64 mix of
    `key + (i + 1) * 0x9E3779B97F4A7C15`, scaled to the element type; the
    normal draws take two such values through Box-Muller): no state
    between elements, so the loop vectorizes and parallelizes like any
    other. A seeded op's key is a constant. An unseeded op's key mixes the
    old value of `@__tessel_random_calls`, a private `memref.global` this
    pass adds to the module, which each execution of the op advances with
    a `memref.atomic_rmw` (calls from several threads still draw distinct
    keys). Without `unseeded` (targets whose host does not run the model's
    code, the GPU), an unseeded op is an error that asks for a seed.
  }];
  let options = [
    Option<"unseeded", "unseeded", "bool", /*default=*/"true",
           "Allow unseeded draws (the call counter lives in host memory)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::tensor::TensorDialect"];
}

def TesselDecomposeGraphOps : Pass<"tessel-decompose-graph-ops"> {
  let summary = "Decompose tessel graph ops into TOSA and math ops";
  let description = [{
    Rewrites every `tessel` op (softmax, log_softmax, layer_norm, batch_norm,
    gelu, conv2d with groups, reduce_mean) into upstream `tosa` ops (plus
    `math.sqrt` on tensors where TOSA has no op), so that the upstream
    TOSA->linalg lowering handles the rest. Grouped convolution becomes one
    `tosa.conv2d` when `groups == 1`, a `tosa.depthwise_conv2d` when
    `groups == C`, and per-group slices + `tosa.conv2d` + `tosa.concat`
    otherwise; except, with `keep-grouped`, an f32 grouped convolution
    becomes one `linalg.conv_2d_nhwgc_gfhwc` (its input zero-padded by
    `tosa.pad` and expanded to `N x H x W x G x C/G`, the bias added
    after), which tessel-convert-to-kernels runs on the grouped kernel:
    one op whatever the number of groups (per-group convolutions made
    ResNeXt-50's code, and its compile time, grow with its groups), no
    concat copies, and narrow groups on a kernel of their own rather than
    a mostly empty GEMM panel (ResNeXt-50's 4-channel groups: 4 of 64
    columns).

    `tessel.top_k` becomes k rounds of argmax; `tessel.nonzero` a loop
    that counts the nonzero elements, one that writes their row-major
    positions (`scf.for`), and a `tensor.generate` unravelling them into
    coordinates.
  }];
  let options = [
    Option<"keepGrouped", "keep-grouped", "bool", /*default=*/"false",
           "Keep f32 grouped convolutions whole, as "
           "linalg.conv_2d_nhwgc_gfhwc (the CPU kernel path)">,
  ];
  let dependentDialects = ["::mlir::tosa::TosaDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

def TesselComputeInBF16 : Pass<"tessel-compute-in-bf16"> {
  let summary = "Compute f32 convolutions and matmuls on bf16-rounded "
                "operands, summing in f32 (--precision=bf16)";
  let description = [{
    On linalg on tensors: every `linalg.conv_2d_nhwc_fhwc`, `linalg.matmul`
    and `linalg.batch_matmul` whose inputs and init are f32 takes its inputs
    through `arith.truncf` to bf16 (constants are rounded here, at compile
    time); the op itself is unchanged, so by linalg's semantics each product
    is of two bf16 values (exact in f32) and the sums stay f32 in the f32
    init. This is what AVX512_BF16's `vdpbf16ps` computes, and what
    `tessel-convert-to-kernels` then runs on the bf16 kernel
    (docs/quantization.md#bf16). Depthwise convolutions and
    `tessel.attention` are left in f32. Rounding is to nearest even.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

def TesselExpandBF16 : Pass<"tessel-expand-bf16"> {
  let summary = "bf16 <-> f32 conversions as integer operations";
  let description = [{
    `arith.truncf` to bf16 (round to nearest even) and `arith.extf` from
    bf16 become integer arithmetic on the bits (upstream's
    `populateExpandBFloat16Patterns`), scalar or vector, before the lowering
    to LLVM: LLVM would otherwise call `__truncsfbf2`, which the C runtime
    of the target may lack, on CPUs without AVX512_BF16. Only these
    conversions are touched (`arith-expand` would also expand
    `maximumf`/`minimumf` and more).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def TesselSparsifyWeights : Pass<"tessel-sparsify-weights", "ModuleOp"> {
  let summary = "Rewrite matmuls and convolutions whose constant weights are "
                "mostly zeros into tessel.sparse_matmul / sparse_conv2d";
  let description = [{
    Static weight sparsity (docs/sparsity.md). Each `linalg.matmul` and
    `linalg.batch_matmul` of one batch entry on f32, with default indexing
    maps and a constant right operand `B` (`K x N`), and each
    `linalg.conv_2d_nhwc_fhwc` with a constant filter (`B` is then the
    `(KH*KW*C) x F` matrix of the filter; a 1x1, stride-1 convolution is
    the matmul of its `N*H*W` pixels), is analysed: for each block size `R`
    in {16, 8, 4, 2, 1}, the blocks of `R` consecutive columns at one `k`
    that hold a nonzero. A cost model gives the kernel's speed-up over the
    dense one as
    `1 / (density(R) / (ratio(R) * lanes_used * tile(M)) + overhead) /
    dense_gain`,
    where `density(R)` is the stored fraction of `B` (blocks x R / (K x
    N)), `ratio(R)` the sparse kernel's rate on its stored elements over
    the dense kernel's rate, measured per block size (docs/sparsity.md;
    `R` = 1 apart for a static `M` of 512 rows and more where measured),
    `lanes_used` the fraction of the kernel's vector lanes (`vector-bits /
    32`) the rows fill: for a matmul `M / roundup(M, lanes)` with a static
    `M`; for a convolution `OW / wq`, `wq` the kernel's plane row (`OW`
    rounded up to whole vectors when that wastes at most a sixth, else
    `OW`, and then x 0.65 for the loads that straddle cache lines);
    `tile(M)` is 1 for an `M` of at least 4 vectors (or dynamic), else
    `(tm / (tm + 3)) / (4 / 7)` for its `tm` vectors (a tile of fewer
    vectors spreads each nonzero's index and broadcast over fewer FMAs).
    `overhead` is the kernel's transposition of the activations and of the
    results, `moved-element-cost` (by default the target's measured value:
    24, 12 with `fma-bits` 256, 19 with `lane-order`) dense multiply-adds
    per element moved (the matmul: `M x K` in, `M x N` out; the convolution: its
    channel planes, `KW x` the input's rows it reads, in), over the dense
    multiply-adds. `dense_gain`
    is 2 for a convolution that tessel-convert-to-kernels runs as Winograd
    (3x3, stride and dilation 1, at least `winograd-min-channels` input and
    output channels), else 1. The best `R` is taken when its speed-up is at
    least `min-speedup`; then the op becomes `tessel.sparse_matmul` (a
    convolution other than 1x1 stride-1: `tessel.sparse_conv2d`, absorbing
    a zero `tensor.pad` of its input) with the blocks as constants
    (`block_ptr`, `block_k`, `values`), its init analysed as
    tessel-convert-to-kernels does (a zero fill is not read, a broadcast
    bias becomes `bias`), and tessel-convert-to-kernels fuses the bias,
    residual and clamp epilogues that follow. Otherwise the op is left to
    the dense path.

    N:M weights (every column `n` of each aligned group of `m` = 4 or 8
    `k`'s) are weighed the same way with the N:M kernel's rates. With
    `lane-order`, a matmul's N:M weights (`N` a multiple of 16, `m` dividing
    16) are also weighed in the lane order (`tessel.sparse_matmul`'s
    `lanes`), vectorized over output columns: `1 / (density /
    (lanes_ratio(density) * M / roundup(M, 8)))`, no `overhead` (it reads
    the activations and writes the results in place); the faster order is
    taken.

    With `report`, one line per analysed op is appended to that file
    (tessel-compile's --sparsity-report starts it empty):
    its location, shape, zero fraction, the best block size, its density
    and predicted speed-up, and whether it was made sparse.
  }];
  let options = [
    Option<"minSpeedup", "min-speedup", "double", /*default=*/"1.25",
           "Predicted speed-up over the dense kernel needed to go sparse">,
    Option<"vectorBits", "vector-bits", "unsigned", /*default=*/"512",
           "Vector register width of the target (the kernel vectorizes "
           "over rows: a static M below a multiple of its lanes wastes "
           "the rest)">,
    Option<"fmaBits", "fma-bits", "unsigned", /*default=*/"0",
           "Width of the target's FMA datapath (0: vector-bits), which "
           "picks the measured rates: 512-bit registers on 256-bit FMA "
           "units (AMD Zen 4) favour the sparse kernels, whose loads keep "
           "pace there">,
    Option<"winogradMinChannels", "winograd-min-channels", "int64_t",
           /*default=*/"::mlir::tessel::kWinogradMinChannels",
           "tessel-convert-to-kernels' option of that name, which decides "
           "the dense baseline of a 3x3 convolution (0: no Winograd)">,
    Option<"movedElementCost", "moved-element-cost", "double",
           /*default=*/"-1.0",
           "Dense multiply-adds per element the sparse kernels move into "
           "and out of their layout (negative: the value measured for the "
           "target's kind of CPU, 24, on Zen 4 12, on Zen 5 19; 0 leaves only the "
           "products, as tests of the rewrite on small shapes want)">,
    Option<"report", "report", "std::string", /*default=*/"\"\"",
           "File that gets one line per analysed op (none when empty)">,
    Option<"laneOrder", "lane-order", "bool", /*default=*/"false",
           "N:M weights of matmuls (N a multiple of 16, m dividing 16) may "
           "go in the lane order (tessel.sparse_matmul's lanes), "
           "vectorized over output columns, weighed with that kernel's "
           "rates (measured on AMD Zen 5, whose 512-bit permutes run "
           "beside the FMAs: tessel-compile sets it there); with 512-bit "
           "FMAs, the other kernels' rates measured on that CPU too">,
  ];
  let dependentDialects = ["::mlir::tessel::TesselDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

def TesselSparsifyInt8Weights : Pass<"tessel-sparsify-int8-weights"> {
  let summary = "Give mostly-zero constant int8 weights to the sparse int8 "
                "kernels";
  let description = [{
    Static weight sparsity for int8 (docs/sparsity.md): each
    `tessel.packed_matmul_i8` or `tessel.packed_matmul_i8_requant` (matmul
    or convolution form; the int32 op is what stays of a QDQ model's
    MatMul whose float chain does not fuse) whose
    VNNI-packed weights are constant is analysed in quads, 4 consecutive
    `k` of a column, the unit the kernels' `vpdpbusd` multiplies: the
    quads that hold a nonzero, alone or 4 columns together. Where the cost
    model (the sparse kernel's measured rate on the quads it stores, plus
    the moves into its row-vectorized layout and back) predicts at least
    `min-speedup` over the dense kernel, the op gets the quad blocks
    (`sparse(%block_ptr, %block_k)`, `block_size`, `packed_b` holding
    their bytes) and runs on `tessel_kernel_sparse_..._u8s8_requant` (or
    `_i32`), bit for bit the dense result. Targets without 512-bit vectors (no VNNI
    kernels) keep every op dense. Runs after tessel-fuse-requantize.

    With `report`, one line per analysed op is appended to that file:
    its location, shape, zero fraction, the best block size, its quad
    density and predicted speed-up, and the choice.
  }];
  let options = [
    Option<"minSpeedup", "min-speedup", "double", /*default=*/"1.25",
           "Predicted speed-up over the dense kernel needed to go sparse">,
    Option<"vectorBits", "vector-bits", "unsigned", /*default=*/"512",
           "Vector register width of the target: the sparse int8 kernels "
           "are AVX-512 VNNI's, so below 512 every op stays dense">,
    Option<"report", "report", "std::string", /*default=*/"\"\"",
           "File that gets one line per analysed op (none when empty)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def TesselConvertToKernels : Pass<"tessel-convert-to-kernels"> {
  let summary = "Rewrite f32 convolutions and matmuls into tessel.packed_conv2d";
  let description = [{
    Data tiling for the kernel library (docs/pipeline/kernels.md). On linalg
    on tensors, with static f32 shapes:

    - `linalg.conv_2d_nhwc_fhwc` becomes `tessel.packed_conv2d`, its filter
      collapsed to `F x (KH*KW*C)` and packed by `linalg.pack` into panels
      of `panel-width` output channels;
    - `linalg.matmul` and `linalg.batch_matmul` (default indexing maps)
      become the 1x1 case of the same op over `1 x M` images, `B` packed
      the same way (one packed filter per batch for `batch_matmul`).

    Epilogues fold into the op: an init filled with zero or broadcast from a
    per-channel bias (what tosa-to-linalg emits for the conv bias) becomes
    the op's `bias`; a following elementwise `addf` with a same-shaped
    tensor (a residual connection) becomes the op's `init` with
    `accumulate`; a following `maximumf`/`minimumf` clamp by constants (ReLU,
    ReLU6) becomes `clamp_min`/`clamp_max`.

    `linalg.pack` of a constant (the weights) is folded at compile time;
    packs of run-time values are lowered to pad + expand_shape + transpose.

    With `winograd` (the default), a 3x3 convolution with stride 1,
    dilation 1, constant weights and at least `winograd-min-channels` input
    and output channels
    becomes `tessel.packed_conv2d {winograd}`: its filter is transformed for
    Winograd's F(4x4, 3x3) on images of at least 36 4x4 tiles (about
    24x24 and up), else F(2x2, 3x3) (`G g G^T`), and packed here, at
    compile time.

    An f32 `linalg.conv_2d_nhwgc_gfhwc` with a constant filter (what
    tessel-decompose-graph-ops keeps whole), collapsed back to NHWC,
    becomes `tessel.grouped_conv2d` with the filter packed for the
    kernel: square groups of 2, 4 or 8 channels (at most
    `grouped-rotated-max-width`) in the rotated vector layout, square
    groups of 16 c-major, any other groups as one GEMM panel set per
    group.
  }];
  let options = [
    Option<"panelWidth", "panel-width", "int64_t", /*default=*/"TESSEL_KERNEL_NR",
           "Output channels per packed panel (the kernel library's NR)">,
    Option<"winograd", "winograd", "bool", /*default=*/"true",
           "Run eligible 3x3 stride-1 convolutions as Winograd F(2x2, 3x3) "
           "or F(4x4, 3x3)">,
    Option<"winogradMinChannels", "winograd-min-channels", "int64_t",
           /*default=*/"::mlir::tessel::kWinogradMinChannels",
           "Fewest input and output channels for a Winograd convolution">,
    Option<"groupedRotatedMaxWidth", "grouped-rotated-max-width", "int64_t",
           /*default=*/"8",
           "Widest square groups (2, 4 or 8 channels) of a grouped "
           "convolution packed in the grouped kernel's rotated vector "
           "layout: at most a vector's lanes">,
  ];
  let dependentDialects = ["::mlir::tessel::TesselDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

def TesselFuseAttention : Pass<"tessel-fuse-attention"> {
  let summary = "Raise matmul-softmax-matmul attention chains to tessel.attention";
  let description = [{
    Model-level (TOSA) rewrite, run before `tessel-decompose-graph-ops` on
    the kernel path (-O2+, x86-64). It matches

    ```
    s = tosa.matmul(q, kT)           // B x M x D  times  B x D x N
    s = tosa.mul(s, c) | arith.divf(s, c)   (optional, c a splat constant)
    s = tosa.add(s, mask)            (optional, mask broadcast to B x M x N)
    p = tessel.softmax(s) {axis = last}
    o = tosa.matmul(p, v)            // B x N x Dv
    ```

    (looking through reshapes that keep the type) where every
    intermediate has this chain as its only user (but `tensor.dim`s), and
    replaces it by one `tessel.attention` whose key operand is `kT`
    transposed back (the transposes then fold with the head-split
    transpose that produced `kT`). f32 only; the scores are then never
    materialized. The scale may also be an elementwise `linalg.generic`
    multiplying or dividing by a splat of shape 1x1x1 (the ONNX importer's
    division with run-time sizes).

    With run-time sizes, the ONNX importer wraps each matmul in checks: its
    operands are `tensor.reshape`s to their own sizes, emptied (a size
    `select(ok, dim, 0)`) where the sizes the matmul needs equal differ,
    and its result goes through `tessel.require %ok, %r else %r`. The
    chain is matched through both. The fused op then makes the checks
    itself, where a size is dynamic: the batch of q, k and v, the head
    dim of q and k, the key length of k and v, and each mask dim 1 or the
    scores'. Where one fails the call fails (`tessel.require`, status -3)
    and the queries (their batch or length, else the keys' length) are
    emptied, so that the kernel reads nothing out of bounds. A
    `tessel.require` with another fallback is not looked through.
  }];
  let dependentDialects = ["::mlir::tessel::TesselDialect",
                           "::mlir::tosa::TosaDialect",
                           "::mlir::tensor::TensorDialect"];
}

def TesselFuseElementwise : Pass<"tessel-fuse-elementwise"> {
  let summary = "Fuse elementwise linalg ops, without recomputing costly broadcast producers";
  let description = [{
    Upstream `linalg-fuse-elementwise-ops` (same patterns: producer-consumer
    fusion, reshape folding by expansion, constant folding) with one cost
    rule added: a producer whose body has transcendental math, a division
    or a remainder is not fused into a consumer that reads it through a
    broadcast (a non-permutation indexing map), because the fused loop
    would recompute it once per consumer point: a squeeze-and-excitation
    sigmoid per activation instead of per channel, a layer-norm rsqrt per
    element instead of per row. Cheap producers (adds, multiplies, selects)
    still fuse. An input that is a splat (a `linalg.fill`, or a generic
    without inputs yielding a value from outside, through reshapes: what
    `tessel-splats-to-fills` and reshape propagation make of a large splat
    constant) is read as its scalar instead of loaded per element. A
    gather (a parallel generic whose body reads a tensor with
    `tensor.extract`, as Resize and constant-index Gather lower) read by one
    consumer through `tensor.collapse_shape` / `tensor.expand_shape`, each
    gathered element read once (a permutation map), is computed in the
    consumer's body: the consumer's indices go back through the reshapes
    (linearized or delinearized per reassociation group) to the gather's
    loops, and the gathered tensor is never written.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::affine::AffineDialect"];
}

def TesselFuseRequantize : Pass<"tessel-fuse-requantize"> {
  let summary = "Fuse the dequantize / requantize after an int8 matmul into its kernel";
  let description = [{
    After elementwise fusion, the int32 result of a `tessel.packed_matmul_i8`
    is read by one `linalg.generic` that dequantizes it (a per-column scale,
    a bias), clips it, quantizes it for the next layer and often goes on with
    the quantized value (a QDQ model's dequantize, activation, requantize).
    Such a generic becomes the matmul's epilogue,
    `tessel.packed_matmul_i8_requant`, and the int32 buffer and the pass
    over it disappear. The generic's body must be, from the matmul's value:
    `sitofp`, `mulf` by a per-column constant, optionally `addf` of a
    per-column constant, `minimumf`/`maximumf` by constants; then either
    the end (an f32 result) or `divf` by a constant, `roundeven`, optionally
    `addf` of a constant, `minimumf`/`maximumf` to an 8-bit range,
    `fptosi`, `trunci` to i8, and then anything computed from that 8-bit
    value and constants alone, which is evaluated here for all 256 values
    into the op's table. Any other generic (a per-element operand, another
    op) is left as it is: the int32 result and the generic stay, and the
    answer is the same either way, bit for bit.

    With `residual`, an f32 operand read element for element (a residual
    connection's other branch) is fused too when the body adds it to the
    epilogue's f32 value and then only clamps: `yield(clamps(addf(v, r)))`
    becomes the op's `residual` and `residual_min`/`residual_max`. A generic
    that reads two int8 kernels (ResNet's projection shortcut added to a
    block's last convolution) is then first split: the ops computed from one
    kernel's result and constants alone, up to the one f32 value the rest
    reads, become a generic of their own, fused into that kernel; the rest
    is the other kernel's epilogue with that value as its residual. On by
    default since its epilogue skips the 8-bit round trip where the
    dequantization undoes the quantization (docs/quantization.md).
  }];
  let options = [
    Option<"residual", "residual", "bool", /*default=*/"true",
           "Also fuse residual adds (and split generics that read two "
           "int8 kernels)">
  ];
  let dependentDialects = ["::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

def TesselQuantizeWithoutDivision : Pass<"tessel-quantize-without-division"> {
  let summary = "Quantize by a proven reciprocal instead of a division";
  let description = [{
    A quantize that stays in a loop, `y / s`, `roundeven`, `+ zp` (may be
    absent) and a `minimumf`/`maximumf` pair by constants (either order,
    every intermediate used once), with a constant f32 scale `s`, divides
    every element. Where multiplying by the reciprocal, or the reciprocal
    corrected by the product's exact residual (`fma`), gives the division's
    clamped result for every f32 `y` (NaN and infinities included), proven
    by `planQuantizeDivision` (tessel/Support/QuantizeDivision.h, the same
    proof as the int8 kernels' epilogues), the `divf` becomes `y` clamped
    to where the result saturates anyway, times the reciprocal. Anything
    else is left as it is. The answer is the same bit for bit.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

def TesselSinkTransposes : Pass<"tessel-sink-transposes"> {
  let summary = "Move TOSA transposes below reductions and broadcasting ops";
  let description = [{
    Layout clean-up after `tosa-reduce-transposes`, for what it leaves in
    ONNX (NCHW) graphs: a `tosa.transpose` feeding an elementwise op (all
    full-size operands transposed alike; smaller broadcast operands are
    transposed back instead), a reduction or a concatenation (all inputs
    transposed alike), a reshape that only splits or merges dims, slices, or
    a `tosa.pad` (the padding permuted back; when the pad's result goes only
    to the inverse transpose or the transpose has no other user) moves below
    it; a transpose
    that only moves size-1 dims becomes a `tosa.reshape`; consecutive
    transposes fold. Transposes so travel down to the next convolution's
    inverse transpose and cancel (EfficientNet-B0: the squeeze-and-excitation
    blocks no longer run in NCHW).
  }];
  let dependentDialects = ["::mlir::tosa::TosaDialect"];
}

def TesselDecomposeTransposeConv : Pass<"tessel-decompose-transpose-conv"> {
  let summary = "Lower tosa.transpose_conv2d to TOSA matmuls or convolutions";
  let description = [{
    A float `tosa.transpose_conv2d` with static shapes whose kernel equals
    its stride and has no output padding (U-Net/FCN upsampling: the output
    windows do not overlap, each output pixel comes from one input pixel)
    becomes one `tosa.matmul` of the input pixels `[N*H*W, IC]` by the
    weights `[IC, KH*KW*OC]`, its rows interleaved into the output by a
    reshape and `tosa.transpose` (depth to space), plus the bias. Every
    other `tosa.transpose_conv2d` takes upstream's decomposition (an
    ordinary convolution over the input spread with zeros on the stride
    grid), which multiplies `stride^2` times as many elements.
  }];
  let dependentDialects = ["::mlir::tosa::TosaDialect"];
}

def TesselTrimPaddedTaps : Pass<"tessel-trim-padded-taps"> {
  let summary = "Drop convolution taps that read only zero padding";
  let description = [{
    For each float `tosa.conv2d` with static shapes: per axis, the taps an
    output position reads inside the input (not in the zero padding) form
    a range, and outputs with the same range a segment. When the taps read
    inside the input are at most `1 - min-saving` of all (over both axes),
    each (row segment, column segment) region becomes a `tosa.conv2d` of
    its valid taps (a `tosa.slice` of the weights) over the input window it
    reads (a `tosa.slice`, no padding), and the regions are concatenated
    back (`tosa.concat`). DeepLabV3's ASPP: 3x3 convolutions with dilation
    24 and 36 on 14x14 maps become 1x1 ones; with dilation 12, a 10x10 1x1
    centre and 2-tap borders. An ordinary 3x3 convolution with padding 1
    keeps all but its border taps and is left alone.
  }];
  let options = [
    Option<"minSaving", "min-saving", "double", /*default=*/"0.3",
           "Fraction of the multiply-adds a rewrite must save (in [0, 1])">,
  ];
  let dependentDialects = ["::mlir::tosa::TosaDialect"];
}

def TesselApproximateMath : Pass<"tessel-approximate-math"> {
  let summary = "Replace f32 transcendental math ops by polynomial approximations";
  let description = [{
    `math.exp`, `expm1`, `log`, `log1p`, `log2`, `tanh` and `erf` on f32
    become upstream MLIR's polynomial approximations (the Cephes/Eigen
    ones, a few ulp), written in `arith` ops. Unlike calls to libm's scalar
    `expf`, they vectorize with the loops around them: sigmoid, SiLU,
    softmax and GELU run at vector speed. Used at -O2 and above; -O0/-O1
    keep libm.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
}

def TesselReassociateReductions : Pass<"tessel-reassociate-reductions"> {
  let summary = "Allow reassociation in the bodies of linalg reductions";
  let description = [{
    Sets `fastmath<reassoc, contract>` on the floating-point `arith` ops in
    the body of every `linalg.generic` that has a reduction iterator
    (layer-norm statistics, softmax sums, pooling, means). Without it LLVM
    must keep a float sum in source order and cannot vectorize the loop;
    with it the reduction runs in vector lanes, as in every optimized
    runtime. Results change in the last bits only (summation order). Used
    at -O2 and above.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def TesselVectorizeLinalg : Pass<"tessel-vectorize-linalg", "::mlir::func::FuncOp"> {
  let summary = "Tile linalg ops on buffers into vector-register tiles and "
                "vectorize them";
  let description = [{
    For each linalg op on buffers that the kernel library does not run
    (elementwise ops, their fused chains, reductions over outer dimensions
    such as pooling, copies): when its innermost loop is parallel and
    contiguous in every buffer that walks it, its innermost size is static
    (outer ones may be known only at run time, e.g. a batch) and its
    body is `arith`/`math` (or loads: gathers, below), the op is tiled
    with every outer dimension 1 and the innermost a multiple of the vector width (up to `max-unroll`
    registers), whole when short, or one register plus a remainder tile;
    each static tile is vectorized by upstream `linalg::vectorize`. The
    tile loops over parallel dimensions are one `scf.parallel` (later run
    on threads by tessel-outline-parallel-loops), reductions are `scf.for`
    inside it. Unit dimensions are then dropped from the vectors and
    transfers on contiguous rows become `vector.load`/`vector.store`. Other
    ops (innermost reductions such as softmax rows, transposes, loads in
    a reduction) are left for the scalar loops and LLVM. Gathers (a parallel generic
    whose body loads buffers with `memref.load`) are tiled the same way and
    each tile vectorized over its innermost loop (VectorizeGathers.cpp):
    loads at indices the same in every lane stay scalar, a last index that
    walks the lanes gives a vector load, an index list into a row of at
    most 32 f32 AVX-512 permutes of the row (`vector-bits` 512), any other
    a `vector.gather`.

    Sliding-window pooling (`linalg.pooling_nhwc_{max,min,sum}` on buffers
    with static strides) is first rewritten into a `linalg.generic` over
    `(n, oh, ow, kh, kw, c)` that reads an `N x OH x KH x OW x KW x C`
    `memref.reinterpret_cast` view of its input (overlapping strides, no
    copy) with the pooling op's body: a reduction over outer dimensions
    like the above, the same values combined in the same order.

    Reductions over outer dimensions of at most 32 registers in all (the
    window's elements times the tile's registers: a 3x3 pool of 24 or 64
    channels) whose order cannot matter (a max/min body, or one
    `tessel-reassociate-reductions` marked) take the window whole in each
    tile instead of `scf.for` loops: its rows are loaded once each (n-D
    transfers fully unrolled), the output row is read and written once,
    and max/min windows combine as a balanced tree.
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "int64_t", /*default=*/"512",
           "Vector register width in bits (512 AVX-512, 256 AVX2, 128 SSE)">,
    Option<"maxUnroll", "max-unroll", "int64_t", /*default=*/"2",
           "Most vector registers per tile along the innermost dimension">,
  ];
  let dependentDialects = ["::mlir::vector::VectorDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::affine::AffineDialect"];
}

#endif // TESSEL_DIALECT_TESSEL_TRANSFORMS_PASSES
