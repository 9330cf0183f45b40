// RUN: tessel-opt %s -split-input-file -tessel-convert-to-kernels=panel-width=4 -canonicalize | FileCheck %s

// Conv with the tosa-to-linalg bias-broadcast init, a residual add and a
// ReLU6: one packed_conv2d with bias, the residual as accumulated init and
// the clamp; the 3x3x3x2 filter is packed at compile time into 1 panel of 4
// columns, k = (kh*3 + kw)*2 + c, channel 3 zero-padded.
// CHECK-LABEL: func @conv_bias_residual_relu
// CHECK-SAME: (%[[X:.*]]: tensor<1x6x6x2xf32>, %[[RES:.*]]: tensor<1x4x4x3xf32>)
// CHECK-DAG: %[[B:.*]] = arith.constant dense<[1.000000e-01, 2.000000e-01, 3.000000e-01]> : tensor<3xf32>
// CHECK-DAG: %[[W:.*]] = arith.constant dense<{{\[\[\[}}1.000000e+00, 5.000000e-01, -1.000000e+00, 0.000000e+00], [2.000000e+00, 5.000000e-01, 1.000000e+00, 0.000000e+00], [3.000000e+00,{{.*}} : tensor<1x18x4xf32>
// CHECK: %[[Y:.*]] = tessel.packed_conv2d ins(%[[X]], %[[W]] : tensor<1x6x6x2xf32>, tensor<1x18x4xf32>) bias(%[[B]] : tensor<3xf32>) outs(%[[RES]] : tensor<1x4x4x3xf32>) {accumulate, clamp_max = 6.000000e+00 : f32, clamp_min = 0.000000e+00 : f32, dilations = array<i64: 1, 1>, kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>}
// CHECK-NOT: linalg.generic
// CHECK: return %[[Y]]
#bcast = affine_map<(d0, d1, d2, d3) -> (d3)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @conv_bias_residual_relu(%x: tensor<1x6x6x2xf32>, %res: tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32> {
  %w = arith.constant dense<[[[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], [[7.0, 8.0], [9.0, 10.0], [11.0, 12.0]], [[13.0, 14.0], [15.0, 16.0], [17.0, 18.0]]],
                             [[[0.5, 0.5], [0.5, 0.5], [0.5, 0.5]], [[0.5, 0.5], [0.5, 0.5], [0.5, 0.5]], [[0.5, 0.5], [0.5, 0.5], [0.5, 0.5]]],
                             [[[-1.0, 1.0], [-1.0, 1.0], [-1.0, 1.0]], [[-1.0, 1.0], [-1.0, 1.0], [-1.0, 1.0]], [[-1.0, 1.0], [-1.0, 1.0], [-1.0, 1.0]]]]> : tensor<3x3x3x2xf32>
  %b = arith.constant dense<[0.1, 0.2, 0.3]> : tensor<3xf32>
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %e = tensor.empty() : tensor<1x4x4x3xf32>
  %init = linalg.generic {indexing_maps = [#bcast, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%b : tensor<3xf32>) outs(%e : tensor<1x4x4x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x4x4x3xf32>
  %c = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x6x6x2xf32>, tensor<3x3x3x2xf32>) outs(%init : tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
  %add = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %res : tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>) outs(%e : tensor<1x4x4x3xf32>) {
  ^bb0(%a: f32, %r: f32, %out: f32):
    %s = arith.addf %a, %r : f32
    linalg.yield %s : f32
  } -> tensor<1x4x4x3xf32>
  %relu = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%add : tensor<1x4x4x3xf32>) outs(%e : tensor<1x4x4x3xf32>) {
  ^bb0(%a: f32, %out: f32):
    %m = arith.minimumf %a, %six : f32
    %n = arith.maximumf %m, %zero : f32
    linalg.yield %n : f32
  } -> tensor<1x4x4x3xf32>
  return %relu : tensor<1x4x4x3xf32>
}

// -----

