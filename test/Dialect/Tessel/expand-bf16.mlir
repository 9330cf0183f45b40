// RUN: tessel-opt %s -split-input-file -tessel-expand-bf16 | FileCheck %s

// truncf to bf16 becomes integer rounding on the bits (scalar and vector),
// extf a shift; other ops and other float types are left alone.
// CHECK-LABEL: func @trunc_ext
// CHECK-NOT: arith.truncf
// CHECK: arith.bitcast %{{.*}} : f32 to i32
// CHECK: arith.shrui
// CHECK: arith.trunci %{{.*}} : i32 to i16
// CHECK: arith.bitcast %{{.*}} : i16 to bf16
// CHECK: arith.bitcast %{{.*}} : vector<4xf32> to vector<4xi32>
// CHECK: arith.extui %{{.*}} : i16 to i32
// CHECK: arith.shli
// CHECK: arith.maximumf
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @trunc_ext(%x: f32, %v: vector<4xf32>, %h: bf16) -> (bf16, vector<4xbf16>, f32, f32, f16) {
  %a = arith.truncf %x : f32 to bf16
  %b = arith.truncf %v : vector<4xf32> to vector<4xbf16>
  %c = arith.extf %h : bf16 to f32
  %d = arith.maximumf %x, %c : f32
  %e = arith.truncf %x : f32 to f16
  return %a, %b, %c, %d, %e : bf16, vector<4xbf16>, f32, f32, f16
}
