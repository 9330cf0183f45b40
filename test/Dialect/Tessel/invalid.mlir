// RUN: tessel-opt %s -split-input-file -verify-diagnostics

func.func @softmax_axis(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{attribute 'axis' = 2 is out of range for an input of rank 2}}
  %0 = tessel.softmax %x {axis = 2 : i64} : tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @log_softmax_axis(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{attribute 'axis' = -3 is out of range for an input of rank 2}}
  %0 = tessel.log_softmax %x {axis = -3 : i64} : tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @softmax_int(%x: tensor<2x8xi32>) -> tensor<2x8xi32> {
  // expected-error @+1 {{operand #0 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values}}
  %0 = tessel.softmax %x {axis = 0 : i64} : tensor<2x8xi32>
  return %0 : tensor<2x8xi32>
}

// -----

func.func @layer_norm_scale_shape(%x: tensor<4x16xf32>, %g: tensor<8xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'scale' has type 'tensor<8xf32>' but the normalized dimensions are [16]}}
  %0 = tessel.layer_norm %x scale %g {axis = -1 : i64} : tensor<4x16xf32>, tensor<8xf32> -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

func.func @layer_norm_eps(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{attribute 'epsilon' must be non-negative}}
  %0 = tessel.layer_norm %x {axis = -1 : i64, epsilon = -1.0 : f32} : tensor<4x16xf32> -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

func.func @batch_norm_channels(%x: tensor<1x4x4x3xf32>, %p: tensor<4xf32>) -> tensor<1x4x4x3xf32> {
  // expected-error @+1 {{parameters have 4 elements but the input has 3 channels on axis 3}}
  %0 = tessel.batch_norm %x, %p, %p, %p, %p {channel_axis = 3 : i64} : tensor<1x4x4x3xf32>, tensor<4xf32> -> tensor<1x4x4x3xf32>
  return %0 : tensor<1x4x4x3xf32>
}

// -----

func.func @batch_norm_axis(%x: tensor<1x4x4x3xf32>, %p: tensor<3xf32>) -> tensor<1x4x4x3xf32> {
  // expected-error @+1 {{attribute 'channel_axis' = 4 is out of range for an input of rank 4}}
  %0 = tessel.batch_norm %x, %p, %p, %p, %p {channel_axis = 4 : i64} : tensor<1x4x4x3xf32>, tensor<3xf32> -> tensor<1x4x4x3xf32>
  return %0 : tensor<1x4x4x3xf32>
}

// -----

func.func @gelu_bad_approx(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{expected ::mlir::tessel::GeluApproximation to be one of: none, tanh}}
  // expected-error @+1 {{failed to parse Tessel_GeluApproximationAttr parameter 'value'}}
  %0 = tessel.gelu %x {approximate = #tessel.gelu_approximation<sigmoid>} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @conv_groups_divide(%x: tensor<1x8x8x4xf32>, %w: tensor<6x3x3x1xf32>, %b: tensor<6xf32>) -> tensor<1x8x8x6xf32> {
  // expected-error @+1 {{input channels (4) are not divisible by 'groups' (3)}}
  %0 = tessel.conv2d %x, %w, %b {groups = 3 : i64, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>} : (tensor<1x8x8x4xf32>, tensor<6x3x3x1xf32>, tensor<6xf32>) -> tensor<1x8x8x6xf32>
  return %0 : tensor<1x8x8x6xf32>
}

// -----

func.func @conv_weight_channels(%x: tensor<1x8x8x4xf32>, %w: tensor<6x3x3x4xf32>, %b: tensor<6xf32>) -> tensor<1x8x8x6xf32> {
  // expected-error @+1 {{weight input-channel dim is 4, expected C/groups = 2}}
  %0 = tessel.conv2d %x, %w, %b {groups = 2 : i64, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>} : (tensor<1x8x8x4xf32>, tensor<6x3x3x4xf32>, tensor<6xf32>) -> tensor<1x8x8x6xf32>
  return %0 : tensor<1x8x8x6xf32>
}

// -----

