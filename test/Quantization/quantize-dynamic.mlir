// RUN: tessel-opt %s -split-input-file -tessel-quantize-dynamic | FileCheck %s

// Constant weights (seen through the importer's transpose, as Gemm's
// transB makes them) are quantized per output column at compile time:
// column 0 = [0.5, -1.0] -> scale 1/127, [64, -127]; column 1 = [2.0, 0.0]
// -> scale 2/127, [127, 0]. The activation is quantized per row at run
// time; the i8 x i8 -> i32 product is rescaled by both scales.
// CHECK-LABEL: func.func @linear
// CHECK-DAG: %[[QW:.*]] = "tosa.const"() <{values = dense<{{\[}}{{\[}}[64, 127], [-127, 0]]]> : tensor<1x2x2xi8>}>
// CHECK-DAG: %[[SW:.*]] = "tosa.const"() <{values = dense<{{\[}}{{\[}}[0.00787401571, 0.0157480314]]]> : tensor<1x1x2xf32>}>
// CHECK: %[[ABS:.*]] = tosa.abs %[[A:.*]] : (tensor<1x3x2xf32>) -> tensor<1x3x2xf32>
// CHECK: %[[MAX:.*]] = tosa.reduce_max %[[ABS]] {axis = 2 : i32} : (tensor<1x3x2xf32>) -> tensor<1x3x1xf32>
// CHECK: %[[S0:.*]] = tosa.mul %[[MAX]]
// CHECK: %[[SA:.*]] = tosa.maximum %[[S0]]
// CHECK: %[[INV:.*]] = tosa.reciprocal %[[SA]]
// CHECK: %[[X:.*]] = tosa.mul %[[A]], %[[INV]]
// CHECK: %[[QA:.*]] = tosa.cast %[[X]] : (tensor<1x3x2xf32>) -> tensor<1x3x2xi8>
// CHECK: %[[ACC:.*]] = tosa.matmul %[[QA]], %[[QW]], %{{.*}}, %{{.*}} : (tensor<1x3x2xi8>, tensor<1x2x2xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x3x2xi32>
// CHECK: %[[F:.*]] = tosa.cast %[[ACC]] : (tensor<1x3x2xi32>) -> tensor<1x3x2xf32>
// CHECK: %[[Y0:.*]] = tosa.mul %[[F]], %[[SA]]
// CHECK: %[[Y:.*]] = tosa.mul %[[Y0]], %[[SW]]
// CHECK: return %[[Y]]
func.func @linear(%a: tensor<1x3x2xf32>) -> tensor<1x3x2xf32> {
  %w = "tosa.const"() <{values = dense<[[[0.5, -1.0], [2.0, 0.0]]]> : tensor<1x2x2xf32>}> : () -> tensor<1x2x2xf32>
  %wt = tosa.transpose %w {perms = array<i32: 0, 2, 1>} : (tensor<1x2x2xf32>) -> tensor<1x2x2xf32>
  %z = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %y = tosa.matmul %a, %wt, %z, %z : (tensor<1x3x2xf32>, tensor<1x2x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x3x2xf32>
  return %y : tensor<1x3x2xf32>
}

// -----

// A product of two run-time values (attention's scores) stays in float.
// CHECK-LABEL: func.func @activations
// CHECK-NOT: i8
// CHECK: tosa.matmul %{{.*}} : (tensor<1x3x2xf32>, tensor<1x2x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x3x4xf32>
func.func @activations(%a: tensor<1x3x2xf32>, %b: tensor<1x2x4xf32>) -> tensor<1x3x4xf32> {
  %z = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %y = tosa.matmul %a, %b, %z, %z : (tensor<1x3x2xf32>, tensor<1x2x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x3x4xf32>
  return %y : tensor<1x3x4xf32>
}
