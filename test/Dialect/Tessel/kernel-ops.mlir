// RUN: tessel-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// Round trip on tensors (with bias and clamp) and on memrefs (no result).
// CHECK-LABEL: func @round_trip
// CHECK: tessel.packed_conv2d ins(%{{.*}}, %{{.*}} : tensor<1x9x9x8xf32>, tensor<1x72x64xf32>) bias(%{{.*}} : tensor<16xf32>) outs(%{{.*}} : tensor<1x7x7x16xf32>) {clamp_min = 0.000000e+00 : f32, dilations = array<i64: 1, 1>, kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>} -> tensor<1x7x7x16xf32>
// CHECK: tessel.packed_conv2d ins(%{{.*}}, %{{.*}} : memref<2x1x5x8xf32>, memref<2x1x8x64xf32>) outs(%{{.*}} : memref<2x1x5x3xf32>) {accumulate,
func.func @round_trip(%x: tensor<1x9x9x8xf32>, %w: tensor<1x72x64xf32>, %b: tensor<16xf32>,
                      %i: tensor<1x7x7x16xf32>, %a: memref<2x1x5x8xf32>,
                      %bw: memref<2x1x8x64xf32>, %o: memref<2x1x5x3xf32>) -> tensor<1x7x7x16xf32> {
  %y = tessel.packed_conv2d ins(%x, %w : tensor<1x9x9x8xf32>, tensor<1x72x64xf32>)
      bias(%b : tensor<16xf32>) outs(%i : tensor<1x7x7x16xf32>)
      {kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>,
       dilations = array<i64: 1, 1>, clamp_min = 0.0 : f32} -> tensor<1x7x7x16xf32>
  tessel.packed_conv2d ins(%a, %bw : memref<2x1x5x8xf32>, memref<2x1x8x64xf32>)
      outs(%o : memref<2x1x5x3xf32>)
      {kernel_size = array<i64: 1, 1>, strides = array<i64: 1, 1>,
       dilations = array<i64: 1, 1>, accumulate}
  return %y : tensor<1x7x7x16xf32>
}

// -----

func.func @wrong_reduction(%x: tensor<1x9x9x8xf32>, %w: tensor<1x70x64xf32>, %i: tensor<1x7x7x16xf32>) -> tensor<1x7x7x16xf32> {
  // expected-error @+1 {{packed_filter reduction size is 70, expected KH*KW*C = 72}}
  %y = tessel.packed_conv2d ins(%x, %w : tensor<1x9x9x8xf32>, tensor<1x70x64xf32>)
      outs(%i : tensor<1x7x7x16xf32>)
      {kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>} -> tensor<1x7x7x16xf32>
  return %y : tensor<1x7x7x16xf32>
}

// -----

func.func @wrong_panels(%x: tensor<1x9x9x8xf32>, %w: tensor<2x72x64xf32>, %i: tensor<1x7x7x16xf32>) -> tensor<1x7x7x16xf32> {
  // expected-error @+1 {{packed_filter has 2 panels, but 16 output channels need 1}}
  %y = tessel.packed_conv2d ins(%x, %w : tensor<1x9x9x8xf32>, tensor<2x72x64xf32>)
      outs(%i : tensor<1x7x7x16xf32>)
      {kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>} -> tensor<1x7x7x16xf32>
  return %y : tensor<1x7x7x16xf32>
}

// -----

func.func @input_too_small(%x: tensor<1x8x9x8xf32>, %w: tensor<1x72x64xf32>, %i: tensor<1x7x7x16xf32>) -> tensor<1x7x7x16xf32> {
  // expected-error @+1 {{input spatial dim 0 is 8, but the output needs at least 9}}
  %y = tessel.packed_conv2d ins(%x, %w : tensor<1x8x9x8xf32>, tensor<1x72x64xf32>)
      outs(%i : tensor<1x7x7x16xf32>)
      {kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>} -> tensor<1x7x7x16xf32>
  return %y : tensor<1x7x7x16xf32>
}

// -----

func.func @not_f32(%x: tensor<1x9x9x8xf16>, %w: tensor<1x72x64xf16>, %i: tensor<1x7x7x16xf16>) -> tensor<1x7x7x16xf16> {
  // expected-error @+1 {{only f32 is supported}}
  %y = tessel.packed_conv2d ins(%x, %w : tensor<1x9x9x8xf16>, tensor<1x72x64xf16>)
      outs(%i : tensor<1x7x7x16xf16>)
      {kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>} -> tensor<1x7x7x16xf16>
  return %y : tensor<1x7x7x16xf16>
}

// -----

func.func @mixed(%x: tensor<1x9x9x8xf32>, %w: memref<1x72x64xf32>, %i: tensor<1x7x7x16xf32>) -> tensor<1x7x7x16xf32> {
  // expected-error @+1 {{operands must be all ranked tensors or all memrefs}}
  %y = tessel.packed_conv2d ins(%x, %w : tensor<1x9x9x8xf32>, memref<1x72x64xf32>)
      outs(%i : tensor<1x7x7x16xf32>)
      {kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>} -> tensor<1x7x7x16xf32>
  return %y : tensor<1x7x7x16xf32>
}

// -----

func.func @bad_clamp(%x: tensor<1x9x9x8xf32>, %w: tensor<1x72x64xf32>, %i: tensor<1x7x7x16xf32>) -> tensor<1x7x7x16xf32> {
  // expected-error @+1 {{clamp_min is greater than clamp_max}}
  %y = tessel.packed_conv2d ins(%x, %w : tensor<1x9x9x8xf32>, tensor<1x72x64xf32>)
      outs(%i : tensor<1x7x7x16xf32>)
      {kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>,
       clamp_min = 1.0 : f32, clamp_max = 0.0 : f32} -> tensor<1x7x7x16xf32>
  return %y : tensor<1x7x7x16xf32>
}

// -----

func.func @bad_bias(%x: tensor<1x9x9x8xf32>, %w: tensor<1x72x64xf32>, %b: tensor<15xf32>, %i: tensor<1x7x7x16xf32>) -> tensor<1x7x7x16xf32> {
  // expected-error @+1 {{bias must be 1-D with one value per output channel}}
  %y = tessel.packed_conv2d ins(%x, %w : tensor<1x9x9x8xf32>, tensor<1x72x64xf32>)
      bias(%b : tensor<15xf32>) outs(%i : tensor<1x7x7x16xf32>)
      {kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>} -> tensor<1x7x7x16xf32>
  return %y : tensor<1x7x7x16xf32>
}

// -----

// CHECK-LABEL: func @depthwise_round_trip
// CHECK: tessel.depthwise_conv2d ins(%{{.*}}, %{{.*}} : tensor<1x8x8x32xf32>, tensor<3x3x32xf32>) bias(%{{.*}} : tensor<32xf32>) outs(%{{.*}} : tensor<1x4x4x32xf32>) {clamp_max = 6.000000e+00 : f32, clamp_min = 0.000000e+00 : f32, dilations = array<i64: 1, 1>, pad = array<i64: 0, 1, 0, 1>, strides = array<i64: 2, 2>} -> tensor<1x4x4x32xf32>
func.func @depthwise_round_trip(%x: tensor<1x8x8x32xf32>, %w: tensor<3x3x32xf32>, %b: tensor<32xf32>, %i: tensor<1x4x4x32xf32>) -> tensor<1x4x4x32xf32> {
  %y = tessel.depthwise_conv2d ins(%x, %w : tensor<1x8x8x32xf32>, tensor<3x3x32xf32>)
      bias(%b : tensor<32xf32>) outs(%i : tensor<1x4x4x32xf32>)
      {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad = array<i64: 0, 1, 0, 1>,
       clamp_min = 0.0 : f32, clamp_max = 6.0 : f32} -> tensor<1x4x4x32xf32>
  return %y : tensor<1x4x4x32xf32>
}

// -----

