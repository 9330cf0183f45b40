// RUN: tessel-opt %s -split-input-file --compose-lower-route="expert-parallel=2" | FileCheck %s
// RUN: tessel-opt %s -split-input-file --compose-lower-route="expert-parallel=2 placement=1,3" | FileCheck %s --check-prefix=PLACED

compose.component @e0(%x: tensor<?x16xf32>) -> tensor<?x16xf32> {
  compose.return %x : tensor<?x16xf32>
}
compose.component @e1(%x: tensor<?x16xf32>) -> tensor<?x16xf32> {
  compose.return %x : tensor<?x16xf32>
}
compose.component @e2(%x: tensor<?x16xf32>) -> tensor<?x16xf32> {
  compose.return %x : tensor<?x16xf32>
}
compose.component @e3(%x: tensor<?x16xf32>) -> tensor<?x16xf32> {
  compose.return %x : tensor<?x16xf32>
}

// Each of the 2 processes takes 4 of the 8 tokens (rows [4 * rank, +4)),
// sorts its 4 x 2 assignments by expert, gathers every process's counts,
// sends the rows to the owners of experts {0, 1} (rank 0) and {2, 3}
// (rank 1), runs its own experts on what each process sent, sends the
// results back and gathers the combined rows.
// CHECK: module attributes {tessel.ranks = 2 : i64}
// CHECK-LABEL: func.func @even
// CHECK: %[[COMM:.*]] = mpi.comm_world : !mpi.comm
// CHECK: %[[RANK32:.*]] = mpi.comm_rank(%[[COMM]]) : i32
// CHECK: %[[RANK:.*]] = arith.index_cast %[[RANK32]] : i32 to index
// CHECK: %[[ROW0:.*]] = arith.muli %[[RANK]], %c4
// CHECK: tensor.extract_slice %{{.*}}[%[[ROW0]], 0] [4, 16] [1, 1] : tensor<8x16xf32> to tensor<4x16xf32>
// CHECK-NOT: tensor.pad
// CHECK: tessel.top_k %{{.*}} {axis = 1 : i64, k = 2 : i64} : tensor<4x4xf32>
// CHECK: %[[COUNTS:.*]] = tessel.all_gather %{{.*}}, %[[COMM]] outs(%{{.*}} : tensor<2x4xi32>) : tensor<1x4xi32> -> tensor<2x4xi32>
// CHECK: %[[RECV:.*]] = tessel.all_to_all_v %{{.*}}, %[[SEND:.*]], %[[RECVN:.*]], %[[COMM]] outs(%{{.*}} : tensor<16x16xf32>) : tensor<8x16xf32>, tensor<2xi32>, tensor<2xi32> -> tensor<16x16xf32>
// CHECK: arith.cmpi eq, %[[RANK]], %c0
// CHECK: scf.for %[[S:.*]] = %c0{{.*}} to %c2{{.*}} step
// CHECK: tensor.extract %[[COUNTS]][%[[S]], %c0
// CHECK: compose.call @e0
// CHECK: compose.call @e1
// CHECK: arith.cmpi eq, %[[RANK]], %c1
// CHECK: compose.call @e2
// CHECK: compose.call @e3
// CHECK: %[[BACK:.*]] = tessel.all_to_all_v %{{.*}}, %[[RECVN]], %[[SEND]], %[[COMM]] outs(%{{.*}} : tensor<8x16xf32>) : tensor<16x16xf32>, tensor<2xi32>, tensor<2xi32> -> tensor<8x16xf32>
// CHECK: %[[ALL:.*]] = tessel.all_gather %{{.*}}, %[[COMM]] outs(%{{.*}} : tensor<8x16xf32>) : tensor<4x16xf32> -> tensor<8x16xf32>
// CHECK: return %[[ALL]]
// PLACED-LABEL: func.func @even
// PLACED: arith.cmpi eq, %{{.*}}, %c0
// PLACED: compose.call @e0
// PLACED: arith.cmpi eq, %{{.*}}, %c1
// PLACED: compose.call @e1
// PLACED: compose.call @e2
// PLACED: compose.call @e3
func.func @even(%x: tensor<8x16xf32>, %p: tensor<8x4xf32>) -> tensor<8x16xf32> {
  %y = compose.route %x, %p {experts = [@e0, @e1, @e2, @e3], k = 2 : i64, renormalize}
      : (tensor<8x16xf32>, tensor<8x4xf32>) -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

// -----

compose.component @e0(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  compose.return %x : tensor<?x4xf32>
}
compose.component @e1(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  compose.return %x : tensor<?x4xf32>
}
compose.component @e2(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  compose.return %x : tensor<?x4xf32>
}
compose.component @e3(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  compose.return %x : tensor<?x4xf32>
}

// 5 tokens on 2 processes: shares of 3, the second padded by one row,
// whose assignments go to group 4 (no expert: sorted last, never sent);
// the gathered 6 rows are cut to 5.
// CHECK-LABEL: func.func @padded
// CHECK: tensor.pad %{{.*}} low[0, 0] high[1, 0]
// CHECK: tensor.extract_slice %{{.*}}[%{{.*}}, 0] [3, 4] [1, 1] : tensor<6x4xf32> to tensor<3x4xf32>
// CHECK: %[[VALID:.*]] = tosa.greater %{{.*}}, %{{.*}} : (tensor<1x1xi32>, tensor<3x1xi32>) -> tensor<3x1xi1>
// CHECK: %[[NONE:.*]] = "tosa.const"() <{values = dense<4> : tensor<1x1xi32>}>
// CHECK: tosa.select %[[VALID]], %{{.*}}, %[[NONE]]
// CHECK: scf.for {{.*}} -> (tensor<5xi32>, tensor<6xi32>)
// CHECK: tessel.all_gather %{{.*}} : tensor<1x4xi32> -> tensor<2x4xi32>
// CHECK: tessel.all_to_all_v {{.*}} : tensor<6x4xf32>, tensor<2xi32>, tensor<2xi32> -> tensor<12x4xf32>
// CHECK: %[[ALL:.*]] = tessel.all_gather %{{.*}} : tensor<3x4xf32> -> tensor<6x4xf32>
// CHECK: %[[CUT:.*]] = tosa.slice %[[ALL]]
// CHECK-SAME: -> tensor<5x4xf32>
// CHECK: return %[[CUT]]
func.func @padded(%x: tensor<5x4xf32>, %p: tensor<5x4xf32>) -> tensor<5x4xf32> {
  %y = compose.route %x, %p {experts = [@e0, @e1, @e2, @e3], k = 2 : i64}
      : (tensor<5x4xf32>, tensor<5x4xf32>) -> tensor<5x4xf32>
  return %y : tensor<5x4xf32>
}

// -----

compose.component @e0(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  compose.return %x : tensor<?x4xf32>
}
compose.component @e1(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  compose.return %x : tensor<?x4xf32>
}
compose.component @e2(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  compose.return %x : tensor<?x4xf32>
}
compose.component @e3(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  compose.return %x : tensor<?x4xf32>
}

// With a capacity the sort keeps every assignment; after the counts are
// gathered, each process keeps the first min(max(3 - earlier, 0), mine)
// rows of each expert's group (earlier: the rows of the processes before
// it), and each owner runs its expert on that many of each sender's rows.
// CHECK-LABEL: func.func @capacity
// CHECK: %[[COUNTS:.*]] = tessel.all_gather
// CHECK: %[[BEFORE:.*]] = tosa.greater %{{.*}}, %{{.*}} : (tensor<1x1xi32>, tensor<2x1xi32>) -> tensor<2x1xi1>
// CHECK: %[[MASKED:.*]] = tosa.select %[[BEFORE]], %[[COUNTS]], %{{.*}} : (tensor<2x1xi1>, tensor<2x4xi32>, tensor<1x1xi32>) -> tensor<2x4xi32>
// CHECK: %[[EARLIER:.*]] = tosa.reduce_sum %[[MASKED]] {axis = 0 : i32}
// CHECK: scf.for {{.*}} -> (tensor<4xi1>)
// CHECK: arith.subi %c3_i32
// CHECK: arith.maxsi
// CHECK: arith.minsi
// CHECK: tessel.all_to_all_v
// CHECK: scf.for {{.*}} -> (tensor<8x4xf32>, i32, i32)
// CHECK: arith.minsi
// CHECK: compose.call @e0
// CHECK: tessel.all_to_all_v
// CHECK: tosa.select
// CHECK: tessel.all_gather
func.func @capacity(%x: tensor<4x4xf32>, %p: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %y = compose.route %x, %p {experts = [@e0, @e1, @e2, @e3], k = 2 : i64, capacity = 3 : i64}
      : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}
