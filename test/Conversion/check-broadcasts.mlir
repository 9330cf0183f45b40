// RUN: tessel-opt %s -split-input-file -tessel-check-broadcasts | FileCheck %s

// Two dynamic batches: each must be the larger or 1; otherwise the call
// fails (status -3) and the add runs on zero operands of one row.
// CHECK-LABEL: func.func private @__tessel_set_status(i32)
// CHECK-LABEL: func.func @two_dynamic(
// CHECK-SAME: %[[X:.*]]: tensor<?x4xf32>, %[[Y:.*]]: tensor<?x4xf32>
// CHECK-DAG: %[[DX:.*]] = tensor.dim %[[X]], %c0
// CHECK-DAG: %[[DY:.*]] = tensor.dim %[[Y]], %c0
// CHECK: %[[MAX:.*]] = arith.maxui %[[DX]], %[[DY]]
// CHECK: arith.cmpi eq, %[[DX]], %[[MAX]]
// CHECK: %[[OK:.*]] = arith.andi
// CHECK: %[[SAFE:.*]]:2 = scf.if %[[OK]] -> (tensor<?x4xf32>, tensor<?x4xf32>) {
// CHECK:   scf.yield %[[X]], %[[Y]]
// CHECK: } else {
// CHECK:   %[[CODE:.*]] = arith.constant -3 : i32
// CHECK:   call @__tessel_set_status(%[[CODE]])
// CHECK:   tensor.empty(%c1{{.*}}) : tensor<?x4xf32>
// CHECK:   linalg.fill
// CHECK: tosa.add %[[SAFE]]#0, %[[SAFE]]#1
func.func @two_dynamic(%x: tensor<?x4xf32>, %y: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %s = tosa.add %x, %y : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return %s : tensor<?x4xf32>
}

// -----

// A dynamic size against a static one other than 1: checked; only the
// dynamic operand is replaced. (tosa.mul's shift, of another rank, is not
// an operand that broadcasts.)
// CHECK-LABEL: func.func @dynamic_against_static(
// CHECK-SAME: %[[X:.*]]: tensor<?x4xf32>, %[[Y:.*]]: tensor<3x4xf32>
// CHECK: %[[SAFE:.*]] = scf.if %{{.*}} -> (tensor<?x4xf32>) {
// CHECK: tosa.mul %[[SAFE]], %[[Y]], %{{.*}} :
func.func @dynamic_against_static(%x: tensor<?x4xf32>, %y: tensor<3x4xf32>) -> tensor<?x4xf32> {
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %s = tosa.mul %x, %y, %shift : (tensor<?x4xf32>, tensor<3x4xf32>, tensor<1xi8>) -> tensor<?x4xf32>
  return %s : tensor<?x4xf32>
}

// -----

// Nothing can disagree: a dynamic size against 1s, static shapes, a unary
// op (its zero points are not broadcast operands).
// CHECK-LABEL: func.func @safe(
// CHECK-NOT: scf.if
// CHECK-NOT: __tessel_set_status
// CHECK: return
func.func @safe(%x: tensor<?x4xf32>, %b: tensor<1x4xf32>, %s: tensor<2x4xf32>) -> (tensor<?x4xf32>, tensor<2x4xf32>, tensor<?x4xf32>) {
  %a = tosa.add %x, %b : (tensor<?x4xf32>, tensor<1x4xf32>) -> tensor<?x4xf32>
  %t = tosa.sub %s, %s : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %n = tosa.negate %x, %zp, %zp : (tensor<?x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<?x4xf32>
  return %a, %t, %n : tensor<?x4xf32>, tensor<2x4xf32>, tensor<?x4xf32>
}

// -----

// select's three operands, two of them dynamic in different dimensions.
// CHECK-LABEL: func.func @select(
// CHECK: scf.if %{{.*}} -> (tensor<?x4xi1>, tensor<2x?xf32>) {
// CHECK: tosa.select
func.func @select(%c: tensor<?x4xi1>, %a: tensor<2x?xf32>, %b: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %s = tosa.select %c, %a, %b : (tensor<?x4xi1>, tensor<2x?xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return %s : tensor<2x4xf32>
}

// -----

// tosa.matmul does not broadcast: A's dynamic batch must equal B's 1.
// CHECK-LABEL: func.func @matmul(
// CHECK-SAME: %[[A:.*]]: tensor<?x1x8xf32>, %[[B:.*]]: tensor<1x8x4xf32>
// CHECK: %[[DA:.*]] = tensor.dim %[[A]], %c0
// CHECK: %[[OK:.*]] = arith.cmpi eq, %[[DA]], %c1
// CHECK: %[[SAFE:.*]]:2 = scf.if %[[OK]] -> (tensor<?x1x8xf32>, tensor<1x8x4xf32>) {
// CHECK: call @__tessel_set_status
// CHECK: tosa.matmul %[[SAFE]]#0, %[[SAFE]]#1
func.func @matmul(%a: tensor<?x1x8xf32>, %b: tensor<1x8x4xf32>) -> tensor<?x1x4xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %m = tosa.matmul %a, %b, %zp, %zp : (tensor<?x1x8xf32>, tensor<1x8x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<?x1x4xf32>
  return %m : tensor<?x1x4xf32>
}

// -----

// Sizes of one name (a graph input's `seq`, from tessel.dim_names) are
// equal on every call that has not failed: checked for equality, not for
// broadcasting a 1, so that tessel-drop-unit-broadcasts can drop
// tosa-to-linalg's broadcast guards after the check.
// CHECK-LABEL: func.func @named_sizes(
// CHECK-SAME: %[[X:[^:]*]]: tensor<?x4xf32> {{.*}}, %[[Y:[^:]*]]: tensor<?x4xf32>
// CHECK: %[[T:.*]] = tosa.tanh %[[Y]]
// CHECK-DAG: %[[DX:.*]] = tensor.dim %[[X]], %c0
// CHECK-DAG: %[[DY:.*]] = tensor.dim %[[T]], %c0
// CHECK-NOT: arith.maxui
// CHECK: %[[OK:.*]] = arith.cmpi eq, %[[DY]], %[[DX]]
// CHECK-NOT: arith.ori
// CHECK: scf.if %[[OK]] -> (tensor<?x4xf32>, tensor<?x4xf32>)
func.func @named_sizes(%x: tensor<?x4xf32> {tessel.dim_names = ["seq", ""]}, %y: tensor<?x4xf32> {tessel.dim_names = ["seq", ""]}) -> tensor<?x4xf32> {
  %t = tosa.tanh %y : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %s = tosa.add %x, %t : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return %s : tensor<?x4xf32>
}

// -----

// Two names (or one unnamed size): either may be 1 and broadcast.
// CHECK-LABEL: func.func @different_names(
// CHECK: arith.maxui
// CHECK: arith.ori
// CHECK-LABEL: func.func @unnamed(
// CHECK: arith.maxui
// CHECK: arith.ori
func.func @different_names(%x: tensor<?x4xf32> {tessel.dim_names = ["seq", ""]}, %y: tensor<?x4xf32> {tessel.dim_names = ["len", ""]}) -> tensor<?x4xf32> {
  %s = tosa.add %x, %y : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return %s : tensor<?x4xf32>
}
func.func @unnamed(%x: tensor<?x4xf32> {tessel.dim_names = ["seq", ""]}, %y: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %s = tosa.add %x, %y : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return %s : tensor<?x4xf32>
}
