// tessel-opt is MlirOptMain: the standard mlir-opt flags work, and Tessel's
// passes and named pipelines are registered.
// RUN: tessel-opt %s --pass-pipeline="builtin.module(tessel-model-to-linalg)" --mlir-timing -o /dev/null 2>&1 | FileCheck %s --check-prefix=TIMING
// RUN: tessel-opt %s --pass-pipeline="builtin.module(tessel-model-to-linalg)" --mlir-print-ir-after-all -o /dev/null 2>&1 | FileCheck %s --check-prefix=PRINT
// RUN: tessel-opt --help | FileCheck %s --check-prefix=HELP
// RUN: not tessel-opt %s --no-such-flag 2>&1 | FileCheck %s --check-prefix=FLAG
// RUN: not tessel-opt %s --pass-pipeline="builtin.module(no-such-pass)" 2>&1 | FileCheck %s --check-prefix=PASS

// TIMING: Execution time report
// TIMING: TesselRecordSignature
// TIMING: TesselDecomposeGraphOps
// PRINT: IR Dump After TesselRecordSignature (tessel-record-signature)
// PRINT: IR Dump After TesselDecomposeGraphOps (tessel-decompose-graph-ops)
// HELP-DAG: --compose-lower-route
// HELP-DAG: --compose-extract-component
// HELP-DAG: --compose-lower-memory
// HELP-DAG: --compose-inline-components
// HELP-DAG: --compose-generalize-token-dim
// HELP-DAG: --compose-lower-external-calls
// HELP-DAG: --tessel-imports-to-calls
// HELP-DAG: --tessel-decompose-graph-ops
// HELP-DAG: --tessel-emit-artifact-abi
// HELP-DAG: --tessel-record-signature
// HELP-DAG: --tessel-strided-copy-to-linalg
// HELP-DAG: --tessel-copy-repeated-results
// HELP-DAG: --tessel-model-to-linalg
// HELP-DAG: --tessel-linalg-to-buffers
// HELP-DAG: --tessel-buffers-to-llvm
// HELP-DAG: --tessel-model-to-llvm
// FLAG: Unknown command line argument '--no-such-flag'
// PASS: 'no-such-pass' does not refer to a registered pass or pass pipeline

func.func @main(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %y = tessel.softmax %x {axis = -1 : i64} : tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}
