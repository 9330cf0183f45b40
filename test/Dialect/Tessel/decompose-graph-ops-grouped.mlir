// RUN: tessel-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(tessel-decompose-graph-ops{keep-grouped=1}))" | FileCheck %s
// RUN: tessel-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(tessel-decompose-graph-ops))" | FileCheck %s --check-prefix=SPLIT

// 8 groups of 4 input and 4 output channels: one grouped linalg conv on
// the zero-padded input expanded to N x H x W x G x 4, its zero-filled
// result collapsed back to NHWC, then the bias. Without keep-grouped,
// per-group convolutions.
// CHECK-LABEL: func @square_groups
// CHECK-SAME: %[[X:.*]]: tensor<1x8x8x32xf32>, %[[W:.*]]: tensor<32x3x3x4xf32>, %[[B:.*]]: tensor<32xf32>
// CHECK: %[[P:.*]] = tosa.pad %[[X]], %{{.*}}, %{{.*}} : (tensor<1x8x8x32xf32>, !tosa.shape<8>, tensor<1xf32>) -> tensor<1x10x10x32xf32>
// CHECK: %[[XE:.*]] = tensor.expand_shape %[[P]] {{\[}}[0], [1], [2], [3, 4]] output_shape [1, 10, 10, 8, 4] : tensor<1x10x10x32xf32> into tensor<1x10x10x8x4xf32>
// CHECK: %[[WE:.*]] = tensor.expand_shape %[[W]] {{\[}}[0, 1], [2], [3], [4]] output_shape [8, 4, 3, 3, 4] : tensor<32x3x3x4xf32> into tensor<8x4x3x3x4xf32>
// CHECK: %[[Z:.*]] = linalg.fill
// CHECK: %[[C:.*]] = linalg.conv_2d_nhwgc_gfhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%[[XE]], %[[WE]] : tensor<1x10x10x8x4xf32>, tensor<8x4x3x3x4xf32>) outs(%[[Z]] : tensor<1x8x8x8x4xf32>)
// CHECK: %[[Y:.*]] = tensor.collapse_shape %[[C]] {{\[}}[0], [1], [2], [3, 4]] : tensor<1x8x8x8x4xf32> into tensor<1x8x8x32xf32>
// CHECK: %[[B4:.*]] = tosa.reshape %[[B]]
// CHECK: tosa.add %[[Y]], %[[B4]] : (tensor<1x8x8x32xf32>, tensor<1x1x1x32xf32>) -> tensor<1x8x8x32xf32>
// SPLIT-LABEL: func @square_groups
// SPLIT-NOT: linalg.conv_2d_nhwgc_gfhwc
// SPLIT-COUNT-8: tosa.conv2d
func.func @square_groups(%x: tensor<1x8x8x32xf32>, %w: tensor<32x3x3x4xf32>, %b: tensor<32xf32>) -> tensor<1x8x8x32xf32> {
  %0 = tessel.conv2d %x, %w, %b {groups = 8 : i64, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>} : (tensor<1x8x8x32xf32>, tensor<32x3x3x4xf32>, tensor<32xf32>) -> tensor<1x8x8x32xf32>
  return %0 : tensor<1x8x8x32xf32>
}

// -----

// Stride 2, dilation 2, no padding, groups of 2 inputs and 3 outputs, a
// batch of 2: no tosa.pad; the strides and dilations carried over.
// CHECK-LABEL: func @strided_dilated
// CHECK-NOT: tosa.pad
// CHECK: linalg.conv_2d_nhwgc_gfhwc {dilations = dense<2> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%{{.*}}, %{{.*}} : tensor<2x9x9x6x2xf32>, tensor<6x3x3x3x2xf32>) outs(%{{.*}} : tensor<2x3x3x6x3xf32>)
func.func @strided_dilated(%x: tensor<2x9x9x12xf32>, %w: tensor<18x3x3x2xf32>, %b: tensor<18xf32>) -> tensor<2x3x3x18xf32> {
  %0 = tessel.conv2d %x, %w, %b {groups = 6 : i64, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>, dilation = array<i64: 2, 2>} : (tensor<2x9x9x12xf32>, tensor<18x3x3x2xf32>, tensor<18xf32>) -> tensor<2x3x3x18xf32>
  return %0 : tensor<2x3x3x18xf32>
}

// -----

// Depthwise (groups = C) and f16 are not kept as grouped linalg
// convolutions.
// CHECK-LABEL: func @depthwise_and_f16
// CHECK-NOT: linalg.conv_2d_nhwgc_gfhwc
// CHECK: tosa.depthwise_conv2d
// CHECK-COUNT-2: tosa.conv2d {{.*}} -> tensor<1x8x8x4xf16>
func.func @depthwise_and_f16(%x: tensor<1x8x8x8xf32>, %wd: tensor<8x3x3x1xf32>, %bd: tensor<8xf32>,
                             %xh: tensor<1x8x8x8xf16>, %wh: tensor<8x3x3x4xf16>, %bh: tensor<8xf16>)
    -> (tensor<1x8x8x8xf32>, tensor<1x8x8x8xf16>) {
  %0 = tessel.conv2d %x, %wd, %bd {groups = 8 : i64, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>} : (tensor<1x8x8x8xf32>, tensor<8x3x3x1xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32>
  %1 = tessel.conv2d %xh, %wh, %bh {groups = 2 : i64, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>} : (tensor<1x8x8x8xf16>, tensor<8x3x3x4xf16>, tensor<8xf16>) -> tensor<1x8x8x8xf16>
  return %0, %1 : tensor<1x8x8x8xf32>, tensor<1x8x8x8xf16>
}
