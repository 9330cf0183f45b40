// RUN: tessel-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(tessel-gpu-tile-matmul{wgmma=true}))" | FileCheck %s

// An f16 matmul after a zero fill: TMA descriptors of A (128x64 boxes) and
// B (64x64 boxes) on the host, one launch of 384 threads (a producer and
// two consumer warpgroups) with the stages in dynamic shared memory, the
// fill folded into the kernel's stores.
// CHECK-LABEL: func @f16_zero_filled
// CHECK-NOT: linalg.fill
// CHECK: %[[MA:.*]] = nvgpu.tma.create.descriptor %{{.*}} box[%c128, %c64] : memref<*xf16> -> <tensor = memref<128x64xf16, 3>, swizzle = swizzle_128b, l2promo = l2promo_256b, oob = zero, interleave = none>
// CHECK: %[[MB:.*]] = nvgpu.tma.create.descriptor %{{.*}} box[%c64{{.*}}, %c64{{.*}}] : memref<*xf16> -> <tensor = memref<64x64xf16, 3>
// 512 / 256 column tiles, 512 / 128 row tiles; 4 stages of 48 KiB + 1 KiB.
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c2{{.*}}, {{.*}} = %c4{{.*}}, {{.*}} = %c1{{.*}}) threads({{.*}}) in ({{.*}} = %c384{{.*}}, {{.*}}) dynamic_shared_memory_size %c197632_i32
// CHECK: nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 4>
// CHECK: nvgpu.mbarrier.init
// CHECK: nvgpu.tma.prefetch.descriptor %[[MA]]
// CHECK: gpu.barrier
// The producer: wait for a free stage, expect 48 KiB, one A box and four B
// boxes.
// CHECK: nvvm.setmaxregister  decrease 40
// CHECK: scf.for
// CHECK: nvgpu.mbarrier.try_wait.parity
// CHECK: nvgpu.mbarrier.arrive.expect_tx %{{.*}}[%{{.*}}], %c49152
// CHECK: nvgpu.tma.async.load %[[MA]]
// CHECK-COUNT-4: nvgpu.tma.async.load %[[MB]]
// The consumers: 64x256 sums each, wgmma from the stage's descriptors, the
// previous stage released.
// CHECK: nvvm.setmaxregister  increase 232
// CHECK: nvgpu.warpgroup.mma.init.accumulator -> <fragmented = vector<64x256xf32>>
// CHECK: scf.for
// CHECK: nvgpu.mbarrier.try_wait.parity
// CHECK: nvgpu.warpgroup.generate.descriptor %{{.*}}, %[[MA]] : memref<64x64xf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.warpgroup.generate.descriptor %{{.*}}, %[[MB]] : memref<64x256xf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.warpgroup.mma {{.*}} {transposeB}
// CHECK: nvgpu.mbarrier.arrive
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// The epilogue: through shared memory (rows padded to 264 words), then
// 16-byte stores without reading the output.
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %{{.*}}
// CHECK: nvgpu.warpgroup.mma.store %{{.*}}, %{{.*}} : <fragmented = vector<64x256xf32>> to memref<64x256xf32, strided<[264, 1]>, #gpu.address_space<workgroup>>
// CHECK: vector.load %{{.*}} : memref<128x264xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK-NOT: vector.load
// CHECK: vector.store %{{.*}} : memref<512x512xf32>, vector<4xf32>
// CHECK: gpu.terminator
// CHECK-NOT: linalg.matmul
func.func @f16_zero_filled(%a: memref<512x256xf16>, %b: memref<256x512xf16>, %c: memref<512x512xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<512x512xf32>)
  linalg.matmul ins(%a, %b : memref<512x256xf16>, memref<256x512xf16>) outs(%c : memref<512x512xf32>)
  return
}

// -----

