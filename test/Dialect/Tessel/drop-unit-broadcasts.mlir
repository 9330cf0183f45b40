// RUN: tessel-opt %s -split-input-file -tessel-drop-unit-broadcasts | FileCheck %s

// tosa-to-linalg's guard for an operand of run-time size: the operand's
// size is the guarded one, and the copy keeps it, so the guard goes.
// CHECK-LABEL: func @same_batch
// CHECK-NOT: scf.if
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<?x4xf32>)
// CHECK-NOT: scf.if
// CHECK: linalg.generic {{.*}} ins(%arg0, %[[Y]] : tensor<?x4xf32>, tensor<?x4xf32>)
#bcast = affine_map<(d0, d1) -> (0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @same_batch(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %x, %c0 : tensor<?x4xf32>
  %e = tensor.empty(%n) : tensor<?x4xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<?x4xf32>) outs(%e : tensor<?x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.negf %a : f32
    linalg.yield %s : f32
  } -> tensor<?x4xf32>
  // A size read again from the result: provably %n.
  %m = tensor.dim %y, %c0 : tensor<?x4xf32>
  %one = arith.cmpi eq, %m, %c1 : index
  %b = scf.if %one -> (tensor<?x4xf32>) {
    %e2 = tensor.empty(%m) : tensor<?x4xf32>
    %c = linalg.generic {indexing_maps = [#bcast, #id], iterator_types = ["parallel", "parallel"]} ins(%y : tensor<?x4xf32>) outs(%e2 : tensor<?x4xf32>) {
    ^bb0(%a: f32, %o: f32):
      linalg.yield %a : f32
    } -> tensor<?x4xf32>
    scf.yield %c : tensor<?x4xf32>
  } else {
    scf.yield %y : tensor<?x4xf32>
  }
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %b : tensor<?x4xf32>, tensor<?x4xf32>) outs(%e : tensor<?x4xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}

// -----

// Two inputs whose batches may differ: a size of 1 really broadcasts, and
// the guard stays.
// CHECK-LABEL: func @two_batches
// CHECK: scf.if
#bcast = affine_map<(d0, d1) -> (0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @two_batches(%x: tensor<?x4xf32>, %y: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %x, %c0 : tensor<?x4xf32>
  %m = tensor.dim %y, %c0 : tensor<?x4xf32>
  %t = arith.maxui %n, %m : index
  %one = arith.cmpi eq, %m, %c1 : index
  %b = scf.if %one -> (tensor<?x4xf32>) {
    %e2 = tensor.empty(%t) : tensor<?x4xf32>
    %c = linalg.generic {indexing_maps = [#bcast, #id], iterator_types = ["parallel", "parallel"]} ins(%y : tensor<?x4xf32>) outs(%e2 : tensor<?x4xf32>) {
    ^bb0(%a: f32, %o: f32):
      linalg.yield %a : f32
    } -> tensor<?x4xf32>
    scf.yield %c : tensor<?x4xf32>
  } else {
    scf.yield %y : tensor<?x4xf32>
  }
  return %b : tensor<?x4xf32>
}

// -----

// The size check before an elementwise op (tessel-check-broadcasts)
// compares two reads of one size: it folds to true and its guard goes.
// A reshape through a flat tensor reads the size back as a quotient.
// CHECK-LABEL: func @checked_sizes_agree
// CHECK-NOT: scf.if
// CHECK-NOT: __tessel_set_status
// CHECK-NOT: arith.divsi
// CHECK: %[[N:.*]] = tensor.dim %arg0, %c0
// CHECK: tensor.expand_shape {{.*}} output_shape [%[[N]], 1, 8]
func.func private @__tessel_set_status(i32)
func.func @checked_sizes_agree(%x: tensor<?x8xf32>) -> tensor<?x1x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %flat = tensor.collapse_shape %x [[0, 1]] : tensor<?x8xf32> into tensor<?xf32>
  %f = tensor.dim %flat, %c0 : tensor<?xf32>
  %q = arith.divsi %f, %c8 : index
  %ok = arith.cmpi eq, %q, %n : index
  %g = scf.if %ok -> (tensor<?xf32>) {
    scf.yield %flat : tensor<?xf32>
  } else {
    %bad = arith.constant -3 : i32
    func.call @__tessel_set_status(%bad) : (i32) -> ()
    scf.yield %flat : tensor<?xf32>
  }
  %r = tensor.expand_shape %g [[0, 1, 2]] output_shape [%q, 1, 8] : tensor<?xf32> into tensor<?x1x8xf32>
  return %r : tensor<?x1x8xf32>
}

