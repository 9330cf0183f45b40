// RUN: tessel-opt %s -split-input-file -tessel-name-dynamic-dims -verify-diagnostics | FileCheck %s

// An input's unnamed dynamic dimension is named after the input; the
// output's, proven equal through tensor.dim / tensor.empty / linalg, takes
// that name.
// CHECK-LABEL: func.func @matmul(
// CHECK-SAME: %{{.*}}: tensor<?x16xf32> {tessel.dim_names = ["x_d0", ""], tessel.name = "x"}
// CHECK-SAME: -> (tensor<?x8xf32> {tessel.dim_names = ["x_d0", ""]})
func.func @matmul(%x: tensor<?x16xf32> {tessel.name = "x"}) -> tensor<?x8xf32> {
  %w = arith.constant dense<0.5> : tensor<16x8xf32>
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x16xf32>
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x8xf32>) -> tensor<?x8xf32>
  %y = linalg.matmul ins(%x, %w : tensor<?x16xf32>, tensor<16x8xf32>) outs(%f : tensor<?x8xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

// Three inputs, the output proven equal to the last one's dimensions
// swapped (a transpose into tensor.empty of its sizes); names given by
// the user are kept and fresh ones avoid them (the user took arg1_d0);
// input names that are not identifiers are made ones.
// CHECK-LABEL: func.func @three_inputs(
// CHECK-SAME: {tessel.dim_names = ["arg1_d0", ""]}
// CHECK-SAME: tensor<?xf32> {tessel.dim_names = ["arg1_d0_2"]}
// CHECK-SAME: {tessel.dim_names = ["in_1_d0", "in_1_d1"], tessel.name = "in.1"}
// CHECK-SAME: -> (tensor<?x?xf32> {tessel.dim_names = ["in_1_d1", "in_1_d0"]})
func.func @three_inputs(%a: tensor<?x4xf32> {tessel.dim_names = ["arg1_d0", ""]},
                        %c: tensor<?xf32>,
                        %b: tensor<?x?xf32> {tessel.name = "in.1"}) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d0 = tensor.dim %b, %c0 : tensor<?x?xf32>
  %d1 = tensor.dim %b, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%d1, %d0) : tensor<?x?xf32>
  %t = linalg.transpose ins(%b : tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) permutation = [1, 0]
  return %t : tensor<?x?xf32>
}

// -----

// TOSA ops have no value bounds: the output takes the name of the first
// input dynamic at the same index (tessel-check-result-dims checks it at
// run time).
// CHECK-LABEL: func.func @tosa_batch(
// CHECK-SAME: -> (tensor<?x4xf32> {tessel.dim_names = ["arg0_d0", ""]})
func.func @tosa_batch(%x: tensor<?x4xf32>, %y: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %s = tosa.add %x, %y : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return %s : tensor<?x4xf32>
}

// -----

// Names given everywhere: untouched. Private functions are not entry
// points.
// CHECK-LABEL: func.func @named(
// CHECK-SAME: {tessel.dim_names = ["T", ""]}) -> (tensor<?x4xf32> {tessel.dim_names = ["T", ""]})
// CHECK-LABEL: func.func private @helper(
// CHECK-SAME: %{{.*}}: tensor<?xf32>) -> tensor<?xf32>
func.func @named(%x: tensor<?x4xf32> {tessel.dim_names = ["T", ""]}) -> (tensor<?x4xf32> {tessel.dim_names = ["T", ""]}) {
  return %x : tensor<?x4xf32>
}
func.func private @helper(%x: tensor<?xf32>) -> tensor<?xf32> {
  return %x : tensor<?xf32>
}

// -----

// No input dimension to take the name from (the size is computed from a
// value): the run-time name "?" (ABI v6).
// CHECK-LABEL: func.func @data_dependent(
// CHECK-SAME: -> (tensor<?xf32> {tessel.dim_names = ["?"]})
func.func @data_dependent(%x: tensor<4xf32>, %n: tensor<index>) -> tensor<?xf32> {
  %s = tensor.extract %n[] : tensor<index>
  %e = tensor.empty(%s) : tensor<?xf32>
  return %e : tensor<?xf32>
}
