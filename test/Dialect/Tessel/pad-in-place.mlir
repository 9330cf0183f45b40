// RUN: tessel-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(tessel-pad-in-place))" | FileCheck %s
// RUN: tessel-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(tessel-pad-in-place),eliminate-empty-tensors)" | FileCheck %s --check-prefix=ELIM

// A pooling input with a counted border: the padded tensor is filled and
// the producer's result inserted at the low padding; after empty-tensor
// elimination the producer computes into that slice of the filled tensor.
// CHECK-LABEL: func @pad_of_producer
// CHECK: %[[E:.*]] = tensor.empty() : tensor<1x7x8x4xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<1x7x8x4xf32>)
// CHECK: %[[Y:.*]] = linalg.generic
// CHECK: tensor.insert_slice %[[Y]] into %[[F]][0, 1, 2, 0] [1, 5, 5, 4] [1, 1, 1, 1]
// CHECK-NOT: tensor.pad
// ELIM-LABEL: func @pad_of_producer
// ELIM: %[[F:.*]] = linalg.fill
// ELIM: %[[S:.*]] = tensor.extract_slice %[[F]][0, 1, 2, 0] [1, 5, 5, 4] [1, 1, 1, 1]
// ELIM: linalg.generic {{.*}} outs(%[[S]] : tensor<1x5x5x4xf32>)
#id = affine_map<(a, b, c, d) -> (a, b, c, d)>
func.func @pad_of_producer(%x: tensor<1x5x5x4xf32>) -> tensor<1x7x8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x5x5x4xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x5x5x4xf32>) outs(%e : tensor<1x5x5x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %zero : f32
    linalg.yield %r : f32
  } -> tensor<1x5x5x4xf32>
  %p = tensor.pad %y low[0, 1, 2, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x5x5x4xf32> to tensor<1x7x8x4xf32>
  return %p : tensor<1x7x8x4xf32>
}

// -----

// The source has another user, and the padding is given as index
// constants (as tosa-to-linalg writes it): the producer still computes
// into the padded tensor, where the other user reads its result.
// CHECK-LABEL: func @pad_of_shared
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<6x6xf32>)
// CHECK: %[[Y:.*]] = linalg.generic
// CHECK: %[[P:.*]] = tensor.insert_slice %[[Y]] into %[[F]][1, 1] [4, 4] [1, 1]
// CHECK: return %[[P]], %[[Y]]
// ELIM-LABEL: func @pad_of_shared
// ELIM: %[[F:.*]] = linalg.fill
// ELIM: %[[S:.*]] = tensor.extract_slice %[[F]][1, 1] [4, 4] [1, 1]
// ELIM: linalg.generic {{.*}} outs(%[[S]] : tensor<4x4xf32>)
#id = affine_map<(a, b) -> (a, b)>
func.func @pad_of_shared(%x: tensor<4x4xf32>) -> (tensor<6x6xf32>, tensor<4x4xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.negf %in : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %c1 = arith.constant 1 : index
  %p = tensor.pad %y low[%c1, %c1] high[%c1, %c1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %ninf : f32
  } : tensor<4x4xf32> to tensor<6x6xf32>
  return %p, %y : tensor<6x6xf32>, tensor<4x4xf32>
}

// -----

// Without a destination-style producer (a function argument), or with a
// padding value computed at run time, the tensor.pad stays.
// CHECK-LABEL: func @pad_kept
// CHECK: tensor.pad %arg0
// CHECK: tensor.pad %[[Y:.*]] low
// CHECK-NOT: tensor.insert_slice
#id = affine_map<(a, b) -> (a, b)>
func.func @pad_kept(%x: tensor<4x4xf32>, %v: f32) -> (tensor<6x6xf32>, tensor<6x6xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %p0 = tensor.pad %x low[1, 1] high[1, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %ninf : f32
  } : tensor<4x4xf32> to tensor<6x6xf32>
  %e = tensor.empty() : tensor<4x4xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.negf %in : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %p1 = tensor.pad %y low[1, 1] high[1, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %v : f32
  } : tensor<4x4xf32> to tensor<6x6xf32>
  return %p0, %p1 : tensor<6x6xf32>, tensor<6x6xf32>
}