// A zero-filled init needs no accumulation; B is packed [K, N] -> [1, K, 4].
// CHECK-LABEL: func @matmul_zero_init
// CHECK: %[[W:.*]] = arith.constant dense<{{\[\[\[}}1.000000e+00, 2.000000e+00, 0.000000e+00, 0.000000e+00], [3.000000e+00, 4.000000e+00, 0.000000e+00, 0.000000e+00], [5.000000e+00, 6.000000e+00, 0.000000e+00, 0.000000e+00]]]> : tensor<1x3x4xf32>
// CHECK: %[[A:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0, 1, 2], [3]] output_shape [1, 1, 5, 3]
// CHECK: %[[Y:.*]] = tessel.packed_conv2d ins(%[[A]], %[[W]] : tensor<1x1x5x3xf32>, tensor<1x3x4xf32>) outs(%{{.*}} : tensor<1x1x5x2xf32>) {dilations
// CHECK-NOT: accumulate
// CHECK: tensor.collapse_shape %[[Y]] {{\[\[}}0, 1, 2], [3]] : tensor<1x1x5x2xf32> into tensor<5x2xf32>
func.func @matmul_zero_init(%a: tensor<5x3xf32>) -> tensor<5x2xf32> {
  %b = arith.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<5x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<5x2xf32>) -> tensor<5x2xf32>
  %c = linalg.matmul ins(%a, %b : tensor<5x3xf32>, tensor<3x2xf32>) outs(%f : tensor<5x2xf32>) -> tensor<5x2xf32>
  return %c : tensor<5x2xf32>
}

// -----

// A run-time B (attention's K^T, say) is packed per batch image by data
// movement: pad N to whole panels, split it, move panels outward.
// CHECK-LABEL: func @batch_matmul_runtime_b
// CHECK: %[[P:.*]] = tensor.pad %{{.*}} low[0, 0, 0] high[0, 0, 2]
// CHECK: %[[E:.*]] = tensor.expand_shape %[[P]] {{\[\[}}0], [1], [2, 3]] output_shape [2, 3, 2, 4]
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[E]] : tensor<2x3x2x4xf32>) outs(%{{.*}} : tensor<2x2x3x4xf32>) permutation = [0, 2, 1, 3]
// CHECK: tessel.packed_conv2d ins(%{{.*}}, %[[T]] : tensor<2x1x5x3xf32>, tensor<2x2x3x4xf32>) outs(%{{.*}} : tensor<2x1x5x6xf32>) {accumulate,
func.func @batch_matmul_runtime_b(%a: tensor<2x5x3xf32>, %b: tensor<2x3x6xf32>, %acc: tensor<2x5x6xf32>) -> tensor<2x5x6xf32> {
  %c = linalg.batch_matmul ins(%a, %b : tensor<2x5x3xf32>, tensor<2x3x6xf32>) outs(%acc : tensor<2x5x6xf32>) -> tensor<2x5x6xf32>
  return %c : tensor<2x5x6xf32>
}

// -----

// The clamp stays a generic when the conv result has another use.
// CHECK-LABEL: func @clamp_not_fused_when_conv_has_two_uses
// CHECK: %[[Y:.*]] = tessel.packed_conv2d
// CHECK-NOT: clamp_min
// CHECK: linalg.generic
// CHECK: arith.maximumf
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @clamp_not_fused_when_conv_has_two_uses(%x: tensor<1x4x4x2xf32>, %w: tensor<3x1x1x2xf32>, %i: tensor<1x4x4x3xf32>) -> (tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x4x4x2xf32>, tensor<3x1x1x2xf32>) outs(%i : tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
  %e = tensor.empty() : tensor<1x4x4x3xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c : tensor<1x4x4x3xf32>) outs(%e : tensor<1x4x4x3xf32>) {
  ^bb0(%a: f32, %out: f32):
    %n = arith.maximumf %a, %zero : f32
    linalg.yield %n : f32
  } -> tensor<1x4x4x3xf32>
  return %c, %r : tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>
}

// -----

// Only f32 has a kernel: other types stay linalg.
// CHECK-LABEL: func @f16_untouched
// CHECK: linalg.conv_2d_nhwc_fhwc
// CHECK-NOT: tessel.packed_conv2d
func.func @f16_untouched(%x: tensor<1x4x4x2xf16>, %w: tensor<3x1x1x2xf16>, %i: tensor<1x4x4x3xf16>) -> tensor<1x4x4x3xf16> {
  %c = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x4x4x2xf16>, tensor<3x1x1x2xf16>) outs(%i : tensor<1x4x4x3xf16>) -> tensor<1x4x4x3xf16>
  return %c : tensor<1x4x4x3xf16>
}

