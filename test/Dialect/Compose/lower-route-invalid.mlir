// RUN: tessel-opt %s -split-input-file --compose-lower-route -verify-diagnostics

compose.component @e0(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  compose.return %x : tensor<?x4xf32>
}
func.func @dynamic_tokens(%x: tensor<?x4xf32>, %p: tensor<?x1xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{needs static token, score and result shapes to be lowered}}
  %y = compose.route %x, %p {experts = [@e0], k = 1 : i64}
      : (tensor<?x4xf32>, tensor<?x1xf32>) -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}