func.func @depthwise_wrong_output(%x: tensor<1x8x8x32xf32>, %w: tensor<3x3x32xf32>, %i: tensor<1x8x8x32xf32>) -> tensor<1x8x8x32xf32> {
  // expected-error @+1 {{output spatial dim 0 is 8, expected 6}}
  %y = tessel.depthwise_conv2d ins(%x, %w : tensor<1x8x8x32xf32>, tensor<3x3x32xf32>)
      outs(%i : tensor<1x8x8x32xf32>)
      {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>} -> tensor<1x8x8x32xf32>
  return %y : tensor<1x8x8x32xf32>
}

// -----

func.func @depthwise_channels(%x: tensor<1x8x8x32xf32>, %w: tensor<3x3x16xf32>, %i: tensor<1x8x8x32xf32>) -> tensor<1x8x8x32xf32> {
  // expected-error @+1 {{input, filter and init must have the same channel count}}
  %y = tessel.depthwise_conv2d ins(%x, %w : tensor<1x8x8x32xf32>, tensor<3x3x16xf32>)
      outs(%i : tensor<1x8x8x32xf32>)
      {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>} -> tensor<1x8x8x32xf32>
  return %y : tensor<1x8x8x32xf32>
}

// -----

func.func @depthwise_bad_pad(%x: tensor<1x8x8x32xf32>, %w: tensor<3x3x32xf32>, %i: tensor<1x8x8x32xf32>) -> tensor<1x8x8x32xf32> {
  // expected-error @+1 {{pad must have 4 values [top, bottom, left, right]}}
  %y = tessel.depthwise_conv2d ins(%x, %w : tensor<1x8x8x32xf32>, tensor<3x3x32xf32>)
      outs(%i : tensor<1x8x8x32xf32>)
      {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad = array<i64: 1, 1>} -> tensor<1x8x8x32xf32>
  return %y : tensor<1x8x8x32xf32>
}

// -----

// tessel.attention round trip: tensors with a broadcast causal mask, and
// memrefs (strided views are fine: the kernel takes every stride).
// CHECK-LABEL: func @attention_round_trip
// CHECK: tessel.attention ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<4x16x8xf32>, tensor<4x32x8xf32>, tensor<4x32x12xf32>) mask(%{{.*}} : tensor<1x16x32xf32>) outs(%{{.*}} : tensor<4x16x12xf32>) {scale = 1.250000e-01 : f32} -> tensor<4x16x12xf32>
// CHECK: tessel.attention ins(%{{.*}}, %{{.*}}, %{{.*}} : memref<2x5x8xf32, strided<[8, 16, 1]>>, memref<2x5x8xf32>, memref<2x5x8xf32>) outs(%{{.*}} : memref<2x5x8xf32>)
// CHECK-NOT: scale
func.func @attention_round_trip(%q: tensor<4x16x8xf32>, %k: tensor<4x32x8xf32>,
    %v: tensor<4x32x12xf32>, %m: tensor<1x16x32xf32>, %i: tensor<4x16x12xf32>,
    %mq: memref<2x5x8xf32, strided<[8, 16, 1]>>, %mk: memref<2x5x8xf32>,
    %mo: memref<2x5x8xf32>) -> tensor<4x16x12xf32> {
  %o = tessel.attention ins(%q, %k, %v : tensor<4x16x8xf32>, tensor<4x32x8xf32>, tensor<4x32x12xf32>)
      mask(%m : tensor<1x16x32xf32>) outs(%i : tensor<4x16x12xf32>) {scale = 0.125 : f32}
      -> tensor<4x16x12xf32>
  tessel.attention ins(%mq, %mk, %mk : memref<2x5x8xf32, strided<[8, 16, 1]>>, memref<2x5x8xf32>, memref<2x5x8xf32>)
      outs(%mo : memref<2x5x8xf32>)
  return %o : tensor<4x16x12xf32>
}

// -----

func.func @attention_head_dims(%q: tensor<4x16x8xf32>, %k: tensor<4x32x4xf32>,
    %v: tensor<4x32x12xf32>, %i: tensor<4x16x12xf32>) -> tensor<4x16x12xf32> {
  // expected-error @+1 {{query and key head dim (D) sizes differ: 8 vs 4}}
  %o = tessel.attention ins(%q, %k, %v : tensor<4x16x8xf32>, tensor<4x32x4xf32>, tensor<4x32x12xf32>)
      outs(%i : tensor<4x16x12xf32>) -> tensor<4x16x12xf32>
  return %o : tensor<4x16x12xf32>
}

// -----

func.func @attention_lengths(%q: tensor<4x16x8xf32>, %k: tensor<4x32x8xf32>,
    %v: tensor<4x31x12xf32>, %i: tensor<4x16x12xf32>) -> tensor<4x16x12xf32> {
  // expected-error @+1 {{key and value length (N) sizes differ: 32 vs 31}}
  %o = tessel.attention ins(%q, %k, %v : tensor<4x16x8xf32>, tensor<4x32x8xf32>, tensor<4x31x12xf32>)
      outs(%i : tensor<4x16x12xf32>) -> tensor<4x16x12xf32>
  return %o : tensor<4x16x12xf32>
}

// -----

func.func @attention_mask(%q: tensor<4x16x8xf32>, %k: tensor<4x32x8xf32>,
    %v: tensor<4x32x12xf32>, %m: tensor<2x16x32xf32>, %i: tensor<4x16x12xf32>) -> tensor<4x16x12xf32> {
  // expected-error @+1 {{mask dim 0 is 2, expected 1 or 4}}
  %o = tessel.attention ins(%q, %k, %v : tensor<4x16x8xf32>, tensor<4x32x8xf32>, tensor<4x32x12xf32>)
      mask(%m : tensor<2x16x32xf32>) outs(%i : tensor<4x16x12xf32>) -> tensor<4x16x12xf32>
  return %o : tensor<4x16x12xf32>
}

// -----

func.func @attention_rank(%q: tensor<16x8xf32>, %k: tensor<4x32x8xf32>,
    %v: tensor<4x32x12xf32>, %i: tensor<4x16x12xf32>) -> tensor<4x16x12xf32> {
  // expected-error @+1 {{operands must be rank 3, got 'tensor<16x8xf32>'}}
  %o = tessel.attention ins(%q, %k, %v : tensor<16x8xf32>, tensor<4x32x8xf32>, tensor<4x32x12xf32>)
      outs(%i : tensor<4x16x12xf32>) -> tensor<4x16x12xf32>
  return %o : tensor<4x16x12xf32>
}

// -----

func.func @attention_f16(%q: tensor<4x16x8xf16>, %k: tensor<4x32x8xf16>,
    %v: tensor<4x32x12xf16>, %i: tensor<4x16x12xf16>) -> tensor<4x16x12xf16> {
  // expected-error @+1 {{only f32 is supported}}
  %o = tessel.attention ins(%q, %k, %v : tensor<4x16x8xf16>, tensor<4x32x8xf16>, tensor<4x32x12xf16>)
      outs(%i : tensor<4x16x12xf16>) -> tensor<4x16x12xf16>
  return %o : tensor<4x16x12xf16>
}

// -----

// The Winograd form: 3x3, strides 1, a 16 x P x C x NR filter.
// CHECK-LABEL: func @winograd_round_trip
// CHECK: tessel.packed_conv2d ins(%{{.*}}, %{{.*}} : tensor<2x7x7x8xf32>, tensor<16x1x8x64xf32>) outs(%{{.*}} : tensor<2x7x7x16xf32>) {dilations = array<i64: 1, 1>, kernel_size = array<i64: 3, 3>, pad = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, winograd} -> tensor<2x7x7x16xf32>
func.func @winograd_round_trip(%x: tensor<2x7x7x8xf32>, %u: tensor<16x1x8x64xf32>, %i: tensor<2x7x7x16xf32>) -> tensor<2x7x7x16xf32> {
  %y = tessel.packed_conv2d ins(%x, %u : tensor<2x7x7x8xf32>, tensor<16x1x8x64xf32>)
      outs(%i : tensor<2x7x7x16xf32>)
      {kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>,
       dilations = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, winograd} -> tensor<2x7x7x16xf32>
  return %y : tensor<2x7x7x16xf32>
}