// -----

// Depthwise (multiplier 1) as tosa-to-linalg emits it: zero pad, 5-D
// zero-filled init, bias add over [C, 1] and ReLU6 after it. All of it is
// one tessel.depthwise_conv2d with implicit padding, bias and clamp; the
// 5-D shape is restored by a reshape for the users.
// CHECK-LABEL: func @depthwise_pad_bias_relu6
// CHECK-SAME: (%[[X:.*]]: tensor<1x6x6x8xf32>, %[[W:.*]]: tensor<3x3x8x1xf32>, %[[B:.*]]: tensor<8x1xf32>)
// CHECK-NOT: tensor.pad
// CHECK-DAG: %[[W3:.*]] = tensor.collapse_shape %[[W]] {{\[\[}}0], [1], [2, 3]] : tensor<3x3x8x1xf32> into tensor<3x3x8xf32>
// CHECK-DAG: %[[B1:.*]] = tensor.collapse_shape %[[B]] {{\[\[}}0, 1]] : tensor<8x1xf32> into tensor<8xf32>
// CHECK: %[[Y:.*]] = tessel.depthwise_conv2d ins(%[[X]], %[[W3]] : tensor<1x6x6x8xf32>, tensor<3x3x8xf32>) bias(%[[B1]] : tensor<8xf32>) outs(%{{.*}} : tensor<1x6x6x8xf32>) {clamp_max = 6.000000e+00 : f32, clamp_min = 0.000000e+00 : f32, dilations = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
// CHECK: %[[E:.*]] = tensor.expand_shape %[[Y]] {{\[\[}}0], [1], [2], [3, 4]]
// CHECK-NOT: linalg.generic
// CHECK: return %[[E]]
#bias = affine_map<(d0, d1, d2, d3, d4) -> (d3, d4)>
#id5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
func.func @depthwise_pad_bias_relu6(%x: tensor<1x6x6x8xf32>, %w: tensor<3x3x8x1xf32>, %b: tensor<8x1xf32>) -> tensor<1x6x6x8x1xf32> {
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<1x6x6x8xf32> to tensor<1x8x8x8xf32>
  %e = tensor.empty() : tensor<1x6x6x8x1xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x6x6x8x1xf32>) -> tensor<1x6x6x8x1xf32>
  %c = linalg.depthwise_conv_2d_nhwc_hwcm {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w : tensor<1x8x8x8xf32>, tensor<3x3x8x1xf32>) outs(%f : tensor<1x6x6x8x1xf32>) -> tensor<1x6x6x8x1xf32>
  %a = linalg.generic {indexing_maps = [#bias, #id5, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%b, %c : tensor<8x1xf32>, tensor<1x6x6x8x1xf32>) outs(%e : tensor<1x6x6x8x1xf32>) {
  ^bb0(%in: f32, %in2: f32, %out: f32):
    %s = arith.addf %in, %in2 : f32
    linalg.yield %s : f32
  } -> tensor<1x6x6x8x1xf32>
  %r = linalg.generic {indexing_maps = [#id5, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%a : tensor<1x6x6x8x1xf32>) outs(%e : tensor<1x6x6x8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.minimumf %in, %six : f32
    %n = arith.maximumf %m, %zero : f32
    linalg.yield %n : f32
  } -> tensor<1x6x6x8x1xf32>
  return %r : tensor<1x6x6x8x1xf32>
}

// -----

// A non-zero pad value cannot be implicit: the pad stays.
// CHECK-LABEL: func @depthwise_nonzero_pad
// CHECK: tensor.pad
// CHECK: tessel.depthwise_conv2d {{.*}}pad = array<i64: 0, 0, 0, 0>
func.func @depthwise_nonzero_pad(%x: tensor<1x6x6x8xf32>, %w: tensor<3x3x8xf32>, %i: tensor<1x6x6x8xf32>) -> tensor<1x6x6x8xf32> {
  %one = arith.constant 1.0 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %one : f32
  } : tensor<1x6x6x8xf32> to tensor<1x8x8x8xf32>
  %c = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w : tensor<1x8x8x8xf32>, tensor<3x3x8xf32>) outs(%i : tensor<1x6x6x8xf32>) -> tensor<1x6x6x8xf32>
  return %c : tensor<1x6x6x8xf32>
}