func.func @conv_pad_arity(%x: tensor<1x8x8x4xf32>, %w: tensor<6x3x3x4xf32>, %b: tensor<6xf32>) -> tensor<1x8x8x6xf32> {
  // expected-error @+1 {{attribute 'pad' must have 4 values [top, bottom, left, right], got 2}}
  %0 = tessel.conv2d %x, %w, %b {groups = 1 : i64, pad = array<i64: 1, 1>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>} : (tensor<1x8x8x4xf32>, tensor<6x3x3x4xf32>, tensor<6xf32>) -> tensor<1x8x8x6xf32>
  return %0 : tensor<1x8x8x6xf32>
}

// -----

func.func @conv_stride(%x: tensor<1x8x8x4xf32>, %w: tensor<6x3x3x4xf32>, %b: tensor<6xf32>) -> tensor<1x8x8x6xf32> {
  // expected-error @+1 {{attribute 'stride' must be positive}}
  %0 = tessel.conv2d %x, %w, %b {groups = 1 : i64, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 0, 1>, dilation = array<i64: 1, 1>} : (tensor<1x8x8x4xf32>, tensor<6x3x3x4xf32>, tensor<6xf32>) -> tensor<1x8x8x6xf32>
  return %0 : tensor<1x8x8x6xf32>
}

// -----

func.func @conv_result_shape(%x: tensor<1x8x8x4xf32>, %w: tensor<6x3x3x4xf32>, %b: tensor<6xf32>) -> tensor<1x8x8x6xf32> {
  // expected-error @+1 {{result type 'tensor<1x8x8x6xf32>' does not match the inferred shape [1, 6, 6, 6]}}
  %0 = tessel.conv2d %x, %w, %b {groups = 1 : i64, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>} : (tensor<1x8x8x4xf32>, tensor<6x3x3x4xf32>, tensor<6xf32>) -> tensor<1x8x8x6xf32>
  return %0 : tensor<1x8x8x6xf32>
}

// -----

func.func @conv_bias(%x: tensor<1x8x8x4xf32>, %w: tensor<6x3x3x4xf32>, %b: tensor<5xf32>) -> tensor<1x6x6x6xf32> {
  // expected-error @+1 {{bias has 5 elements, expected 6}}
  %0 = tessel.conv2d %x, %w, %b {groups = 1 : i64, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>} : (tensor<1x8x8x4xf32>, tensor<6x3x3x4xf32>, tensor<5xf32>) -> tensor<1x6x6x6xf32>
  return %0 : tensor<1x6x6x6xf32>
}

// -----

