// RUN: tessel-opt %s -split-input-file -tessel-kernels-to-calls -verify-diagnostics | FileCheck %s

// Every buffer goes as a pointer to its first element (aligned base +
// offset * 4 bytes) plus its strides; a rank-3 packed filter is shared by
// all images (stride 0); no bias is a null pointer; no clamp is -inf/+inf.
// CHECK-LABEL: func.func private @tessel_kernel_conv2d_nhwc_f32(i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, !llvm.ptr, i64, i64, i64, i64, i64, i64, i64, i64, !llvm.ptr, i64, !llvm.ptr, i64, i64, i64, i64, !llvm.ptr, f32, f32, i32)
// CHECK-LABEL: func @conv
// CHECK: %[[MD:.*]], %[[OFF:.*]], %{{.*}}:4, %[[STR:.*]]:4 = memref.extract_strided_metadata %arg0
// CHECK: %[[BASE:.*]] = memref.extract_aligned_pointer_as_index %[[MD]]
// CHECK: %[[BYTES:.*]] = arith.muli %[[OFF]], %c4
// CHECK: %[[ADDR:.*]] = arith.addi %[[BASE]], %[[BYTES]]
// CHECK: llvm.inttoptr
// CHECK: %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK: %[[LO:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[HI:.*]] = arith.constant 0x7F800000 : f32
// CHECK: %[[FLAGS:.*]] = arith.constant 1 : i32
// CHECK: call @tessel_kernel_conv2d_nhwc_f32({{.*}}, %[[NULL]], %[[LO]], %[[HI]], %[[FLAGS]])
// CHECK-NOT: tessel.packed_conv2d
func.func @conv(%x: memref<1x9x9x8xf32>, %w: memref<1x72x64xf32>, %o: memref<1x7x7x16xf32>) {
  tessel.packed_conv2d ins(%x, %w : memref<1x9x9x8xf32>, memref<1x72x64xf32>)
      outs(%o : memref<1x7x7x16xf32>)
      {kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>,
       dilations = array<i64: 1, 1>, accumulate}
  return
}

// -----

// The Winograd form calls its own entry point: no kernel size, strides or
// filter strides (3x3/1, a dense 16 x P x C x NR filter); the dilations
// (here 2 x 3: the kernel runs the sub-grids) follow the padding, then the
// transform positions (16: F(2x2, 3x3); 36: F(4x4, 3x3)).
// CHECK-LABEL: func.func private @tessel_kernel_conv2d_winograd_nhwc_f32(i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, !llvm.ptr, i64, i64, i64, i64, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, !llvm.ptr, f32, f32, i32)
// CHECK-LABEL: func @winograd
// CHECK: %[[PT:.*]] = arith.constant 2 : i64
// CHECK-NEXT: %[[PL:.*]] = arith.constant 3 : i64
// CHECK-NEXT: %[[DH:.*]] = arith.constant 2 : i64
// CHECK-NEXT: %[[DW:.*]] = arith.constant 3 : i64
// CHECK-NEXT: %[[A:.*]] = arith.constant 16 : i64
// CHECK: %[[LO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: call @tessel_kernel_conv2d_winograd_nhwc_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[PT]], %[[PL]], %[[DH]], %[[DW]], %[[A]], {{.*}}, %[[LO]], %{{.*}}, %{{.*}})
// CHECK-NOT: tessel.packed_conv2d
func.func @winograd(%x: memref<1x7x7x8xf32>, %u: memref<16x1x8x64xf32>, %b: memref<16xf32>, %o: memref<1x7x7x16xf32>) {
  tessel.packed_conv2d ins(%x, %u : memref<1x7x7x8xf32>, memref<16x1x8x64xf32>)
      bias(%b : memref<16xf32>) outs(%o : memref<1x7x7x16xf32>)
      {kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>,
       dilations = array<i64: 2, 3>, pad = array<i64: 2, 2, 3, 3>,
       clamp_min = 0.0 : f32, winograd}
  return
}

// -----

// A strided bias (a subview) is copied to a dense buffer for the call.
// CHECK-LABEL: func @strided_bias
// CHECK: %[[DENSE:.*]] = memref.alloc() : memref<16xf32>
// CHECK: memref.copy %{{.*}}, %[[DENSE]] : memref<16xf32, strided<[2]>> to memref<16xf32>
// CHECK: call @tessel_kernel_conv2d_nhwc_f32(
// CHECK: memref.dealloc %[[DENSE]]
func.func @strided_bias(%x: memref<1x9x9x8xf32>, %w: memref<1x72x64xf32>, %b: memref<32xf32>, %o: memref<1x7x7x16xf32>) {
  %s = memref.subview %b[0] [16] [2] : memref<32xf32> to memref<16xf32, strided<[2]>>
  tessel.packed_conv2d ins(%x, %w : memref<1x9x9x8xf32>, memref<1x72x64xf32>)
      bias(%s : memref<16xf32, strided<[2]>>) outs(%o : memref<1x7x7x16xf32>)
      {kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>,
       dilations = array<i64: 1, 1>, clamp_min = 0.0 : f32}
  return
}

