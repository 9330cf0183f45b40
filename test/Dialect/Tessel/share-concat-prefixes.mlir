// RUN: tessel-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(tessel-share-concat-prefixes))' | FileCheck %s
// RUN: tessel-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(tessel-share-concat-prefixes),eliminate-empty-tensors,one-shot-bufferize{bufferize-function-boundaries},canonicalize,cse,canonicalize)' | FileCheck %s --check-prefix=BUF

// A DenseNet block: each concatenation starts with the pieces of the one
// before. One tensor as wide as the last holds every piece once; the
// narrower concatenations are its leading slices.
// CHECK-LABEL: func.func @dense_block
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x4x8xf32>, %[[Y1:.*]]: tensor<1x4x4x2xf32>, %[[Y2:.*]]: tensor<1x4x4x2xf32>, %[[Y3:.*]]: tensor<1x4x4x2xf32>)
// CHECK: %[[E:.*]] = tensor.empty() : tensor<1x4x4x14xf32>
// CHECK-NOT: tensor.empty
// CHECK: %[[W0:.*]] = tensor.insert_slice %[[X]] into %[[E]][0, 0, 0, 0] [1, 4, 4, 8] [1, 1, 1, 1]
// CHECK: %[[W1:.*]] = tensor.insert_slice %[[Y1]] into %[[W0]][0, 0, 0, 8] [1, 4, 4, 2] [1, 1, 1, 1]
// CHECK: %[[A:.*]] = tensor.extract_slice %[[W1]][0, 0, 0, 0] [1, 4, 4, 10] [1, 1, 1, 1] : tensor<1x4x4x14xf32> to tensor<1x4x4x10xf32>
// CHECK: %[[W2:.*]] = tensor.insert_slice %[[Y2]] into %[[W1]][0, 0, 0, 10] [1, 4, 4, 2] [1, 1, 1, 1]
// CHECK: %[[B:.*]] = tensor.extract_slice %[[W2]][0, 0, 0, 0] [1, 4, 4, 12] [1, 1, 1, 1] : tensor<1x4x4x14xf32> to tensor<1x4x4x12xf32>
// CHECK: %[[W3:.*]] = tensor.insert_slice %[[Y3]] into %[[W2]][0, 0, 0, 12] [1, 4, 4, 2] [1, 1, 1, 1]
// CHECK-NOT: tensor.insert_slice
// CHECK: return %[[A]], %[[B]], %[[W3]]
func.func @dense_block(%x: tensor<1x4x4x8xf32>, %y1: tensor<1x4x4x2xf32>,
                       %y2: tensor<1x4x4x2xf32>, %y3: tensor<1x4x4x2xf32>)
    -> (tensor<1x4x4x10xf32>, tensor<1x4x4x12xf32>, tensor<1x4x4x14xf32>) {
  %e1 = tensor.empty() : tensor<1x4x4x10xf32>
  %a0 = tensor.insert_slice %x into %e1[0, 0, 0, 0] [1, 4, 4, 8] [1, 1, 1, 1] : tensor<1x4x4x8xf32> into tensor<1x4x4x10xf32>
  %a = tensor.insert_slice %y1 into %a0[0, 0, 0, 8] [1, 4, 4, 2] [1, 1, 1, 1] : tensor<1x4x4x2xf32> into tensor<1x4x4x10xf32>
  %e2 = tensor.empty() : tensor<1x4x4x12xf32>
  %b0 = tensor.insert_slice %x into %e2[0, 0, 0, 0] [1, 4, 4, 8] [1, 1, 1, 1] : tensor<1x4x4x8xf32> into tensor<1x4x4x12xf32>
  %b1 = tensor.insert_slice %y1 into %b0[0, 0, 0, 8] [1, 4, 4, 2] [1, 1, 1, 1] : tensor<1x4x4x2xf32> into tensor<1x4x4x12xf32>
  %b = tensor.insert_slice %y2 into %b1[0, 0, 0, 10] [1, 4, 4, 2] [1, 1, 1, 1] : tensor<1x4x4x2xf32> into tensor<1x4x4x12xf32>
  %e3 = tensor.empty() : tensor<1x4x4x14xf32>
  %c0 = tensor.insert_slice %x into %e3[0, 0, 0, 0] [1, 4, 4, 8] [1, 1, 1, 1] : tensor<1x4x4x8xf32> into tensor<1x4x4x14xf32>
  %c1 = tensor.insert_slice %y1 into %c0[0, 0, 0, 8] [1, 4, 4, 2] [1, 1, 1, 1] : tensor<1x4x4x2xf32> into tensor<1x4x4x14xf32>
  %c2 = tensor.insert_slice %y2 into %c1[0, 0, 0, 10] [1, 4, 4, 2] [1, 1, 1, 1] : tensor<1x4x4x2xf32> into tensor<1x4x4x14xf32>
  %c = tensor.insert_slice %y3 into %c2[0, 0, 0, 12] [1, 4, 4, 2] [1, 1, 1, 1] : tensor<1x4x4x2xf32> into tensor<1x4x4x14xf32>
  return %a, %b, %c : tensor<1x4x4x10xf32>, tensor<1x4x4x12xf32>, tensor<1x4x4x14xf32>
}

