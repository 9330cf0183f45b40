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

// -----

// The ONNX importer's form with run-time sizes (MatMul.cpp): each matmul's
// operands are views emptied where a size check fails, and its result is
// required. The chain fuses through them; the fused op checks the sizes
// the matmuls needed equal (batch of q, k and v; key length of k and v)
// and empties the queries where they differ, and its result is required.
// CHECK-LABEL: func @run_time_sizes
// CHECK-SAME: (%[[Q:[^:]*]]: tensor<?x?x8xf32>, %[[KT:[^:]*]]: tensor<?x8x?xf32>, %[[V:[^:]*]]: tensor<?x?x4xf32>)
// CHECK-DAG: %[[QB:.*]] = tensor.dim %[[Q]], %c0
// CHECK-DAG: %[[KB:.*]] = tensor.dim %[[KT]], %c0
// CHECK: %[[B1:.*]] = arith.cmpi eq, %[[QB]], %[[KB]]
// CHECK: %[[VB:.*]] = tensor.dim %[[V]], %c0
// CHECK: %[[B2:.*]] = arith.cmpi eq, %{{.*}}, %[[VB]]
// CHECK: %[[B:.*]] = arith.andi %[[B1]], %[[B2]]
// CHECK: %[[KN:.*]] = tensor.dim %[[KT]], %c2
// CHECK: %[[VN:.*]] = tensor.dim %[[V]], %c1
// CHECK: %[[N:.*]] = arith.cmpi eq, %[[KN]], %[[VN]]
// CHECK: %[[OK:.*]] = arith.andi %[[B]], %[[N]]
// CHECK: %[[K:.*]] = tosa.transpose %[[KT]] {perms = array<i32: 0, 2, 1>}
// CHECK: %[[EMPTY:.*]] = arith.select %[[OK]], %{{.*}}, %c0
// CHECK: %[[SHAPE:.*]] = tensor.from_elements %[[EMPTY]], %{{.*}}, %c8
// CHECK: %[[QV:.*]] = tensor.reshape %[[Q]](%[[SHAPE]])
// CHECK: %[[O:.*]] = tessel.attention ins(%[[QV]], %[[K]], %[[V]] : {{.*}}) outs({{.*}}) {scale = 2.500000e-01 : f32}
// CHECK: %[[HOLDS:.*]] = tensor.from_elements %[[OK]] : tensor<i1>
// CHECK: %[[R:.*]] = tessel.require %[[HOLDS]], %[[O]] else %[[O]] {status = -3 : i32}
// CHECK-NOT: tessel.softmax
// CHECK-NOT: tosa.matmul
// CHECK-NOT: tessel.require
// CHECK: return %[[R]]
func.func @run_time_sizes(%q: tensor<?x?x8xf32>, %kt: tensor<?x8x?xf32>, %v: tensor<?x?x4xf32>) -> tensor<?x?x4xf32> {
    %0 = "tosa.const"() <{values = dense<2.500000e-01> : tensor<f32>}> : () -> tensor<f32>
    %c8 = arith.constant 8 : index
    %c2 = arith.constant 2 : index
    %dim = tensor.dim %kt, %c2 : tensor<?x8x?xf32>
    %c8_0 = arith.constant 8 : index
    %1 = arith.cmpi eq, %c8, %c8_0 : index
    %c0 = arith.constant 0 : index
    %dim_1 = tensor.dim %q, %c0 : tensor<?x?x8xf32>
    %c0_2 = arith.constant 0 : index
    %dim_3 = tensor.dim %kt, %c0_2 : tensor<?x8x?xf32>
    %2 = arith.cmpi eq, %dim_1, %dim_3 : index
    %3 = arith.andi %1, %2 : i1
    %c0_4 = arith.constant 0 : index
    %dim_5 = tensor.dim %q, %c0_4 : tensor<?x?x8xf32>
    %c0_6 = arith.constant 0 : index
    %4 = arith.select %3, %dim_5, %c0_6 : index
    %c1 = arith.constant 1 : index
    %dim_7 = tensor.dim %q, %c1 : tensor<?x?x8xf32>
    %from_elements = tensor.from_elements %4, %dim_7, %c8 : tensor<3xindex>
    %reshape = tensor.reshape %q(%from_elements) : (tensor<?x?x8xf32>, tensor<3xindex>) -> tensor<?x?x8xf32>
    %c0_8 = arith.constant 0 : index
    %dim_9 = tensor.dim %kt, %c0_8 : tensor<?x8x?xf32>
    %c0_10 = arith.constant 0 : index
    %5 = arith.select %3, %dim_9, %c0_10 : index
    %c8_11 = arith.constant 8 : index
    %from_elements_12 = tensor.from_elements %5, %c8_11, %dim : tensor<3xindex>
    %reshape_13 = tensor.reshape %kt(%from_elements_12) : (tensor<?x8x?xf32>, tensor<3xindex>) -> tensor<?x8x?xf32>
    %6 = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf32>}> : () -> tensor<1xf32>
    %7 = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf32>}> : () -> tensor<1xf32>
    %8 = tosa.matmul %reshape, %reshape_13, %6, %7 : (tensor<?x?x8xf32>, tensor<?x8x?xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<?x?x?xf32>
    %from_elements_14 = tensor.from_elements %3 : tensor<i1>
    %9 = tessel.require %from_elements_14, %8 else %8 {status = -3 : i32} : tensor<i1>, tensor<?x?x?xf32>
    %10 = tosa.const_shape  {values = dense<1> : tensor<3xindex>} : () -> !tosa.shape<3>
    %11 = tosa.reshape %0, %10 : (tensor<f32>, !tosa.shape<3>) -> tensor<1x1x1xf32>
    %12 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
    %13 = tosa.mul %9, %11, %12 : (tensor<?x?x?xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<?x?x?xf32>
    %14 = tessel.softmax %13 {axis = 2 : i64} : tensor<?x?x?xf32>
    %c2_15 = arith.constant 2 : index
    %dim_16 = tensor.dim %14, %c2_15 : tensor<?x?x?xf32>
    %c4 = arith.constant 4 : index
    %c1_17 = arith.constant 1 : index
    %dim_18 = tensor.dim %v, %c1_17 : tensor<?x?x4xf32>
    %15 = arith.cmpi eq, %dim_16, %dim_18 : index
    %c0_19 = arith.constant 0 : index
    %dim_20 = tensor.dim %14, %c0_19 : tensor<?x?x?xf32>
    %c0_21 = arith.constant 0 : index
    %dim_22 = tensor.dim %v, %c0_21 : tensor<?x?x4xf32>
    %16 = arith.cmpi eq, %dim_20, %dim_22 : index
    %17 = arith.andi %15, %16 : i1
    %c0_23 = arith.constant 0 : index
    %dim_24 = tensor.dim %14, %c0_23 : tensor<?x?x?xf32>
    %c0_25 = arith.constant 0 : index
    %18 = arith.select %17, %dim_24, %c0_25 : index
    %c1_26 = arith.constant 1 : index
    %dim_27 = tensor.dim %14, %c1_26 : tensor<?x?x?xf32>
    %from_elements_28 = tensor.from_elements %18, %dim_27, %dim_16 : tensor<3xindex>
    %reshape_29 = tensor.reshape %14(%from_elements_28) : (tensor<?x?x?xf32>, tensor<3xindex>) -> tensor<?x?x?xf32>
    %c0_30 = arith.constant 0 : index
    %dim_31 = tensor.dim %v, %c0_30 : tensor<?x?x4xf32>
    %c0_32 = arith.constant 0 : index
    %19 = arith.select %17, %dim_31, %c0_32 : index
    %c1_33 = arith.constant 1 : index
    %dim_34 = tensor.dim %v, %c1_33 : tensor<?x?x4xf32>
    %from_elements_35 = tensor.from_elements %19, %dim_34, %c4 : tensor<3xindex>
    %reshape_36 = tensor.reshape %v(%from_elements_35) : (tensor<?x?x4xf32>, tensor<3xindex>) -> tensor<?x?x4xf32>
    %20 = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf32>}> : () -> tensor<1xf32>
    %21 = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf32>}> : () -> tensor<1xf32>
    %22 = tosa.matmul %reshape_29, %reshape_36, %20, %21 : (tensor<?x?x?xf32>, tensor<?x?x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<?x?x4xf32>
    %from_elements_37 = tensor.from_elements %17 : tensor<i1>
    %23 = tessel.require %from_elements_37, %22 else %22 {status = -3 : i32} : tensor<i1>, tensor<?x?x4xf32>
    return %23 : tensor<?x?x4xf32>
}

// -----

// A require that is not the importers' check of a matmul (its fallback is
// another value) stays, and so does the chain.
// CHECK-LABEL: func @other_require
// CHECK-NOT: tessel.attention
// CHECK: tessel.softmax
func.func @other_require(%q: tensor<?x16x8xf32>, %kt: tensor<?x8x16xf32>, %v: tensor<?x16x4xf32>, %ok: tensor<i1>, %other: tensor<?x16x16xf32>) -> tensor<?x16x4xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %s = tosa.matmul %q, %kt, %zp, %zp : (tensor<?x16x8xf32>, tensor<?x8x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<?x16x16xf32>
  %r = tessel.require %ok, %s else %other {status = -3 : i32} : tensor<i1>, tensor<?x16x16xf32>
  %p = tessel.softmax %r {axis = 2 : i64} : tensor<?x16x16xf32>
  %o = tosa.matmul %p, %v, %zp, %zp : (tensor<?x16x16xf32>, tensor<?x16x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<?x16x4xf32>
  return %o : tensor<?x16x4xf32>
}
