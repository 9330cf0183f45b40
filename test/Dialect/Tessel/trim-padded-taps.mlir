// RUN: tessel-opt %s -split-input-file -tessel-trim-padded-taps | FileCheck %s
// RUN: tessel-opt %s -split-input-file -tessel-trim-padded-taps="min-saving=0.85" | FileCheck %s --check-prefix=STRICT
// RUN: not tessel-opt %s -split-input-file -tessel-trim-padded-taps="min-saving=2" 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: min-saving must be in [0, 1]

// DeepLabV3's ASPP at dilation 24 on a 14x14 map: only the centre tap
// reads the input, so the convolution is 1x1 with no padding (8 of 9 of
// the multiply-adds saved).
// CHECK-LABEL: func @dilation_past_the_map
// CHECK: %[[K:.*]] = tosa.slice %arg1, {{.*}} : (tensor<4x3x3x8xf32>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<4x1x1x8xf32>
// CHECK: %[[Y:.*]] = tosa.conv2d %arg0, %[[K]], %arg2, {{.*}} pad = array<i64: 0, 0, 0, 0>{{.*}} -> tensor<1x14x14x4xf32>
// CHECK-NOT: tosa.concat
// CHECK: return %[[Y]]
// STRICT-LABEL: func @dilation_past_the_map
// STRICT: tosa.conv2d {{.*}} : (tensor<1x14x14x8xf32>, tensor<4x1x1x8xf32>
func.func @dilation_past_the_map(%x: tensor<1x14x14x8xf32>, %w: tensor<4x3x3x8xf32>, %b: tensor<4xf32>) -> tensor<1x14x14x4xf32> {
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %y = tosa.conv2d %x, %w, %b, %zp, %zp {acc_type = f32, pad = array<i64: 24, 24, 24, 24>, stride = array<i64: 1, 1>, dilation = array<i64: 24, 24>} : (tensor<1x14x14x8xf32>, tensor<4x3x3x8xf32>, tensor<4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x14x14x4xf32>
  return %y : tensor<1x14x14x4xf32>
}

// -----

// Dilation 12 on 14x14: rows 0-1 read taps 1-2, rows 2-11 tap 1, rows
// 12-13 taps 0-1 (columns alike): 9 regions, each over the input window it
// reads with no padding, concatenated along W then H (82% saved; a
// 0.85 bar keeps the original, while dilation 24 saves 89%).
// CHECK-LABEL: func @dilation_12
// CHECK-NOT: pad = array<i64: 12
// The centre region: outputs 2..11 read input 2..11 through the centre tap.
// CHECK-DAG: tosa.conv2d {{.*}} : (tensor<1x10x10x8xf32>, tensor<4x1x1x8xf32>, tensor<4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x10x10x4xf32>
// The corner of outputs 0-1: input rows 0..13 (taps 1 and 2 of outputs 0, 1).
// CHECK-DAG: tosa.conv2d {{.*}} : (tensor<1x14x14x8xf32>, tensor<4x2x2x8xf32>, tensor<4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x2x4xf32>
// CHECK: tosa.concat {{.*}} {axis = 2 : i32}
// CHECK: tosa.concat {{.*}} {axis = 1 : i32} : (tensor<1x2x14x4xf32>, tensor<1x10x14x4xf32>, tensor<1x2x14x4xf32>) -> tensor<1x14x14x4xf32>
// STRICT-LABEL: func @dilation_12
// STRICT: tosa.conv2d {{.*}} pad = array<i64: 12, 12, 12, 12>
// STRICT-NOT: tosa.concat
func.func @dilation_12(%x: tensor<1x14x14x8xf32>, %w: tensor<4x3x3x8xf32>, %b: tensor<4xf32>) -> tensor<1x14x14x4xf32> {
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %y = tosa.conv2d %x, %w, %b, %zp, %zp {acc_type = f32, pad = array<i64: 12, 12, 12, 12>, stride = array<i64: 1, 1>, dilation = array<i64: 12, 12>} : (tensor<1x14x14x8xf32>, tensor<4x3x3x8xf32>, tensor<4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x14x14x4xf32>
  return %y : tensor<1x14x14x4xf32>
}

// -----

// An ordinary 3x3 convolution with padding 1 loses taps only on its
// border (1 - (22/24)^2 = 16% at 8x8): left alone.
// CHECK-LABEL: func @ordinary
// CHECK: tosa.conv2d {{.*}} pad = array<i64: 1, 1, 1, 1>
// CHECK-NOT: tosa.concat
func.func @ordinary(%x: tensor<1x8x8x8xf32>, %w: tensor<4x3x3x8xf32>, %b: tensor<4xf32>) -> tensor<1x8x8x4xf32> {
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %y = tosa.conv2d %x, %w, %b, %zp, %zp {acc_type = f32, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>} : (tensor<1x8x8x8xf32>, tensor<4x3x3x8xf32>, tensor<4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x8x4xf32>
  return %y : tensor<1x8x8x4xf32>
}

// -----

// Integer convolutions pad with their input zero point, not 0: left alone.
// CHECK-LABEL: func @integer
// CHECK: tosa.conv2d {{.*}} pad = array<i64: 24, 24, 24, 24>
func.func @integer(%x: tensor<1x14x14x8xi8>, %w: tensor<4x3x3x8xi8>, %b: tensor<4xi32>) -> tensor<1x14x14x4xi32> {
  %zp = "tosa.const"() {values = dense<3> : tensor<1xi8>} : () -> tensor<1xi8>
  %y = tosa.conv2d %x, %w, %b, %zp, %zp {acc_type = i32, pad = array<i64: 24, 24, 24, 24>, stride = array<i64: 1, 1>, dilation = array<i64: 24, 24>} : (tensor<1x14x14x8xi8>, tensor<4x3x3x8xi8>, tensor<4xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x14x14x4xi32>
  return %y : tensor<1x14x14x4xi32>
}

// -----

// Strided, asymmetric: 9x9 input, stride 2, dilation 4, pad (8, 0) rows
// and (0, 8) columns: rows 0-1 read taps 2 and 1-2 (two segments), then
// the rest; every output still reads some input.
// CHECK-LABEL: func @strided_asymmetric
// CHECK-NOT: pad = array<i64: 8
// CHECK: tosa.concat
func.func @strided_asymmetric(%x: tensor<1x9x9x2xf32>, %w: tensor<3x3x3x2xf32>, %b: tensor<3xf32>) -> tensor<1x5x5x3xf32> {
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %y = tosa.conv2d %x, %w, %b, %zp, %zp {acc_type = f32, pad = array<i64: 8, 0, 0, 8>, stride = array<i64: 2, 2>, dilation = array<i64: 4, 4>} : (tensor<1x9x9x2xf32>, tensor<3x3x3x2xf32>, tensor<3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x5x5x3xf32>
  return %y : tensor<1x5x5x3xf32>
}