// -----

// Guards in a chain (one per block of a network): each size read after a
// guard is unified once the guard before it is gone, in one walk. The size
// of an expand_shape is its output shape; max(n, n) is n.
// CHECK-LABEL: func @chained_guards
// CHECK-NOT: scf.if
// CHECK-NOT: __tessel_set_status
// CHECK-NOT: arith.maxui
// CHECK: return
func.func private @__tessel_set_status(i32)
func.func @chained_guards(%x: tensor<?x8xf32>) -> tensor<?x1x8xf32> {
  %c0 = arith.constant 0 : index
  %bad = arith.constant -3 : i32
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %r = tensor.expand_shape %x [[0], [1, 2]] output_shape [%n, 1, 8] : tensor<?x8xf32> into tensor<?x1x8xf32>
  %m = tensor.dim %r, %c0 : tensor<?x1x8xf32>
  %t = arith.maxui %n, %m : index
  %ok = arith.cmpi eq, %m, %t : index
  %g = scf.if %ok -> (tensor<?x1x8xf32>) {
    scf.yield %r : tensor<?x1x8xf32>
  } else {
    func.call @__tessel_set_status(%bad) : (i32) -> ()
    scf.yield %r : tensor<?x1x8xf32>
  }
  %k = tensor.dim %g, %c0 : tensor<?x1x8xf32>
  %t2 = arith.maxui %n, %k : index
  %ok2 = arith.cmpi eq, %k, %t2 : index
  %g2 = scf.if %ok2 -> (tensor<?x1x8xf32>) {
    scf.yield %g : tensor<?x1x8xf32>
  } else {
    func.call @__tessel_set_status(%bad) : (i32) -> ()
    scf.yield %g : tensor<?x1x8xf32>
  }
  return %g2 : tensor<?x1x8xf32>
}

// -----

