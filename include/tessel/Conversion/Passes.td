//===- Passes.td - Tessel conversion passes ---------------*- tablegen -*-===//
#ifndef TESSEL_CONVERSION_PASSES
#define TESSEL_CONVERSION_PASSES

include "mlir/Pass/PassBase.td"

def TesselNameDynamicDims
    : Pass<"tessel-name-dynamic-dims", "::mlir::ModuleOp"> {
  let summary = "Name the dynamic dimensions an entry point leaves unnamed";
  let description = [{
    The artifact ABI names each dynamic dimension of an entry's inputs and
    outputs (`tessel.dim_names`, see `tessel-record-signature`); ONNX
    models name them from `dim_param`, but a model written in MLIR with
    `tensor<?x16xf32>` need not. This pass, run just before
    `tessel-record-signature` on every public function with a body, fills
    in what is missing:

    - an input's unnamed dynamic dimension d gets `<input>_d<d>` (the
      input's `tessel.name` made an identifier, else `arg<i>`), unique in
      the function;
    - an output's unnamed dynamic dimension takes the name of an input
      dimension that `ValueBoundsConstraintSet::areEqual` proves it equal
      to at every `func.return` (the linalg/tensor forms: `tensor.dim`,
      `tensor.empty`, destination-passing ops); where nothing is proven
      (value bounds do not see through TOSA ops), the inputs' only
      dynamic dimension name, else the name of the first input dynamic at
      the same index (a batch): `tessel-check-result-dims` then checks the
      sizes at run time and fails the call on a mismatch, never writes out
      of bounds.

    Names already given are kept. An output dimension with none of these
    is an error naming the output and the dimension: the runtime allocates
    outputs before the call, from the inputs' sizes.
  }];
}

def TesselRecordSignature : Pass<"tessel-record-signature", "::mlir::ModuleOp"> {
  let summary = "Record each public function's tensor signature for the artifact ABI";
  let description = [{
    Runs on the model-level IR, while functions still take and return
    tensors. For every public `func.func` with a body it records the names
    (from the `tessel.name` argument/result attribute, else `input<i>` /
    `output<i>`), element types, static shapes and symbol vocabularies
    (`sym.vocab`, set by `tessel-lower-sym`) of inputs and outputs, and the
    imports it calls (directly or through other functions), in the module
    attribute `tessel.functions`. Every declaration marked `tessel.import`
    (see `compose-lower-external-calls`) is described the same way in
    `tessel.imports` and then erased; its `tessel.call_import`s now name
    the record. `tessel-emit-artifact-abi` turns the records into the
    manifest, the entry points and the import table after lowering to LLVM.

    A dynamic dimension needs a name (artifact ABI v3): the value's
    `tessel.dim_names` attribute, one string per dimension ("" at static
    ones; `compose-extract-component` and `compose-lower-external-calls`
    name a component's token dimension `T`; `tessel-name-dynamic-dims`
    names those a model leaves unnamed). The records keep the names;
    the runtime binds each from the inputs, so every name an output uses
    must appear in an input.

    Rejects, with a diagnostic on the function: non-tensor arguments or
    results, unnamed dynamic dimensions, an output dimension no input
    names, and element types outside the ABI
    (f32 f16 bf16 f64 i64 i32 i16 i8 ui8 i1).
  }];
}