// -----

// f32 depthwise convolution with channel multiplier 1 becomes a call;
// multiplier 2 stays linalg (lowered to loops later).
// CHECK-LABEL: func @depthwise
// CHECK: call @tessel_kernel_depthwise_conv2d_nhwc_f32(
// CHECK: linalg.depthwise_conv_2d_nhwc_hwcm {{.*}} memref<3x3x4x2xf32>
func.func @depthwise(%x: memref<1x9x9x4xf32>, %w: memref<3x3x4x1xf32>, %o: memref<1x4x4x4x1xf32>,
                     %w2: memref<3x3x4x2xf32>, %o2: memref<1x7x7x4x2xf32>) {
  linalg.depthwise_conv_2d_nhwc_hwcm {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%x, %w : memref<1x9x9x4xf32>, memref<3x3x4x1xf32>) outs(%o : memref<1x4x4x4x1xf32>)
  linalg.depthwise_conv_2d_nhwc_hwcm {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w2 : memref<1x9x9x4xf32>, memref<3x3x4x2xf32>) outs(%o2 : memref<1x7x7x4x2xf32>)
  return
}

// -----

// The kernel library's panel width is fixed.
func.func @wrong_panel(%x: memref<1x9x9x8xf32>, %w: memref<1x72x32xf32>, %o: memref<1x7x7x16xf32>) {
  // expected-error @+1 {{uses panel width 32, but the kernel library's is 64}}
  tessel.packed_conv2d ins(%x, %w : memref<1x9x9x8xf32>, memref<1x72x32xf32>)
      outs(%o : memref<1x7x7x16xf32>)
      {kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>}
  return
}

// -----

func.func @not_bufferized(%x: tensor<1x9x9x8xf32>, %w: tensor<1x72x64xf32>, %o: tensor<1x7x7x16xf32>) -> tensor<1x7x7x16xf32> {
  // expected-error @+1 {{must be bufferized before tessel-kernels-to-calls}}
  %y = tessel.packed_conv2d ins(%x, %w : tensor<1x9x9x8xf32>, tensor<1x72x64xf32>)
      outs(%o : tensor<1x7x7x16xf32>)
      {kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>} -> tensor<1x7x7x16xf32>
  return %y : tensor<1x7x7x16xf32>
}

// -----

// tessel.depthwise_conv2d: sizes, then H, W, pad_top, pad_left (the kernel
// pads implicitly), buffers with strides, bias, clamp.
// CHECK-LABEL: func @depthwise_op
// CHECK-DAG: %[[PT:.*]] = arith.constant 2 : i64
// CHECK-DAG: %[[CMIN:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: call @tessel_kernel_depthwise_conv2d_nhwc_f32(
// CHECK-NOT: tessel.depthwise_conv2d
func.func @depthwise_op(%x: memref<1x8x8x16xf32>, %w: memref<5x5x16xf32>, %b: memref<16xf32>, %o: memref<1x4x4x16xf32>) {
  tessel.depthwise_conv2d ins(%x, %w : memref<1x8x8x16xf32>, memref<5x5x16xf32>)
      bias(%b : memref<16xf32>) outs(%o : memref<1x4x4x16xf32>)
      {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad = array<i64: 2, 1, 2, 1>,
       clamp_min = 0.0 : f32}
  return
}

// -----

// Dense f32 transposes that are batched 2-D transposes once adjacent dims
// are grouped become calls (here [4][64][3x3x256] -> [4][3x3x256][64], the
// run-time packing of a weight operand, and NCHW -> NHWC); others stay.
// CHECK-LABEL: func @transposes
// CHECK-DAG: %[[B:.*]] = arith.constant 4 : i64
// CHECK-DAG: %[[R:.*]] = arith.constant 64 : i64
// CHECK-DAG: %[[C:.*]] = arith.constant 2304 : i64
// CHECK: call @tessel_kernel_transpose_f32(%[[B]], %[[R]], %[[C]], %{{.*}}, %{{.*}})
// CHECK: call @tessel_kernel_transpose_f32(
// CHECK: linalg.transpose {{.*}} permutation = [2, 0, 1, 3]
func.func @transposes(%w: memref<4x64x3x3x256xf32>, %wp: memref<4x3x3x256x64xf32>,
                      %x: memref<1x3x8x8xf32>, %y: memref<1x8x8x3xf32>,
                      %a: memref<2x3x4x5xf32>, %b: memref<4x2x3x5xf32>) {
  linalg.transpose ins(%w : memref<4x64x3x3x256xf32>) outs(%wp : memref<4x3x3x256x64xf32>) permutation = [0, 2, 3, 4, 1]
  linalg.transpose ins(%x : memref<1x3x8x8xf32>) outs(%y : memref<1x8x8x3xf32>) permutation = [0, 2, 3, 1]
  linalg.transpose ins(%a : memref<2x3x4x5xf32>) outs(%b : memref<4x2x3x5xf32>) permutation = [2, 0, 1, 3]
  return
}

