//===- TesselDialect.td - Tessel graph dialect ------------*- tablegen -*-===//
//
// The `tessel` dialect holds the model-level ops that upstream TOSA lacks
// (softmax, normalizations, GELU, grouped convolution, mean). Everything TOSA
// already expresses stays TOSA; each tessel op decomposes into TOSA/math in
// `tessel-decompose-graph-ops`, so the upstream TOSA->linalg lowering does
// the rest.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_DIALECT_TD
#define TESSEL_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Tessel_Dialect : Dialect {
  let name = "tessel";
  let cppNamespace = "::mlir::tessel";
  let summary = "Model-level graph ops that upstream TOSA does not provide";
  let description = [{
    Tessel's model-level IR is upstream `tosa` plus elementwise `math`/`arith`
    ops on tensors plus this dialect. The ops here carry the semantics of the
    framework ops they stand for (ONNX / PyTorch) so that importers map 1:1
    and later passes (fusion, attention) can match them before they are
    decomposed.
  }];
  let useDefaultAttributePrinterParser = 1;
  // The collectives (TesselCollectiveOps.td) take upstream's `!mpi.comm`.
  let dependentDialects = ["::mlir::mpi::MPIDialect"];
  let extraClassDeclaration = [{
    /// Unit attribute marking a `func.func` declaration as an import: a
    /// function another artifact provides, linked by name at load time
    /// (`compose-lower-external-calls` declares them).
    static ::llvm::StringRef getImportAttrName() { return "tessel.import"; }
    /// Module attribute in which `tessel-record-signature` records the
    /// imports' interfaces (and erases their declarations).
    static ::llvm::StringRef getImportsAttrName() { return "tessel.imports"; }
    /// Module attribute: the MPI processes an expert-parallel module runs
    /// on (`compose-lower-route{expert-parallel=N}` sets it, the artifact
    /// ABI records it as `ranks N`).
    static ::llvm::StringRef getRanksAttrName() { return "tessel.ranks"; }
  }];
}

class Tessel_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tessel_Dialect, mnemonic, traits>;

#endif // TESSEL_DIALECT_TD
