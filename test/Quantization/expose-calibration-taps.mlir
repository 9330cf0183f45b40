// RUN: tessel-opt %s -split-input-file -tessel-expose-calibration-taps | FileCheck %s
// RUN: tessel-opt %s -split-input-file -tessel-expose-calibration-taps=outputs=true | FileCheck %s --check-prefix=OUTPUTS

// The activations of each quantization site, site by site in walk order,
// become extra results after the function's own: the matmul's input, then
// both operands of the run-time matmul. Constant weights are not taps.
// CHECK-LABEL: func.func @main
// CHECK-SAME: -> (tensor<1x2x3xf32> {tessel.name = "y"}, tensor<1x2x4xf32> {tessel.name = "calibration_tap_0"}, tensor<1x2x3xf32> {tessel.name = "calibration_tap_1"}, tensor<1x3x3xf32> {tessel.name = "calibration_tap_2"})
// CHECK: %[[H:.*]] = tosa.matmul %arg0
// CHECK: %[[Y:.*]] = tosa.matmul %[[H]], %arg1
// CHECK: return %[[Y]], %arg0, %[[H]], %arg1 :
// With outputs=true each site's result follows its activations.
// OUTPUTS-LABEL: func.func @main
// OUTPUTS: %[[H:.*]] = tosa.matmul %arg0
// OUTPUTS: %[[Y:.*]] = tosa.matmul %[[H]], %arg1
// OUTPUTS: return %[[Y]], %arg0, %[[H]], %[[H]], %arg1, %[[Y]] :
func.func @main(%a: tensor<1x2x4xf32>, %b: tensor<1x3x3xf32>) -> (tensor<1x2x3xf32> {tessel.name = "y"}) {
  %w = "tosa.const"() <{values = dense<0.5> : tensor<1x4x3xf32>}> : () -> tensor<1x4x3xf32>
  %z = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %h = tosa.matmul %a, %w, %z, %z : (tensor<1x2x4xf32>, tensor<1x4x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x3xf32>
  %y = tosa.matmul %h, %b, %z, %z : (tensor<1x2x3xf32>, tensor<1x3x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x3xf32>
  return %y : tensor<1x2x3xf32>
}

// -----

// No site (a convolution of run-time weights has no int8 form here;
// integer matmuls are already integer): nothing changes. Private
// functions are not entries.
// CHECK-LABEL: func.func @none
// CHECK-SAME: -> tensor<1x4x4x2xf32>
// CHECK: return %{{.*}} : tensor<1x4x4x2xf32>
// CHECK-LABEL: func.func private @helper
// CHECK-SAME: -> tensor<1x2x3xf32>
func.func @none(%x: tensor<1x4x4x4xf32>, %w: tensor<2x1x1x2xf32>) -> tensor<1x4x4x2xf32> {
  %b = "tosa.const"() <{values = dense<0.0> : tensor<2xf32>}> : () -> tensor<2xf32>
  %y = tessel.conv2d %x, %w, %b {groups = 2 : i64, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>} : (tensor<1x4x4x4xf32>, tensor<2x1x1x2xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
  return %y : tensor<1x4x4x2xf32>
}
func.func private @helper(%a: tensor<1x2x4xf32>, %b: tensor<1x4x3xf32>) -> tensor<1x2x3xf32> {
  %z = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %y = tosa.matmul %a, %b, %z, %z : (tensor<1x2x4xf32>, tensor<1x4x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x3xf32>
  return %y : tensor<1x2x3xf32>
}

// -----

// A matmul inside control flow is no site: its values cannot be returned
// from the function's body (tessel-quantize-static leaves it float).
// CHECK-LABEL: func.func @branch
// CHECK-SAME: -> tensor<1x2x3xf32> {
// CHECK-NOT: calibration_tap
func.func @branch(%p: tensor<i1>, %a: tensor<1x2x4xf32>) -> tensor<1x2x3xf32> {
  %r = tosa.cond_if %p (%x = %a) : tensor<i1> (tensor<1x2x4xf32>) -> tensor<1x2x3xf32> {
  ^bb0(%x: tensor<1x2x4xf32>):
    %w = "tosa.const"() <{values = dense<0.5> : tensor<1x4x3xf32>}> : () -> tensor<1x4x3xf32>
    %z = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
    %y = tosa.matmul %x, %w, %z, %z : (tensor<1x2x4xf32>, tensor<1x4x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x3xf32>
    tosa.yield %y : tensor<1x2x3xf32>
  } else {
  ^bb0(%x: tensor<1x2x4xf32>):
    %c = "tosa.const"() <{values = dense<0.0> : tensor<1x2x3xf32>}> : () -> tensor<1x2x3xf32>
    tosa.yield %c : tensor<1x2x3xf32>
  }
  return %r : tensor<1x2x3xf32>
}
