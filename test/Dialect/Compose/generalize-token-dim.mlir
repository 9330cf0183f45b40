// RUN: tessel-opt %s -split-input-file -compose-generalize-token-dim -verify-diagnostics | FileCheck %s

// An FFN expert as the ONNX importer writes it for 6 tokens: Gemm as
// reshape + matmul, the bias broadcast, and erf-GELU whose division tiles a
// scalar to the full 6 x 16 (arith ops do not broadcast).
// CHECK-LABEL: compose.component @expert(%{{.*}}: tensor<?x8xf32>) -> tensor<?x8xf32>
// CHECK: %[[S3:.*]] = tosa.const_shape {values = dense<[1, -1, 8]> : tensor<3xindex>}
// CHECK: tosa.reshape %arg0, %[[S3]] : (tensor<?x8xf32>, !tosa.shape<3>) -> tensor<1x?x8xf32>
// CHECK: tosa.matmul {{.*}} -> tensor<1x?x16xf32>
// CHECK: tosa.add {{.*}} : (tensor<?x16xf32>, tensor<1x16xf32>) -> tensor<?x16xf32>
// CHECK: %[[T:.*]] = tensor.dim %arg0, %c0
// CHECK: %[[E:.*]] = tensor.empty(%[[T]]) : tensor<?x16xf32>
// CHECK: %[[B:.*]] = linalg.broadcast ins(%{{.*}} : tensor<16xf32>) outs(%[[E]] : tensor<?x16xf32>) dimensions = [0]
// CHECK: arith.divf %{{.*}}, %[[B]] : tensor<?x16xf32>
// CHECK: tosa.erf {{.*}} -> tensor<?x16xf32>
// CHECK: tosa.mul {{.*}} : (tensor<?x16xf32>, tensor<1x16xf32>, tensor<1xi8>) -> tensor<?x16xf32>
// CHECK: tosa.reduce_max {{.*}} {axis = 1 : i32} : (tensor<?x16xf32>) -> tensor<?x1xf32>
// CHECK: tessel.softmax {{.*}} : tensor<?x16xf32>
// CHECK: tosa.transpose {{.*}} : (tensor<?x16xf32>) -> tensor<16x?xf32>
// CHECK: compose.return %{{.*}} : tensor<?x8xf32>
compose.component @expert(%x: tensor<6x8xf32>) -> tensor<6x8xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %w1 = "tosa.const"() <{values = dense<0.5> : tensor<1x8x16xf32>}> : () -> tensor<1x8x16xf32>
  %w2 = "tosa.const"() <{values = dense<0.25> : tensor<1x16x8xf32>}> : () -> tensor<1x16x8xf32>
  %b1 = "tosa.const"() <{values = dense<0.1> : tensor<1x16xf32>}> : () -> tensor<1x16xf32>
  %sqrt2 = "tosa.const"() <{values = dense<1.41421354> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %half = "tosa.const"() <{values = dense<0.5> : tensor<6x16xf32>}> : () -> tensor<6x16xf32>
  %s3 = tosa.const_shape {values = dense<[1, 6, 8]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %x3 = tosa.reshape %x, %s3 : (tensor<6x8xf32>, !tosa.shape<3>) -> tensor<1x6x8xf32>
  %m = tosa.matmul %x3, %w1, %zp, %zp : (tensor<1x6x8xf32>, tensor<1x8x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x6x16xf32>
  %s2 = tosa.const_shape {values = dense<[6, 16]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %h = tosa.reshape %m, %s2 : (tensor<1x6x16xf32>, !tosa.shape<2>) -> tensor<6x16xf32>
  %hb = tosa.add %h, %b1 : (tensor<6x16xf32>, tensor<1x16xf32>) -> tensor<6x16xf32>
  %mult = tosa.const_shape {values = dense<[6, 16]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %tiled = tosa.tile %sqrt2, %mult : (tensor<1x1xf32>, !tosa.shape<2>) -> tensor<6x16xf32>
  %d = arith.divf %hb, %tiled : tensor<6x16xf32>
  %e = tosa.erf %d : (tensor<6x16xf32>) -> tensor<6x16xf32>
  %g = tosa.mul %e, %half, %shift : (tensor<6x16xf32>, tensor<6x16xf32>, tensor<1xi8>) -> tensor<6x16xf32>
  %mx = tosa.reduce_max %g {axis = 1 : i32} : (tensor<6x16xf32>) -> tensor<6x1xf32>
  %c = tosa.sub %g, %mx : (tensor<6x16xf32>, tensor<6x1xf32>) -> tensor<6x16xf32>
  %sm = tessel.softmax %c {axis = -1 : i64} : tensor<6x16xf32>
  %t = tosa.transpose %sm {perms = array<i32: 1, 0>} : (tensor<6x16xf32>) -> tensor<16x6xf32>
  %tt = tosa.transpose %t {perms = array<i32: 1, 0>} : (tensor<16x6xf32>) -> tensor<6x16xf32>
  %s3b = tosa.const_shape {values = dense<[1, 6, 16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %r3 = tosa.reshape %tt, %s3b : (tensor<6x16xf32>, !tosa.shape<3>) -> tensor<1x6x16xf32>
  %o = tosa.matmul %r3, %w2, %zp, %zp : (tensor<1x6x16xf32>, tensor<1x16x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x6x8xf32>
  %s2b = tosa.const_shape {values = dense<[6, 8]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %y = tosa.reshape %o, %s2b : (tensor<1x6x8xf32>, !tosa.shape<2>) -> tensor<6x8xf32>
  compose.return %y : tensor<6x8xf32>
}

// -----

// Components that already take any token count are left alone by default.
// CHECK-LABEL: compose.component @dynamic(%{{.*}}: tensor<?x4xf32>) -> tensor<?x4xf32>
compose.component @dynamic(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  compose.return %x : tensor<?x4xf32>
}

// -----

// expected-error @+1 {{reduces over the token dim}}
compose.component @pool(%x: tensor<6x8xf32>) -> tensor<6x8xf32> {
  %s = tosa.reduce_sum %x {axis = 0 : i32} : (tensor<6x8xf32>) -> tensor<1x8xf32>
  %y = tosa.add %x, %s : (tensor<6x8xf32>, tensor<1x8xf32>) -> tensor<6x8xf32>
  compose.return %y : tensor<6x8xf32>
}

// -----

// expected-error @+1 {{'tosa.reshape' at loc("flatten") merges or splits the token dim}}
compose.component @flatten(%x: tensor<6x8xf32>) -> tensor<6x8xf32> {
  %s = tosa.const_shape {values = dense<[48]> : tensor<1xindex>} : () -> !tosa.shape<1>
  %f = tosa.reshape %x, %s : (tensor<6x8xf32>, !tosa.shape<1>) -> tensor<48xf32> loc("flatten")
  %s2 = tosa.const_shape {values = dense<[6, 8]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %y = tosa.reshape %f, %s2 : (tensor<48xf32>, !tosa.shape<2>) -> tensor<6x8xf32>
  compose.return %y : tensor<6x8xf32>
}

// -----

// A value that differs per token but does not come from the tokens.
// expected-error @+1 {{has a token-free operand that spans every token and is neither a splat constant nor a tile}}
compose.component @positional(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %pos = "tosa.const"() <{values = dense<[[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]> : tensor<3x2xf32>}> : () -> tensor<3x2xf32>
  %y = tosa.add %x, %pos : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  compose.return %y : tensor<3x2xf32>
}

// -----

// expected-error @+1 {{is not known to treat tokens independently}}
compose.component @slice(%x: tensor<6x8xf32>) -> tensor<6x8xf32> {
  %start = tosa.const_shape {values = dense<[0, 0]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %size = tosa.const_shape {values = dense<[3, 8]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %h = tosa.slice %x, %start, %size : (tensor<6x8xf32>, !tosa.shape<2>, !tosa.shape<2>) -> tensor<3x8xf32>
  %y = tosa.concat %h, %h {axis = 0 : i32} : (tensor<3x8xf32>, tensor<3x8xf32>) -> tensor<6x8xf32>
  compose.return %y : tensor<6x8xf32>
}

// -----

// Interfaces without one token count throughout are not candidates.
// CHECK-LABEL: compose.component @summary(%{{.*}}: tensor<6x8xf32>) -> tensor<1x8xf32>
compose.component @summary(%x: tensor<6x8xf32>) -> tensor<1x8xf32> {
  %s = tosa.reduce_sum %x {axis = 0 : i32} : (tensor<6x8xf32>) -> tensor<1x8xf32>
  compose.return %s : tensor<1x8xf32>
}