def TesselCheckResultDims
    : Pass<"tessel-check-result-dims", "::mlir::ModuleOp"> {
  let summary = "Make each named output dimension equal its input's";
  let description = [{
    The runtime allocates an entry's outputs from the sizes it binds from
    the inputs (artifact ABI v3: `output y f32 [T,256]` gets the `T` of an
    input), and the compiled function writes its result into that buffer;
    a result of another size would be written out of bounds. This pass runs
    once the model is in linalg/tensor form. For every named dynamic
    dimension of an output recorded in `tessel.functions` it tries to prove
    (`ValueBoundsConstraintSet::areEqual`) that it equals the input
    dimension of that name. Where it cannot, the result is guarded at run
    time: if the sizes differ, the function returns a zero tensor of the
    bound size instead and calls `__tessel_set_status` with
    `TESSEL_ENTRY_SHAPE_MISMATCH`, which the entry returns (the runtime
    reports it as an error). Functions without named dimensions are
    untouched.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

def TesselCheckBroadcasts
    : Pass<"tessel-check-broadcasts", "::mlir::ModuleOp"> {
  let summary = "Check at run time that dynamic sizes of elementwise operands broadcast";
  let description = [{
    A TOSA elementwise op (`tosa.add`, `tosa.mul`, `tosa.select`, ...)
    requires each dimension of its operands to be equal or 1. With static
    shapes the verifier checks that; with dynamic ones (batch sizes bound
    by the inputs at run time) `tosa-to-linalg` trusts it and reads each
    operand at the largest size, out of bounds when, say, one input has 3
    rows and the other 2. Run just before that lowering, this pass guards
    every such op whose operands' dynamic dimensions could disagree: it
    computes each dimension's largest size and checks that every operand's
    is that or 1; where not, it calls `__tessel_set_status` with
    `TESSEL_ENTRY_SHAPE_MISMATCH` (the call fails with that status) and
    gives the op zero operands whose dynamic dimensions are 1 (or the
    result's static size), which broadcast safely. Ops whose sizes are
    static, or whose only dynamic operand meets operands of size 1, are
    untouched. `tosa.matmul`, which does not broadcast, gets the same guard
    on its batch and reduction sizes (A's must equal B's).

    A dimension whose sizes all share a symbolic name (a graph input's
    `seq` through the ops in between: tessel/Dialect/Tessel/Utils/
    SizeNames.h) is checked for equality instead: equal names are equal
    sizes on every call that has not failed, so no valid input is refused,
    and past the guard the sizes provably agree, which lets
    `tessel-drop-unit-broadcasts` drop `tosa-to-linalg`'s broadcast guards
    (a run-time batch of 1 otherwise copied both operands of every add).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

def TesselLowerIndexChecks
    : Pass<"tessel-lower-index-checks", "::mlir::ModuleOp"> {
  let summary = "Expand tessel.check_indices into a run-time range check";
  let description = [{
    Each `tessel.check_indices %idx {lower, upper}` becomes a reduction
    over the indices (is every one in `[lower, upper)`?) and one `scf.if`:
    where they are, the indices themselves; otherwise a call of
    `__tessel_set_status` with `TESSEL_ENTRY_INDEX_OUT_OF_RANGE` (the entry
    call fails with it) and zeros, which are in range, so the gather or
    scatter that reads them stays in bounds. Run before `tosa-to-linalg`,
    next to `tessel-check-broadcasts`. Every `tosa.gather` and
    `tosa.scatter` whose indices are not constants in range gets the check
    on `[0, K)` first (TOSA leaves an index out of range undefined, and an
    MLIR model may compute them). With `report=false` (a target whose
    host cannot read values computed on the device, the GPU's) each index
    is clamped into the range instead: still in bounds, but the call does
    not fail. Each `tessel.require %ok, %v else %fallback {status}` becomes
    the same `scf.if`: `%v` where `%ok` holds, else `%fallback` and a call
    of `__tessel_set_status(status)` (with `report=false`, a select).
  }];
  let options = [
    Option<"report", "report", "bool", /*default=*/"true",
           "Fail the call on an index out of range (false: clamp it)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::tessel::TesselDialect"];
}

def TesselCheckDivisors : Pass<"tessel-check-divisors", "::mlir::ModuleOp"> {
  let summary = "Check integer divisors at run time: zero fails the call";
  let description = [{
    An integer division or remainder by zero traps (SIGFPE on x86), and so
    does the signed overflow `INT_MIN / -1`: either would kill the process
    that runs the model. Every `arith.divsi`, `divui`, `remsi`, `remui`,
    `floordivsi`, `ceildivsi` on tensors and every `tosa.intdiv` whose
    divisor is not a constant free of 0 (and, signed, of -1) gets a guarded
    divisor: 1 where it is 0, and where a signed dividend is the type's
    minimum and the divisor -1 (the quotient is then the dividend, the
    remainder 0: the wrapped results). A zero divisor also fails the entry
    call with `TESSEL_ENTRY_DIVISION_BY_ZERO` (one reduction and an
    `scf.if`, as `tessel-lower-index-checks` does). With `report=false` (a
    target whose host cannot read device values, the GPU's) the divisor
    is guarded and the call does not fail. Run before `tosa-to-linalg`.
    (A broadcasting `tosa.intdiv` gets the zero guard only: its dividend
    and divisor are not elementwise partners.)
  }];
  let options = [
    Option<"report", "report", "bool", /*default=*/"true",
           "Fail the call on a zero divisor (false: divide by 1)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

def TesselResultsToOutParams
    : Pass<"tessel-results-to-out-params", "::mlir::ModuleOp"> {
  let summary = "Make an entry's results out-params, except run-time-shaped ones";
  let description = [{
    The runtime allocates an entry's outputs before the call: upstream
    `buffer-results-to-out-params` (with static allocations hoisted) makes
    each returned buffer a trailing out-parameter. A function recorded in
    `tessel.functions` with an output whose size follows from the data
    (dimension name "?", artifact ABI v6) is left out: it keeps returning
    its buffers, and its entry (tessel-emit-artifact-abi) copies them to
    the caller, each as one block: a returned buffer other than a fresh
    allocation (a view, whose strides may not be row-major) is first
    copied into one (`linalg.copy`). With `run-time-results=false` (a target whose host cannot
    read results, the GPU) such a function is an error.
  }];
  let options = [
    Option<"runTimeResults", "run-time-results", "bool", /*default=*/"true",
           "Allow entries with run-time-shaped outputs (returned buffers)">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::memref::MemRefDialect"];
}

def TesselCopyRepeatedResults
    : Pass<"tessel-copy-repeated-results", "::mlir::ModuleOp"> {
  let summary = "Give every result of a public function its own tensor";
  let description = [{
    Each result of an entry point becomes its own out-parameter buffer
    (buffer-results-to-out-params), so a value returned more than once
    (`return %y, %y`) must be materialized once per result. This pass, run
    on tensors right before bufferization, replaces every repeat of a
    returned value in a public function by a copy
    (`bufferization.alloc_tensor() copy(%y)`); the first occurrence stays
    as is.
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect"];
}

def TesselEmitArtifactABI : Pass<"tessel-emit-artifact-abi", "::mlir::ModuleOp"> {
  let summary = "Emit the artifact manifest and entry points (LLVM dialect)";
  let description = [{
    Runs on the LLVM dialect, after every memref has become a descriptor.
    For each function in `tessel.functions` it adds
    `llvm.func @tessel_entry_<name>(!llvm.ptr buffers, !llvm.ptr context) -> i32`
    which loads one data pointer per input and output from `buffers` and
    calls the lowered function with static descriptors; the lowered function
    becomes internal. It also adds the NUL-terminated constant
    `tessel_artifact_manifest`. See docs/artifact-abi.md.
  }];
  let options = [
    Option<"targetTriple", "target-triple", "std::string", /*default=*/"\"\"",
           "Triple written to the manifest (default: the host's)">,
    Option<"cpuFeatures", "cpu-features", "std::string", /*default=*/"\"\"",
           "Comma-separated CPU features the code needs (names from "
           "include/tessel/Runtime/CpuFeatures.def), written to the "
           "manifest's `requires` record (ABI version 4) so the runtime "
           "refuses a CPU without them">,
    Option<"device", "device", "std::string", /*default=*/"\"\"",
           "The device the kernels run on, written to the manifest's "
           "`device` record (ABI version 5): `cuda sm_NN`. Empty: the CPU">,
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def TesselStridedCopyToLinalg
    : Pass<"tessel-strided-copy-to-linalg", "::mlir::func::FuncOp"> {
  let summary = "Rewrite memref.copy between strided buffers as linalg.copy";
  let description = [{
    `finalize-memref-to-llvm` lowers a `memref.copy` whose operands are not
    both contiguous to a call to `memrefCopy` from MLIR's C runner-utils
    library. Artifacts must depend on nothing but libc/libm, so such copies
    become `linalg.copy`, which later lowers to plain loops. Copies between
    identity-layout buffers stay `memref.copy` (an `llvm.memcpy`).
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def TesselPlanBuffers
    : Pass<"tessel-plan-buffers", "::mlir::func::FuncOp"> {
  let summary = "Place a function's intermediate buffers in one arena";
  let description = [{
    Static buffer planning after bufferization and deallocation: each
    statically shaped `memref.alloc` of the entry block with its single
    `memref.dealloc` in the same block becomes a `memref.view` at an offset
    of one arena (64-byte aligned), chosen so that buffers with overlapping
    live ranges (alloc to dealloc, in program order) never overlap in
    memory. The planned deallocs are removed; the arena is allocated at
    entry and freed before the return. The function gets
    `tessel.arena_bytes` (arena size) and `tessel.planned_bytes` (sum of
    the planned buffers) attributes. Buffers in loops or with deallocs
    elsewhere are left alone.

    Buffers whose shapes hold run-time sizes (a symbolic batch) are planned
    the same way, one arena per multiset of `memref.alloc` size operands:
    each such buffer is the product of its sizes times a fixed number of
    bytes, so offsets planned in those units hold for every size. The
    arena (`memref<?xi8>`, the product times the plan's bytes) is
    allocated at the group's first buffer; the views' offsets are the
    product times the planned ones. A set with a single buffer is left to
    the allocator.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

def TesselKernelsToCalls
    : Pass<"tessel-kernels-to-calls", "::mlir::ModuleOp"> {
  let summary = "Lower kernel ops on memrefs to calls into the kernel library";
  let description = [{
    After bufferization: `tessel.packed_conv2d`, `tessel.depthwise_conv2d`,
    f32 `linalg.depthwise_conv_2d_nhwc_hwc(m)` (channel multiplier 1) and
    dense f32 `linalg.transpose`s that are batched 2-D transposes once
    adjacent dims are grouped (run-time weight packing, NCHW to NHWC)
    become `func.call`s of the kernel library's functions. Which op becomes
    which call, and each argument, are described per kernel in
    include/tessel/Kernels/Kernels.td (the marshalling is generated from
    it, docs/pipeline/kernels.md); each buffer is passed as an
    `!llvm.ptr` to its first element plus its strides, so every layout
    bufferization produces (subviews included) is handled. tessel-compile
    links the kernel library into the artifact; `tessel-emit-artifact-abi`
    passes the invoke context (thread count) to it.
  }];
  let options = [
    Option<"panelWidth", "panel-width", "int64_t", /*default=*/"TESSEL_KERNEL_NR",
           "The kernel library's NR: packed_conv2d must use this panel width">,
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect",
                           // linalg depthwise convs become tessel.depthwise_conv2d
                           "::mlir::tessel::TesselDialect"];
}

def TesselOutlineParallelLoops
    : Pass<"tessel-outline-parallel-loops", "::mlir::ModuleOp"> {
  let summary = "Run outermost scf.parallel loops on the kernel library's "
                "thread pool";
  let description = [{
    Each outermost `scf.parallel` without reductions, with enough work (the
    estimated element operations of its whole nest, at least `min-work`;
    a dimension of run-time size counts once) is split along its first
    parallel dimension of two or more iterations known at compile time
    into up to `max-tasks` contiguous chunks (dimensions of run-time size,
    such as a batch, run whole in each task). The nest is
    outlined into a private task function `(!llvm.ptr context, i64 task)`
    that runs one chunk, and replaced by a call of
    `tessel_kernel_parallel_for(ntasks, task function, context)` (see
    include/tessel/Kernels/Kernels.td). The context is a stack struct
    holding what the nest uses from outside: each buffer as its aligned
    pointer, offset, sizes and strides (rebuilt as a memref descriptor in
    the task function), and each scalar; constants and `memref.get_global`s
    are re-created inside instead. Nests that call functions or allocate
    stay serial. With one thread, the tasks run in order on the calling
    thread.
  }];
  let options = [
    Option<"minWork", "min-work", "int64_t", /*default=*/"65536",
           "Smallest estimated work (element operations) worth dispatching">,
    Option<"maxTasks", "max-tasks", "int64_t", /*default=*/"64",
           "Most tasks per loop nest">,
    Option<"minTaskWork", "min-task-work", "int64_t", /*default=*/"8192",
           "Smallest estimated work per task">,
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def TesselMPIToCalls : Pass<"tessel-mpi-to-calls", "::mlir::ModuleOp"> {
  let summary = "Lower the MPI collectives on memrefs to calls of the MPI "
                "runtime part";
  let description = [{
    After bufferization: `tessel.all_to_all_v` becomes a call of
    `tessel_mpi_all_to_all_v(comm, input, send_rows, init, recv_rows,
    row_bytes)` and `tessel.all_gather` one of `tessel_mpi_all_gather(comm,
    input, init, bytes)` (lib/RuntimeMPI, linked into the artifact with the
    system's libmpi), buffers as pointers to their first elements (strided
    ones through dense copies). A module that uses MPI gets upstream's
    `dlti.map` entry `"MPI:Implementation"`, which upstream's MPI-to-LLVM
    lowering of `mpi.comm_world` and `mpi.comm_rank` reads, so both sides
    agree on the communicator handle.
  }];
  let options = [
    Option<"implementation", "implementation", "std::string",
           /*default=*/"\"OpenMPI\"",
           "the MPI the artifact links, whose ABI upstream's lowering "
           "follows: OpenMPI or MPICH">
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::DLTIDialect"];
}

def TesselImportsToCalls
    : Pass<"tessel-imports-to-calls", "::mlir::ModuleOp"> {
  let summary = "Lower tessel.call_import on memrefs to calls through the "
                "import table";
  let description = [{
    After bufferization: each `tessel.call_import` becomes a call of
    `__tessel_call_import(slot, buffers)` (slot = the import's position in
    `tessel.imports`; buffers = an `!llvm.ptr` array, allocated once at
    function entry, of pointers to the inputs then the outputs, as an entry
    point takes them). Strided buffers are passed through dense copies.
    When the call returns non-zero (the import is unresolved or failed),
    the outputs are zero-filled. `tessel-emit-artifact-abi` defines the
    helper: it loads the slot of the table `tessel_artifact_imports`,
    forwards the running entry's `context` and records the failure for the
    entry to return.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::scf::SCFDialect"];
}


//===----------------------------------------------------------------------===//
// GPU targets (docs/pipeline/cuda.md)
//===----------------------------------------------------------------------===//

def TesselGpuPlaceBuffers
    : Pass<"tessel-gpu-place-buffers", "::mlir::func::FuncOp"> {
  let summary = "Put a function's buffers in device memory, with the copies "
                "its host arguments need";
  let description = [{
    The artifact ABI passes host buffers; a GPU target computes on device
    buffers. After bufferization (and `convert-linalg-to-parallel-loops`),
    this pass, on each function with a body:
    - gives every memref argument a device twin (`gpu.alloc`), copies the
      inputs in at entry and the outputs (the trailing out-params that
      `tessel.functions` lists as outputs) back before each return;
    - turns the host-level `memref.alloc`/`memref.alloca`/`memref.dealloc`
      into `gpu.alloc`/`gpu.dealloc` (buffers inside loop bodies, which
      become kernels, stay thread-private);
    - copies each constant `memref.get_global` used by the function into a
      device buffer at entry;
    - turns host-level `memref.copy` between identity-layout buffers into
      `gpu.memcpy`.
    Only host-level ops (not nested in an `scf.parallel`) are touched.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::memref::MemRefDialect"];
}

def TesselGpuMapParallelLoops
    : Pass<"tessel-gpu-map-parallel-loops", "::mlir::func::FuncOp"> {
  let summary = "Run each host-level loop nest as a GPU kernel";
  let description = [{
    Each outermost `scf.parallel` becomes a `gpu.launch` of one thread per
    iteration of its whole iteration space, linearized (the innermost
    dimension fastest, so neighbouring threads touch neighbouring
    elements), in blocks of `block-size` threads, with a bounds check for
    the last block. Any other host-level op that reads or writes memory
    (a loop of a reduction to a scalar, a `linalg` op left over) runs in a
    one-thread kernel, so no host code dereferences device memory.
    Loops with results (`scf.reduce`) and ops with regions that mix
    memory accesses with nested parallel loops are rejected with a
    diagnostic.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def TesselGpuTileMatmul
    : Pass<"tessel-gpu-tile-matmul", "::mlir::func::FuncOp"> {
  let summary = "f32 matmuls and convolutions as tiled GPU kernels "
                "(shared-memory tiles, register blocking)";
  let description = [{
    Each f32 `linalg.matmul` / `linalg.batch_matmul` (default indexing
    maps) and `linalg.conv_2d_nhwc_fhwc` on buffers becomes a `gpu.launch`
    computing a GEMM: a block of 256 threads computes a 128x128 tile of the
    result, staging 8-deep slices of both operands in workgroup memory;
    each thread keeps an 8x8 block of sums in registers (rows `ty + 16 i`,
    columns `tx + 16 j`, so that neighbouring threads read neighbouring
    shared-memory words and write neighbouring result elements). A
    convolution is the GEMM of rows (n, oh, ow), columns f and depth
    (kh, kw, c) whose rows are gathered from the input as they are loaded
    (implicit GEMM, no im2col buffer). Loads past an edge read zeros
    (clamped addresses, selected away) and stores past it are skipped: any
    size. The result is accumulated onto the output's current contents (its
    `linalg.fill`), as the linalg op does. The batch is the grid's z
    dimension. Products with few output tiles and a long K are split along
    K (split-K) into a workspace whose slices a second kernel adds up in
    order.

    With `precision=f16` or `bf16` the products run on the tensor cores
    (mma.sync m16n8k16, f32 sums): the operands are rounded to that type
    (to nearest even) as they are staged in 16-deep slices, eight warps per
    block each compute a 64x32 block of 4x4 mma tiles. f16 goes through
    `nvgpu.mma.sync`; bf16 straight to `nvvm.mma.sync` (each bf16 pair one
    i32 register), as upstream's nvgpu lowering has no PTX type for bf16.

    With `wgmma` (Hopper, `--cuda-arch=sm_90a`), matmuls and batch matmuls
    whose operands are f16 in memory (row-major A [M][K], B [K][N],
    identity layouts, rows 16-byte aligned) use Hopper's asynchronous units
    instead: a warp-specialized kernel in which one warpgroup issues TMA
    copies of 128x64 and 64x256 (or 64x128) operand tiles into a ring of
    shared-memory stages, guarded by mbarriers, and two warpgroups multiply
    them with `wgmma` (f32 sums in registers). TMA zero-fills past the
    edges, so any M and any N and K that are multiples of 8 work with one
    batch; several batches need M a multiple of 128 and K of 64.
  }];
  let options = [
    Option<"precision", "precision", "std::string", /*default=*/"\"f32\"",
           "What the products multiply: f32 (CUDA cores), f16 or bf16 "
           "(tensor cores, f32 sums)">,
    Option<"wgmma", "wgmma", "bool", /*default=*/"false",
           "16-bit matmuls as TMA + wgmma kernels (sm_90a)">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::nvgpu::NVGPUDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def TesselGpuFoldFillCopies
    : Pass<"tessel-gpu-fold-fill-copies", "::mlir::func::FuncOp"> {
  let summary = "Copies out of a buffer that only a fill writes become "
                "fills of their targets";
  let description = [{
    Bufferization fills a buffer with a constant (a matmul's zero init) and
    copies it wherever the tensor was used: on a GPU a fill kernel and a
    device copy per use. For a `memref.alloc` whose uses are one
    `linalg.fill` (first), `memref.copy` ops out of it and its deallocs,
    each copy becomes a `linalg.fill` of the same value into the copy's
    target, and the buffer goes. A zero fill right before a contraction
    then folds into its kernel (`tessel-gpu-tile-matmul`). For buffers not
    yet planned into an arena (a view of the buffer is another use, and
    stops the rewrite).
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def TesselGpuParallelLoopsFirst
    : Pass<"tessel-gpu-parallel-loops-first", "::mlir::func::FuncOp"> {
  let summary = "Interchange a linalg.generic's loops so that every "
                "parallel loop is outside every reduction loop";
  let description = [{
    On a GPU the outermost parallel loops of an op become its threads
    (one per iteration); parallel loops nested inside a reduction loop run
    inside each thread. A reduction over a middle dimension (a global
    average pool over NHWC: parallel n, reduction h and w, parallel c)
    would run in as many threads as its leading parallel loops have
    iterations: one. This pass permutes the loops of each such
    `linalg.generic` (buffers or tensors; not contractions or
    convolutions, which are tiled kernels) to all parallel loops, in
    order, then all reduction loops, in order. The results are the same:
    each output element's reduction visits its elements in the same order.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def TesselGpuFuseRows
    : Pass<"tessel-gpu-fuse-rows", "::mlir::func::FuncOp"> {
  let summary = "Row reductions and the ops around them over the same rows "
                "as one kernel of one block per row";
  let description = [{
    Softmax and the normalizations are runs of linalg ops over the same
    rows: reductions over each row's trailing loops (max, sum, sum of
    squares) and elementwise ops that use a row's results. Each such run
    becomes one `gpu.launch` of one block per row: the ops in program
    order, each over the row's elements with the threads striding, a
    `gpu.barrier` between them; a reduction is each thread's partial, a
    tree of `gpu.shuffle xor` per warp and one step through workgroup
    memory, and thread 0 combines the row's value with the output's, as
    the linalg op accumulates.

    A run starts at a reduction (static shapes, the combine an associative,
    commutative arith op with a neutral element, on f32 or i32) over at
    least `min-cols` elements a row, and takes in the adjacent
    `linalg.generic` and `linalg.fill` ops (only ops that touch no memory
    between them) whose leading loops span the same rows: reductions
    always, elementwise ops where there are at least `min-rows` rows. Every
    access to a buffer the run writes must stay in its row (the operand's
    leading indices are the row loops in order over the buffer's leading
    dims, identity layout), so no block sees another's data; otherwise the
    run shrinks to the reduction alone.
  }];
  let options = [
    Option<"minCols", "min-cols", "int64_t", /*default=*/"32",
           "Fewest elements a row for a reduction to take a block per row">,
    Option<"minRows", "min-rows", "int64_t", /*default=*/"64",
           "Fewest rows for elementwise ops to join a run">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def TesselGpuExternDynamicShared
    : Pass<"tessel-gpu-extern-dynamic-shared", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Dynamic shared memory as the extern array PTX expects";
  let description = [{
    Runs on kernel modules in the LLVM dialect (after
    `convert-gpu-to-nvvm`). `gpu.dynamic_shared_memory` lowers to an
    internal zero-length global in shared memory; NVPTX then demotes it
    into the kernel as an ordinary one-byte `.shared` variable, placed
    among the static ones (the mbarriers), so the dynamic bytes a kernel
    addresses from it overlap them. With external linkage it is emitted as
    `.extern .shared .b8 name[]`, which starts where the launch's dynamic
    shared memory starts, after every static variable.
  }];
}

def TesselGpuResidentConstants
    : Pass<"tessel-gpu-resident-constants", "::mlir::ModuleOp"> {
  let summary = "Keep the model's constants on the device across calls";
  let description = [{
    Runs on the LLVM dialect after `gpu-to-llvm`. A device buffer that is
    allocated (`mgpuMemAlloc`), filled from a constant global
    (`mgpuMemcpy` from its address) and freed (`mgpuMemFree`) in every call
    becomes one call to the device runtime's `__tessel_cuda_constant(host,
    bytes, stream)`, which copies the constant to the device on the first
    call and returns the same device copy afterwards (freed when the
    artifact is unloaded): weights cross the bus once, not per call.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // TESSEL_CONVERSION_PASSES