// -----

// Sizes known at run time; and rows of the last dims moved whole: a
// sequence-first activation made batch-first ([S][B][D] -> [B][S][D]) and
// heads split from the model dim ([B][S][H][Dh] -> [B][H][S][Dh]).
// CHECK-LABEL: func @transposes_run_time_and_blocks
// CHECK-SAME: %[[X:[^:]*]]: memref<?x?xf32>
// CHECK: %[[R:.*]] = memref.dim %[[X]], %c0
// CHECK: %[[C:.*]] = memref.dim %[[X]], %c1
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[R64:.*]] = arith.index_cast %[[R]] : index to i64
// CHECK-DAG: %[[C64:.*]] = arith.index_cast %[[C]] : index to i64
// CHECK: call @tessel_kernel_transpose_f32(%[[ONE]], %[[R64]], %[[C64]],
// CHECK: %[[S:.*]] = memref.dim %{{.*}}, %c0
// CHECK: %[[B:.*]] = memref.dim %{{.*}}, %c1
// CHECK-DAG: %[[D:.*]] = arith.constant 256 : i64
// CHECK-DAG: %[[S64:.*]] = arith.index_cast %[[S]] : index to i64
// CHECK-DAG: %[[B64:.*]] = arith.index_cast %[[B]] : index to i64
// CHECK: call @tessel_kernel_transpose_blocks_f32(%{{.*}}, %[[S64]], %[[B64]], %[[D]],
// CHECK-DAG: %[[NB:.*]] = arith.constant 2 : i64
// CHECK-DAG: %[[NS:.*]] = arith.constant 128 : i64
// CHECK-DAG: %[[NH:.*]] = arith.constant 4 : i64
// CHECK-DAG: %[[DH:.*]] = arith.constant 64 : i64
// CHECK: call @tessel_kernel_transpose_blocks_f32(%[[NB]], %[[NS]], %[[NH]], %[[DH]],
// Rows of fewer than 8 elements stay loops.
// CHECK: linalg.transpose {{.*}} permutation = [1, 0, 2]
// CHECK-NOT: call
func.func @transposes_run_time_and_blocks(%x: memref<?x?xf32>, %xt: memref<?x?xf32>,
                                          %s: memref<?x?x256xf32>, %st: memref<?x?x256xf32>,
                                          %h: memref<2x128x4x64xf32>, %ht: memref<2x4x128x64xf32>,
                                          %p: memref<6x5x3xf32>, %pt: memref<5x6x3xf32>) {
  linalg.transpose ins(%x : memref<?x?xf32>) outs(%xt : memref<?x?xf32>) permutation = [1, 0]
  linalg.transpose ins(%s : memref<?x?x256xf32>) outs(%st : memref<?x?x256xf32>) permutation = [1, 0, 2]
  linalg.transpose ins(%h : memref<2x128x4x64xf32>) outs(%ht : memref<2x4x128x64xf32>) permutation = [0, 2, 1, 3]
  linalg.transpose ins(%p : memref<6x5x3xf32>) outs(%pt : memref<5x6x3xf32>) permutation = [1, 0, 2]
  return
}

// -----

// tessel.attention: B, M, N, D, Dv, then q, k, v with their strides (a
// head-interleaved view of q needs no copy), no mask (null, six zeros),
// the scale, and the output.
// CHECK-LABEL: func.func private @tessel_kernel_attention_f32(i64, i64, i64, i64, i64, !llvm.ptr, i64, i64, i64, !llvm.ptr, i64, i64, i64, !llvm.ptr, i64, i64, i64, !llvm.ptr, i64, i64, i64, i64, i64, i64, f32, !llvm.ptr, i64, i64, i64)
// CHECK-LABEL: func @attention
// CHECK: %[[B:.*]] = memref.dim %arg0, %{{.*}} : memref<2x5x8xf32, strided<[8, 16, 1]>>
// CHECK: %[[B64:.*]] = arith.index_cast %[[B]]
// CHECK: memref.dim %arg0
// CHECK: memref.dim %arg1
// CHECK: memref.dim %arg1
// CHECK: memref.dim %arg2
// CHECK: memref.extract_strided_metadata %arg0
// CHECK: %[[QPTR:.*]] = llvm.inttoptr
// CHECK: %[[QSB:.*]] = arith.index_cast %strides#0
// CHECK: %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK: %[[SCALE:.*]] = arith.constant 1.250000e-01 : f32
// CHECK: call @tessel_kernel_attention_f32(%[[B64]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[QPTR]], %[[QSB]], {{.*}}, %[[NULL]], {{.*}}, %[[SCALE]], {{.*}})
// CHECK-NOT: tessel.attention
func.func @attention(%q: memref<2x5x8xf32, strided<[8, 16, 1]>>, %k: memref<2x7x8xf32>,
                     %v: memref<2x7x8xf32>, %o: memref<2x5x8xf32>) {
  tessel.attention ins(%q, %k, %v : memref<2x5x8xf32, strided<[8, 16, 1]>>, memref<2x7x8xf32>, memref<2x7x8xf32>)
      outs(%o : memref<2x5x8xf32>) {scale = 0.125 : f32}
  return
}

