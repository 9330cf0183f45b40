// RUN: tessel-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(tessel-gpu-tile-matmul))" | FileCheck %s

// A static batch matmul of enough 128x128 tiles to fill a large GPU (8 x 7
// x 3 = 168): one launch, grid (N/128, M/128, batch), 256 threads, two
// workgroup buffers (A's slice transposed and padded), the k loop carrying
// 64 sums per thread, and no host-level emptiness check.
// CHECK-LABEL: func @batched
// CHECK-NOT: scf.if
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %[[BZ:.*]]) in (%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %[[B:.*]]) threads(%[[TID:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c256,
// CHECK-SAME: workgroup(%[[SA:.*]] : memref<8x132xf32, #gpu.address_space<workgroup>>, %[[SB:.*]] : memref<8x128xf32, #gpu.address_space<workgroup>>)
// The first slice is staged before the loop; in the loop the next slice's
// loads are issued before the products and stored after them (software
// pipelining through registers).
// CHECK: memref.load %arg0[%[[BZ]],
// CHECK: memref.load %arg1[%[[BZ]],
// CHECK: memref.store %{{.*}}, %[[SA]]
// CHECK: memref.store %{{.*}}, %[[SB]]
// CHECK: gpu.barrier
// CHECK: scf.for {{.*}} -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK: memref.load %arg0[%[[BZ]],
// CHECK: memref.load %arg1[%[[BZ]],
// CHECK-COUNT-64: math.fma
// CHECK: gpu.barrier
// CHECK: memref.store %{{.*}}, %[[SA]]
// CHECK: memref.store %{{.*}}, %[[SB]]
// CHECK: gpu.barrier
// CHECK: scf.yield
// CHECK-COUNT-64: memref.store %{{.*}}, %arg2[%[[BZ]],
// CHECK: gpu.terminator
// CHECK-NOT: linalg.batch_matmul
func.func @batched(%a: memref<3x1000x70xf32>, %b: memref<3x70x800xf32>, %c: memref<3x1000x800xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<3x1000x70xf32>, memref<3x70x800xf32>) outs(%c : memref<3x1000x800xf32>)
  return
}

// -----

// Fewer 128x128 tiles than a large GPU has SMs (1 x 3 x 3 = 9): 64x64
// tiles (2 x 5 x 3 = 30 blocks), 4x4 sums per thread, slices of 64 rows
// and columns.
// CHECK-LABEL: func @small
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %[[GX:.*]], %{{.*}} = %[[GY:.*]], %{{.*}} = %{{.*}}) threads(%{{.*}}) in (%{{.*}} = %c256,
// CHECK-SAME: workgroup(%[[SA:.*]] : memref<8x68xf32, #gpu.address_space<workgroup>>, %[[SB:.*]] : memref<8x64xf32, #gpu.address_space<workgroup>>)
// CHECK: scf.for {{.*}} -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK-COUNT-16: math.fma
// CHECK: scf.yield
// CHECK-COUNT-16: memref.store %{{.*}}, %arg2[
// CHECK: gpu.terminator
func.func @small(%a: memref<3x100x70xf32>, %b: memref<3x70x300xf32>, %c: memref<3x100x300xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<3x100x70xf32>, memref<3x70x300xf32>) outs(%c : memref<3x100x300xf32>)
  return
}

// -----

// Dynamic sizes: the launch runs only for a non-empty product.
// CHECK-LABEL: func @dynamic
// CHECK: memref.dim
// CHECK: arith.andi
// CHECK: scf.if
// CHECK: gpu.launch
// CHECK-NOT: linalg.matmul
func.func @dynamic(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  linalg.matmul ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>)
  return
}

// -----

// Not f32: left to the generic loop nests.
// CHECK-LABEL: func @left_alone
// CHECK-NOT: gpu.launch
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : memref<4x8xi32>
func.func @left_alone(%a: memref<4x8xi32>, %b: memref<8x4xi32>, %c: memref<4x4xi32>) {
  linalg.matmul ins(%a, %b : memref<4x8xi32>, memref<8x4xi32>) outs(%c : memref<4x4xi32>)
  return
}

// -----

