//===- ComposeOps.td - Composable-model dialect -----------*- tablegen -*-===//
//
// A model as a composition of separately built components: components with
// typed interfaces, instances that several call sites share, a control path
// (route) that activates a few expert components per token, and an external
// memory read and written at computed locations.
//
//===----------------------------------------------------------------------===//
#ifndef COMPOSE_OPS_TD
#define COMPOSE_OPS_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/CallInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/FunctionInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/RegionKindInterface.td"

def Compose_Dialect : Dialect {
  let name = "compose";
  let cppNamespace = "::mlir::tessel::compose";
  let summary = "Composable models: components, instances, routing, memory";
  let description = [{
    A large model is composed from components; only a few are active per
    input (sparse activation), chosen by a control path (a gate) while data
    flows on a data path; components may be shared across tasks and built
    separately; an external memory is read and written at computed
    locations. See docs/dialects/compose.md.
  }];
  let useDefaultAttributePrinterParser = 1;
}

class Compose_Op<string mnemonic, list<Trait> traits = []>
    : Op<Compose_Dialect, mnemonic, traits>;

def Compose_FloatTensor : RankedTensorOf<[F16, BF16, F32, F64]>;
def Compose_Float2DTensor : 2DTensorOf<[F16, BF16, F32, F64]>;
def Compose_Index1DTensor : 1DTensorOf<[I32, I64]>;

def Compose_ComponentState : I32EnumAttr<"ComponentState",
    "whether a component's weights may still change", [
      I32EnumAttrCase<"Trainable", 0, "trainable">,
      I32EnumAttrCase<"Frozen", 1, "frozen">]> {
  let cppNamespace = "::mlir::tessel::compose";
  let genSpecializedAttr = 0;
}
def Compose_ComponentStateAttr
    : EnumAttr<Compose_Dialect, Compose_ComponentState, "state"> {
  let assemblyFormat = "`<` $value `>`";
}

def Compose_WriteMode : I32EnumAttr<"WriteMode",
    "how a memory write combines with the slot's old row", [
      I32EnumAttrCase<"Overwrite", 0, "overwrite">,
      I32EnumAttrCase<"Add", 1, "add">]> {
  let cppNamespace = "::mlir::tessel::compose";
  let genSpecializedAttr = 0;
}
def Compose_WriteModeAttr
    : EnumAttr<Compose_Dialect, Compose_WriteMode, "write_mode"> {
  let assemblyFormat = "`<` $value `>`";
}

def Compose_Similarity : I32EnumAttr<"Similarity",
    "how a content-based lookup scores a memory slot", [
      I32EnumAttrCase<"Dot", 0, "dot">,
      I32EnumAttrCase<"Cosine", 1, "cosine">]> {
  let cppNamespace = "::mlir::tessel::compose";
  let genSpecializedAttr = 0;
}
def Compose_SimilarityAttr
    : EnumAttr<Compose_Dialect, Compose_Similarity, "similarity"> {
  let assemblyFormat = "`<` $value `>`";
}

//===----------------------------------------------------------------------===//
// Components, instances, calls
//===----------------------------------------------------------------------===//

