// RUN: tessel-opt %s -tessel-lower-random=unseeded=false -verify-diagnostics -o /dev/null

// Where the host does not run the model's code (the GPU), an unseeded
// draw has no counter to advance: an error asking for a seed.
func.func @seeded_ok() -> tensor<4xf32> {
  %0 = tessel.random_uniform {seed = 1 : i64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @needs_seed() -> tensor<4xf32> {
  // expected-error @+1 {{an unseeded random draw needs a call counter in host memory, which this target does not keep; give the node a seed}}
  %0 = tessel.random_uniform : tensor<4xf32>
  return %0 : tensor<4xf32>
}
