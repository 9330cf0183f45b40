// RUN: tessel-opt %s -split-input-file -tessel-lower-random | FileCheck %s

// A seeded draw: the key is SplitMix64 of the seed, a constant
// (mix(7) = 0x12AE30237B17DF14 = 1346066267577507604); each element mixes
// key + (position + 1) * 0x9E3779B97F4A7C15 and keeps the top 24 bits.
// No counter.
// CHECK-NOT: memref.global
// CHECK-LABEL: func.func @seeded
// CHECK-DAG: %[[KEY:.*]] = arith.constant 1346066267577507604 : i64
// CHECK-DAG: %[[EMPTY:.*]] = tensor.empty() : tensor<2x3xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]{{.*}} outs(%[[EMPTY]] : tensor<2x3xf32>)
// CHECK: %[[I0:.*]] = linalg.index 0
// CHECK: %[[I1:.*]] = linalg.index 1
// CHECK: %[[POS:.*]] = arith.index_castui %{{.*}} : index to i64
// CHECK: %[[NEXT:.*]] = arith.addi %[[POS]], %{{.*}} : i64
// CHECK: %[[STEP:.*]] = arith.muli %[[NEXT]], %{{.*}} : i64
// CHECK: %[[Z:.*]] = arith.addi %[[KEY]], %[[STEP]] : i64
// CHECK-COUNT-3: arith.shrui
// CHECK: %[[TOP:.*]] = arith.shrui %{{.*}}, %{{.*}} : i64
// CHECK: %[[F:.*]] = arith.uitofp %[[TOP]] : i64 to f32
// CHECK: arith.mulf %[[F]], %{{.*}} : f32
// CHECK: arith.constant -1.000000e+00 : f32
// CHECK: arith.constant 4.000000e+00 : f32
// CHECK: linalg.yield %{{.*}} : f32
// CHECK-NOT: tessel.random_uniform
func.func @seeded() -> tensor<2x3xf32> {
  %0 = tessel.random_uniform {low = -1.0, high = 3.0, seed = 7 : i64} : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Unseeded: the key mixes the counter's old value, advanced atomically
// once per execution; the module gets the counter once for both ops.
// A normal draw takes positions 2i and 2i + 1 through Box-Muller, in f32
// for an f16 result; its cosine of an angle in [0, 2 pi) is a polynomial
// (range reduction by math.floor, then fused multiply-adds), not a libm
// call. An f64 draw keeps math.cos.
// CHECK: memref.global "private" @__tessel_random_calls : memref<i64> = dense<0>
// CHECK-NOT: memref.global
// CHECK-LABEL: func.func @unseeded
// CHECK: %[[G:.*]] = memref.get_global @__tessel_random_calls : memref<i64>
// CHECK: %[[OLD:.*]] = memref.atomic_rmw addi %{{.*}}, %[[G]][] : (i64, memref<i64>) -> i64
// CHECK: arith.shrui %[[OLD]]
// CHECK: tensor.empty(%arg0) : tensor<?x8xf16>
// CHECK: linalg.generic
// CHECK: arith.shli
// CHECK: math.log
// CHECK: math.sqrt
// CHECK: arith.constant 6.28318548 : f32
// CHECK-NOT: math.cos
// CHECK: math.floor
// CHECK: math.fma
// CHECK-NOT: math.cos
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK-LABEL: func.func @second
// CHECK: memref.get_global @__tessel_random_calls
// CHECK: memref.atomic_rmw addi
// CHECK: arith.uitofp %{{.*}} : i64 to f64
// CHECK-LABEL: func.func @normal_f64
// CHECK: math.log %{{.*}} : f64
// CHECK: math.cos %{{.*}} : f64
func.func @unseeded(%n: index) -> tensor<?x8xf16> {
  %0 = tessel.random_normal(%n) {mean = 1.0, scale = 0.5} : tensor<?x8xf16>
  return %0 : tensor<?x8xf16>
}
func.func @second() -> tensor<4xf64> {
  %0 = tessel.random_uniform : tensor<4xf64>
  return %0 : tensor<4xf64>
}
func.func @normal_f64() -> tensor<4xf64> {
  %0 = tessel.random_normal {seed = 3 : i64} : tensor<4xf64>
  return %0 : tensor<4xf64>
}