// -----

// Matmul bias added after the matmul (BERT's linear layers): fused through
// the collapse_shape the matmul rewrite leaves.
// CHECK-LABEL: func @matmul_bias_add
// CHECK: %[[Y:.*]] = tessel.packed_conv2d {{.*}} bias(%{{.*}} : tensor<2xf32>)
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[Y]]
// CHECK-NOT: linalg.generic
// CHECK: return %[[C]]
#b2 = affine_map<(d0, d1, d2) -> (0, 0, d2)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @matmul_bias_add(%a: tensor<1x5x3xf32>, %bias: tensor<1x1x2xf32>) -> tensor<1x5x2xf32> {
  %b = arith.constant dense<[[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]]> : tensor<1x3x2xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x5x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x5x2xf32>) -> tensor<1x5x2xf32>
  %c = linalg.batch_matmul ins(%a, %b : tensor<1x5x3xf32>, tensor<1x3x2xf32>) outs(%f : tensor<1x5x2xf32>) -> tensor<1x5x2xf32>
  %r = linalg.generic {indexing_maps = [#b2, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%bias, %c : tensor<1x1x2xf32>, tensor<1x5x2xf32>) outs(%e : tensor<1x5x2xf32>) {
  ^bb0(%in: f32, %in2: f32, %out: f32):
    %s = arith.addf %in, %in2 : f32
    linalg.yield %s : f32
  } -> tensor<1x5x2xf32>
  return %r : tensor<1x5x2xf32>
}

// -----

// SiLU as ONNX exports it (Sigmoid, then Mul with the same input) after a
// depthwise conv with a bias: one tessel.depthwise_conv2d with `silu`.
// CHECK-LABEL: func @depthwise_bias_silu
// CHECK: %[[Y:.*]] = tessel.depthwise_conv2d {{.*}} bias({{.*}}) {{.*}}silu
// CHECK-NOT: linalg.generic
// CHECK: return %[[Y]]
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#chan = affine_map<(d0, d1, d2, d3) -> (d3)>
func.func @depthwise_bias_silu(%x: tensor<1x6x6x8xf32>, %w: tensor<3x3x8xf32>, %b: tensor<8xf32>) -> tensor<1x4x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<1x4x4x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %c = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x6x6x8xf32>, tensor<3x3x8xf32>) outs(%f : tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %a = linalg.generic {indexing_maps = [#chan, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%b, %c : tensor<8xf32>, tensor<1x4x4x8xf32>) outs(%e : tensor<1x4x4x8xf32>) {
  ^bb0(%in: f32, %in2: f32, %out: f32):
    %s = arith.addf %in, %in2 : f32
    linalg.yield %s : f32
  } -> tensor<1x4x4x8xf32>
  %sig = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%a : tensor<1x4x4x8xf32>) outs(%e : tensor<1x4x4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    %x1 = math.exp %n : f32
    %d = arith.addf %x1, %one : f32
    %r = arith.divf %one, %d : f32
    linalg.yield %r : f32
  } -> tensor<1x4x4x8xf32>
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%a, %sig : tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) outs(%e : tensor<1x4x4x8xf32>) {
  ^bb0(%in: f32, %in2: f32, %out: f32):
    %m = arith.mulf %in, %in2 : f32
    linalg.yield %m : f32
  } -> tensor<1x4x4x8xf32>
  return %y : tensor<1x4x4x8xf32>
}

// -----

