// RUN: not tessel-opt %s --compose-lower-route="expert-parallel=2" 2>&1 | FileCheck %s
// RUN: tessel-opt %s --compose-lower-route | FileCheck %s --check-prefix=ONE

// Without a route the artifact would run as unrelated copies under mpirun.
// CHECK: expert parallelism (2 processes) needs a mixture of experts, and the model has no compose.route (was its MoE raised? see tessel-raise-moe)
// ONE: func.func @no_route
func.func @no_route(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  return %x : tensor<4x4xf32>
}
