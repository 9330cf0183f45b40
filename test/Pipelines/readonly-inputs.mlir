// The artifact ABI makes inputs read-only: a model that updates a tensor
// argument must write into a copy, never into the caller's buffer.
// RUN: tessel-opt %s --pass-pipeline="builtin.module(tessel-model-to-linalg,tessel-linalg-to-buffers)" | FileCheck %s
// RUN: tessel-compile %s -o %t.so
// RUN: tessel-run %t.so --input="4xf32=1 2 3 4" --output=- | FileCheck %s --check-prefix=VALUES

// CHECK-LABEL: func.func @__tessel_fn_main(
// CHECK-SAME: %[[IN:[a-z0-9]+]]: memref<4xf32>, %[[OUT:[a-z0-9]+]]: memref<4xf32>)
// CHECK-NOT: memref.store %{{.*}}, %[[IN]]
// CHECK: memref.copy %[[IN]], %[[OUT]]
// CHECK: memref.store %{{.*}}, %[[OUT]]
// VALUES: 4xf32=9 2 3 4
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %v = arith.constant 9.0 : f32
  %y = tensor.insert %v into %x[%c0] : tensor<4xf32>
  return %y : tensor<4xf32>
}
