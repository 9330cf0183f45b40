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
