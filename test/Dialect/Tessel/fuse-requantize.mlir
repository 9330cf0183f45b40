// RUN: tessel-opt %s -split-input-file -tessel-fuse-requantize -mlir-print-elementsattrs-with-hex-if-larger=1000 | FileCheck %s
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#col = affine_map<(d0, d1, d2) -> (d2)>

// Dequantize (scale, bias), quantize to u8: the generic becomes the
// kernel's epilogue and the int32 matmul goes.
// CHECK-LABEL: func @requantize
// CHECK-DAG: %[[S:.*]] = arith.constant dense<[5.000000e-01, 2.500000e-01,{{.*}}1.250000e-01]> : tensor<16xf32>
// CHECK-DAG: %[[B:.*]] = arith.constant dense<[1.000000e+00, 2.000000e+00,{{.*}}3.000000e+00]> : tensor<16xf32>
// CHECK-NOT: linalg.generic
// CHECK: %[[Y:.*]] = tessel.packed_matmul_i8_requant ins(%arg0, %{{.*}} : tensor<1x4x8xi8>, tensor<1x2x64x4xi8>) scale(%[[S]] : tensor<16xf32>) bias(%[[B]] : tensor<16xf32>) outs(%{{.*}} : tensor<1x4x16xi8>)
// CHECK-SAME: a_signed, a_zp = -128 : i32, b_zp = 0 : i32, clamp_max = 0x7F800000 : f32, clamp_min = 0xFF800000 : f32, out_scale = 1.000000e-01 : f32, out_zp = 3.000000e+00 : f32
// CHECK-NOT: tessel.packed_matmul_i8 ins
// CHECK: return %[[Y]]
func.func @requantize(%x: tensor<1x4x8xi8>) -> tensor<1x4x16xi8> {
  %wp = arith.constant dense<1> : tensor<1x2x64x4xi8>
  %e = tensor.empty() : tensor<1x4x16xi32>
  %acc = tessel.packed_matmul_i8 ins(%x, %wp : tensor<1x4x8xi8>, tensor<1x2x64x4xi8>) outs(%e : tensor<1x4x16xi32>) {a_signed, a_zp = -128 : i32, b_zp = 0 : i32} -> tensor<1x4x16xi32>
  %scale = arith.constant dense<[0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.125]> : tensor<16xf32>
  %bias = arith.constant dense<[1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 3.0]> : tensor<16xf32>
  %s = arith.constant 0.1 : f32
  %zp = arith.constant 3.0 : f32
  %lo = arith.constant 0.0 : f32
  %hi = arith.constant 255.0 : f32
  %six = arith.constant 6.0 : f32
  %eo = tensor.empty() : tensor<1x4x16xi8>
  %y = linalg.generic {indexing_maps = [#id, #col, #col, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%acc, %scale, %bias : tensor<1x4x16xi32>, tensor<16xf32>, tensor<16xf32>) outs(%eo : tensor<1x4x16xi8>) {
  ^bb0(%a: i32, %sc: f32, %b: f32, %o: i8):
    %f = arith.sitofp %a : i32 to f32
    %m = arith.mulf %f, %sc : f32
    %ab = arith.addf %m, %b : f32
    %d = arith.divf %ab, %s : f32
    %r = math.roundeven %d : f32
    %z = arith.addf %r, %zp : f32
    %c1 = arith.minimumf %z, %hi : f32
    %c2 = arith.maximumf %c1, %lo : f32
    %i = arith.fptosi %c2 : f32 to i32
    %t = arith.trunci %i : i32 to i8
    linalg.yield %t : i8
  } -> tensor<1x4x16xi8>
  return %y : tensor<1x4x16xi8>
}

// -----
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#col = affine_map<(d0, d1, d2) -> (d2)>

// A clip (ReLU6) before the quantization is the clamp; what follows the
// quantization (here u8 -> s8, the next matmul's operand) is a table of
// the 256 values.
// CHECK-LABEL: func @clip_then_tail_table
// CHECK: %[[T:.*]] = arith.constant dense<[-128, -127, -126,{{.*}}, 126, 127]> : tensor<256xi8>
// CHECK-NOT: linalg.generic
// CHECK: tessel.packed_matmul_i8_requant
// CHECK-SAME: table(%[[T]] : tensor<256xi8>)
// CHECK-SAME: clamp_max = 6.000000e+00 : f32, clamp_min = 0.000000e+00 : f32, out_scale = 1.000000e-01 : f32
// CHECK-NOT: qmin
func.func @clip_then_tail_table(%x: tensor<1x4x8xi8>) -> tensor<1x4x16xi8> {
  %wp = arith.constant dense<1> : tensor<1x2x64x4xi8>
  %e = tensor.empty() : tensor<1x4x16xi32>
  %acc = tessel.packed_matmul_i8 ins(%x, %wp : tensor<1x4x8xi8>, tensor<1x2x64x4xi8>) outs(%e : tensor<1x4x16xi32>) {a_signed, a_zp = -128 : i32, b_zp = 0 : i32} -> tensor<1x4x16xi32>
  %scale = arith.constant dense<[0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.125]> : tensor<16xf32>
  %bias = arith.constant dense<[1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 3.0]> : tensor<16xf32>
  %s = arith.constant 0.1 : f32
  %zp = arith.constant 3.0 : f32
  %lo = arith.constant 0.0 : f32
  %hi = arith.constant 255.0 : f32
  %six = arith.constant 6.0 : f32
  %eo = tensor.empty() : tensor<1x4x16xi8>
  %y = linalg.generic {indexing_maps = [#id, #col, #col, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%acc, %scale, %bias : tensor<1x4x16xi32>, tensor<16xf32>, tensor<16xf32>) outs(%eo : tensor<1x4x16xi8>) {
  ^bb0(%a: i32, %sc: f32, %b: f32, %o: i8):
    %f = arith.sitofp %a : i32 to f32
    %m = arith.mulf %f, %sc : f32
    %ab = arith.addf %m, %b : f32
    %k1 = arith.minimumf %ab, %six : f32
    %k2 = arith.maximumf %k1, %lo : f32
    %d = arith.divf %k2, %s : f32
    %r = math.roundeven %d : f32
    %c1 = arith.minimumf %r, %hi : f32
    %c2 = arith.maximumf %c1, %lo : f32
    %i = arith.fptosi %c2 : f32 to i32
    %t = arith.trunci %i : i32 to i8
    %sgn = arith.constant -128 : i8
    %xo = arith.xori %t, %sgn : i8
    linalg.yield %xo : i8
  } -> tensor<1x4x16xi8>
  return %y : tensor<1x4x16xi8>
}

// -----
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#col = affine_map<(d0, d1, d2) -> (d2)>

// No quantization: the dequantized, ReLU'd f32 result.
// CHECK-LABEL: func @dequantized_f32
// CHECK-NOT: linalg.generic
// CHECK: tessel.packed_matmul_i8_requant
// CHECK-SAME: outs(%{{.*}} : tensor<1x4x16xf32>)
// CHECK-SAME: clamp_max = 0x7F800000 : f32, clamp_min = 0.000000e+00 : f32}
// CHECK-NOT: out_scale
func.func @dequantized_f32(%x: tensor<1x4x8xi8>) -> tensor<1x4x16xf32> {
  %wp = arith.constant dense<1> : tensor<1x2x64x4xi8>
  %e = tensor.empty() : tensor<1x4x16xi32>
  %acc = tessel.packed_matmul_i8 ins(%x, %wp : tensor<1x4x8xi8>, tensor<1x2x64x4xi8>) outs(%e : tensor<1x4x16xi32>) {a_signed, a_zp = -128 : i32, b_zp = 0 : i32} -> tensor<1x4x16xi32>
  %scale = arith.constant dense<[0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.125]> : tensor<16xf32>
  %bias = arith.constant dense<[1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 3.0]> : tensor<16xf32>
  %s = arith.constant 0.1 : f32
  %zp = arith.constant 3.0 : f32
  %lo = arith.constant 0.0 : f32
  %hi = arith.constant 255.0 : f32
  %six = arith.constant 6.0 : f32
  %eo = tensor.empty() : tensor<1x4x16xf32>
  %y = linalg.generic {indexing_maps = [#id, #col, #col, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%acc, %scale, %bias : tensor<1x4x16xi32>, tensor<16xf32>, tensor<16xf32>) outs(%eo : tensor<1x4x16xf32>) {
  ^bb0(%a: i32, %sc: f32, %b: f32, %o: f32):
    %f = arith.sitofp %a : i32 to f32
    %m = arith.mulf %f, %sc : f32
    %ab = arith.addf %m, %b : f32
    %k = arith.maximumf %ab, %lo : f32
    linalg.yield %k : f32
  } -> tensor<1x4x16xf32>
  return %y : tensor<1x4x16xf32>
}

// -----
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#col = affine_map<(d0, d1, d2) -> (d2)>

// Quantize, then dequantize and clip in f32 (the input of a float op):
// the dequantization is done in the kernel, no table.
// CHECK-LABEL: func @dequantize_tail
// CHECK-NOT: linalg.generic
// CHECK: tessel.packed_matmul_i8_requant
// CHECK-NOT: table
// CHECK-SAME: outs(%{{.*}} : tensor<1x4x16xf32>)
// CHECK-SAME: dequant_max = 6.000000e+00 : f32, dequant_min = 0.000000e+00 : f32, dequant_scale = 1.000000e-01 : f32, dequant_zp = 3.000000e+00 : f32
func.func @dequantize_tail(%x: tensor<1x4x8xi8>) -> tensor<1x4x16xf32> {
  %wp = arith.constant dense<1> : tensor<1x2x64x4xi8>
  %e = tensor.empty() : tensor<1x4x16xi32>
  %acc = tessel.packed_matmul_i8 ins(%x, %wp : tensor<1x4x8xi8>, tensor<1x2x64x4xi8>) outs(%e : tensor<1x4x16xi32>) {a_signed, a_zp = -128 : i32, b_zp = 0 : i32} -> tensor<1x4x16xi32>
  %scale = arith.constant dense<[0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.125]> : tensor<16xf32>
  %bias = arith.constant dense<[1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 3.0]> : tensor<16xf32>
  %s = arith.constant 0.1 : f32
  %zp = arith.constant 3.0 : f32
  %lo = arith.constant 0.0 : f32
  %hi = arith.constant 255.0 : f32
  %six = arith.constant 6.0 : f32
  %eo = tensor.empty() : tensor<1x4x16xf32>
  %y = linalg.generic {indexing_maps = [#id, #col, #col, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%acc, %scale, %bias : tensor<1x4x16xi32>, tensor<16xf32>, tensor<16xf32>) outs(%eo : tensor<1x4x16xf32>) {
  ^bb0(%a: i32, %sc: f32, %b: f32, %o: f32):
    %f = arith.sitofp %a : i32 to f32
    %m = arith.mulf %f, %sc : f32
    %ab = arith.addf %m, %b : f32
    %d = arith.divf %ab, %s : f32
    %r = math.roundeven %d : f32
    %z = arith.addf %r, %zp : f32
    %c1 = arith.minimumf %z, %hi : f32
    %c2 = arith.maximumf %c1, %lo : f32
    %i = arith.fptosi %c2 : f32 to i32
    %t = arith.trunci %i : i32 to i8
    %u = arith.uitofp %t : i8 to f32
    %us = arith.subf %u, %zp : f32
    %um = arith.mulf %us, %s : f32
    %u1 = arith.minimumf %um, %six : f32
    %u2 = arith.maximumf %u1, %lo : f32
    linalg.yield %u2 : f32
  } -> tensor<1x4x16xf32>
  return %y : tensor<1x4x16xf32>
}

// -----
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#col = affine_map<(d0, d1, d2) -> (d2)>

// An 8-bit function of the quantized value (a table), then its
// dequantization.
// CHECK-LABEL: func @table_then_dequantize
// CHECK: %[[T:.*]] = arith.constant dense<[-128, -127,{{.*}}]> : tensor<256xi8>
// CHECK: tessel.packed_matmul_i8_requant
// CHECK-SAME: table(%[[T]] : tensor<256xi8>)
// CHECK-SAME: dequant_scale = 1.000000e-01 : f32, dequant_signed
func.func @table_then_dequantize(%x: tensor<1x4x8xi8>) -> tensor<1x4x16xf32> {
  %wp = arith.constant dense<1> : tensor<1x2x64x4xi8>
  %e = tensor.empty() : tensor<1x4x16xi32>
  %acc = tessel.packed_matmul_i8 ins(%x, %wp : tensor<1x4x8xi8>, tensor<1x2x64x4xi8>) outs(%e : tensor<1x4x16xi32>) {a_signed, a_zp = -128 : i32, b_zp = 0 : i32} -> tensor<1x4x16xi32>
  %scale = arith.constant dense<[0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.125]> : tensor<16xf32>
  %bias = arith.constant dense<[1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 3.0]> : tensor<16xf32>
  %s = arith.constant 0.1 : f32
  %zp = arith.constant 3.0 : f32
  %lo = arith.constant 0.0 : f32
  %hi = arith.constant 255.0 : f32
  %six = arith.constant 6.0 : f32
  %eo = tensor.empty() : tensor<1x4x16xf32>
  %y = linalg.generic {indexing_maps = [#id, #col, #col, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%acc, %scale, %bias : tensor<1x4x16xi32>, tensor<16xf32>, tensor<16xf32>) outs(%eo : tensor<1x4x16xf32>) {
  ^bb0(%a: i32, %sc: f32, %b: f32, %o: f32):
    %f = arith.sitofp %a : i32 to f32
    %m = arith.mulf %f, %sc : f32
    %ab = arith.addf %m, %b : f32
    %d = arith.divf %ab, %s : f32
    %r = math.roundeven %d : f32
    %z = arith.addf %r, %zp : f32
    %c1 = arith.minimumf %z, %hi : f32
    %c2 = arith.maximumf %c1, %lo : f32
    %i = arith.fptosi %c2 : f32 to i32
    %t = arith.trunci %i : i32 to i8
    %sgn = arith.constant -128 : i8
    %xo = arith.xori %t, %sgn : i8
    %u = arith.sitofp %xo : i8 to f32
    %um = arith.mulf %u, %s : f32
    linalg.yield %um : f32
  } -> tensor<1x4x16xf32>
  return %y : tensor<1x4x16xf32>
}

// -----
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#col = affine_map<(d0, d1, d2) -> (d2)>

// Any other function of the quantized value: an f32 table.
// CHECK-LABEL: func @f32_table
// CHECK: %[[T:.*]] = arith.constant dense<[0.000000e+00, 1.000000e+00, 4.000000e+00, 9.000000e+00,{{.*}}]> : tensor<256xf32>
// CHECK: tessel.packed_matmul_i8_requant
// CHECK-SAME: table(%[[T]] : tensor<256xf32>)
// CHECK-NOT: dequant
func.func @f32_table(%x: tensor<1x4x8xi8>) -> tensor<1x4x16xf32> {
  %wp = arith.constant dense<1> : tensor<1x2x64x4xi8>
  %e = tensor.empty() : tensor<1x4x16xi32>
  %acc = tessel.packed_matmul_i8 ins(%x, %wp : tensor<1x4x8xi8>, tensor<1x2x64x4xi8>) outs(%e : tensor<1x4x16xi32>) {a_signed, a_zp = -128 : i32, b_zp = 0 : i32} -> tensor<1x4x16xi32>
  %scale = arith.constant dense<[0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.125]> : tensor<16xf32>
  %bias = arith.constant dense<[1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 3.0]> : tensor<16xf32>
  %s = arith.constant 0.1 : f32
  %zp = arith.constant 3.0 : f32
  %lo = arith.constant 0.0 : f32
  %hi = arith.constant 255.0 : f32
  %six = arith.constant 6.0 : f32
  %eo = tensor.empty() : tensor<1x4x16xf32>
  %y = linalg.generic {indexing_maps = [#id, #col, #col, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%acc, %scale, %bias : tensor<1x4x16xi32>, tensor<16xf32>, tensor<16xf32>) outs(%eo : tensor<1x4x16xf32>) {
  ^bb0(%a: i32, %sc: f32, %b: f32, %o: f32):
    %f = arith.sitofp %a : i32 to f32
    %m = arith.mulf %f, %sc : f32
    %ab = arith.addf %m, %b : f32
    %d = arith.divf %ab, %s : f32
    %r = math.roundeven %d : f32
    %z = arith.addf %r, %zp : f32
    %c1 = arith.minimumf %z, %hi : f32
    %c2 = arith.maximumf %c1, %lo : f32
    %i = arith.fptosi %c2 : f32 to i32
    %t = arith.trunci %i : i32 to i8
    %u = arith.uitofp %t : i8 to f32
    %um = arith.mulf %u, %u : f32
    linalg.yield %um : f32
  } -> tensor<1x4x16xf32>
  return %y : tensor<1x4x16xf32>
}

// -----
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#col = affine_map<(d0, d1, d2) -> (d2)>

// A per-element operand is an epilogue only as a residual add (then
// clamps: fuse-requantize-residual.mlir); multiplied, both ops stay.
// CHECK-LABEL: func @per_element_product_not_fused
// CHECK: tessel.packed_matmul_i8 ins
// CHECK: linalg.generic
// CHECK-NOT: packed_matmul_i8_requant
func.func @per_element_product_not_fused(%x: tensor<1x4x8xi8>, %r: tensor<1x4x16xf32>) -> tensor<1x4x16xf32> {
  %wp = arith.constant dense<1> : tensor<1x2x64x4xi8>
  %e = tensor.empty() : tensor<1x4x16xi32>
  %acc = tessel.packed_matmul_i8 ins(%x, %wp : tensor<1x4x8xi8>, tensor<1x2x64x4xi8>) outs(%e : tensor<1x4x16xi32>) {a_signed, a_zp = -128 : i32, b_zp = 0 : i32} -> tensor<1x4x16xi32>
  %scale = arith.constant dense<[0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.125]> : tensor<16xf32>
  %bias = arith.constant dense<[1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 3.0]> : tensor<16xf32>
  %s = arith.constant 0.1 : f32
  %zp = arith.constant 3.0 : f32
  %lo = arith.constant 0.0 : f32
  %hi = arith.constant 255.0 : f32
  %six = arith.constant 6.0 : f32
  %eo = tensor.empty() : tensor<1x4x16xf32>
  %y = linalg.generic {indexing_maps = [#id, #col, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%acc, %scale, %r : tensor<1x4x16xi32>, tensor<16xf32>, tensor<1x4x16xf32>) outs(%eo : tensor<1x4x16xf32>) {
  ^bb0(%a: i32, %sc: f32, %res: f32, %o: f32):
    %f = arith.sitofp %a : i32 to f32
    %m = arith.mulf %f, %sc : f32
    %ab = arith.mulf %m, %res : f32
    linalg.yield %ab : f32
  } -> tensor<1x4x16xf32>
  return %y : tensor<1x4x16xf32>
}

// -----

// A generic with no matmul operand (here rank 0, a QuantizeLinear of a
// scalar) is left alone.
// CHECK-LABEL: func @rank0_untouched
// CHECK: linalg.generic
// CHECK-NOT: packed_matmul
func.func @rank0_untouched(%x: tensor<f32>) -> tensor<i8> {
  %s = arith.constant 0.1 : f32
  %e = tensor.empty() : tensor<i8>
  %y = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
      ins(%x : tensor<f32>) outs(%e : tensor<i8>) {
  ^bb0(%a: f32, %o: i8):
    %d = arith.divf %a, %s : f32
    %i = arith.fptosi %d : f32 to i32
    %t = arith.trunci %i : i32 to i8
    linalg.yield %t : i8
  } -> tensor<i8>
  return %y : tensor<i8>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#col = affine_map<(d0, d1, d2) -> (d2)>

// A QDQ model's Q -> DQ -> Clip -> Q -> DQ into a float op: the requantize
// is an 8-bit table, the last dequantization (from the last int-to-float)
// runs in the kernel, no f32 table.
// CHECK-LABEL: func @requantize_then_dequantize
// CHECK: %[[T:.*]] = arith.constant dense<{{.*}}> : tensor<256xi8>
// CHECK: tessel.packed_matmul_i8_requant
// CHECK-SAME: table(%[[T]] : tensor<256xi8>) outs(%{{.*}} : tensor<1x4x16xf32>)
// CHECK-SAME: dequant_scale = 2.000000e-01 : f32
// CHECK-NOT: dequant_zp
func.func @requantize_then_dequantize(%x: tensor<1x4x8xi8>) -> tensor<1x4x16xf32> {
  %wp = arith.constant dense<1> : tensor<1x2x64x4xi8>
  %e = tensor.empty() : tensor<1x4x16xi32>
  %acc = tessel.packed_matmul_i8 ins(%x, %wp : tensor<1x4x8xi8>, tensor<1x2x64x4xi8>) outs(%e : tensor<1x4x16xi32>) {a_signed, a_zp = -128 : i32, b_zp = 0 : i32} -> tensor<1x4x16xi32>
  %scale = arith.constant dense<[0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.125]> : tensor<16xf32>
  %s = arith.constant 0.1 : f32
  %s2 = arith.constant 0.2 : f32
  %zp = arith.constant 3.0 : f32
  %lo = arith.constant 0.0 : f32
  %hi = arith.constant 255.0 : f32
  %six = arith.constant 6.0 : f32
  %eo = tensor.empty() : tensor<1x4x16xf32>
  %y = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%acc, %scale : tensor<1x4x16xi32>, tensor<16xf32>) outs(%eo : tensor<1x4x16xf32>) {
  ^bb0(%a: i32, %sc: f32, %o: f32):
    %f = arith.sitofp %a : i32 to f32
    %m = arith.mulf %f, %sc : f32
    %d = arith.divf %m, %s : f32
    %r = math.roundeven %d : f32
    %z = arith.addf %r, %zp : f32
    %c1 = arith.minimumf %z, %hi : f32
    %c2 = arith.maximumf %c1, %lo : f32
    %i = arith.fptosi %c2 : f32 to i32
    %t = arith.trunci %i : i32 to i8
    %u = arith.uitofp %t : i8 to f32
    %us = arith.subf %u, %zp : f32
    %um = arith.mulf %us, %s : f32
    %k1 = arith.minimumf %um, %six : f32
    %k2 = arith.maximumf %k1, %lo : f32
    %d2 = arith.divf %k2, %s2 : f32
    %r2 = math.roundeven %d2 : f32
    %q1 = arith.minimumf %r2, %hi : f32
    %q2 = arith.maximumf %q1, %lo : f32
    %i2 = arith.fptosi %q2 : f32 to i32
    %t2 = arith.trunci %i2 : i32 to i8
    %u2 = arith.uitofp %t2 : i8 to f32
    %out = arith.mulf %u2, %s2 : f32
    linalg.yield %out : f32
  } -> tensor<1x4x16xf32>
  return %y : tensor<1x4x16xf32>
}

// -----
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d3)>

// The int32 depthwise convolution (read through the unit channel
// multiplier's reshapes) gets the same epilogue: a column is a channel.
// CHECK-LABEL: func @depthwise
// CHECK-DAG: %[[S:.*]] = arith.constant dense<[5.000000e-01, 2.500000e-01]> : tensor<2xf32>
// CHECK-DAG: %[[B:.*]] = arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-NOT: linalg.generic
// CHECK: %[[Y:.*]] = tessel.depthwise_conv2d_i8 ins(%arg0, %{{.*}} : tensor<1x4x3x2xi8>, tensor<1x3x16x4xi8>) column_sums(%{{.*}} : tensor<2xi32>) scale(%[[S]] : tensor<2xf32>) bias(%[[B]] : tensor<2xf32>) outs(%{{.*}} : tensor<1x4x3x2xi8>)
// CHECK-SAME: a_signed, a_zp = 5 : i32, clamp_max = 6.000000e+00 : f32, clamp_min = 0.000000e+00 : f32, dilations = array<i64: 1, 1>, kernel_size = array<i64: 3, 3>, out_scale = 1.000000e-01 : f32, out_zp = 3.000000e+00 : f32, pad = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
// CHECK-NOT: tessel.depthwise_conv2d_i8 ins
// CHECK: return %[[Y]]
func.func @depthwise(%x: tensor<1x4x3x2xi8>) -> tensor<1x4x3x2xi8> {
  %wp = arith.constant dense<1> : tensor<1x3x16x4xi8>
  %cs = arith.constant dense<9> : tensor<2xi32>
  %e = tensor.empty() : tensor<1x4x3x2xi32>
  %acc = tessel.depthwise_conv2d_i8 ins(%x, %wp : tensor<1x4x3x2xi8>, tensor<1x3x16x4xi8>) column_sums(%cs : tensor<2xi32>)
      outs(%e : tensor<1x4x3x2xi32>) {kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>,
       pad = array<i64: 1, 1, 1, 1>, a_zp = 5 : i32, a_signed} -> tensor<1x4x3x2xi32>
  %acc5 = tensor.expand_shape %acc [[0], [1], [2], [3, 4]] output_shape [1, 4, 3, 2, 1] : tensor<1x4x3x2xi32> into tensor<1x4x3x2x1xi32>
  %acc4 = tensor.collapse_shape %acc5 [[0], [1], [2], [3, 4]] : tensor<1x4x3x2x1xi32> into tensor<1x4x3x2xi32>
  %scale = arith.constant dense<[0.5, 0.25]> : tensor<2xf32>
  %bias = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %s = arith.constant 0.1 : f32
  %zp = arith.constant 3.0 : f32
  %lo = arith.constant 0.0 : f32
  %hi = arith.constant 255.0 : f32
  %six = arith.constant 6.0 : f32
  %eo = tensor.empty() : tensor<1x4x3x2xi8>
  %y = linalg.generic {indexing_maps = [#id4, #ch, #ch, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%acc4, %scale, %bias : tensor<1x4x3x2xi32>, tensor<2xf32>, tensor<2xf32>) outs(%eo : tensor<1x4x3x2xi8>) {
  ^bb0(%a: i32, %sc: f32, %b: f32, %o: i8):
    %f = arith.sitofp %a : i32 to f32
    %m = arith.mulf %f, %sc : f32
    %ab = arith.addf %m, %b : f32
    %r6 = arith.minimumf %ab, %six : f32
    %r0 = arith.maximumf %r6, %lo : f32
    %d = arith.divf %r0, %s : f32
    %r = math.roundeven %d : f32
    %z = arith.addf %r, %zp : f32
    %c1 = arith.minimumf %z, %hi : f32
    %c2 = arith.maximumf %c1, %lo : f32
    %i = arith.fptosi %c2 : f32 to i32
    %t = arith.trunci %i : i32 to i8
    linalg.yield %t : i8
  } -> tensor<1x4x3x2xi8>
  return %y : tensor<1x4x3x2xi8>
}

// -----
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d3)>

// The convolution form of the int8 matmul takes its epilogue the same way,
// a column being an output channel, and keeps its window.
// CHECK-LABEL: func @convolution
// CHECK-NOT: linalg.generic
// CHECK: %[[Y:.*]] = tessel.packed_matmul_i8_requant ins(%arg0, %{{.*}} : tensor<1x9x9x8xi8>, tensor<1x18x64x4xi8>) scale(%{{.*}} : tensor<16xf32>) outs(%{{.*}} : tensor<1x4x4x16xi8>)
// CHECK-SAME: dilations = array<i64: 1, 1>, kernel_size = array<i64: 3, 3>
// CHECK-SAME: strides = array<i64: 2, 2>
// CHECK: return %[[Y]]
func.func @convolution(%x: tensor<1x9x9x8xi8>) -> tensor<1x4x4x16xi8> {
  %wp = arith.constant dense<1> : tensor<1x18x64x4xi8>
  %e = tensor.empty() : tensor<1x4x4x16xi32>
  %acc = tessel.packed_matmul_i8 ins(%x, %wp : tensor<1x9x9x8xi8>, tensor<1x18x64x4xi8>) outs(%e : tensor<1x4x4x16xi32>)
      {a_signed, a_zp = -128 : i32, b_zp = 0 : i32, kernel_size = array<i64: 3, 3>,
       strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>} -> tensor<1x4x4x16xi32>
  %scale = arith.constant dense<0.5> : tensor<16xf32>
  %s = arith.constant 0.1 : f32
  %lo = arith.constant 0.0 : f32
  %hi = arith.constant 255.0 : f32
  %eo = tensor.empty() : tensor<1x4x4x16xi8>
  %y = linalg.generic {indexing_maps = [#id4, #ch, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%acc, %scale : tensor<1x4x4x16xi32>, tensor<16xf32>) outs(%eo : tensor<1x4x4x16xi8>) {
  ^bb0(%a: i32, %sc: f32, %o: i8):
    %f = arith.sitofp %a : i32 to f32
    %m = arith.mulf %f, %sc : f32
    %d = arith.divf %m, %s : f32
    %r = math.roundeven %d : f32
    %c1 = arith.minimumf %r, %hi : f32
    %c2 = arith.maximumf %c1, %lo : f32
    %i = arith.fptosi %c2 : f32 to i32
    %t = arith.trunci %i : i32 to i8
    linalg.yield %t : i8
  } -> tensor<1x4x4x16xi8>
  return %y : tensor<1x4x4x16xi8>
}