// -----

func.func @winograd_strided(%x: tensor<1x9x9x8xf32>, %u: tensor<16x1x8x64xf32>, %i: tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xf32> {
  // expected-error @+1 {{winograd needs a 3x3 kernel with strides 1}}
  %y = tessel.packed_conv2d ins(%x, %u : tensor<1x9x9x8xf32>, tensor<16x1x8x64xf32>)
      outs(%i : tensor<1x4x4x16xf32>)
      {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>,
       dilations = array<i64: 1, 1>, winograd} -> tensor<1x4x4x16xf32>
  return %y : tensor<1x4x4x16xf32>
}

// -----

func.func @winograd_direct_filter(%x: tensor<1x9x9x8xf32>, %w: tensor<1x72x64xf32>, %i: tensor<1x7x7x16xf32>) -> tensor<1x7x7x16xf32> {
  // expected-error @+1 {{winograd needs a 16 x P x C x NR (F(2x2, 3x3)) or 36 x P x C x NR (F(4x4, 3x3)) packed_filter}}
  %y = tessel.packed_conv2d ins(%x, %w : tensor<1x9x9x8xf32>, tensor<1x72x64xf32>)
      outs(%i : tensor<1x7x7x16xf32>)
      {kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>,
       dilations = array<i64: 1, 1>, winograd} -> tensor<1x7x7x16xf32>
  return %y : tensor<1x7x7x16xf32>
}

// -----

func.func @winograd_wrong_channels(%x: tensor<1x9x9x8xf32>, %u: tensor<16x1x9x64xf32>, %i: tensor<1x7x7x16xf32>) -> tensor<1x7x7x16xf32> {
  // expected-error @+1 {{winograd packed_filter reduction size is 9, expected C = 8}}
  %y = tessel.packed_conv2d ins(%x, %u : tensor<1x9x9x8xf32>, tensor<16x1x9x64xf32>)
      outs(%i : tensor<1x7x7x16xf32>)
      {kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>,
       dilations = array<i64: 1, 1>, winograd} -> tensor<1x7x7x16xf32>
  return %y : tensor<1x7x7x16xf32>
}

// -----

func.func @winograd_wrong_panels(%x: tensor<1x9x9x8xf32>, %u: tensor<16x2x8x64xf32>, %i: tensor<1x7x7x16xf32>) -> tensor<1x7x7x16xf32> {
  // expected-error @+1 {{packed_filter has 2 panels, but 16 output channels need 1}}
  %y = tessel.packed_conv2d ins(%x, %u : tensor<1x9x9x8xf32>, tensor<16x2x8x64xf32>)
      outs(%i : tensor<1x7x7x16xf32>)
      {kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>,
       dilations = array<i64: 1, 1>, winograd} -> tensor<1x7x7x16xf32>
  return %y : tensor<1x7x7x16xf32>
}

// -----

// tessel.packed_matmul_i8: round trip on tensors and memrefs.
// CHECK-LABEL: func.func @matmul_i8
// CHECK: tessel.packed_matmul_i8 ins(%{{.*}}, %{{.*}} : tensor<1x5x70xi8>, tensor<1x18x64x4xi8>) column_sums(%{{.*}} : tensor<10xi32>) outs(%{{.*}} : tensor<1x5x10xi32>) {a_signed, a_zp = 3 : i32, b_zp = 0 : i32} -> tensor<1x5x10xi32>
// CHECK: tessel.packed_matmul_i8 ins(%{{.*}}, %{{.*}} : memref<2x5x70xi8>, memref<2x1x18x64x4xi8>) outs(%{{.*}} : memref<2x5x10xi32>) {a_zp = 0 : i32, accumulate, b_zp = 1 : i32}
func.func @matmul_i8(%a: tensor<1x5x70xi8>, %b: tensor<1x18x64x4xi8>, %s: tensor<10xi32>, %c: tensor<1x5x10xi32>,
                     %ma: memref<2x5x70xi8>, %mb: memref<2x1x18x64x4xi8>, %mc: memref<2x5x10xi32>) -> tensor<1x5x10xi32> {
  %r = tessel.packed_matmul_i8 ins(%a, %b : tensor<1x5x70xi8>, tensor<1x18x64x4xi8>)
      column_sums(%s : tensor<10xi32>) outs(%c : tensor<1x5x10xi32>)
      {a_zp = 3 : i32, b_zp = 0 : i32, a_signed} -> tensor<1x5x10xi32>
  tessel.packed_matmul_i8 ins(%ma, %mb : memref<2x5x70xi8>, memref<2x1x18x64x4xi8>)
      outs(%mc : memref<2x5x10xi32>) {a_zp = 0 : i32, b_zp = 1 : i32, accumulate}
  return %r : tensor<1x5x10xi32>
}

// -----

func.func @matmul_i8_groups(%a: tensor<1x5x70xi8>, %b: tensor<1x17x64x4xi8>, %c: tensor<1x5x10xi32>) -> tensor<1x5x10xi32> {
  // expected-error @+1 {{packed_b has 17 groups of 4 k, but K is 70}}
  %r = tessel.packed_matmul_i8 ins(%a, %b : tensor<1x5x70xi8>, tensor<1x17x64x4xi8>)
      outs(%c : tensor<1x5x10xi32>) {a_zp = 0 : i32, b_zp = 0 : i32} -> tensor<1x5x10xi32>
  return %r : tensor<1x5x10xi32>
}

// -----

func.func @matmul_i8_panels(%a: tensor<1x5x70xi8>, %b: tensor<2x18x64x4xi8>, %c: tensor<1x5x10xi32>) -> tensor<1x5x10xi32> {
  // expected-error @+1 {{packed_b has 2 panels of 64 columns, but N is 10}}
  %r = tessel.packed_matmul_i8 ins(%a, %b : tensor<1x5x70xi8>, tensor<2x18x64x4xi8>)
      outs(%c : tensor<1x5x10xi32>) {a_zp = 0 : i32, b_zp = 0 : i32} -> tensor<1x5x10xi32>
  return %r : tensor<1x5x10xi32>
}

// -----

func.func @matmul_i8_types(%a: tensor<1x5x70xi8>, %b: tensor<1x18x64x4xi8>, %c: tensor<1x5x10xf32>) -> tensor<1x5x10xf32> {
  // expected-error @+1 {{init must be i32, got 'f32'}}
  %r = tessel.packed_matmul_i8 ins(%a, %b : tensor<1x5x70xi8>, tensor<1x18x64x4xi8>)
      outs(%c : tensor<1x5x10xf32>) {a_zp = 0 : i32, b_zp = 0 : i32} -> tensor<1x5x10xf32>
  return %r : tensor<1x5x10xf32>
}

// -----

func.func @matmul_i8_sums(%a: tensor<1x5x70xi8>, %b: tensor<1x18x64x4xi8>, %s: tensor<9xi32>, %c: tensor<1x5x10xi32>) -> tensor<1x5x10xi32> {
  // expected-error @+1 {{column_sums must be i32 with one value per column}}
  %r = tessel.packed_matmul_i8 ins(%a, %b : tensor<1x5x70xi8>, tensor<1x18x64x4xi8>)
      column_sums(%s : tensor<9xi32>) outs(%c : tensor<1x5x10xi32>) {a_zp = 0 : i32, b_zp = 0 : i32} -> tensor<1x5x10xi32>
  return %r : tensor<1x5x10xi32>
}

// -----

// The convolution form: a 3x3, stride-2 window over a padded 9x9x8 image
// (K = 72: 18 groups), the requantizing op on memrefs.
// CHECK-LABEL: func.func @matmul_i8_conv
// CHECK: tessel.packed_matmul_i8 ins(%{{.*}}, %{{.*}} : tensor<1x9x9x8xi8>, tensor<1x18x64x4xi8>) outs(%{{.*}} : tensor<1x4x4x10xi32>) {a_zp = 3 : i32, b_zp = 0 : i32, dilations = array<i64: 1, 1>, kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>} -> tensor<1x4x4x10xi32>
// CHECK: tessel.packed_matmul_i8_requant ins(%{{.*}}, %{{.*}} : memref<2x9x9x8xi8>, memref<1x18x64x4xi8>) scale(%{{.*}} : memref<10xf32>) outs(%{{.*}} : memref<2x3x3x10xi8>) {{{.*}}dilations = array<i64: 2, 2>, kernel_size = array<i64: 3, 3>{{.*}}strides = array<i64: 2, 2>}
func.func @matmul_i8_conv(%x: tensor<1x9x9x8xi8>, %b: tensor<1x18x64x4xi8>, %c: tensor<1x4x4x10xi32>,
                          %mx: memref<2x9x9x8xi8>, %mb: memref<1x18x64x4xi8>, %ms: memref<10xf32>,
                          %mc: memref<2x3x3x10xi8>) -> tensor<1x4x4x10xi32> {
  %r = tessel.packed_matmul_i8 ins(%x, %b : tensor<1x9x9x8xi8>, tensor<1x18x64x4xi8>)
      outs(%c : tensor<1x4x4x10xi32>) {a_zp = 3 : i32, b_zp = 0 : i32,
      kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>} -> tensor<1x4x4x10xi32>
  tessel.packed_matmul_i8_requant ins(%mx, %mb : memref<2x9x9x8xi8>, memref<1x18x64x4xi8>)
      scale(%ms : memref<10xf32>) outs(%mc : memref<2x3x3x10xi8>)
      {a_zp = 0 : i32, b_zp = 0 : i32, clamp_min = 0.0 : f32, clamp_max = 6.0 : f32,
       out_scale = 0.1 : f32, kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>,
       dilations = array<i64: 2, 2>}
  return %r : tensor<1x4x4x10xi32>
}

// -----

func.func @matmul_i8_conv_window(%x: tensor<1x9x9x8xi8>, %b: tensor<1x18x64x4xi8>, %c: tensor<1x5x4x10xi32>) -> tensor<1x5x4x10xi32> {
  // expected-error @+1 {{output spatial dim 0 is 5, but the input's 9 holds fewer windows (pad the input first)}}
  %r = tessel.packed_matmul_i8 ins(%x, %b : tensor<1x9x9x8xi8>, tensor<1x18x64x4xi8>)
      outs(%c : tensor<1x5x4x10xi32>) {a_zp = 0 : i32, b_zp = 0 : i32,
      kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>} -> tensor<1x5x4x10xi32>
  return %r : tensor<1x5x4x10xi32>
}

// -----

func.func @matmul_i8_conv_k(%x: tensor<1x9x9x8xi8>, %b: tensor<1x18x64x4xi8>, %c: tensor<1x4x4x10xi32>) -> tensor<1x4x4x10xi32> {
  // expected-error @+1 {{packed_b has 18 groups of 4 k, but K is 40}}
  %r = tessel.packed_matmul_i8 ins(%x, %b : tensor<1x9x9x8xi8>, tensor<1x18x64x4xi8>)
      outs(%c : tensor<1x4x4x10xi32>) {a_zp = 0 : i32, b_zp = 0 : i32,
      kernel_size = array<i64: 1, 5>, strides = array<i64: 2, 1>, dilations = array<i64: 1, 1>} -> tensor<1x4x4x10xi32>
  return %r : tensor<1x4x4x10xi32>
}

// -----

func.func @matmul_i8_conv_attrs(%x: tensor<1x9x9x8xi8>, %b: tensor<1x18x64x4xi8>, %c: tensor<1x4x4x10xi32>) -> tensor<1x4x4x10xi32> {
  // expected-error @+1 {{kernel_size needs strides and dilations}}
  %r = tessel.packed_matmul_i8 ins(%x, %b : tensor<1x9x9x8xi8>, tensor<1x18x64x4xi8>)
      outs(%c : tensor<1x4x4x10xi32>) {a_zp = 0 : i32, b_zp = 0 : i32,
      kernel_size = array<i64: 3, 3>} -> tensor<1x4x4x10xi32>
  return %r : tensor<1x4x4x10xi32>
}

// -----

func.func @matmul_i8_strides_alone(%a: tensor<1x5x70xi8>, %b: tensor<1x18x64x4xi8>, %c: tensor<1x5x10xi32>) -> tensor<1x5x10xi32> {
  // expected-error @+1 {{strides and dilations need kernel_size}}
  %r = tessel.packed_matmul_i8 ins(%a, %b : tensor<1x5x70xi8>, tensor<1x18x64x4xi8>)
      outs(%c : tensor<1x5x10xi32>) {a_zp = 0 : i32, b_zp = 0 : i32, strides = array<i64: 1, 1>} -> tensor<1x5x10xi32>
  return %r : tensor<1x5x10xi32>
}

// -----

func.func @matmul_i8_conv_rank(%x: tensor<1x81x8xi8>, %b: tensor<1x18x64x4xi8>, %c: tensor<1x4x4x10xi32>) -> tensor<1x4x4x10xi32> {
  // expected-error @+1 {{a convolution's input and init must be rank 4}}
  %r = tessel.packed_matmul_i8 ins(%x, %b : tensor<1x81x8xi8>, tensor<1x18x64x4xi8>)
      outs(%c : tensor<1x4x4x10xi32>) {a_zp = 0 : i32, b_zp = 0 : i32,
      kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>} -> tensor<1x4x4x10xi32>
  return %r : tensor<1x4x4x10xi32>
}

// -----

// tessel.packed_matmul_i8_requant: round trip on tensors and memrefs.
// CHECK-LABEL: func.func @matmul_i8_requant
// CHECK: tessel.packed_matmul_i8_requant ins(%{{.*}}, %{{.*}} : tensor<1x5x70xi8>, tensor<1x18x64x4xi8>) scale(%{{.*}} : tensor<10xf32>) bias(%{{.*}} : tensor<10xf32>) table(%{{.*}} : tensor<256xi8>) outs(%{{.*}} : tensor<1x5x10xi8>) {a_signed, a_zp = 3 : i32, b_zp = 0 : i32, clamp_max = 6.000000e+00 : f32, clamp_min = 0.000000e+00 : f32, out_scale = 5.000000e-02 : f32, out_zp = 1.200000e+01 : f32} -> tensor<1x5x10xi8>
// CHECK: tessel.packed_matmul_i8_requant ins(%{{.*}}, %{{.*}} : memref<1x5x70xi8>, memref<1x18x64x4xi8>) scale(%{{.*}} : memref<10xf32>) outs(%{{.*}} : memref<1x5x10xf32>) {a_zp = 0 : i32, b_zp = 0 : i32, clamp_max = 0x7F800000 : f32, clamp_min = 0xFF800000 : f32}
func.func @matmul_i8_requant(%a: tensor<1x5x70xi8>, %b: tensor<1x18x64x4xi8>, %s: tensor<10xf32>, %t: tensor<256xi8>, %c: tensor<1x5x10xi8>,
                             %ma: memref<1x5x70xi8>, %mb: memref<1x18x64x4xi8>, %ms: memref<10xf32>, %mc: memref<1x5x10xf32>) -> tensor<1x5x10xi8> {
  %r = tessel.packed_matmul_i8_requant ins(%a, %b : tensor<1x5x70xi8>, tensor<1x18x64x4xi8>)
      scale(%s : tensor<10xf32>) bias(%s : tensor<10xf32>) table(%t : tensor<256xi8>) outs(%c : tensor<1x5x10xi8>)
      {a_zp = 3 : i32, b_zp = 0 : i32, a_signed, clamp_min = 0.0 : f32, clamp_max = 6.0 : f32,
       out_scale = 0.05 : f32, out_zp = 12.0 : f32} -> tensor<1x5x10xi8>
  tessel.packed_matmul_i8_requant ins(%ma, %mb : memref<1x5x70xi8>, memref<1x18x64x4xi8>)
      scale(%ms : memref<10xf32>) outs(%mc : memref<1x5x10xf32>)
      {a_zp = 0 : i32, b_zp = 0 : i32, clamp_min = 0xFF800000 : f32, clamp_max = 0x7F800000 : f32}
  return %r : tensor<1x5x10xi8>
}

// -----

// The residual form: f32 residual shaped as init, its clamp.
// CHECK-LABEL: func.func @matmul_i8_requant_residual
// CHECK: tessel.packed_matmul_i8_requant ins(%{{.*}}, %{{.*}} : tensor<1x5x70xi8>, tensor<1x18x64x4xi8>) scale(%{{.*}} : tensor<10xf32>) residual(%{{.*}} : tensor<1x5x10xf32>) outs(%{{.*}} : tensor<1x5x10xf32>) {{{.*}}residual_max = 6.000000e+00 : f32, residual_min = 0.000000e+00 : f32} -> tensor<1x5x10xf32>
func.func @matmul_i8_requant_residual(%a: tensor<1x5x70xi8>, %b: tensor<1x18x64x4xi8>, %s: tensor<10xf32>, %r: tensor<1x5x10xf32>, %c: tensor<1x5x10xf32>) -> tensor<1x5x10xf32> {
  %y = tessel.packed_matmul_i8_requant ins(%a, %b : tensor<1x5x70xi8>, tensor<1x18x64x4xi8>)
      scale(%s : tensor<10xf32>) residual(%r : tensor<1x5x10xf32>) outs(%c : tensor<1x5x10xf32>)
      {a_zp = 0 : i32, b_zp = 0 : i32, clamp_min = 0xFF800000 : f32, clamp_max = 0x7F800000 : f32,
       residual_min = 0.0 : f32, residual_max = 6.0 : f32} -> tensor<1x5x10xf32>
  return %y : tensor<1x5x10xf32>
}

// -----

func.func @requant_residual_shape(%a: tensor<1x5x70xi8>, %b: tensor<1x18x64x4xi8>, %s: tensor<10xf32>, %r: tensor<1x5x9xf32>, %c: tensor<1x5x10xf32>) -> tensor<1x5x10xf32> {
  // expected-error @+1 {{residual must be f32 and shaped as an f32 init, got 'tensor<1x5x9xf32>' for 'tensor<1x5x10xf32>'}}
  %y = tessel.packed_matmul_i8_requant ins(%a, %b : tensor<1x5x70xi8>, tensor<1x18x64x4xi8>)
      scale(%s : tensor<10xf32>) residual(%r : tensor<1x5x9xf32>) outs(%c : tensor<1x5x10xf32>)
      {a_zp = 0 : i32, b_zp = 0 : i32, clamp_min = 0.0 : f32, clamp_max = 6.0 : f32} -> tensor<1x5x10xf32>
  return %y : tensor<1x5x10xf32>
}

// -----

func.func @requant_residual_i8_output(%a: tensor<1x5x70xi8>, %b: tensor<1x18x64x4xi8>, %s: tensor<10xf32>, %r: tensor<1x5x10xf32>, %c: tensor<1x5x10xi8>) -> tensor<1x5x10xi8> {
  // expected-error @+1 {{residual must be f32 and shaped as an f32 init, got 'tensor<1x5x10xf32>' for 'tensor<1x5x10xi8>'}}
  %y = tessel.packed_matmul_i8_requant ins(%a, %b : tensor<1x5x70xi8>, tensor<1x18x64x4xi8>)
      scale(%s : tensor<10xf32>) residual(%r : tensor<1x5x10xf32>) outs(%c : tensor<1x5x10xi8>)
      {a_zp = 0 : i32, b_zp = 0 : i32, clamp_min = 0.0 : f32, clamp_max = 6.0 : f32,
       out_scale = 0.1 : f32} -> tensor<1x5x10xi8>
  return %y : tensor<1x5x10xi8>
}

// -----

func.func @requant_residual_clamp(%a: tensor<1x5x70xi8>, %b: tensor<1x18x64x4xi8>, %s: tensor<10xf32>, %r: tensor<1x5x10xf32>, %c: tensor<1x5x10xf32>) -> tensor<1x5x10xf32> {
  // expected-error @+1 {{residual_min is greater than residual_max}}
  %y = tessel.packed_matmul_i8_requant ins(%a, %b : tensor<1x5x70xi8>, tensor<1x18x64x4xi8>)
      scale(%s : tensor<10xf32>) residual(%r : tensor<1x5x10xf32>) outs(%c : tensor<1x5x10xf32>)
      {a_zp = 0 : i32, b_zp = 0 : i32, clamp_min = 0.0 : f32, clamp_max = 6.0 : f32,
       residual_min = 1.0 : f32, residual_max = 0.0 : f32} -> tensor<1x5x10xf32>
  return %y : tensor<1x5x10xf32>
}

// -----

func.func @requant_scale_size(%a: tensor<1x5x70xi8>, %b: tensor<1x18x64x4xi8>, %s: tensor<9xf32>, %c: tensor<1x5x10xf32>) -> tensor<1x5x10xf32> {
  // expected-error @+1 {{scale and bias must be 10 f32 values, got 'tensor<9xf32>'}}
  %r = tessel.packed_matmul_i8_requant ins(%a, %b : tensor<1x5x70xi8>, tensor<1x18x64x4xi8>)
      scale(%s : tensor<9xf32>) outs(%c : tensor<1x5x10xf32>)
      {a_zp = 0 : i32, b_zp = 0 : i32, clamp_min = 0.0 : f32, clamp_max = 6.0 : f32} -> tensor<1x5x10xf32>
  return %r : tensor<1x5x10xf32>
}

// -----

func.func @requant_i8_without_quantize(%a: tensor<1x5x70xi8>, %b: tensor<1x18x64x4xi8>, %s: tensor<10xf32>, %c: tensor<1x5x10xi8>) -> tensor<1x5x10xi8> {
  // expected-error @+1 {{init must be f32, got 'i8'}}
  %r = tessel.packed_matmul_i8_requant ins(%a, %b : tensor<1x5x70xi8>, tensor<1x18x64x4xi8>)
      scale(%s : tensor<10xf32>) outs(%c : tensor<1x5x10xi8>)
      {a_zp = 0 : i32, b_zp = 0 : i32, clamp_min = 0.0 : f32, clamp_max = 6.0 : f32} -> tensor<1x5x10xi8>
  return %r : tensor<1x5x10xi8>
}

// -----

func.func @requant_range(%a: tensor<1x5x70xi8>, %b: tensor<1x18x64x4xi8>, %s: tensor<10xf32>, %c: tensor<1x5x10xi8>) -> tensor<1x5x10xi8> {
  // expected-error @+1 {{qmin and qmax must be integers of an 8-bit range within [-128, 255], got [-1.000000e+00, 2.550000e+02]}}
  %r = tessel.packed_matmul_i8_requant ins(%a, %b : tensor<1x5x70xi8>, tensor<1x18x64x4xi8>)
      scale(%s : tensor<10xf32>) outs(%c : tensor<1x5x10xi8>)
      {a_zp = 0 : i32, b_zp = 0 : i32, clamp_min = 0.0 : f32, clamp_max = 6.0 : f32,
       out_scale = 0.1 : f32, qmin = -1.0 : f32, qmax = 255.0 : f32} -> tensor<1x5x10xi8>
  return %r : tensor<1x5x10xi8>
}

// -----

func.func @requant_table_type(%a: tensor<1x5x70xi8>, %b: tensor<1x18x64x4xi8>, %s: tensor<10xf32>, %t: tensor<256xf32>, %c: tensor<1x5x10xi8>) -> tensor<1x5x10xi8> {
  // expected-error @+1 {{table must be 256 values of type 'i8' (the output's, or i8 before dequant_scale), got 'tensor<256xf32>'}}
  %r = tessel.packed_matmul_i8_requant ins(%a, %b : tensor<1x5x70xi8>, tensor<1x18x64x4xi8>)
      scale(%s : tensor<10xf32>) table(%t : tensor<256xf32>) outs(%c : tensor<1x5x10xi8>)
      {a_zp = 0 : i32, b_zp = 0 : i32, clamp_min = 0.0 : f32, clamp_max = 6.0 : f32,
       out_scale = 0.1 : f32} -> tensor<1x5x10xi8>
  return %r : tensor<1x5x10xi8>
}

// -----

func.func @requant_out_scale(%a: tensor<1x5x70xi8>, %b: tensor<1x18x64x4xi8>, %s: tensor<10xf32>, %c: tensor<1x5x10xi8>) -> tensor<1x5x10xi8> {
  // expected-error @+1 {{out_scale must be positive and finite, got 0.000000e+00}}
  %r = tessel.packed_matmul_i8_requant ins(%a, %b : tensor<1x5x70xi8>, tensor<1x18x64x4xi8>)
      scale(%s : tensor<10xf32>) outs(%c : tensor<1x5x10xi8>)
      {a_zp = 0 : i32, b_zp = 0 : i32, clamp_min = 0.0 : f32, clamp_max = 6.0 : f32,
       out_scale = 0.0 : f32} -> tensor<1x5x10xi8>
  return %r : tensor<1x5x10xi8>
}

// -----

// tessel.depthwise_conv2d_i8: round trip with the int32 result on tensors
// and with the requantizing epilogue on memrefs.
// CHECK-LABEL: func @depthwise_i8
// CHECK: tessel.depthwise_conv2d_i8 ins(%{{.*}}, %{{.*}} : tensor<1x8x8x20xi8>, tensor<2x3x32x4xi8>) column_sums(%{{.*}} : tensor<20xi32>) outs(%{{.*}} : tensor<1x4x4x20xi32>) {a_signed, a_zp = -3 : i32, dilations = array<i64: 1, 1>, kernel_size = array<i64: 5, 3>, pad = array<i64: 2, 1, 1, 0>, strides = array<i64: 2, 2>} -> tensor<1x4x4x20xi32>
// CHECK: tessel.depthwise_conv2d_i8 ins(%{{.*}}, %{{.*}} : memref<1x8x8x20xi8>, memref<2x3x32x4xi8>) column_sums(%{{.*}} : memref<20xi32>) scale(%{{.*}} : memref<20xf32>) bias(%{{.*}} : memref<20xf32>) outs(%{{.*}} : memref<1x4x4x20xi8>) {a_zp = 7 : i32, clamp_max = 6.000000e+00 : f32, clamp_min = 0.000000e+00 : f32, dilations = array<i64: 1, 1>, kernel_size = array<i64: 5, 3>, out_scale = 5.000000e-02 : f32, pad = array<i64: 2, 1, 1, 0>, strides = array<i64: 2, 2>}
func.func @depthwise_i8(%x: tensor<1x8x8x20xi8>, %w: tensor<2x3x32x4xi8>, %cs: tensor<20xi32>, %c: tensor<1x4x4x20xi32>,
                        %mx: memref<1x8x8x20xi8>, %mw: memref<2x3x32x4xi8>, %mcs: memref<20xi32>, %ms: memref<20xf32>, %mo: memref<1x4x4x20xi8>) -> tensor<1x4x4x20xi32> {
  %r = tessel.depthwise_conv2d_i8 ins(%x, %w : tensor<1x8x8x20xi8>, tensor<2x3x32x4xi8>) column_sums(%cs : tensor<20xi32>)
      outs(%c : tensor<1x4x4x20xi32>) {kernel_size = array<i64: 5, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>,
       pad = array<i64: 2, 1, 1, 0>, a_zp = -3 : i32, a_signed} -> tensor<1x4x4x20xi32>
  tessel.depthwise_conv2d_i8 ins(%mx, %mw : memref<1x8x8x20xi8>, memref<2x3x32x4xi8>) column_sums(%mcs : memref<20xi32>)
      scale(%ms : memref<20xf32>) bias(%ms : memref<20xf32>) outs(%mo : memref<1x4x4x20xi8>)
      {kernel_size = array<i64: 5, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>,
       pad = array<i64: 2, 1, 1, 0>, a_zp = 7 : i32, clamp_min = 0.0 : f32, clamp_max = 6.0 : f32, out_scale = 0.05 : f32}
  return %r : tensor<1x4x4x20xi32>
}

// -----

func.func @depthwise_i8_packing(%x: tensor<1x8x8x20xi8>, %w: tensor<1x3x32x4xi8>, %cs: tensor<20xi32>, %c: tensor<1x4x4x20xi32>) -> tensor<1x4x4x20xi32> {
  // expected-error @+1 {{packed_filter must be ceil(KH/4) x KW x Cp x 4 (2 x 3 x 32 x 4), got 'tensor<1x3x32x4xi8>'}}
  %r = tessel.depthwise_conv2d_i8 ins(%x, %w : tensor<1x8x8x20xi8>, tensor<1x3x32x4xi8>) column_sums(%cs : tensor<20xi32>)
      outs(%c : tensor<1x4x4x20xi32>) {kernel_size = array<i64: 5, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>,
       pad = array<i64: 2, 1, 1, 0>, a_zp = 0 : i32, a_signed} -> tensor<1x4x4x20xi32>
  return %r : tensor<1x4x4x20xi32>
}

// -----

func.func @depthwise_i8_zero_point(%x: tensor<1x8x8x20xi8>, %w: tensor<2x3x32x4xi8>, %cs: tensor<20xi32>, %c: tensor<1x4x4x20xi32>) -> tensor<1x4x4x20xi32> {
  // expected-error @+1 {{a_zp -3 is not a value of the unsigned 8-bit input (padding reads as it)}}
  %r = tessel.depthwise_conv2d_i8 ins(%x, %w : tensor<1x8x8x20xi8>, tensor<2x3x32x4xi8>) column_sums(%cs : tensor<20xi32>)
      outs(%c : tensor<1x4x4x20xi32>) {kernel_size = array<i64: 5, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>,
       pad = array<i64: 2, 1, 1, 0>, a_zp = -3 : i32} -> tensor<1x4x4x20xi32>
  return %r : tensor<1x4x4x20xi32>
}

// -----

func.func @depthwise_i8_output_size(%x: tensor<1x8x8x20xi8>, %w: tensor<2x3x32x4xi8>, %cs: tensor<20xi32>, %c: tensor<1x5x4x20xi32>) -> tensor<1x5x4x20xi32> {
  // expected-error @+1 {{output spatial dim 0 is 5, expected 4}}
  %r = tessel.depthwise_conv2d_i8 ins(%x, %w : tensor<1x8x8x20xi8>, tensor<2x3x32x4xi8>) column_sums(%cs : tensor<20xi32>)
      outs(%c : tensor<1x5x4x20xi32>) {kernel_size = array<i64: 5, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>,
       pad = array<i64: 2, 1, 1, 0>, a_zp = 0 : i32, a_signed} -> tensor<1x5x4x20xi32>
  return %r : tensor<1x5x4x20xi32>
}

// -----

func.func @depthwise_i8_int32_epilogue(%x: tensor<1x8x8x20xi8>, %w: tensor<2x3x32x4xi8>, %cs: tensor<20xi32>, %c: tensor<1x4x4x20xi32>) -> tensor<1x4x4x20xi32> {
  // expected-error @+1 {{without scale the output is the int32 sum (no bias, table, out_scale or dequant_scale)}}
  %r = tessel.depthwise_conv2d_i8 ins(%x, %w : tensor<1x8x8x20xi8>, tensor<2x3x32x4xi8>) column_sums(%cs : tensor<20xi32>)
      outs(%c : tensor<1x4x4x20xi32>) {kernel_size = array<i64: 5, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>,
       pad = array<i64: 2, 1, 1, 0>, a_zp = 0 : i32, a_signed, out_scale = 0.5 : f32} -> tensor<1x4x4x20xi32>
  return %r : tensor<1x4x4x20xi32>
}

// -----

func.func @depthwise_i8_quantized_f32(%x: tensor<1x8x8x20xi8>, %w: tensor<2x3x32x4xi8>, %cs: tensor<20xi32>, %s: tensor<20xf32>, %c: tensor<1x4x4x20xf32>) -> tensor<1x4x4x20xf32> {
  // expected-error @+1 {{a quantized f32 output needs a table or dequant_scale}}
  %r = tessel.depthwise_conv2d_i8 ins(%x, %w : tensor<1x8x8x20xi8>, tensor<2x3x32x4xi8>) column_sums(%cs : tensor<20xi32>)
      scale(%s : tensor<20xf32>) outs(%c : tensor<1x4x4x20xf32>) {kernel_size = array<i64: 5, 3>, strides = array<i64: 2, 2>,
       dilations = array<i64: 1, 1>, pad = array<i64: 2, 1, 1, 0>, a_zp = 0 : i32, a_signed, out_scale = 0.5 : f32} -> tensor<1x4x4x20xf32>
  return %r : tensor<1x4x4x20xf32>
}

// -----

// bf16 products: a bf16 packed filter of ceil(KH*KW*C/2) pairs x 2*NR
// (3x3x5 = 45 -> 23 pairs), f32 input, init and result.
// CHECK-LABEL: func @bf16_round_trip
// CHECK: tessel.packed_conv2d ins(%{{.*}}, %{{.*}} : tensor<1x9x9x5xf32>, tensor<1x23x128xbf16>) outs(%{{.*}} : tensor<1x7x7x16xf32>)
func.func @bf16_round_trip(%x: tensor<1x9x9x5xf32>, %w: tensor<1x23x128xbf16>, %i: tensor<1x7x7x16xf32>) -> tensor<1x7x7x16xf32> {
  %y = tessel.packed_conv2d ins(%x, %w : tensor<1x9x9x5xf32>, tensor<1x23x128xbf16>)
      outs(%i : tensor<1x7x7x16xf32>)
      {kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>} -> tensor<1x7x7x16xf32>
  return %y : tensor<1x7x7x16xf32>
}

// -----

func.func @bf16_wrong_pairs(%x: tensor<1x9x9x5xf32>, %w: tensor<1x45x128xbf16>, %i: tensor<1x7x7x16xf32>) -> tensor<1x7x7x16xf32> {
  // expected-error @+1 {{bf16 packed_filter has 45 pairs of reduction elements, expected ceil(KH*KW*C/2) = 23}}
  %y = tessel.packed_conv2d ins(%x, %w : tensor<1x9x9x5xf32>, tensor<1x45x128xbf16>)
      outs(%i : tensor<1x7x7x16xf32>)
      {kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>} -> tensor<1x7x7x16xf32>
  return %y : tensor<1x7x7x16xf32>
}

// -----

func.func @bf16_odd_panel(%x: tensor<1x9x9x5xf32>, %w: tensor<1x23x127xbf16>, %i: tensor<1x7x7x16xf32>) -> tensor<1x7x7x16xf32> {
  // expected-error @+1 {{a bf16 packed_filter's last dimension holds pairs (2*NR), got 127}}
  %y = tessel.packed_conv2d ins(%x, %w : tensor<1x9x9x5xf32>, tensor<1x23x127xbf16>)
      outs(%i : tensor<1x7x7x16xf32>)
      {kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>} -> tensor<1x7x7x16xf32>
  return %y : tensor<1x7x7x16xf32>
}

// -----

func.func @bf16_input(%x: tensor<1x9x9x5xbf16>, %w: tensor<1x23x128xbf16>, %i: tensor<1x7x7x16xf32>) -> tensor<1x7x7x16xf32> {
  // expected-error @+1 {{only f32 is supported, got 'tensor<1x9x9x5xbf16>'}}
  %y = tessel.packed_conv2d ins(%x, %w : tensor<1x9x9x5xbf16>, tensor<1x23x128xbf16>)
      outs(%i : tensor<1x7x7x16xf32>)
      {kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>} -> tensor<1x7x7x16xf32>
  return %y : tensor<1x7x7x16xf32>
}

// -----

func.func @bf16_winograd(%x: tensor<1x9x9x8xf32>, %w: tensor<16x1x8x128xbf16>, %i: tensor<1x7x7x16xf32>) -> tensor<1x7x7x16xf32> {
  // expected-error @+1 {{winograd takes an f32 packed_filter, not bf16}}
  %y = tessel.packed_conv2d ins(%x, %w : tensor<1x9x9x8xf32>, tensor<16x1x8x128xbf16>)
      outs(%i : tensor<1x7x7x16xf32>)
      {kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, winograd} -> tensor<1x7x7x16xf32>
  return %y : tensor<1x7x7x16xf32>
}

// -----

// Sparse int8 weights (quad blocks): round trip on tensors and memrefs.
// CHECK-LABEL: func.func @matmul_i8_sparse
// CHECK: tessel.packed_matmul_i8_requant ins(%{{.*}}, %{{.*}} : tensor<1x5x8xi8>, tensor<2x1x4xi8>) sparse(%{{.*}}, %{{.*}} : tensor<4xi32>, tensor<2xi32>) scale(%{{.*}} : tensor<3xf32>) outs(%{{.*}} : tensor<1x5x3xf32>) {a_zp = 0 : i32, b_zp = 0 : i32, block_size = 1 : i64
// CHECK: tessel.packed_matmul_i8_requant ins(%{{.*}}, %{{.*}} : memref<1x5x8xi8>, memref<2x1x4xi8>) sparse(%{{.*}}, %{{.*}} : memref<4xi32>, memref<2xi32>) scale(%{{.*}} : memref<3xf32>) outs(%{{.*}} : memref<1x5x3xf32>)
func.func @matmul_i8_sparse(%a: tensor<1x5x8xi8>, %s: tensor<3xf32>, %c: tensor<1x5x3xf32>,
                            %ma: memref<1x5x8xi8>, %mb: memref<2x1x4xi8>, %mp: memref<4xi32>,
                            %mk: memref<2xi32>, %ms: memref<3xf32>, %mc: memref<1x5x3xf32>) -> tensor<1x5x3xf32> {
  %b = arith.constant dense<[[[1, 2, 3, 4]], [[5, 6, 7, 8]]]> : tensor<2x1x4xi8>
  %p = arith.constant dense<[0, 1, 1, 2]> : tensor<4xi32>
  %k = arith.constant dense<[0, 1]> : tensor<2xi32>
  %r = tessel.packed_matmul_i8_requant ins(%a, %b : tensor<1x5x8xi8>, tensor<2x1x4xi8>)
      sparse(%p, %k : tensor<4xi32>, tensor<2xi32>) scale(%s : tensor<3xf32>) outs(%c : tensor<1x5x3xf32>)
      {a_zp = 0 : i32, b_zp = 0 : i32, block_size = 1 : i64, clamp_min = 0xFF800000 : f32, clamp_max = 0x7F800000 : f32} -> tensor<1x5x3xf32>
  tessel.packed_matmul_i8_requant ins(%ma, %mb : memref<1x5x8xi8>, memref<2x1x4xi8>)
      sparse(%mp, %mk : memref<4xi32>, memref<2xi32>) scale(%ms : memref<3xf32>) outs(%mc : memref<1x5x3xf32>)
      {a_zp = 0 : i32, b_zp = 0 : i32, block_size = 1 : i64, clamp_min = 0xFF800000 : f32, clamp_max = 0x7F800000 : f32}
  return %r : tensor<1x5x3xf32>
}

// -----

// The int32 op's sparse form: round trip (a convolution, accumulating).
// CHECK-LABEL: func.func @conv_i8_sparse_i32
// CHECK: tessel.packed_matmul_i8 ins(%{{.*}}, %{{.*}} : tensor<1x3x3x8xi8>, tensor<2x4x4xi8>) sparse(%{{.*}}, %{{.*}} : tensor<2xi32>, tensor<2xi32>) outs(%{{.*}} : tensor<1x3x3x4xi32>) {a_zp = 1 : i32, accumulate, b_zp = 0 : i32, block_size = 4 : i64, dilations = array<i64: 1, 1>, kernel_size = array<i64: 1, 1>, strides = array<i64: 1, 1>}
func.func @conv_i8_sparse_i32(%a: tensor<1x3x3x8xi8>, %c: tensor<1x3x3x4xi32>) -> tensor<1x3x3x4xi32> {
  %b = arith.constant dense<1> : tensor<2x4x4xi8>
  %p = arith.constant dense<[0, 2]> : tensor<2xi32>
  %k = arith.constant dense<[0, 1]> : tensor<2xi32>
  %r = tessel.packed_matmul_i8 ins(%a, %b : tensor<1x3x3x8xi8>, tensor<2x4x4xi8>)
      sparse(%p, %k : tensor<2xi32>, tensor<2xi32>) outs(%c : tensor<1x3x3x4xi32>)
      {a_zp = 1 : i32, b_zp = 0 : i32, accumulate, block_size = 4 : i64,
       kernel_size = array<i64: 1, 1>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>} -> tensor<1x3x3x4xi32>
  return %r : tensor<1x3x3x4xi32>
}

// -----

func.func @matmul_i8_i32_block_k_alone(%a: tensor<1x5x8xi8>, %b: tensor<1x2x64x4xi8>, %c: tensor<1x5x3xi32>) -> tensor<1x5x3xi32> {
  // expected-error @+1 {{block_k and block_size need block_ptr}}
  %r = tessel.packed_matmul_i8 ins(%a, %b : tensor<1x5x8xi8>, tensor<1x2x64x4xi8>)
      outs(%c : tensor<1x5x3xi32>) {a_zp = 0 : i32, b_zp = 0 : i32, block_size = 1 : i64} -> tensor<1x5x3xi32>
  return %r : tensor<1x5x3xi32>
}

// -----

func.func @matmul_i8_i32_sparse_ptr_falls(%a: tensor<1x5x8xi8>, %b: tensor<2x1x4xi8>, %c: tensor<1x5x3xi32>) -> tensor<1x5x3xi32> {
  %p = arith.constant dense<[0, 2, 1, 2]> : tensor<4xi32>
  %k = arith.constant dense<[0, 1]> : tensor<2xi32>
  // expected-error @+1 {{block_ptr falls at entry 2}}
  %r = tessel.packed_matmul_i8 ins(%a, %b : tensor<1x5x8xi8>, tensor<2x1x4xi8>)
      sparse(%p, %k : tensor<4xi32>, tensor<2xi32>) outs(%c : tensor<1x5x3xi32>)
      {a_zp = 0 : i32, b_zp = 0 : i32, block_size = 1 : i64} -> tensor<1x5x3xi32>
  return %r : tensor<1x5x3xi32>
}

// -----

func.func @matmul_i8_sparse_block_size(%a: tensor<1x5x8xi8>, %b: tensor<2x2x4xi8>, %p: tensor<3xi32>, %k: tensor<2xi32>, %s: tensor<3xf32>, %c: tensor<1x5x3xf32>) -> tensor<1x5x3xf32> {
  // expected-error @+1 {{block_size must be 1 or 4, got 2}}
  %r = tessel.packed_matmul_i8_requant ins(%a, %b : tensor<1x5x8xi8>, tensor<2x2x4xi8>)
      sparse(%p, %k : tensor<3xi32>, tensor<2xi32>) scale(%s : tensor<3xf32>) outs(%c : tensor<1x5x3xf32>)
      {a_zp = 0 : i32, b_zp = 0 : i32, block_size = 2 : i64, clamp_min = 0xFF800000 : f32, clamp_max = 0x7F800000 : f32} -> tensor<1x5x3xf32>
  return %r : tensor<1x5x3xf32>
}

// -----

func.func @matmul_i8_sparse_bytes(%a: tensor<1x5x8xi8>, %b: tensor<2x1x8xi8>, %p: tensor<4xi32>, %k: tensor<2xi32>, %s: tensor<3xf32>, %c: tensor<1x5x3xf32>) -> tensor<1x5x3xf32> {
  // expected-error @+1 {{sparse packed_b must be 2 x 1 x 4 (blocks x block_size x 4), got 'tensor<2x1x8xi8>'}}
  %r = tessel.packed_matmul_i8_requant ins(%a, %b : tensor<1x5x8xi8>, tensor<2x1x8xi8>)
      sparse(%p, %k : tensor<4xi32>, tensor<2xi32>) scale(%s : tensor<3xf32>) outs(%c : tensor<1x5x3xf32>)
      {a_zp = 0 : i32, b_zp = 0 : i32, block_size = 1 : i64, clamp_min = 0xFF800000 : f32, clamp_max = 0x7F800000 : f32} -> tensor<1x5x3xf32>
  return %r : tensor<1x5x3xf32>
}

// -----

func.func @matmul_i8_sparse_quad_range(%a: tensor<1x5x8xi8>, %b: tensor<2x1x4xi8>, %s: tensor<3xf32>, %c: tensor<1x5x3xf32>) -> tensor<1x5x3xf32> {
  %p = arith.constant dense<[0, 1, 1, 2]> : tensor<4xi32>
  %k = arith.constant dense<[0, 2]> : tensor<2xi32>
  // expected-error @+1 {{block_k entry 1 (2) is outside [0, 2) or not ascending in its column}}
  %r = tessel.packed_matmul_i8_requant ins(%a, %b : tensor<1x5x8xi8>, tensor<2x1x4xi8>)
      sparse(%p, %k : tensor<4xi32>, tensor<2xi32>) scale(%s : tensor<3xf32>) outs(%c : tensor<1x5x3xf32>)
      {a_zp = 0 : i32, b_zp = 0 : i32, block_size = 1 : i64, clamp_min = 0xFF800000 : f32, clamp_max = 0x7F800000 : f32} -> tensor<1x5x3xf32>
  return %r : tensor<1x5x3xf32>
}

// -----

func.func @matmul_i8_sparse_ptr_count(%a: tensor<1x5x8xi8>, %b: tensor<2x1x4xi8>, %p: tensor<3xi32>, %k: tensor<2xi32>, %s: tensor<3xf32>, %c: tensor<1x5x3xf32>) -> tensor<1x5x3xf32> {
  // expected-error @+1 {{block_ptr must have ceil(N / block_size) + 1 = 4 entries}}
  %r = tessel.packed_matmul_i8_requant ins(%a, %b : tensor<1x5x8xi8>, tensor<2x1x4xi8>)
      sparse(%p, %k : tensor<3xi32>, tensor<2xi32>) scale(%s : tensor<3xf32>) outs(%c : tensor<1x5x3xf32>)
      {a_zp = 0 : i32, b_zp = 0 : i32, block_size = 1 : i64, clamp_min = 0xFF800000 : f32, clamp_max = 0x7F800000 : f32} -> tensor<1x5x3xf32>
  return %r : tensor<1x5x3xf32>
}
