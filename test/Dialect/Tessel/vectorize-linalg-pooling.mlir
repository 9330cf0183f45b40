// RUN: tessel-opt %s -split-input-file --tessel-vectorize-linalg | FileCheck %s

// A 3x3 stride-2 max pool (ShuffleNet's, ResNet's) reads its input through
// an N x OH x KH x OW x KW x C view (strides: 112*24, 2*112*24, 112*24,
// 2*24, 24, 1; the windows overlap, nothing is copied) and becomes a
// reduction over (kh, kw) with the channels in vectors: one parallel loop
// over the output pixels; the window (9 rows, max: order-free) whole in
// each tile: its rows loaded, the output row read once, the pooling's own
// maximumf as a tree (depth 4 for 10 leaves, not a chain of 9), one store.
// CHECK-LABEL: func.func @max_pool(
// CHECK-SAME: %[[X:.*]]: memref<1x113x113x24xf32>, %[[W:.*]]: memref<3x3xf32>, %[[Y:.*]]: memref<1x56x56x24xf32>)
// CHECK: %[[V:.*]] = memref.reinterpret_cast %[[X]] to offset: [0], sizes: [1, 56, 3, 56, 3, 24], strides: [306456, 5424, 2712, 48, 24, 1]
// CHECK: scf.parallel (%[[H:.*]], %[[WO:.*]]) =
// CHECK-NOT: scf.for
// CHECK: %[[WIN:.*]] = memref.subview %[[V]][0, %[[H]], 0, %[[WO]], 0, 0] [1, 1, 3, 1, 3, 24]
// CHECK-COUNT-9: vector.load %[[WIN]]{{.*}} vector<24xf32>
// CHECK: %[[ACC:.*]] = vector.load {{.*}} vector<24xf32>
// CHECK: %[[M0:.*]] = arith.maximumf %[[ACC]], %{{.*}} : vector<24xf32>
// CHECK: %[[M1:.*]] = arith.maximumf %{{.*}}, %{{.*}} : vector<24xf32>
// CHECK: %[[M2:.*]] = arith.maximumf %{{.*}}, %{{.*}} : vector<24xf32>
// CHECK: %[[M3:.*]] = arith.maximumf %{{.*}}, %{{.*}} : vector<24xf32>
// CHECK: %[[M4:.*]] = arith.maximumf %{{.*}}, %{{.*}} : vector<24xf32>
// CHECK: %[[M5:.*]] = arith.maximumf %[[M0]], %[[M1]] : vector<24xf32>
// CHECK: %[[M6:.*]] = arith.maximumf %[[M2]], %[[M3]] : vector<24xf32>
// CHECK: %[[M7:.*]] = arith.maximumf %[[M5]], %[[M6]] : vector<24xf32>
// CHECK: %[[M8:.*]] = arith.maximumf %[[M7]], %[[M4]] : vector<24xf32>
// CHECK-NOT: arith.maximumf
// CHECK: vector.store %[[M8]]
// CHECK-NOT: linalg.pooling_nhwc_max
func.func @max_pool(%x: memref<1x113x113x24xf32>, %w: memref<3x3xf32>, %y: memref<1x56x56x24xf32>) {
  linalg.pooling_nhwc_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%x, %w : memref<1x113x113x24xf32>, memref<3x3xf32>) outs(%y : memref<1x56x56x24xf32>)
  return
}

// -----

// A sum pool (average pooling's first half) with dilation 2 and stride 1
// on a strided input (a subview of a larger buffer: offset 64, row stride
// 640): the view keeps the offset and multiplies the strides. Its sum is
// not marked reassociable, so the window stays loops in the graph's order.
// CHECK-LABEL: func.func @sum_pool_dilated(
// CHECK: memref.reinterpret_cast %{{.*}} to offset: [64], sizes: [2, 6, 2, 6, 2, 32], strides: [6400, 640, 1280, 64, 128, 1]
// CHECK: scf.parallel
// CHECK: scf.for
// CHECK: scf.for
// CHECK: arith.addf {{.*}} : vector<32xf32>
// CHECK-NOT: linalg.pooling_nhwc_sum
func.func @sum_pool_dilated(%big: memref<2x10x10x64xf32>, %w: memref<2x2xf32>, %y: memref<2x6x6x32xf32>) {
  %x = memref.subview %big[0, 0, 1, 0] [2, 8, 8, 32] [1, 1, 1, 1] : memref<2x10x10x64xf32> to memref<2x8x8x32xf32, strided<[6400, 640, 64, 1], offset: 64>>
  linalg.pooling_nhwc_sum {dilations = dense<2> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%x, %w : memref<2x8x8x32xf32, strided<[6400, 640, 64, 1], offset: 64>>, memref<2x2xf32>) outs(%y : memref<2x6x6x32xf32>)
  return
}

// -----

// A 5x5 max pool of 128 channels: 25 window rows of 2 registers (the
// tile's 32 channels) pass the 32-register bound, so the window stays
// loops around the tile.
// CHECK-LABEL: func.func @max_pool_large_window(
// CHECK: scf.parallel
// CHECK: scf.for
// CHECK: scf.for
// CHECK: arith.maximumf {{.*}} : vector<32xf32>
func.func @max_pool_large_window(%x: memref<1x12x12x128xf32>, %w: memref<5x5xf32>, %y: memref<1x8x8x128xf32>) {
  linalg.pooling_nhwc_max {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%x, %w : memref<1x12x12x128xf32>, memref<5x5xf32>) outs(%y : memref<1x8x8x128xf32>)
  return
}

// -----

// Pooling on tensors is left alone (the rewrite needs buffers and their
// strides), as is a buffer whose layout is not statically strided.
// CHECK-LABEL: func.func @not_rewritten(
// CHECK: linalg.pooling_nhwc_max
// CHECK: linalg.pooling_nhwc_max
// CHECK-NOT: memref.reinterpret_cast
func.func @not_rewritten(%t: tensor<1x5x5x16xf32>, %wt: tensor<3x3xf32>, %it: tensor<1x3x3x16xf32>,
                         %x: memref<1x5x5x16xf32, strided<[?, ?, 16, 1], offset: ?>>, %w: memref<3x3xf32>, %y: memref<1x3x3x16xf32>) -> tensor<1x3x3x16xf32> {
  %r = linalg.pooling_nhwc_max {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%t, %wt : tensor<1x5x5x16xf32>, tensor<3x3xf32>) outs(%it : tensor<1x3x3x16xf32>) -> tensor<1x3x3x16xf32>
  linalg.pooling_nhwc_max {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%x, %w : memref<1x5x5x16xf32, strided<[?, ?, 16, 1], offset: ?>>, memref<3x3xf32>) outs(%y : memref<1x3x3x16xf32>)
  return %r : tensor<1x3x3x16xf32>
}

// -----

// A sum over an outer dimension that tessel-reassociate-reductions marked
// (fastmath<reassoc>) takes its 4 rows whole in the tile too: no loop, the
// output row read and written once.
// CHECK-LABEL: func.func @reassociated_sum_rows(
// CHECK: scf.parallel
// CHECK-NOT: scf.for
// CHECK-COUNT-4: vector.load %{{.*}}, vector<32xf32>
// CHECK-COUNT-4: arith.addf {{.*}} : vector<32xf32>
// CHECK: vector.store
#rows = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @reassociated_sum_rows(%x: memref<4x64xf32>, %y: memref<64xf32>) {
  linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<4x64xf32>) outs(%y : memref<64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc fastmath<reassoc> : f32
    linalg.yield %s : f32
  }
  return
}
