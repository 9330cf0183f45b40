// What the kernel library does not run goes through the vector dialect and
// the thread pool: at -O3 the SiLU + residual chain below is tiled into
// vector-register tiles sized by --mcpu (2 x 16 lanes with AVX-512, 2 x 8
// with AVX2) and its loop nest becomes a task function called through
// tessel_kernel_parallel_for. With two threads it gives the -O0 result
// (scalar loops, libm exp, one thread).
// RUN: tessel-compile %s -O3 --mcpu=x86-64-v4 --emit=mlir -o - | FileCheck %s --check-prefix=V4
// RUN: tessel-compile %s -O3 --mcpu=x86-64-v3 --emit=mlir -o - | FileCheck %s --check-prefix=V3
// RUN: tessel-compile %s -O0 --emit=mlir -o - | FileCheck %s --check-prefix=O0

// V4-LABEL: llvm.func internal @__tessel_fn_main(
// V4: llvm.mlir.addressof @__tessel_fn_main__parallel0
// V4: llvm.call @tessel_kernel_parallel_for(
// V4-LABEL: llvm.func internal @__tessel_fn_main__parallel0(
// V4: llvm.load {{.*}} -> vector<32xf32>
// V4: llvm.fmul {{.*}} : vector<32xf32>
// V4: llvm.store {{.*}} : vector<32xf32>
// V3-LABEL: llvm.func internal @__tessel_fn_main__parallel0(
// V3: llvm.load {{.*}} -> vector<16xf32>
// O0-NOT: tessel_kernel_parallel_for
// O0-NOT: vector<

// RUN: rm -rf %t.in && mkdir -p %t.in
// RUN: tessel-compile %s -O0 -o %t.O0.so
// RUN: tessel-compile %s -O3 -o %t.O3.so
// RUN: tessel-run %t.O0.so --print_signature | %python %S/../../scripts/random_inputs.py %t.in
// RUN: tessel-run %t.O0.so --input=@%t.in/input0_x.npy --input=@%t.in/input1_r.npy --output=@%t.ref.npy
// RUN: tessel-run %t.O3.so --input=@%t.in/input0_x.npy --input=@%t.in/input1_r.npy --threads=2 --expected_output=@%t.ref.npy --rtol=1e-5 --atol=1e-6 | FileCheck %s --check-prefix=MATCH
// RUN: tessel-run %t.O3.so --input=@%t.in/input0_x.npy --input=@%t.in/input1_r.npy --threads=1 --expected_output=@%t.ref.npy --rtol=1e-5 --atol=1e-6 | FileCheck %s --check-prefix=MATCH
// MATCH: [SUCCESS] all outputs match

func.func @main(%x: tensor<1x40x40x64xf32> {tessel.name = "x"},
                %r: tensor<1x40x40x64xf32> {tessel.name = "r"})
    -> (tensor<1x40x40x64xf32> {tessel.name = "y"}) {
  %s = tosa.sigmoid %x : (tensor<1x40x40x64xf32>) -> tensor<1x40x40x64xf32>
  %shift = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %m = tosa.mul %x, %s, %shift : (tensor<1x40x40x64xf32>, tensor<1x40x40x64xf32>, tensor<1xi8>) -> tensor<1x40x40x64xf32>
  %y = tosa.add %m, %r : (tensor<1x40x40x64xf32>, tensor<1x40x40x64xf32>) -> tensor<1x40x40x64xf32>
  return %y : tensor<1x40x40x64xf32>
}