// -----

// A broadcast mask passes its sizes (1 x M x N) so the kernel broadcasts.
// CHECK-LABEL: func @attention_mask
// CHECK: %[[MD:.*]], %{{.*}}, %{{.*}}:3, %{{.*}}:3 = memref.extract_strided_metadata %arg3
// CHECK: call @tessel_kernel_attention_f32
func.func @attention_mask(%q: memref<2x5x8xf32>, %k: memref<2x7x8xf32>,
                          %v: memref<2x7x8xf32>, %m: memref<1x5x7xf32>, %o: memref<2x5x8xf32>) {
  tessel.attention ins(%q, %k, %v : memref<2x5x8xf32>, memref<2x7x8xf32>, memref<2x7x8xf32>)
      mask(%m : memref<1x5x7xf32>) outs(%o : memref<2x5x8xf32>)
  return
}

// -----

func.func @attention_on_tensors(%q: tensor<2x5x8xf32>, %i: tensor<2x5x8xf32>) -> tensor<2x5x8xf32> {
  // expected-error @+1 {{must be bufferized before tessel-kernels-to-calls}}
  %o = tessel.attention ins(%q, %q, %q : tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<2x5x8xf32>)
      outs(%i : tensor<2x5x8xf32>) -> tensor<2x5x8xf32>
  return %o : tensor<2x5x8xf32>
}

// -----

// `silu` on a depthwise conv is the TESSEL_KERNEL_SILU flag (2).
// CHECK-LABEL: func @depthwise_silu
// CHECK: %[[F:.*]] = arith.constant 2 : i32
// CHECK: call @tessel_kernel_depthwise_conv2d_nhwc_f32({{.*}}, %[[F]])
func.func @depthwise_silu(%x: memref<1x6x6x8xf32>, %w: memref<3x3x8xf32>, %o: memref<1x4x4x8xf32>) {
  tessel.depthwise_conv2d ins(%x, %w : memref<1x6x6x8xf32>, memref<3x3x8xf32>)
      outs(%o : memref<1x4x4x8xf32>)
      {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>,
       pad = array<i64: 0, 0, 0, 0>, silu}
  return
}

// -----

// tessel.packed_matmul_i8: batch, M, N, K, A with its batch and row strides,
// the zero points, the packed weights (0: shared by the batch), the column
// sums, C with its strides, flags (A_SIGNED | ACCUMULATE = 5), in the
// order Kernels.td describes.
// CHECK-LABEL: func @matmul_i8
// CHECK-DAG: %[[AZP:.*]] = arith.constant 3 : i32
// CHECK-DAG: %[[FLAGS:.*]] = arith.constant 5 : i32
// CHECK: call @tessel_kernel_matmul_u8s8_i32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[AZP]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[FLAGS]]) : (i64, i64, i64, i64, !llvm.ptr, i64, i64, i32, !llvm.ptr, i64, !llvm.ptr, i32, !llvm.ptr, i64, i64, i64, i32) -> ()
// CHECK-NOT: tessel.packed_matmul_i8
func.func @matmul_i8(%a: memref<1x5x70xi8>, %b: memref<1x18x64x4xi8>, %s: memref<10xi32>, %c: memref<1x5x10xi32>) {
  tessel.packed_matmul_i8 ins(%a, %b : memref<1x5x70xi8>, memref<1x18x64x4xi8>)
      column_sums(%s : memref<10xi32>) outs(%c : memref<1x5x10xi32>)
      {a_zp = 3 : i32, b_zp = 0 : i32, a_signed, accumulate}
  return
}

// -----

