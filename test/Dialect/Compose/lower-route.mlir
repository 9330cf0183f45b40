// RUN: tessel-opt %s -split-input-file --compose-lower-route | FileCheck %s --check-prefix=GROUPED
// RUN: tessel-opt %s -split-input-file --compose-lower-route=mode=dense | FileCheck %s --check-prefix=DENSE
// RUN: not tessel-opt %s -split-input-file --compose-lower-route=mode=sparse 2>&1 | FileCheck %s --check-prefix=BADMODE

// BADMODE: option 'mode' must be 'grouped' or 'dense', got 'sparse'

compose.component @e0(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  compose.return %x : tensor<?x4xf32>
}
compose.component @e1(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %y = tosa.exp %x : (tensor<?x4xf32>) -> tensor<?x4xf32>
  compose.return %y : tensor<?x4xf32>
}
compose.component @e2(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %y = tosa.tanh %x : (tensor<?x4xf32>) -> tensor<?x4xf32>
  compose.return %y : tensor<?x4xf32>
}

// Top-2 of 3 experts by tessel.top_k; each column's expert as i32, its
// weight, and its one-hot mask.
// GROUPED-LABEL: func.func @top2
// GROUPED-SAME: (%[[X:.*]]: tensor<8x4xf32>, %[[P:.*]]: tensor<8x3xf32>)
// GROUPED-DAG: %[[IOTA:.*]] = "tosa.const"() <{values = dense<{{\[\[}}0, 1, 2]]> : tensor<1x3xi32>}>
// GROUPED: %[[V:.*]], %[[I:.*]] = tessel.top_k %[[P]] {axis = 1 : i64, k = 2 : i64} : tensor<8x3xf32> -> tensor<8x2xf32>, tensor<8x2xi64>
// GROUPED: %[[I0:.*]] = tosa.slice %[[I]]
// GROUPED: %[[C0:.*]] = tosa.cast %[[I0]] : (tensor<8x1xi64>) -> tensor<8x1xi32>
// GROUPED: %[[W0:.*]] = tosa.slice %[[V]]
// GROUPED: tosa.equal %[[IOTA]], %[[C0]] : (tensor<1x3xi32>, tensor<8x1xi32>) -> tensor<8x3xi1>
// GROUPED: %[[W1:.*]] = tosa.slice %[[V]]
// Renormalized weights.
// GROUPED: %[[SUM:.*]] = tosa.add %[[W0]], %[[W1]]
// GROUPED: tosa.reciprocal %[[SUM]]
// Counting sort: counts and ranks, exclusive offsets, then the placement.
// GROUPED: %[[COUNT:.*]]:2 = scf.for %{{.*}} = %c0 to %c16 {{.*}} -> (tensor<3xi32>, tensor<16xi32>)
// GROUPED: %[[OFFS:.*]]:2 = scf.for %{{.*}} = %c0 to %c3 {{.*}} -> (tensor<3xi32>, i32)
// GROUPED: %[[PLACE:.*]]:2 = scf.for %{{.*}} = %c0 to %c16 {{.*}} -> (tensor<16xi32>, tensor<16xi32>)
// GROUPED:   arith.divui %{{.*}}, %c2 : index
// Tokens gathered in expert order; each expert on its own rows only.
// GROUPED: %[[XS:.*]] = tosa.gather %{{.*}}, %{{.*}} : (tensor<1x8x4xf32>, tensor<1x16xi32>) -> tensor<1x16x4xf32>
// GROUPED: %[[ROWS:.*]] = tosa.reshape %[[XS]]
// GROUPED: scf.if
// GROUPED:   %[[SL:.*]] = tensor.extract_slice %[[ROWS]][%{{.*}}, 0] [%{{.*}}, 4] [1, 1] : tensor<16x4xf32> to tensor<?x4xf32>
// GROUPED:   compose.call @e0(%[[SL]]) : (tensor<?x4xf32>) -> tensor<?x4xf32>
// GROUPED:   tensor.insert_slice
// GROUPED: scf.if
// GROUPED:   compose.call @e1
// GROUPED: scf.if
// GROUPED:   compose.call @e2
// Combine: each token's k rows gathered back, weighted, summed.
// GROUPED: tosa.gather %{{.*}}, %{{.*}} : (tensor<1x16x4xf32>, tensor<1x16xi32>) -> tensor<1x16x4xf32>
// GROUPED: tosa.mul %{{.*}}, %{{.*}}, %{{.*}} : (tensor<8x2x4xf32>, tensor<8x2x1xf32>, tensor<1xi8>) -> tensor<8x2x4xf32>
// GROUPED: tosa.reduce_sum %{{.*}} {axis = 1 : i32} : (tensor<8x2x4xf32>) -> tensor<8x1x4xf32>
// GROUPED-NOT: compose.route

