// RUN: tessel-opt %s -split-input-file -tessel-convert-to-kernels="panel-width=4" -canonicalize | FileCheck %s
// RUN: tessel-opt %s -split-input-file -tessel-convert-to-kernels="panel-width=4 grouped-rotated-max-width=2" -canonicalize | FileCheck %s --check-prefix=NARROW

// What tessel-decompose-graph-ops and tosa-to-linalg make of a grouped
// convolution of square groups (2 groups of 2 channels, 1x1 here so the
// packing is readable), with its bias and a ReLU: one grouped_conv2d on
// the NHWC tensors, the zero pad absorbed, bias and clamp fused. Packed
// filter lanes (g, j), rotation r: W[g][(j + r) % 2][j]; W[g][f] =
// (1, 2), (3, 4) for g = 0 and (5, 6), (7, 8) for g = 1.
// CHECK-LABEL: func @grouped_bias_relu
// CHECK-SAME: %[[X:.*]]: tensor<1x6x6x4xf32>, %{{.*}}: tensor<4xf32>
// CHECK: %[[W:.*]] = arith.constant dense<{{\[\[\[}}[1.000000e+00, 4.000000e+00, 5.000000e+00, 8.000000e+00, 0.000000e+00, {{.*}}], [3.000000e+00, 2.000000e+00, 7.000000e+00, 6.000000e+00, 0.000000e+00, {{.*}}]]]]> : tensor<1x1x2x16xf32>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<1x8x7x4xf32>
// CHECK: %[[Y:.*]] = tessel.grouped_conv2d ins(%[[X]], %[[W]] : tensor<1x6x6x4xf32>, tensor<1x1x2x16xf32>) bias(%{{.*}} : tensor<4xf32>) outs(%[[E]] : tensor<1x8x7x4xf32>) {clamp_min = 0.000000e+00 : f32, dilations = array<i64: 1, 1>, groups = 2 : i64, kernel_size = array<i64: 1, 1>, packing = "rotated", pad = array<i64: 1, 1, 0, 1>, strides = array<i64: 1, 1>} -> tensor<1x8x7x4xf32>
// CHECK: return %[[Y]]
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#bias = affine_map<(d0, d1, d2, d3) -> (0, 0, 0, d3)>
func.func @grouped_bias_relu(%x: tensor<1x6x6x4xf32>, %b: tensor<4xf32>) -> tensor<1x8x7x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %w = arith.constant dense<[[[[[1.0, 2.0]]], [[[3.0, 4.0]]]], [[[[5.0, 6.0]]], [[[7.0, 8.0]]]]]> : tensor<2x2x1x1x2xf32>
  %b4 = tensor.expand_shape %b [[0, 1, 2, 3]] output_shape [1, 1, 1, 4] : tensor<4xf32> into tensor<1x1x1x4xf32>
  %p = tensor.pad %x low[%c0, %c1, %c0, %c0] high[%c0, %c1, %c1, %c0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x6x6x4xf32> to tensor<1x8x7x4xf32>
  %xe = tensor.expand_shape %p [[0], [1], [2], [3, 4]] output_shape [1, 8, 7, 2, 2] : tensor<1x8x7x4xf32> into tensor<1x8x7x2x2xf32>
  %e = tensor.empty() : tensor<1x8x7x2x2xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x7x2x2xf32>) -> tensor<1x8x7x2x2xf32>
  %c = linalg.conv_2d_nhwgc_gfhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%xe, %w : tensor<1x8x7x2x2xf32>, tensor<2x2x1x1x2xf32>) outs(%z : tensor<1x8x7x2x2xf32>) -> tensor<1x8x7x2x2xf32>
  %y = tensor.collapse_shape %c [[0], [1], [2], [3, 4]] : tensor<1x8x7x2x2xf32> into tensor<1x8x7x4xf32>
  %e4 = tensor.empty() : tensor<1x8x7x4xf32>
  %yb = linalg.generic {indexing_maps = [#map, #bias, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%y, %b4 : tensor<1x8x7x4xf32>, tensor<1x1x1x4xf32>) outs(%e4 : tensor<1x8x7x4xf32>) {
  ^bb0(%a: f32, %bb: f32, %o: f32):
    %s = arith.addf %a, %bb : f32
    linalg.yield %s : f32
  } -> tensor<1x8x7x4xf32>
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%yb : tensor<1x8x7x4xf32>) outs(%e4 : tensor<1x8x7x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x8x7x4xf32>
  return %r : tensor<1x8x7x4xf32>
}