// The pre-activation is also returned: the multiply must stay.
// CHECK-LABEL: func @depthwise_silu_other_use
// CHECK: tessel.depthwise_conv2d
// CHECK-NOT: silu
// CHECK: math.exp
// CHECK: arith.mulf
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @depthwise_silu_other_use(%x: tensor<1x6x6x8xf32>, %w: tensor<3x3x8xf32>) -> (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<1x4x4x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %c = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x6x6x8xf32>, tensor<3x3x8xf32>) outs(%f : tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %sig = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c : tensor<1x4x4x8xf32>) outs(%e : tensor<1x4x4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    %x1 = math.exp %n : f32
    %d = arith.addf %x1, %one : f32
    %r = arith.divf %one, %d : f32
    linalg.yield %r : f32
  } -> tensor<1x4x4x8xf32>
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %sig : tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) outs(%e : tensor<1x4x4x8xf32>) {
  ^bb0(%in: f32, %in2: f32, %out: f32):
    %m = arith.mulf %in, %in2 : f32
    linalg.yield %m : f32
  } -> tensor<1x4x4x8xf32>
  return %y, %c : tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>
}

// -----

// Group g's filter of a grouped convolution is a slice of one constant
// (tessel-decompose-graph-ops): each slice becomes its own constant, packed
// at compile time (no linalg.pack or copy at run time), since slices are
// the constant's only users. 2 groups of 1 input, 1 output channel; 1x1
// filters 2.0 and 3.0, each packed into a panel of 4 columns.
// CHECK-LABEL: func @grouped_filter_slices
// CHECK-DAG: %[[W0:.*]] = arith.constant dense<{{\[\[\[}}2.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00]]]> : tensor<1x1x4xf32>
// CHECK-DAG: %[[W1:.*]] = arith.constant dense<{{\[\[\[}}3.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00]]]> : tensor<1x1x4xf32>
// CHECK-NOT: linalg.pack
// CHECK-NOT: tensor.extract_slice %cst
// CHECK: tessel.packed_conv2d ins(%{{.*}}, %[[W0]]
// CHECK: tessel.packed_conv2d ins(%{{.*}}, %[[W1]]
func.func @grouped_filter_slices(%x0: tensor<1x2x2x1xf32>, %x1: tensor<1x2x2x1xf32>)
    -> (tensor<1x2x2x1xf32>, tensor<1x2x2x1xf32>) {
  %w = arith.constant dense<[[[[2.0]]], [[[3.0]]]]> : tensor<2x1x1x1xf32>
  %w0 = tensor.extract_slice %w[0, 0, 0, 0] [1, 1, 1, 1] [1, 1, 1, 1] : tensor<2x1x1x1xf32> to tensor<1x1x1x1xf32>
  %w1 = tensor.extract_slice %w[1, 0, 0, 0] [1, 1, 1, 1] [1, 1, 1, 1] : tensor<2x1x1x1xf32> to tensor<1x1x1x1xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x2x1xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x2x1xf32>) -> tensor<1x2x2x1xf32>
  %y0 = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x0, %w0 : tensor<1x2x2x1xf32>, tensor<1x1x1x1xf32>) outs(%init : tensor<1x2x2x1xf32>) -> tensor<1x2x2x1xf32>
  %y1 = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x1, %w1 : tensor<1x2x2x1xf32>, tensor<1x1x1x1xf32>) outs(%init : tensor<1x2x2x1xf32>) -> tensor<1x2x2x1xf32>
  return %y0, %y1 : tensor<1x2x2x1xf32>, tensor<1x2x2x1xf32>
}

// -----

// A slice of a constant that has another (non-slice) user is left alone:
// folding it would store those values twice.
// CHECK-LABEL: func @shared_constant_slice
// CHECK: %[[W:.*]] = arith.constant dense<{{.*}}> : tensor<2x1x1x1xf32>
// CHECK: tensor.extract_slice %[[W]]
func.func @shared_constant_slice(%x0: tensor<1x2x2x1xf32>) -> (tensor<1x2x2x1xf32>, tensor<2x1x1x1xf32>) {
  %w = arith.constant dense<[[[[2.0]]], [[[3.0]]]]> : tensor<2x1x1x1xf32>
  %w0 = tensor.extract_slice %w[0, 0, 0, 0] [1, 1, 1, 1] [1, 1, 1, 1] : tensor<2x1x1x1xf32> to tensor<1x1x1x1xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x2x1xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x2x1xf32>) -> tensor<1x2x2x1xf32>
  %y0 = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x0, %w0 : tensor<1x2x2x1xf32>, tensor<1x1x1x1xf32>) outs(%init : tensor<1x2x2x1xf32>) -> tensor<1x2x2x1xf32>
  return %y0, %w : tensor<1x2x2x1xf32>, tensor<2x1x1x1xf32>
}

