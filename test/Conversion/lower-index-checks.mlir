// RUN: tessel-opt %s -split-input-file -tessel-lower-index-checks | FileCheck %s
// RUN: tessel-opt %s -split-input-file -tessel-lower-index-checks=report=false | FileCheck %s --check-prefix=CLAMP

// Every index must lie in [-4, 4): one reduction to an i1, then the
// indices, or (the call failing with status -4) zeros.
// CHECK-LABEL: func.func private @__tessel_set_status(i32)
// CHECK-LABEL: func.func @gather_indices(
// CHECK-SAME: %[[X:.*]]: tensor<4x3xf32>, %[[I:.*]]: tensor<2xi64>
// CHECK: %[[ALL:.*]] = linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[I]] : tensor<2xi64>)
// CHECK:   arith.constant -4 : i64
// CHECK:   arith.constant 4 : i64
// CHECK:   arith.cmpi sge
// CHECK:   arith.cmpi slt
// CHECK: %[[OK:.*]] = tensor.extract %[[ALL]][] : tensor<i1>
// CHECK: %[[SAFE:.*]] = scf.if %[[OK]] -> (tensor<2xi64>) {
// CHECK:   scf.yield %[[I]]
// CHECK: } else {
// CHECK:   %[[CODE:.*]] = arith.constant -4 : i32
// CHECK:   call @__tessel_set_status(%[[CODE]])
// CHECK:   linalg.fill
// CHECK: tosa.cast %[[SAFE]]
// CHECK-NOT: tessel.check_indices
func.func @gather_indices(%x: tensor<4x3xf32>, %i: tensor<2xi64>) -> tensor<2xi32> {
  %c = tessel.check_indices %i {lower = -4 : i64, upper = 4 : i64} : tensor<2xi64>
  %0 = tosa.cast %c : (tensor<2xi64>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

// Dynamic sizes: the zeros take the indices' sizes.
// CHECK-LABEL: func.func @dynamic(
// CHECK-SAME: %[[I:.*]]: tensor<?x2xi32>
// CHECK: scf.if
// CHECK: } else {
// CHECK:   %[[D:.*]] = tensor.dim %[[I]], %c0
// CHECK:   tensor.empty(%[[D]]) : tensor<?x2xi32>
func.func @dynamic(%i: tensor<?x2xi32>) -> tensor<?x2xi32> {
  %c = tessel.check_indices %i {lower = 0 : i64, upper = 10 : i64} : tensor<?x2xi32>
  return %c : tensor<?x2xi32>
}

// -----

// report=false (the GPU target): clamped into [lower, upper), no status.
// RUN: tessel-opt %s -split-input-file -tessel-lower-index-checks=report=false | FileCheck %s --check-prefix=CLAMP
// CLAMP-LABEL: func.func @clamped(
// CLAMP-NOT: __tessel_set_status
// CLAMP: linalg.generic
// CLAMP:   %[[LO:.*]] = arith.constant -3 : i32
// CLAMP:   %[[HI:.*]] = arith.constant 2 : i32
// CLAMP:   %[[A:.*]] = arith.maxsi %{{.*}}, %[[LO]]
// CLAMP:   arith.minsi %[[A]], %[[HI]]
func.func @clamped(%i: tensor<5xi32>) -> tensor<5xi32> {
  %c = tessel.check_indices %i {lower = -3 : i64, upper = 3 : i64} : tensor<5xi32>
  return %c : tensor<5xi32>
}

// -----

// A tosa.gather of computed indices (an MLIR model) is checked on [0, K);
// constant indices in range are not.
// CHECK-LABEL: func.func @raw_gather(
// CHECK-SAME: %[[V:.*]]: tensor<1x5x2xf32>, %[[I:.*]]: tensor<1x3xi32>
// CHECK: arith.constant 0 : i32
// CHECK: arith.constant 5 : i32
// CHECK: %[[SAFE:.*]] = scf.if
// CHECK: tosa.gather %[[V]], %[[SAFE]]
// CHECK: %[[C:.*]] = "tosa.const"() <{values = dense<{{\[}}[0, 4, 2]]> : tensor<1x3xi32>}>
// CHECK-NOT: scf.if
// CHECK: tosa.gather %[[V]], %[[C]]
func.func @raw_gather(%v: tensor<1x5x2xf32>, %i: tensor<1x3xi32>) -> (tensor<1x3x2xf32>, tensor<1x3x2xf32>) {
  %0 = tosa.gather %v, %i : (tensor<1x5x2xf32>, tensor<1x3xi32>) -> tensor<1x3x2xf32>
  %c = "tosa.const"() <{values = dense<[[0, 4, 2]]> : tensor<1x3xi32>}> : () -> tensor<1x3xi32>
  %1 = tosa.gather %v, %c : (tensor<1x5x2xf32>, tensor<1x3xi32>) -> tensor<1x3x2xf32>
  return %0, %1 : tensor<1x3x2xf32>, tensor<1x3x2xf32>
}

// -----

// Constant positions tiled over a batch (the ONNX importer's Resize) hold
// no index the constant does not: in range, no check; one out of range in
// the constant, the tiled indices are checked.
// CHECK-LABEL: func.func @tiled_constant(
// CHECK: %[[T:.*]] = tosa.tile
// CHECK-NOT: scf.if
// CHECK: tosa.gather %{{.*}}, %[[T]]
// CHECK: scf.if
// CHECK: tosa.gather
func.func @tiled_constant(%v: tensor<4x5x2xf32>) -> (tensor<4x3x2xf32>, tensor<4x3x2xf32>) {
  %c = "tosa.const"() <{values = dense<[[0, 4, 2]]> : tensor<1x3xi32>}> : () -> tensor<1x3xi32>
  %m = tosa.const_shape {values = dense<[4, 1]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %t = tosa.tile %c, %m : (tensor<1x3xi32>, !tosa.shape<2>) -> tensor<4x3xi32>
  %0 = tosa.gather %v, %t : (tensor<4x5x2xf32>, tensor<4x3xi32>) -> tensor<4x3x2xf32>
  %bad = "tosa.const"() <{values = dense<[[0, 5, 2]]> : tensor<1x3xi32>}> : () -> tensor<1x3xi32>
  %tb = tosa.tile %bad, %m : (tensor<1x3xi32>, !tosa.shape<2>) -> tensor<4x3xi32>
  %1 = tosa.gather %v, %tb : (tensor<4x5x2xf32>, tensor<4x3xi32>) -> tensor<4x3x2xf32>
  return %0, %1 : tensor<4x3x2xf32>, tensor<4x3x2xf32>
}

// -----

// tessel.require: the value where the condition holds, else the fallback
// and the entry call fails with the op's status.
// CHECK-LABEL: func.func @require(
// CHECK: %[[OK:.*]] = tensor.extract %{{.*}}[] : tensor<i1>
// CHECK: %[[R:.*]] = scf.if %[[OK]] -> (tensor<2xindex>) {
// CHECK: scf.yield %{{.*}} : tensor<2xindex>
// CHECK: } else {
// CHECK: %[[S:.*]] = arith.constant -3 : i32
// CHECK: call @__tessel_set_status(%[[S]]) : (i32) -> ()
// CHECK: scf.yield %{{.*}} : tensor<2xindex>
// CLAMP-LABEL: func.func @require(
// CLAMP: %[[OK:.*]] = tensor.extract %{{.*}}[] : tensor<i1>
// CLAMP: arith.select %[[OK]], %{{.*}}, %{{.*}} : tensor<2xindex>
// CLAMP-NOT: __tessel_set_status
func.func @require(%ok: tensor<i1>, %v: tensor<2xindex>, %f: tensor<2xindex>) -> tensor<2xindex> {
  %r = tessel.require %ok, %v else %f {status = -3 : i32} : tensor<i1>, tensor<2xindex>
  return %r : tensor<2xindex>
}
