// RUN: tessel-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(tessel-fuse-attention))" | FileCheck %s

// BERT's form: q scaled by 1/sqrt(d) through a tiled constant, k given
// transposed, identity reshapes around both matmuls. The query scaling
// becomes the op's scale; the key is transposed back.
// CHECK-LABEL: func @bert_style
// CHECK-SAME: (%[[Q:.*]]: tensor<4x16x8xf32>, %[[KT:.*]]: tensor<4x8x32xf32>, %[[V:.*]]: tensor<4x32x8xf32>)
// CHECK: %[[K:.*]] = tosa.transpose %[[KT]] {perms = array<i32: 0, 2, 1>} : (tensor<4x8x32xf32>) -> tensor<4x32x8xf32>
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<4x16x8xf32>
// CHECK: %[[O:.*]] = tessel.attention ins(%[[Q]], %[[K]], %[[V]] : tensor<4x16x8xf32>, tensor<4x32x8xf32>, tensor<4x32x8xf32>) outs(%[[INIT]] : tensor<4x16x8xf32>) {scale = 2.500000e-01 : f32}
// CHECK-NOT: tessel.softmax
// CHECK-NOT: tosa.matmul
// CHECK: return %[[O]]
func.func @bert_style(%q: tensor<4x16x8xf32>, %kt: tensor<4x8x32xf32>, %v: tensor<4x32x8xf32>) -> tensor<4x16x8xf32> {
  %c = "tosa.const"() <{values = dense<4.0> : tensor<f32>}> : () -> tensor<f32>
  %s1 = tosa.const_shape {values = dense<1> : tensor<3xindex>} : () -> !tosa.shape<3>
  %c1 = tosa.reshape %c, %s1 : (tensor<f32>, !tosa.shape<3>) -> tensor<1x1x1xf32>
  %rep = tosa.const_shape {values = dense<[4, 16, 8]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %ct = tosa.tile %c1, %rep : (tensor<1x1x1xf32>, !tosa.shape<3>) -> tensor<4x16x8xf32>
  %qs = arith.divf %q, %ct : tensor<4x16x8xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %s = tosa.matmul %qs, %kt, %zp, %zp : (tensor<4x16x8xf32>, tensor<4x8x32xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x16x32xf32>
  %shape = tosa.const_shape {values = dense<[4, 16, 32]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s2 = tosa.reshape %s, %shape : (tensor<4x16x32xf32>, !tosa.shape<3>) -> tensor<4x16x32xf32>
  %p = tessel.softmax %s2 {axis = 2 : i64} : tensor<4x16x32xf32>
  %p2 = tosa.reshape %p, %shape : (tensor<4x16x32xf32>, !tosa.shape<3>) -> tensor<4x16x32xf32>
  %o = tosa.matmul %p2, %v, %zp, %zp : (tensor<4x16x32xf32>, tensor<4x32x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x16x8xf32>
  return %o : tensor<4x16x8xf32>
}

// -----

// GPT's form: scores times a constant, plus a broadcast causal mask.
// CHECK-LABEL: func @masked
// CHECK-SAME: %[[M:[^:]*]]: tensor<1x16x16xf32>
// CHECK: tessel.attention ins({{.*}}) mask(%[[M]] : tensor<1x16x16xf32>) outs({{.*}}) {scale = 5.000000e-01 : f32}
// CHECK-NOT: tessel.softmax
func.func @masked(%q: tensor<2x16x8xf32>, %kt: tensor<2x8x16xf32>, %v: tensor<2x16x4xf32>, %m: tensor<1x16x16xf32>) -> tensor<2x16x4xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %s = tosa.matmul %q, %kt, %zp, %zp : (tensor<2x16x8xf32>, tensor<2x8x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x16x16xf32>
  %c = "tosa.const"() <{values = dense<0.5> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %ss = tosa.mul %s, %c, %shift : (tensor<2x16x16xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<2x16x16xf32>
  %sm = tosa.add %m, %ss : (tensor<1x16x16xf32>, tensor<2x16x16xf32>) -> tensor<2x16x16xf32>
  %p = tessel.softmax %sm {axis = -1 : i64} : tensor<2x16x16xf32>
  %o = tosa.matmul %p, %v, %zp, %zp : (tensor<2x16x16xf32>, tensor<2x16x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x16x4xf32>
  return %o : tensor<2x16x4xf32>
}

// -----

// The probabilities are also returned: they must exist, nothing fuses.
// CHECK-LABEL: func @probs_used_twice
// CHECK-NOT: tessel.attention
// CHECK: tessel.softmax
func.func @probs_used_twice(%q: tensor<2x16x8xf32>, %kt: tensor<2x8x16xf32>, %v: tensor<2x16x4xf32>) -> (tensor<2x16x4xf32>, tensor<2x16x16xf32>) {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %s = tosa.matmul %q, %kt, %zp, %zp : (tensor<2x16x8xf32>, tensor<2x8x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x16x16xf32>
  %p = tessel.softmax %s {axis = 2 : i64} : tensor<2x16x16xf32>
  %o = tosa.matmul %p, %v, %zp, %zp : (tensor<2x16x16xf32>, tensor<2x16x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x16x4xf32>
  return %o, %p : tensor<2x16x4xf32>, tensor<2x16x16xf32>
}

// -----

// Softmax over the query axis is not attention.
// CHECK-LABEL: func @wrong_axis
// CHECK-NOT: tessel.attention
func.func @wrong_axis(%q: tensor<2x16x8xf32>, %kt: tensor<2x8x16xf32>, %v: tensor<2x16x4xf32>) -> tensor<2x16x4xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %s = tosa.matmul %q, %kt, %zp, %zp : (tensor<2x16x8xf32>, tensor<2x8x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x16x16xf32>
  %p = tessel.softmax %s {axis = 1 : i64} : tensor<2x16x16xf32>
  %o = tosa.matmul %p, %v, %zp, %zp : (tensor<2x16x16xf32>, tensor<2x16x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x16x4xf32>
  return %o : tensor<2x16x4xf32>
}

// -----

// Scaling after the mask (scale * (s + mask)) is not the op's
// scale * s + mask: left alone.
// CHECK-LABEL: func @scale_after_mask
// CHECK-NOT: tessel.attention
func.func @scale_after_mask(%q: tensor<2x16x8xf32>, %kt: tensor<2x8x16xf32>, %v: tensor<2x16x4xf32>, %m: tensor<1x16x16xf32>) -> tensor<2x16x4xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %s = tosa.matmul %q, %kt, %zp, %zp : (tensor<2x16x8xf32>, tensor<2x8x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x16x16xf32>
  %sm = tosa.add %s, %m : (tensor<2x16x16xf32>, tensor<1x16x16xf32>) -> tensor<2x16x16xf32>
  %c = "tosa.const"() <{values = dense<0.5> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %ss = tosa.mul %sm, %c, %shift : (tensor<2x16x16xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<2x16x16xf32>
  %p = tessel.softmax %ss {axis = 2 : i64} : tensor<2x16x16xf32>
  %o = tosa.matmul %p, %v, %zp, %zp : (tensor<2x16x16xf32>, tensor<2x16x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x16x4xf32>
  return %o : tensor<2x16x4xf32>
}

// -----

// f16 attention stays unfused (the kernel is f32).
// CHECK-LABEL: func @f16
// CHECK-NOT: tessel.attention
func.func @f16(%q: tensor<2x16x8xf16>, %kt: tensor<2x8x16xf16>, %v: tensor<2x16x4xf16>) -> tensor<2x16x4xf16> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf16>}> : () -> tensor<1xf16>
  %s = tosa.matmul %q, %kt, %zp, %zp : (tensor<2x16x8xf16>, tensor<2x8x16xf16>, tensor<1xf16>, tensor<1xf16>) -> tensor<2x16x16xf16>
  %p = tessel.softmax %s {axis = 2 : i64} : tensor<2x16x16xf16>
  %o = tosa.matmul %p, %v, %zp, %zp : (tensor<2x16x16xf16>, tensor<2x16x4xf16>, tensor<1xf16>, tensor<1xf16>) -> tensor<2x16x4xf16>
  return %o : tensor<2x16x4xf16>
}
