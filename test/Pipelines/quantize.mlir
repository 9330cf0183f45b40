// The two ways a matmul reaches the int8 kernel through the pipeline.
// RUN: tessel-opt %s -split-input-file --tessel-model-to-linalg="opt-level=2" | FileCheck %s --check-prefix=QDQ
// RUN: tessel-opt %s -split-input-file --tessel-model-to-linalg="opt-level=2 quantize=int8-dynamic" | FileCheck %s --check-prefix=DYN
// RUN: tessel-opt %s -split-input-file --tessel-model-to-linalg="opt-level=2" | FileCheck %s --check-prefix=FLOAT

// A QDQ matmul (activation quantized in the graph, int8 weights per
// column) runs on the integers by default, its dequantization (the
// product of the scales per column) fused into the kernel.
// QDQ-LABEL: func.func @__tessel_fn_qdq
// QDQ: tessel.packed_matmul_i8_requant ins({{.*}} : tensor<1x4x64xi8>, tensor<1x16x64x4xi8>) column_sums({{.*}} : tensor<32xi32>) scale({{.*}} : tensor<32xf32>) outs({{.*}} : tensor<1x4x32xf32>) {a_signed, a_zp = 2 : i32, b_zp = 0 : i32, clamp_max = 0x7F800000 : f32, clamp_min = 0xFF800000 : f32}
// QDQ-NOT: linalg.generic
func.func @qdq(%x: tensor<1x4x64xf32>) -> tensor<1x4x32xf32> {
  %xq = quant.qcast %x : tensor<1x4x64xf32> to tensor<1x4x64x!quant.uniform<u8:f32, 0.1:130>>
  %xf = quant.dcast %xq : tensor<1x4x64x!quant.uniform<u8:f32, 0.1:130>> to tensor<1x4x64xf32>
  %w = arith.constant dense<3> : tensor<1x64x32xi8>
  %wq = quant.scast %w : tensor<1x64x32xi8> to tensor<1x64x32x!quant.uniform<i8:f32:2, {0.5:0, 0.25:0, 0.5:0, 0.25:0, 0.5:0, 0.25:0, 0.5:0, 0.25:0, 0.5:0, 0.25:0, 0.5:0, 0.25:0, 0.5:0, 0.25:0, 0.5:0, 0.25:0, 0.5:0, 0.25:0, 0.5:0, 0.25:0, 0.5:0, 0.25:0, 0.5:0, 0.25:0, 0.5:0, 0.25:0, 0.5:0, 0.25:0, 0.5:0, 0.25:0, 0.5:0, 0.25:0}>>
  %wf = quant.dcast %wq : tensor<1x64x32x!quant.uniform<i8:f32:2, {0.5:0, 0.25:0, 0.5:0, 0.25:0, 0.5:0, 0.25:0, 0.5:0, 0.25:0, 0.5:0, 0.25:0, 0.5:0, 0.25:0, 0.5:0, 0.25:0, 0.5:0, 0.25:0, 0.5:0, 0.25:0, 0.5:0, 0.25:0, 0.5:0, 0.25:0, 0.5:0, 0.25:0, 0.5:0, 0.25:0, 0.5:0, 0.25:0, 0.5:0, 0.25:0, 0.5:0, 0.25:0}>> to tensor<1x64x32xf32>
  %z = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %y = tosa.matmul %xf, %wf, %z, %z : (tensor<1x4x64xf32>, tensor<1x64x32xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x32xf32>
  return %y : tensor<1x4x32xf32>
}

// -----

// A float matmul with constant weights: int8 with quantize=int8-dynamic
// (activations signed, zero point 0), float otherwise.
// DYN-LABEL: func.func @__tessel_fn_linear
// DYN: tessel.packed_matmul_i8 ins({{.*}} : tensor<1x4x64xi8>, tensor<1x16x64x4xi8>) column_sums({{.*}} : tensor<32xi32>) {{.*}} {a_signed, a_zp = 0 : i32, b_zp = 0 : i32}
// FLOAT-LABEL: func.func @__tessel_fn_linear
// FLOAT-NOT: packed_matmul_i8
// FLOAT: tessel.packed_conv2d
func.func @linear(%x: tensor<1x4x64xf32>) -> tensor<1x4x32xf32> {
  %w = "tosa.const"() <{values = dense<0.5> : tensor<1x64x32xf32>}> : () -> tensor<1x64x32xf32>
  %z = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %y = tosa.matmul %x, %w, %z, %z : (tensor<1x4x64xf32>, tensor<1x64x32xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x32xf32>
  return %y : tensor<1x4x32xf32>
}
