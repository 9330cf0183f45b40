// TOSA control flow and scatter lower through tosa-to-scf (which must run
// before the full tosa-to-linalg conversion) and run correctly.
// RUN: tessel-compile %s -o %t.so
// RUN: tessel-run %t.so --function=count --input="i32=3" --output=- | FileCheck %s --check-prefix=COUNT
// RUN: tessel-run %t.so --function=pick --input="i1=1" --input="2xf32=1 2" --output=- | FileCheck %s --check-prefix=PICK1
// RUN: tessel-run %t.so --function=pick --input="i1=0" --input="2xf32=1 2" --output=- | FileCheck %s --check-prefix=PICK0
// RUN: tessel-run %t.so --function=scatter --input="1x4x2xf32=1 1 1 1 1 1 1 1" --input="1x1xi32=2" --input="1x1x2xf32=5 6" --output=- | FileCheck %s --check-prefix=SCATTER
// COUNT: i32=10
// PICK1: 2xf32=2 4
// PICK0: 2xf32=-1 -2
// SCATTER: 1x4x2xf32=[{{\[}}1 1][1 1][5 6][1 1]]

// Counts up to 10.
func.func @count(%x: tensor<i32>) -> tensor<i32> {
  %r = tosa.while_loop (%a = %x) : (tensor<i32>) -> tensor<i32> {
    %c = "tosa.const"() <{values = dense<10> : tensor<i32>}> : () -> tensor<i32>
    %p = tosa.greater %c, %a : (tensor<i32>, tensor<i32>) -> tensor<i1>
    tosa.yield %p : tensor<i1>
  } do {
  ^bb0(%a: tensor<i32>):
    %one = "tosa.const"() <{values = dense<1> : tensor<i32>}> : () -> tensor<i32>
    %n = tosa.add %a, %one : (tensor<i32>, tensor<i32>) -> tensor<i32>
    tosa.yield %n : tensor<i32>
  }
  return %r : tensor<i32>
}

// x + x or -x depending on the predicate.
func.func @pick(%p: tensor<i1>, %x: tensor<2xf32>) -> tensor<2xf32> {
  %r = tosa.cond_if %p (%a = %x) : tensor<i1> (tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%a: tensor<2xf32>):
    %d = tosa.add %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    tosa.yield %d : tensor<2xf32>
  } else {
  ^bb0(%a: tensor<2xf32>):
    %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
    %n = tosa.negate %a, %zp, %zp : (tensor<2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2xf32>
    tosa.yield %n : tensor<2xf32>
  }
  return %r : tensor<2xf32>
}

func.func @scatter(%v: tensor<1x4x2xf32>, %i: tensor<1x1xi32>, %u: tensor<1x1x2xf32>) -> tensor<1x4x2xf32> {
  %0 = tosa.scatter %v, %i, %u : (tensor<1x4x2xf32>, tensor<1x1xi32>, tensor<1x1x2xf32>) -> tensor<1x4x2xf32>
  return %0 : tensor<1x4x2xf32>
}