def Compose_ComponentOp : Compose_Op<"component", [
    AffineScope, AutomaticAllocationScope, FunctionOpInterface,
    IsolatedFromAbove, RegionKindInterface, Symbol]> {
  let summary = "A named, reusable unit of a model with a typed interface";
  let description = [{
    A function-like unit: its signature is its interface (tensor types,
    including `!sym.symbol<V>` element types when the component requires
    discrete symbols at its boundary). A component without a body is
    external: another artifact provides it and the runtime links it by name.

    - `state`: `frozen` (weights fixed; shared or compressed separately) or
      `trainable` (the default);
    - `precision`: the element type it computes in (f32, f16, bf16, i8);
    - `sparsity`: the sparsity policy, a string such as `"2:4"` or
      `"dense"` that the sparsity passes read.

    ```mlir
    compose.component @expert(%x: tensor<?x256xf32>) -> tensor<?x256xf32>
        attributes {state = #compose.state<frozen>, precision = f32} {
      ...
      compose.return %y : tensor<?x256xf32>
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<FunctionType>:$function_type,
                       OptionalAttr<StrAttr>:$sym_visibility,
                       OptionalAttr<DictArrayAttr>:$arg_attrs,
                       OptionalAttr<DictArrayAttr>:$res_attrs,
                       OptionalAttr<Compose_ComponentStateAttr>:$state,
                       OptionalAttr<TypeAttr>:$precision,
                       OptionalAttr<StrAttr>:$sparsity);
  let regions = (region AnyRegion:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::Region *getCallableRegion() {
      return isExternal() ? nullptr : &getBody();
    }
    ArrayRef<Type> getArgumentTypes() { return getFunctionType().getInputs(); }
    ArrayRef<Type> getResultTypes() { return getFunctionType().getResults(); }
    static ::mlir::RegionKind getRegionKind(unsigned) {
      return ::mlir::RegionKind::SSACFG;
    }
    bool isDeclaration() { return isExternal(); }
  }];
}

def Compose_ReturnOp : Compose_Op<"return", [
    Pure, HasParent<"ComponentOp">, ReturnLike, Terminator]> {
  let summary = "Returns a component's results";
  let arguments = (ins Variadic<AnyType>:$operands);
  let assemblyFormat = "attr-dict ($operands^ `:` type($operands))?";
  let hasVerifier = 1;
}

def Compose_InstanceOp : Compose_Op<"instance", [
    Symbol, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "A named instance of a component that call sites share";
  let description = [{
    Names one copy of a component's weights. Every `compose.call` of the
    instance uses those same weights (multi-task sharing: two task heads
    calling one encoder instance); the instance is also the unit that a
    composition manifest binds to an artifact at load time.

    ```mlir
    compose.instance @shared_encoder of @encoder
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       FlatSymbolRefAttr:$component);
  let assemblyFormat = "$sym_name `of` $component attr-dict";
}

def Compose_CallOp : Compose_Op<"call", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Calls a component or an instance";
  let description = [{
    Operands and results must match the callee's interface: the same element
    types (symbol vocabularies included) and ranks, and equal sizes where
    both are static (a static call site may use a component whose token
    dimension is dynamic).

    ```mlir
    %y = compose.call @shared_encoder(%x) : (tensor<64x256xf32>) -> tensor<64x256xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$callee, Variadic<AnyType>:$operands);
  let results = (outs Variadic<AnyType>:$results);
  let assemblyFormat =
      "$callee `(` $operands `)` attr-dict `:` functional-type($operands, $results)";
  let extraClassDeclaration = [{
    /// The component called, directly or through an instance; null when the
    /// symbol does not resolve.
    ComponentOp resolveComponent(::mlir::SymbolTableCollection &symbols);
  }];
}

//===----------------------------------------------------------------------===//
// Routing (control path)
//===----------------------------------------------------------------------===//

def Compose_RouteOp : Compose_Op<"route", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Top-k gated dispatch of tokens to expert components";
  let description = [{
    The control path of a mixture of experts. For each token `t` (row of
    `tokens`, `T x D`), the `k` experts with the highest `scores[t, :]`
    (`T x E`, one column per entry of `experts`; ties go to the lower expert
    index) each process the token, and the results are combined weighted by
    the selected scores:

      out[t] = sum_{j<k} w[t, j] * experts[e[t, j]](tokens[t])

    with `w[t, j] = scores[t, e[t, j]]`, divided by their sum over `j` when
    `renormalize` is set (softmax -> top-k -> renormalize is Mixtral's
    top-k-then-softmax). Scores are used as given: apply the softmax before
    the route if the gate produces logits.

    Without `capacity` no token is dropped. With `capacity = C` each expert
    takes at most C assignments, in token order (lower token index first, as
    Switch/GShard do); a dropped assignment contributes zero.

    Each expert is a component (or instance) with one `? x D` argument and
    one `? x Dout` result: it runs on however many tokens reach it.

    ```mlir
    %y = compose.route %x, %probs {experts = [@e0, @e1, @e2, @e3], k = 2 : i64,
                                   renormalize}
        : (tensor<64x256xf32>, tensor<64x4xf32>) -> tensor<64x256xf32>
    ```
  }];
  let arguments = (ins Compose_Float2DTensor:$tokens,
                       Compose_Float2DTensor:$scores,
                       FlatSymbolRefArrayAttr:$experts,
                       ConfinedAttr<I64Attr, [IntMinValue<1>]>:$k,
                       UnitAttr:$renormalize,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntMinValue<1>]>>:$capacity);
  let results = (outs Compose_Float2DTensor:$output);
  let assemblyFormat = [{
    $tokens `,` $scores attr-dict `:` `(` type($tokens) `,` type($scores) `)`
    `->` type($output)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// External memory
//===----------------------------------------------------------------------===//

def Compose_MemoryReadOp : Compose_Op<"memory_read", [Pure]> {
  let summary = "Reads memory rows at computed locations";
  let description = [{
    `out[i] = memory[clamp(locations[i], 0, S - 1)]` for a memory of `S`
    slots (`S x W`). Locations are computed by the model, so an out-of-range
    location is clamped to the nearest slot instead of reading outside the
    table.

    ```mlir
    %r = compose.memory_read %mem[%loc] : tensor<128x64xf32>, tensor<8xi32> -> tensor<8x64xf32>
    ```
  }];
  let arguments = (ins Compose_Float2DTensor:$memory,
                       Compose_Index1DTensor:$locations);
  let results = (outs Compose_Float2DTensor:$output);
  let assemblyFormat = [{
    $memory `[` $locations `]` attr-dict `:` type($memory) `,`
    type($locations) `->` type($output)
  }];
  let hasVerifier = 1;
}

def Compose_MemoryWriteOp : Compose_Op<"memory_write", [
    Pure, AllTypesMatch<["memory", "output"]>]> {
  let summary = "Writes rows to memory at computed locations";
  let description = [{
    Returns the memory after writing `values[i]` (`N x W`) to slot
    `clamp(locations[i], 0, S - 1)`, for `i` in increasing order: with
    `mode = overwrite` the last write to a slot wins; with `mode = add` all
    writes to a slot are added to its old row.

    ```mlir
    %m2 = compose.memory_write %v into %mem[%loc] {mode = #compose.write_mode<add>}
        : tensor<8x64xf32>, tensor<8xi32> -> tensor<128x64xf32>
    ```
  }];
  let arguments = (ins Compose_Float2DTensor:$values,
                       Compose_Float2DTensor:$memory,
                       Compose_Index1DTensor:$locations,
                       DefaultValuedAttr<Compose_WriteModeAttr,
                           "::mlir::tessel::compose::WriteMode::Overwrite">:$mode);
  let results = (outs Compose_Float2DTensor:$output);
  let assemblyFormat = [{
    $values `into` $memory `[` $locations `]` attr-dict `:` type($values) `,`
    type($locations) `->` type($output)
  }];
  let hasVerifier = 1;
}

def Compose_MemoryLookupOp : Compose_Op<"memory_lookup", [Pure]> {
  let summary = "Content-based soft read of a key-value memory";
  let description = [{
    For each query row `q` (`N x Dk`):
    `out = softmax_s(scale * sim(q, keys[s])) . values` with keys `S x Dk`,
    values `S x Dv`; `sim` is the dot product (`dot`) or the cosine
    similarity (`cosine`, Neural-Turing-Machine content addressing with key
    strength `scale`; a zero vector has similarity 0).

    ```mlir
    %r = compose.memory_lookup %q in %keys, %vals {similarity = #compose.similarity<cosine>, scale = 5.0 : f32}
        : tensor<8x32xf32>, tensor<128x32xf32>, tensor<128x64xf32> -> tensor<8x64xf32>
    ```
  }];
  let arguments = (ins Compose_Float2DTensor:$queries,
                       Compose_Float2DTensor:$keys,
                       Compose_Float2DTensor:$values,
                       DefaultValuedAttr<Compose_SimilarityAttr,
                           "::mlir::tessel::compose::Similarity::Dot">:$similarity,
                       DefaultValuedAttr<F32Attr, "1.0f">:$scale);
  let results = (outs Compose_Float2DTensor:$output);
  let assemblyFormat = [{
    $queries `in` $keys `,` $values attr-dict `:` type($queries) `,`
    type($keys) `,` type($values) `->` type($output)
  }];
  let hasVerifier = 1;
}

#endif // COMPOSE_OPS_TD