// -----

// A filter that is not a constant stays a linalg op (the generic
// lowering runs it).
// CHECK-LABEL: func @runtime_filter
// CHECK-NOT: tessel.grouped_conv2d
// CHECK: linalg.conv_2d_nhwgc_gfhwc
func.func @runtime_filter(%x: tensor<1x6x6x8xf32>, %w: tensor<2x4x3x3x4xf32>) -> tensor<1x4x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %xe = tensor.expand_shape %x [[0], [1], [2], [3, 4]] output_shape [1, 6, 6, 2, 4] : tensor<1x6x6x8xf32> into tensor<1x6x6x2x4xf32>
  %e = tensor.empty() : tensor<1x4x4x2x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x4x2x4xf32>) -> tensor<1x4x4x2x4xf32>
  %c = linalg.conv_2d_nhwgc_gfhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%xe, %w : tensor<1x6x6x2x4xf32>, tensor<2x4x3x3x4xf32>) outs(%z : tensor<1x4x4x2x4xf32>) -> tensor<1x4x4x2x4xf32>
  %y = tensor.collapse_shape %c [[0], [1], [2], [3, 4]] : tensor<1x4x4x2x4xf32> into tensor<1x4x4x8xf32>
  return %y : tensor<1x4x4x8xf32>
}

// -----

// An init that is not a zero fill is accumulated. Rotated vectors only
// up to grouped-rotated-max-width: past it, the panels.
// NARROW-LABEL: func @accumulating_init
// NARROW: tessel.grouped_conv2d {{.*}} tensor<1x4x4x8xf32>, tensor<2x1x4x4xf32>) {{.*}}packing = "panels"
// CHECK-LABEL: func @accumulating_init
// CHECK: tessel.grouped_conv2d ins(%{{.*}}, %{{.*}} : tensor<1x4x4x8xf32>, tensor<1x1x4x16xf32>) outs(%{{.*}} : tensor<1x4x4x8xf32>) {accumulate, dilations = array<i64: 1, 1>, groups = 2 : i64, kernel_size = array<i64: 1, 1>, packing = "rotated", pad = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
func.func @accumulating_init(%x: tensor<1x4x4x8xf32>, %init: tensor<1x4x4x2x4xf32>) -> tensor<1x4x4x8xf32> {
  %w = arith.constant dense<0.5> : tensor<2x4x1x1x4xf32>
  %xe = tensor.expand_shape %x [[0], [1], [2], [3, 4]] output_shape [1, 4, 4, 2, 4] : tensor<1x4x4x8xf32> into tensor<1x4x4x2x4xf32>
  %c = linalg.conv_2d_nhwgc_gfhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%xe, %w : tensor<1x4x4x2x4xf32>, tensor<2x4x1x1x4xf32>) outs(%init : tensor<1x4x4x2x4xf32>) -> tensor<1x4x4x2x4xf32>
  %y = tensor.collapse_shape %c [[0], [1], [2], [3, 4]] : tensor<1x4x4x2x4xf32> into tensor<1x4x4x8xf32>
  return %y : tensor<1x4x4x8xf32>
}

// -----

