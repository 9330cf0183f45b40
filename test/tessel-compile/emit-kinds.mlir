// Every --emit kind and --compile-to phase writes what it names.
// RUN: tessel-compile %s --emit=mlir -o - | FileCheck %s --check-prefix=MLIR
// RUN: tessel-compile %s --emit=llvm -O2 -o - | FileCheck %s --check-prefix=LLVMIR
// RUN: tessel-compile %s --emit=obj -o %t.o && llvm-nm %t.o | FileCheck %s --check-prefix=OBJ
// RUN: tessel-compile %s -o %t.so && llvm-nm -D --defined-only %t.so | FileCheck %s --check-prefix=LIB
// RUN: tessel-compile %s --compile-to=input -o - | FileCheck %s --check-prefix=INPUT
// RUN: tessel-compile %s --compile-to=linalg -o - | FileCheck %s --check-prefix=LINALG
// RUN: tessel-compile %s --compile-to=bufferized -o - | FileCheck %s --check-prefix=BUF
// RUN: tessel-compile %s --mcpu=x86-64-v3 -O0 -o %t.v3.so
// RUN: tessel-compile %s --mlir-timing -o %t.timed.so 2>&1 | FileCheck %s --check-prefix=TIMING
// Pass-manager instrumentation knows Tessel's passes by name.
// RUN: tessel-compile %s --compile-to=linalg -o /dev/null --mlir-print-ir-after=tessel-convert-to-kernels 2>&1 | FileCheck %s --check-prefix=PRINT
// PRINT: IR Dump After TesselConvertToKernels (tessel-convert-to-kernels)

// MLIR: llvm.func @tessel_entry_main(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) -> i32
// LLVMIR: @tessel_artifact_manifest = {{.*}}constant [{{[0-9]+}} x i8] c"tessel-artifact 4
// LLVMIR: define {{.*}}i32 @tessel_entry_main(ptr {{.*}}, ptr {{.*}})
// OBJ: R tessel_artifact_manifest
// OBJ: T tessel_entry_main
// Only the ABI is exported.
// LIB-NOT: main
// LIB: R tessel_artifact_manifest
// LIB-NEXT: T tessel_entry_main
// LIB-NOT: T
// INPUT: tosa.add
// LINALG: linalg.generic
// LINALG-NOT: tosa.add
// BUF: func.func @__tessel_fn_main(%{{.*}}: memref<4xf32>, %{{.*}}: memref<4xf32>, %{{.*}}: memref<4xf32>)
// TIMING: Execution time report
// TIMING: Parse input
// TIMING: MLIR pipeline
// TIMING: TesselDecomposeGraphOps
// TIMING: LLVM optimization
// TIMING: Code generation
// TIMING: Link

func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tosa.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
