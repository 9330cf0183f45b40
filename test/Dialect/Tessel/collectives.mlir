// RUN: tessel-opt %s -split-input-file | tessel-opt -split-input-file | FileCheck %s
// RUN: tessel-opt %s -split-input-file --cse | FileCheck %s --check-prefix=EFFECTS
// RUN: tessel-opt %s -split-input-file --one-shot-bufferize="bufferize-function-boundaries" | FileCheck %s --check-prefix=BUF

// CHECK-LABEL: func.func @all_to_all_v
// CHECK: tessel.all_to_all_v %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} outs(%{{.*}} : tensor<512x64xf32>) : tensor<256x64xf32>, tensor<2xi32>, tensor<2xi32> -> tensor<512x64xf32>
// BUF-LABEL: func.func @all_to_all_v
// BUF: tessel.all_to_all_v %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} outs(%{{.*}} : memref<512x64xf32{{.*}}>) : memref<256x64xf32{{.*}}>, memref<2xi32{{.*}}>, memref<2xi32{{.*}}>{{$}}
func.func @all_to_all_v(%x: tensor<256x64xf32>, %s: tensor<2xi32>, %r: tensor<2xi32>,
                        %init: tensor<512x64xf32>) -> tensor<512x64xf32> {
  %comm = mpi.comm_world : !mpi.comm
  %y = tessel.all_to_all_v %x, %s, %r, %comm outs(%init : tensor<512x64xf32>)
      : tensor<256x64xf32>, tensor<2xi32>, tensor<2xi32> -> tensor<512x64xf32>
  return %y : tensor<512x64xf32>
}

// -----

// The collectives have effects: every process must run each one, in the
// same order, so an unused one is neither removed nor merged with its twin.
// CHECK-LABEL: func.func @all_gather
// CHECK: tessel.all_gather %{{.*}}, %{{.*}} outs(%{{.*}} : tensor<2x8xi32>) : tensor<1x8xi32> -> tensor<2x8xi32>
// EFFECTS-LABEL: func.func @all_gather
// EFFECTS-COUNT-2: tessel.all_gather
// BUF-LABEL: func.func @all_gather
// BUF: %[[ALLOC:.*]] = memref.alloc() {{.*}} : memref<2x8xi32>
// BUF: tessel.all_gather %{{.*}}, %{{.*}} outs(%[[ALLOC]] : memref<2x8xi32>) : memref<1x8xi32{{.*}}>{{$}}
func.func @all_gather(%c: tensor<1x8xi32>) -> tensor<2x8xi32> {
  %comm = mpi.comm_world : !mpi.comm
  %init = tensor.empty() : tensor<2x8xi32>
  %y = tessel.all_gather %c, %comm outs(%init : tensor<2x8xi32>) : tensor<1x8xi32> -> tensor<2x8xi32>
  %z = tessel.all_gather %c, %comm outs(%init : tensor<2x8xi32>) : tensor<1x8xi32> -> tensor<2x8xi32>
  return %y : tensor<2x8xi32>
}

// -----

// CHECK-LABEL: func.func @on_memrefs
// CHECK: tessel.all_gather %{{.*}}, %{{.*}} outs(%{{.*}} : memref<8x4xf32>) : memref<4x4xf32>{{$}}
func.func @on_memrefs(%x: memref<4x4xf32>, %out: memref<8x4xf32>) {
  %comm = mpi.comm_world : !mpi.comm
  tessel.all_gather %x, %comm outs(%out : memref<8x4xf32>) : memref<4x4xf32>
  return
}
