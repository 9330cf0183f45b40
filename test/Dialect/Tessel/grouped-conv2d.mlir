// RUN: tessel-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// Round trip, on tensors (padded, bias, clamp) and on memrefs (strided,
// accumulating). 8 groups of 4 channels: the filter packs to 9 taps x 2
// blocks of 16 channels x 4 rotations x 16 lanes.
// CHECK-LABEL: func @round_trip
// CHECK: tessel.grouped_conv2d ins(%{{.*}}, %{{.*}} : tensor<?x6x6x32xf32>, tensor<9x2x4x16xf32>) bias(%{{.*}} : tensor<32xf32>) outs(%{{.*}} : tensor<?x6x6x32xf32>) {clamp_min = 0.000000e+00 : f32, dilations = array<i64: 1, 1>, groups = 8 : i64, kernel_size = array<i64: 3, 3>, packing = "rotated", pad = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} -> tensor<?x6x6x32xf32>
// CHECK: tessel.grouped_conv2d ins(%{{.*}}, %{{.*}} : memref<1x7x7x8xf32>, memref<9x1x2x16xf32>) outs(%{{.*}} : memref<1x3x3x8xf32>) {accumulate, dilations = array<i64: 1, 1>, groups = 4 : i64, kernel_size = array<i64: 3, 3>, packing = "rotated", strides = array<i64: 2, 2>}
func.func @round_trip(%x: tensor<?x6x6x32xf32>, %w: tensor<9x2x4x16xf32>, %b: tensor<32xf32>, %c: tensor<?x6x6x32xf32>,
                      %xm: memref<1x7x7x8xf32>, %wm: memref<9x1x2x16xf32>, %cm: memref<1x3x3x8xf32>) -> tensor<?x6x6x32xf32> {
  %r = tessel.grouped_conv2d ins(%x, %w : tensor<?x6x6x32xf32>, tensor<9x2x4x16xf32>) bias(%b : tensor<32xf32>) outs(%c : tensor<?x6x6x32xf32>) {groups = 8 : i64, packing = "rotated", kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, clamp_min = 0.0 : f32} -> tensor<?x6x6x32xf32>
  tessel.grouped_conv2d ins(%xm, %wm : memref<1x7x7x8xf32>, memref<9x1x2x16xf32>) outs(%cm : memref<1x3x3x8xf32>) {groups = 4 : i64, packing = "rotated", kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, accumulate}
  return %r : tensor<?x6x6x32xf32>
}

// -----

func.func @groups_of_twelve(%x: tensor<1x6x6x48xf32>, %w: tensor<9x3x12x16xf32>, %c: tensor<1x6x6x48xf32>) -> tensor<1x6x6x48xf32> {
  // expected-error @+1 {{rotated packing needs square groups of a divisor of 16 channels, got 12 in, 12 out}}
  %r = tessel.grouped_conv2d ins(%x, %w : tensor<1x6x6x48xf32>, tensor<9x3x12x16xf32>) outs(%c : tensor<1x6x6x48xf32>) {groups = 4 : i64, packing = "rotated", kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>} -> tensor<1x6x6x48xf32>
  return %r : tensor<1x6x6x48xf32>
}

// -----

// Wide groups (32 channels) are packed c-major: taps x groups x 32 x 32.
func.func @wide_packed_shape(%x: tensor<1x6x6x64xf32>, %w: tensor<9x4x32x16xf32>, %c: tensor<1x6x6x64xf32>) -> tensor<1x6x6x64xf32> {
  // expected-error @+1 {{packed_filter must be 9x2x32x32 for cmajor packing}}
  %r = tessel.grouped_conv2d ins(%x, %w : tensor<1x6x6x64xf32>, tensor<9x4x32x16xf32>) outs(%c : tensor<1x6x6x64xf32>) {groups = 2 : i64, packing = "cmajor", kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>} -> tensor<1x6x6x64xf32>
  return %r : tensor<1x6x6x64xf32>
}

// -----

func.func @channels_differ(%x: tensor<1x6x6x16xf32>, %w: tensor<9x2x4x16xf32>, %c: tensor<1x6x6x32xf32>) -> tensor<1x6x6x32xf32> {
  // expected-error @+1 {{rotated packing needs square groups of a divisor of 16 channels, got 2 in, 4 out}}
  %r = tessel.grouped_conv2d ins(%x, %w : tensor<1x6x6x16xf32>, tensor<9x2x4x16xf32>) outs(%c : tensor<1x6x6x32xf32>) {groups = 8 : i64, packing = "rotated", kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>} -> tensor<1x6x6x32xf32>
  return %r : tensor<1x6x6x32xf32>
}

// -----

