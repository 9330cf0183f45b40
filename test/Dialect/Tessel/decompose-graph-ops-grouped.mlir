// RUN: tessel-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(tessel-decompose-graph-ops{grouped-max-width=8}))" | FileCheck %s
// RUN: tessel-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(tessel-decompose-graph-ops{grouped-max-width=2}))" | FileCheck %s --check-prefix=NARROW

// 8 groups of 4 input and 4 output channels: one grouped linalg conv on
// the zero-padded input expanded to N x H x W x G x 4, its zero-filled
// result collapsed back to NHWC, then the bias. With groups of at most 2
// kept whole, per-group convolutions as without the option.
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
// NARROW-LABEL: func @square_groups
// NARROW-NOT: linalg.conv_2d_nhwgc_gfhwc
// NARROW-COUNT-8: tosa.conv2d
func.func @square_groups(%x: tensor<1x8x8x32xf32>, %w: tensor<32x3x3x4xf32>, %b: tensor<32xf32>) -> tensor<1x8x8x32xf32> {
  %0 = tessel.conv2d %x, %w, %b {groups = 8 : i64, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>} : (tensor<1x8x8x32xf32>, tensor<32x3x3x4xf32>, tensor<32xf32>) -> tensor<1x8x8x32xf32>
  return %0 : tensor<1x8x8x32xf32>
}

// -----

// Stride 2, dilation 2, no padding: no tosa.pad; the strides and
// dilations carried over.
// CHECK-LABEL: func @strided_dilated
// CHECK-NOT: tosa.pad
// CHECK: linalg.conv_2d_nhwgc_gfhwc {dilations = dense<2> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%{{.*}}, %{{.*}} : tensor<2x9x9x6x2xf32>, tensor<6x2x3x3x2xf32>) outs(%{{.*}} : tensor<2x3x3x6x2xf32>)
func.func @strided_dilated(%x: tensor<2x9x9x12xf32>, %w: tensor<12x3x3x2xf32>, %b: tensor<12xf32>) -> tensor<2x3x3x12xf32> {
  %0 = tessel.conv2d %x, %w, %b {groups = 6 : i64, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>, dilation = array<i64: 2, 2>} : (tensor<2x9x9x12xf32>, tensor<12x3x3x2xf32>, tensor<12xf32>) -> tensor<2x3x3x12xf32>
  return %0 : tensor<2x3x3x12xf32>
}

// -----

// Groups of 16 are kept whole whatever the option's (narrow) width.
// CHECK-LABEL: func @sixteen_wide
// CHECK: linalg.conv_2d_nhwgc_gfhwc {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x10x10x2x16xf32>, tensor<2x16x3x3x16xf32>)
// NARROW-LABEL: func @sixteen_wide
// NARROW: linalg.conv_2d_nhwgc_gfhwc
func.func @sixteen_wide(%x: tensor<1x8x8x32xf32>, %w: tensor<32x3x3x16xf32>, %b: tensor<32xf32>) -> tensor<1x8x8x32xf32> {
  %0 = tessel.conv2d %x, %w, %b {groups = 2 : i64, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>} : (tensor<1x8x8x32xf32>, tensor<32x3x3x16xf32>, tensor<32xf32>) -> tensor<1x8x8x32xf32>
  return %0 : tensor<1x8x8x32xf32>
}

// -----

// Not kept whole: groups of 32 (per-group GEMMs fill their panels well
// enough), groups with more outputs than inputs, and f16.
// CHECK-LABEL: func @not_square_or_narrow
// CHECK-NOT: linalg.conv_2d_nhwgc_gfhwc
// CHECK-COUNT-2: tosa.conv2d {{.*}} -> tensor<1x8x8x32xf32>
// CHECK-COUNT-4: tosa.conv2d {{.*}} -> tensor<1x8x8x4xf32>
// CHECK-COUNT-2: tosa.conv2d {{.*}} -> tensor<1x8x8x4xf16>
func.func @not_square_or_narrow(%x: tensor<1x8x8x32xf32>, %x64: tensor<1x8x8x64xf32>, %w: tensor<64x3x3x32xf32>, %b: tensor<64xf32>,
                                %w2: tensor<16x3x3x8xf32>, %b2: tensor<16xf32>,
                                %xh: tensor<1x8x8x8xf16>, %wh: tensor<8x3x3x4xf16>, %bh: tensor<8xf16>)
    -> (tensor<1x8x8x64xf32>, tensor<1x8x8x16xf32>, tensor<1x8x8x8xf16>) {
  %0 = tessel.conv2d %x64, %w, %b {groups = 2 : i64, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>} : (tensor<1x8x8x64xf32>, tensor<64x3x3x32xf32>, tensor<64xf32>) -> tensor<1x8x8x64xf32>
  %1 = tessel.conv2d %x, %w2, %b2 {groups = 4 : i64, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>} : (tensor<1x8x8x32xf32>, tensor<16x3x3x8xf32>, tensor<16xf32>) -> tensor<1x8x8x16xf32>
  %2 = tessel.conv2d %xh, %wh, %bh {groups = 2 : i64, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>} : (tensor<1x8x8x8xf16>, tensor<8x3x3x4xf16>, tensor<8xf16>) -> tensor<1x8x8x8xf16>
  return %0, %1, %2 : tensor<1x8x8x64xf32>, tensor<1x8x8x16xf32>, tensor<1x8x8x8xf16>
}
