// RUN: tessel-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(tessel-gpu-fuse-rows))" | FileCheck %s

// Softmax over rows of 200 (bufferized): max, exp(x - max), sum, 1/sum,
// scale. One kernel of a block per row (64 rows, 256 threads: the row
// length rounded up to a power of 2, at most 256), the five ops in order
// with a barrier between them; each reduction a warp tree of xor shuffles,
// the 8 warps' values through workgroup memory, and thread 0 combining the
// row's value with the output's (the fill's -inf, then 0).
// CHECK-LABEL: func @softmax
// CHECK-DAG: %[[ROWS:.*]] = arith.constant 64 : index
// CHECK-DAG: %[[THREADS:.*]] = arith.constant 256 : index
// CHECK: gpu.launch blocks(%[[ROW:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[ROWS]], {{.*}} threads(%[[TID:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[THREADS]], {{.*}} workgroup(%[[SLOTS0:.*]] : memref<8xf32, #gpu.address_space<workgroup>>, %[[SLOTS1:.*]] : memref<8xf32, #gpu.address_space<workgroup>>)
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[TID]], %c0
// The fill of the max: thread 0 (a row of one element).
// CHECK: scf.if %[[FIRST]]
// CHECK: memref.store %{{.*}}, %[[MAX:.*]][%[[ROW]]] : memref<64xf32>
// CHECK: gpu.barrier
// CHECK: %[[NEG_INF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[PART:.*]] = scf.for %[[C:.*]] = %[[TID]] to %c200{{.*}} step %c256{{.*}} iter_args(%[[ACC:.*]] = %[[NEG_INF]]) -> (f32)
// CHECK: %[[X:.*]] = memref.load %{{.*}}[%[[ROW]], %[[C]]] : memref<64x200xf32>
// CHECK: arith.maximumf %[[ACC]], %[[X]]
// CHECK: gpu.shuffle xor %[[PART]], %c16_i32, %c32_i32 : f32
// CHECK: gpu.shuffle xor %{{.*}}, %c8_i32
// CHECK: gpu.shuffle xor %{{.*}}, %c4_i32
// CHECK: gpu.shuffle xor %{{.*}}, %c2_i32
// CHECK: gpu.shuffle xor %{{.*}}, %c1_i32
// CHECK: memref.store %{{.*}}, %[[SLOTS0]]
// CHECK: gpu.barrier
// CHECK: memref.load %[[SLOTS0]]
// CHECK: gpu.shuffle xor %{{.*}}, %c4_i32
// CHECK: scf.if %[[FIRST]]
// CHECK: %[[OLD:.*]] = memref.load %[[MAX]][%[[ROW]]]
// CHECK: arith.maximumf %[[OLD]], %{{.*}}
// CHECK: gpu.barrier
// CHECK: scf.for %{{.*}} = %[[TID]] to %c200{{.*}} step %c256
// CHECK: math.exp
// CHECK: gpu.barrier
// CHECK: gpu.barrier
// CHECK: arith.addf
// CHECK: memref.store %{{.*}}, %[[SLOTS1]]
// CHECK: gpu.barrier
// CHECK: gpu.barrier
// CHECK: arith.divf
// CHECK: gpu.barrier
// CHECK: arith.mulf
// CHECK: gpu.terminator
// CHECK-NOT: linalg.
// CHECK: return
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @softmax(%x: memref<64x200xf32>, %y: memref<64x200xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %max = memref.alloc() : memref<64xf32>
  %sum = memref.alloc() : memref<64xf32>
  linalg.fill ins(%ninf : f32) outs(%max : memref<64xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<64x200xf32>) outs(%max : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %out, %in : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : memref<64x200xf32>, memref<64xf32>) outs(%y : memref<64x200xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %d = arith.subf %in, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  }
  linalg.fill ins(%zero : f32) outs(%sum : memref<64xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%y : memref<64x200xf32>) outs(%sum : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%sum : memref<64xf32>) outs(%sum : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.divf %one, %in : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%sum : memref<64xf32>) outs(%y : memref<64x200xf32>) {
  ^bb0(%r: f32, %out: f32):
    %p = arith.mulf %out, %r : f32
    linalg.yield %p : f32
  }
  memref.dealloc %max : memref<64xf32>
  memref.dealloc %sum : memref<64xf32>
  return
}

// -----

// The reduction's init is a fill copied in (bufferization's form): the copy
// joins the run as an elementwise op; a copy outside any run stays a
// memref.copy. An i32 sum over rows of 48 (64 threads, 2 warps).
// CHECK-LABEL: func @copy_and_i32
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<4x4xi32> to memref<4x4xi32>
// CHECK: gpu.launch {{.*}} workgroup(%{{.*}} : memref<2xi32, #gpu.address_space<workgroup>>)
// CHECK: memref.store %c7_i32
// CHECK: gpu.barrier
// CHECK: memref.load %{{.*}} : memref<128xi32>
// CHECK: memref.store %{{.*}} : memref<128xi32>
// CHECK: gpu.barrier
// CHECK: scf.for {{.*}} -> (i32)
// CHECK: arith.addi
// CHECK: gpu.shuffle xor {{.*}} : i32
// CHECK: gpu.terminator
// CHECK-NOT: linalg.
// CHECK-NOT: memref.copy
// CHECK: return
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @copy_and_i32(%x: memref<128x48xi32>, %y: memref<128xi32>,
                        %a: memref<4x4xi32>, %b: memref<4x4xi32>) {
  %seven = arith.constant 7 : i32
  memref.copy %a, %b : memref<4x4xi32> to memref<4x4xi32>
  %init = memref.alloc() : memref<128xi32>
  linalg.fill ins(%seven : i32) outs(%init : memref<128xi32>)
  memref.copy %init, %y : memref<128xi32> to memref<128xi32>
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<128x48xi32>) outs(%y : memref<128xi32>) {
  ^bb0(%in: i32, %out: i32):
    %s = arith.addi %out, %in : i32
    linalg.yield %s : i32
  }
  memref.dealloc %init : memref<128xi32>
  return
}

