// RUN: tessel-opt %s -split-input-file -tessel-fuse-elementwise | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0, 0)>
#red = affine_map<(d0, d1) -> (d0)>

// A per-row rsqrt read by every element of its row stays its own loop
// (one rsqrt per row); the cheap add before it fuses into it.
// CHECK-LABEL: func @costly_broadcast_producer
// CHECK: %[[R:.*]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel"]
// CHECK-SAME: ins(%arg1 : tensor<8x1xf32>)
// CHECK: arith.addf
// CHECK: math.rsqrt
// CHECK: linalg.generic
// CHECK-SAME: ins(%arg0, %[[R]] : tensor<8x64xf32>, tensor<8x1xf32>)
// CHECK-NOT: math.rsqrt
// CHECK: arith.mulf
func.func @costly_broadcast_producer(%x: tensor<8x64xf32>, %var: tensor<8x1xf32>) -> tensor<8x64xf32> {
  %eps = arith.constant 1.0e-5 : f32
  %e1 = tensor.empty() : tensor<8x1xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%var : tensor<8x1xf32>) outs(%e1 : tensor<8x1xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = arith.addf %v, %eps : f32
    linalg.yield %s : f32
  } -> tensor<8x1xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<8x1xf32>) outs(%e1 : tensor<8x1xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = math.rsqrt %v : f32
    linalg.yield %s : f32
  } -> tensor<8x1xf32>
  %e = tensor.empty() : tensor<8x64xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %r : tensor<8x64xf32>, tensor<8x1xf32>) outs(%e : tensor<8x64xf32>) {
  ^bb0(%a0: f32, %b0: f32, %o: f32):
    %m = arith.mulf %a0, %b0 : f32
    linalg.yield %m : f32
  } -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// A cheap broadcast producer (a bias add) still fuses: one loop.
// CHECK-LABEL: func @cheap_broadcast_producer
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK: arith.mulf
// CHECK-NOT: linalg.generic
func.func @cheap_broadcast_producer(%x: tensor<8x64xf32>, %b: tensor<64xf32>, %c: tensor<64xf32>) -> tensor<8x64xf32> {
  %e1 = tensor.empty() : tensor<64xf32>
  %bc = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%b, %c : tensor<64xf32>, tensor<64xf32>) outs(%e1 : tensor<64xf32>) {
  ^bb0(%v: f32, %w: f32, %o: f32):
    %s = arith.addf %v, %w : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %e = tensor.empty() : tensor<8x64xf32>
  %y = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %bc : tensor<8x64xf32>, tensor<64xf32>) outs(%e : tensor<8x64xf32>) {
  ^bb0(%a0: f32, %b0: f32, %o: f32):
    %m = arith.mulf %a0, %b0 : f32
    linalg.yield %m : f32
  } -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// Same iteration space: a costly producer (SiLU's exp) fuses as upstream
// does.
// CHECK-LABEL: func @costly_same_shape
// CHECK: linalg.generic
// CHECK: math.exp
// CHECK: arith.mulf
// CHECK-NOT: linalg.generic
func.func @costly_same_shape(%x: tensor<8x64xf32>, %z: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %e = tensor.empty() : tensor<8x64xf32>
  %ex = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x64xf32>) outs(%e : tensor<8x64xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = math.exp %v : f32
    linalg.yield %s : f32
  } -> tensor<8x64xf32>
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%ex, %z : tensor<8x64xf32>, tensor<8x64xf32>) outs(%e : tensor<8x64xf32>) {
  ^bb0(%a0: f32, %b0: f32, %o: f32):
    %m = arith.mulf %a0, %b0 : f32
    linalg.yield %m : f32
  } -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch4 = affine_map<(d0, d1, d2, d3) -> (d0, 0, 0, d3)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#ch3 = affine_map<(d0, d1, d2) -> (d0, 0, d2)>