// -----

// A constant filter cut into taps (what tessel-trim-padded-taps leaves): each
// slice becomes a constant of its own and its packing folds at compile time;
// no pack, transpose or slice of weights is left to run at every call.
// CHECK-LABEL: func @sliced_constant_filter
// CHECK-NOT: tensor.extract_slice
// CHECK-NOT: linalg.transpose
// CHECK-NOT: linalg.pack
// CHECK-DAG: %[[W0:.*]] = arith.constant dense<{{.*}}> : tensor<1x2x4xf32>
// CHECK-DAG: %[[W1:.*]] = arith.constant dense<{{.*}}> : tensor<1x4x4xf32>
// CHECK-DAG: tessel.packed_conv2d ins(%{{.*}}, %[[W0]] : tensor<1x1x1x2xf32>, tensor<1x2x4xf32>)
// CHECK-DAG: tessel.packed_conv2d ins(%{{.*}}, %[[W1]] : tensor<1x1x2x2xf32>, tensor<1x4x4xf32>)
func.func @sliced_constant_filter(%x: tensor<1x1x2x2xf32>) -> (tensor<1x1x1x3xf32>, tensor<1x1x1x3xf32>) {
  %w = arith.constant dense<[[[[1.0, 2.0], [3.0, 4.0]]], [[[5.0, 6.0], [7.0, 8.0]]], [[[9.0, 10.0], [11.0, 12.0]]]]> : tensor<3x1x2x2xf32>
  %w0 = tensor.extract_slice %w[0, 0, 1, 0] [3, 1, 1, 2] [1, 1, 1, 1] : tensor<3x1x2x2xf32> to tensor<3x1x1x2xf32>
  %x0 = tensor.extract_slice %x[0, 0, 1, 0] [1, 1, 1, 2] [1, 1, 1, 1] : tensor<1x1x2x2xf32> to tensor<1x1x1x2xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x1x1x3xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x1x1x3xf32>) -> tensor<1x1x1x3xf32>
  %c0 = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x0, %w0 : tensor<1x1x1x2xf32>, tensor<3x1x1x2xf32>) outs(%init : tensor<1x1x1x3xf32>) -> tensor<1x1x1x3xf32>
  %w1 = tensor.extract_slice %w[0, 0, 0, 0] [3, 1, 2, 2] [1, 1, 1, 1] : tensor<3x1x2x2xf32> to tensor<3x1x2x2xf32>
  %c1 = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w1 : tensor<1x1x2x2xf32>, tensor<3x1x2x2xf32>) outs(%init : tensor<1x1x1x3xf32>) -> tensor<1x1x1x3xf32>
  return %c0, %c1 : tensor<1x1x1x3xf32>, tensor<1x1x1x3xf32>
}

// -----

// A batch known only at run time (a model exported with a symbolic batch)
// still takes the kernel: the image count is read at run time.
// CHECK-LABEL: func @conv_dynamic_batch
// CHECK: tessel.packed_conv2d ins(%{{.*}}, %{{.*}} : tensor<?x6x6x2xf32>, tensor<1x18x4xf32>) {{.*}} -> tensor<?x4x4x3xf32>
// CHECK-NOT: linalg.conv_2d_nhwc_fhwc
func.func @conv_dynamic_batch(%x: tensor<?x6x6x2xf32>) -> tensor<?x4x4x3xf32> {
  %w = arith.constant dense<0.5> : tensor<3x3x3x2xf32>
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x6x6x2xf32>
  %e = tensor.empty(%n) : tensor<?x4x4x3xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<?x4x4x3xf32>) -> tensor<?x4x4x3xf32>
  %c = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<?x6x6x2xf32>, tensor<3x3x3x2xf32>) outs(%init : tensor<?x4x4x3xf32>) -> tensor<?x4x4x3xf32>
  return %c : tensor<?x4x4x3xf32>
}