// The convolution form calls the implicit-GEMM kernel: N, OH, OW, F, the
// filter size, C, the input with its image / row / pixel strides (a dense
// 9x9x8 image), the window's strides and dilations, zero points, weights,
// and the output as N x (OH*OW) x F rows. A padded output (its rows not
// one run) is written through a dense copy, filled first when the kernel
// accumulates.
// CHECK-LABEL: func @conv_i8
// CHECK: memref.collapse_shape %{{.*}} {{\[}}[0], [1, 2], [3]] : memref<1x4x4x10xi32> into memref<1x16x10xi32>
// CHECK: call @tessel_kernel_conv2d_u8s8_i32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (i64, i64, i64, i64, i64, i64, i64, !llvm.ptr, i64, i64, i64, i64, i64, i64, i64, i32, !llvm.ptr, !llvm.ptr, i32, !llvm.ptr, i64, i64, i64, i32) -> ()
// CHECK: %[[D:.*]] = memref.alloc() : memref<1x4x4x10xi32>
// CHECK-NEXT: memref.copy %{{.*}}, %[[D]] : memref<1x4x4x10xi32, strided<[240, 60, 10, 1]>> to memref<1x4x4x10xi32>
// CHECK: call @tessel_kernel_conv2d_u8s8_i32
// CHECK: memref.copy %[[D]], %{{.*}} : memref<1x4x4x10xi32> to memref<1x4x4x10xi32, strided<[240, 60, 10, 1]>>
// CHECK-NEXT: memref.dealloc %[[D]]
// CHECK-NOT: tessel.packed_matmul_i8
func.func @conv_i8(%x: memref<1x9x9x8xi8>, %b: memref<1x18x64x4xi8>, %c: memref<1x4x4x10xi32>,
                   %p: memref<1x4x4x10xi32, strided<[240, 60, 10, 1]>>) {
  tessel.packed_matmul_i8 ins(%x, %b : memref<1x9x9x8xi8>, memref<1x18x64x4xi8>)
      outs(%c : memref<1x4x4x10xi32>) {a_zp = 3 : i32, b_zp = 0 : i32,
      kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>}
  tessel.packed_matmul_i8 ins(%x, %b : memref<1x9x9x8xi8>, memref<1x18x64x4xi8>)
      outs(%p : memref<1x4x4x10xi32, strided<[240, 60, 10, 1]>>) {a_zp = 3 : i32, b_zp = 0 : i32,
      accumulate, kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>}
  return
}

// -----

// The requantizing convolution: the same arguments up to the output, then
// the residual's (none: a null pointer, zero strides, no clamp) and the
// requantizing epilogue's.
// CHECK-LABEL: func @conv_i8_requant
// CHECK: call @tessel_kernel_conv2d_u8s8_requant({{.*}}) : (i64, i64, i64, i64, i64, i64, i64, !llvm.ptr, i64, i64, i64, i64, i64, i64, i64, i32, !llvm.ptr, !llvm.ptr, i32, !llvm.ptr, i64, i64, i64, !llvm.ptr, i64, i64, i64, f32, f32, !llvm.ptr, !llvm.ptr, f32, f32, f32, f32, f32, f32, !llvm.ptr, f32, f32, f32, f32, i32) -> ()
func.func @conv_i8_requant(%x: memref<1x9x9x8xi8>, %b: memref<1x18x64x4xi8>, %s: memref<10xf32>, %c: memref<1x4x4x10xi8>) {
  tessel.packed_matmul_i8_requant ins(%x, %b : memref<1x9x9x8xi8>, memref<1x18x64x4xi8>)
      scale(%s : memref<10xf32>) outs(%c : memref<1x4x4x10xi8>)
      {a_zp = 3 : i32, b_zp = 0 : i32, a_signed, clamp_min = 0.0 : f32, clamp_max = 6.0 : f32,
       out_scale = 0.05 : f32, out_zp = 12.0 : f32,
       kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>}
  return
}

// -----

// tessel.packed_matmul_i8_requant: the matmul's arguments, C (8-bit, a void
// pointer), scale, bias (none: a null pointer), clamp, out scale and zero point, the
// quantized range, the table, the dequantization (scale 1, zero 0: none)
// and flags (A_SIGNED | QUANTIZE | RECIPROCAL_FMA = 268: the division by
// 0.05 is proven to equal the corrected reciprocal, QuantizeDivision.h).
// CHECK-LABEL: func @matmul_i8_requant
// CHECK-DAG: %[[LO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[HI:.*]] = arith.constant 6.000000e+00 : f32
// CHECK-DAG: %[[OS:.*]] = arith.constant 5.000000e-02 : f32
// CHECK-DAG: %[[OZ:.*]] = arith.constant 1.200000e+01 : f32
// CHECK-DAG: %[[FLAGS:.*]] = arith.constant 268 : i32
// CHECK: call @tessel_kernel_matmul_u8s8_requant({{.*}}, %[[LO]], %[[HI]], %[[OS]], %[[OZ]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[FLAGS]]) : (i64, i64, i64, i64, !llvm.ptr, i64, i64, i32, !llvm.ptr, i64, !llvm.ptr, i32, !llvm.ptr, i64, i64, i64, !llvm.ptr, i64, i64, i64, f32, f32, !llvm.ptr, !llvm.ptr, f32, f32, f32, f32, f32, f32, !llvm.ptr, f32, f32, f32, f32, i32) -> ()
// CHECK-NOT: tessel.packed_matmul_i8_requant
func.func @matmul_i8_requant(%a: memref<1x5x70xi8>, %b: memref<1x18x64x4xi8>, %s: memref<10xf32>, %t: memref<256xi8>, %c: memref<1x5x10xi8>) {
  tessel.packed_matmul_i8_requant ins(%a, %b : memref<1x5x70xi8>, memref<1x18x64x4xi8>)
      scale(%s : memref<10xf32>) table(%t : memref<256xi8>) outs(%c : memref<1x5x10xi8>)
      {a_zp = 3 : i32, b_zp = 0 : i32, a_signed, clamp_min = 0.0 : f32, clamp_max = 6.0 : f32,
       out_scale = 0.05 : f32, out_zp = 12.0 : f32}
  return
}

