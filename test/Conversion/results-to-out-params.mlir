// RUN: tessel-opt %s -split-input-file -tessel-results-to-out-params -verify-diagnostics | FileCheck %s
// RUN: not tessel-opt %s -split-input-file -tessel-results-to-out-params=run-time-results=false 2>&1 | FileCheck %s --check-prefix=NORETURN

// Results become out-params (a static allocation is hoisted into the
// caller's buffer), except in an entry recorded with a run-time dimension
// ("?"): that function keeps returning its buffers, for its entry to copy.
// CHECK-LABEL: func.func @__tessel_fn_static(
// CHECK-SAME: %{{.*}}: memref<4xf32>, %[[OUT:.*]]: memref<4xf32>) {
// CHECK: linalg.fill {{.*}} outs(%[[OUT]] : memref<4xf32>)
// CHECK: return{{$}}
// CHECK-LABEL: func.func @__tessel_fn_data(
// CHECK-SAME: %{{.*}}: memref<4xf32>, %{{.*}}: memref<index>) -> (memref<?xf32>, memref<4xf32>)
// CHECK: return %{{.*}}, %{{.*}} : memref<?xf32>, memref<4xf32>
// NORETURN: error: function '__tessel_fn_data' has an output whose size follows from the data, which this target cannot return yet
module attributes {tessel.functions = [
    {entry = "tessel_entry_static", inputs = [{dtype = "f32", name = "x", shape = array<i64: 4>}], name = "static", outputs = [{dtype = "f32", name = "y", shape = array<i64: 4>}], symbol = "__tessel_fn_static"},
    {entry = "tessel_entry_data", inputs = [{dtype = "f32", name = "x", shape = array<i64: 4>}, {dtype = "index", name = "n", shape = array<i64>}], name = "data", outputs = [{dim_names = ["?"], dtype = "f32", name = "y", shape = array<i64: -9223372036854775808>}, {dtype = "f32", name = "z", shape = array<i64: 4>}], symbol = "__tessel_fn_data"}]} {
  func.func @__tessel_fn_static(%x: memref<4xf32>) -> memref<4xf32> {
    %c = arith.constant 1.0 : f32
    %a = memref.alloc() : memref<4xf32>
    linalg.fill ins(%c : f32) outs(%a : memref<4xf32>)
    return %a : memref<4xf32>
  }
  func.func @__tessel_fn_data(%x: memref<4xf32>, %n: memref<index>) -> (memref<?xf32>, memref<4xf32>) {
    %s = memref.load %n[] : memref<index>
    %a = memref.alloc(%s) : memref<?xf32>
    %b = memref.alloc() : memref<4xf32>
    return %a, %b : memref<?xf32>, memref<4xf32>
  }
}

// -----

// A returned view (here a slice of the rows' first k elements, whose row
// stride is still 4) is copied into a fresh dense buffer first.
// CHECK-LABEL: func.func @__tessel_fn_view(
// CHECK-SAME: -> memref<3x?xf32>
// CHECK: %[[VIEW:.*]] = memref.cast
// CHECK: %[[FRESH:.*]] = memref.alloc(%{{.*}}) : memref<3x?xf32>
// CHECK: linalg.copy ins(%[[VIEW]] : memref<3x?xf32>) outs(%[[FRESH]] : memref<3x?xf32>)
// CHECK: return %[[FRESH]] : memref<3x?xf32>
module attributes {tessel.functions = [
    {entry = "tessel_entry_view", inputs = [{dtype = "f32", name = "x", shape = array<i64: 3, 4>}, {dtype = "index", name = "k", shape = array<i64>}], name = "view", outputs = [{dim_names = ["", "?"], dtype = "f32", name = "y", shape = array<i64: 3, -9223372036854775808>}], symbol = "__tessel_fn_view"}]} {
  func.func @__tessel_fn_view(%x: memref<3x4xf32>, %kk: memref<index>) -> memref<3x?xf32> {
    %k = memref.load %kk[] : memref<index>
    %s = memref.subview %x[0, 0] [3, %k] [1, 1] : memref<3x4xf32> to memref<3x?xf32, strided<[4, 1]>>
    %c = memref.cast %s : memref<3x?xf32, strided<[4, 1]>> to memref<3x?xf32>
    return %c : memref<3x?xf32>
  }
}
