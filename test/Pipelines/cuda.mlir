// The CUDA target's pipeline (tessel-opt runs what tessel-compile
// --target=cuda runs): the same model phases, then device buffers, one
// kernel per loop nest, PTX in gpu.binary ops, the host code in the LLVM
// dialect, and a manifest that names the device.
// RUN: tessel-opt %s --pass-pipeline="builtin.module(tessel-model-to-llvm{target=cuda cuda-arch=sm_90 cuda-binary=ptx target-triple=x86_64-unknown-linux-gnu})" | FileCheck %s
// Where the CUDA toolkit is installed, the default (cuda-binary=auto)
// embeds fatbins: a cubin for sm_90 (ptxas) with the PTX (fatbinary),
// which the driver loads without compiling.
// RUN: %if ptxas %{ tessel-opt %s --pass-pipeline="builtin.module(tessel-model-to-llvm{target=cuda cuda-arch=sm_90 target-triple=x86_64-unknown-linux-gnu})" | FileCheck %s --check-prefix=FATBIN %}
// FATBIN: gpu.binary @__tessel_fn_main_kernel [#gpu.object<#nvvm.target<chip = "sm_90", features = "+ptx80">, properties = {{.*}}, "P\EDU\BA
// FATBIN-NOT: assembly =

// No kernel library on the GPU: the matmul is a loop nest like the rest.
// CHECK-NOT: tessel_kernel
// CHECK: llvm.func internal @__tessel_fn_main(
// Weights and the input go to the device on one stream...
// CHECK: %[[STREAM:.*]] = llvm.call @mgpuStreamCreate()
// CHECK: llvm.call @mgpuMemAlloc(
// CHECK: llvm.call @mgpuMemcpy(
// ...kernels are launched on it: first the matmul, a tiled kernel (64x64
// tiles for so small a product, 256 threads, workgroup memory) that stores
// its sums (its zero init folded in: no fill kernel before it)...
// CHECK: gpu.launch_func <%[[STREAM]] : !llvm.ptr> @__tessel_fn_main_kernel::@__tessel_fn_main_kernel blocks in ({{.*}}) threads in (%[[T:.*]], {{.*}})
// CHECK: gpu.launch_func <%[[STREAM]] : !llvm.ptr> @__tessel_fn_main_kernel_0::
// ...the output comes back, and one wait ends the call.
// CHECK: llvm.call @mgpuMemcpy(
// CHECK: llvm.call @mgpuMemFree(
// CHECK: llvm.call @mgpuStreamSynchronize(%[[STREAM]])
// The kernels are PTX for sm_90; exp became a polynomial (-O2), so no
// libdevice call is left.
// CHECK: gpu.binary @__tessel_fn_main_kernel [#gpu.object<#nvvm.target<chip = "sm_90", features = "+ptx80">, {{.*}}assembly = "{{.*}}.target sm_90{{.*}}.shared .align 4 .b8 {{.*}}[2176]
// CHECK-NOT: __nv_expf
// CHECK: llvm.func @tessel_entry_main(
// CHECK: llvm.mlir.global external constant @tessel_artifact_manifest("tessel-artifact 5\0Atarget x86_64-unknown-linux-gnu\0Adevice cuda sm_90\0Afunction main tessel_entry_main
func.func @main(%x: tensor<2x4xf32> {tessel.name = "x"}) -> tensor<2x4xf32> {
  %w = "tosa.const"() {values = dense<[[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0], [13.0, 14.0, 15.0, 16.0]]]> : tensor<1x4x4xf32>} : () -> tensor<1x4x4xf32>
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %s3 = tosa.const_shape {values = dense<[1, 2, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %x3 = tosa.reshape %x, %s3 : (tensor<2x4xf32>, !tosa.shape<3>) -> tensor<1x2x4xf32>
  %m = tosa.matmul %x3, %w, %zp, %zp : (tensor<1x2x4xf32>, tensor<1x4x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x4xf32>
  %s2 = tosa.const_shape {values = dense<[2, 4]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %m2 = tosa.reshape %m, %s2 : (tensor<1x2x4xf32>, !tosa.shape<2>) -> tensor<2x4xf32>
  %y = tessel.softmax %m2 {axis = -1 : i64} : tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}