// An f16 output; N not a multiple of 256 (128 columns a tile, 7 stages);
// the output not just zero-filled, so the kernel adds its sums to it;
// batches folded into rows.
// CHECK-LABEL: func @f16_accumulating
// CHECK: memref.collapse_shape %arg0 {{\[}}[0, 1], [2]] : memref<2x256x64xf16> into memref<512x64xf16>
// CHECK: nvgpu.tma.create.descriptor {{.*}} : memref<*xf16> -> <tensor = memref<128x64xf16, 3>
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c3{{.*}}, {{.*}} = %c2{{.*}}, {{.*}} = %c2{{.*}}) threads
// CHECK: nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 7>
// CHECK-COUNT-3: nvgpu.tma.async.load
// CHECK-NOT: nvgpu.tma.async.load
// CHECK: nvgpu.warpgroup.mma.init.accumulator -> <fragmented = vector<64x128xf32>>
// CHECK: vector.load %{{.*}} : memref<128x136xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK: %[[OLD:.*]] = vector.load %{{.*}} : memref<512x384xf16>, vector<4xf16>
// CHECK: arith.extf %[[OLD]]
// CHECK: arith.addf
// CHECK: arith.truncf %{{.*}} : vector<4xf32> to vector<4xf16>
// CHECK: vector.store
func.func @f16_accumulating(%a: memref<2x256x64xf16>, %b: memref<2x64x384xf16>, %c: memref<2x256x384xf16>) {
  linalg.batch_matmul ins(%a, %b : memref<2x256x64xf16>, memref<2x64x384xf16>) outs(%c : memref<2x256x384xf16>)
  return
}

// -----

// Not for wgmma: f32 operands (tiled on the CUDA cores as before); K not a
// multiple of 8 (a row of A would not start 16-byte aligned for TMA),
// several batches with M not a multiple of 128 (a tile would reach into
// the next batch) and bf16 operands (not yet run on a GPU): left to the
// loop-nest kernels.
// CHECK-LABEL: func @not_wgmma
// CHECK-NOT: nvgpu.tma
// CHECK-NOT: nvgpu.warpgroup
// CHECK: gpu.launch
// CHECK-NOT: gpu.launch
// CHECK: linalg.matmul ins(%arg3, %arg4 : memref<64x36xf16>, memref<36x64xf16>)
// CHECK: linalg.batch_matmul ins(%arg6, %arg7 : memref<2x100x64xf16>, memref<2x64x64xf16>)
// CHECK: linalg.matmul ins(%arg9, %arg10 : memref<128x64xbf16>, memref<64x256xbf16>)
func.func @not_wgmma(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32>,
                     %d: memref<64x36xf16>, %e: memref<36x64xf16>, %f: memref<64x64xf32>,
                     %g: memref<2x100x64xf16>, %h: memref<2x64x64xf16>, %i: memref<2x100x64xf32>,
                     %j: memref<128x64xbf16>, %k: memref<64x256xbf16>, %l: memref<128x256xf32>) {
  linalg.matmul ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
  linalg.matmul ins(%d, %e : memref<64x36xf16>, memref<36x64xf16>) outs(%f : memref<64x64xf32>)
  linalg.batch_matmul ins(%g, %h : memref<2x100x64xf16>, memref<2x64x64xf16>) outs(%i : memref<2x100x64xf32>)
  linalg.matmul ins(%j, %k : memref<128x64xbf16>, memref<64x256xbf16>) outs(%l : memref<128x256xf32>)
  return
}

// -----

// In a host loop the descriptors' stack arguments would pile up per
// iteration: the matmul keeps the loop-nest kernels.
// CHECK-LABEL: func @in_a_loop
// CHECK-NOT: nvgpu.tma
// CHECK: scf.for
// CHECK: linalg.matmul
func.func @in_a_loop(%a: memref<128x64xf16>, %b: memref<64x256xf16>, %c: memref<128x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    linalg.matmul ins(%a, %b : memref<128x64xf16>, memref<64x256xf16>) outs(%c : memref<128x256xf32>)
  }
  return
}