// -----

// The elementwise op after the reduction reads the written buffer across
// rows (transposed): the run shrinks to the reduction alone, and the
// elementwise op stays a linalg op.
// CHECK-LABEL: func @other_rows
// CHECK: gpu.launch
// CHECK: gpu.shuffle
// CHECK: gpu.terminator
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}} : memref<64x64xf32>)
#id = affine_map<(d0, d1) -> (d0, d1)>
#t = affine_map<(d0, d1) -> (d1, d0)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @other_rows(%x: memref<64x64xf32>, %s: memref<64xf32>,
                      %y: memref<64x64xf32>) {
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<64x64xf32>) outs(%s : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %in, %out : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#t, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<64x64xf32>) outs(%x : memref<64x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  }
  return
}

// -----

// Two views of one arena at one offset, of different shapes: the sums
// (bytes 0..256) are the first row of %x (bytes 0..16384), which the next
// op reads in block 0 while blocks 1..63 write the sums. The run shrinks to
// the reduction alone (which reads no view of the arena).
// CHECK-LABEL: func @overlapping_views
// CHECK: gpu.launch
// CHECK: gpu.terminator
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}} : memref<64x64xf32>) outs(%{{.*}} : memref<64x64xf32>)
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @overlapping_views(%y: memref<64x64xf32>, %z: memref<64x64xf32>) {
  %c0 = arith.constant 0 : index
  %arena = memref.alloc() : memref<16384xi8>
  %x = memref.view %arena[%c0][] : memref<16384xi8> to memref<64x64xf32>
  %s = memref.view %arena[%c0][] : memref<16384xi8> to memref<64xf32>
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%y : memref<64x64xf32>) outs(%s : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %in, %out : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<64x64xf32>) outs(%z : memref<64x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  memref.dealloc %arena : memref<16384xi8>
  return
}

// -----

// Left alone: a matmul (tessel-gpu-tile-matmul's), a reduction over fewer
// than 32 elements a row, a dynamic shape, an f64 sum (no shuffles of 64
// bits), a reduction whose body reads the output elsewhere, and one of no
// rows (a launch of no blocks is an error).
// CHECK-LABEL: func @left_alone
// CHECK-NOT: gpu.launch
// CHECK-COUNT-6: linalg.generic
// CHECK-NOT: gpu.launch
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#kn = affine_map<(d0, d1, d2) -> (d2, d1)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @left_alone(%a: memref<64x64xf32>, %b: memref<64x64xf32>,
                      %c: memref<64x64xf32>, %narrow: memref<64x16xf32>,
                      %s: memref<64xf32>, %dyn: memref<?x64xf32>,
                      %sd: memref<?xf32>, %f64: memref<64x64xf64>,
                      %s64: memref<64xf64>, %none: memref<0x64xf32>,
                      %snone: memref<0xf32>) {
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %p = arith.mulf %x, %y : f32
    %q = arith.addf %out, %p : f32
    linalg.yield %q : f32
  }
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%narrow : memref<64x16xf32>) outs(%s : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %q = arith.addf %out, %in : f32
    linalg.yield %q : f32
  }
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%dyn : memref<?x64xf32>) outs(%sd : memref<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %q = arith.addf %out, %in : f32
    linalg.yield %q : f32
  }
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%f64 : memref<64x64xf64>) outs(%s64 : memref<64xf64>) {
  ^bb0(%in: f64, %out: f64):
    %q = arith.addf %out, %in : f64
    linalg.yield %q : f64
  }
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<64x64xf32>) outs(%s : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %out, %in : f32
    %q = arith.addf %out, %m : f32
    linalg.yield %q : f32
  }
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%none : memref<0x64xf32>) outs(%snone : memref<0xf32>) {
  ^bb0(%in: f32, %out: f32):
    %q = arith.addf %out, %in : f32
    linalg.yield %q : f32
  }
  return
}

// -----

// The element's value is defined outside the body (a count): each thread
// adds the constant per element.
// CHECK-LABEL: func @count
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: gpu.launch
// CHECK: scf.for {{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (f32)
// CHECK: arith.addf %[[ACC]], %[[ONE]] : f32
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @count(%x: memref<64x40xf32>, %n: memref<64xf32>) {
  %one = arith.constant 1.0 : f32
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<64x40xf32>) outs(%n : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %c = arith.addf %one, %out : f32
    linalg.yield %c : f32
  }
  return
}
