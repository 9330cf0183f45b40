// RUN: tessel-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{attribute 'precision' must be f16, bf16, f32 or i8, got 'i32'}}
compose.component @p(%x: tensor<4xf32>) -> tensor<4xf32> attributes {precision = i32} {
  compose.return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{attribute 'sparsity' must not be empty}}
compose.component @s(%x: tensor<4xf32>) -> tensor<4xf32> attributes {sparsity = ""} {
  compose.return %x : tensor<4xf32>
}

// -----

compose.component @r(%x: tensor<4xf32>) -> tensor<4xf32> {
  %h = arith.constant dense<0.0> : tensor<4xf16>
  // expected-error @+1 {{result #0 has type 'tensor<4xf16>', but component 'r' declares 'tensor<4xf32>'}}
  compose.return %h : tensor<4xf16>
}

// -----

compose.component @n(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{returns 2 values, but component 'n' declares 1}}
  compose.return %x, %x : tensor<4xf32>, tensor<4xf32>
}

// -----

func.func @f() { return }
// expected-error @+1 {{component @f is not a compose.component}}
compose.instance @i of @f

// -----

func.func @missing(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{callee @nowhere is not a compose.component or compose.instance}}
  %y = compose.call @nowhere(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

compose.component @c(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  compose.return %x : tensor<?x8xf32>
}
func.func @arity(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{passes 2 operands and expects 1 results, but the interface of component 'c' has 1 and 1}}
  %y = compose.call @c(%x, %x) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

compose.component @c(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  compose.return %x : tensor<?x8xf32>
}
func.func @width(%x: tensor<4x6xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{operand #0 of type 'tensor<4x6xf32>' does not match the interface of component 'c': 'tensor<?x8xf32>'}}
  %y = compose.call @c(%x) : (tensor<4x6xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

compose.component @c(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  compose.return %x : tensor<?x8xf32>
}
func.func @dtype(%x: tensor<4x8xf32>) -> tensor<4x8xf16> {
  // expected-error @+1 {{result #0 of type 'tensor<4x8xf16>' does not match the interface of component 'c': 'tensor<?x8xf32>'}}
  %y = compose.call @c(%x) : (tensor<4x8xf32>) -> tensor<4x8xf16>
  return %y : tensor<4x8xf16>
}

// -----

compose.component @c(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  compose.return %x : tensor<?x8xf32>
}
compose.instance @ci of @c
func.func @via_instance(%x: tensor<4x8x1xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{operand #0 of type 'tensor<4x8x1xf32>' does not match the interface of component 'c'}}
  %y = compose.call @ci(%x) : (tensor<4x8x1xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

compose.component @e(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  compose.return %x : tensor<?x8xf32>
}
func.func @k_too_big(%x: tensor<4x8xf32>, %p: tensor<4x2xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{attribute 'k' = 3 exceeds the number of experts (2)}}
  %y = compose.route %x, %p {experts = [@e, @e], k = 3 : i64} : (tensor<4x8xf32>, tensor<4x2xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

compose.component @e(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  compose.return %x : tensor<?x8xf32>
}
func.func @k_zero(%x: tensor<4x8xf32>, %p: tensor<4x2xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{attribute 'k' failed to satisfy constraint}}
  %y = compose.route %x, %p {experts = [@e, @e], k = 0 : i64} : (tensor<4x8xf32>, tensor<4x2xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

compose.component @e(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  compose.return %x : tensor<?x8xf32>
}
func.func @columns(%x: tensor<4x8xf32>, %p: tensor<4x3xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{scores have 3 columns, but attribute 'experts' names 2 experts}}
  %y = compose.route %x, %p {experts = [@e, @e], k = 1 : i64} : (tensor<4x8xf32>, tensor<4x3xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

compose.component @e(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  compose.return %x : tensor<?x8xf32>
}
func.func @rows(%x: tensor<4x8xf32>, %p: tensor<5x2xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{has 4 tokens but scores for 5}}
  %y = compose.route %x, %p {experts = [@e, @e], k = 1 : i64} : (tensor<4x8xf32>, tensor<5x2xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

compose.component @e(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  compose.return %x : tensor<?x8xf32>
}
func.func @result_rows(%x: tensor<4x8xf32>, %p: tensor<4x2xf32>) -> tensor<3x8xf32> {
  // expected-error @+1 {{result has 3 rows, expected one per token (4)}}
  %y = compose.route %x, %p {experts = [@e, @e], k = 1 : i64} : (tensor<4x8xf32>, tensor<4x2xf32>) -> tensor<3x8xf32>
  return %y : tensor<3x8xf32>
}

// -----

compose.component @e(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  compose.return %x : tensor<?x8xf32>
}
func.func @elem(%x: tensor<4x8xf32>, %p: tensor<4x2xf16>) -> tensor<4x8xf32> {
  // expected-error @+1 {{tokens, scores and result must have one element type}}
  %y = compose.route %x, %p {experts = [@e, @e], k = 1 : i64} : (tensor<4x8xf32>, tensor<4x2xf16>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @e(%x: tensor<?x8xf32>) -> tensor<?x8xf32> { return %x : tensor<?x8xf32> }
func.func @not_component(%x: tensor<4x8xf32>, %p: tensor<4x1xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{expert @e is not a compose.component or compose.instance}}
  %y = compose.route %x, %p {experts = [@e], k = 1 : i64} : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

compose.component @e(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  compose.return %x : tensor<4x8xf32>
}
func.func @static_expert(%x: tensor<4x8xf32>, %p: tensor<4x1xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{expert @e must have a dynamic token dimension (it runs on the tokens routed to it)}}
  %y = compose.route %x, %p {experts = [@e], k = 1 : i64} : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

compose.component @e(%x: tensor<?x8xf32>, %y: tensor<?x8xf32>) -> tensor<?x8xf32> {
  compose.return %x : tensor<?x8xf32>
}
func.func @two_args(%x: tensor<4x8xf32>, %p: tensor<4x1xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{expert @e must take one rank-2 tensor and return one (tokens x features)}}
  %y = compose.route %x, %p {experts = [@e], k = 1 : i64} : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

compose.component @e(%x: tensor<?x6xf32>) -> tensor<?x8xf32> {
  %c = tensor.empty() : tensor<2x8xf32>
  %d = tensor.cast %c : tensor<2x8xf32> to tensor<?x8xf32>
  compose.return %d : tensor<?x8xf32>
}
func.func @features(%x: tensor<4x8xf32>, %p: tensor<4x1xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{expert @e has interface '(tensor<?x6xf32>) -> tensor<?x8xf32>', which does not take the tokens}}
  %y = compose.route %x, %p {experts = [@e], k = 1 : i64} : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @read(%m: tensor<8x4xf32>, %l: tensor<3xi32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{result 'tensor<2x4xf32>' must have one row per location (3) of the memory's width (4)}}
  %r = compose.memory_read %m[%l] : tensor<8x4xf32>, tensor<3xi32> -> tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}

// -----

func.func @read_elem(%m: tensor<8x4xf32>, %l: tensor<3xi32>) -> tensor<3x4xf16> {
  // expected-error @+1 {{result element type 'f16' differs from the memory's 'f32'}}
  %r = compose.memory_read %m[%l] : tensor<8x4xf32>, tensor<3xi32> -> tensor<3x4xf16>
  return %r : tensor<3x4xf16>
}

// -----

func.func @read_loc_type(%m: tensor<8x4xf32>, %l: tensor<3xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{operand #1 must be 1D tensor of 32-bit signless integer or 64-bit signless integer values}}
  %r = compose.memory_read %m[%l] : tensor<8x4xf32>, tensor<3xf32> -> tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}

// -----

func.func @write_rows(%m: tensor<8x4xf32>, %v: tensor<2x4xf32>, %l: tensor<3xi32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{writes 2 rows at 3 locations}}
  %r = compose.memory_write %v into %m[%l] : tensor<2x4xf32>, tensor<3xi32> -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}

// -----

func.func @write_width(%m: tensor<8x4xf32>, %v: tensor<3x5xf32>, %l: tensor<3xi32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{values have width 5, the memory 4}}
  %r = compose.memory_write %v into %m[%l] : tensor<3x5xf32>, tensor<3xi32> -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}

// -----

func.func @lookup_width(%q: tensor<2x3xf32>, %k: tensor<8x4xf32>, %v: tensor<8x6xf32>) -> tensor<2x6xf32> {
  // expected-error @+1 {{queries have width 3, keys 4}}
  %r = compose.memory_lookup %q in %k, %v : tensor<2x3xf32>, tensor<8x4xf32>, tensor<8x6xf32> -> tensor<2x6xf32>
  return %r : tensor<2x6xf32>
}

// -----

func.func @lookup_slots(%q: tensor<2x4xf32>, %k: tensor<8x4xf32>, %v: tensor<7x6xf32>) -> tensor<2x6xf32> {
  // expected-error @+1 {{has 8 keys but 7 values}}
  %r = compose.memory_lookup %q in %k, %v : tensor<2x4xf32>, tensor<8x4xf32>, tensor<7x6xf32> -> tensor<2x6xf32>
  return %r : tensor<2x6xf32>
}

// -----

func.func @lookup_result(%q: tensor<2x4xf32>, %k: tensor<8x4xf32>, %v: tensor<8x6xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{result 'tensor<2x5xf32>' must have one row per query of the values' width}}
  %r = compose.memory_lookup %q in %k, %v : tensor<2x4xf32>, tensor<8x4xf32>, tensor<8x6xf32> -> tensor<2x5xf32>
  return %r : tensor<2x5xf32>
}