// Per-channel constants read through a broadcast of their unit dims (as
// tosa-to-linalg writes them) are read as 1-D constants, so the scale on
// one side of an expand_shape and the bias on the other fuse into one loop.
// CHECK-DAG: #[[CH:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3)>
// CHECK-LABEL: func @unit_broadcast_constants
// CHECK-DAG: %[[S:.*]] = arith.constant dense<{{\[\[}}5.000000e-01, 2.500000e-01, 1.250000e-01, 6.250000e-02]]> : tensor<1x4xf32>
// CHECK-DAG: %[[B:.*]] = arith.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]]> : tensor<1x4xf32>
// CHECK: linalg.generic
// CHECK-SAME: indexing_maps = [#{{.*}}, #[[CH]], #[[CH]], #{{.*}}]
// CHECK-SAME: ins(%{{.*}}, %[[S]], %[[B]] : tensor<1x2x3x4xi32>, tensor<1x4xf32>, tensor<1x4xf32>)
// CHECK: arith.sitofp
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK-NOT: linalg.generic
func.func @unit_broadcast_constants(%x: tensor<1x6x4xi32>) -> tensor<1x2x3x4xf32> {
  %s = arith.constant dense<[[[0.5, 0.25, 0.125, 0.0625]]]> : tensor<1x1x4xf32>
  %b = arith.constant dense<[[[[1.0, 2.0, 3.0, 4.0]]]]> : tensor<1x1x1x4xf32>
  %e3 = tensor.empty() : tensor<1x6x4xf32>
  %d = linalg.generic {indexing_maps = [#id3, #ch3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %s : tensor<1x6x4xi32>, tensor<1x1x4xf32>) outs(%e3 : tensor<1x6x4xf32>) {
  ^bb0(%v: i32, %sc: f32, %o: f32):
    %f = arith.sitofp %v : i32 to f32
    %m = arith.mulf %f, %sc : f32
    linalg.yield %m : f32
  } -> tensor<1x6x4xf32>
  %r = tensor.expand_shape %d [[0], [1, 2], [3]] output_shape [1, 2, 3, 4] : tensor<1x6x4xf32> into tensor<1x2x3x4xf32>
  %e4 = tensor.empty() : tensor<1x2x3x4xf32>
  %y = linalg.generic {indexing_maps = [#id4, #ch4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%r, %b : tensor<1x2x3x4xf32>, tensor<1x1x1x4xf32>) outs(%e4 : tensor<1x2x3x4xf32>) {
  ^bb0(%v: f32, %bb: f32, %o: f32):
    %a = arith.addf %v, %bb : f32
    linalg.yield %a : f32
  } -> tensor<1x2x3x4xf32>
  return %y : tensor<1x2x3x4xf32>
}

// -----

// A splat input (what reshape propagation makes of the fill that
// tessel-splats-to-fills makes of a large splat constant: a generic
// without inputs yielding the value, behind a collapse_shape) is read as
// its scalar: the body divides by the constant and the buffer is gone.
// CHECK-LABEL: func.func @splat_input_as_scalar
// CHECK-SAME: (%[[X:.*]]: tensor<64x64xf32>)
// CHECK-DAG: %[[C:.*]] = arith.constant 1.41421354 : f32
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[X]] : tensor<64x64xf32>)
// CHECK: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK: arith.divf %[[IN]], %[[C]] : f32
func.func @splat_input_as_scalar(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %c = arith.constant 1.41421354 : f32
  %e = tensor.empty() : tensor<1x64x1x64xf32>
  %f = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%e : tensor<1x64x1x64xf32>) {
  ^bb0(%out: f32):
    linalg.yield %c : f32
  } -> tensor<1x64x1x64xf32>
  %s = tensor.collapse_shape %f [[0, 1], [2, 3]] : tensor<1x64x1x64xf32> into tensor<64x64xf32>
  %o = tensor.empty() : tensor<64x64xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %s : tensor<64x64xf32>, tensor<64x64xf32>) outs(%o : tensor<64x64xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %d = arith.divf %a, %b : f32
    linalg.yield %d : f32
  } -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

// An input that varies is not a splat: it stays an input.
// CHECK-LABEL: func.func @varying_input_stays
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<64x64xf32>, tensor<64x64xf32>)
func.func @varying_input_stays(%x: tensor<64x64xf32>, %y: tensor<4096xf32>) -> tensor<64x64xf32> {
  %s = tensor.expand_shape %y [[0, 1]] output_shape [64, 64] : tensor<4096xf32> into tensor<64x64xf32>
  %o = tensor.empty() : tensor<64x64xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %s : tensor<64x64xf32>, tensor<64x64xf32>) outs(%o : tensor<64x64xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %d = arith.divf %a, %b : f32
    linalg.yield %d : f32
  } -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}
