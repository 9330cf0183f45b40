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

// -----

// A resize along the last axis: two gathers of the source's columns at
// constant index lists, each collapsed and expanded to the output's shape,
// weighted and summed. The consumer computes both gathers in its body: its
// indices go back through the expand_shape (d1 * 3 + d2, the unit d0 left
// out) and the collapse_shape (unit dims 0) to the gathers' loops, and
// neither gathered tensor is written.
#g_in = affine_map<(d0, d1, d2, d3, d4) -> (0, d3)>
#g_out = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#c4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#w4 = affine_map<(d0, d1, d2, d3) -> (0, d3)>
// CHECK-LABEL: func @resize_axis_gathers
// CHECK-NOT: tensor.collapse_shape
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.generic
// CHECK-SAME: ins(%arg1, %arg2 : tensor<1x8xf32>, tensor<1x8xf32>)
// CHECK-SAME: outs(%{{.*}} : tensor<1x2x3x8xf32>)
// CHECK: %[[I1:.*]] = linalg.index 1
// CHECK: %[[I2:.*]] = linalg.index 2
// CHECK: %[[I3:.*]] = linalg.index 3
// CHECK: %[[ROW0:.*]] = arith.muli %[[I1]], %c3
// CHECK: %[[ROW:.*]] = arith.addi %[[ROW0]], %[[I2]]
// CHECK: %[[K:.*]] = tensor.extract %{{.*}}[%[[I3]]] : tensor<8xi32>
// CHECK: %[[KI:.*]] = arith.index_cast %[[K]]
// CHECK: tensor.extract %arg0[%[[ROW]], %[[KI]]] : tensor<6x4xf32>
// CHECK: tensor.extract %arg0
// CHECK: arith.mulf
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK-NOT: linalg.generic
func.func @resize_axis_gathers(%src: tensor<6x4xf32>, %w0: tensor<1x8xf32>, %w1: tensor<1x8xf32>) -> tensor<1x2x3x8xf32> {
  %i0 = arith.constant dense<[[0, 0, 1, 1, 2, 2, 3, 3]]> : tensor<1x8xi32>
  %i1 = arith.constant dense<[[0, 1, 1, 2, 2, 3, 3, 3]]> : tensor<1x8xi32>
  %e = tensor.empty() : tensor<6x1x1x8x1xf32>
  %t0 = linalg.generic {indexing_maps = [#g_in, #g_out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%i0 : tensor<1x8xi32>) outs(%e : tensor<6x1x1x8x1xf32>) {
  ^bb0(%k: i32, %o: f32):
    %r = linalg.index 0 : index
    %c = arith.index_cast %k : i32 to index
    %v = tensor.extract %src[%r, %c] : tensor<6x4xf32>
    linalg.yield %v : f32
  } -> tensor<6x1x1x8x1xf32>
  %t1 = linalg.generic {indexing_maps = [#g_in, #g_out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%i1 : tensor<1x8xi32>) outs(%e : tensor<6x1x1x8x1xf32>) {
  ^bb0(%k: i32, %o: f32):
    %r = linalg.index 0 : index
    %c = arith.index_cast %k : i32 to index
    %v = tensor.extract %src[%r, %c] : tensor<6x4xf32>
    linalg.yield %v : f32
  } -> tensor<6x1x1x8x1xf32>
  %c0 = tensor.collapse_shape %t0 [[0, 1, 2], [3, 4]] : tensor<6x1x1x8x1xf32> into tensor<6x8xf32>
  %x0 = tensor.expand_shape %c0 [[0, 1, 2], [3]] output_shape [1, 2, 3, 8] : tensor<6x8xf32> into tensor<1x2x3x8xf32>
  %c1 = tensor.collapse_shape %t1 [[0, 1, 2], [3, 4]] : tensor<6x1x1x8x1xf32> into tensor<6x8xf32>
  %x1 = tensor.expand_shape %c1 [[0, 1, 2], [3]] output_shape [1, 2, 3, 8] : tensor<6x8xf32> into tensor<1x2x3x8xf32>
  %o = tensor.empty() : tensor<1x2x3x8xf32>
  %r = linalg.generic {indexing_maps = [#c4, #w4, #c4, #w4, #c4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x0, %w0, %x1, %w1 : tensor<1x2x3x8xf32>, tensor<1x8xf32>, tensor<1x2x3x8xf32>, tensor<1x8xf32>) outs(%o : tensor<1x2x3x8xf32>) {
  ^bb0(%a: f32, %wa: f32, %b: f32, %wb: f32, %out: f32):
    %p = arith.mulf %a, %wa : f32
    %q = arith.mulf %b, %wb : f32
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<1x2x3x8xf32>
  return %r : tensor<1x2x3x8xf32>
}

// -----

// A collapse_shape that merges two gathered dims: the consumer's index is
// split again, the outer dim by a division, the inner by a remainder.
#g2_in = affine_map<(d0, d1, d2) -> (d2)>
#g2_out = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#c2 = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func @gather_collapsed_dims
// CHECK: linalg.generic
// CHECK-DAG: %[[I0:.*]] = linalg.index 0
// CHECK-DAG: %[[I1:.*]] = linalg.index 1
// CHECK-DAG: %[[Q:.*]] = arith.divui %[[I0]], %c3
// CHECK-DAG: %[[R:.*]] = arith.remui %[[I0]], %c3
// CHECK: %[[K:.*]] = tensor.extract %{{.*}}[%[[I1]]] : tensor<5xi32>
// CHECK: %[[KI:.*]] = arith.index_cast %[[K]]
// CHECK: tensor.extract %arg0[%[[Q]], %[[R]], %[[KI]]] : tensor<2x3x7xf32>
// CHECK: math.absf
// CHECK-NOT: linalg.generic
func.func @gather_collapsed_dims(%src: tensor<2x3x7xf32>) -> tensor<6x5xf32> {
  %idx = arith.constant dense<[6, 0, 3, 3, 1]> : tensor<5xi32>
  %e = tensor.empty() : tensor<2x3x5xf32>
  %t = linalg.generic {indexing_maps = [#g2_in, #g2_out], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%idx : tensor<5xi32>) outs(%e : tensor<2x3x5xf32>) {
  ^bb0(%k: i32, %o: f32):
    %a = linalg.index 0 : index
    %b = linalg.index 1 : index
    %c = arith.index_cast %k : i32 to index
    %v = tensor.extract %src[%a, %b, %c] : tensor<2x3x7xf32>
    linalg.yield %v : f32
  } -> tensor<2x3x5xf32>
  %c = tensor.collapse_shape %t [[0, 1], [2]] : tensor<2x3x5xf32> into tensor<6x5xf32>
  %o = tensor.empty() : tensor<6x5xf32>
  %r = linalg.generic {indexing_maps = [#c2, #c2], iterator_types = ["parallel", "parallel"]}
      ins(%c : tensor<6x5xf32>) outs(%o : tensor<6x5xf32>) {
  ^bb0(%x: f32, %out: f32):
    %y = math.absf %x : f32
    linalg.yield %y : f32
  } -> tensor<6x5xf32>
  return %r : tensor<6x5xf32>
}

// -----

// Not fused: a gather whose reshape is read by two consumers (each would
// compute it again). (Upstream's fusion takes a gather read directly, with
// no reshape between.)
#g3_in = affine_map<(d0, d1, d2) -> (d2)>
#g3_out = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#c3 = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func @gather_read_twice
// CHECK: %[[G:.*]] = linalg.generic
// CHECK: tensor.extract %arg0
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[G]]
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[C]] : tensor<8x3xf32>)
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[C]] : tensor<8x3xf32>)
func.func @gather_read_twice(%src: tensor<2x4x9xf32>) -> (tensor<8x3xf32>, tensor<8x3xf32>) {
  %idx = arith.constant dense<[8, 0, 4]> : tensor<3xi32>
  %e = tensor.empty() : tensor<2x4x3xf32>
  %t = linalg.generic {indexing_maps = [#g3_in, #g3_out], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%idx : tensor<3xi32>) outs(%e : tensor<2x4x3xf32>) {
  ^bb0(%k: i32, %o: f32):
    %a = linalg.index 0 : index
    %b = linalg.index 1 : index
    %c = arith.index_cast %k : i32 to index
    %v = tensor.extract %src[%a, %b, %c] : tensor<2x4x9xf32>
    linalg.yield %v : f32
  } -> tensor<2x4x3xf32>
  %f = tensor.collapse_shape %t [[0, 1], [2]] : tensor<2x4x3xf32> into tensor<8x3xf32>
  %o = tensor.empty() : tensor<8x3xf32>
  %r1 = linalg.generic {indexing_maps = [#c3, #c3], iterator_types = ["parallel", "parallel"]}
      ins(%f : tensor<8x3xf32>) outs(%o : tensor<8x3xf32>) {
  ^bb0(%x: f32, %out: f32):
    %s = math.absf %x : f32
    linalg.yield %s : f32
  } -> tensor<8x3xf32>
  %r2 = linalg.generic {indexing_maps = [#c3, #c3], iterator_types = ["parallel", "parallel"]}
      ins(%f : tensor<8x3xf32>) outs(%o : tensor<8x3xf32>) {
  ^bb0(%x: f32, %out: f32):
    %s = arith.negf %x : f32
    linalg.yield %s : f32
  } -> tensor<8x3xf32>
  return %r1, %r2 : tensor<8x3xf32>, tensor<8x3xf32>
}

// -----

// Not fused: the gather is the consumer's only operand over its reduced
// dim, whose extent would be lost with it (a linalg op's loop ranges come
// from its operands' shapes; an argmax over a reversed axis).
#g4_in = affine_map<(d0, d1) -> (d0)>
#g4_out = affine_map<(d0, d1) -> (d0, d1)>
#r4_in = affine_map<(d0) -> (d0)>
#r4_out = affine_map<(d0) -> ()>
// (Upstream's reshape propagation expands the consumer to 8x1.)
// CHECK-LABEL: func @gather_spans_a_reduced_dim
// CHECK: %[[G:.*]] = linalg.generic
// CHECK: tensor.extract %arg0
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[G]] : tensor<8x1xf32>)
func.func @gather_spans_a_reduced_dim(%src: tensor<8xf32>, %init: tensor<f32>) -> tensor<f32> {
  %idx = arith.constant dense<[7, 6, 5, 4, 3, 2, 1, 0]> : tensor<8xi32>
  %e = tensor.empty() : tensor<8x1xf32>
  %t = linalg.generic {indexing_maps = [#g4_in, #g4_out], iterator_types = ["parallel", "parallel"]}
      ins(%idx : tensor<8xi32>) outs(%e : tensor<8x1xf32>) {
  ^bb0(%k: i32, %o: f32):
    %c = arith.index_cast %k : i32 to index
    %v = tensor.extract %src[%c] : tensor<8xf32>
    linalg.yield %v : f32
  } -> tensor<8x1xf32>
  %f = tensor.collapse_shape %t [[0, 1]] : tensor<8x1xf32> into tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#r4_in, #r4_out], iterator_types = ["reduction"]}
      ins(%f : tensor<8xf32>) outs(%init : tensor<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %m = arith.maximumf %x, %acc : f32
    linalg.yield %m : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}
