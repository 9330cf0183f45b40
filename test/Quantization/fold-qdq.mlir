// RUN: tessel-opt %s -split-input-file -tessel-fold-qdq | FileCheck %s

// uint8 activation per tensor (zero point 130), int8 weights per output
// column (zero point 0), through the importer's reshapes: an i8 x i8 -> i32
// matmul with the shifted zero point (130 - 128 = 2), dequantized with
// sa * sb per column.
// CHECK-LABEL: func.func @per_column
// CHECK-DAG: %[[FLIP:.*]] = arith.constant dense<-128> : tensor<1x4x3xi8>
// CHECK-DAG: %[[XR:.*]] = tosa.reshape %[[X:.*]], %{{.*}} : (tensor<4x3xi8>, !tosa.shape<3>) -> tensor<1x4x3xi8>
// CHECK-DAG: %[[XS:.*]] = arith.xori %[[XR]], %[[FLIP]] : tensor<1x4x3xi8>
// CHECK-DAG: %[[WR:.*]] = tosa.reshape %[[W:.*]], %{{.*}} : (tensor<3x2xi8>, !tosa.shape<3>) -> tensor<1x3x2xi8>
// CHECK-DAG: %[[ZA:.*]] = "tosa.const"() <{values = dense<2> : tensor<1xi8>}>
// CHECK-DAG: %[[ZB:.*]] = "tosa.const"() <{values = dense<0> : tensor<1xi8>}>
// CHECK: %[[ACC:.*]] = tosa.matmul %[[XS]], %[[WR]], %[[ZA]], %[[ZB]] : (tensor<1x4x3xi8>, tensor<1x3x2xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x2xi32>
// CHECK: %[[Q:.*]] = quant.scast %[[ACC]] : tensor<1x4x2xi32> to tensor<1x4x2x!quant.uniform<i32:f32:2, {5.000000e-02,2.500000e-02}>>
// CHECK: %[[Y:.*]] = quant.dcast %[[Q]]
// CHECK: tosa.reshape %[[Y]]
func.func @per_column(%x: tensor<4x3xi8>, %w: tensor<3x2xi8>) -> tensor<4x2xf32> {
  %xq = quant.scast %x : tensor<4x3xi8> to tensor<4x3x!quant.uniform<u8:f32, 0.1:130>>
  %xf = quant.dcast %xq : tensor<4x3x!quant.uniform<u8:f32, 0.1:130>> to tensor<4x3xf32>
  %wq = quant.scast %w : tensor<3x2xi8> to tensor<3x2x!quant.uniform<i8:f32:1, {0.5, 0.25}>>
  %wf = quant.dcast %wq : tensor<3x2x!quant.uniform<i8:f32:1, {0.5, 0.25}>> to tensor<3x2xf32>
  %s3a = tosa.const_shape {values = dense<[1, 4, 3]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %a = tosa.reshape %xf, %s3a : (tensor<4x3xf32>, !tosa.shape<3>) -> tensor<1x4x3xf32>
  %s3b = tosa.const_shape {values = dense<[1, 3, 2]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %b = tosa.reshape %wf, %s3b : (tensor<3x2xf32>, !tosa.shape<3>) -> tensor<1x3x2xf32>
  %z = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %y = tosa.matmul %a, %b, %z, %z : (tensor<1x4x3xf32>, tensor<1x3x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x2xf32>
  %s2 = tosa.const_shape {values = dense<[4, 2]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %r = tosa.reshape %y, %s2 : (tensor<1x4x2xf32>, !tosa.shape<2>) -> tensor<4x2xf32>
  return %r : tensor<4x2xf32>
}

// -----

// Signed per-tensor operands need no shift.
// CHECK-LABEL: func.func @per_tensor
// CHECK-NOT: arith.xori
// CHECK: tosa.matmul %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : (tensor<1x2x3xi8>, tensor<1x3x2xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x2x2xi32>
// CHECK: quant.scast %{{.*}} : tensor<1x2x2xi32> to tensor<1x2x2x!quant.uniform<i32:f32, 2.500000e-01>>
func.func @per_tensor(%x: tensor<1x2x3xi8>, %w: tensor<1x3x2xi8>) -> tensor<1x2x2xf32> {
  %xq = quant.scast %x : tensor<1x2x3xi8> to tensor<1x2x3x!quant.uniform<i8:f32, 0.5:-5>>
  %xf = quant.dcast %xq : tensor<1x2x3x!quant.uniform<i8:f32, 0.5:-5>> to tensor<1x2x3xf32>
  %wq = quant.scast %w : tensor<1x3x2xi8> to tensor<1x3x2x!quant.uniform<i8:f32, 0.5:7>>
  %wf = quant.dcast %wq : tensor<1x3x2x!quant.uniform<i8:f32, 0.5:7>> to tensor<1x3x2xf32>
  %z = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %y = tosa.matmul %xf, %wf, %z, %z : (tensor<1x2x3xf32>, tensor<1x3x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x2xf32>
  return %y : tensor<1x2x2xf32>
}

// -----

// What stays in float: a float activation (weight-only quantization),
// per-column weights with differing zero points, a per-axis activation.
// CHECK-LABEL: func.func @stays_float
// CHECK-NOT: i32
// CHECK: tosa.matmul %{{.*}} : (tensor<1x2x3xf32>, tensor<1x3x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x2xf32>
// CHECK: tosa.matmul %{{.*}} : (tensor<1x2x3xf32>, tensor<1x3x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x2xf32>
// CHECK: tosa.matmul %{{.*}} : (tensor<1x2x3xf32>, tensor<1x3x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x2xf32>
func.func @stays_float(%a: tensor<1x2x3xf32>, %x: tensor<1x2x3xi8>, %w: tensor<1x3x2xi8>)
    -> (tensor<1x2x2xf32>, tensor<1x2x2xf32>, tensor<1x2x2xf32>) {
  %z = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %wq = quant.scast %w : tensor<1x3x2xi8> to tensor<1x3x2x!quant.uniform<i8:f32:2, {0.5:1, 0.25:2}>>
  %wf = quant.dcast %wq : tensor<1x3x2x!quant.uniform<i8:f32:2, {0.5:1, 0.25:2}>> to tensor<1x3x2xf32>
  %y0 = tosa.matmul %a, %wf, %z, %z : (tensor<1x2x3xf32>, tensor<1x3x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x2xf32>
  %xq = quant.scast %x : tensor<1x2x3xi8> to tensor<1x2x3x!quant.uniform<i8:f32, 0.5>>
  %xf = quant.dcast %xq : tensor<1x2x3x!quant.uniform<i8:f32, 0.5>> to tensor<1x2x3xf32>
  %y1 = tosa.matmul %xf, %wf, %z, %z : (tensor<1x2x3xf32>, tensor<1x3x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x2xf32>
  %pq = quant.scast %x : tensor<1x2x3xi8> to tensor<1x2x3x!quant.uniform<i8:f32:1, {0.5, 0.25}>>
  %pf = quant.dcast %pq : tensor<1x2x3x!quant.uniform<i8:f32:1, {0.5, 0.25}>> to tensor<1x2x3xf32>
  %vq = quant.scast %w : tensor<1x3x2xi8> to tensor<1x3x2x!quant.uniform<i8:f32, 0.5>>
  %vf = quant.dcast %vq : tensor<1x3x2x!quant.uniform<i8:f32, 0.5>> to tensor<1x3x2xf32>
  %y2 = tosa.matmul %pf, %vf, %z, %z : (tensor<1x2x3xf32>, tensor<1x3x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x2xf32>
  return %y0, %y1, %y2 : tensor<1x2x2xf32>, tensor<1x2x2xf32>, tensor<1x2x2xf32>
}

// -----

// Gemm's transB: weights [N, K] per output row (axis 0), transposed and
// reshaped to [1, K, N]; the axis follows the transpose to 2.
// CHECK-LABEL: func.func @transposed_weights
// CHECK: %[[T:.*]] = tosa.transpose %{{.*}} {perms = array<i32: 1, 0>} : (tensor<2x3xi8>) -> tensor<3x2xi8>
// CHECK: %[[R:.*]] = tosa.reshape %[[T]], %{{.*}} : (tensor<3x2xi8>, !tosa.shape<3>) -> tensor<1x3x2xi8>
// CHECK: tosa.matmul %{{.*}}, %[[R]], %{{.*}}, %{{.*}} : (tensor<1x4x3xi8>, tensor<1x3x2xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x2xi32>
// CHECK: quant.scast %{{.*}} : tensor<1x4x2xi32> to tensor<1x4x2x!quant.uniform<i32:f32:2, {5.000000e-02,2.500000e-02}>>
func.func @transposed_weights(%x: tensor<1x4x3xi8>, %w: tensor<2x3xi8>) -> tensor<1x4x2xf32> {
  %xq = quant.scast %x : tensor<1x4x3xi8> to tensor<1x4x3x!quant.uniform<i8:f32, 0.1>>
  %xf = quant.dcast %xq : tensor<1x4x3x!quant.uniform<i8:f32, 0.1>> to tensor<1x4x3xf32>
  %wq = quant.scast %w : tensor<2x3xi8> to tensor<2x3x!quant.uniform<i8:f32:0, {0.5, 0.25}>>
  %wf = quant.dcast %wq : tensor<2x3x!quant.uniform<i8:f32:0, {0.5, 0.25}>> to tensor<2x3xf32>
  %t = tosa.transpose %wf {perms = array<i32: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %s3 = tosa.const_shape {values = dense<[1, 3, 2]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %b = tosa.reshape %t, %s3 : (tensor<3x2xf32>, !tosa.shape<3>) -> tensor<1x3x2xf32>
  %z = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %y = tosa.matmul %xf, %b, %z, %z : (tensor<1x4x3xf32>, tensor<1x3x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x2xf32>
  return %y : tensor<1x4x2xf32>
}

// -----

// A pointwise convolution of a dequantized activation (through the
// importer's NCHW -> NHWC transpose) and per-output-channel weights is the
// integer product of the pixels (N*H*W x C) and the filter (C x F), then the
// float bias; convolutions of float weights stay float.
// CHECK-LABEL: func.func @pointwise_conv
// CHECK: %[[XT:.*]] = tosa.transpose %[[XS:.*]] {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x3x2x2xi8>) -> tensor<1x2x2x3xi8>
// CHECK: %[[X2:.*]] = tosa.reshape %[[XT]], %{{.*}} : (tensor<1x2x2x3xi8>, !tosa.shape<3>) -> tensor<1x4x3xi8>
// CHECK: %[[W2:.*]] = tosa.reshape %{{.*}}, %{{.*}} : (tensor<2x1x1x3xi8>, !tosa.shape<2>) -> tensor<2x3xi8>
// CHECK: %[[WT:.*]] = tosa.transpose %[[W2]] {perms = array<i32: 1, 0>} : (tensor<2x3xi8>) -> tensor<3x2xi8>
// CHECK: %[[W3:.*]] = tosa.reshape %[[WT]], %{{.*}} : (tensor<3x2xi8>, !tosa.shape<3>) -> tensor<1x3x2xi8>
// CHECK: %[[ACC:.*]] = tosa.matmul %{{.*}}, %[[W3]], %{{.*}}, %{{.*}} : (tensor<1x4x3xi8>, tensor<1x3x2xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x2xi32>
// CHECK: quant.scast %[[ACC]] : tensor<1x4x2xi32> to tensor<1x4x2x!quant.uniform<i32:f32:2, {5.000000e-02,2.500000e-02}>>
// CHECK: %[[Y:.*]] = tosa.reshape %{{.*}}, %{{.*}} : (tensor<1x4x2xf32>, !tosa.shape<4>) -> tensor<1x2x2x2xf32>
// CHECK: %[[B:.*]] = tosa.reshape %{{.*}}, %{{.*}} : (tensor<2xf32>, !tosa.shape<4>) -> tensor<1x1x1x2xf32>
// CHECK: %[[R:.*]] = tosa.add %[[Y]], %[[B]]
// CHECK: tessel.conv2d {{.*}} : (tensor<1x2x2x3xf32>, tensor<2x3x3x3xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
// CHECK: tessel.conv2d {{.*}} {dilation = array<i64: 1, 1>, groups = 3 : i64
func.func @pointwise_conv(%x: tensor<1x3x2x2xi8>, %w: tensor<2x1x1x3xi8>, %w3: tensor<2x3x3x3xf32>,
                          %wg: tensor<3x1x1x1xf32>, %b: tensor<2xf32>, %b3: tensor<3xf32>)
    -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x3xf32>) {
  %xq = quant.scast %x : tensor<1x3x2x2xi8> to tensor<1x3x2x2x!quant.uniform<i8:f32, 0.1:0>>
  %xf = quant.dcast %xq : tensor<1x3x2x2x!quant.uniform<i8:f32, 0.1:0>> to tensor<1x3x2x2xf32>
  %xt = tosa.transpose %xf {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x3x2x2xf32>) -> tensor<1x2x2x3xf32>
  %wq = quant.scast %w : tensor<2x1x1x3xi8> to tensor<2x1x1x3x!quant.uniform<i8:f32:0, {0.5, 0.25}>>
  %wf = quant.dcast %wq : tensor<2x1x1x3x!quant.uniform<i8:f32:0, {0.5, 0.25}>> to tensor<2x1x1x3xf32>
  %y = tessel.conv2d %xt, %wf, %b {dilation = array<i64: 1, 1>, groups = 1 : i64, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>}
      : (tensor<1x2x2x3xf32>, tensor<2x1x1x3xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %y3 = tessel.conv2d %xt, %w3, %b {dilation = array<i64: 1, 1>, groups = 1 : i64, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>}
      : (tensor<1x2x2x3xf32>, tensor<2x3x3x3xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %yg = tessel.conv2d %xt, %wg, %b3 {dilation = array<i64: 1, 1>, groups = 3 : i64, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>}
      : (tensor<1x2x2x3xf32>, tensor<3x1x1x1xf32>, tensor<3xf32>) -> tensor<1x2x2x3xf32>
  return %y, %y3, %yg : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x3xf32>
}

// -----

// Any other convolution becomes an i8 x i8 -> i32 tosa.conv2d with the
// input's zero point (so padding reads as 0.0) and a zero bias, then the
// dequantization per output channel and the float bias. Its padding is
// trimmed to what the stride-2 windows read (ONNX floors: 8 + 1 + 1 - 3 is
// odd, so pad_bottom 1 -> 0).
// CHECK-LABEL: func.func @conv3x3
// CHECK: %[[ACC:.*]] = tosa.conv2d %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 0, 1, 1>, stride = array<i64: 2, 2>} : (tensor<1x8x7x3xi8>, tensor<2x3x3x3xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x2xi32>
// CHECK: quant.scast %[[ACC]] : tensor<1x4x4x2xi32> to tensor<1x4x4x2x!quant.uniform<i32:f32:3, {5.000000e-02,2.500000e-02}>>
// CHECK: tosa.add
func.func @conv3x3(%x: tensor<1x8x7x3xi8>, %w: tensor<2x3x3x3xi8>, %b: tensor<2xf32>) -> tensor<1x4x4x2xf32> {
  %xq = quant.scast %x : tensor<1x8x7x3xi8> to tensor<1x8x7x3x!quant.uniform<i8:f32, 0.1:4>>
  %xf = quant.dcast %xq : tensor<1x8x7x3x!quant.uniform<i8:f32, 0.1:4>> to tensor<1x8x7x3xf32>
  %wq = quant.scast %w : tensor<2x3x3x3xi8> to tensor<2x3x3x3x!quant.uniform<i8:f32:0, {0.5, 0.25}>>
  %wf = quant.dcast %wq : tensor<2x3x3x3x!quant.uniform<i8:f32:0, {0.5, 0.25}>> to tensor<2x3x3x3xf32>
  %y = tessel.conv2d %xf, %wf, %b {dilation = array<i64: 1, 1>, groups = 1 : i64, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 2, 2>}
      : (tensor<1x8x7x3xf32>, tensor<2x3x3x3xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
  return %y : tensor<1x4x4x2xf32>
}

// -----

// A depthwise convolution (groups = C = F) of a uint8 activation (zero
// point 130: 2 as int8, the top bit flipped) and per-channel int8 weights
// becomes an i8 tosa.depthwise_conv2d with the input's zero point, its
// OHWI weights transposed to [KH, KW, C, M], the stride-2 padding trimmed
// as for tosa.conv2d, then the dequantization per channel (axis 3) and the
// float bias.
// CHECK-LABEL: func.func @depthwise
// CHECK-DAG: %[[XS:.*]] = arith.xori %{{.*}}, %{{.*}} : tensor<1x8x7x3xi8>
// CHECK-DAG: %[[WT:.*]] = tosa.transpose %{{.*}} {perms = array<i32: 1, 2, 0, 3>} : (tensor<3x3x3x1xi8>) -> tensor<3x3x3x1xi8>
// CHECK-DAG: %[[ZA:.*]] = "tosa.const"() <{values = dense<2> : tensor<1xi8>}>
// CHECK: %[[ACC:.*]] = tosa.depthwise_conv2d %[[XS]], %[[WT]], %{{.*}}, %[[ZA]], %{{.*}} {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 0, 1, 1>, stride = array<i64: 2, 2>} : (tensor<1x8x7x3xi8>, tensor<3x3x3x1xi8>, tensor<3xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x3xi32>
// CHECK: quant.scast %[[ACC]] : tensor<1x4x4x3xi32> to tensor<1x4x4x3x!quant.uniform<i32:f32:3, {5.000000e-02,2.500000e-02,1.250000e-02}>>
// CHECK: tosa.add
func.func @depthwise(%x: tensor<1x8x7x3xi8>, %w: tensor<3x3x3x1xi8>, %b: tensor<3xf32>) -> tensor<1x4x4x3xf32> {
  %xq = quant.scast %x : tensor<1x8x7x3xi8> to tensor<1x8x7x3x!quant.uniform<u8:f32, 0.1:130>>
  %xf = quant.dcast %xq : tensor<1x8x7x3x!quant.uniform<u8:f32, 0.1:130>> to tensor<1x8x7x3xf32>
  %wq = quant.scast %w : tensor<3x3x3x1xi8> to tensor<3x3x3x1x!quant.uniform<i8:f32:0, {0.5, 0.25, 0.125}>>
  %wf = quant.dcast %wq : tensor<3x3x3x1x!quant.uniform<i8:f32:0, {0.5, 0.25, 0.125}>> to tensor<3x3x3x1xf32>
  %y = tessel.conv2d %xf, %wf, %b {dilation = array<i64: 1, 1>, groups = 3 : i64, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 2, 2>}
      : (tensor<1x8x7x3xf32>, tensor<3x3x3x1xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

// A depthwise convolution with channel multiplier 2 (groups = C = 2, F =
// 4: output channel c*2 + j is channel c's filter j): one i8
// tosa.depthwise_conv2d per j, on the filters j, 2 + j of the weights
// (reshaped C x m x KH x KW, sliced, transposed to TOSA's [KH, KW, C, 1]),
// joined on a new innermost axis so that the parts interleave, then one
// dequantization of all 4 channels. Weights with a zero point stay float
// (TOSA's int8 convolutions take none).
// CHECK-LABEL: func.func @depthwise_multiplier
// CHECK: %[[W:.*]] = tosa.reshape %arg1, %{{.*}} : (tensor<4x3x3x1xi8>, !tosa.shape<4>) -> tensor<2x2x3x3xi8>
// CHECK: %[[W0:.*]] = tosa.slice %[[W]], %{{.*}}, %{{.*}} : (tensor<2x2x3x3xi8>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<2x1x3x3xi8>
// CHECK: %[[T0:.*]] = tosa.transpose %[[W0]] {perms = array<i32: 2, 3, 0, 1>} : (tensor<2x1x3x3xi8>) -> tensor<3x3x2x1xi8>
// CHECK: %[[D0:.*]] = tosa.depthwise_conv2d %arg0, %[[T0]], {{.*}} -> tensor<1x2x2x2xi32>
// CHECK: %[[R0:.*]] = tosa.reshape %[[D0]], %{{.*}} -> tensor<1x2x2x2x1xi32>
// CHECK: %[[D1:.*]] = tosa.depthwise_conv2d %arg0, {{.*}} -> tensor<1x2x2x2xi32>
// CHECK: %[[R1:.*]] = tosa.reshape %[[D1]], %{{.*}} -> tensor<1x2x2x2x1xi32>
// CHECK: %[[C:.*]] = tosa.concat %[[R0]], %[[R1]] {axis = 4 : i32} : (tensor<1x2x2x2x1xi32>, tensor<1x2x2x2x1xi32>) -> tensor<1x2x2x2x2xi32>
// CHECK: %[[ACC:.*]] = tosa.reshape %[[C]], %{{.*}} -> tensor<1x2x2x4xi32>
// CHECK: quant.scast %[[ACC]] : tensor<1x2x2x4xi32> to tensor<1x2x2x4x!quant.uniform<i32:f32, 5.000000e-02>>
// CHECK: tosa.add
// CHECK-NOT: tosa.depthwise_conv2d
// CHECK: tessel.conv2d {{.*}} groups = 2
func.func @depthwise_multiplier(%x: tensor<1x4x4x2xi8>, %w: tensor<4x3x3x1xi8>, %w2: tensor<4x3x3x1xi8>, %b: tensor<4xf32>)
    -> (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>) {
  %xq = quant.scast %x : tensor<1x4x4x2xi8> to tensor<1x4x4x2x!quant.uniform<i8:f32, 0.1:0>>
  %xf = quant.dcast %xq : tensor<1x4x4x2x!quant.uniform<i8:f32, 0.1:0>> to tensor<1x4x4x2xf32>
  %wq = quant.scast %w : tensor<4x3x3x1xi8> to tensor<4x3x3x1x!quant.uniform<i8:f32, 0.5>>
  %wf = quant.dcast %wq : tensor<4x3x3x1x!quant.uniform<i8:f32, 0.5>> to tensor<4x3x3x1xf32>
  %y = tessel.conv2d %xf, %wf, %b {dilation = array<i64: 1, 1>, groups = 2 : i64, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>}
      : (tensor<1x4x4x2xf32>, tensor<4x3x3x1xf32>, tensor<4xf32>) -> tensor<1x2x2x4xf32>
  %w2q = quant.scast %w2 : tensor<4x3x3x1xi8> to tensor<4x3x3x1x!quant.uniform<i8:f32, 0.5:3>>
  %w2f = quant.dcast %w2q : tensor<4x3x3x1x!quant.uniform<i8:f32, 0.5:3>> to tensor<4x3x3x1xf32>
  %y2 = tessel.conv2d %xf, %w2f, %b {dilation = array<i64: 1, 1>, groups = 2 : i64, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>}
      : (tensor<1x4x4x2xf32>, tensor<4x3x3x1xf32>, tensor<4xf32>) -> tensor<1x2x2x4xf32>
  return %y, %y2 : tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>
}

// -----

// A grouped 3x3 convolution (2 groups of 2 input and 3 output channels) of
// a uint8 activation: the input is flipped to int8 once (zero point 130 ->
// 2), then per group its channel slice and the group's 3 filters make an
// i8 tosa.conv2d (padding trimmed to the stride-2 windows as for one
// group); the i32 parts are joined along the channels and dequantized once
// per output channel.
// CHECK-LABEL: func.func @grouped
// CHECK: %[[X:.*]] = arith.xori %arg0, %{{.*}} : tensor<1x8x7x4xi8>
// CHECK: %[[X0:.*]] = tosa.slice %[[X]], %{{.*}}, %{{.*}} : (tensor<1x8x7x4xi8>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x8x7x2xi8>
// CHECK: %[[W0:.*]] = tosa.slice %arg1, %{{.*}}, %{{.*}} : (tensor<6x3x3x2xi8>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<3x3x3x2xi8>
// CHECK: %[[A0:.*]] = tosa.conv2d %[[X0]], %[[W0]], {{.*}} {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 0, 1, 1>, stride = array<i64: 2, 2>} : {{.*}} -> tensor<1x4x4x3xi32>
// CHECK: %[[A1:.*]] = tosa.conv2d {{.*}} -> tensor<1x4x4x3xi32>
// CHECK: %[[ACC:.*]] = tosa.concat %[[A0]], %[[A1]] {axis = 3 : i32} : (tensor<1x4x4x3xi32>, tensor<1x4x4x3xi32>) -> tensor<1x4x4x6xi32>
// CHECK: quant.scast %[[ACC]] : tensor<1x4x4x6xi32> to tensor<1x4x4x6x!quant.uniform<i32:f32:3, {5.000000e-02,2.500000e-02,1.250000e-02,5.000000e-02,2.500000e-02,1.250000e-02}>>
// CHECK: tosa.add
func.func @grouped(%x: tensor<1x8x7x4xi8>, %w: tensor<6x3x3x2xi8>, %b: tensor<6xf32>) -> tensor<1x4x4x6xf32> {
  %xq = quant.scast %x : tensor<1x8x7x4xi8> to tensor<1x8x7x4x!quant.uniform<u8:f32, 0.1:130>>
  %xf = quant.dcast %xq : tensor<1x8x7x4x!quant.uniform<u8:f32, 0.1:130>> to tensor<1x8x7x4xf32>
  %wq = quant.scast %w : tensor<6x3x3x2xi8> to tensor<6x3x3x2x!quant.uniform<i8:f32:0, {0.5, 0.25, 0.125, 0.5, 0.25, 0.125}>>
  %wf = quant.dcast %wq : tensor<6x3x3x2x!quant.uniform<i8:f32:0, {0.5, 0.25, 0.125, 0.5, 0.25, 0.125}>> to tensor<6x3x3x2xf32>
  %y = tessel.conv2d %xf, %wf, %b {dilation = array<i64: 1, 1>, groups = 2 : i64, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 2, 2>}
      : (tensor<1x8x7x4xf32>, tensor<6x3x3x2xf32>, tensor<6xf32>) -> tensor<1x4x4x6xf32>
  return %y : tensor<1x4x4x6xf32>
}

// -----

// A grouped pointwise convolution: per group, the product of the pixels'
// channel slice (N*H*W x C/groups) and the group's filter, as one group's;
// the weights' zero point (per tensor) is the matmul's. A 3x3 grouped
// convolution whose weights have a zero point stays float.
// CHECK-LABEL: func.func @grouped_pointwise
// CHECK: %[[X0:.*]] = tosa.slice %arg0, %{{.*}}, %{{.*}} : (tensor<1x2x2x4xi8>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x2x2x2xi8>
// CHECK: %[[W0:.*]] = tosa.slice %arg1, %{{.*}}, %{{.*}} : (tensor<2x1x1x2xi8>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x1x1x2xi8>
// CHECK: %[[P0:.*]] = tosa.reshape %[[X0]], %{{.*}} -> tensor<1x4x2xi8>
// CHECK: %[[M0:.*]] = tosa.matmul %[[P0]], %{{.*}}, %{{.*}}, %[[ZB:.*]] : (tensor<1x4x2xi8>, tensor<1x2x1xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x1xi32>
// CHECK: %[[A0:.*]] = tosa.reshape %[[M0]], %{{.*}} -> tensor<1x2x2x1xi32>
// CHECK: %[[A1:.*]] = tosa.reshape %{{.*}}, %{{.*}} -> tensor<1x2x2x1xi32>
// CHECK: tosa.concat %[[A0]], %[[A1]] {axis = 3 : i32} : (tensor<1x2x2x1xi32>, tensor<1x2x2x1xi32>) -> tensor<1x2x2x2xi32>
// CHECK: tessel.conv2d {{.*}} groups = 2
func.func @grouped_pointwise(%x: tensor<1x2x2x4xi8>, %w: tensor<2x1x1x2xi8>, %w3: tensor<2x3x3x2xi8>, %b: tensor<2xf32>)
    -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) {
  %xq = quant.scast %x : tensor<1x2x2x4xi8> to tensor<1x2x2x4x!quant.uniform<i8:f32, 0.1:-3>>
  %xf = quant.dcast %xq : tensor<1x2x2x4x!quant.uniform<i8:f32, 0.1:-3>> to tensor<1x2x2x4xf32>
  %wq = quant.scast %w : tensor<2x1x1x2xi8> to tensor<2x1x1x2x!quant.uniform<i8:f32, 0.5:5>>
  %wf = quant.dcast %wq : tensor<2x1x1x2x!quant.uniform<i8:f32, 0.5:5>> to tensor<2x1x1x2xf32>
  %y = tessel.conv2d %xf, %wf, %b {dilation = array<i64: 1, 1>, groups = 2 : i64, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>}
      : (tensor<1x2x2x4xf32>, tensor<2x1x1x2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %w3q = quant.scast %w3 : tensor<2x3x3x2xi8> to tensor<2x3x3x2x!quant.uniform<i8:f32, 0.5:5>>
  %w3f = quant.dcast %w3q : tensor<2x3x3x2x!quant.uniform<i8:f32, 0.5:5>> to tensor<2x3x3x2xf32>
  %y3 = tessel.conv2d %xf, %w3f, %b {dilation = array<i64: 1, 1>, groups = 2 : i64, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>}
      : (tensor<1x2x2x4xf32>, tensor<2x3x3x2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  return %y, %y3 : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>
}
