//===- TesselImportOps.td - calls of functions linked at load time -*- tablegen -*-===//
//
// Separate compilation: a component that another artifact provides is
// called through a slot of the artifact's import table, which the runtime
// fills when it links the artifacts of a composition
// (docs/artifact-abi.md). The call is in destination-passing style, so the
// caller allocates the callee's outputs, as the runtime does for an entry.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_IMPORT_OPS_TD
#define TESSEL_IMPORT_OPS_TD

include "tessel/Dialect/Tessel/IR/TesselDialect.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/DestinationStyleOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Tessel_CallImportOp : Tessel_Op<"call_import",
    [AttrSizedOperandSegments, DestinationStyleOpInterface,
     DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
     DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "call of a function another artifact provides (linked at load time)";
  let description = [{
    Calls the function `callee` that is *imported*: compiled into another
    artifact and found by name when the runtime links a composition. The
    callee writes its results into `inits` (one per result, allocated by
    the caller, as the runtime allocates an entry's outputs); on tensors
    the results are the updated inits.

    `callee` names a `func.func` declaration marked `tessel.import` whose
    signature is the interface (`compose-lower-external-calls` declares one
    per external component called). `tessel-record-signature` records the
    declarations in the module attribute `tessel.imports` and erases them;
    from then on `callee` must name a record there.
    `tessel-imports-to-calls` lowers the bufferized op to an indirect call
    through the import table. A dynamic dimension is named by the
    declaration's (or record's) `tessel.dim_names`; the call passes its
    run-time size with the buffers (artifact ABI v3).

    ```mlir
    %y = tessel.call_import @decoder(%ids : tensor<6xi32>)
        outs(%init : tensor<6x4xf32>) -> tensor<6x4xf32>
    ```
  }];
  let arguments = (ins
      FlatSymbolRefAttr:$callee,
      Variadic<AnyShaped>:$inputs,
      Variadic<AnyShaped>:$inits);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = [{
    $callee `(` ($inputs^ `:` type($inputs))? `)`
    `outs` `(` $inits `:` type($inits) `)`
    attr-dict (`->` type($results)^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    MutableOperandRange getDpsInitsMutable() { return getInitsMutable(); }
  }];
}

#endif // TESSEL_IMPORT_OPS_TD
