// RUN: tessel-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(tessel-gpu-parallel-loops-first))" | FileCheck %s

// ResNet's global average pool over NHWC: parallel n, reduction h,
// parallel c. The parallel loops move outside (n, c, h), the maps follow.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func @pool
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK: arith.addf
func.func @pool(%x: memref<2x49x512xf32>, %y: memref<2x512xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>],
                  iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x : memref<2x49x512xf32>) outs(%y : memref<2x512xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// linalg.index follows the permutation too (the reduction's index is the
// new innermost loop).
// CHECK-LABEL: func @index
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK: linalg.index 1 : index
func.func @index(%x: memref<8x4xf32>, %y: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<8x4xf32>) outs(%y : memref<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 0 : index
    %c = arith.index_cast %i : index to i32
    %f = arith.sitofp %c : i32 to f32
    %m = arith.mulf %in, %f : f32
    %s = arith.addf %m, %out : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Already in order (a row reduction), and a matmul whose reduction loop is
// in the middle as written: both left as they are (the matmul is
// tessel-gpu-tile-matmul's).
// CHECK-DAG: #[[MK:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func @left_alone
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK: linalg.generic {indexing_maps = [#[[MK]], {{.*}}], iterator_types = ["parallel", "reduction", "parallel"]}
func.func @left_alone(%x: memref<8x4xf32>, %y: memref<8xf32>,
                      %a: memref<8x4xf32>, %b: memref<4x16xf32>, %c: memref<8x16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x4xf32>) outs(%y : memref<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>],
                  iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<8x4xf32>, memref<4x16xf32>) outs(%c : memref<8x16xf32>) {
  ^bb0(%p: f32, %q: f32, %out: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %out, %m : f32
    linalg.yield %s : f32
  }
  return
}
