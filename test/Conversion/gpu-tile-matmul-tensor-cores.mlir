// RUN: tessel-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(tessel-gpu-tile-matmul{precision=f16}))" | FileCheck %s --check-prefix=F16
// RUN: tessel-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(tessel-gpu-tile-matmul{precision=bf16}))" | FileCheck %s --check-prefix=BF16
// RUN: not tessel-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(tessel-gpu-tile-matmul{precision=tf32}))" 2>&1 | FileCheck %s --check-prefix=BAD

// An f32 matmul on the tensor cores: operands rounded to the product type
// as they are staged into 16-deep workgroup slices, 8 warps of 4 x 4
// m16n8k16 tiles per 16-deep slice (16 mma.sync a slice), f32 sums.
// f16 goes through nvgpu.mma.sync. bf16 goes straight to nvvm.mma.sync
// (upstream's nvgpu lowering deduces no PTX type for bf16): each bf16 pair
// bitcast to one i32 register, A's four and B's two in the f16 order, the
// four sums out of the result struct back into the 2x2 accumulator.
// F16-LABEL: func @matmul
// F16: gpu.launch
// F16-SAME: workgroup(%{{.*}} : memref<128x24xf16, #gpu.address_space<workgroup>>, %{{.*}} : memref<128x24xf16, #gpu.address_space<workgroup>>)
// F16: arith.truncf %{{.*}} : f32 to f16
// F16-COUNT-16: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
// F16-NOT: nvvm.mma.sync
// F16-NOT: linalg.matmul
// BF16-LABEL: func @matmul
// BF16: gpu.launch
// BF16-SAME: workgroup(%{{.*}} : memref<128x24xbf16, #gpu.address_space<workgroup>>, %{{.*}} : memref<128x24xbf16, #gpu.address_space<workgroup>>)
// BF16: arith.truncf %{{.*}} : f32 to bf16
// BF16-NOT: nvgpu.mma.sync
// BF16: vector.bitcast %{{.*}} : vector<2xbf16> to vector<1xi32>
// BF16: %[[D:.*]] = nvvm.mma.sync A[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] B[%{{.*}}, %{{.*}}] C[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}]
// BF16-SAME: layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>
// BF16-SAME: multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>
// BF16-SAME: shape = #nvvm.shape<m = 16, n = 8, k = 16>
// BF16-SAME: : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// BF16: llvm.extractvalue %[[D]][0]
// BF16: llvm.extractvalue %[[D]][3]
// BF16: vector.from_elements %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : vector<2x2xf32>
// BF16-COUNT-15: nvvm.mma.sync
// BF16-NOT: nvvm.mma.sync
// BF16: gpu.terminator
// BF16-NOT: linalg.matmul
func.func @matmul(%a: memref<256x64xf32>, %b: memref<64x256xf32>, %c: memref<256x256xf32>) {
  linalg.matmul ins(%a, %b : memref<256x64xf32>, memref<64x256xf32>) outs(%c : memref<256x256xf32>)
  return
}

// BAD: error: precision must be f32, f16 or bf16, got 'tf32'
