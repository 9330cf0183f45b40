// RUN: tessel-opt %s -split-input-file -tessel-quantize-static -verify-diagnostics | FileCheck %s

// A matmul with constant weights (seen through the importer's reshape):
// the activation is quantized to uint8 over its calibrated range [-1, 3]
// (scale 4/255, zero point 64), the weights to int8 per output column:
// column 0 = [0.5, -1.0] -> scale 1/127, [64, -127]; column 1 = [2.0, 0.0]
// -> scale 2/127, [127, 0]. Both are dequantized back, the QDQ form
// tessel-fold-qdq runs on integers.
// CHECK-LABEL: func.func @linear
// CHECK: %[[QA:.*]] = quant.qcast %arg0 : tensor<1x3x2xf32> to tensor<1x3x2x!quant.uniform<u8:f32, 0.015686274509803921:64>>
// CHECK: %[[A:.*]] = quant.dcast %[[QA]] : tensor<1x3x2x!quant.uniform<u8:f32, 0.015686274509803921:64>> to tensor<1x3x2xf32>
// CHECK: %[[W8:.*]] = "tosa.const"() <{values = dense<{{\[}}{{\[}}[64, 127], [-127, 0]]]> : tensor<1x2x2xi8>}>
// CHECK: %[[WQ:.*]] = quant.scast %[[W8]] : tensor<1x2x2xi8> to tensor<1x2x2x!quant.uniform<i8<-127:127>:f32:2, {0.0078740157186985015,0.015748031437397003}>>
// CHECK: %[[W:.*]] = quant.dcast %[[WQ]]
// CHECK: tosa.matmul %[[A]], %[[W]], %{{.*}}, %{{.*}} : (tensor<1x3x2xf32>, tensor<1x2x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x3x2xf32>
// CHECK-NOT: tessel.calibrated_ranges
func.func @linear(%a: tensor<1x3x2xf32>) -> tensor<1x3x2xf32> {
  %w = "tosa.const"() <{values = dense<[[0.5, 2.0], [-1.0, 0.0]]> : tensor<2x2xf32>}> : () -> tensor<2x2xf32>
  %s = tosa.const_shape {values = dense<[1, 2, 2]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %w3 = tosa.reshape %w, %s : (tensor<2x2xf32>, !tosa.shape<3>) -> tensor<1x2x2xf32>
  %z = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %y = tosa.matmul %a, %w3, %z, %z {tessel.calibrated_ranges = array<f64: -1.0, 3.0>} : (tensor<1x3x2xf32>, tensor<1x2x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x3x2xf32>
  return %y : tensor<1x3x2xf32>
}

// -----

// Two run-time operands (attention's Q K^T): both get a range; a range
// that excludes 0 is widened to hold it ([0.5, 2] -> [0, 2]: scale 2/255,
// zero point 0).
// CHECK-LABEL: func.func @two_activations
// CHECK: quant.qcast %arg0 : tensor<1x2x4xf32> to tensor<1x2x4x!quant.uniform<u8:f32, 0.0078431372549019607>>
// CHECK: quant.qcast %arg1 : tensor<1x4x3xf32> to tensor<1x4x3x!quant.uniform<u8:f32, 0.0078431372549019607:128>>
// CHECK: tosa.matmul
func.func @two_activations(%a: tensor<1x2x4xf32>, %b: tensor<1x4x3xf32>) -> tensor<1x2x3xf32> {
  %z = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %y = tosa.matmul %a, %b, %z, %z {tessel.calibrated_ranges = array<f64: 0.5, 2.0, -1.0, 1.0>} : (tensor<1x2x4xf32>, tensor<1x4x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x3xf32>
  return %y : tensor<1x2x3xf32>
}

// -----

// A convolution (OHWI weights, per output channel on axis 0).
// CHECK-LABEL: func.func @conv
// CHECK: quant.qcast %arg0 : tensor<1x4x4x2xf32> to tensor<1x4x4x2x!quant.uniform<u8:f32, 0.0039215686274509803>>
// CHECK: quant.scast %{{.*}} : tensor<3x1x1x2xi8> to tensor<3x1x1x2x!quant.uniform<i8<-127:127>:f32:0, {0.0078740157186985015,0.015748031437397003,1.000000e+00}>>
// CHECK: tessel.conv2d
func.func @conv(%x: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %w = "tosa.const"() <{values = dense<[[[[1.0, -0.5]]], [[[2.0, 1.0]]], [[[0.0, 0.0]]]]> : tensor<3x1x1x2xf32>}> : () -> tensor<3x1x1x2xf32>
  %b = "tosa.const"() <{values = dense<0.5> : tensor<3xf32>}> : () -> tensor<3xf32>
  %y = tessel.conv2d %x, %w, %b {groups = 1 : i64, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, tessel.calibrated_ranges = array<f64: 0.0, 1.0>} : (tensor<1x4x4x2xf32>, tensor<3x1x1x2xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// Without ranges (not calibrated, or excluded) a site stays float.
// CHECK-LABEL: func.func @uncalibrated
// CHECK-NOT: quant.
// CHECK: tosa.matmul %arg0, %arg1
func.func @uncalibrated(%a: tensor<1x2x4xf32>, %b: tensor<1x4x3xf32>) -> tensor<1x2x3xf32> {
  %z = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %y = tosa.matmul %a, %b, %z, %z : (tensor<1x2x4xf32>, tensor<1x4x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x3xf32>
  return %y : tensor<1x2x3xf32>
}

// -----

// A grouped convolution (2 groups of 2 channels) is quantized as any
// convolution, per output channel on axis 0 (tessel-fold-qdq runs it one
// group at a time).
// CHECK-LABEL: func.func @grouped
// CHECK: quant.qcast %arg0 : tensor<1x4x4x4xf32> to tensor<1x4x4x4x!quant.uniform<u8:f32, 0.0039215686274509803>>
// CHECK: quant.scast %{{.*}} : tensor<2x1x1x2xi8> to tensor<2x1x1x2x!quant.uniform<i8<-127:127>:f32:0, {0.0078740157186985015,0.015748031437397003}>>
// CHECK: tessel.conv2d {{.*}} groups = 2
func.func @grouped(%x: tensor<1x4x4x4xf32>) -> tensor<1x4x4x2xf32> {
  %w = "tosa.const"() <{values = dense<[[[[1.0, 0.5]]], [[[2.0, -1.0]]]]> : tensor<2x1x1x2xf32>}> : () -> tensor<2x1x1x2xf32>
  %b = "tosa.const"() <{values = dense<0.0> : tensor<2xf32>}> : () -> tensor<2xf32>
  %y = tessel.conv2d %x, %w, %b {groups = 2 : i64, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, tessel.calibrated_ranges = array<f64: 0.0, 1.0>} : (tensor<1x4x4x4xf32>, tensor<2x1x1x2xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
  return %y : tensor<1x4x4x2xf32>
}

// -----

// A convolution of run-time weights has no int8 form (its weights cannot
// be quantized at compile time): ranges on it are a warning and it stays
// float.
// CHECK-LABEL: func.func @runtime_weights
// CHECK-NOT: quant.
func.func @runtime_weights(%x: tensor<1x4x4x4xf32>, %w: tensor<2x1x1x2xf32>) -> tensor<1x4x4x2xf32> {
  %b = "tosa.const"() <{values = dense<0.0> : tensor<2xf32>}> : () -> tensor<2xf32>
  // expected-warning @+1 {{calibrated ranges on an op that static quantization does not quantize; it stays float}}
  %y = tessel.conv2d %x, %w, %b {groups = 2 : i64, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, tessel.calibrated_ranges = array<f64: 0.0, 1.0>} : (tensor<1x4x4x4xf32>, tensor<2x1x1x2xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
  return %y : tensor<1x4x4x2xf32>
}

// -----

// A depthwise convolution (groups = C = F: weights C x KH x KW x 1) is
// quantized as any convolution, per channel on axis 0.
// CHECK-LABEL: func.func @depthwise
// CHECK: quant.qcast %arg0 : tensor<1x4x4x2xf32> to tensor<1x4x4x2x!quant.uniform<u8:f32, 0.0039215686274509803>>
// CHECK: quant.scast %{{.*}} : tensor<2x1x1x1xi8> to tensor<2x1x1x1x!quant.uniform<i8<-127:127>:f32:0, {0.0078740157186985015,0.015748031437397003}>>
// CHECK: tessel.conv2d {{.*}} groups = 2
func.func @depthwise(%x: tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32> {
  %w = "tosa.const"() <{values = dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>}> : () -> tensor<2x1x1x1xf32>
  %b = "tosa.const"() <{values = dense<0.0> : tensor<2xf32>}> : () -> tensor<2xf32>
  %y = tessel.conv2d %x, %w, %b {groups = 2 : i64, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, tessel.calibrated_ranges = array<f64: 0.0, 1.0>} : (tensor<1x4x4x2xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
  return %y : tensor<1x4x4x2xf32>
}

// -----

func.func @wrong_count(%a: tensor<1x2x4xf32>, %b: tensor<1x4x3xf32>) -> tensor<1x2x3xf32> {
  %z = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  // expected-error @+1 {{'tosa.matmul' op has 2 calibrated range bounds, expected 4 (lo, hi per activation)}}
  %y = tosa.matmul %a, %b, %z, %z {tessel.calibrated_ranges = array<f64: 0.0, 1.0>} : (tensor<1x2x4xf32>, tensor<1x4x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x3xf32>
  return %y : tensor<1x2x3xf32>
}

// -----

func.func @inverted(%a: tensor<1x2x4xf32>, %b: tensor<1x4x3xf32>) -> tensor<1x2x3xf32> {
  %z = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  // expected-error @+1 {{'tosa.matmul' op has an invalid calibrated range [2.000000e+00, 1.000000e+00] for operand 1}}
  %y = tosa.matmul %a, %b, %z, %z {tessel.calibrated_ranges = array<f64: 0.0, 1.0, 2.0, 1.0>} : (tensor<1x2x4xf32>, tensor<1x4x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x3xf32>
  return %y : tensor<1x2x3xf32>
}