// Dense reference: a gate matrix and every expert on every token.
// DENSE-LABEL: func.func @top2
// DENSE-NOT: scf.for
// DENSE: %[[G0:.*]] = tosa.select %{{.*}}, %{{.*}}, %{{.*}} : (tensor<8x3xi1>, tensor<8x1xf32>, tensor<1x1xf32>) -> tensor<8x3xf32>
// DENSE: %[[G1:.*]] = tosa.select %{{.*}}, %{{.*}}, %{{.*}} : (tensor<8x3xi1>, tensor<8x1xf32>, tensor<1x1xf32>) -> tensor<8x3xf32>
// DENSE: %[[G:.*]] = tosa.add %[[G0]], %[[G1]]
// DENSE: %[[Y0:.*]] = compose.call @e0(%{{.*}}) : (tensor<8x4xf32>) -> tensor<8x4xf32>
// DENSE: %[[C0:.*]] = tosa.slice %[[G]]
// DENSE: tosa.mul %[[Y0]], %[[C0]]
// DENSE: compose.call @e1(%{{.*}}) : (tensor<8x4xf32>) -> tensor<8x4xf32>
// DENSE: compose.call @e2(%{{.*}}) : (tensor<8x4xf32>) -> tensor<8x4xf32>
// DENSE-NOT: compose.route
func.func @top2(%x: tensor<8x4xf32>, %p: tensor<8x3xf32>) -> tensor<8x4xf32> {
  %y = compose.route %x, %p {experts = [@e0, @e1, @e2], k = 2 : i64, renormalize}
      : (tensor<8x4xf32>, tensor<8x3xf32>) -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

compose.component @e0(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  compose.return %x : tensor<?x4xf32>
}

// Capacity: the count loop also records which assignments are kept, and
// the combine zeroes the dropped ones.
// GROUPED-LABEL: func.func @capacity
// GROUPED-NOT: tosa.reciprocal
// GROUPED: scf.for {{.*}} -> (tensor<1xi32>, tensor<8xi32>, tensor<8xi1>)
// GROUPED:   %[[C:.*]] = arith.cmpi slt, %{{.*}}, %c3_i32 : i32
// GROUPED: tosa.select %{{.*}}, %{{.*}}, %{{.*}} : (tensor<8x1x1xi1>, tensor<8x1x4xf32>, tensor<1x1x1xf32>) -> tensor<8x1x4xf32>
// DENSE-LABEL: func.func @capacity
// DENSE: scf.for {{.*}} -> (tensor<1xi32>, tensor<8xi32>, tensor<8xi1>)
// DENSE: tosa.select %{{.*}}, %{{.*}}, %{{.*}} : (tensor<8x1xi1>, tensor<8x1xf32>, tensor<1x1xf32>) -> tensor<8x1xf32>
func.func @capacity(%x: tensor<8x4xf32>, %p: tensor<8x1xf32>) -> tensor<8x4xf32> {
  %y = compose.route %x, %p {experts = [@e0], k = 1 : i64, capacity = 3 : i64}
      : (tensor<8x4xf32>, tensor<8x1xf32>) -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}