// -----

// A residual: its pointer and strides (as the output's, here the matmul's
// B x M x N) and the clamp after the add.
// CHECK-LABEL: func @matmul_i8_requant_residual
// CHECK: llvm.mlir.zero : !llvm.ptr
// CHECK: %[[OUT:.*]] = llvm.inttoptr %{{.*}} : i64 to !llvm.ptr
// CHECK: %[[RES:.*]] = llvm.inttoptr %{{.*}} : i64 to !llvm.ptr
// CHECK: %[[RLO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[RHI:.*]] = arith.constant 6.000000e+00 : f32
// CHECK: call @tessel_kernel_matmul_u8s8_requant({{.*}}, %[[OUT]], %{{.*}}, %{{.*}}, %{{.*}}, %[[RES]], %{{.*}}, %{{.*}}, %{{.*}}, %[[RLO]], %[[RHI]], {{.*}})
func.func @matmul_i8_requant_residual(%a: memref<1x5x70xi8>, %b: memref<1x18x64x4xi8>, %s: memref<10xf32>, %r: memref<1x5x10xf32>, %c: memref<1x5x10xf32>) {
  tessel.packed_matmul_i8_requant ins(%a, %b : memref<1x5x70xi8>, memref<1x18x64x4xi8>)
      scale(%s : memref<10xf32>) residual(%r : memref<1x5x10xf32>) outs(%c : memref<1x5x10xf32>)
      {a_zp = 0 : i32, b_zp = 0 : i32, clamp_min = 0xFF800000 : f32, clamp_max = 0x7F800000 : f32,
       residual_min = 0.0 : f32, residual_max = 6.0 : f32}
  return
}

// -----

// A convolution's residual is read as N x (OH*OW) x F rows, as its output
// is written: a strided one whose pixels do not collapse is copied to a
// dense buffer before the call (and not back: it is only read).
// CHECK-LABEL: func @conv_i8_requant_strided_residual
// CHECK: %[[DENSE:.*]] = memref.alloc() : memref<1x4x4x10xf32>
// CHECK: memref.copy %arg3, %[[DENSE]]
// CHECK: memref.collapse_shape %[[DENSE]] {{\[\[}}0], [1, 2], [3]]
// CHECK: call @tessel_kernel_conv2d_u8s8_requant
// CHECK-NEXT: memref.dealloc %[[DENSE]]
// CHECK-NEXT: return
func.func @conv_i8_requant_strided_residual(%x: memref<1x9x9x8xi8>, %b: memref<1x18x64x4xi8>, %s: memref<10xf32>,
    %r: memref<1x4x4x10xf32, strided<[240, 60, 10, 1]>>, %c: memref<1x4x4x10xf32>) {
  tessel.packed_matmul_i8_requant ins(%x, %b : memref<1x9x9x8xi8>, memref<1x18x64x4xi8>)
      scale(%s : memref<10xf32>) residual(%r : memref<1x4x4x10xf32, strided<[240, 60, 10, 1]>>)
      outs(%c : memref<1x4x4x10xf32>)
      {a_zp = 3 : i32, b_zp = 0 : i32, clamp_min = 0.0 : f32, clamp_max = 6.0 : f32,
       kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>}
  return
}

// -----

// Without a clamp, the reciprocal sequence gets one: two steps past where
// the result saturates, (0 - 12 - 2) * 0.05 and (255 - 12 + 2) * 0.05, so
// no infinite y reaches it.
// CHECK-LABEL: func @matmul_i8_requant_narrowed
// CHECK-DAG: %[[LO:.*]] = arith.constant -0.699999988 : f32
// CHECK-DAG: %[[HI:.*]] = arith.constant 1.225000e+01 : f32
// CHECK-DAG: %[[FLAGS:.*]] = arith.constant 268 : i32
// CHECK: call @tessel_kernel_matmul_u8s8_requant({{.*}}, %[[LO]], %[[HI]], {{.*}}, %[[FLAGS]])
func.func @matmul_i8_requant_narrowed(%a: memref<1x5x70xi8>, %b: memref<1x18x64x4xi8>, %s: memref<10xf32>, %c: memref<1x5x10xi8>) {
  tessel.packed_matmul_i8_requant ins(%a, %b : memref<1x5x70xi8>, memref<1x18x64x4xi8>)
      scale(%s : memref<10xf32>) outs(%c : memref<1x5x10xi8>)
      {a_zp = 3 : i32, b_zp = 0 : i32, a_signed, clamp_min = 0xFF800000 : f32, clamp_max = 0x7F800000 : f32,
       out_scale = 0.05 : f32, out_zp = 12.0 : f32}
  return
}