func.func @packed_shape(%x: tensor<1x6x6x32xf32>, %w: tensor<9x2x2x16xf32>, %c: tensor<1x6x6x32xf32>) -> tensor<1x6x6x32xf32> {
  // expected-error @+1 {{packed_filter must be 9x2x4x16 for rotated packing}}
  %r = tessel.grouped_conv2d ins(%x, %w : tensor<1x6x6x32xf32>, tensor<9x2x2x16xf32>) outs(%c : tensor<1x6x6x32xf32>) {groups = 8 : i64, packing = "rotated", kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>} -> tensor<1x6x6x32xf32>
  return %r : tensor<1x6x6x32xf32>
}

// -----

func.func @output_size(%x: tensor<1x6x6x32xf32>, %w: tensor<9x2x4x16xf32>, %c: tensor<1x5x6x32xf32>) -> tensor<1x5x6x32xf32> {
  // expected-error @+1 {{output spatial dim 0 is 5, expected 6}}
  %r = tessel.grouped_conv2d ins(%x, %w : tensor<1x6x6x32xf32>, tensor<9x2x4x16xf32>) outs(%c : tensor<1x5x6x32xf32>) {groups = 8 : i64, packing = "rotated", kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>} -> tensor<1x5x6x32xf32>
  return %r : tensor<1x5x6x32xf32>
}

// -----

func.func @not_f32(%x: tensor<1x6x6x32xf16>, %w: tensor<9x2x4x16xf32>, %c: tensor<1x6x6x32xf32>) -> tensor<1x6x6x32xf32> {
  // expected-error @+1 {{only f32 is supported}}
  %r = tessel.grouped_conv2d ins(%x, %w : tensor<1x6x6x32xf16>, tensor<9x2x4x16xf32>) outs(%c : tensor<1x6x6x32xf32>) {groups = 8 : i64, packing = "rotated", kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>} -> tensor<1x6x6x32xf32>
  return %r : tensor<1x6x6x32xf32>
}

// -----

// Panels: any groups (here 2 in, 4 out), the dense kernel's panels per
// group: groups x ceil(fg / NR) x KH*KW*cg x NR.
// CHECK-LABEL: func @panels
// CHECK: packing = "panels"
func.func @panels(%x: tensor<1x6x6x16xf32>, %w: tensor<8x1x18x4xf32>, %c: tensor<1x6x6x32xf32>) -> tensor<1x6x6x32xf32> {
  %r = tessel.grouped_conv2d ins(%x, %w : tensor<1x6x6x16xf32>, tensor<8x1x18x4xf32>) outs(%c : tensor<1x6x6x32xf32>) {groups = 8 : i64, packing = "panels", kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>} -> tensor<1x6x6x32xf32>
  return %r : tensor<1x6x6x32xf32>
}

// -----

func.func @panels_shape(%x: tensor<1x6x6x16xf32>, %w: tensor<8x2x18x4xf32>, %c: tensor<1x6x6x32xf32>) -> tensor<1x6x6x32xf32> {
  // expected-error @+1 {{packed_filter must be 8x1x18x4 for panels packing}}
  %r = tessel.grouped_conv2d ins(%x, %w : tensor<1x6x6x16xf32>, tensor<8x2x18x4xf32>) outs(%c : tensor<1x6x6x32xf32>) {groups = 8 : i64, packing = "panels", kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>} -> tensor<1x6x6x32xf32>
  return %r : tensor<1x6x6x32xf32>
}

// -----

func.func @unknown_packing(%x: tensor<1x6x6x32xf32>, %w: tensor<9x2x4x16xf32>, %c: tensor<1x6x6x32xf32>) -> tensor<1x6x6x32xf32> {
  // expected-error @+1 {{packing must be rotated, cmajor or panels, got 'tiles'}}
  %r = tessel.grouped_conv2d ins(%x, %w : tensor<1x6x6x32xf32>, tensor<9x2x4x16xf32>) outs(%c : tensor<1x6x6x32xf32>) {groups = 8 : i64, packing = "tiles", kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>} -> tensor<1x6x6x32xf32>
  return %r : tensor<1x6x6x32xf32>
}

// -----

func.func @groups_divide(%x: tensor<1x6x6x30xf32>, %w: tensor<9x2x4x16xf32>, %c: tensor<1x6x6x32xf32>) -> tensor<1x6x6x32xf32> {
  // expected-error @+1 {{groups = 8 must divide the 30 input and 32 output channels}}
  %r = tessel.grouped_conv2d ins(%x, %w : tensor<1x6x6x30xf32>, tensor<9x2x4x16xf32>) outs(%c : tensor<1x6x6x32xf32>) {groups = 8 : i64, packing = "rotated", kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>} -> tensor<1x6x6x32xf32>
  return %r : tensor<1x6x6x32xf32>
}
