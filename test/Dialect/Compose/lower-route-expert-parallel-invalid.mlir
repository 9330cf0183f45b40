// RUN: not tessel-opt %s --compose-lower-route="expert-parallel=0" 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not tessel-opt %s --compose-lower-route="expert-parallel=2 mode=dense" 2>&1 | FileCheck %s --check-prefix=DENSE
// RUN: not tessel-opt %s --compose-lower-route="expert-parallel=2 placement=1,1,1" 2>&1 | FileCheck %s --check-prefix=LENGTH
// RUN: not tessel-opt %s --compose-lower-route="expert-parallel=2 placement=1,2" 2>&1 | FileCheck %s --check-prefix=SUM
// RUN: not tessel-opt %s --compose-lower-route="expert-parallel=2 placement=3,-1" 2>&1 | FileCheck %s --check-prefix=NEGATIVE

// ZERO: option 'expert-parallel' must be at least 1, got 0
// DENSE: expert parallelism runs the grouped lowering, not 'dense'
// LENGTH: 'placement' needs one expert count per process (2), got 3
// SUM: placement places 3 experts, but the route has 2
// NEGATIVE: placement gives process 1 -1 experts

compose.component @e0(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  compose.return %x : tensor<?x4xf32>
}
compose.component @e1(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  compose.return %x : tensor<?x4xf32>
}
func.func @route(%x: tensor<4x4xf32>, %p: tensor<4x2xf32>) -> tensor<4x4xf32> {
  %y = compose.route %x, %p {experts = [@e0, @e1], k = 1 : i64}
      : (tensor<4x4xf32>, tensor<4x2xf32>) -> tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}

