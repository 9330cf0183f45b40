// RUN: tessel-opt %s -split-input-file -tessel-check-result-dims -verify-diagnostics | FileCheck %s

// Proven: the result is built on tensor.empty sized by the input's dim, so
// the named output dimension T equals the input's; nothing is added.
// CHECK-LABEL: func.func @proven
// CHECK-NOT: scf.if
// CHECK-NOT: __tessel_set_status
// CHECK: return
#map = affine_map<(d0, d1) -> (d0, d1)>
module attributes {tessel.functions = [{entry = "tessel_entry_proven", name = "proven", symbol = "proven", inputs = [{dim_names = ["T", ""]}], outputs = [{dim_names = ["T", ""]}]}]} {
  func.func @proven(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
    %c0 = arith.constant 0 : index
    %t = tensor.dim %x, %c0 : tensor<?x4xf32>
    %e = tensor.empty(%t) : tensor<?x4xf32>
    %y = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<?x4xf32>) outs(%e : tensor<?x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %n = arith.negf %in : f32
      linalg.yield %n : f32
    } -> tensor<?x4xf32>
    return %y : tensor<?x4xf32>
  }
}

// -----

// Not provable (a concat doubles the rows): the result is compared with
// the bound size at run time; on a mismatch the function records
// TESSEL_ENTRY_SHAPE_MISMATCH (-3) and returns zeros of the bound size, so
// the runtime's buffer is never overrun.
// CHECK-LABEL: func.func private @__tessel_set_status(i32)
// CHECK-LABEL: func.func @twice(
// CHECK-SAME: %[[X:.*]]: tensor<?x4xf32>)
// CHECK: %[[Y:.*]] = tensor.concat
// CHECK: %[[T:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x4xf32>
// CHECK: %[[R:.*]] = tensor.dim %[[Y]], %{{.*}} : tensor<?x4xf32>
// CHECK: %[[OK:.*]] = arith.cmpi eq, %[[R]], %[[T]] : index
// CHECK: %[[G:.*]] = scf.if %[[OK]] -> (tensor<?x4xf32>) {
// CHECK:   scf.yield %[[Y]]
// CHECK: } else {
// CHECK:   %[[CODE:.*]] = arith.constant -3 : i32
// CHECK:   func.call @__tessel_set_status(%[[CODE]]) : (i32) -> ()
// CHECK:   %[[E:.*]] = tensor.empty(%[[T]]) : tensor<?x4xf32>
// CHECK:   %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<?x4xf32>)
// CHECK:   scf.yield %[[Z]]
// CHECK: return %[[G]]
module attributes {tessel.functions = [{entry = "tessel_entry_twice", name = "twice", symbol = "twice", inputs = [{dim_names = ["T", ""]}], outputs = [{dim_names = ["T", ""]}]}]} {
  func.func @twice(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
    %y = tensor.concat dim(0) %x, %x : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
    return %y : tensor<?x4xf32>
  }
}

// -----

// Static signatures are left alone.
// CHECK-LABEL: func.func @static
// CHECK-NEXT: return
module attributes {tessel.functions = [{entry = "tessel_entry_static", name = "static", symbol = "static", inputs = [{}], outputs = [{}]}]} {
  func.func @static(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

module attributes {tessel.functions = [{entry = "tessel_entry_taken", name = "taken", symbol = "taken", inputs = [{dim_names = ["T"]}], outputs = [{dim_names = ["T"]}]}]} {
  // expected-error @+1 {{the symbol '__tessel_set_status' is reserved for the artifact ABI}}
  func.func @__tessel_set_status() {
    return
  }
  func.func @taken(%x: tensor<?xf32>) -> tensor<?xf32> {
    %y = tensor.concat dim(0) %x, %x : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
    return %y : tensor<?xf32>
  }
}

// -----

// An output with a named dimension and a run-time one ("?"): the named one
// is checked; the zeros returned on a mismatch keep the run-time size.
// CHECK-LABEL: func.func @mixed(
// CHECK-SAME: %[[X:[^:]*]]: tensor<?x4xf32>,
// CHECK: %[[Y:.*]] = tensor.reshape
// CHECK: %[[T:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x4xf32>
// CHECK: arith.cmpi eq
// CHECK: %[[RT:.*]] = tensor.dim %[[Y]], %c1 : tensor<?x?xf32>
// CHECK: scf.if
// CHECK: } else {
// CHECK:   tensor.empty(%[[T]], %[[RT]]) : tensor<?x?xf32>
module attributes {tessel.functions = [{entry = "tessel_entry_mixed", name = "mixed", symbol = "mixed", inputs = [{dim_names = ["T", ""]}], outputs = [{dim_names = ["T", "?"]}]}]} {
  func.func @mixed(%x: tensor<?x4xf32>, %shape: tensor<2xindex>) -> tensor<?x?xf32> {
    %y = tensor.reshape %x(%shape) : (tensor<?x4xf32>, tensor<2xindex>) -> tensor<?x?xf32>
    return %y : tensor<?x?xf32>
  }
}