func.func @reduce_mean_shape(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{result dim 1 is 8, expected 1}}
  %0 = tessel.reduce_mean %x {axis = 1 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @conv_dilation_overflow(%x: tensor<1x8x8x4xf32>, %w: tensor<6x5x1x4xf32>, %b: tensor<6xf32>) -> tensor<1x4x8x6xf32> {
  // expected-error @+1 {{padding or dilation on spatial dim 0 overflows 64-bit arithmetic}}
  %0 = tessel.conv2d %x, %w, %b {groups = 1 : i64, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 4611686018427387904, 1>} : (tensor<1x8x8x4xf32>, tensor<6x5x1x4xf32>, tensor<6xf32>) -> tensor<1x4x8x6xf32>
  return %0 : tensor<1x4x8x6xf32>
}

// -----

func.func @conv_f64(%x: tensor<1x8x8x4xf64>, %w: tensor<6x3x3x4xf64>, %b: tensor<6xf64>) -> tensor<1x6x6x6xf64> {
  // expected-error @+1 {{operand #0 must be 4D tensor of 16-bit float or bfloat16 type or 32-bit float values}}
  %0 = tessel.conv2d %x, %w, %b {groups = 1 : i64, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>} : (tensor<1x8x8x4xf64>, tensor<6x3x3x4xf64>, tensor<6xf64>) -> tensor<1x6x6x6xf64>
  return %0 : tensor<1x6x6x6xf64>
}

// -----

func.func @softmax_empty(%x: tensor<0x4xf32>) -> tensor<0x4xf32> {
  // expected-error @+1 {{operand of type 'tensor<0x4xf32>' has a zero-sized dimension}}
  %0 = tessel.softmax %x {axis = 1 : i64} : tensor<0x4xf32>
  return %0 : tensor<0x4xf32>
}

// -----

func.func @reduce_mean_empty(%x: tensor<0xf32>) -> tensor<1xf32> {
  // expected-error @+1 {{operand of type 'tensor<0xf32>' has a zero-sized dimension}}
  %0 = tessel.reduce_mean %x {axis = 0 : i64} : (tensor<0xf32>) -> tensor<1xf32>
  return %0 : tensor<1xf32>
}

// -----

func.func @gelu_empty(%x: tensor<3x0xf32>) -> tensor<3x0xf32> {
  // expected-error @+1 {{operand of type 'tensor<3x0xf32>' has a zero-sized dimension}}
  %0 = tessel.gelu %x : tensor<3x0xf32>
  return %0 : tensor<3x0xf32>
}

// -----

func.func @check_indices_zero_out_of_range(%i: tensor<3xi64>) -> tensor<3xi64> {
  // expected-error @+1 {{needs lower <= 0 < upper, got [1, 5)}}
  %0 = tessel.check_indices %i {lower = 1 : i64, upper = 5 : i64} : tensor<3xi64>
  return %0 : tensor<3xi64>
}

// -----

func.func @check_indices_too_wide(%i: tensor<3xi8>) -> tensor<3xi8> {
  // expected-error @+1 {{bounds [-300, 300) do not fit the 8-bit indices}}
  %0 = tessel.check_indices %i {lower = -300 : i64, upper = 300 : i64} : tensor<3xi8>
  return %0 : tensor<3xi8>
}

// -----

func.func @require_bad_status(%ok: tensor<i1>, %v: tensor<2xindex>) -> tensor<2xindex> {
  // expected-error @+1 {{status 1 is not a TESSEL_ENTRY_* failure code (-3, -4, -5, -6)}}
  %0 = tessel.require %ok, %v else %v {status = 1 : i32} : tensor<i1>, tensor<2xindex>
  return %0 : tensor<2xindex>
}

// -----

func.func @top_k_too_many(%x: tensor<2x3xf32>) -> (tensor<2x4xf32>, tensor<2x4xi64>) {
  // expected-error @+1 {{k = 4 is outside [1, 3]}}
  %v, %i = tessel.top_k %x {axis = 1 : i64, k = 4 : i64} : tensor<2x3xf32> -> tensor<2x4xf32>, tensor<2x4xi64>
  return %v, %i : tensor<2x4xf32>, tensor<2x4xi64>
}

// -----

func.func @top_k_shape(%x: tensor<2x3xf32>) -> (tensor<2x2xf32>, tensor<3x2xi64>) {
  // expected-error @+1 {{result dim 0 is 3, expected 2}}
  %v, %i = tessel.top_k %x {axis = 1 : i64, k = 2 : i64} : tensor<2x3xf32> -> tensor<2x2xf32>, tensor<3x2xi64>
  return %v, %i : tensor<2x2xf32>, tensor<3x2xi64>
}

// -----

func.func @top_k_values_type(%x: tensor<2x3xf32>) -> (tensor<2x2xf16>, tensor<2x2xi64>) {
  // expected-error @+1 {{values must have the input's element type}}
  %v, %i = tessel.top_k %x {axis = 1 : i64, k = 2 : i64} : tensor<2x3xf32> -> tensor<2x2xf16>, tensor<2x2xi64>
  return %v, %i : tensor<2x2xf16>, tensor<2x2xi64>
}

// -----

func.func @top_k_axis(%x: tensor<2x3xf32>) -> (tensor<2x2xf32>, tensor<2x2xi64>) {
  // expected-error @+1 {{attribute 'axis' = 2 is out of range for an input of rank 2}}
  %v, %i = tessel.top_k %x {axis = 2 : i64, k = 2 : i64} : tensor<2x3xf32> -> tensor<2x2xf32>, tensor<2x2xi64>
  return %v, %i : tensor<2x2xf32>, tensor<2x2xi64>
}

// -----

func.func @nonzero_of_a_scalar(%x: tensor<f32>) -> tensor<0x?xi64> {
  // expected-error @+1 {{input must have rank 1 or more}}
  %c = tessel.nonzero %x : tensor<f32> -> tensor<0x?xi64>
  return %c : tensor<0x?xi64>
}

// -----

func.func @nonzero_rows(%x: tensor<3x4xf32>) -> tensor<3x?xi64> {
  // expected-error @+1 {{result must be 2 x ? (one row per input dimension), got 'tensor<3x?xi64>'}}
  %c = tessel.nonzero %x : tensor<3x4xf32> -> tensor<3x?xi64>
  return %c : tensor<3x?xi64>
}

// -----

func.func @gather_axis(%x: tensor<6x8xf32>, %i: tensor<?xi64>) -> tensor<6x?xf32> {
  // expected-error @+1 {{attribute 'axis' = -1 must be in [0, 2)}}
  %0 = tessel.gather %x, %i {axis = -1 : i64} : tensor<6x8xf32>, tensor<?xi64> -> tensor<6x?xf32>
  return %0 : tensor<6x?xf32>
}

// -----

func.func @gather_result(%x: tensor<6x8xf32>, %i: tensor<3xi64>) -> tensor<3x6xf32> {
  // expected-error @+1 {{result type 'tensor<3x6xf32>' must have the input's sizes with dimension 0 replaced by the indices' sizes}}
  %0 = tessel.gather %x, %i {axis = 0 : i64} : tensor<6x8xf32>, tensor<3xi64> -> tensor<3x6xf32>
  return %0 : tensor<3x6xf32>
}

// -----

func.func @gather_more_static_than_its_indices(%x: tensor<6x8xf32>, %i: tensor<?xi64>) -> tensor<3x8xf32> {
  // expected-error @+1 {{result type 'tensor<3x8xf32>' must have the input's sizes with dimension 0 replaced by the indices' sizes}}
  %0 = tessel.gather %x, %i {axis = 0 : i64} : tensor<6x8xf32>, tensor<?xi64> -> tensor<3x8xf32>
  return %0 : tensor<3x8xf32>
}

// -----

func.func @gather_element_type(%x: tensor<6x8xf32>, %i: tensor<3xi64>) -> tensor<3x8xf16> {
  // expected-error @+1 {{result element type 'f16' differs from the input's 'f32'}}
  %0 = tessel.gather %x, %i {axis = 0 : i64} : tensor<6x8xf32>, tensor<3xi64> -> tensor<3x8xf16>
  return %0 : tensor<3x8xf16>
}

// -----

func.func @scatter_rank(%x: tensor<6x8xf32>, %i: tensor<?xi64>, %u: tensor<?xf32>) -> tensor<6x8xf32> {
  // expected-error @+1 {{indices and updates must have the input's rank 2}}
  %0 = tessel.scatter_elements %x, %i, %u {axis = 0 : i64} : tensor<6x8xf32>, tensor<?xi64>, tensor<?xf32> -> tensor<6x8xf32>
  return %0 : tensor<6x8xf32>
}

// -----

func.func @scatter_sizes(%x: tensor<6x8xf32>, %i: tensor<2x8xi64>, %u: tensor<3x8xf32>) -> tensor<6x8xf32> {
  // expected-error @+1 {{indices 'tensor<2x8xi64>' and updates 'tensor<3x8xf32>' must have the same sizes}}
  %0 = tessel.scatter_elements %x, %i, %u {axis = 0 : i64} : tensor<6x8xf32>, tensor<2x8xi64>, tensor<3x8xf32> -> tensor<6x8xf32>
  return %0 : tensor<6x8xf32>
}

// -----

func.func @scatter_result(%x: tensor<6x8xf32>, %i: tensor<?x8xi64>, %u: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{result type 'tensor<?x8xf32>' must be the input's, 'tensor<6x8xf32>'}}
  %0 = tessel.scatter_elements %x, %i, %u {axis = 0 : i64} : tensor<6x8xf32>, tensor<?x8xi64>, tensor<?x8xf32> -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

func.func @scatter_updates_type(%x: tensor<6x8xf32>, %i: tensor<?x8xi64>, %u: tensor<?x8xf16>) -> tensor<6x8xf32> {
  // expected-error @+1 {{updates' element type 'f16' differs from the input's 'f32'}}
  %0 = tessel.scatter_elements %x, %i, %u {axis = 0 : i64} : tensor<6x8xf32>, tensor<?x8xi64>, tensor<?x8xf16> -> tensor<6x8xf32>
  return %0 : tensor<6x8xf32>
}

// -----

func.func @scatter_bool_reduction(%x: tensor<6x8xi1>, %i: tensor<?x8xi64>, %u: tensor<?x8xi1>) -> tensor<6x8xi1> {
  // expected-error @+1 {{reduction 'add' needs float or signless integer (not i1) elements, got 'i1'}}
  %0 = tessel.scatter_elements %x, %i, %u {axis = 0 : i64, reduction = #tessel.scatter_reduction<add>} : tensor<6x8xi1>, tensor<?x8xi64>, tensor<?x8xi1> -> tensor<6x8xi1>
  return %0 : tensor<6x8xi1>
}

// -----

func.func @random_sizes(%n: index) -> tensor<?x?xf32> {
  // expected-error @+1 {{needs one size per dynamic dimension of 'tensor<?x?xf32>' (2), got 1}}
  %0 = tessel.random_uniform(%n) : tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

func.func @random_low_high() -> tensor<4xf32> {
  // expected-error @+1 {{low (2.000000e+00) must not exceed high (1.000000e+00)}}
  %0 = tessel.random_uniform {low = 2.0, high = 1.0} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @random_scale() -> tensor<4xf64> {
  // expected-error @+1 {{scale (-1.000000e+00) must not be negative}}
  %0 = tessel.random_normal {scale = -1.0} : tensor<4xf64>
  return %0 : tensor<4xf64>
}

// -----

func.func @random_infinite() -> tensor<4xf32> {
  // expected-error @+1 {{mean and scale must be finite}}
  %0 = tessel.random_normal {mean = 0x7FF0000000000000 : f64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @random_integer() -> tensor<4xi32> {
  // expected-error @+1 {{result #0 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values}}
  %0 = tessel.random_uniform : tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @all_to_all_v_row_mismatch(%x: tensor<4x8xf32>, %s: tensor<2xi32>, %init: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %comm = mpi.comm_world : !mpi.comm
  // expected-error @+1 {{input 'tensor<4x8xf32>' and init 'tensor<8x4xf32>' must have the same element type and the same dimensions past the first}}
  %y = tessel.all_to_all_v %x, %s, %s, %comm outs(%init : tensor<8x4xf32>) : tensor<4x8xf32>, tensor<2xi32>, tensor<2xi32> -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

func.func @all_to_all_v_counts(%x: tensor<4x8xf32>, %s: tensor<2xi64>, %init: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %comm = mpi.comm_world : !mpi.comm
  // expected-error @+1 {{row counts must be 1-D i32 (one per process), got 'tensor<2xi64>'}}
  %y = tessel.all_to_all_v %x, %s, %s, %comm outs(%init : tensor<8x8xf32>) : tensor<4x8xf32>, tensor<2xi64>, tensor<2xi64> -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

// -----

func.func @all_to_all_v_count_sizes(%x: tensor<4x8xf32>, %s: tensor<2xi32>, %r: tensor<3xi32>, %init: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %comm = mpi.comm_world : !mpi.comm
  // expected-error @+1 {{send_rows and recv_rows must have one count per process each, got 2 and 3}}
  %y = tessel.all_to_all_v %x, %s, %r, %comm outs(%init : tensor<8x8xf32>) : tensor<4x8xf32>, tensor<2xi32>, tensor<3xi32> -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

// -----

func.func @all_gather_copies(%x: tensor<3x8xf32>, %init: tensor<7x8xf32>) -> tensor<7x8xf32> {
  %comm = mpi.comm_world : !mpi.comm
  // expected-error @+1 {{init's 7 rows must be a whole number of copies of the input's 3}}
  %y = tessel.all_gather %x, %comm outs(%init : tensor<7x8xf32>) : tensor<3x8xf32> -> tensor<7x8xf32>
  return %y : tensor<7x8xf32>
}

// -----

func.func @all_gather_mixed(%x: tensor<3x8xf32>, %init: memref<6x8xf32>) {
  %comm = mpi.comm_world : !mpi.comm
  // expected-error @+1 {{operands must be all ranked tensors or all memrefs, of rank 1 or more; got 'tensor<3x8xf32>'}}
  tessel.all_gather %x, %comm outs(%init : memref<6x8xf32>) : tensor<3x8xf32>
  return
}

// -----

func.func @all_gather_scalar(%x: tensor<f32>, %init: tensor<2xf32>) -> tensor<2xf32> {
  %comm = mpi.comm_world : !mpi.comm
  // expected-error @+1 {{operands must be all ranked tensors or all memrefs, of rank 1 or more; got 'tensor<f32>'}}
  %y = tessel.all_gather %x, %comm outs(%init : tensor<2xf32>) : tensor<f32> -> tensor<2xf32>
  return %y : tensor<2xf32>
}
