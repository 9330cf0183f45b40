// RUN: tessel-opt %s -split-input-file -tessel-lower-quant -verify-diagnostics | FileCheck %s

// Dequantize per tensor: (x - zp) * scale in f32; the storage casts cancel.
// CHECK-LABEL: func.func @dequantize_per_tensor
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xi8>)
// CHECK-NOT: quant.
// CHECK: %[[F:.*]] = arith.sitofp %[[X]] : tensor<2x3xi8> to tensor<2x3xf32>
// CHECK: %[[ZP:.*]] = arith.constant dense<3.000000e+00> : tensor<1x1xf32>
// CHECK: %[[S:.*]] = arith.constant dense<5.000000e-01> : tensor<1x1xf32>
// CHECK: %[[D:.*]] = tosa.sub %[[F]], %[[ZP]]
// CHECK: %[[Y:.*]] = tosa.mul %[[D]], %[[S]]
// CHECK: return %[[Y]]
func.func @dequantize_per_tensor(%x: tensor<2x3xi8>) -> tensor<2x3xf32> {
  %q = quant.scast %x : tensor<2x3xi8> to tensor<2x3x!quant.uniform<i8:f32, 0.5:3>>
  %y = quant.dcast %q : tensor<2x3x!quant.uniform<i8:f32, 0.5:3>> to tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// Unsigned storage converts as unsigned; per-axis parameters broadcast
// along the quantized dimension; f16 results are narrowed last.
// CHECK-LABEL: func.func @dequantize_per_axis_unsigned
// CHECK: arith.uitofp %{{.*}} : tensor<2x3xi8> to tensor<2x3xf32>
// CHECK: arith.constant dense<{{\[}}[0.000000e+00, 1.280000e+02, 2.550000e+02]]> : tensor<1x3xf32>
// CHECK: arith.constant dense<{{\[}}[1.000000e+00, 2.000000e+00, 2.500000e-01]]> : tensor<1x3xf32>
// CHECK: tosa.sub
// CHECK: tosa.mul
// CHECK: arith.truncf %{{.*}} : tensor<2x3xf32> to tensor<2x3xf16>
func.func @dequantize_per_axis_unsigned(%x: tensor<2x3xi8>) -> tensor<2x3xf16> {
  %q = quant.scast %x : tensor<2x3xi8> to tensor<2x3x!quant.uniform<u8:f16:1, {1.0:0, 2.0:128, 0.25:255}>>
  %y = quant.dcast %q : tensor<2x3x!quant.uniform<u8:f16:1, {1.0:0, 2.0:128, 0.25:255}>> to tensor<2x3xf16>
  return %y : tensor<2x3xf16>
}

// -----

// Quantize: exact division by the (tiled) scale, round half to even, zero
// point, saturation to the storage range, then narrowing.
// CHECK-LABEL: func.func @quantize_per_axis
// CHECK: %[[S:.*]] = arith.constant dense<{{\[}}[5.000000e-01], [2.000000e+00]]> : tensor<2x1xf32>
// CHECK: %[[T:.*]] = tosa.tile %[[S]], %{{.*}} : (tensor<2x1xf32>, !tosa.shape<2>) -> tensor<2x4xf32>
// CHECK: %[[D:.*]] = arith.divf %{{.*}}, %[[T]] : tensor<2x4xf32>
// CHECK: %[[R:.*]] = math.roundeven %[[D]] : tensor<2x4xf32>
// CHECK: %[[A:.*]] = tosa.add %[[R]], %{{.*}}
// CHECK: %[[C:.*]] = tosa.clamp %[[A]] {max_val = 1.270000e+02 : f32, min_val = -1.280000e+02 : f32}
// CHECK: %[[I:.*]] = arith.fptosi %[[C]] : tensor<2x4xf32> to tensor<2x4xi32>
// CHECK: %[[N:.*]] = arith.trunci %[[I]] : tensor<2x4xi32> to tensor<2x4xi8>
// CHECK: return %[[N]]
func.func @quantize_per_axis(%x: tensor<2x4xf32>) -> tensor<2x4xi8> {
  %q = quant.qcast %x : tensor<2x4xf32> to tensor<2x4x!quant.uniform<i8:f32:0, {0.5:-3, 2.0:7}>>
  %s = quant.scast %q : tensor<2x4x!quant.uniform<i8:f32:0, {0.5:-3, 2.0:7}>> to tensor<2x4xi8>
  return %s : tensor<2x4xi8>
}

// -----

// Quantize then dequantize (a fake-quantization pair) lowers end to end.
// CHECK-LABEL: func.func @round_trip
// CHECK-NOT: quant.
// CHECK: math.roundeven
// CHECK: arith.sitofp
func.func @round_trip(%x: tensor<4xf32>) -> tensor<4xf32> {
  %q = quant.qcast %x : tensor<4xf32> to tensor<4x!quant.uniform<i16:f32, 0.125:-2>>
  %y = quant.dcast %q : tensor<4x!quant.uniform<i16:f32, 0.125:-2>> to tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// A quantized value consumed by an op without a lowering is an error.
func.func @unlowered(%x: tensor<4xi8>) -> tensor<4x!quant.uniform<i8:f32, 0.5>> {
  %q = quant.scast %x : tensor<4xi8> to tensor<4x!quant.uniform<i8:f32, 0.5>>
  // expected-error @+1 {{quantized value of type 'tensor<4x!quant.uniform<i8:f32, 5.000000e-01>>' has no lowering here}}
  return %q : tensor<4x!quant.uniform<i8:f32, 5.000000e-01>>
}

// -----

// Quantized constants (a QDQ model's weights) are dequantized at compile
// time, per axis here: (q - zp) * scale = [(4-1)*0.5, (-2-1)*0.5], [(4-0)*2, (-2-0)*2].
// CHECK-LABEL: func.func @dequantize_constant
// CHECK-NOT: tosa.
// CHECK: %[[W:.*]] = arith.constant dense<{{\[}}[1.500000e+00, -1.500000e+00], [8.000000e+00, -4.000000e+00]]> : tensor<2x2xf32>
// CHECK: return %[[W]]
func.func @dequantize_constant() -> tensor<2x2xf32> {
  %w = arith.constant dense<[[4, -2], [4, -2]]> : tensor<2x2xi8>
  %q = quant.scast %w : tensor<2x2xi8> to tensor<2x2x!quant.uniform<i8:f32:0, {0.5:1, 2.0:0}>>
  %y = quant.dcast %q : tensor<2x2x!quant.uniform<i8:f32:0, {0.5:1, 2.0:0}>> to tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}

// -----

// Per tensor, the quantize step divides by a splat of the full shape (a
// constant the layout passes move transposes across), not a tiled tensor.
// CHECK-LABEL: func.func @quantize_per_tensor
// CHECK-NOT: tosa.tile
// CHECK: %[[S:.*]] = arith.constant dense<2.500000e-01> : tensor<2x3xf32>
// CHECK: arith.divf %{{.*}}, %[[S]] : tensor<2x3xf32>
func.func @quantize_per_tensor(%x: tensor<2x3xf32>) -> tensor<2x3xi8> {
  %q = quant.qcast %x : tensor<2x3xf32> to tensor<2x3x!quant.uniform<i8:f32, 0.25:1>>
  %s = quant.scast %q : tensor<2x3x!quant.uniform<i8:f32, 0.25:1>> to tensor<2x3xi8>
  return %s : tensor<2x3xi8>
}
