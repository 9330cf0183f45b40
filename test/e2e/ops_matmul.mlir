// Matrix products: 2-D matmul through reshape, batched tosa.matmul, and a
// fully connected layer whose weights and bias are tosa.const.
// References: e2e_refs.py (same names as the functions).
// RUN: %python %e2e %s --work-dir %t -O 0,3

func.func @matmul_2d(%a: tensor<6x10xf32>, %b: tensor<10x7xf32>) -> tensor<6x7xf32> {
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %sa = tosa.const_shape {values = dense<[1, 6, 10]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %sb = tosa.const_shape {values = dense<[1, 10, 7]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %so = tosa.const_shape {values = dense<[6, 7]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %a3 = tosa.reshape %a, %sa : (tensor<6x10xf32>, !tosa.shape<3>) -> tensor<1x6x10xf32>
  %b3 = tosa.reshape %b, %sb : (tensor<10x7xf32>, !tosa.shape<3>) -> tensor<1x10x7xf32>
  %m = tosa.matmul %a3, %b3, %zp, %zp : (tensor<1x6x10xf32>, tensor<1x10x7xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x6x7xf32>
  %r = tosa.reshape %m, %so : (tensor<1x6x7xf32>, !tosa.shape<2>) -> tensor<6x7xf32>
  return %r : tensor<6x7xf32>
}

func.func @batch_matmul(%a: tensor<3x4x5xf32>, %b: tensor<3x5x6xf32>) -> tensor<3x4x6xf32> {
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %m = tosa.matmul %a, %b, %zp, %zp : (tensor<3x4x5xf32>, tensor<3x5x6xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<3x4x6xf32>
  return %m : tensor<3x4x6xf32>
}

// FC_CONST_W / FC_CONST_B in e2e_refs.py.
func.func @fc_const(%x: tensor<5x3xf32> {tessel.name = "x"}) -> (tensor<5x2xf32> {tessel.name = "y"}) {
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %w = "tosa.const"() {values = dense<[[[1.5, -2.0], [0.25, 0.5], [-1.0, 3.0]]]> : tensor<1x3x2xf32>} : () -> tensor<1x3x2xf32>
  %b = "tosa.const"() {values = dense<[[[0.125, -0.75]]]> : tensor<1x1x2xf32>} : () -> tensor<1x1x2xf32>
  %sx = tosa.const_shape {values = dense<[1, 5, 3]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %so = tosa.const_shape {values = dense<[5, 2]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %x3 = tosa.reshape %x, %sx : (tensor<5x3xf32>, !tosa.shape<3>) -> tensor<1x5x3xf32>
  %m = tosa.matmul %x3, %w, %zp, %zp : (tensor<1x5x3xf32>, tensor<1x3x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x5x2xf32>
  %mb = tosa.add %m, %b : (tensor<1x5x2xf32>, tensor<1x1x2xf32>) -> tensor<1x5x2xf32>
  %r = tosa.reshape %mb, %so : (tensor<1x5x2xf32>, !tosa.shape<2>) -> tensor<5x2xf32>
  return %r : tensor<5x2xf32>
}
