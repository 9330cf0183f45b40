//===- Passes.td - compose dialect lowerings ---------------*- tablegen -*-===//
#ifndef TESSEL_DIALECT_COMPOSE_TRANSFORMS_PASSES
#define TESSEL_DIALECT_COMPOSE_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def ComposeLowerRoute : Pass<"compose-lower-route", "ModuleOp"> {
  let summary = "Lower compose.route to top-k selection, expert calls and a "
                "gate-weighted combine";
  let description = [{
    Both forms first select each token's top-k experts with `tessel.top_k`
    (lowest index on ties; `tessel-decompose-graph-ops` expands it) and
    optionally renormalize the weights.

    - `mode=grouped` (default; MegaBlocks style): a counting sort groups the
      token/expert assignments by expert (`scf.for` over the assignments:
      per-expert counts, offsets, each assignment's row), the tokens are
      gathered into that order, each expert runs on exactly its own rows
      (`tensor.extract_slice` of a run-time size: no padding to capacity),
      and the combine gathers each token's k result rows and sums them
      weighted by the gate.
    - `mode=dense`: the reference form; every expert runs on every token and
      the outputs are summed weighted by a `T x E` gate matrix that is zero
      outside each token's top k.

    With `capacity`, assignments past an expert's capacity (in token order)
    are dropped in both forms.

    With `expert-parallel=N` (N > 1) the grouped form runs across N MPI
    processes (docs/scale-out.md): each holds a block of the experts
    (`placement`: how many each, in rank order; default as even as
    possible, the first processes taking one more) and a contiguous share
    of the tokens; the rows travel to their experts' owners and back with
    `tessel.all_to_all_v`, after a `tessel.all_gather` of the per-expert
    counts, and every process ends with the whole result. The module gets
    `tessel.ranks = N`, which the artifact's manifest records.
  }];
  let options = [
    Option<"mode", "mode", "std::string", /*default=*/"\"grouped\"",
           "grouped (run each expert on its own tokens) or dense (every "
           "expert on every token)">,
    Option<"expertParallel", "expert-parallel", "int64_t", /*default=*/"1",
           "MPI processes the experts are spread over (1: one process)">,
    ListOption<"placement", "placement", "int64_t",
               "experts on each process, in rank order (sums to the "
               "route's expert count); empty: as even as possible">
  ];
  let dependentDialects = ["::mlir::tessel::TesselDialect",
                           "::mlir::tosa::TosaDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::mpi::MPIDialect"];
}

def ComposeLowerMemory : Pass<"compose-lower-memory"> {
  let summary = "Lower compose memory ops to TOSA, tensor and scf";
  let description = [{
    `memory_read` becomes a `tosa.gather` of clamped locations;
    `memory_write` an `scf.for` over the written rows (so that the last
    overwrite wins and adds accumulate, in row order) of
    `tensor.insert_slice`s; `memory_lookup` the similarity matmul, a
    numerically stable softmax and the weighted sum of the values.
  }];
  let dependentDialects = ["::mlir::tosa::TosaDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::tessel::TesselDialect"];
}

