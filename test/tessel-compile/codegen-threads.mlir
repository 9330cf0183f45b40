// LLVM's optimization and code generation in parts, on threads: the
// artifact exports only the ABI (the symbols the split made global stay
// hidden) and computes what the one-part artifact computes.
// RUN: tessel-compile %s -O3 --codegen-threads=3 --mlir-timing -o %t.parts.so 2>&1 | FileCheck %s --check-prefix=TIMING
// RUN: llvm-nm -D --defined-only %t.parts.so | FileCheck %s --check-prefix=LIB
// RUN: tessel-compile %s -O3 --codegen-threads=1 -o %t.one.so
// RUN: tessel-run %t.one.so --input=2x8xf32=0.25,-1,2,0.5,3,-0.75,1.5,0,-2,1,0.125,-3,2.5,0.75,-0.5,1.25 --input=2x8xf32=-1.5,0.5,1,-0.25,0,2,-1,0.375,1.5,-2,0.25,1,-0.5,0.625,2,-1.25 --output=@%t.one.npy
// RUN: tessel-run %t.parts.so --input=2x8xf32=0.25,-1,2,0.5,3,-0.75,1.5,0,-2,1,0.125,-3,2.5,0.75,-0.5,1.25 --input=2x8xf32=-1.5,0.5,1,-0.25,0,2,-1,0.375,1.5,-2,0.25,1,-0.5,0.625,2,-1.25 --expected_output=@%t.one.npy --atol=0 --rtol=0 | FileCheck %s --check-prefix=SAME
// A small module stays one part unless parts are asked for.
// RUN: tessel-compile %s -O3 --mlir-timing -o %t.auto.so 2>&1 | FileCheck %s --check-prefix=AUTO

// TIMING: LLVM optimization and code generation, in parts
// TIMING: Link
// LIB-NOT: main
// LIB: R tessel_artifact_manifest
// LIB-NEXT: T tessel_entry_main
// LIB-NOT: T
// SAME: [SUCCESS]
// AUTO-NOT: in parts
// AUTO: LLVM optimization
// AUTO: Code generation

func.func @main(%a: tensor<2x8xf32>, %b: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0 = tosa.add %a, %b : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %1 = tosa.exp %0 : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %2 = tosa.mul %1, %a, %shift : (tensor<2x8xf32>, tensor<2x8xf32>, tensor<1xi8>) -> tensor<2x8xf32>
  return %2 : tensor<2x8xf32>
}
