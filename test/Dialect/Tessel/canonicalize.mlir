// RUN: tessel-opt %s -split-input-file -canonicalize | FileCheck %s

// A require whose condition is a constant true is its value: nothing can
// fail. One that may fail stays, even with its result unused (it fails
// the call).
// CHECK-LABEL: func @require_true
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK-NOT: tessel.require
// CHECK: return %[[X]]
func.func @require_true(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %true = arith.constant true
  %ok = tensor.from_elements %true : tensor<i1>
  %r = tessel.require %ok, %x else %y {status = -3 : i32} : tensor<i1>, tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// CHECK-LABEL: func @require_false_or_unknown
// CHECK: tessel.require %{{.*}}, %{{.*}} else %{{.*}} {status = -3 : i32}
// CHECK: tessel.require %{{.*}}, %{{.*}} else %{{.*}} {status = -4 : i32}
func.func @require_false_or_unknown(%x: tensor<4xf32>, %y: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  %false = arith.constant false
  %no = tensor.from_elements %false : tensor<i1>
  %r = tessel.require %no, %x else %y {status = -3 : i32} : tensor<i1>, tensor<4xf32>
  %maybe = tensor.from_elements %c : tensor<i1>
  %s = tessel.require %maybe, %x else %y {status = -4 : i32} : tensor<i1>, tensor<4xf32>
  return %r : tensor<4xf32>
}
