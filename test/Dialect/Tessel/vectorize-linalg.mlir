// RUN: tessel-opt %s -split-input-file --tessel-vectorize-linalg | FileCheck %s
// RUN: tessel-opt %s -split-input-file --tessel-vectorize-linalg="vector-bits=256" | FileCheck %s --check-prefix=AVX2
// RUN: not tessel-opt %s -split-input-file --tessel-vectorize-linalg="max-unroll=0" 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: max-unroll at least 1

// -----

// A short innermost dimension (24 <= 2 registers of 16 lanes) is one
// vector per row; the per-channel bias is read as a vector too. The two
// outer dimensions of extent > 1 are the parallel loop.
// CHECK-LABEL: func.func @short_row(
// CHECK-SAME: %[[X:.*]]: memref<1x56x56x24xf32>, %[[B:.*]]: memref<24xf32>, %[[Y:.*]]: memref<1x56x56x24xf32>)
// CHECK: scf.parallel (%[[H:.*]], %[[W:.*]]) = (%{{.*}}, %{{.*}}) to (%[[C56:.*]], %[[C56]])
// CHECK: %[[XS:.*]] = memref.subview %[[X]][0, %[[H]], %[[W]], 0] [1, 1, 1, 24]
// CHECK: %[[YS:.*]] = memref.subview %[[Y]][0, %[[H]], %[[W]], 0] [1, 1, 1, 24]
// CHECK: %[[XR:.*]] = memref.subview %[[XS]]{{.*}} to memref<24xf32
// CHECK: %[[XV:.*]] = vector.load %[[XR]]{{.*}} vector<24xf32>
// CHECK: %[[BV:.*]] = vector.load %[[B]]{{.*}} vector<24xf32>
// CHECK: %[[S:.*]] = arith.addf %[[XV]], %[[BV]] : vector<24xf32>
// CHECK: %[[E:.*]] = math.exp %[[S]] : vector<24xf32>
// CHECK: %[[YR:.*]] = memref.subview %[[YS]]{{.*}} to memref<24xf32
// CHECK: vector.store %[[E]], %[[YR]]
// CHECK-NOT: linalg.generic
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#bias = affine_map<(d0, d1, d2, d3) -> (d3)>
func.func @short_row(%x: memref<1x56x56x24xf32>, %b: memref<24xf32>, %y: memref<1x56x56x24xf32>) {
  linalg.generic {indexing_maps = [#id4, #bias, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %b : memref<1x56x56x24xf32>, memref<24xf32>) outs(%y : memref<1x56x56x24xf32>) {
  ^bb0(%in: f32, %bb: f32, %out: f32):
    %a = arith.addf %in, %bb : f32
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// 128 lanes: tiles of two registers (max-unroll=2), the tile loop joins
// the parallel loop; at vector-bits=256 a tile is two 8-lane registers.
// CHECK-LABEL: func.func @unrolled(
// CHECK: %[[C32:.*]] = arith.constant 32 : index
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%{{.*}}, %{{.*}}) to (%{{.*}}, %{{.*}}) step (%{{.*}}, %[[C32]])
// CHECK: vector.load {{.*}} vector<32xf32>
// CHECK: vector.load {{.*}} vector<32xf32>
// CHECK: arith.maximumf {{.*}} : vector<32xf32>
// CHECK: vector.store {{.*}} vector<32xf32>
// AVX2-LABEL: func.func @unrolled(
// AVX2: %[[C16:.*]] = arith.constant 16 : index
// AVX2: scf.parallel (%{{.*}}, %{{.*}}) = (%{{.*}}, %{{.*}}) to (%{{.*}}, %{{.*}}) step (%{{.*}}, %[[C16]])
// AVX2: arith.maximumf {{.*}} : vector<16xf32>
func.func @unrolled(%x: memref<8x128xf32>, %y: memref<8x128xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<8x128xf32>) outs(%y : memref<8x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %out : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// 1000 lanes: 62 one-register tiles, then a static 8-lane remainder tile
// (no masks). The tile loop is sequential because the remainder follows it.
// CHECK-LABEL: func.func @remainder(
// CHECK-DAG: %[[C992:.*]] = arith.constant 992 : index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[C992]] step %[[C16]]
// CHECK: arith.fptosi {{.*}} : vector<16xf32> to vector<16xi32>
// CHECK: vector.store {{.*}} vector<16xi32>
// CHECK: }
// CHECK: memref.subview %{{.*}}[992] [8] [1]
// CHECK: arith.fptosi {{.*}} : vector<8xf32> to vector<8xi32>
func.func @remainder(%x: memref<1000xf32>, %y: memref<1000xi32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : memref<1000xf32>) outs(%y : memref<1000xi32>) {
  ^bb0(%in: f32, %out: i32):
    %c = arith.fptosi %in : f32 to i32
    linalg.yield %c : i32
  }
  return
}

// -----

// A reduction over an outer dimension (pooling): the reduction loop runs
// inside the parallel tile loop and accumulates into the output row.
// CHECK-LABEL: func.func @outer_reduction(
// CHECK: scf.parallel (%[[J:.*]]) =
// CHECK: scf.for %[[K:.*]] =
// CHECK: memref.subview %{{.*}}[0, %[[K]], %[[J]]] [1, 1, 32]
// CHECK: %[[IN:.*]] = vector.load {{.*}} vector<32xf32>
// CHECK: %[[ACC:.*]] = vector.load {{.*}} vector<32xf32>
// CHECK: %[[SUM:.*]] = arith.addf %[[IN]], %[[ACC]] : vector<32xf32>
// CHECK: vector.store %[[SUM]]
func.func @outer_reduction(%x: memref<1x49x64xf32>, %y: memref<1x64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x : memref<1x49x64xf32>) outs(%y : memref<1x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A broadcast written as a constant 0 in the indexing map (tosa-to-linalg's
// form for a size-1 dimension: layer norm's x - mean): the row's one value
// is broadcast to a vector, as for a map that drops the dimension.
// CHECK-LABEL: func.func @zero_in_map(
// CHECK-SAME: %[[X:.*]]: memref<1x14x14x384xf32>, %[[M:.*]]: memref<1x14x14x1xf32>, %[[Y:.*]]: memref<1x14x14x384xf32>)
// CHECK: scf.parallel
// CHECK: %[[XV:.*]] = vector.load {{.*}} vector<32xf32>
// CHECK: %[[MV:.*]] = vector.load {{.*}} vector<f32>
// CHECK: %[[MS:.*]] = vector.extract %[[MV]][] : f32 from vector<f32>
// CHECK: %[[B:.*]] = vector.broadcast %[[MS]] : f32 to vector<32xf32>
// CHECK: arith.subf %[[XV]], %[[B]] : vector<32xf32>
// CHECK-NOT: linalg.generic
func.func @zero_in_map(%x: memref<1x14x14x384xf32>, %m: memref<1x14x14x1xf32>, %y: memref<1x14x14x384xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %m : memref<1x14x14x384xf32>, memref<1x14x14x1xf32>) outs(%y : memref<1x14x14x384xf32>) {
  ^bb0(%in: f32, %mean: f32, %out: f32):
    %d = arith.subf %in, %mean : f32
    linalg.yield %d : f32
  }
  return
}

// -----

// A reduction along the innermost dimension whose body may be reassociated
// (tessel-reassociate-reductions' mark; layer norm's sum of squares): each
// row is one vector, reduced as a tree by one vector.reduction; the rows
// are the parallel loop.
// CHECK-LABEL: func.func @row_reduction(
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%{{.*}}, %{{.*}}) to (%[[C14:.*]], %[[C14]])
// CHECK: %[[XV:.*]] = vector.load {{.*}} vector<384xf32>
// CHECK: %[[ACC:.*]] = vector.load {{.*}} vector<f32>
// CHECK: %[[SQ:.*]] = arith.mulf %[[XV]], %[[XV]] fastmath<reassoc,contract> : vector<384xf32>
// CHECK: %[[A:.*]] = vector.extract %[[ACC]][] : f32 from vector<f32>
// CHECK: %[[R:.*]] = vector.reduction <add>, %[[SQ]], %[[A]] fastmath<reassoc> : vector<384xf32> into f32
// CHECK: %[[RV:.*]] = vector.broadcast %[[R]] : f32 to vector<f32>
// CHECK: vector.store %[[RV]]
// CHECK-NOT: linalg.generic
func.func @row_reduction(%x: memref<1x14x14x1x384xf32>, %y: memref<1x14x14x1xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%x : memref<1x14x14x1x384xf32>) outs(%y : memref<1x14x14x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %in fastmath<reassoc,contract> : f32
    %s = arith.addf %m, %out fastmath<reassoc,contract> : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Rows longer than 64 registers stay loops.
// CHECK-LABEL: func.func @long_row(
// CHECK: linalg.generic
// CHECK-NOT: vector.reduction
func.func @long_row(%x: memref<4x2048xf32>, %y: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<4x2048xf32>) outs(%y : memref<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out fastmath<reassoc> : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Left to the scalar loops: a reduction along the innermost dimension
// whose order must be kept (no reassoc), a
// transposed (non-contiguous) read, a dynamic innermost size,
// i1 buffers (a byte per element in memory, a bit per lane in a vector).
// CHECK-LABEL: func.func @left_alone(
// CHECK-COUNT-4: linalg.generic
// CHECK-NOT: vector.
func.func @left_alone(%x: memref<16x64xf32>, %t: memref<64x16xf32>, %y: memref<16xf32>, %z: memref<16x64xf32>, %d: memref<16x?xf32>, %m: memref<16x64xi1>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<16x64xf32>) outs(%m : memref<16x64xi1>) {
  ^bb0(%in: f32, %out: i1):
    %zero = arith.constant 0.0 : f32
    %c = arith.cmpf ogt, %in, %zero : f32
    linalg.yield %c : i1
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<16x64xf32>) outs(%y : memref<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t : memref<64x16xf32>) outs(%z : memref<16x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%d : memref<16x?xf32>) {
  ^bb0(%out: f32):
    %n = arith.negf %out : f32
    linalg.yield %n : f32
  }
  return
}

// -----

// Bodies that load buffers (gathers: Resize, Gather) are vectorized over
// the innermost loop by VectorizeGathers.cpp: a load at indices the same
// in every lane stays one scalar load; one whose last index walks the
// lanes is a vector load; an index list picking from a row of at most 32
// f32 is AVX-512 permutes of the row in two registers (with AVX2, a
// gather);
// from a longer row, a gather at 32-bit offsets. A load in a reduction is
// left to the scalar loops.
// CHECK-LABEL: func.func @gathers(
// CHECK-SAME: %[[SRC:[^:]*]]: memref<8x28xf32>, %[[IDX:[^:]*]]: memref<64xi32>, %[[WIDE:[^:]*]]: memref<8x100xf32>, %[[ONE:[^:]*]]: memref<16xf32>, %[[OUT:[^:]*]]: memref<8x64xf32>, %[[SUM:[^:]*]]: memref<8xf32>)
// The one element, broadcast.
// CHECK: scf.parallel
// CHECK: %[[E:.*]] = memref.load %[[ONE]][%c3]
// CHECK: vector.broadcast %[[E]] : f32 to vector<32xf32>
// The index list picking from a row of 28: a masked load of the row,
// vpermi2ps per 16 lanes.
// CHECK: scf.parallel
// CHECK: vector.load %{{.*}} : memref<32xi32
// CHECK: vector.maskedload %[[SRC]]
// CHECK-COUNT-2: llvm.call_intrinsic "llvm.x86.avx512.vpermi2var.ps.512"
// CHECK: vector.store
// From a row of 100: a gather at 32-bit offsets (row * 100 + index).
// CHECK: scf.parallel
// CHECK: vector.gather %[[WIDE]][%c0, %c0] [%{{.*}}], %{{.*}}, %{{.*}} : memref<8x100xf32>, vector<32xi32>
// A reduction that loads: left alone.
// CHECK: linalg.generic
// CHECK-SAME: "reduction"
// AVX2-LABEL: func.func @gathers(
// AVX2-NOT: llvm.call_intrinsic
// AVX2: vector.gather {{.*}} : memref<8x28xf32>, vector<16xi32>
func.func @gathers(%src: memref<8x28xf32>, %idx: memref<64xi32>, %wide: memref<8x100xf32>, %one: memref<16xf32>, %out: memref<8x64xf32>, %sum: memref<8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%out : memref<8x64xf32>) {
  ^bb0(%o: f32):
    %c3 = arith.constant 3 : index
    %v = memref.load %one[%c3] : memref<16xf32>
    linalg.yield %v : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%idx : memref<64xi32>) outs(%out : memref<8x64xf32>) {
  ^bb0(%k: i32, %o: f32):
    %r = linalg.index 0 : index
    %c = arith.index_cast %k : i32 to index
    %v = memref.load %src[%r, %c] : memref<8x28xf32>
    linalg.yield %v : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%idx : memref<64xi32>) outs(%out : memref<8x64xf32>) {
  ^bb0(%k: i32, %o: f32):
    %r = linalg.index 0 : index
    %c = arith.index_cast %k : i32 to index
    %v = memref.load %wide[%r, %c] : memref<8x100xf32>
    %w = arith.mulf %v, %v : f32
    linalg.yield %w : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%idx : memref<64xi32>) outs(%sum : memref<8xf32>) {
  ^bb0(%k: i32, %o: f32):
    %r = linalg.index 0 : index
    %c = arith.index_cast %k : i32 to index
    %v = memref.load %wide[%r, %c] : memref<8x100xf32>
    %s = arith.addf %v, %o : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A row with unit dims after it ([N, K, 1], the H axis of a Resize in
// NHWC with one channel): the unit dims are collapsed into the row first,
// so the masked load walks the row, inside the buffer's shape.
// CHECK-LABEL: func.func @row_then_unit_dims(
// CHECK: %[[ROWS:.*]] = memref.collapse_shape %{{.*}} {{\[}}[0], [1, 2]] : memref<8x28x1xf32> into memref<8x28xf32>
// CHECK: vector.maskedload %[[ROWS]][%{{.*}}, %c0]
// CHECK-COUNT-2: llvm.call_intrinsic "llvm.x86.avx512.vpermi2var.ps.512"
func.func @row_then_unit_dims(%src: memref<8x28x1xf32>, %idx: memref<64xi32>, %out: memref<8x64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%idx : memref<64xi32>) outs(%out : memref<8x64xf32>) {
  ^bb0(%k: i32, %o: f32):
    %r = linalg.index 0 : index
    %c = arith.index_cast %k : i32 to index
    %c0 = arith.constant 0 : index
    %v = memref.load %src[%r, %c, %c0] : memref<8x28x1xf32>
    linalg.yield %v : f32
  }
  return
}

// -----

// An outer size known only at run time (a batch): the tiles are static
// and the parallel loop runs to the size read from the buffer.
// CHECK-LABEL: func.func @run_time_batch(
// CHECK-SAME: %[[X:.*]]: memref<?x64xf32>, %[[Y:.*]]: memref<?x64xf32>)
// CHECK: %[[N:.*]] = memref.dim %[[X]], %c0
// CHECK: scf.parallel (%[[I:.*]], %[[J:.*]]) = (%{{.*}}, %{{.*}}) to (%[[N]], %{{.*}})
// CHECK: vector.load {{.*}} vector<32xf32>
// CHECK: math.exp {{.*}} : vector<32xf32>
// CHECK-NOT: linalg.generic
func.func @run_time_batch(%x: memref<?x64xf32>, %y: memref<?x64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<?x64xf32>) outs(%y : memref<?x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  }
  return
}
