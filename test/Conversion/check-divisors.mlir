// RUN: tessel-opt %s -split-input-file -tessel-check-divisors | FileCheck %s
// RUN: tessel-opt %s -split-input-file -tessel-check-divisors=report=false | FileCheck %s --check-prefix=QUIET

// A signed division of tensors: the divisor guarded elementwise (1 where
// it is 0, or -1 under an INT_MIN dividend), one reduction (any zero?),
// and the call failing with status -5 on a zero.
// CHECK-LABEL: func.func private @__tessel_set_status(i32)
// CHECK-LABEL: func.func @divsi(
// CHECK-SAME: %[[X:.*]]: tensor<4xi32>, %[[Y:.*]]: tensor<4xi32>
// CHECK: %[[G:.*]] = linalg.generic {{.*}} ins(%[[Y]], %[[X]] : tensor<4xi32>, tensor<4xi32>)
// CHECK:   arith.constant -2147483648 : i32
// CHECK:   arith.select
// CHECK: %[[ALL:.*]] = linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[Y]] : tensor<4xi32>)
// CHECK:   arith.cmpi ne
// CHECK: %[[OK:.*]] = tensor.extract %[[ALL]][]
// CHECK: %[[SAFE:.*]] = scf.if %[[OK]] -> (tensor<4xi32>) {
// CHECK:   scf.yield %[[G]]
// CHECK: } else {
// CHECK:   %[[CODE:.*]] = arith.constant -5 : i32
// CHECK:   call @__tessel_set_status(%[[CODE]])
// CHECK: arith.divsi %[[X]], %[[SAFE]] : tensor<4xi32>
// QUIET-LABEL: func.func @divsi(
// QUIET-NOT: scf.if
// QUIET-NOT: __tessel_set_status
// QUIET: %[[G:.*]] = linalg.generic
// QUIET: arith.divsi %{{.*}}, %[[G]] : tensor<4xi32>
func.func @divsi(%x: tensor<4xi32>, %y: tensor<4xi32>) -> tensor<4xi32> {
  %0 = arith.divsi %x, %y : tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// A constant divisor without 0 and -1 needs nothing; one with -1 does.
// CHECK-LABEL: func.func @constant_divisors(
// CHECK: %[[C:.*]] = arith.constant dense<[2, -3]> : tensor<2xi64>
// CHECK: %[[R:.*]] = arith.remsi %arg0, %[[C]] : tensor<2xi64>
// CHECK: scf.if
// CHECK: arith.divsi %[[R]], %{{.*}} : tensor<2xi64>
func.func @constant_divisors(%x: tensor<2xi64>) -> tensor<2xi64> {
  %c = arith.constant dense<[2, -3]> : tensor<2xi64>
  %m = arith.constant dense<[-1, 5]> : tensor<2xi64>
  %0 = arith.remsi %x, %c : tensor<2xi64>
  %1 = arith.divsi %0, %m : tensor<2xi64>
  return %1 : tensor<2xi64>
}

// -----

// Unsigned: no overflow, the zero guard only.
// CHECK-LABEL: func.func @divui(
// CHECK: linalg.generic {{.*}} ins(%arg1 : tensor<3xi16>)
// CHECK-NOT: -32768
// CHECK: arith.divui %arg0, %{{.*}} : tensor<3xi16>
func.func @divui(%x: tensor<3xi16>, %y: tensor<3xi16>) -> tensor<3xi16> {
  %0 = arith.divui %x, %y : tensor<3xi16>
  return %0 : tensor<3xi16>
}

// -----

// A broadcasting tosa.intdiv: the divisor's zeros guarded on its own shape.
// CHECK-LABEL: func.func @intdiv_broadcast(
// CHECK: %[[G:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<1x3xi32>)
// CHECK: %[[S:.*]] = scf.if
// CHECK: tosa.intdiv %arg0, %[[S]] : (tensor<2x3xi32>, tensor<1x3xi32>) -> tensor<2x3xi32>
func.func @intdiv_broadcast(%x: tensor<2x3xi32>, %y: tensor<1x3xi32>) -> tensor<2x3xi32> {
  %0 = tosa.intdiv %x, %y : (tensor<2x3xi32>, tensor<1x3xi32>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

// Floats divide without traps: untouched.
// CHECK-LABEL: func.func @float_division(
// CHECK-NEXT: arith.divf
func.func @float_division(%x: tensor<2xf32>, %y: tensor<2xf32>) -> tensor<2xf32> {
  %0 = arith.divf %x, %y : tensor<2xf32>
  return %0 : tensor<2xf32>
}
