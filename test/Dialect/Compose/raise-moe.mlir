// RUN: tessel-opt %s -split-input-file -tessel-raise-moe | FileCheck %s
// RUN: tessel-opt %s -split-input-file -tessel-raise-moe -verify-diagnostics -o /dev/null

// Dense mixtures of experts written directly in the IR (as any front end
// emits them) are raised to compose.route; look-alikes are left alone.
// The forms were written out by a small script: T = 4 tokens, D = 2, experts
// y_e = clamp(x * w_e) (token-wise, so they outline).

// Top-1 without renormalization: each gate is the top value where the
// expert is chosen (a one-hot select of the top-k results).
// CHECK: compose.component @moe0_expert0(%arg0: tensor<?x2xf32>) -> tensor<?x2xf32>
// CHECK: tosa.mul %arg0, %{{.*}} : (tensor<?x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<?x2xf32>
// CHECK: tosa.clamp
// CHECK: compose.return
// CHECK: compose.component @moe0_expert1(%arg0: tensor<?x2xf32>) -> tensor<?x2xf32>
// CHECK-LABEL: func.func @top1_plain
// CHECK-NEXT: %[[Y:.*]] = compose.route %arg0, %arg1 {experts = [@moe0_expert0, @moe0_expert1], k = 1 : i64} : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
// CHECK-NEXT: return %[[Y]]
func.func @top1_plain(%x: tensor<4x2xf32>, %s: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %val1, %idx1 = tessel.top_k %s {axis = 1 : i64, k = 1 : i64} : tensor<4x2xf32> -> tensor<4x1xf32>, tensor<4x1xi64>
  %v2 = tosa.cast %idx1 : (tensor<4x1xi64>) -> tensor<4x1xi32>
  %v3 = "tosa.const"() <{values = dense<0> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
  %v4 = tosa.equal %v2, %v3 : (tensor<4x1xi32>, tensor<1x1xi32>) -> tensor<4x1xi1>
  %v5 = "tosa.const"() <{values = dense<0.0> : tensor<4x1xf32>}> : () -> tensor<4x1xf32>
  %v6 = tosa.select %v4, %val1, %v5 : (tensor<4x1xi1>, tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %v7 = tosa.reduce_sum %v6 {axis = 1 : i32} : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %v8 = "tosa.const"() <{values = dense<[[1.0, 0.5]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %v9 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %v10 = tosa.mul %x, %v8, %v9 : (tensor<4x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %v11 = tosa.clamp %v10 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %v12 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %v13 = tosa.mul %v7, %v11, %v12 : (tensor<4x1xf32>, tensor<4x2xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %v14 = "tosa.const"() <{values = dense<1> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
  %v15 = tosa.equal %v2, %v14 : (tensor<4x1xi32>, tensor<1x1xi32>) -> tensor<4x1xi1>
  %v16 = "tosa.const"() <{values = dense<0.0> : tensor<4x1xf32>}> : () -> tensor<4x1xf32>
  %v17 = tosa.select %v15, %val1, %v16 : (tensor<4x1xi1>, tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %v18 = tosa.reduce_sum %v17 {axis = 1 : i32} : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %v19 = "tosa.const"() <{values = dense<[[2.0, 0.0]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %v20 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %v21 = tosa.mul %x, %v19, %v20 : (tensor<4x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %v22 = tosa.clamp %v21 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %v23 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %v24 = tosa.mul %v18, %v22, %v23 : (tensor<4x1xf32>, tensor<4x2xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %v25 = tosa.add %v13, %v24 : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  return %v25 : tensor<4x2xf32>
}

// -----

// Top-2, each weight divided by the sum of the two.
// CHECK-LABEL: func.func @top2_renormalized
// CHECK-NEXT: compose.route %arg0, %arg1 {experts = [@moe0_expert0, @moe0_expert1, @moe0_expert2], k = 2 : i64, renormalize}
// CHECK-NOT: tessel.top_k
func.func @top2_renormalized(%x: tensor<4x2xf32>, %s: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %val1, %idx1 = tessel.top_k %s {axis = 1 : i64, k = 2 : i64} : tensor<4x3xf32> -> tensor<4x2xf32>, tensor<4x2xi64>
  %v2 = tosa.cast %idx1 : (tensor<4x2xi64>) -> tensor<4x2xi32>
  %v3 = tosa.reduce_sum %val1 {axis = 1 : i32} : (tensor<4x2xf32>) -> tensor<4x1xf32>
  %v4 = tosa.reciprocal %v3 : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %v5 = "tosa.const"() <{values = dense<0> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
  %v6 = tosa.equal %v2, %v5 : (tensor<4x2xi32>, tensor<1x1xi32>) -> tensor<4x2xi1>
  %v7 = "tosa.const"() <{values = dense<0.0> : tensor<4x2xf32>}> : () -> tensor<4x2xf32>
  %v8 = tosa.select %v6, %val1, %v7 : (tensor<4x2xi1>, tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %v9 = tosa.reduce_sum %v8 {axis = 1 : i32} : (tensor<4x2xf32>) -> tensor<4x1xf32>
  %v10 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %v11 = tosa.mul %v9, %v4, %v10 : (tensor<4x1xf32>, tensor<4x1xf32>, tensor<1xi8>) -> tensor<4x1xf32>
  %v12 = "tosa.const"() <{values = dense<[[1.0, 0.5]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %v13 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %v14 = tosa.mul %x, %v12, %v13 : (tensor<4x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %v15 = tosa.clamp %v14 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %v16 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %v17 = tosa.mul %v11, %v15, %v16 : (tensor<4x1xf32>, tensor<4x2xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %v18 = "tosa.const"() <{values = dense<1> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
  %v19 = tosa.equal %v2, %v18 : (tensor<4x2xi32>, tensor<1x1xi32>) -> tensor<4x2xi1>
  %v20 = "tosa.const"() <{values = dense<0.0> : tensor<4x2xf32>}> : () -> tensor<4x2xf32>
  %v21 = tosa.select %v19, %val1, %v20 : (tensor<4x2xi1>, tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %v22 = tosa.reduce_sum %v21 {axis = 1 : i32} : (tensor<4x2xf32>) -> tensor<4x1xf32>
  %v23 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %v24 = tosa.mul %v22, %v4, %v23 : (tensor<4x1xf32>, tensor<4x1xf32>, tensor<1xi8>) -> tensor<4x1xf32>
  %v25 = "tosa.const"() <{values = dense<[[2.0, 0.0]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %v26 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %v27 = tosa.mul %x, %v25, %v26 : (tensor<4x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %v28 = tosa.clamp %v27 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %v29 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %v30 = tosa.mul %v24, %v28, %v29 : (tensor<4x1xf32>, tensor<4x2xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %v31 = "tosa.const"() <{values = dense<2> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
  %v32 = tosa.equal %v2, %v31 : (tensor<4x2xi32>, tensor<1x1xi32>) -> tensor<4x2xi1>
  %v33 = "tosa.const"() <{values = dense<0.0> : tensor<4x2xf32>}> : () -> tensor<4x2xf32>
  %v34 = tosa.select %v32, %val1, %v33 : (tensor<4x2xi1>, tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %v35 = tosa.reduce_sum %v34 {axis = 1 : i32} : (tensor<4x2xf32>) -> tensor<4x1xf32>
  %v36 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %v37 = tosa.mul %v35, %v4, %v36 : (tensor<4x1xf32>, tensor<4x1xf32>, tensor<1xi8>) -> tensor<4x1xf32>
  %v38 = "tosa.const"() <{values = dense<[[3.0, -0.5]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %v39 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %v40 = tosa.mul %x, %v38, %v39 : (tensor<4x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %v41 = tosa.clamp %v40 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %v42 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %v43 = tosa.mul %v37, %v41, %v42 : (tensor<4x1xf32>, tensor<4x2xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %v44 = tosa.add %v17, %v30 : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %v45 = tosa.add %v44, %v43 : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  return %v45 : tensor<4x2xf32>
}

// -----

// Mixtral: top-2 of the logits, softmax over the two: the route takes
// softmax(logits), renormalized.
// CHECK-LABEL: func.func @top2_softmax_of_logits
// CHECK-NEXT: %[[P:.*]] = tessel.softmax %arg1 {axis = -1 : i64} : tensor<4x3xf32>
// CHECK-NEXT: compose.route %arg0, %[[P]] {experts = [@moe0_expert0, @moe0_expert1, @moe0_expert2], k = 2 : i64, renormalize}
// CHECK-NOT: tessel.top_k
func.func @top2_softmax_of_logits(%x: tensor<4x2xf32>, %s: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %val1, %idx1 = tessel.top_k %s {axis = 1 : i64, k = 2 : i64} : tensor<4x3xf32> -> tensor<4x2xf32>, tensor<4x2xi64>
  %v2 = tosa.cast %idx1 : (tensor<4x2xi64>) -> tensor<4x2xi32>
  %v3 = tessel.softmax %val1 {axis = 1 : i64} : tensor<4x2xf32>
  %v4 = "tosa.const"() <{values = dense<0> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
  %v5 = tosa.equal %v2, %v4 : (tensor<4x2xi32>, tensor<1x1xi32>) -> tensor<4x2xi1>
  %v6 = "tosa.const"() <{values = dense<0.0> : tensor<4x2xf32>}> : () -> tensor<4x2xf32>
  %v7 = tosa.select %v5, %v3, %v6 : (tensor<4x2xi1>, tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %v8 = tosa.reduce_sum %v7 {axis = 1 : i32} : (tensor<4x2xf32>) -> tensor<4x1xf32>
  %v9 = "tosa.const"() <{values = dense<[[1.0, 0.5]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %v10 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %v11 = tosa.mul %x, %v9, %v10 : (tensor<4x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %v12 = tosa.clamp %v11 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %v13 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %v14 = tosa.mul %v8, %v12, %v13 : (tensor<4x1xf32>, tensor<4x2xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %v15 = "tosa.const"() <{values = dense<1> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
  %v16 = tosa.equal %v2, %v15 : (tensor<4x2xi32>, tensor<1x1xi32>) -> tensor<4x2xi1>
  %v17 = "tosa.const"() <{values = dense<0.0> : tensor<4x2xf32>}> : () -> tensor<4x2xf32>
  %v18 = tosa.select %v16, %v3, %v17 : (tensor<4x2xi1>, tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %v19 = tosa.reduce_sum %v18 {axis = 1 : i32} : (tensor<4x2xf32>) -> tensor<4x1xf32>
  %v20 = "tosa.const"() <{values = dense<[[2.0, 0.0]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %v21 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %v22 = tosa.mul %x, %v20, %v21 : (tensor<4x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %v23 = tosa.clamp %v22 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %v24 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %v25 = tosa.mul %v19, %v23, %v24 : (tensor<4x1xf32>, tensor<4x2xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %v26 = "tosa.const"() <{values = dense<2> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
  %v27 = tosa.equal %v2, %v26 : (tensor<4x2xi32>, tensor<1x1xi32>) -> tensor<4x2xi1>
  %v28 = "tosa.const"() <{values = dense<0.0> : tensor<4x2xf32>}> : () -> tensor<4x2xf32>
  %v29 = tosa.select %v27, %v3, %v28 : (tensor<4x2xi1>, tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %v30 = tosa.reduce_sum %v29 {axis = 1 : i32} : (tensor<4x2xf32>) -> tensor<4x1xf32>
  %v31 = "tosa.const"() <{values = dense<[[3.0, -0.5]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %v32 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %v33 = tosa.mul %x, %v31, %v32 : (tensor<4x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %v34 = tosa.clamp %v33 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %v35 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %v36 = tosa.mul %v30, %v34, %v35 : (tensor<4x1xf32>, tensor<4x2xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %v37 = tosa.add %v14, %v25 : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %v38 = tosa.add %v37, %v36 : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  return %v38 : tensor<4x2xf32>
}

// -----

// Terms masked by select(gate > 0, ., 0) over probabilities, and an
// unrouted (shared) expert added back after the route.
// CHECK-LABEL: func.func @masked_with_shared_expert
// CHECK: %[[P:.*]] = tessel.softmax %arg1
// CHECK: %[[S:.*]] = tosa.clamp
// CHECK: %[[Y:.*]] = compose.route %arg0, %[[P]] {experts = [@moe0_expert0, @moe0_expert1], k = 1 : i64}
// CHECK-NEXT: %[[O:.*]] = tosa.add %[[Y]], %[[S]]
// CHECK-NEXT: return %[[O]]
func.func @masked_with_shared_expert(%x: tensor<4x2xf32>, %s: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %v1 = tessel.softmax %s {axis = 1 : i64} : tensor<4x2xf32>
  %val2, %idx2 = tessel.top_k %v1 {axis = 1 : i64, k = 1 : i64} : tensor<4x2xf32> -> tensor<4x1xf32>, tensor<4x1xi64>
  %v3 = tosa.cast %idx2 : (tensor<4x1xi64>) -> tensor<4x1xi32>
  %v4 = "tosa.const"() <{values = dense<0> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
  %v5 = tosa.equal %v3, %v4 : (tensor<4x1xi32>, tensor<1x1xi32>) -> tensor<4x1xi1>
  %v6 = "tosa.const"() <{values = dense<0.0> : tensor<4x1xf32>}> : () -> tensor<4x1xf32>
  %v7 = tosa.select %v5, %val2, %v6 : (tensor<4x1xi1>, tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %v8 = tosa.reduce_sum %v7 {axis = 1 : i32} : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %v9 = "tosa.const"() <{values = dense<[[1.0, 0.5]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %v10 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %v11 = tosa.mul %x, %v9, %v10 : (tensor<4x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %v12 = tosa.clamp %v11 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %v13 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %v14 = tosa.mul %v8, %v12, %v13 : (tensor<4x1xf32>, tensor<4x2xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %v15 = "tosa.const"() <{values = dense<0.0> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %v16 = tosa.greater %v8, %v15 : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xi1>
  %v17 = "tosa.const"() <{values = dense<0.0> : tensor<4x2xf32>}> : () -> tensor<4x2xf32>
  %v18 = tosa.select %v16, %v14, %v17 : (tensor<4x1xi1>, tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %v19 = "tosa.const"() <{values = dense<1> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
  %v20 = tosa.equal %v3, %v19 : (tensor<4x1xi32>, tensor<1x1xi32>) -> tensor<4x1xi1>
  %v21 = "tosa.const"() <{values = dense<0.0> : tensor<4x1xf32>}> : () -> tensor<4x1xf32>
  %v22 = tosa.select %v20, %val2, %v21 : (tensor<4x1xi1>, tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %v23 = tosa.reduce_sum %v22 {axis = 1 : i32} : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %v24 = "tosa.const"() <{values = dense<[[2.0, 0.0]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %v25 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %v26 = tosa.mul %x, %v24, %v25 : (tensor<4x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %v27 = tosa.clamp %v26 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %v28 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %v29 = tosa.mul %v23, %v27, %v28 : (tensor<4x1xf32>, tensor<4x2xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %v30 = "tosa.const"() <{values = dense<0.0> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %v31 = tosa.greater %v23, %v30 : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xi1>
  %v32 = "tosa.const"() <{values = dense<0.0> : tensor<4x2xf32>}> : () -> tensor<4x2xf32>
  %v33 = tosa.select %v31, %v29, %v32 : (tensor<4x1xi1>, tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %v34 = tosa.add %v18, %v33 : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %v35 = "tosa.const"() <{values = dense<[[5.0, -1.5]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %v36 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %v37 = tosa.mul %x, %v35, %v36 : (tensor<4x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %v38 = tosa.clamp %v37 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %v39 = tosa.add %v34, %v38 : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  return %v39 : tensor<4x2xf32>
}

// -----

// Two routed layers in one function, the second on the first's output.
// CHECK-LABEL: func.func @two_layers
// CHECK-NEXT: %[[A:.*]] = compose.route %arg0, %arg1
// CHECK-NEXT: %[[B:.*]] = compose.route %[[A]], %arg1
// CHECK-NEXT: return %[[B]]
func.func @two_layers(%x: tensor<4x2xf32>, %s: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %val1, %idx1 = tessel.top_k %s {axis = 1 : i64, k = 1 : i64} : tensor<4x2xf32> -> tensor<4x1xf32>, tensor<4x1xi64>
  %v2 = tosa.cast %idx1 : (tensor<4x1xi64>) -> tensor<4x1xi32>
  %v3 = "tosa.const"() <{values = dense<0> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
  %v4 = tosa.equal %v2, %v3 : (tensor<4x1xi32>, tensor<1x1xi32>) -> tensor<4x1xi1>
  %v5 = "tosa.const"() <{values = dense<0.0> : tensor<4x1xf32>}> : () -> tensor<4x1xf32>
  %v6 = tosa.select %v4, %val1, %v5 : (tensor<4x1xi1>, tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %v7 = tosa.reduce_sum %v6 {axis = 1 : i32} : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %v8 = "tosa.const"() <{values = dense<[[1.0, 0.5]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %v9 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %v10 = tosa.mul %x, %v8, %v9 : (tensor<4x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %v11 = tosa.clamp %v10 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %v12 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %v13 = tosa.mul %v7, %v11, %v12 : (tensor<4x1xf32>, tensor<4x2xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %v14 = "tosa.const"() <{values = dense<1> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
  %v15 = tosa.equal %v2, %v14 : (tensor<4x1xi32>, tensor<1x1xi32>) -> tensor<4x1xi1>
  %v16 = "tosa.const"() <{values = dense<0.0> : tensor<4x1xf32>}> : () -> tensor<4x1xf32>
  %v17 = tosa.select %v15, %val1, %v16 : (tensor<4x1xi1>, tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %v18 = tosa.reduce_sum %v17 {axis = 1 : i32} : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %v19 = "tosa.const"() <{values = dense<[[2.0, 0.0]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %v20 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %v21 = tosa.mul %x, %v19, %v20 : (tensor<4x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %v22 = tosa.clamp %v21 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %v23 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %v24 = tosa.mul %v18, %v22, %v23 : (tensor<4x1xf32>, tensor<4x2xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %v25 = tosa.add %v13, %v24 : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %val26, %idx26 = tessel.top_k %s {axis = 1 : i64, k = 1 : i64} : tensor<4x2xf32> -> tensor<4x1xf32>, tensor<4x1xi64>
  %v27 = tosa.cast %idx26 : (tensor<4x1xi64>) -> tensor<4x1xi32>
  %v28 = "tosa.const"() <{values = dense<0> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
  %v29 = tosa.equal %v27, %v28 : (tensor<4x1xi32>, tensor<1x1xi32>) -> tensor<4x1xi1>
  %v30 = "tosa.const"() <{values = dense<0.0> : tensor<4x1xf32>}> : () -> tensor<4x1xf32>
  %v31 = tosa.select %v29, %val26, %v30 : (tensor<4x1xi1>, tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %v32 = tosa.reduce_sum %v31 {axis = 1 : i32} : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %v33 = "tosa.const"() <{values = dense<[[1.0, 0.5]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %v34 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %v35 = tosa.mul %v25, %v33, %v34 : (tensor<4x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %v36 = tosa.clamp %v35 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %v37 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %v38 = tosa.mul %v32, %v36, %v37 : (tensor<4x1xf32>, tensor<4x2xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %v39 = "tosa.const"() <{values = dense<1> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
  %v40 = tosa.equal %v27, %v39 : (tensor<4x1xi32>, tensor<1x1xi32>) -> tensor<4x1xi1>
  %v41 = "tosa.const"() <{values = dense<0.0> : tensor<4x1xf32>}> : () -> tensor<4x1xf32>
  %v42 = tosa.select %v40, %val26, %v41 : (tensor<4x1xi1>, tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %v43 = tosa.reduce_sum %v42 {axis = 1 : i32} : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %v44 = "tosa.const"() <{values = dense<[[2.0, 0.0]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %v45 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %v46 = tosa.mul %v25, %v44, %v45 : (tensor<4x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %v47 = tosa.clamp %v46 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %v48 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %v49 = tosa.mul %v43, %v47, %v48 : (tensor<4x1xf32>, tensor<4x2xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %v50 = tosa.add %v38, %v49 : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  return %v50 : tensor<4x2xf32>
}

// -----

// Look-alikes stay as they are: a gate that is twice the top-k weight.
// CHECK-LABEL: func.func @scaled_gate
// CHECK-NOT: compose.route
// CHECK: tessel.top_k
// CHECK-NOT: compose.route
func.func @scaled_gate(%x: tensor<4x2xf32>, %s: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %val1, %idx1 = tessel.top_k %s {axis = 1 : i64, k = 1 : i64} : tensor<4x2xf32> -> tensor<4x1xf32>, tensor<4x1xi64>
  %v2 = tosa.cast %idx1 : (tensor<4x1xi64>) -> tensor<4x1xi32>
  %v3 = "tosa.const"() <{values = dense<0> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
  %v4 = tosa.equal %v2, %v3 : (tensor<4x1xi32>, tensor<1x1xi32>) -> tensor<4x1xi1>
  %v5 = "tosa.const"() <{values = dense<0.0> : tensor<4x1xf32>}> : () -> tensor<4x1xf32>
  %v6 = tosa.select %v4, %val1, %v5 : (tensor<4x1xi1>, tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %v7 = tosa.reduce_sum %v6 {axis = 1 : i32} : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %v8 = "tosa.const"() <{values = dense<2.0> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %v9 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %v10 = tosa.mul %v7, %v8, %v9 : (tensor<4x1xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<4x1xf32>
  %v11 = "tosa.const"() <{values = dense<[[1.0, 0.5]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %v12 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %v13 = tosa.mul %x, %v11, %v12 : (tensor<4x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %v14 = tosa.clamp %v13 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %v15 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %v16 = tosa.mul %v10, %v14, %v15 : (tensor<4x1xf32>, tensor<4x2xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %v17 = "tosa.const"() <{values = dense<1> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
  %v18 = tosa.equal %v2, %v17 : (tensor<4x1xi32>, tensor<1x1xi32>) -> tensor<4x1xi1>
  %v19 = "tosa.const"() <{values = dense<0.0> : tensor<4x1xf32>}> : () -> tensor<4x1xf32>
  %v20 = tosa.select %v18, %val1, %v19 : (tensor<4x1xi1>, tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %v21 = tosa.reduce_sum %v20 {axis = 1 : i32} : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %v22 = "tosa.const"() <{values = dense<[[2.0, 0.0]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %v23 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %v24 = tosa.mul %x, %v22, %v23 : (tensor<4x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %v25 = tosa.clamp %v24 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %v26 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %v27 = tosa.mul %v21, %v25, %v26 : (tensor<4x1xf32>, tensor<4x2xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %v28 = tosa.add %v16, %v27 : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  return %v28 : tensor<4x2xf32>
}

// -----

// Three experts routed, two terms summed.
// CHECK-LABEL: func.func @missing_expert
// CHECK-NOT: compose.route
// CHECK: tessel.top_k
// CHECK-NOT: compose.route
func.func @missing_expert(%x: tensor<4x2xf32>, %s: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %val1, %idx1 = tessel.top_k %s {axis = 1 : i64, k = 1 : i64} : tensor<4x3xf32> -> tensor<4x1xf32>, tensor<4x1xi64>
  %v2 = tosa.cast %idx1 : (tensor<4x1xi64>) -> tensor<4x1xi32>
  %v3 = "tosa.const"() <{values = dense<0> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
  %v4 = tosa.equal %v2, %v3 : (tensor<4x1xi32>, tensor<1x1xi32>) -> tensor<4x1xi1>
  %v5 = "tosa.const"() <{values = dense<0.0> : tensor<4x1xf32>}> : () -> tensor<4x1xf32>
  %v6 = tosa.select %v4, %val1, %v5 : (tensor<4x1xi1>, tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %v7 = tosa.reduce_sum %v6 {axis = 1 : i32} : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %v8 = "tosa.const"() <{values = dense<[[1.0, 0.5]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %v9 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %v10 = tosa.mul %x, %v8, %v9 : (tensor<4x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %v11 = tosa.clamp %v10 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %v12 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %v13 = tosa.mul %v7, %v11, %v12 : (tensor<4x1xf32>, tensor<4x2xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %v14 = "tosa.const"() <{values = dense<1> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
  %v15 = tosa.equal %v2, %v14 : (tensor<4x1xi32>, tensor<1x1xi32>) -> tensor<4x1xi1>
  %v16 = "tosa.const"() <{values = dense<0.0> : tensor<4x1xf32>}> : () -> tensor<4x1xf32>
  %v17 = tosa.select %v15, %val1, %v16 : (tensor<4x1xi1>, tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %v18 = tosa.reduce_sum %v17 {axis = 1 : i32} : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %v19 = "tosa.const"() <{values = dense<[[2.0, 0.0]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %v20 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %v21 = tosa.mul %x, %v19, %v20 : (tensor<4x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %v22 = tosa.clamp %v21 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %v23 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %v24 = tosa.mul %v18, %v22, %v23 : (tensor<4x1xf32>, tensor<4x2xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %v25 = tosa.add %v13, %v24 : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  return %v25 : tensor<4x2xf32>
}

// -----

// An expert that mixes tokens cannot run on just its tokens: left dense
// with a remark naming the op.
// CHECK-LABEL: func.func @token_mixing
// CHECK-NOT: compose.route
// CHECK: tessel.top_k
// CHECK-NOT: compose.route
func.func @token_mixing(%x: tensor<4x2xf32>, %s: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %val1, %idx1 = tessel.top_k %s {axis = 1 : i64, k = 1 : i64} : tensor<4x2xf32> -> tensor<4x1xf32>, tensor<4x1xi64>
  %v2 = tosa.cast %idx1 : (tensor<4x1xi64>) -> tensor<4x1xi32>
  %v3 = "tosa.const"() <{values = dense<0> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
  %v4 = tosa.equal %v2, %v3 : (tensor<4x1xi32>, tensor<1x1xi32>) -> tensor<4x1xi1>
  %v5 = "tosa.const"() <{values = dense<0.0> : tensor<4x1xf32>}> : () -> tensor<4x1xf32>
  %v6 = tosa.select %v4, %val1, %v5 : (tensor<4x1xi1>, tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %v7 = tosa.reduce_sum %v6 {axis = 1 : i32} : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %v8 = "tosa.const"() <{values = dense<[[1.0, 0.5]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %v9 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %v10 = tosa.mul %x, %v8, %v9 : (tensor<4x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %v11 = tosa.clamp %v10 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %v12 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %v13 = tosa.mul %v7, %v11, %v12 : (tensor<4x1xf32>, tensor<4x2xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %v14 = "tosa.const"() <{values = dense<1> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
  %v15 = tosa.equal %v2, %v14 : (tensor<4x1xi32>, tensor<1x1xi32>) -> tensor<4x1xi1>
  %v16 = "tosa.const"() <{values = dense<0.0> : tensor<4x1xf32>}> : () -> tensor<4x1xf32>
  %v17 = tosa.select %v15, %val1, %v16 : (tensor<4x1xi1>, tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %v18 = tosa.reduce_sum %v17 {axis = 1 : i32} : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %v19 = "tosa.const"() <{values = dense<[[2.0, 0.0]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %v20 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %v21 = tosa.mul %x, %v19, %v20 : (tensor<4x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %v22 = tosa.clamp %v21 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %v23 = tosa.reduce_sum %v22 {axis = 0 : i32} : (tensor<4x2xf32>) -> tensor<1x2xf32>
  %v24 = tosa.sub %v22, %v23 : (tensor<4x2xf32>, tensor<1x2xf32>) -> tensor<4x2xf32>
  %v25 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %v26 = tosa.mul %v18, %v24, %v25 : (tensor<4x1xf32>, tensor<4x2xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  // expected-remark @below {{mixture of experts left dense: expert 1: 'tosa.reduce_sum'}}
  %v27 = tosa.add %v13, %v26 : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  return %v27 : tensor<4x2xf32>
}


// -----

// einsum("te,etd->td", G, stack(y_e)): a batched matmul of the gate matrix
// (here a scatter of the top-1 values) with the stacked expert outputs is
// expanded into the sum of G[:, e] * y_e terms, then raised.
// CHECK-LABEL: func.func @einsum_combine
// CHECK-NEXT: %[[Y:.*]] = compose.route %arg0, %arg1 {experts = [@moe0_expert0, @moe0_expert1], k = 1 : i64}
// CHECK-NEXT: return %[[Y]]
func.func @einsum_combine(%x: tensor<4x2xf32>, %s: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %v, %i = tessel.top_k %s {axis = 1 : i64, k = 1 : i64} : tensor<4x2xf32> -> tensor<4x1xf32>, tensor<4x1xi64>
  %i32 = tosa.cast %i : (tensor<4x1xi64>) -> tensor<4x1xi32>
  %sh14 = tosa.const_shape {values = dense<[1, 4]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %irow = tosa.reshape %i32, %sh14 : (tensor<4x1xi32>, !tosa.shape<2>) -> tensor<1x4xi32>
  %base = "tosa.const"() <{values = dense<[[0, 2, 4, 6]]> : tensor<1x4xi32>}> : () -> tensor<1x4xi32>
  %at = tosa.add %irow, %base : (tensor<1x4xi32>, tensor<1x4xi32>) -> tensor<1x4xi32>
  %zeros = "tosa.const"() <{values = dense<0.0> : tensor<1x8x1xf32>}> : () -> tensor<1x8x1xf32>
  %sh141 = tosa.const_shape {values = dense<[1, 4, 1]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %vcol = tosa.reshape %v, %sh141 : (tensor<4x1xf32>, !tosa.shape<3>) -> tensor<1x4x1xf32>
  %gflat = tosa.scatter %zeros, %at, %vcol : (tensor<1x8x1xf32>, tensor<1x4xi32>, tensor<1x4x1xf32>) -> tensor<1x8x1xf32>
  %sh42 = tosa.const_shape {values = dense<[4, 2]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %g = tosa.reshape %gflat, %sh42 : (tensor<1x8x1xf32>, !tosa.shape<2>) -> tensor<4x2xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %w0 = "tosa.const"() <{values = dense<[[1.0, 0.5]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %m0 = tosa.mul %x, %w0, %shift : (tensor<4x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %y0 = tosa.clamp %m0 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %w1 = "tosa.const"() <{values = dense<[[2.0, 0.0]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %m1 = tosa.mul %x, %w1, %shift : (tensor<4x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %y1 = tosa.clamp %m1 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %sh142 = tosa.const_shape {values = dense<[1, 4, 2]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %y0s = tosa.reshape %y0, %sh142 : (tensor<4x2xf32>, !tosa.shape<3>) -> tensor<1x4x2xf32>
  %y1s = tosa.reshape %y1, %sh142 : (tensor<4x2xf32>, !tosa.shape<3>) -> tensor<1x4x2xf32>
  %stack = tosa.concat %y0s, %y1s {axis = 0 : i32} : (tensor<1x4x2xf32>, tensor<1x4x2xf32>) -> tensor<2x4x2xf32>
  %tokens_first = tosa.transpose %stack {perms = array<i32: 1, 0, 2>} : (tensor<2x4x2xf32>) -> tensor<4x2x2xf32>
  %sh412 = tosa.const_shape {values = dense<[4, 1, 2]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %g3 = tosa.reshape %g, %sh412 : (tensor<4x2xf32>, !tosa.shape<3>) -> tensor<4x1x2xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %mm = tosa.matmul %g3, %tokens_first, %zp, %zp : (tensor<4x1x2xf32>, tensor<4x2x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x1x2xf32>
  %out = tosa.reshape %mm, %sh42 : (tensor<4x1x2xf32>, !tosa.shape<2>) -> tensor<4x2xf32>
  return %out : tensor<4x2xf32>
}

// -----

// (G.unsqueeze(-1) * stack(y_e, 1)).sum(1): the same contraction as an
// elementwise product and a sum over the experts.
// CHECK-LABEL: func.func @weighted_sum_combine
// CHECK-NEXT: %[[Y:.*]] = compose.route %arg0, %arg1 {experts = [@moe0_expert0, @moe0_expert1], k = 1 : i64}
// CHECK-NEXT: return %[[Y]]
func.func @weighted_sum_combine(%x: tensor<4x2xf32>, %s: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %v, %i = tessel.top_k %s {axis = 1 : i64, k = 1 : i64} : tensor<4x2xf32> -> tensor<4x1xf32>, tensor<4x1xi64>
  %i32 = tosa.cast %i : (tensor<4x1xi64>) -> tensor<4x1xi32>
  %iota = "tosa.const"() <{values = dense<[[0, 1]]> : tensor<1x2xi32>}> : () -> tensor<1x2xi32>
  %hit = tosa.equal %i32, %iota : (tensor<4x1xi32>, tensor<1x2xi32>) -> tensor<4x2xi1>
  %zero = "tosa.const"() <{values = dense<0.0> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %g = tosa.select %hit, %v, %zero : (tensor<4x2xi1>, tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x2xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %w0 = "tosa.const"() <{values = dense<[[1.0, 0.5]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %y0 = tosa.mul %x, %w0, %shift : (tensor<4x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %w1 = "tosa.const"() <{values = dense<[[2.0, 0.0]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %y1 = tosa.mul %x, %w1, %shift : (tensor<4x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %sh412 = tosa.const_shape {values = dense<[4, 1, 2]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %y0s = tosa.reshape %y0, %sh412 : (tensor<4x2xf32>, !tosa.shape<3>) -> tensor<4x1x2xf32>
  %y1s = tosa.reshape %y1, %sh412 : (tensor<4x2xf32>, !tosa.shape<3>) -> tensor<4x1x2xf32>
  %stack = tosa.concat %y0s, %y1s {axis = 1 : i32} : (tensor<4x1x2xf32>, tensor<4x1x2xf32>) -> tensor<4x2x2xf32>
  %sh421 = tosa.const_shape {values = dense<[4, 2, 1]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %g3 = tosa.reshape %g, %sh421 : (tensor<4x2xf32>, !tosa.shape<3>) -> tensor<4x2x1xf32>
  %weighted = tosa.mul %g3, %stack, %shift : (tensor<4x2x1xf32>, tensor<4x2x2xf32>, tensor<1xi8>) -> tensor<4x2x2xf32>
  %summed = tosa.reduce_sum %weighted {axis = 1 : i32} : (tensor<4x2x2xf32>) -> tensor<4x1x2xf32>
  %sh42 = tosa.const_shape {values = dense<[4, 2]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %out = tosa.reshape %summed, %sh42 : (tensor<4x1x2xf32>, !tosa.shape<2>) -> tensor<4x2xf32>
  return %out : tensor<4x2xf32>
}

// -----

// A contraction whose matrix is not computed from a top-k (an input here)
// is no gate: left as it is.
// CHECK-LABEL: func.func @contraction_without_top_k
// CHECK: tosa.matmul
// CHECK-NOT: compose.route
func.func @contraction_without_top_k(%x: tensor<4x2xf32>, %g: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %w0 = "tosa.const"() <{values = dense<[[1.0, 0.5]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %y0 = tosa.mul %x, %w0, %shift : (tensor<4x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %w1 = "tosa.const"() <{values = dense<[[2.0, 0.0]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %y1 = tosa.mul %x, %w1, %shift : (tensor<4x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %sh142 = tosa.const_shape {values = dense<[1, 4, 2]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %y0s = tosa.reshape %y0, %sh142 : (tensor<4x2xf32>, !tosa.shape<3>) -> tensor<1x4x2xf32>
  %y1s = tosa.reshape %y1, %sh142 : (tensor<4x2xf32>, !tosa.shape<3>) -> tensor<1x4x2xf32>
  %stack = tosa.concat %y0s, %y1s {axis = 0 : i32} : (tensor<1x4x2xf32>, tensor<1x4x2xf32>) -> tensor<2x4x2xf32>
  %tokens_first = tosa.transpose %stack {perms = array<i32: 1, 0, 2>} : (tensor<2x4x2xf32>) -> tensor<4x2x2xf32>
  %sh412 = tosa.const_shape {values = dense<[4, 1, 2]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %g3 = tosa.reshape %g, %sh412 : (tensor<4x2xf32>, !tosa.shape<3>) -> tensor<4x1x2xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %mm = tosa.matmul %g3, %tokens_first, %zp, %zp : (tensor<4x1x2xf32>, tensor<4x2x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x1x2xf32>
  %sh42 = tosa.const_shape {values = dense<[4, 2]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %out = tosa.reshape %mm, %sh42 : (tensor<4x1x2xf32>, !tosa.shape<2>) -> tensor<4x2xf32>
  return %out : tensor<4x2xf32>
}
