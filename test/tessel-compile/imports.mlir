// Separate compilation, the caller's side: `main` calls the external
// component @decoder, compiled into another artifact. The call becomes an
// import call through the artifact's import table; the manifest records
// the import's interface (the symbols cross as i32 ids with their
// vocabulary) and what main uses; the table is exported next to the
// manifest and the entry. At -O0 and -O3 (kernel library path) alike.
// RUN: tessel-compile %s --compile-to=linalg -o - | FileCheck %s --check-prefix=LINALG
// RUN: tessel-compile %s -O0 --compile-to=bufferized -o - | FileCheck %s --check-prefix=BUF
// RUN: tessel-compile %s -O0 --emit=mlir -o - | FileCheck %s --check-prefix=MLIR
// RUN: tessel-compile %s -O3 --emit=mlir -o - | FileCheck %s --check-prefix=MLIR
// RUN: tessel-compile %s -o %t.so && llvm-nm -D --defined-only %t.so | FileCheck %s --check-prefix=LIB
// RUN: tessel-run %t.so --print_signature | FileCheck %s --check-prefix=SIG

// LINALG: tessel.imports = [{inputs = [{dtype = "i32", name = "ids", shape = array<i64: 4>, vocab = 8 : i64}], name = "decoder", outputs = [{dtype = "f32", name = "emb", shape = array<i64: 4, 3>}]}]
// LINALG-NOT: func.func private @decoder
// LINALG: %[[INIT:.*]] = tensor.empty() : tensor<4x3xf32>
// LINALG: tessel.call_import @decoder(%{{.*}} : tensor<4xi32>) outs(%[[INIT]] : tensor<4x3xf32>) -> tensor<4x3xf32>

// BUF: func.func @__tessel_fn_main(%{{.*}}: memref<4x8xf32> {{.*}}, %[[OUT:[^:]*]]: memref<4x3xf32>{{.*}})
// BUF: tessel.call_import @decoder(%{{.*}} : memref<4xi32>) outs(%[[OUT]] : memref<4x3xf32>)

// MLIR: llvm.mlir.global external @tessel_artifact_imports() {{.*}} : !llvm.array<1 x ptr>
// MLIR: llvm.func internal @__tessel_call_import(
// MLIR: llvm.func internal @__tessel_fn_main(
// MLIR: llvm.call @__tessel_call_import(
// MLIR: llvm.func @tessel_entry_main(
// MLIR: @tessel_artifact_manifest("tessel-artifact 4\0Atarget {{[^\\]*}}\0Arequires {{[^\\]*}}\0Aimport decoder 0\0Ainput ids i32 [4] vocab=8\0Aoutput emb f32 [4,3]\0Aend\0Afunction main tessel_entry_main\0Ainput x f32 [4,8]\0Aoutput y f32 [4,3]\0Auses decoder\0Aend\0A\00")

// LIB: B tessel_artifact_imports
// LIB: R tessel_artifact_manifest
// LIB: T tessel_entry_main

// SIG: func main(x: 4x8xf32) -> (y: 4x3xf32)
compose.component private @decoder(tensor<4x!sym.symbol<8>> {tessel.name = "ids"}) -> (tensor<4x3xf32> {tessel.name = "emb"})
func.func @main(%x: tensor<4x8xf32> {tessel.name = "x"}) -> (tensor<4x3xf32> {tessel.name = "y"}) {
  %s = sym.argmax %x : tensor<4x8xf32> -> tensor<4x!sym.symbol<8>>
  %y = compose.call @decoder(%s) : (tensor<4x!sym.symbol<8>>) -> tensor<4x3xf32>
  %z = tosa.exp %y : (tensor<4x3xf32>) -> tensor<4x3xf32>
  return %z : tensor<4x3xf32>
}
