// RUN: tessel-opt %s -split-input-file -tessel-fold-qdq="min-reduction=20" | FileCheck %s --check-prefix=MINRED
// RUN: tessel-opt %s -split-input-file -tessel-fold-qdq="depthwise=false" | FileCheck %s --check-prefix=NODW
// RUN: tessel-opt %s -split-input-file -tessel-fold-qdq | FileCheck %s --check-prefix=ALL

// tessel-fold-qdq's options leave products in float (the dequantized
// operands stay, and the float op reads them): min-reduction=N those whose
// reduction (K; KH*KW*C per group) is below N, depthwise=false the
// depthwise ones. By default every one folds.

// K = 3: below 20.
// MINRED-LABEL: func.func @matmul_k3
// MINRED: quant.dcast
// MINRED: tosa.matmul {{.*}} -> tensor<1x4x2xf32>
// NODW-LABEL: func.func @matmul_k3
// NODW: tosa.matmul {{.*}} -> tensor<1x4x2xi32>
// ALL-LABEL: func.func @matmul_k3
// ALL: tosa.matmul {{.*}} -> tensor<1x4x2xi32>
func.func @matmul_k3(%x: tensor<1x4x3xi8>, %w: tensor<1x3x2xi8>) -> tensor<1x4x2xf32> {
  %xq = quant.scast %x : tensor<1x4x3xi8> to tensor<1x4x3x!quant.uniform<u8:f32, 0.1:130>>
  %a = quant.dcast %xq : tensor<1x4x3x!quant.uniform<u8:f32, 0.1:130>> to tensor<1x4x3xf32>
  %wq = quant.scast %w : tensor<1x3x2xi8> to tensor<1x3x2x!quant.uniform<i8:f32, 0.5>>
  %b = quant.dcast %wq : tensor<1x3x2x!quant.uniform<i8:f32, 0.5>> to tensor<1x3x2xf32>
  %z = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %y = tosa.matmul %a, %b, %z, %z : (tensor<1x4x3xf32>, tensor<1x3x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x2xf32>
  return %y : tensor<1x4x2xf32>
}

// -----

// KH*KW*C = 27: not below 20, folds under every option.
// MINRED-LABEL: func.func @conv3x3
// MINRED: tosa.conv2d {{.*}} -> tensor<1x4x4x2xi32>
// NODW-LABEL: func.func @conv3x3
// NODW: tosa.conv2d {{.*}} -> tensor<1x4x4x2xi32>
// ALL-LABEL: func.func @conv3x3
// ALL: tosa.conv2d {{.*}} -> tensor<1x4x4x2xi32>
func.func @conv3x3(%x: tensor<1x8x7x3xi8>, %w: tensor<2x3x3x3xi8>, %b: tensor<2xf32>) -> tensor<1x4x4x2xf32> {
  %xq = quant.scast %x : tensor<1x8x7x3xi8> to tensor<1x8x7x3x!quant.uniform<i8:f32, 0.1:4>>
  %xf = quant.dcast %xq : tensor<1x8x7x3x!quant.uniform<i8:f32, 0.1:4>> to tensor<1x8x7x3xf32>
  %wq = quant.scast %w : tensor<2x3x3x3xi8> to tensor<2x3x3x3x!quant.uniform<i8:f32:0, {0.5, 0.25}>>
  %wf = quant.dcast %wq : tensor<2x3x3x3x!quant.uniform<i8:f32:0, {0.5, 0.25}>> to tensor<2x3x3x3xf32>
  %y = tessel.conv2d %xf, %wf, %b {dilation = array<i64: 1, 1>, groups = 1 : i64, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 2, 2>}
      : (tensor<1x8x7x3xf32>, tensor<2x3x3x3xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
  return %y : tensor<1x4x4x2xf32>
}

// -----

// Depthwise: left in float by depthwise=false, and by min-reduction=20
// (its reduction is KH*KW = 9 per channel).
// MINRED-LABEL: func.func @depthwise
// MINRED-NOT: tosa.depthwise_conv2d
// MINRED: tessel.conv2d {{.*}} groups = 3
// NODW-LABEL: func.func @depthwise
// NODW-NOT: tosa.depthwise_conv2d
// NODW: tessel.conv2d {{.*}} groups = 3
// ALL-LABEL: func.func @depthwise
// ALL: tosa.depthwise_conv2d {{.*}} -> tensor<1x4x4x3xi32>
func.func @depthwise(%x: tensor<1x8x7x3xi8>, %w: tensor<3x3x3x1xi8>, %b: tensor<3xf32>) -> tensor<1x4x4x3xf32> {
  %xq = quant.scast %x : tensor<1x8x7x3xi8> to tensor<1x8x7x3x!quant.uniform<u8:f32, 0.1:130>>
  %xf = quant.dcast %xq : tensor<1x8x7x3x!quant.uniform<u8:f32, 0.1:130>> to tensor<1x8x7x3xf32>
  %wq = quant.scast %w : tensor<3x3x3x1xi8> to tensor<3x3x3x1x!quant.uniform<i8:f32:0, {0.5, 0.25, 0.125}>>
  %wf = quant.dcast %wq : tensor<3x3x3x1x!quant.uniform<i8:f32:0, {0.5, 0.25, 0.125}>> to tensor<3x3x3x1xf32>
  %y = tessel.conv2d %xf, %wf, %b {dilation = array<i64: 1, 1>, groups = 3 : i64, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 2, 2>}
      : (tensor<1x8x7x3xf32>, tensor<3x3x3x1xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// Channel multiplier 2 (one input channel per group): depthwise too.
// NODW-LABEL: func.func @depthwise_multiplier
// NODW-NOT: tosa.depthwise_conv2d
// NODW: tessel.conv2d {{.*}} groups = 2
// ALL-LABEL: func.func @depthwise_multiplier
// ALL: tosa.depthwise_conv2d
func.func @depthwise_multiplier(%x: tensor<1x4x4x2xi8>, %w: tensor<4x3x3x1xi8>, %b: tensor<4xf32>) -> tensor<1x2x2x4xf32> {
  %xq = quant.scast %x : tensor<1x4x4x2xi8> to tensor<1x4x4x2x!quant.uniform<i8:f32, 0.1:0>>
  %xf = quant.dcast %xq : tensor<1x4x4x2x!quant.uniform<i8:f32, 0.1:0>> to tensor<1x4x4x2xf32>
  %wq = quant.scast %w : tensor<4x3x3x1xi8> to tensor<4x3x3x1x!quant.uniform<i8:f32, 0.5>>
  %wf = quant.dcast %wq : tensor<4x3x3x1x!quant.uniform<i8:f32, 0.5>> to tensor<4x3x3x1xf32>
  %y = tessel.conv2d %xf, %wf, %b {dilation = array<i64: 1, 1>, groups = 2 : i64, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>}
      : (tensor<1x4x4x2xf32>, tensor<4x3x3x1xf32>, tensor<4xf32>) -> tensor<1x2x2x4xf32>
  return %y : tensor<1x2x2x4xf32>
}

// -----

// Two groups of KH*KW*C/group = 18: below 20.
// MINRED-LABEL: func.func @grouped
// MINRED-NOT: tosa.conv2d
// MINRED: tessel.conv2d {{.*}} groups = 2
// ALL-LABEL: func.func @grouped
// ALL: tosa.conv2d {{.*}} -> tensor<1x4x4x3xi32>
func.func @grouped(%x: tensor<1x8x7x4xi8>, %w: tensor<6x3x3x2xi8>, %b: tensor<6xf32>) -> tensor<1x4x4x6xf32> {
  %xq = quant.scast %x : tensor<1x8x7x4xi8> to tensor<1x8x7x4x!quant.uniform<u8:f32, 0.1:130>>
  %xf = quant.dcast %xq : tensor<1x8x7x4x!quant.uniform<u8:f32, 0.1:130>> to tensor<1x8x7x4xf32>
  %wq = quant.scast %w : tensor<6x3x3x2xi8> to tensor<6x3x3x2x!quant.uniform<i8:f32:0, {0.5, 0.25, 0.125, 0.5, 0.25, 0.125}>>
  %wf = quant.dcast %wq : tensor<6x3x3x2x!quant.uniform<i8:f32:0, {0.5, 0.25, 0.125, 0.5, 0.25, 0.125}>> to tensor<6x3x3x2xf32>
  %y = tessel.conv2d %xf, %wf, %b {dilation = array<i64: 1, 1>, groups = 2 : i64, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 2, 2>}
      : (tensor<1x8x7x4xf32>, tensor<6x3x3x2xf32>, tensor<6xf32>) -> tensor<1x4x4x6xf32>
  return %y : tensor<1x4x4x6xf32>
}