// 16-wide groups: the filter packed c-major, taps x groups x 16 inputs x
// 16 outputs.
// CHECK-LABEL: func @wide_groups
// CHECK: tessel.grouped_conv2d ins(%{{.*}}, %{{.*}} : tensor<1x4x4x32xf32>, tensor<1x2x16x16xf32>) outs(%{{.*}} : tensor<1x4x4x32xf32>) {dilations = array<i64: 1, 1>, groups = 2 : i64, kernel_size = array<i64: 1, 1>, packing = "cmajor", pad = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
func.func @wide_groups(%x: tensor<1x4x4x32xf32>) -> tensor<1x4x4x32xf32> {
  %zero = arith.constant 0.0 : f32
  %w = arith.constant dense<0.25> : tensor<2x16x1x1x16xf32>
  %xe = tensor.expand_shape %x [[0], [1], [2], [3, 4]] output_shape [1, 4, 4, 2, 16] : tensor<1x4x4x32xf32> into tensor<1x4x4x2x16xf32>
  %e = tensor.empty() : tensor<1x4x4x2x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x4x2x16xf32>) -> tensor<1x4x4x2x16xf32>
  %c = linalg.conv_2d_nhwgc_gfhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%xe, %w : tensor<1x4x4x2x16xf32>, tensor<2x16x1x1x16xf32>) outs(%z : tensor<1x4x4x2x16xf32>) -> tensor<1x4x4x2x16xf32>
  %y = tensor.collapse_shape %c [[0], [1], [2], [3, 4]] : tensor<1x4x4x2x16xf32> into tensor<1x4x4x32xf32>
  return %y : tensor<1x4x4x32xf32>
}

// -----

// Groups of 3 inputs and 2 outputs: the dense kernel's panels per group
// (2 groups x 1 panel of 4 x 3 x 4), W[g][f] = (1, 2, 3), (4, 5, 6) for
// g = 0 and (7, 8, 9), (10, 11, 12) for g = 1.
// CHECK-LABEL: func @panels
// CHECK: arith.constant dense<{{\[\[\[}}[1.000000e+00, 4.000000e+00, 0.000000e+00, 0.000000e+00], [2.000000e+00, 5.000000e+00, 0.000000e+00, 0.000000e+00], [3.000000e+00, 6.000000e+00, 0.000000e+00, 0.000000e+00]]], {{\[\[}}[7.000000e+00, 1.000000e+01, {{.*}}]]]]> : tensor<2x1x3x4xf32>
// CHECK: tessel.grouped_conv2d {{.*}} : tensor<1x4x4x6xf32>, tensor<2x1x3x4xf32>) outs(%{{.*}} : tensor<1x4x4x4xf32>) {dilations = array<i64: 1, 1>, groups = 2 : i64, kernel_size = array<i64: 1, 1>, packing = "panels"
func.func @panels(%x: tensor<1x4x4x6xf32>) -> tensor<1x4x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %w = arith.constant dense<[[[[[1.0, 2.0, 3.0]]], [[[4.0, 5.0, 6.0]]]], [[[[7.0, 8.0, 9.0]]], [[[10.0, 11.0, 12.0]]]]]> : tensor<2x2x1x1x3xf32>
  %xe = tensor.expand_shape %x [[0], [1], [2], [3, 4]] output_shape [1, 4, 4, 2, 3] : tensor<1x4x4x6xf32> into tensor<1x4x4x2x3xf32>
  %e = tensor.empty() : tensor<1x4x4x2x2xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x4x2x2xf32>) -> tensor<1x4x4x2x2xf32>
  %c = linalg.conv_2d_nhwgc_gfhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%xe, %w : tensor<1x4x4x2x3xf32>, tensor<2x2x1x1x3xf32>) outs(%z : tensor<1x4x4x2x2xf32>) -> tensor<1x4x4x2x2xf32>
  %y = tensor.collapse_shape %c [[0], [1], [2], [3, 4]] : tensor<1x4x4x2x2xf32> into tensor<1x4x4x4xf32>
  return %y : tensor<1x4x4x4xf32>
}