// tessel-check-broadcasts' guard on two sizes of one name (`%dy == %dx`,
// else both operands become the same zeros of one row) makes its results'
// sizes equal in both branches: the sizes read after it are one size, and
// tosa-to-linalg's broadcast of either operand when its size is 1 is the
// operand itself.
// CHECK-LABEL: func @equal_after_check
// CHECK: %[[G:.*]]:2 = scf.if
// CHECK-NOT: scf.if
// CHECK: linalg.generic {{.*}} ins(%[[G]]#0, %[[G]]#1 : tensor<?x4xf32>, tensor<?x4xf32>)
func.func private @__tessel_set_status(i32)
func.func @equal_after_check(%arg0: tensor<?x4xf32>, %arg1: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %c-3_i32 = arith.constant -3 : i32
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %dim = tensor.dim %arg0, %c0 : tensor<?x4xf32>
  %dim_0 = tensor.dim %arg1, %c0 : tensor<?x4xf32>
  %0 = arith.cmpi eq, %dim_0, %dim : index
  %1:2 = scf.if %0 -> (tensor<?x4xf32>, tensor<?x4xf32>) {
    scf.yield %arg0, %arg1 : tensor<?x4xf32>, tensor<?x4xf32>
  } else {
    func.call @__tessel_set_status(%c-3_i32) : (i32) -> ()
    %9 = tensor.empty() : tensor<1x4xf32>
    %10 = linalg.fill ins(%cst : f32) outs(%9 : tensor<1x4xf32>) -> tensor<1x4xf32>
    %cast = tensor.cast %10 : tensor<1x4xf32> to tensor<?x4xf32>
    scf.yield %cast, %cast : tensor<?x4xf32>, tensor<?x4xf32>
  }
  %dim_1 = tensor.dim %1#0, %c0 : tensor<?x4xf32>
  %dim_2 = tensor.dim %1#1, %c0 : tensor<?x4xf32>
  %2 = arith.maxui %dim_1, %dim_2 : index
  %3 = arith.cmpi eq, %dim_1, %c1 : index
  %4 = scf.if %3 -> (tensor<?x4xf32>) {
    %9 = tensor.empty(%2) : tensor<?x4xf32>
    %10 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%1#0 : tensor<?x4xf32>) outs(%9 : tensor<?x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<?x4xf32>
    scf.yield %10 : tensor<?x4xf32>
  } else {
    scf.yield %1#0 : tensor<?x4xf32>
  }
  %5 = arith.cmpi eq, %dim_2, %c1 : index
  %6 = scf.if %5 -> (tensor<?x4xf32>) {
    %9 = tensor.empty(%2) : tensor<?x4xf32>
    %10 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%1#1 : tensor<?x4xf32>) outs(%9 : tensor<?x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<?x4xf32>
    scf.yield %10 : tensor<?x4xf32>
  } else {
    scf.yield %1#1 : tensor<?x4xf32>
  }
  %7 = tensor.empty(%2) : tensor<?x4xf32>
  %8 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%4, %6 : tensor<?x4xf32>, tensor<?x4xf32>) outs(%7 : tensor<?x4xf32>) {
  ^bb0(%in: f32, %in_3: f32, %out: f32):
    %9 = arith.addf %in, %in_3 : f32
    linalg.yield %9 : f32
  } -> tensor<?x4xf32>
  return %8 : tensor<?x4xf32>
}

// -----

// The same guard checking for broadcasting (`%dy == max || %dy == 1`): a
// size may be 1 past it, and the broadcast guards stay.
// CHECK-LABEL: func @broadcast_after_check
// CHECK: scf.if
// CHECK: scf.if
// CHECK: linalg.generic
func.func private @__tessel_set_status(i32)
func.func @broadcast_after_check(%arg0: tensor<?x4xf32>, %arg1: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %c-3_i32 = arith.constant -3 : i32
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %dim = tensor.dim %arg0, %c0 : tensor<?x4xf32>
  %dim_0 = tensor.dim %arg1, %c0 : tensor<?x4xf32>
  %m = arith.maxui %dim, %dim_0 : index
  %a = arith.cmpi eq, %dim_0, %m : index
  %b = arith.cmpi eq, %dim_0, %c1 : index
  %0 = arith.ori %a, %b : i1
  %1:2 = scf.if %0 -> (tensor<?x4xf32>, tensor<?x4xf32>) {
    scf.yield %arg0, %arg1 : tensor<?x4xf32>, tensor<?x4xf32>
  } else {
    func.call @__tessel_set_status(%c-3_i32) : (i32) -> ()
    %9 = tensor.empty() : tensor<1x4xf32>
    %10 = linalg.fill ins(%cst : f32) outs(%9 : tensor<1x4xf32>) -> tensor<1x4xf32>
    %cast = tensor.cast %10 : tensor<1x4xf32> to tensor<?x4xf32>
    scf.yield %cast, %cast : tensor<?x4xf32>, tensor<?x4xf32>
  }
  %dim_1 = tensor.dim %1#0, %c0 : tensor<?x4xf32>
  %dim_2 = tensor.dim %1#1, %c0 : tensor<?x4xf32>
  %2 = arith.maxui %dim_1, %dim_2 : index
  %5 = arith.cmpi eq, %dim_2, %c1 : index
  %6 = scf.if %5 -> (tensor<?x4xf32>) {
    %9 = tensor.empty(%2) : tensor<?x4xf32>
    %10 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%1#1 : tensor<?x4xf32>) outs(%9 : tensor<?x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<?x4xf32>
    scf.yield %10 : tensor<?x4xf32>
  } else {
    scf.yield %1#1 : tensor<?x4xf32>
  }
  return %6 : tensor<?x4xf32>
}