def ComposeExtractComponent : Pass<"compose-extract-component", "ModuleOp"> {
  let summary = "Make one component the module's entry point";
  let description = [{
    Separate compilation: the component named by `component` becomes a public
    `func.func` of the same name, interface and body, and every other
    `func.func` (the rest of the composition's graph) is erased, so the
    module compiles to an artifact holding just that component (plus the
    components it calls, inlined afterwards). Its interface must be static
    for the artifact ABI.
  }];
  let options = [
    Option<"component", "component", "std::string", /*default=*/"\"\"",
           "the component to compile on its own">
  ];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def ComposeLowerExternalCalls
    : Pass<"compose-lower-external-calls", "ModuleOp"> {
  let summary = "Call external components through the artifact's import table";
  let description = [{
    Separate compilation, the caller's side: every `compose.call` of an
    external component (one without a body, provided by another artifact),
    directly or through an instance, becomes a `tessel.call_import` of that
    component's name, with `tensor.empty` destinations for its results
    (`tensor.cast` where the call site is less static than the interface).
    The component is replaced by a `func.func` declaration of the same name
    and interface marked `tessel.import`, which `tessel-lower-sym` tags with
    the vocabularies of its symbol arguments and results and
    `tessel-record-signature` turns into an import record of the manifest.
    Instances of it are erased. The interface must be static (artifact
    ABI); an external component that is still referenced otherwise (a
    `compose.route` expert) is an error.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::tessel::TesselDialect"];
}

def ComposeInlineComponents : Pass<"compose-inline-components", "ModuleOp"> {
  let summary = "Inline component calls and drop the composition structure";
  let description = [{
    Every `compose.call` is replaced by a copy of its component's body
    (arguments of a compatible but less static type get a `tensor.cast`), so
    the rest of the pipeline compiles one function. Identical weight
    constants of a component called several times (an instance shared by
    several call sites) are merged again by CSE. Afterwards the components
    and instances are erased. A call of an external component (no body) is
    an error here: `compose-lower-external-calls` turns those into import
    calls first.
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def ComposeGeneralizeTokenDim : Pass<"compose-generalize-token-dim",
                                     "ModuleOp"> {
  let summary = "Make the token count of token-wise components dynamic";
  let description = [{
    Rewrites a component with interface `T x D -> T x Do` (a fixed token
    count, as importers produce) to `? x D -> ? x Do` when its body provably
    treats tokens independently, so that it can serve as a `compose.route`
    expert. Reshapes keep `-1` for the token dim; broadcast constants that
    span all T tokens shrink to one row (TOSA ops) or are broadcast at the
    run-time count (`linalg.broadcast`, for arith/math ops). Any op that mixes
    tokens, or is not known to be token-wise, is an error naming it. The ONNX
    importer applies the same rewrite to the experts it raises.
  }];
  let options = [
    ListOption<"components", "components", "std::string",
               "components to rewrite (default: every component with a "
               "body and a static dim 0 throughout its interface)">
  ];
  let dependentDialects = ["::mlir::tosa::TosaDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::linalg::LinalgDialect"];
}

def TesselRaiseMoE : Pass<"tessel-raise-moe", "ModuleOp"> {
  let summary = "Raise dense top-k gated mixtures of experts to compose.route";
  let description = [{
    Front ends export a mixture-of-experts layer densely: every expert runs
    on every token and its output is multiplied by a gate factor that is
    zero for the tokens not routed to it. This pass finds, in each function,

    ```
    %v, %i = tessel.top_k %s {k = K, axis = 1}   // s: T x E scores
    %y = sum over e of  g_e * expert_e(%x)  [+ unrouted addends]
    ```

    (a tree of single-use `tosa.add`, each routed leaf a `tosa.mul` of a
    gate-side `T x 1` factor and an expert output, optionally masked by
    `tosa.select(cond, ., 0)` with a gate-side condition), where

    - each factor `g_e`, a function of `%s`, `%v`, `%i` and constants, is
      proven by folding its slice of the IR on synthetic scores to equal the
      top-k weight of expert e: plain, renormalized over the k, or a softmax
      over the k top logits (Mixtral); masks must keep every routed token;
    - each `expert_e` is a private slice computing from one `T x D` value `%x`
      and constants, and treats tokens independently.

    Experts run on just their tokens (`nonzero(i == e)` positions,
    `tessel.gather` of their rows, `tessel.scatter_elements` of the weighted
    results into zeros, as ONNX exports `index_select` / `index_add`) are
    first rewritten into such dense terms, when every expert of the top-k
    is one and treats tokens independently.

    It emits one `compose.component` per expert (token dim generalized to
    `?`) and a `compose.route` in place of the sum. A candidate whose experts
    cannot be outlined is left dense with a remark saying why; look-alikes
    (wrong masks, scaled gates, a missing expert) are left as they are.
  }];
  let dependentDialects = ["::mlir::tessel::compose::ComposeDialect",
                           "::mlir::tosa::TosaDialect",
                           "::mlir::tessel::TesselDialect"];
}

#endif // TESSEL_DIALECT_COMPOSE_TRANSFORMS_PASSES