// -----

// A scale outside the proof's range keeps the division (flags 12) and the
// clamp as it is.
// CHECK-LABEL: func @matmul_i8_requant_divide
// CHECK-DAG: %[[LO:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[HI:.*]] = arith.constant 0x7F800000 : f32
// CHECK-DAG: %[[FLAGS:.*]] = arith.constant 12 : i32
// CHECK: call @tessel_kernel_matmul_u8s8_requant({{.*}}, %[[LO]], %[[HI]], {{.*}}, %[[FLAGS]])
func.func @matmul_i8_requant_divide(%a: memref<1x5x70xi8>, %b: memref<1x18x64x4xi8>, %s: memref<10xf32>, %c: memref<1x5x10xi8>) {
  tessel.packed_matmul_i8_requant ins(%a, %b : memref<1x5x70xi8>, memref<1x18x64x4xi8>)
      scale(%s : memref<10xf32>) outs(%c : memref<1x5x10xi8>)
      {a_zp = 3 : i32, b_zp = 0 : i32, a_signed, clamp_min = 0xFF800000 : f32, clamp_max = 0x7F800000 : f32,
       out_scale = 1.0e-25 : f32, out_zp = 12.0 : f32}
  return
}

// -----

// tessel.depthwise_conv2d_i8 without an epilogue: the sizes, the input's
// pointer and strides (channels contiguous: sn, sh, sw), the zero point,
// strides and dilations, the packed weights and sums, the int32 output, then
// null scale and bias, neutral epilogue values and flags A_SIGNED (4).
// CHECK-LABEL: func.func private @tessel_kernel_depthwise_conv2d_u8s8(i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, !llvm.ptr, i64, i64, i64, i32, i64, i64, i64, i64, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, !llvm.ptr, !llvm.ptr, f32, f32, f32, f32, f32, f32, !llvm.ptr, f32, f32, f32, f32, i32)
// CHECK-LABEL: func @depthwise_i8
// CHECK-DAG: %[[KH:.*]] = arith.constant 5 : i64
// CHECK-DAG: %[[PT:.*]] = arith.constant 2 : i64
// CHECK-DAG: %[[ZP:.*]] = arith.constant -3 : i32
// CHECK-DAG: %[[FLAGS:.*]] = arith.constant 4 : i32
// CHECK-DAG: %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK: call @tessel_kernel_depthwise_conv2d_u8s8(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[KH]], %{{.*}}, %{{.*}}, %{{.*}}, %[[PT]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ZP]], {{.*}}, %[[NULL]], %{{.*}}, {{.*}}, %[[FLAGS]])
// CHECK-NOT: tessel.depthwise_conv2d_i8
func.func @depthwise_i8(%x: memref<1x8x8x20xi8>, %w: memref<2x3x32x4xi8>, %cs: memref<20xi32>, %c: memref<1x4x4x20xi32>) {
  tessel.depthwise_conv2d_i8 ins(%x, %w : memref<1x8x8x20xi8>, memref<2x3x32x4xi8>) column_sums(%cs : memref<20xi32>)
      outs(%c : memref<1x4x4x20xi32>) {kernel_size = array<i64: 5, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>,
       pad = array<i64: 2, 1, 1, 0>, a_zp = -3 : i32, a_signed}
  return
}

// -----

// With the epilogue, the arguments of the int8 matmul's (the same proven
// division: flags A_SIGNED | QUANTIZE | RECIPROCAL_FMA = 268). An output
// whose channels are not contiguous is written through a dense copy.
// CHECK-LABEL: func @depthwise_i8_requant
// CHECK-DAG: %[[FLAGS:.*]] = arith.constant 268 : i32
// CHECK-DAG: %[[TMP:.*]] = memref.alloc() : memref<1x4x4x20xi8>
// CHECK: call @tessel_kernel_depthwise_conv2d_u8s8({{.*}}, %[[FLAGS]])
// CHECK-NEXT: memref.copy %[[TMP]], %{{.*}} : memref<1x4x4x20xi8> to memref<1x4x4x20xi8, strided<[640, 160, 40, 2]>>
// CHECK-NEXT: memref.dealloc %[[TMP]]
func.func @depthwise_i8_requant(%x: memref<1x8x8x20xi8>, %w: memref<2x3x32x4xi8>, %cs: memref<20xi32>, %s: memref<20xf32>, %c: memref<1x4x4x40xi8>) {
  %o = memref.subview %c[0, 0, 0, 0] [1, 4, 4, 20] [1, 1, 1, 2] : memref<1x4x4x40xi8> to memref<1x4x4x20xi8, strided<[640, 160, 40, 2]>>
  tessel.depthwise_conv2d_i8 ins(%x, %w : memref<1x8x8x20xi8>, memref<2x3x32x4xi8>) column_sums(%cs : memref<20xi32>)
      scale(%s : memref<20xf32>) outs(%o : memref<1x4x4x20xi8, strided<[640, 160, 40, 2]>>)
      {kernel_size = array<i64: 5, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>,
       pad = array<i64: 2, 1, 1, 0>, a_zp = -3 : i32, a_signed, clamp_min = 0.0 : f32, clamp_max = 6.0 : f32,
       out_scale = 0.05 : f32, out_zp = 12.0 : f32}
  return
}

