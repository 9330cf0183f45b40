// RUN: tessel-opt %s --split-input-file --tessel-quantize-without-division | FileCheck %s

// s = 0.5: the reciprocal is proven. The input is clamped to where the
// result saturates anyway ((qmin - zp - 2) s, (qmax - zp + 2) s), then
// multiplied by 1/s; the rest of the quantize is unchanged.
// CHECK-LABEL: func.func @reciprocal
// CHECK-SAME: (%[[Y:.*]]: f32)
// CHECK-NOT: arith.divf
// CHECK-DAG: %[[HI:.*]] = arith.constant 1.270000e+02 : f32
// CHECK-DAG: %[[LO:.*]] = arith.constant -2.500000e+00 : f32
// CHECK-DAG: %[[R:.*]] = arith.constant 2.000000e+00 : f32
// CHECK: %[[A:.*]] = arith.minimumf %[[Y]], %[[HI]] : f32
// CHECK: %[[B:.*]] = arith.maximumf %[[A]], %[[LO]] : f32
// CHECK: %[[Q:.*]] = arith.mulf %[[B]], %[[R]] : f32
// CHECK: math.roundeven %[[Q]] : f32
// CHECK-NOT: arith.divf
func.func @reciprocal(%y: f32) -> i8 {
  %s = arith.constant 5.000000e-01 : f32
  %zp = arith.constant 3.000000e+00 : f32
  %lo = arith.constant 0.000000e+00 : f32
  %hi = arith.constant 2.550000e+02 : f32
  %q = arith.divf %y, %s : f32
  %r = math.roundeven %q : f32
  %a = arith.addf %r, %zp : f32
  %c = arith.minimumf %a, %hi : f32
  %d = arith.maximumf %c, %lo : f32
  %i = arith.fptosi %d : f32 to i32
  %t = arith.trunci %i : i32 to i8
  return %t : i8
}

// -----

// s = 0.1 (not a power of 2): the plain reciprocal is not proven, the
// corrected one is: q1 = y r, e = fma(-q1, s, y), q = fma(e, r, q1). The
// clamp here is max first, and there is no zero point.
// CHECK-LABEL: func.func @corrected
// CHECK-NOT: arith.divf
// CHECK: %[[A:.*]] = arith.minimumf %{{.*}}, %{{.*}} : f32
// CHECK: %[[B:.*]] = arith.maximumf %[[A]], %{{.*}} : f32
// CHECK: %[[Q1:.*]] = arith.mulf %[[B]], %[[R:.*]] : f32
// CHECK: %[[N:.*]] = arith.negf %[[Q1]] : f32
// CHECK: %[[E:.*]] = math.fma %[[N]], %{{.*}}, %[[B]] : f32
// CHECK: %[[Q:.*]] = math.fma %[[E]], %[[R]], %[[Q1]] : f32
// CHECK: math.roundeven %[[Q]] : f32
func.func @corrected(%y: f32) -> f32 {
  %s = arith.constant 1.000000e-01 : f32
  %lo = arith.constant -1.280000e+02 : f32
  %hi = arith.constant 1.270000e+02 : f32
  %q = arith.divf %y, %s : f32
  %r = math.roundeven %q : f32
  %c = arith.maximumf %r, %lo : f32
  %d = arith.minimumf %c, %hi : f32
  return %d : f32
}

// -----

// The form tessel-lower-quant leaves in a QDQ model's loops: a generic's
// body with the scale, zero point and bounds captured from outside.
// CHECK-LABEL: func.func @in_a_generic
// CHECK: linalg.generic
// CHECK-NOT: arith.divf
// CHECK: arith.mulf
// CHECK: math.roundeven
func.func @in_a_generic(%x: tensor<8xf32>) -> tensor<8xi8> {
  %s = arith.constant 2.500000e-01 : f32
  %zp = arith.constant 1.280000e+02 : f32
  %lo = arith.constant 0.000000e+00 : f32
  %hi = arith.constant 2.550000e+02 : f32
  %e = tensor.empty() : tensor<8xi8>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%e : tensor<8xi8>) {
  ^bb0(%in: f32, %out: i8):
    %q = arith.divf %in, %s : f32
    %r = math.roundeven %q : f32
    %a = arith.addf %r, %zp : f32
    %c = arith.minimumf %a, %hi : f32
    %d = arith.maximumf %c, %lo : f32
    %i = arith.fptosi %d : f32 to i32
    %t = arith.trunci %i : i32 to i8
    linalg.yield %t : i8
  } -> tensor<8xi8>
  return %0 : tensor<8xi8>
}

// -----

// Not quantizes, or not provable: left as they are.
// CHECK-LABEL: func.func @no_rounding
// CHECK: arith.divf
func.func @no_rounding(%y: f32) -> f32 {
  %s = arith.constant 5.000000e-01 : f32
  %lo = arith.constant 0.000000e+00 : f32
  %hi = arith.constant 2.550000e+02 : f32
  %q = arith.divf %y, %s : f32
  %c = arith.minimumf %q, %hi : f32
  %d = arith.maximumf %c, %lo : f32
  return %d : f32
}

// -----

// CHECK-LABEL: func.func @scale_not_constant
// CHECK: arith.divf
func.func @scale_not_constant(%y: f32, %s: f32) -> f32 {
  %lo = arith.constant 0.000000e+00 : f32
  %hi = arith.constant 2.550000e+02 : f32
  %q = arith.divf %y, %s : f32
  %r = math.roundeven %q : f32
  %c = arith.minimumf %r, %hi : f32
  %d = arith.maximumf %c, %lo : f32
  return %d : f32
}

// -----

// The rounded quotient is read by something else too: it would see the
// cheaper quotient outside the clamp the proof covers.
// CHECK-LABEL: func.func @quotient_used_twice
// CHECK: arith.divf
func.func @quotient_used_twice(%y: f32) -> (f32, f32) {
  %s = arith.constant 5.000000e-01 : f32
  %lo = arith.constant 0.000000e+00 : f32
  %hi = arith.constant 2.550000e+02 : f32
  %q = arith.divf %y, %s : f32
  %r = math.roundeven %q : f32
  %c = arith.minimumf %r, %hi : f32
  %d = arith.maximumf %c, %lo : f32
  return %d, %r : f32, f32
}

// -----

// Only one bound: not the saturating quantize the proof is about.
// CHECK-LABEL: func.func @one_bound
// CHECK: arith.divf
func.func @one_bound(%y: f32) -> f32 {
  %s = arith.constant 5.000000e-01 : f32
  %hi = arith.constant 2.550000e+02 : f32
  %q = arith.divf %y, %s : f32
  %r = math.roundeven %q : f32
  %c = arith.minimumf %r, %hi : f32
  return %c : f32
}

// -----

// A range wider than 16 bits: no proof is attempted, the division stays.
// CHECK-LABEL: func.func @wide_range
// CHECK: arith.divf
func.func @wide_range(%y: f32) -> f32 {
  %s = arith.constant 5.000000e-01 : f32
  %lo = arith.constant 0.000000e+00 : f32
  %hi = arith.constant 1.000000e+05 : f32
  %q = arith.divf %y, %s : f32
  %r = math.roundeven %q : f32
  %c = arith.minimumf %r, %hi : f32
  %d = arith.maximumf %c, %lo : f32
  return %d : f32
}