// -----

// As a block runs: a layer reads the concatenation so far and produces the
// next piece. Bufferized, the one wide buffer is the only allocation, the
// block input pieces are copied into it once, and the layer's fill writes
// its slice directly: no concatenation copies anything again.
// CHECK-LABEL: func.func @dense_layers
// CHECK: %[[E:.*]] = tensor.empty() : tensor<1x4x4x12xf32>
// CHECK: %[[A:.*]] = tensor.extract_slice %{{.*}}[0, 0, 0, 0] [1, 4, 4, 10] [1, 1, 1, 1]
// CHECK: tensor.extract %[[A]]
// BUF-LABEL: func.func @dense_layers
// BUF-NOT: memref.copy
// BUF: %[[W:.*]] = memref.alloc() {{.*}} : memref<1x4x4x12xf32>
// BUF-NOT: memref.alloc
// BUF-COUNT-2: memref.copy
// BUF-NOT: memref.copy
// BUF: %[[S:.*]] = memref.subview %[[W]][0, 0, 0, 10] [1, 4, 4, 2]
// BUF: linalg.fill ins(%{{.*}} : f32) outs(%[[S]] :
// BUF-NOT: memref.copy
// BUF: return
func.func @dense_layers(%x: tensor<1x4x4x8xf32>, %y1: tensor<1x4x4x2xf32>)
    -> tensor<1x4x4x12xf32> {
  %e1 = tensor.empty() : tensor<1x4x4x10xf32>
  %a0 = tensor.insert_slice %x into %e1[0, 0, 0, 0] [1, 4, 4, 8] [1, 1, 1, 1] : tensor<1x4x4x8xf32> into tensor<1x4x4x10xf32>
  %a = tensor.insert_slice %y1 into %a0[0, 0, 0, 8] [1, 4, 4, 2] [1, 1, 1, 1] : tensor<1x4x4x2xf32> into tensor<1x4x4x10xf32>
  %c0 = arith.constant 0 : index
  %c9 = arith.constant 9 : index
  %v = tensor.extract %a[%c0, %c0, %c0, %c9] : tensor<1x4x4x10xf32>
  %ey = tensor.empty() : tensor<1x4x4x2xf32>
  %y2 = linalg.fill ins(%v : f32) outs(%ey : tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  %e2 = tensor.empty() : tensor<1x4x4x12xf32>
  %b0 = tensor.insert_slice %x into %e2[0, 0, 0, 0] [1, 4, 4, 8] [1, 1, 1, 1] : tensor<1x4x4x8xf32> into tensor<1x4x4x12xf32>
  %b1 = tensor.insert_slice %y1 into %b0[0, 0, 0, 8] [1, 4, 4, 2] [1, 1, 1, 1] : tensor<1x4x4x2xf32> into tensor<1x4x4x12xf32>
  %b = tensor.insert_slice %y2 into %b1[0, 0, 0, 10] [1, 4, 4, 2] [1, 1, 1, 1] : tensor<1x4x4x2xf32> into tensor<1x4x4x12xf32>
  return %b : tensor<1x4x4x12xf32>
}

// -----

// Concatenations that do not start alike (here the pieces are swapped)
// stay as they are.
// CHECK-LABEL: func.func @not_a_prefix
// CHECK: tensor.empty() : tensor<1x4xf32>
// CHECK: tensor.empty() : tensor<1x6xf32>
// CHECK-NOT: tensor.extract_slice
func.func @not_a_prefix(%x: tensor<1x2xf32>, %y: tensor<1x2xf32>)
    -> (tensor<1x4xf32>, tensor<1x6xf32>) {
  %e1 = tensor.empty() : tensor<1x4xf32>
  %a0 = tensor.insert_slice %x into %e1[0, 0] [1, 2] [1, 1] : tensor<1x2xf32> into tensor<1x4xf32>
  %a = tensor.insert_slice %y into %a0[0, 2] [1, 2] [1, 1] : tensor<1x2xf32> into tensor<1x4xf32>
  %e2 = tensor.empty() : tensor<1x6xf32>
  %b0 = tensor.insert_slice %y into %e2[0, 0] [1, 2] [1, 1] : tensor<1x2xf32> into tensor<1x6xf32>
  %b1 = tensor.insert_slice %x into %b0[0, 2] [1, 2] [1, 1] : tensor<1x2xf32> into tensor<1x6xf32>
  %b = tensor.insert_slice %x into %b1[0, 4] [1, 2] [1, 1] : tensor<1x2xf32> into tensor<1x6xf32>
  return %a, %b : tensor<1x4xf32>, tensor<1x6xf32>
}

// -----

// Not concatenations: a gap between the pieces, and the same pieces along
// a different dimension. Nothing changes.
// CHECK-LABEL: func.func @not_concatenations
// CHECK-COUNT-3: tensor.empty
// CHECK-NOT: tensor.extract_slice
func.func @not_concatenations(%x: tensor<2x2xf32>, %y: tensor<2x2xf32>)
    -> (tensor<2x5xf32>, tensor<2x6xf32>, tensor<4x2xf32>) {
  %e1 = tensor.empty() : tensor<2x5xf32>
  %a0 = tensor.insert_slice %x into %e1[0, 0] [2, 2] [1, 1] : tensor<2x2xf32> into tensor<2x5xf32>
  %a = tensor.insert_slice %y into %a0[0, 3] [2, 2] [1, 1] : tensor<2x2xf32> into tensor<2x5xf32>
  %e2 = tensor.empty() : tensor<2x6xf32>
  %b0 = tensor.insert_slice %x into %e2[0, 0] [2, 2] [1, 1] : tensor<2x2xf32> into tensor<2x6xf32>
  %b1 = tensor.insert_slice %y into %b0[0, 2] [2, 2] [1, 1] : tensor<2x2xf32> into tensor<2x6xf32>
  %b = tensor.insert_slice %x into %b1[0, 4] [2, 2] [1, 1] : tensor<2x2xf32> into tensor<2x6xf32>
  %e3 = tensor.empty() : tensor<4x2xf32>
  %c0 = tensor.insert_slice %x into %e3[0, 0] [2, 2] [1, 1] : tensor<2x2xf32> into tensor<4x2xf32>
  %c = tensor.insert_slice %y into %c0[2, 0] [2, 2] [1, 1] : tensor<2x2xf32> into tensor<4x2xf32>
  return %a, %b, %c : tensor<2x5xf32>, tensor<2x6xf32>, tensor<4x2xf32>
}