// -----

// A bf16 packed filter calls the bf16 kernel (same arguments; the filter's
// elements are its bits, uint16_t); a rank-4 one has a batch stride.
// CHECK-LABEL: func.func private @tessel_kernel_conv2d_nhwc_bf16(i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, !llvm.ptr, i64, i64, i64, i64, i64, i64, i64, i64, !llvm.ptr, i64, !llvm.ptr, i64, i64, i64, i64, !llvm.ptr, f32, f32, i32)
// CHECK-LABEL: func @conv_bf16
// CHECK: %{{.*}}, %[[WOFF:.*]], %{{.*}}:3, %{{.*}}:3 = memref.extract_strided_metadata %arg1
// CHECK: %[[TWO:.*]] = arith.constant 2 : index
// CHECK: arith.muli %[[WOFF]], %[[TWO]] : index
// CHECK: call @tessel_kernel_conv2d_nhwc_bf16(
// CHECK-NOT: call @tessel_kernel_conv2d_nhwc_f32
// CHECK-LABEL: func @matmul_bf16_batched
// CHECK: memref.extract_strided_metadata %arg1
// CHECK: %{{.*}}, %{{.*}}, %{{.*}}:4, %[[BSTR:.*]]:4 = memref.extract_strided_metadata %arg1
// CHECK: %[[SN:.*]] = arith.index_cast %[[BSTR]]#0 : index to i64
// CHECK: call @tessel_kernel_conv2d_nhwc_bf16({{.*}}, %[[SN]], {{.*}})
func.func @conv_bf16(%x: memref<1x9x9x5xf32>, %w: memref<1x23x128xbf16>, %o: memref<1x7x7x16xf32>) {
  tessel.packed_conv2d ins(%x, %w : memref<1x9x9x5xf32>, memref<1x23x128xbf16>)
      outs(%o : memref<1x7x7x16xf32>)
      {kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>,
       dilations = array<i64: 1, 1>}
  return
}
func.func @matmul_bf16_batched(%a: memref<2x1x5x8xf32>, %b: memref<2x1x4x128xbf16>, %o: memref<2x1x5x3xf32>) {
  tessel.packed_conv2d ins(%a, %b : memref<2x1x5x8xf32>, memref<2x1x4x128xbf16>)
      outs(%o : memref<2x1x5x3xf32>)
      {kernel_size = array<i64: 1, 1>, strides = array<i64: 1, 1>,
       dilations = array<i64: 1, 1>, accumulate}
  return
}

// -----

// A sparse matmul's flags: k_ascending (512) and, for N:M, (n | m << 8) <<
// 16 (2:4: 67239936), which selects the kernel's fixed-count products.
// CHECK-LABEL: func @sparse_flags
// CHECK: %[[F1:.*]] = arith.constant 512 : i32
// CHECK: call @tessel_kernel_sparse_matmul_f32({{.*}}, %[[F1]])
// CHECK: %[[F2:.*]] = arith.constant 67240448 : i32
// CHECK: call @tessel_kernel_sparse_matmul_f32({{.*}}, %[[F2]])
// The lane order adds 1024 (LANES).
// CHECK: %[[F3:.*]] = arith.constant 67241472 : i32
// CHECK: call @tessel_kernel_sparse_matmul_f32({{.*}}, %[[F3]])
func.func @sparse_flags(%a: memref<3x8xf32>, %p: memref<3xi32>, %k: memref<8xi32>, %v: memref<8xf32>, %o: memref<3x2xf32>,
                        %p16: memref<2xi32>, %k16: memref<64xi32>, %v16: memref<64xf32>, %o16: memref<3x16xf32>) {
  tessel.sparse_matmul ins(%a, %p, %k, %v : memref<3x8xf32>, memref<3xi32>, memref<8xi32>, memref<8xf32>) outs(%o : memref<3x2xf32>) {block_size = 1 : i64, k_ascending}
  tessel.sparse_matmul ins(%a, %p, %k, %v : memref<3x8xf32>, memref<3xi32>, memref<8xi32>, memref<8xf32>) outs(%o : memref<3x2xf32>) {block_size = 1 : i64, k_ascending, n_of_m = array<i64: 2, 4>}
  tessel.sparse_matmul ins(%a, %p16, %k16, %v16 : memref<3x8xf32>, memref<2xi32>, memref<64xi32>, memref<64xf32>) outs(%o16 : memref<3x16xf32>) {block_size = 1 : i64, k_ascending, n_of_m = array<i64: 2, 4>, lanes}
  return
}