// Any other contraction: a transposed matmul, and attention's Q·Kᵀ as the
// importer leaves it (a generic with batch dims 0 and 2, M 1, N 3 and 4,
// K 5). The operands are indexed through their maps. Both small (64x64
// tiles).
// CHECK-LABEL: func @contractions
// CHECK: gpu.launch
// CHECK-SAME: workgroup(%{{.*}} : memref<8x68xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<8x64xf32, #gpu.address_space<workgroup>>)
// CHECK: memref.load %arg0[%{{.*}}, %{{.*}}]
// CHECK-COUNT-16: math.fma
// CHECK: gpu.launch
// CHECK: memref.load %arg3[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<4x128x1x64xf32>
// CHECK: memref.load %arg4[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<4x64x128x1xf32>
// CHECK-COUNT-16: math.fma
// CHECK: memref.store %{{.*}}, %arg5[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<4x128x1x128x1xf32>
// CHECK-NOT: linalg.
#ma = affine_map<(m, n, k) -> (k, m)>
#mb = affine_map<(m, n, k) -> (k, n)>
#mc = affine_map<(m, n, k) -> (m, n)>
#qa = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d5)>
#qb = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d5, d3, d4)>
#qc = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4)>
func.func @contractions(%x: memref<8x4xf32>, %y: memref<8x4xf32>, %z: memref<4x4xf32>,
                        %q: memref<4x128x1x64xf32>, %kt: memref<4x64x128x1xf32>, %s: memref<4x128x1x128x1xf32>) {
  linalg.matmul indexing_maps = [#ma, #mb, #mc] ins(%x, %y : memref<8x4xf32>, memref<8x4xf32>) outs(%z : memref<4x4xf32>)
  linalg.generic {indexing_maps = [#qa, #qb, #qc], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %kt : memref<4x128x1x64xf32>, memref<4x64x128x1xf32>) outs(%s : memref<4x128x1x128x1xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A convolution is an implicit GEMM: rows (n, oh, ow), columns f, depth
// (kh, kw, c). The input rows are gathered with the strides and dilations;
// the filter is read along k (its slice is padded like A's).
// One output tile (98 x 24; convolutions keep 128x128 tiles) and K = 144:
// two slices of K (split-K) with a workspace of partial sums, added up by
// a loop nest after the launch.
// CHECK-LABEL: func @conv
// CHECK: %[[WS:.*]] = memref.alloc() : memref<2x98x24xf32>
// CHECK: gpu.launch
// CHECK-SAME: workgroup(%{{.*}} : memref<8x132xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<8x132xf32, #gpu.address_space<workgroup>>)
// CHECK: scf.for
// CHECK: %[[M:.*]] = arith.minui
// CHECK-NEXT: %[[K:.*]] = arith.minui
// CHECK-NEXT: %[[N:.*]] = arith.divui %[[M]], %[[OHOW:.*]] : index
// CHECK-NEXT: %[[P:.*]] = arith.remui %[[M]], %[[OHOW]]
// CHECK-NEXT: %[[OY:.*]] = arith.divui %[[P]], %{{.*}}
// CHECK-NEXT: %[[OX:.*]] = arith.remui %[[P]], %{{.*}}
// CHECK-NEXT: %[[KY:.*]] = arith.divui %[[K]], %[[KWC:.*]] : index
// CHECK-NEXT: %[[Q:.*]] = arith.remui %[[K]], %[[KWC]]
// CHECK-NEXT: %[[KX:.*]] = arith.divui %[[Q]], %{{.*}}
// CHECK-NEXT: %[[C:.*]] = arith.remui %[[Q]], %{{.*}}
// CHECK-NEXT: %[[S2:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[SY:.*]] = arith.muli %[[OY]], %[[S2]]
// CHECK-NEXT: %[[D3:.*]] = arith.constant 3 : index
// CHECK-NEXT: %[[DY:.*]] = arith.muli %[[KY]], %[[D3]]
// CHECK-NEXT: %[[IY:.*]] = arith.addi %[[SY]], %[[DY]]
// CHECK: %[[IX:.*]] = arith.addi
// CHECK-NEXT: memref.load %arg0[%[[N]], %[[IY]], %[[IX]], %[[C]]]
// CHECK: memref.load %arg1[
// CHECK-COUNT-64: math.fma
// CHECK: memref.store %{{.*}}, %[[WS]]
// CHECK: gpu.terminator
// CHECK: scf.parallel
// CHECK: memref.load %[[WS]]
// CHECK: memref.load %[[WS]]
// CHECK: arith.addf
// CHECK: memref.load %arg2
// CHECK: memref.store %{{.*}}, %arg2
// CHECK: memref.dealloc %[[WS]]
// CHECK-NOT: linalg.conv_2d
func.func @conv(%in: memref<2x20x20x16xf32>, %w: memref<24x3x3x16xf32>, %out: memref<2x7x7x24xf32>) {
  linalg.conv_2d_nhwc_fhwc {dilations = dense<3> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
    ins(%in, %w : memref<2x20x20x16xf32>, memref<24x3x3x16xf32>) outs(%out : memref<2x7x7x24xf32>)
  return
}

// -----

// A zero fill right before (only ops that touch no memory between): the
// kernel stores its sums (no load of the output) and the fill goes. Not
// a fill of another value, nor one with a store between.
// CHECK-LABEL: func @zero_filled
// CHECK-NOT: linalg.fill
// CHECK: gpu.launch
// CHECK-NOT: memref.load %arg2
// CHECK: memref.store %{{.*}}, %arg2[
// CHECK: gpu.terminator
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%arg3
// CHECK: gpu.launch
// CHECK: memref.load %arg3
// CHECK: gpu.terminator
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%arg4
// CHECK: memref.store
// CHECK: gpu.launch
// CHECK: memref.load %arg4
// CHECK: gpu.terminator
func.func @zero_filled(%a: memref<64x32xf32>, %b: memref<32x48xf32>, %c: memref<64x48xf32>,
                       %d: memref<64x48xf32>, %e: memref<64x48xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %i = arith.constant 0 : index
  linalg.fill ins(%zero : f32) outs(%c : memref<64x48xf32>)
  %v = memref.collapse_shape %c [[0, 1]] : memref<64x48xf32> into memref<3072xf32>
  linalg.matmul ins(%a, %b : memref<64x32xf32>, memref<32x48xf32>) outs(%c : memref<64x48xf32>)
  linalg.fill ins(%one : f32) outs(%d : memref<64x48xf32>)
  linalg.matmul ins(%a, %b : memref<64x32xf32>, memref<32x48xf32>) outs(%d : memref<64x48xf32>)
  linalg.fill ins(%zero : f32) outs(%e : memref<64x48xf32>)
  memref.store %one, %e[%i, %i] : memref<64x48xf32>
  linalg.matmul ins(%a, %b : memref<64x32xf32>, memref<32x48xf32>) outs(%e : memref<64x48xf32>)
  return
}
