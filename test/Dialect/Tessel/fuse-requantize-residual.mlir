// RUN: tessel-opt %s -split-input-file -tessel-fuse-requantize=residual=true | FileCheck %s
// RUN: tessel-opt %s -split-input-file -tessel-fuse-requantize=residual=false | FileCheck %s --check-prefix=OFF
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#col = affine_map<(d0, d1, d2) -> (d2)>

// A QDQ residual block's last layer: dequantize, quantize and dequantize
// (the Q/DQ pair of its output), add the shortcut, ReLU. The add and the
// ReLU become the epilogue's residual and its clamp.
// CHECK-LABEL: func @dequant_residual_relu
// CHECK-NOT: linalg.generic
// CHECK: %[[Y:.*]] = tessel.packed_matmul_i8_requant ins(%arg0, %{{.*}}) scale(%{{.*}} : tensor<16xf32>) residual(%arg1 : tensor<1x4x16xf32>) outs(%{{.*}} : tensor<1x4x16xf32>)
// CHECK-SAME: dequant_scale = 1.000000e-01 : f32, dequant_zp = 3.000000e+00 : f32
// CHECK-SAME: out_scale = 1.000000e-01 : f32, out_zp = 3.000000e+00 : f32
// CHECK-SAME: residual_max = 3.40282347E+38 : f32, residual_min = 0.000000e+00 : f32
// CHECK: return %[[Y]]
// OFF-LABEL: func @dequant_residual_relu
// OFF: tessel.packed_matmul_i8 ins
// OFF: linalg.generic
func.func @dequant_residual_relu(%x: tensor<1x4x8xi8>, %r: tensor<1x4x16xf32>) -> tensor<1x4x16xf32> {
  %wp = arith.constant dense<1> : tensor<1x2x64x4xi8>
  %e = tensor.empty() : tensor<1x4x16xi32>
  %acc = tessel.packed_matmul_i8 ins(%x, %wp : tensor<1x4x8xi8>, tensor<1x2x64x4xi8>) outs(%e : tensor<1x4x16xi32>) {a_signed, a_zp = -128 : i32, b_zp = 0 : i32} -> tensor<1x4x16xi32>
  %scale = arith.constant dense<0.5> : tensor<16xf32>
  %s = arith.constant 0.1 : f32
  %zp = arith.constant 3.0 : f32
  %lo = arith.constant 0.0 : f32
  %hi = arith.constant 255.0 : f32
  %max = arith.constant 3.40282347E+38 : f32
  %eo = tensor.empty() : tensor<1x4x16xf32>
  %y = linalg.generic {indexing_maps = [#id, #col, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%acc, %scale, %r : tensor<1x4x16xi32>, tensor<16xf32>, tensor<1x4x16xf32>) outs(%eo : tensor<1x4x16xf32>) {
  ^bb0(%a: i32, %sc: f32, %res: f32, %o: f32):
    %f = arith.sitofp %a : i32 to f32
    %m = arith.mulf %f, %sc : f32
    %d = arith.divf %m, %s : f32
    %q = math.roundeven %d : f32
    %z = arith.addf %q, %zp : f32
    %c1 = arith.minimumf %z, %hi : f32
    %c2 = arith.maximumf %c1, %lo : f32
    %i = arith.fptosi %c2 : f32 to i32
    %t = arith.trunci %i : i32 to i8
    %u = arith.uitofp %t : i8 to f32
    %uz = arith.subf %u, %zp : f32
    %dq = arith.mulf %uz, %s : f32
    %sum = arith.addf %dq, %res : f32
    %r1 = arith.minimumf %sum, %max : f32
    %r2 = arith.maximumf %r1, %lo : f32
    linalg.yield %r2 : f32
  } -> tensor<1x4x16xf32>
  return %y : tensor<1x4x16xf32>
}

// -----
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#col = affine_map<(d0, d1, d2) -> (d2)>

// An f32 epilogue (no quantization) plus the residual, no clamp.
// CHECK-LABEL: func @f32_residual
// CHECK-NOT: linalg.generic
// CHECK: tessel.packed_matmul_i8_requant {{.*}} residual(%arg1 : tensor<1x4x16xf32>)
// CHECK-NOT: residual_min
func.func @f32_residual(%x: tensor<1x4x8xi8>, %r: tensor<1x4x16xf32>) -> tensor<1x4x16xf32> {
  %wp = arith.constant dense<1> : tensor<1x2x64x4xi8>
  %e = tensor.empty() : tensor<1x4x16xi32>
  %acc = tessel.packed_matmul_i8 ins(%x, %wp : tensor<1x4x8xi8>, tensor<1x2x64x4xi8>) outs(%e : tensor<1x4x16xi32>) {a_signed, a_zp = -128 : i32, b_zp = 0 : i32} -> tensor<1x4x16xi32>
  %scale = arith.constant dense<0.5> : tensor<16xf32>
  %eo = tensor.empty() : tensor<1x4x16xf32>
  %y = linalg.generic {indexing_maps = [#id, #col, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%acc, %scale, %r : tensor<1x4x16xi32>, tensor<16xf32>, tensor<1x4x16xf32>) outs(%eo : tensor<1x4x16xf32>) {
  ^bb0(%a: i32, %sc: f32, %res: f32, %o: f32):
    %f = arith.sitofp %a : i32 to f32
    %m = arith.mulf %f, %sc : f32
    %ab = arith.addf %m, %res : f32
    linalg.yield %ab : f32
  } -> tensor<1x4x16xf32>
  return %y : tensor<1x4x16xf32>
}

// -----
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#col = affine_map<(d0, d1, d2) -> (d2)>

// After the add comes something other than a clamp: the generic is split
// after the add, whose sum the kernel's epilogue computes (residual); the
// rest is a generic reading that sum, without the int32 operand.
// CHECK-LABEL: func @residual_then_multiply
// CHECK-NOT: tessel.packed_matmul_i8 ins
// CHECK: %[[SUM:.*]] = tessel.packed_matmul_i8_requant {{.*}} residual(%arg1 : tensor<1x4x16xf32>) outs(%{{.*}} : tensor<1x4x16xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[SUM]] : tensor<1x4x16xf32>)
// CHECK-NEXT: ^bb0(%[[V:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[SQ:.*]] = arith.mulf %[[V]], %[[V]] : f32
// CHECK-NEXT: linalg.yield %[[SQ]]
// OFF-LABEL: func @residual_then_multiply
// OFF: tessel.packed_matmul_i8 ins
// OFF: linalg.generic
func.func @residual_then_multiply(%x: tensor<1x4x8xi8>, %r: tensor<1x4x16xf32>) -> tensor<1x4x16xf32> {
  %wp = arith.constant dense<1> : tensor<1x2x64x4xi8>
  %e = tensor.empty() : tensor<1x4x16xi32>
  %acc = tessel.packed_matmul_i8 ins(%x, %wp : tensor<1x4x8xi8>, tensor<1x2x64x4xi8>) outs(%e : tensor<1x4x16xi32>) {a_signed, a_zp = -128 : i32, b_zp = 0 : i32} -> tensor<1x4x16xi32>
  %scale = arith.constant dense<0.5> : tensor<16xf32>
  %eo = tensor.empty() : tensor<1x4x16xf32>
  %y = linalg.generic {indexing_maps = [#id, #col, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%acc, %scale, %r : tensor<1x4x16xi32>, tensor<16xf32>, tensor<1x4x16xf32>) outs(%eo : tensor<1x4x16xf32>) {
  ^bb0(%a: i32, %sc: f32, %res: f32, %o: f32):
    %f = arith.sitofp %a : i32 to f32
    %m = arith.mulf %f, %sc : f32
    %ab = arith.addf %m, %res : f32
    %sq = arith.mulf %ab, %ab : f32
    linalg.yield %sq : f32
  } -> tensor<1x4x16xf32>
  return %y : tensor<1x4x16xf32>
}

// -----
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#col = affine_map<(d0, d1, d2) -> (d2)>

// Two kernels added (a projection shortcut): the second kernel's chain is
// split off into its own epilogue (f32), which the first kernel's epilogue
// reads as its residual.
// CHECK-LABEL: func @two_kernels_split
// CHECK-DAG: %[[S1:.*]] = arith.constant dense<5.000000e-01> : tensor<16xf32>
// CHECK-DAG: %[[S2:.*]] = arith.constant dense<2.500000e-01> : tensor<16xf32>
// CHECK: %[[SHORT:.*]] = tessel.packed_matmul_i8_requant ins(%arg1, %{{.*}}) scale(%[[S2]] : tensor<16xf32>) outs(%{{.*}} : tensor<1x4x16xf32>)
// CHECK: %[[Y:.*]] = tessel.packed_matmul_i8_requant ins(%arg0, %{{.*}}) scale(%[[S1]] : tensor<16xf32>) residual(%[[SHORT]] : tensor<1x4x16xf32>)
// CHECK-SAME: residual_min = 0.000000e+00
// CHECK-NOT: linalg.generic
// CHECK: return %[[Y]]
// OFF-LABEL: func @two_kernels_split
// OFF-COUNT-2: tessel.packed_matmul_i8 ins
// OFF: linalg.generic
func.func @two_kernels_split(%x: tensor<1x4x8xi8>, %x2: tensor<1x4x8xi8>) -> tensor<1x4x16xf32> {
  %wp = arith.constant dense<1> : tensor<1x2x64x4xi8>
  %wp2 = arith.constant dense<2> : tensor<1x2x64x4xi8>
  %e = tensor.empty() : tensor<1x4x16xi32>
  %acc = tessel.packed_matmul_i8 ins(%x, %wp : tensor<1x4x8xi8>, tensor<1x2x64x4xi8>) outs(%e : tensor<1x4x16xi32>) {a_signed, a_zp = -128 : i32, b_zp = 0 : i32} -> tensor<1x4x16xi32>
  %e2 = tensor.empty() : tensor<1x4x16xi32>
  %acc2 = tessel.packed_matmul_i8 ins(%x2, %wp2 : tensor<1x4x8xi8>, tensor<1x2x64x4xi8>) outs(%e2 : tensor<1x4x16xi32>) {a_signed, a_zp = -128 : i32, b_zp = 0 : i32} -> tensor<1x4x16xi32>
  %scale = arith.constant dense<0.5> : tensor<16xf32>
  %scale2 = arith.constant dense<0.25> : tensor<16xf32>
  %zero = arith.constant 0.0 : f32
  %eo = tensor.empty() : tensor<1x4x16xf32>
  %y = linalg.generic {indexing_maps = [#id, #col, #id, #col, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%acc, %scale, %acc2, %scale2 : tensor<1x4x16xi32>, tensor<16xf32>, tensor<1x4x16xi32>, tensor<16xf32>) outs(%eo : tensor<1x4x16xf32>) {
  ^bb0(%a: i32, %sc: f32, %a2: i32, %sc2: f32, %o: f32):
    %f2 = arith.sitofp %a2 : i32 to f32
    %m2 = arith.mulf %f2, %sc2 : f32
    %f = arith.sitofp %a : i32 to f32
    %m = arith.mulf %f, %sc : f32
    %sum = arith.addf %m, %m2 : f32
    %relu = arith.maximumf %sum, %zero : f32
    linalg.yield %relu : f32
  } -> tensor<1x4x16xf32>
  return %y : tensor<1x4x16xf32>
}

// -----
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#col = affine_map<(d0, d1, d2) -> (d2)>

// The last block of a ResNet stage: the add and ReLU, then the quantize of
// the next stage's input (clamps first, which join the ReLU's). Split after
// the clamps: the epilogue's residual clamp is their intersection, and the
// quantize is a loop over the f32 sum.
// CHECK-LABEL: func @residual_then_quantize
// CHECK: %[[SUM:.*]] = tessel.packed_matmul_i8_requant {{.*}} residual(%arg1 : tensor<1x4x16xf32>) outs(%{{.*}} : tensor<1x4x16xf32>)
// CHECK-SAME: residual_max = 2.500000e+01 : f32, residual_min = 0.000000e+00 : f32
// CHECK: linalg.generic {{.*}} ins(%[[SUM]] : tensor<1x4x16xf32>) outs(%{{.*}} : tensor<1x4x16xi8>)
// CHECK: arith.mulf
// CHECK: math.roundeven
// CHECK: arith.fptosi
// CHECK-NOT: arith.addf
// CHECK: linalg.yield
func.func @residual_then_quantize(%x: tensor<1x4x8xi8>, %r: tensor<1x4x16xf32>) -> tensor<1x4x16xi8> {
  %wp = arith.constant dense<1> : tensor<1x2x64x4xi8>
  %e = tensor.empty() : tensor<1x4x16xi32>
  %acc = tessel.packed_matmul_i8 ins(%x, %wp : tensor<1x4x8xi8>, tensor<1x2x64x4xi8>) outs(%e : tensor<1x4x16xi32>) {a_signed, a_zp = -128 : i32, b_zp = 0 : i32} -> tensor<1x4x16xi32>
  %scale = arith.constant dense<0.5> : tensor<16xf32>
  %zero = arith.constant 0.0 : f32
  %big = arith.constant 3.0e+38 : f32
  %hi2 = arith.constant 25.0 : f32
  %lo2 = arith.constant -25.0 : f32
  %inv = arith.constant 10.0 : f32
  %qlo = arith.constant 0.0 : f32
  %qhi = arith.constant 255.0 : f32
  %eo = tensor.empty() : tensor<1x4x16xi8>
  %y = linalg.generic {indexing_maps = [#id, #col, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%acc, %scale, %r : tensor<1x4x16xi32>, tensor<16xf32>, tensor<1x4x16xf32>) outs(%eo : tensor<1x4x16xi8>) {
  ^bb0(%a: i32, %sc: f32, %res: f32, %o: i8):
    %f = arith.sitofp %a : i32 to f32
    %m = arith.mulf %f, %sc : f32
    %sum = arith.addf %m, %res : f32
    %r1 = arith.minimumf %sum, %big : f32
    %r2 = arith.maximumf %r1, %zero : f32
    %c1 = arith.minimumf %r2, %hi2 : f32
    %c2 = arith.maximumf %c1, %lo2 : f32
    %d = arith.mulf %c2, %inv : f32
    %q = math.roundeven %d : f32
    %q1 = arith.minimumf %q, %qhi : f32
    %q2 = arith.maximumf %q1, %qlo : f32
    %i = arith.fptosi %q2 : f32 to i32
    %t = arith.trunci %i : i32 to i8
    linalg.yield %t : i8
  } -> tensor<1x4x16xi8>
  return %y : tensor<1x4x16xi8>
}

// -----
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#col = affine_map<(d0, d1, d2) -> (d2)>

// The tail reads a value of the head other than the sum (here the product
// before the add): no split, both ops stay.
// CHECK-LABEL: func @tail_reads_head
// CHECK: tessel.packed_matmul_i8 ins
// CHECK: linalg.generic
// CHECK-NOT: packed_matmul_i8_requant
func.func @tail_reads_head(%x: tensor<1x4x8xi8>, %r: tensor<1x4x16xf32>) -> tensor<1x4x16xf32> {
  %wp = arith.constant dense<1> : tensor<1x2x64x4xi8>
  %e = tensor.empty() : tensor<1x4x16xi32>
  %acc = tessel.packed_matmul_i8 ins(%x, %wp : tensor<1x4x8xi8>, tensor<1x2x64x4xi8>) outs(%e : tensor<1x4x16xi32>) {a_signed, a_zp = -128 : i32, b_zp = 0 : i32} -> tensor<1x4x16xi32>
  %scale = arith.constant dense<0.5> : tensor<16xf32>
  %eo = tensor.empty() : tensor<1x4x16xf32>
  %y = linalg.generic {indexing_maps = [#id, #col, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%acc, %scale, %r : tensor<1x4x16xi32>, tensor<16xf32>, tensor<1x4x16xf32>) outs(%eo : tensor<1x4x16xf32>) {
  ^bb0(%a: i32, %sc: f32, %res: f32, %o: f32):
    %f = arith.sitofp %a : i32 to f32
    %m = arith.mulf %f, %sc : f32
    %ab = arith.addf %m, %res : f32
    %p = arith.mulf %ab, %m : f32
    linalg.yield %p : f32
  } -> tensor<1x4x16xf32>
  return %y : tensor<1x4x16xf32>
}
