//===- KernelsTest.cpp - kernel library vs. a naive reference --------------===//
//
// Built once per kernel variant (x86-64, -v3, -v4; the -v4 suite runs only
// where the CPU has AVX-512). Every case compares against plain loops in
// double precision: shapes that exercise every micro-kernel row count and
// panel width (F % NR != 0), strides, dilations, padding-free edges,
// batch, per-image weights, bias, clamp, accumulate, strided layouts and
// two threads.
//
//===----------------------------------------------------------------------===//
#include "tessel/Kernels/tessel_kernels.h"
#include "tessel/Runtime/tessel_abi.h"
#include "tessel/Support/QuantizeDivision.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <tuple>
#include <vector>

namespace {

constexpr int64_t NR = TESSEL_KERNEL_NR;
const float kInf = INFINITY;

std::vector<float> randomVec(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float &x : v)
    x = d(gen);
  return v;
}

// The kernels run a job of less than TK_MIN_THREAD_WORK multiply-adds per
// thread on fewer threads; the shapes here are small, and their two-thread
// cases are there to run on two.
[[maybe_unused]] const int minThreadWork = setenv("TESSEL_KERNELS_MIN_THREAD_WORK", "1", 0);

void setThreads(uint32_t n) {
  tessel_invoke_context_t ctx{sizeof(tessel_invoke_context_t), n};
  tessel_kernel_set_context(&ctx);
}

/// W[f][kh][kw][c] -> [ceil(F/NR)][KH*KW*C][NR]
std::vector<float> packFilter(const std::vector<float> &w, int64_t F,
                              int64_t K) {
  int64_t P = (F + NR - 1) / NR;
  std::vector<float> p(P * K * NR, 0.0f);
  for (int64_t f = 0; f < F; ++f)
    for (int64_t k = 0; k < K; ++k)
      p[((f / NR) * K + k) * NR + f % NR] = w[f * K + k];
  return p;
}

struct ConvCase {
  int64_t N, H, W, C, F, KH, KW, sh, sw, dh, dw;
  bool bias, clamp, accumulate;
  uint32_t threads;
  int64_t pt = 0, pb = 0, pl = 0, pr = 0; // implicit zero padding
  // 3x3/1 only: tessel_kernel_conv2d_winograd_nhwc_f32 with output tiles of
  // 2x2 (F(2x2, 3x3)) or 4x4 (F(4x4, 3x3)); 0: not Winograd.
  int winograd = 0;
  bool bf16 = false;     // tessel_kernel_conv2d_nhwc_bf16
};

ConvCase inBF16(ConvCase t) {
  t.bf16 = true;
  return t;
}

/// f32 -> bf16 bits, nearest even (the test data has no NaN or denormal).
uint16_t toBF16(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return uint16_t(u >> 16);
}
float fromBF16(uint16_t h) {
  uint32_t u = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

/// W[f][k] (k < K) -> [ceil(F/NR)][ceil(K/2)][NR][2] bf16, zero-padded.
std::vector<uint16_t> packFilterBF16(const std::vector<float> &w, int64_t F,
                                     int64_t K) {
  int64_t P = (F + NR - 1) / NR, k2 = (K + 1) / 2;
  std::vector<uint16_t> p(P * k2 * NR * 2, 0);
  for (int64_t f = 0; f < F; ++f)
    for (int64_t k = 0; k < K; ++k)
      p[(((f / NR) * k2 + k / 2) * NR + f % NR) * 2 + k % 2] =
          toBF16(w[f * K + k]);
  return p;
}

/// W[f][3][3][c] -> U = G g G^T packed as [L*L][ceil(F/NR)][C][NR], the
/// Winograd F(m x m, 3x3) filter the compiler emits (in double, here), with
/// L = m + 2 rows of G: Lavin and Gray's for m = 2 and 4.
std::vector<float> winogradFilter(const std::vector<float> &w, int64_t F,
                                  int64_t C, int m) {
  const double g2[4][3] = {{1, 0, 0}, {.5, .5, .5}, {.5, -.5, .5}, {0, 0, 1}};
  const double g4[6][3] = {{1. / 4, 0, 0},
                           {-1. / 6, -1. / 6, -1. / 6},
                           {-1. / 6, 1. / 6, -1. / 6},
                           {1. / 24, 1. / 12, 1. / 6},
                           {1. / 24, -1. / 12, 1. / 6},
                           {0, 0, 1}};
  auto g = [&](int i, int k) { return m == 4 ? g4[i][k] : g2[i][k]; };
  const int L = m + 2;
  int64_t P = (F + NR - 1) / NR;
  std::vector<float> u(L * L * P * C * NR, 0.0f);
  for (int64_t f = 0; f < F; ++f)
    for (int64_t c = 0; c < C; ++c)
      for (int i = 0; i < L; ++i)
        for (int j = 0; j < L; ++j) {
          double acc = 0;
          for (int kh = 0; kh < 3; ++kh)
            for (int kw = 0; kw < 3; ++kw)
              acc += g(i, kh) * w[((f * 3 + kh) * 3 + kw) * C + c] * g(j, kw);
          u[(((i * L + j) * P + f / NR) * C + c) * NR + f % NR] = float(acc);
        }
  return u;
}

void checkConv(const ConvCase &t) {
  int64_t OH = (t.H + t.pt + t.pb - t.dh * (t.KH - 1) - 1) / t.sh + 1;
  int64_t OW = (t.W + t.pl + t.pr - t.dw * (t.KW - 1) - 1) / t.sw + 1;
  int64_t K = t.KH * t.KW * t.C;
  auto in = randomVec(t.N * t.H * t.W * t.C, 1);
  auto w = randomVec(t.F * K, 2);
  auto bias = randomVec(t.F, 3);
  auto init = randomVec(t.N * OH * OW * t.F, 4);
  std::vector<float> out = init;
  std::vector<float> wp = packFilter(w, t.F, K);
  float lo = t.clamp ? -0.5f : -kInf, hi = t.clamp ? 0.75f : kInf;
  setThreads(t.threads);
  if (t.bf16) {
    std::vector<uint16_t> wb = packFilterBF16(w, t.F, K);
    tessel_kernel_conv2d_nhwc_bf16(
        t.N, OH, OW, t.F, t.KH, t.KW, t.C, t.H, t.W, t.pt, t.pl, in.data(),
        t.H * t.W * t.C, t.W * t.C, t.C, 1, t.sh, t.sw, t.dh, t.dw, wb.data(),
        0, out.data(), OH * OW * t.F, OW * t.F, t.F, 1,
        t.bias ? bias.data() : nullptr, lo, hi,
        t.accumulate ? TESSEL_KERNEL_ACCUMULATE : 0);
    // The reference multiplies the values the kernel multiplies.
    for (float &x : in)
      x = fromBF16(toBF16(x));
    for (float &x : w)
      x = fromBF16(toBF16(x));
  } else if (t.winograd) {
    std::vector<float> up = winogradFilter(w, t.F, t.C, t.winograd);
    tessel_kernel_conv2d_winograd_nhwc_f32(
        t.N, OH, OW, t.F, t.C, t.H, t.W, t.pt, t.pl, t.dh, t.dw,
        (t.winograd + 2) * (t.winograd + 2), in.data(), t.H * t.W * t.C,
        t.W * t.C, t.C, 1, up.data(), out.data(), OH * OW * t.F, OW * t.F, t.F,
        1, t.bias ? bias.data() : nullptr, lo, hi,
        t.accumulate ? TESSEL_KERNEL_ACCUMULATE : 0);
  } else {
    tessel_kernel_conv2d_nhwc_f32(
        t.N, OH, OW, t.F, t.KH, t.KW, t.C, t.H, t.W, t.pt, t.pl, in.data(),
        t.H * t.W * t.C, t.W * t.C, t.C, 1, t.sh, t.sw, t.dh, t.dw, wp.data(),
        0, out.data(), OH * OW * t.F, OW * t.F, t.F, 1,
        t.bias ? bias.data() : nullptr, lo, hi,
        t.accumulate ? TESSEL_KERNEL_ACCUMULATE : 0);
  }
  setThreads(1);
  double worst = 0;
  for (int64_t n = 0; n < t.N; ++n)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow)
        for (int64_t f = 0; f < t.F; ++f) {
          double acc = 0;
          for (int64_t kh = 0; kh < t.KH; ++kh)
            for (int64_t kw = 0; kw < t.KW; ++kw) {
              int64_t ih = oh * t.sh + kh * t.dh - t.pt;
              int64_t iw = ow * t.sw + kw * t.dw - t.pl;
              if (ih < 0 || ih >= t.H || iw < 0 || iw >= t.W)
                continue;
              for (int64_t c = 0; c < t.C; ++c)
                acc += double(in[((n * t.H + ih) * t.W + iw) * t.C + c]) *
                       w[((f * t.KH + kh) * t.KW + kw) * t.C + c];
            }
          int64_t o = ((n * OH + oh) * OW + ow) * t.F + f;
          if (t.accumulate)
            acc += init[o];
          if (t.bias)
            acc += bias[f];
          acc = std::fmin(std::fmax(acc, lo), hi);
          worst = std::fmax(worst, std::fabs(acc - out[o]));
        }
  EXPECT_LT(worst, 1e-4 * std::sqrt(double(K)))
      << "N=" << t.N << " H=" << t.H << " W=" << t.W << " C=" << t.C
      << " F=" << t.F << " K=" << t.KH << "x" << t.KW
      << " winograd=" << t.winograd;
}

TEST(ConvKernel, PointwiseEveryRowCountAndPanelWidth) {
  // 1 x 1 x W rows hit every remainder of the row tiling; F covers panels
  // of 1, 2, 3 and 4 vectors and more than one panel.
  for (int64_t w : {1, 5, 6, 7, 11, 12, 13, 25, 97})
    for (int64_t f : {1, 16, 17, 33, 48, 64, 65, 130})
      checkConv({1, 1, w, 7, f, 1, 1, 1, 1, 1, 1, false, false, false, 1});
}

TEST(ConvKernel, PointwiseEpiloguesAndReductionBlocks) {
  // The flat tiles' epilogue (bias, clamp, accumulate, the last vector
  // masked) under short reductions (16, 24, 100: full panels flat) and
  // long ones (300; 2500 channels: three reduction blocks, the later ones
  // adding to C), one and two threads, batch 2.
  for (int64_t c : {16, 24, 100, 300, 2500})
    for (int64_t f : {16, 24, 40, 72, 130})
      for (uint32_t threads : {1u, 2u})
        checkConv({2, 3, 7, c, f, 1, 1, 1, 1, 1, 1, true, true, true, threads});
}

TEST(ConvKernel, SpatialStridesDilations) {
  checkConv({1, 9, 9, 8, 16, 3, 3, 1, 1, 1, 1, true, false, false, 1});
  checkConv({1, 11, 10, 3, 70, 7, 7, 2, 2, 1, 1, true, true, false, 1});
  checkConv({2, 12, 13, 5, 24, 3, 2, 2, 1, 2, 3, false, true, true, 1});
  checkConv({1, 8, 8, 300, 40, 3, 3, 1, 1, 1, 1, true, false, true, 1});
}

TEST(ConvKernel, ImplicitPadding) {
  // ResNet's 7x7/2 stem, 3x3 "same", asymmetric (stride-2 "same"), padding
  // wider than the kernel reach, dilation, and a 1x1 image.
  checkConv({1, 16, 16, 3, 64, 7, 7, 2, 2, 1, 1, true, true, false, 1, 3, 3, 3, 3});
  checkConv({1, 9, 9, 16, 70, 3, 3, 1, 1, 1, 1, true, false, true, 1, 1, 1, 1, 1});
  checkConv({2, 10, 11, 8, 32, 3, 3, 2, 2, 1, 1, false, true, false, 2, 0, 1, 0, 1});
  checkConv({1, 5, 6, 4, 20, 3, 3, 1, 1, 2, 2, true, false, false, 1, 3, 2, 4, 3});
  checkConv({1, 1, 1, 300, 40, 3, 3, 1, 1, 1, 1, true, false, false, 1, 1, 1, 1, 1});
}

TEST(ConvKernel, TapsInThePaddingSkipped) {
  // Row tiles skip the taps that read only padding (a run of live taps per
  // call, the first storing, the last adding the epilogue): ASPP-style
  // dilations larger than the image (only the centre tap reads it), runs
  // broken inside a filter row, several reduction blocks (C = 300), the
  // accumulate flag, tiles entirely in the padding, and two threads.
  checkConv({1, 7, 7, 20, 70, 3, 3, 1, 1, 8, 8, true, true, true, 1, 8, 8, 8, 8});
  checkConv({1, 12, 12, 16, 64, 3, 3, 1, 1, 5, 7, true, false, false, 1, 5, 5, 7, 7});
  checkConv({1, 9, 9, 300, 40, 3, 3, 1, 1, 6, 6, true, true, true, 1, 6, 6, 6, 6});
  checkConv({1, 4, 4, 8, 24, 3, 3, 1, 1, 1, 1, true, true, false, 1, 4, 4, 4, 4});
  checkConv({1, 10, 11, 24, 130, 3, 3, 1, 1, 7, 3, true, false, true, 2, 7, 7, 3, 3});
}

TEST(ConvKernel, StemFilterRowsAsOneTap) {
  // Few dense channels: row tiles whose filter rows lie inside the image
  // read each filter row as one KW * C tap; tiles touching the left/right
  // padding take the per-tap path. Wide images so both kinds occur, with
  // vertical padding, vertical dilation, unpadded and a 2-panel F.
  checkConv({1, 40, 46, 3, 64, 7, 7, 2, 2, 1, 1, true, true, false, 1, 3, 3, 3, 3});
  checkConv({1, 30, 33, 4, 80, 5, 3, 1, 1, 2, 1, false, false, true, 1, 4, 4, 1, 1});
  checkConv({2, 12, 40, 3, 130, 3, 5, 1, 2, 1, 1, true, false, false, 1});
  checkConv({1, 40, 46, 3, 64, 7, 7, 2, 2, 1, 1, true, false, false, 2, 3, 3, 3, 3});
}

TEST(ConvKernel, StemsVectorizedOverPixels) {
  // Few input channels and short filters (KH * KW * C <= 64, strides 1
  // and 2, no dilation): on AVX-512 the stem path (ConvStemF32.c), two
  // vectors of 16 output pixels, up to 12 filters a block, the input
  // deinterleaved by vector permutes. Rows not a multiple of 16 or 32
  // pixels, filter counts off the blocks and panels, asymmetric strides
  // and padding (also wider than the filter's reach), batches, threads;
  // then the same cases on the GEMM tiles (TESSEL_KERNELS_NO_STEM=1),
  // which must agree too.
  const std::vector<ConvCase> cases = {
      {1, 224, 224, 3, 24, 3, 3, 2, 2, 1, 1, true, true, false, 1, 1, 1, 1, 1},
      {1, 37, 41, 3, 32, 3, 3, 2, 2, 1, 1, true, false, false, 1, 1, 0, 1, 0},
      {2, 19, 23, 1, 17, 3, 3, 1, 1, 1, 1, false, true, false, 2, 1, 1, 1, 1},
      {1, 16, 50, 2, 70, 5, 5, 1, 2, 1, 1, true, true, false, 1, 2, 2, 2, 2},
      {1, 9, 33, 4, 8, 2, 3, 2, 1, 1, 1, true, false, false, 1, 0, 1, 2, 0},
      {1, 12, 15, 3, 1, 3, 3, 2, 2, 1, 1, true, true, false, 1, 4, 4, 4, 4},
      {2, 30, 31, 3, 16, 3, 3, 2, 2, 1, 1, true, true, false, 2, 1, 1, 1, 1},
      {1, 7, 7, 4, 64, 4, 4, 2, 2, 1, 1, false, false, false, 1, 0, 0, 0, 0},
      // Three threads: bands of plane rows and output rows that do not
      // line up with each other.
      {1, 61, 45, 3, 20, 3, 3, 2, 2, 1, 1, true, true, false, 3, 1, 1, 1, 1},
  };
  for (const ConvCase &t : cases)
    checkConv(t);
  setenv("TESSEL_KERNELS_NO_STEM", "1", 1);
  for (const ConvCase &t : cases)
    checkConv(t);
  unsetenv("TESSEL_KERNELS_NO_STEM");
}

TEST(ConvKernelBF16, EveryRowCountPanelWidthAndOddChannels) {
  // Odd C pads each tap's channel pairs; C = 300 with a 3x3 filter splits
  // the reduction into several blocks of even channel counts.
  for (int64_t w : {1, 6, 7, 12, 13, 97})
    for (int64_t f : {1, 16, 17, 33, 48, 64, 65, 130})
      checkConv(inBF16({1, 1, w, 7, f, 1, 1, 1, 1, 1, 1, false, false, false, 1}));
  checkConv(inBF16({1, 8, 8, 300, 40, 3, 3, 1, 1, 1, 1, true, false, true, 1}));
  checkConv(inBF16({1, 8, 8, 301, 70, 3, 3, 1, 1, 1, 1, true, true, false, 1}));
  checkConv(inBF16({1, 1, 50, 4096, 20, 1, 1, 1, 1, 1, 1, false, false, true, 1}));
}

TEST(ConvKernelBF16, StridesDilationsPaddingThreads) {
  checkConv(inBF16({1, 11, 10, 3, 70, 7, 7, 2, 2, 1, 1, true, true, false, 1}));
  checkConv(inBF16({2, 12, 13, 5, 24, 3, 2, 2, 1, 2, 3, false, true, true, 1}));
  checkConv(inBF16({1, 40, 46, 3, 64, 7, 7, 2, 2, 1, 1, true, true, false, 1, 3, 3, 3, 3}));
  checkConv(inBF16({1, 5, 6, 4, 20, 3, 3, 1, 1, 2, 2, true, false, false, 1, 3, 2, 4, 3}));
  checkConv(inBF16({2, 20, 20, 16, 96, 3, 3, 1, 1, 1, 1, true, true, true, 2}));
}

// Per-image weights (wp_sn, what a batched matmul with a batched B
// passes): each image against its own packed B, as two calls would give.
// With AMX-BF16 the tasks stay within an image; K = 70 ends in a partial
// step of pairs and the 37 rows in a partial strip.
TEST(ConvKernelBF16, PerImageWeights) {
  const int64_t M = 37, C = 70, F = 90;
  auto in = randomVec(2 * M * C, 11);
  std::vector<uint16_t> w0 = packFilterBF16(randomVec(F * C, 12), F, C),
                        w1 = packFilterBF16(randomVec(F * C, 13), F, C);
  std::vector<uint16_t> both = w0;
  both.insert(both.end(), w1.begin(), w1.end());
  std::vector<float> batched(2 * M * F), single(2 * M * F);
  tessel_kernel_conv2d_nhwc_bf16(2, 1, M, F, 1, 1, C, 1, M, 0, 0, in.data(),
                                 M * C, 0, C, 1, 1, 1, 1, 1, both.data(),
                                 int64_t(w0.size()), batched.data(), M * F, 0,
                                 F, 1, nullptr, -kInf, kInf, 0);
  for (int64_t n = 0; n < 2; ++n)
    tessel_kernel_conv2d_nhwc_bf16(
        1, 1, M, F, 1, 1, C, 1, M, 0, 0, in.data() + n * M * C, 0, 0, C, 1, 1,
        1, 1, 1, (n ? w1 : w0).data(), 0, single.data() + n * M * F, 0, 0, F,
        1, nullptr, -kInf, kInf, 0);
  ASSERT_EQ(batched, single);
}

TEST(ConvKernelBF16, RoundsTheActivations) {
  // The bf16 kernel's result is not the fp32 one: a kernel that skipped
  // the rounding of `in` (or of W) would be within the fp32 tolerance.
  const int64_t M = 13, C = 64, F = 64;
  auto in = randomVec(M * C, 7), w = randomVec(F * C, 8);
  std::vector<float> o32(M * F), o16(M * F);
  std::vector<float> wp = packFilter(w, F, C);
  std::vector<uint16_t> wb = packFilterBF16(w, F, C);
  tessel_kernel_conv2d_nhwc_f32(1, 1, M, F, 1, 1, C, 1, M, 0, 0, in.data(), 0,
                                0, C, 1, 1, 1, 1, 1, wp.data(), 0, o32.data(),
                                0, 0, F, 1, nullptr, -kInf, kInf, 0);
  tessel_kernel_conv2d_nhwc_bf16(1, 1, M, F, 1, 1, C, 1, M, 0, 0, in.data(), 0,
                                 0, C, 1, 1, 1, 1, 1, wb.data(), 0, o16.data(),
                                 0, 0, F, 1, nullptr, -kInf, kInf, 0);
  double worst = 0;
  for (int64_t i = 0; i < M * F; ++i)
    worst = std::fmax(worst, std::fabs(o32[i] - o16[i]));
  EXPECT_GT(worst, 1e-3);
  EXPECT_LT(worst, 0.1);
}

TEST(ConvKernel, TwoThreadsMatch) {
  checkConv({2, 20, 20, 16, 96, 3, 3, 1, 1, 1, 1, true, true, true, 2});
  checkConv({1, 1, 300, 64, 200, 1, 1, 1, 1, 1, 1, true, false, false, 2});
}

TEST(ConvKernel, WinogradF2x3AndF4x3) {
  // Each case as F(2x2, 3x3) and F(4x4, 3x3): output sizes that are and
  // are not multiples of the tile (partial tiles), "same" and no padding,
  // asymmetric padding, channel counts off the vector width (scalar
  // tails), F off the panel width, batch 2, the whole epilogue, two
  // threads, and a 1x1 image.
  auto wino = [](ConvCase c) {
    for (int m : {2, 4}) {
      c.winograd = m;
      checkConv(c);
    }
  };
  wino({1, 8, 8, 32, 64, 3, 3, 1, 1, 1, 1, false, false, false, 1, 1, 1, 1, 1});
  wino({1, 7, 9, 37, 70, 3, 3, 1, 1, 1, 1, true, true, true, 1, 1, 1, 1, 1});
  wino({2, 10, 11, 16, 33, 3, 3, 1, 1, 1, 1, true, false, false, 1});
  wino({1, 12, 13, 5, 130, 3, 3, 1, 1, 1, 1, false, true, true, 2, 0, 2, 1, 0});
  wino({2, 14, 14, 64, 64, 3, 3, 1, 1, 1, 1, true, true, true, 2, 1, 1, 1, 1});
  wino({1, 1, 1, 300, 40, 3, 3, 1, 1, 1, 1, true, false, false, 1, 1, 1, 1, 1});
  // Several tile blocks (290 channels in and out: 48 tiles a block, 242
  // tiles), blocks that start mid-row and cross into the second image.
  wino({2, 22, 21, 150, 140, 3, 3, 1, 1, 1, 1, true, true, true, 2, 1, 1, 1, 1});
  wino({2, 21, 22, 150, 140, 3, 3, 1, 1, 1, 1, false, false, false, 1});
  // Two threads, each a band of tiles through all three steps (400 and
  // 100 tiles): bands that split a row of tiles, several blocks a band
  // and a short last one.
  wino(
      {1, 40, 39, 150, 140, 3, 3, 1, 1, 1, 1, true, true, true, 2, 1, 1, 1, 1});
}

TEST(ConvKernel, WinogradDilatedSubGrids) {
  // Dilated 3x3 convolutions (DeepLab's, FCN's) as undilated ones on the
  // sub-grids of pixels dh rows and dw columns apart: "same" padding
  // (pad = dilation), sizes that the dilation does not divide (sub-grids
  // of different sizes), no padding, asymmetric and unequal dilations,
  // padding past the dilation, sub-grids all in the padding (a 3x3 image
  // at dilation 4), batch 2, accumulate, the epilogue, two threads; both
  // tile sizes.
  auto wino = [](ConvCase c) {
    for (int m : {2, 4}) {
      c.winograd = m;
      checkConv(c);
    }
  };
  wino({1, 16, 16, 32, 64, 3, 3, 1, 1, 2, 2, true, true, false, 1, 2, 2, 2, 2});
  wino({1, 15, 17, 24, 40, 3, 3, 1, 1, 2, 2, false, false, true, 1, 2, 2, 2, 2});
  wino({2, 13, 14, 16, 70, 3, 3, 1, 1, 4, 4, true, false, false, 2, 4, 4, 4, 4});
  wino({1, 20, 19, 8, 16, 3, 3, 1, 1, 3, 2, true, true, true, 1, 0, 0, 0, 0});
  wino({1, 11, 12, 9, 33, 3, 3, 1, 1, 2, 3, false, true, false, 1, 3, 1, 1, 4});
  wino({1, 3, 3, 8, 20, 3, 3, 1, 1, 4, 4, true, false, false, 1, 4, 4, 4, 4});
  wino({2, 28, 28, 64, 64, 3, 3, 1, 1, 2, 2, true, true, true, 2, 2, 2, 2, 2});
  // The sub-grids' tiles run as one sequence of blocks: 2 images x 16
  // sub-grids of 7x7 at dilation 4, 150 -> 140 channels (48-tile blocks
  // that start and end inside sub-grids and images).
  wino({2, 28, 28, 150, 140, 3, 3, 1, 1, 4, 4, true, true, true, 2, 4, 4, 4, 4});
}

TEST(MatmulKernel, BatchedPerImageBAndStridedOutput) {
  const int64_t B = 3, M = 19, K = 37, N = 70;
  auto a = randomVec(B * M * K, 5), b = randomVec(B * K * N, 6);
  int64_t P = (N + NR - 1) / NR;
  std::vector<float> bp(B * P * K * NR, 0.0f);
  for (int64_t i = 0; i < B; ++i)
    for (int64_t k = 0; k < K; ++k)
      for (int64_t n = 0; n < N; ++n)
        bp[i * P * K * NR + ((n / NR) * K + k) * NR + n % NR] =
            b[(i * K + k) * N + n];
  // Output written transposed (c_sm = 1, c_sn = M): the scalar store path.
  std::vector<float> c(B * N * M, 0.0f);
  tessel_kernel_matmul_f32(B, M, N, K, a.data(), M * K, K, 1, bp.data(),
                           P * K * NR, c.data(), N * M, 1, M, nullptr, -kInf,
                           kInf, 0);
  double worst = 0;
  for (int64_t i = 0; i < B; ++i)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double acc = 0;
        for (int64_t k = 0; k < K; ++k)
          acc += double(a[(i * M + m) * K + k]) * b[(i * K + k) * N + n];
        worst = std::fmax(worst, std::fabs(acc - c[(i * N + n) * M + m]));
      }
  EXPECT_LT(worst, 1e-4);
}

TEST(MatmulKernel, StridedActivations) {
  // A read column-major (a_sm = 1, a_sk = M): the non-unit-stride path.
  const int64_t M = 13, K = 21, N = 40;
  auto a = randomVec(M * K, 7), b = randomVec(K * N, 8);
  std::vector<float> bp = packFilter(
      [&] {
        std::vector<float> bt(N * K);
        for (int64_t k = 0; k < K; ++k)
          for (int64_t n = 0; n < N; ++n)
            bt[n * K + k] = b[k * N + n];
        return bt;
      }(),
      N, K);
  std::vector<float> c(M * N, 0.0f);
  tessel_kernel_matmul_f32(1, M, N, K, a.data(), 0, 1, M, bp.data(), 0,
                           c.data(), 0, N, 1, nullptr, -kInf, kInf, 0);
  double worst = 0;
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double acc = 0;
      for (int64_t k = 0; k < K; ++k)
        acc += double(a[k * M + m]) * b[k * N + n];
      worst = std::fmax(worst, std::fabs(acc - c[m * N + n]));
    }
  EXPECT_LT(worst, 1e-4);
}

void checkDepthwise(int64_t H, int64_t W, int64_t C, int64_t KH, int64_t KW,
                    int64_t s, int64_t d, int64_t pt, int64_t pb, int64_t pl,
                    int64_t pr, bool bias, bool clamp, uint32_t threads,
                    bool silu = false) {
  const int64_t N = 2;
  int64_t OH = (H + pt + pb - d * (KH - 1) - 1) / s + 1;
  int64_t OW = (W + pl + pr - d * (KW - 1) - 1) / s + 1;
  auto in = randomVec(N * H * W * C, 9), w = randomVec(KH * KW * C, 10);
  auto bv = randomVec(C, 11), init = randomVec(N * OH * OW * C, 12);
  std::vector<float> out = init;
  float lo = clamp ? 0.0f : -kInf, hi = clamp ? 0.5f : kInf;
  setThreads(threads);
  tessel_kernel_depthwise_conv2d_nhwc_f32(
      N, OH, OW, C, KH, KW, H, W, pt, pl, in.data(), H * W * C, W * C, C, 1,
      s, s, d, d, w.data(), KW * C, C, 1, out.data(), OH * OW * C, OW * C, C,
      1, bias ? bv.data() : nullptr, lo, hi,
      TESSEL_KERNEL_ACCUMULATE | (silu ? TESSEL_KERNEL_SILU : 0));
  setThreads(1);
  double worst = 0;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow)
        for (int64_t c = 0; c < C; ++c) {
          int64_t o = ((n * OH + oh) * OW + ow) * C + c;
          double acc = init[o] + (bias ? bv[c] : 0.0);
          for (int64_t kh = 0; kh < KH; ++kh)
            for (int64_t kw = 0; kw < KW; ++kw) {
              int64_t ih = oh * s + kh * d - pt, iw = ow * s + kw * d - pl;
              if (ih < 0 || ih >= H || iw < 0 || iw >= W)
                continue;
              acc += double(in[((n * H + ih) * W + iw) * C + c]) *
                     w[(kh * KW + kw) * C + c];
            }
          acc = std::fmin(std::fmax(acc, lo), hi);
          if (silu)
            acc = acc / (1.0 + std::exp(-acc));
          worst = std::fmax(worst, std::fabs(acc - out[o]));
        }
  EXPECT_LT(worst, 1e-5) << "C=" << C << " K=" << KH << "x" << KW
                         << " pad=" << pt << "," << pb << "," << pl << ","
                         << pr;
}

TEST(DepthwiseKernel, ChannelTailsStridesDilations) {
  checkDepthwise(9, 9, 32, 3, 3, 1, 1, 0, 0, 0, 0, false, false, 1);
  checkDepthwise(10, 11, 45, 3, 3, 2, 1, 0, 0, 0, 0, true, true, 1);
  checkDepthwise(12, 12, 7, 5, 5, 1, 2, 0, 0, 0, 0, true, false, 2);
  checkDepthwise(16, 9, 96, 5, 3, 2, 1, 0, 0, 0, 0, false, true, 2);
}

TEST(DepthwiseKernel, WindowTiles) {
  // The interior path that loads each input pixel once per filter row
  // (filters 3, 5, 7 wide at column stride 1, 3 and 5 at stride 2): rows
  // of several full tiles and a half tile, channel pairs, single vectors
  // and a tail vector, and interiors shorter than a tile (7-pixel maps).
  checkDepthwise(9, 37, 48, 7, 7, 1, 1, 3, 3, 3, 3, true, false, 1);
  checkDepthwise(8, 30, 16, 5, 5, 1, 1, 2, 2, 2, 2, false, true, 2);
  checkDepthwise(6, 40, 40, 3, 3, 1, 1, 1, 1, 1, 1, true, true, 1, true);
  checkDepthwise(7, 41, 96, 3, 3, 2, 1, 1, 1, 1, 1, true, false, 2);
  checkDepthwise(9, 29, 24, 5, 5, 2, 1, 2, 2, 2, 2, false, false, 1);
  checkDepthwise(7, 7, 80, 5, 5, 1, 1, 2, 2, 2, 2, true, false, 1);
  checkDepthwise(7, 7, 72, 3, 3, 1, 1, 1, 1, 1, 1, true, true, 1);
  checkDepthwise(5, 26, 32, 3, 5, 1, 1, 1, 1, 2, 2, true, false, 1);
}

TEST(DepthwiseKernel, RowRemainders) {
  // After the full tiles, the pixels left in a row go as one tile of
  // their count: every count from 1 to 7 (3x3 at widths 9-15, 5x5 and
  // 7x7 around their tiles of 8 and 6), at both strides, with and
  // without padding, and a tile that is all padding on one side.
  for (int64_t w = 9; w <= 15; ++w)
    checkDepthwise(4, w, 48, 3, 3, 1, 1, 1, 1, 1, 1, true, false, 1);
  for (int64_t w = 9; w <= 15; ++w)
    checkDepthwise(5, w, 32, 5, 5, 1, 1, 2, 2, 2, 2, false, true, 1);
  for (int64_t w = 7; w <= 13; ++w)
    checkDepthwise(8, w, 24, 7, 7, 1, 1, 3, 3, 3, 3, true, true, 1);
  checkDepthwise(6, 29, 40, 3, 3, 2, 1, 1, 1, 1, 1, true, false, 2);
  checkDepthwise(6, 31, 17, 5, 5, 2, 1, 2, 2, 2, 2, false, false, 1);
  // Stride 2: 9, 10 and 14 pixels a row (remainders 1, 2 and 6).
  for (int64_t w : {17, 19, 27}) {
    checkDepthwise(5, w, 32, 3, 3, 2, 1, 1, 1, 1, 1, true, false, 1);
    checkDepthwise(5, w, 48, 5, 5, 2, 1, 2, 2, 2, 2, false, true, 1);
  }
  checkDepthwise(4, 13, 64, 3, 3, 1, 1, 0, 0, 0, 0, true, true, 1);
}

TEST(DepthwiseKernel, DilatedWindowTiles) {
  // 3x3 and 5x5 at dilation 2 (the window path's dilated instances):
  // padded "same", widths around the tile, a channel tail, no padding, and
  // a map narrower than the dilated filter's reach.
  for (int64_t w : {7, 9, 14, 17})
    checkDepthwise(6, w, 48, 5, 5, 1, 2, 4, 4, 4, 4, true, false, 1);
  for (int64_t w : {8, 13})
    checkDepthwise(5, w, 40, 3, 3, 1, 2, 2, 2, 2, 2, false, true, 2);
  checkDepthwise(9, 21, 32, 5, 5, 1, 2, 0, 0, 0, 0, true, true, 1);
  checkDepthwise(4, 3, 16, 5, 5, 1, 2, 4, 4, 4, 4, true, false, 1);
}

TEST(DepthwiseKernel, SiLUEpilogue) {
  // Vector channels (C = 96), a tail vector overlapping the last whole one
  // (C = 45: 13 channels past 32) and border pixels.
  checkDepthwise(14, 14, 96, 3, 3, 1, 1, 1, 1, 1, 1, true, false, 1, true);
  checkDepthwise(10, 11, 45, 5, 5, 2, 1, 2, 2, 2, 2, true, false, 2, true);
}

TEST(DepthwiseKernel, ImplicitPadding) {
  // Symmetric, asymmetric (TF "SAME" with stride 2), wider than the kernel
  // (every tap of a border pixel out of range) and tiny images.
  checkDepthwise(14, 14, 32, 3, 3, 1, 1, 1, 1, 1, 1, true, true, 1);
  checkDepthwise(15, 13, 40, 3, 3, 2, 1, 0, 1, 0, 1, false, false, 1);
  checkDepthwise(9, 10, 64, 5, 5, 2, 1, 2, 2, 2, 2, true, false, 2);
  checkDepthwise(6, 7, 33, 3, 3, 1, 2, 3, 4, 4, 3, false, true, 1);
  checkDepthwise(1, 1, 16, 3, 3, 1, 1, 1, 1, 1, 1, true, false, 1);
}

struct GroupedCase {
  int64_t N, H, W, G, fg, KH, KW, sh, sw, dh, dw, pt, pb, pl, pr;
  bool bias, clamp, accumulate;
  int64_t chStride; // channel stride of in and out (1: contiguous)
  uint32_t threads;
  int64_t cg = 0;   // inputs per group (0: fg, square)
  bool panels = false; // the dense kernel's panels, whatever the groups
};

/// W[f][kh][kw][j] (cg inputs per group) in the grouped kernel's layout
/// `packing` (Kernels.td, grouped_conv2d_nhwc_f32).
std::vector<float> packGrouped(const std::vector<float> &w, int64_t G,
                               int64_t cg, int64_t fg, int64_t taps,
                               int64_t packing) {
  const int64_t L = TESSEL_KERNEL_GROUP_LANES, F = G * fg,
                nb = (F + L - 1) / L;
  if (packing == TESSEL_KERNEL_GROUPED_PANELS) {
    // Each group's rows of W packed as the dense kernel packs a filter.
    const int64_t K = taps * cg;
    std::vector<float> p;
    for (int64_t g = 0; g < G; ++g) {
      std::vector<float> wg(w.begin() + g * fg * K,
                            w.begin() + (g + 1) * fg * K);
      std::vector<float> pg = packFilter(wg, fg, K);
      p.insert(p.end(), pg.begin(), pg.end());
    }
    return p;
  }
  if (packing == TESSEL_KERNEL_GROUPED_CMAJOR) {
    // c-major rows of fg rounded up to L, zero past fg.
    const int64_t fgp = (fg + L - 1) / L * L;
    std::vector<float> p(taps * G * fg * fgp, 0.0f);
    for (int64_t t = 0; t < taps; ++t)
      for (int64_t f = 0; f < F; ++f)
        for (int64_t c = 0; c < fg; ++c)
          p[((t * G + f / fg) * fg + c) * fgp + f % fg] =
              w[(f * taps + t) * fg + c];
    return p;
  }
  std::vector<float> p(taps * nb * fg * L, 0.0f);
  for (int64_t t = 0; t < taps; ++t)
    for (int64_t ch = 0; ch < F; ++ch)
      for (int64_t r = 0; r < fg; ++r) {
        int64_t g = ch / fg, j = ch % fg, f = g * fg + (j + r) % fg;
        p[((t * nb + ch / L) * fg + r) * L + ch % L] =
            w[(f * taps + t) * fg + j];
      }
  return p;
}

void checkGrouped(const GroupedCase &t) {
  const int64_t cg = t.cg ? t.cg : t.fg;
  const int64_t packing = t.panels || cg != t.fg
                              ? TESSEL_KERNEL_GROUPED_PANELS
                          : t.fg >= TESSEL_KERNEL_GROUP_LANES
                              ? TESSEL_KERNEL_GROUPED_CMAJOR
                              : TESSEL_KERNEL_GROUPED_ROTATED;
  SCOPED_TRACE(testing::Message()
               << "N " << t.N << " H " << t.H << " W " << t.W << " G " << t.G
               << " cg " << cg << " fg " << t.fg << " k " << t.KH << "x"
               << t.KW << " s " << t.sh << "," << t.sw << " d " << t.dh << ","
               << t.dw << " pad " << t.pt << "," << t.pb << "," << t.pl << ","
               << t.pr << " stride " << t.chStride << " threads " << t.threads
               << " packing " << packing);
  const int64_t F = t.G * t.fg, C = t.G * cg, cs = t.chStride;
  const int64_t OH = (t.H + t.pt + t.pb - t.dh * (t.KH - 1) - 1) / t.sh + 1;
  const int64_t OW = (t.W + t.pl + t.pr - t.dw * (t.KW - 1) - 1) / t.sw + 1;
  // Element (n, y, x, c) of an N x Y x X x K tensor whose channels are cs
  // apart.
  auto at = [&](int64_t Y, int64_t X, int64_t K, int64_t n, int64_t y,
                int64_t x, int64_t c) {
    return (((n * Y + y) * X + x) * K + c) * cs;
  };
  auto in = randomVec(t.N * t.H * t.W * C * cs, 31);
  auto w = randomVec(F * t.KH * t.KW * cg, 32);
  auto bv = randomVec(F, 33), init = randomVec(t.N * OH * OW * F * cs, 34);
  auto wp = packGrouped(w, t.G, cg, t.fg, t.KH * t.KW, packing);
  std::vector<float> out = init;
  float lo = t.clamp ? 0.0f : -kInf, hi = t.clamp ? 0.5f : kInf;
  setThreads(t.threads);
  tessel_kernel_grouped_conv2d_nhwc_f32(
      t.N, OH, OW, F, t.KH, t.KW, C, t.H, t.W, t.pt, t.pl, in.data(),
      t.H * t.W * C * cs, t.W * C * cs, C * cs, cs, t.sh, t.sw, t.dh, t.dw,
      t.G, packing, wp.data(), out.data(), OH * OW * F * cs, OW * F * cs,
      F * cs, cs, t.bias ? bv.data() : nullptr, lo, hi,
      t.accumulate ? TESSEL_KERNEL_ACCUMULATE : 0);
  setThreads(1);
  double worst = 0;
  for (int64_t n = 0; n < t.N; ++n)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow)
        for (int64_t f = 0; f < F; ++f) {
          const int64_t o = at(OH, OW, F, n, oh, ow, f), g = f / t.fg;
          double acc = (t.accumulate ? init[o] : 0.0) + (t.bias ? bv[f] : 0.0);
          for (int64_t kh = 0; kh < t.KH; ++kh)
            for (int64_t kw = 0; kw < t.KW; ++kw) {
              int64_t ih = oh * t.sh + kh * t.dh - t.pt,
                      iw = ow * t.sw + kw * t.dw - t.pl;
              if (ih < 0 || ih >= t.H || iw < 0 || iw >= t.W)
                continue;
              for (int64_t j = 0; j < cg; ++j)
                acc += double(in[at(t.H, t.W, C, n, ih, iw, g * cg + j)]) *
                       w[((f * t.KH + kh) * t.KW + kw) * cg + j];
            }
          acc = std::fmin(std::fmax(acc, lo), hi);
          worst = std::fmax(worst, std::fabs(acc - out[o]));
        }
  // f32 sums of KH*KW*cg products of values in [-1, 1].
  EXPECT_LT(worst, 1e-5 * std::fmax(1.0, t.KH * t.KW * cg / 36.0));
  // Lanes between strided channels are not written.
  if (cs > 1)
    for (size_t i = 0; i < out.size(); ++i)
      if (i % cs)
        ASSERT_EQ(out[i], init[i]) << "element " << i;
}

TEST(GroupedKernel, GroupWidthsTailsStridesDilations) {
  // N, H, W, G, fg, KH, KW, sh, sw, dh, dw, pads (t, b, l, r), bias,
  // clamp, accumulate, channel stride, threads[, inputs per group, panels]
  const GroupedCase cases[] = {
      {1, 9, 11, 8, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, true, true, false, 1, 1},
      {1, 12, 12, 32, 4, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, true, false, true, 1, 2},
      {2, 7, 13, 3, 4, 3, 3, 1, 2, 1, 1, 0, 1, 2, 0, false, true, true, 1, 1},
      {1, 10, 9, 13, 2, 5, 5, 1, 1, 2, 2, 4, 4, 4, 4, true, false, false, 1, 2},
      {1, 11, 14, 6, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, true, true, true, 1, 1},
      {2, 6, 20, 5, 8, 3, 1, 2, 1, 1, 1, 1, 1, 0, 0, false, false, true, 1, 2},
      {1, 9, 9, 4, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, true, true, false, 1, 1},
      {2, 10, 13, 3, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, true, false, true, 1, 2},
      {1, 7, 7, 2, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, true, true, true, 1, 1},
      {1, 6, 9, 2, 64, 3, 3, 1, 1, 2, 1, 2, 1, 0, 2, false, false, false, 1, 1},
      {1, 5, 6, 3, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, true, true, true, 2, 1},
      {1, 9, 10, 3, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, true, false, true, 1, 2},
      {2, 7, 8, 2, 24, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, true, true, false, 1, 1},
      {1, 6, 6, 2, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, true, true, true, 1, 1},
      {1, 9, 9, 4, 4, 9, 9, 1, 1, 1, 1, 4, 4, 4, 4, true, false, false, 1, 2},
      // Any groups in the dense kernel's panels: more outputs than inputs,
      // fewer, square ones, wider than a panel, strided channels.
      {1, 8, 9, 4, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, true, true, false, 1, 1, 4},
      {2, 9, 7, 3, 5, 3, 3, 2, 1, 1, 2, 1, 0, 2, 1, true, false, true, 1, 2, 7},
      {1, 7, 7, 2, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, true, true, true, 1, 1, 32, true},
      {1, 6, 6, 2, 70, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, true, false, false, 1, 2, 3},
      {1, 5, 6, 3, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, true, true, true, 2, 1, 2},
      {1, 5, 5, 7, 4, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, false, false, false, 1, 1},
      {1, 3, 4, 8, 2, 3, 3, 1, 1, 1, 1, 3, 2, 4, 3, true, false, true, 1, 1},
      {1, 8, 8, 4, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, true, true, true, 2, 2},
  };
  for (const GroupedCase &t : cases)
    checkGrouped(t);
}

TEST(TransposeKernel, BatchedBlocks) {
  // Sizes around the 32 x 32 blocking and the vector-wide sub-blocks
  // transposed in registers (whole ones, and edges of rows, of columns and
  // of both), one and two threads; a side of 2-4 (an image's NCHW <-> NHWC:
  // the interleaving path, in blocks of 4096 along the long side, with a
  // partial last block).
  for (auto [b, r, c] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 7},
                         {1, 33, 31},
                         {3, 64, 100},
                         {2, 97, 65},
                         {1, 48, 80},
                         {2, 16, 16},
                         {1, 17, 40},
                         {1, 40, 17},
                         {1, 21, 1000},
                         {1, 1000, 21},
                         {1, 3, 50176},
                         {2, 3, 4097},
                         {1, 4100, 3},
                         {2, 2, 9000},
                         {1, 5000, 4},
                         {1, 4, 3},
                         {3, 2, 1},
                         // a channel shuffle: a short 2 x C/2 matrix per
                         // pixel, many a task (the last task partial)
                         {784, 2, 24},
                         {101, 2, 48},
                         {999, 24, 2},
                         {5, 3, 1500},
                         {300, 4, 2100}}) {
    for (uint32_t threads : {1u, 2u}) {
      auto in = randomVec(b * r * c, 13);
      std::vector<float> out(b * r * c, -1.0f);
      setThreads(threads);
      tessel_kernel_transpose_f32(b, r, c, in.data(), out.data());
      setThreads(1);
      for (int64_t i = 0; i < b; ++i)
        for (int64_t y = 0; y < r; ++y)
          for (int64_t x = 0; x < c; ++x)
            ASSERT_EQ(out[(i * c + x) * r + y], in[(i * r + y) * c + x])
                << "b=" << b << " r=" << r << " c=" << c;
    }
  }
}

TEST(TransposeKernel, BlocksOfRows) {
  // out[b][c][r][:] = in[b][r][c][:]: the batch-first and head-split
  // forms, a side of 1, odd sizes; one and two threads.
  for (auto [b, r, c, e] :
       {std::tuple<int64_t, int64_t, int64_t, int64_t>{1, 128, 1, 256},
        {1, 1, 128, 256}, {2, 128, 4, 64}, {3, 7, 5, 9}, {1, 33, 17, 8}}) {
    for (uint32_t threads : {1u, 2u}) {
      auto in = randomVec(b * r * c * e, 17);
      std::vector<float> out(b * r * c * e, -1.0f);
      setThreads(threads);
      tessel_kernel_transpose_blocks_f32(b, r, c, e, in.data(), out.data());
      setThreads(1);
      for (int64_t i = 0; i < b; ++i)
        for (int64_t y = 0; y < r; ++y)
          for (int64_t x = 0; x < c; ++x)
            for (int64_t k = 0; k < e; ++k)
              ASSERT_EQ(out[((i * c + x) * r + y) * e + k],
                        in[((i * r + y) * c + x) * e + k])
                  << "b=" << b << " r=" << r << " c=" << c << " e=" << e;
    }
  }
  // Empty sizes write nothing.
  std::vector<float> out(4, -1.0f);
  tessel_kernel_transpose_blocks_f32(1, 0, 2, 2, nullptr, out.data());
  EXPECT_EQ(out[0], -1.0f);
}

struct AttentionCase {
  int64_t B, M, N, D, Dv;
  float scale;
  int mask; // 0: none, 1: causal 1 x M x N, 2: full B x M x N random
  bool headsOuter; // q/k/v/out stored [M][B][D] (head-interleaved strides)
  uint32_t threads;
  bool keysByColumn = false; // k stored [B][D][N] (k_sd = N: no block path)
};

void checkAttention(const AttentionCase &t) {
  auto q = randomVec(t.B * t.M * t.D, 21), k = randomVec(t.B * t.N * t.D, 22);
  auto v = randomVec(t.B * t.N * t.Dv, 23);
  // Element (b, r, c) of a B x R x C operand: dense, or [R][B][C].
  auto at = [&](int64_t R, int64_t C, int64_t b, int64_t r, int64_t c) {
    return t.headsOuter ? (r * t.B + b) * C + c : (b * R + r) * C + c;
  };
  auto strides = [&](int64_t R, int64_t C) {
    return t.headsOuter ? std::tuple<int64_t, int64_t, int64_t>{C, t.B * C, 1}
                        : std::tuple<int64_t, int64_t, int64_t>{R * C, C, 1};
  };
  std::vector<float> mask;
  int64_t mb = 1, mm = t.M, mn = t.N;
  if (t.mask == 1) {
    mask.assign(t.M * t.N, 0.0f);
    for (int64_t i = 0; i < t.M; ++i)
      for (int64_t j = i + 1; j < t.N; ++j)
        mask[i * t.N + j] = -kInf;
  } else if (t.mask == 2) {
    mb = t.B;
    mask = randomVec(t.B * t.M * t.N, 24);
    for (float &x : mask)
      x *= 4.0f;
    mask[0] = -kInf; // one masked score in row 0
  }
  std::vector<float> out(t.B * t.M * t.Dv, -7.0f);
  auto [qb, qm, qd] = strides(t.M, t.D);
  auto [kb, kn, kd] =
      t.keysByColumn ? std::tuple<int64_t, int64_t, int64_t>{t.N * t.D, 1, t.N}
                     : strides(t.N, t.D);
  auto [vb, vn, vd] = strides(t.N, t.Dv);
  auto [ob, om, od] = strides(t.M, t.Dv);
  setThreads(t.threads);
  tessel_kernel_attention_f32(
      t.B, t.M, t.N, t.D, t.Dv, q.data(), qb, qm, qd, k.data(), kb, kn, kd,
      v.data(), vb, vn, vd, mask.empty() ? nullptr : mask.data(), mb, mm, mn,
      mm * mn, mn, 1, t.scale, out.data(), ob, om, od);
  setThreads(1);
  for (int64_t b = 0; b < t.B; ++b)
    for (int64_t i = 0; i < t.M; ++i) {
      std::vector<double> s(t.N);
      double mx = -INFINITY;
      for (int64_t j = 0; j < t.N; ++j) {
        double acc = 0;
        for (int64_t d = 0; d < t.D; ++d)
          acc += double(q[at(t.M, t.D, b, i, d)]) *
                 k[t.keysByColumn ? (b * t.D + d) * t.N + j
                                  : at(t.N, t.D, b, j, d)];
        acc *= t.scale;
        if (!mask.empty())
          acc += mask[((mb == 1 ? 0 : b) * mm + i) * mn + j];
        s[j] = acc;
        mx = std::max(mx, acc);
      }
      double sum = 0;
      for (double &x : s)
        sum += (x = std::exp(x - mx));
      for (int64_t e = 0; e < t.Dv; ++e) {
        double ref = 0;
        for (int64_t j = 0; j < t.N; ++j)
          ref += s[j] / sum * v[at(t.N, t.Dv, b, j, e)];
        float got = out[at(t.M, t.Dv, b, i, e)];
        ASSERT_NEAR(got, ref, 1e-5 + 1e-4 * std::fabs(ref))
            << "B=" << t.B << " M=" << t.M << " N=" << t.N << " D=" << t.D
            << " Dv=" << t.Dv << " mask=" << t.mask << " at b=" << b
            << " i=" << i << " e=" << e;
      }
    }
}

TEST(AttentionKernel, ShapesAndTails) {
  // Row tiles (M % 6, M % 3), key blocks (N around 16/32/64), Dv tails.
  for (AttentionCase c : {AttentionCase{1, 1, 1, 8, 8, 1.0f, 0, false, 1},
                          {2, 7, 65, 16, 20, 0.25f, 0, false, 1},
                          {4, 128, 128, 64, 64, 0.125f, 0, false, 1},
                          {3, 13, 130, 33, 70, 0.5f, 0, true, 1},
                          {2, 5, 200, 24, 300, 0.3f, 0, false, 2},
                          // ViT-B/16: 197 tokens, a last key block of 5
                          {12, 197, 197, 64, 64, 0.125f, 0, false, 2},
                          // keys by column: the element-wise packing
                          {2, 11, 70, 20, 32, 0.5f, 0, false, 1, true},
                          // a decoder step: one query, keys past 16 x 16
                          {3, 1, 513, 64, 64, 0.125f, 2, false, 1}})
    checkAttention(c);
}

TEST(AttentionKernel, MasksAndLargeScores) {
  checkAttention({4, 64, 64, 32, 32, 1.0f, 1, false, 1}); // causal
  checkAttention({2, 19, 77, 16, 16, 1.0f, 2, true, 2});  // full, strided
  // Scores around +-100: the running maximum must keep exp in range.
  checkAttention({1, 9, 150, 64, 16, 12.0f, 0, false, 1});
}

TEST(AttentionKernel, FullyMaskedRowIsNaN) {
  const int64_t M = 2, N = 3, D = 4;
  auto q = randomVec(M * D, 1), k = randomVec(N * D, 2), v = randomVec(N * D, 3);
  std::vector<float> mask = {-kInf, -kInf, -kInf, 0.0f, -kInf, 0.0f};
  std::vector<float> out(M * D, 0.0f);
  tessel_kernel_attention_f32(1, M, N, D, D, q.data(), 0, D, 1, k.data(), 0,
                              D, 1, v.data(), 0, D, 1, mask.data(), 1, M, N, 0,
                              N, 1, 1.0f, out.data(), 0, D, 1);
  for (int64_t e = 0; e < D; ++e) {
    EXPECT_TRUE(std::isnan(out[e])) << e;
    // Row 1 sees keys 0 and 2 only.
    EXPECT_FALSE(std::isnan(out[D + e])) << e;
  }
}


//===----------------------------------------------------------------------===//
// int8 matmul: bit-exact against an int64 reference.
//===----------------------------------------------------------------------===//

constexpr int64_t KG = TESSEL_KERNEL_KGROUP_I8;

/// B (K x N, row-major) in the kernel's layout: bp[p][g][j][t] =
/// B[g*KG + t][p*NR + j], zero-padded.
std::vector<int8_t> packI8(const std::vector<int8_t> &b, int64_t K,
                           int64_t N) {
  const int64_t panels = (N + NR - 1) / NR, groups = (K + KG - 1) / KG;
  std::vector<int8_t> p(panels * groups * NR * KG, 0);
  for (int64_t k = 0; k < K; ++k)
    for (int64_t n = 0; n < N; ++n)
      p[((n / NR * groups + k / KG) * NR + n % NR) * KG + k % KG] =
          b[k * N + n];
  return p;
}

struct I8Case {
  int64_t batch, M, N, K;
  int32_t aZp, bZp;
  bool aSigned, sharedB, passColsum, accumulate;
  int64_t cPad; // extra row stride of C
  unsigned threads;
};

void checkMatmulI8(const I8Case &t) {
  SCOPED_TRACE(testing::Message()
               << "batch " << t.batch << " M " << t.M << " N " << t.N << " K "
               << t.K << " zp " << t.aZp << "/" << t.bZp << " signed "
               << t.aSigned << " shared " << t.sharedB << " colsum "
               << t.passColsum << " acc " << t.accumulate << " threads "
               << t.threads);
  std::mt19937 gen(unsigned(t.M * 131 + t.N * 7 + t.K));
  std::uniform_int_distribution<int> byte(0, 255);
  const int64_t bBatches = t.sharedB ? 1 : t.batch;
  std::vector<uint8_t> a(t.batch * t.M * t.K);
  for (uint8_t &x : a)
    x = uint8_t(byte(gen));
  std::vector<int8_t> packed;
  std::vector<std::vector<int8_t>> bs;
  std::vector<int32_t> colsum;
  for (int64_t b = 0; b < bBatches; ++b) {
    std::vector<int8_t> m(t.K * t.N);
    for (int8_t &x : m)
      x = int8_t(byte(gen) - 128);
    std::vector<int8_t> p = packI8(m, t.K, t.N);
    packed.insert(packed.end(), p.begin(), p.end());
    for (int64_t n = 0; n < t.N; ++n) {
      int32_t s = 0;
      for (int64_t k = 0; k < t.K; ++k)
        s += m[k * t.N + n];
      colsum.push_back(s);
    }
    bs.push_back(std::move(m));
  }
  const int64_t bpStride = t.sharedB ? 0 : int64_t(packed.size() / t.batch);
  const int64_t cSm = t.N + t.cPad;
  std::vector<int32_t> c(t.batch * t.M * cSm, 7), init = c;
  setThreads(t.threads);
  tessel_kernel_matmul_u8s8_i32(
      t.batch, t.M, t.N, t.K, a.data(), t.M * t.K, t.K, t.aZp, packed.data(),
      bpStride, t.passColsum ? colsum.data() : nullptr, t.bZp, c.data(),
      t.M * cSm, cSm, 1,
      (t.accumulate ? TESSEL_KERNEL_ACCUMULATE : 0) |
          (t.aSigned ? TESSEL_KERNEL_A_SIGNED : 0));
  setThreads(1);
  for (int64_t b = 0; b < t.batch; ++b) {
    const std::vector<int8_t> &m = bs[t.sharedB ? 0 : b];
    for (int64_t i = 0; i < t.M; ++i)
      for (int64_t n = 0; n < cSm; ++n) {
        int64_t at = (b * t.M + i) * cSm + n;
        if (n >= t.N) { // padding between rows is never written
          ASSERT_EQ(c[at], 7) << "pad " << b << "," << i << "," << n;
          continue;
        }
        int64_t ref = t.accumulate ? init[at] : 0;
        for (int64_t k = 0; k < t.K; ++k) {
          uint8_t raw = a[(b * t.M + i) * t.K + k];
          int64_t av = t.aSigned ? int64_t(int8_t(raw)) : int64_t(raw);
          ref += (av - t.aZp) * (int64_t(m[k * t.N + n]) - t.bZp);
        }
        ASSERT_EQ(c[at], ref) << b << "," << i << "," << n;
      }
  }
}

TEST(MatmulI8Kernel, ShapesAndRemainders) {
  for (int64_t M : {1, 5, 6, 7, 13, 50})
    for (int64_t N : {1, 16, 63, 64, 65, 130})
      for (int64_t K : {1, 3, 4, 5, 67, 300})
        checkMatmulI8({1, M, N, K, 3, 0, false, true, false, false, 0, 1});
}

// K past one k block of the AVX2 tile (1024 k) with a partial last block
// and a partial last group, signed activations and unsigned.
TEST(MatmulI8Kernel, KBlocksAndPartialGroups) {
  for (int64_t K : {1023, 1025, 1029, 2050})
    for (bool aSigned : {false, true})
      checkMatmulI8({1, 7, 40, K, aSigned ? -3 : 3, 0, aSigned, true, false,
                     false, 0, 1});
}

TEST(MatmulI8Kernel, ZeroPointsSignsAndColumnSums) {
  for (int32_t aZp : {0, 128, 255, -7})
    for (int32_t bZp : {0, 5, -128})
      for (bool aSigned : {false, true})
        for (bool colsum : {false, true})
          checkMatmulI8(
              {1, 9, 70, 33, aZp, bZp, aSigned, true, colsum, false, 0, 1});
}

TEST(MatmulI8Kernel, BatchStridesAccumulateThreads) {
  checkMatmulI8({3, 20, 100, 50, 10, 0, false, false, false, false, 0, 1});
  checkMatmulI8({3, 20, 100, 50, 10, 0, false, false, true, false, 0, 2});
  checkMatmulI8({2, 100, 130, 64, 128, 3, true, true, false, true, 5, 2});
  checkMatmulI8({1, 1, 768, 768, 0, 0, false, true, false, false, 0, 2});
  // Extreme values: 255 * -128 * K stays exact in int32.
  checkMatmulI8({1, 6, 64, 4096, 0, 0, false, true, false, false, 0, 1});
}

// Shapes of the AMX path (CPUs with AMX-INT8; elsewhere the VNNI, AVX2 or
// portable path): strips of 16 rows and their remainders, K in whole
// 64-byte steps and with a partial last step (a zero-padded copy of the
// panel's last groups), signed activations (flipped when the rows are
// gathered), weight zero points (row sums of the gathered rows), batched
// B and two threads (tasks of 16 to 48 rows).
TEST(MatmulI8Kernel, AmxStripsAndSteps) {
  for (int64_t M : {16, 17, 31, 48, 49, 100})
    for (int64_t K : {64, 65, 127, 128, 200})
      checkMatmulI8({1, M, 130, K, 3, 0, false, true, false, false, 0, 1});
  for (bool aSigned : {false, true})
    for (int32_t bZp : {0, -5})
      checkMatmulI8({1, 40, 70, 1030, aSigned ? -9 : 9, bZp, aSigned, true,
                     true, false, 0, 1});
  checkMatmulI8({3, 33, 100, 96, 128, 0, false, false, true, true, 3, 2});
  checkMatmulI8({2, 128, 64, 768, 0, 0, true, true, false, false, 0, 2});
}

//===----------------------------------------------------------------------===//
// int8 matmul with the requantizing epilogue: the int32 kernel's product
// (checked above) finished by the reference below, one f32 operation per
// step, must give the same bits.
//===----------------------------------------------------------------------===//

#pragma clang fp contract(off)

enum class RqOut {
  F32,
  Q8,
  Q8Table,
  F32Table,
  Dequant,
  DequantSigned,
  DequantClamped,
  DequantTable,
  // The dequantization undoes the quantization (same zero point, same
  // signedness): the epilogue skips the bytes (Requantize.h, dq_fast).
  DequantExact,
  DequantExactSigned
};

struct RqCase {
  int64_t M, N, K;
  RqOut out;
  bool bias;
  float lo, hi, qmin, qmax;
  int64_t cSn; // column stride of C (1: the vector path)
  unsigned threads;
  // The residual (f32 outputs): none, a buffer of its own (rows padded),
  // or C itself (read before written, as in place after bufferization).
  enum { NoResidual, OwnResidual, InPlaceResidual } residual = NoResidual;
};

float clampRef(float y, float lo, float hi) {
  y = y > hi ? hi : y;
  return y < lo ? lo : y;
}

void checkRequant(const RqCase &t) {
  SCOPED_TRACE(testing::Message() << "M " << t.M << " N " << t.N << " K "
                                  << t.K << " out " << int(t.out) << " bias "
                                  << t.bias << " q [" << t.qmin << ", "
                                  << t.qmax << "] sn " << t.cSn << " threads "
                                  << t.threads << " residual "
                                  << int(t.residual));
  const float inf = std::numeric_limits<float>::infinity();
  std::mt19937 gen(unsigned(t.M * 31 + t.N * 3 + t.K + int(t.out)));
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_real_distribution<float> real(-1.0f, 1.0f);
  std::vector<uint8_t> a(t.M * t.K);
  for (uint8_t &x : a)
    x = uint8_t(byte(gen));
  std::vector<int8_t> b(t.K * t.N);
  for (int8_t &x : b)
    x = int8_t(byte(gen) - 128);
  std::vector<int8_t> packed = packI8(b, t.K, t.N);
  const int32_t aZp = 3;
  std::vector<int32_t> acc(t.M * t.N);
  tessel_kernel_matmul_u8s8_i32(1, t.M, t.N, t.K, a.data(), 0, t.K, aZp,
                                packed.data(), 0, nullptr, 0, acc.data(), 0,
                                t.N, 1, 0);
  std::vector<float> scale(t.N), bias(t.N);
  for (int64_t n = 0; n < t.N; ++n) {
    scale[n] = (0.5f + 0.5f * real(gen)) * 1e-4f;
    bias[n] = real(gen);
  }
  const bool quantize = t.out != RqOut::F32;
  const bool exact =
      t.out == RqOut::DequantExact || t.out == RqOut::DequantExactSigned;
  const bool dqSigned =
      t.out == RqOut::DequantSigned || t.out == RqOut::DequantExactSigned;
  const bool dequant = t.out == RqOut::Dequant || dqSigned ||
                       t.out == RqOut::DequantClamped ||
                       t.out == RqOut::DequantTable || exact;
  const bool dqClamped =
      t.out == RqOut::DequantClamped || t.out == RqOut::DequantExact;
  const float dqLo = dqClamped ? 0.0f : -inf;
  const float dqHi = dqClamped ? 3.0f : inf;
  const bool f32 = t.out == RqOut::F32 || t.out == RqOut::F32Table || dequant;
  const float outScale = 0.0123f, outZp = t.qmin < 0 ? 3.0f : 120.0f;
  const float dqScale = 0.037f, dqZp = exact ? outZp : 5.0f;
  std::vector<uint8_t> table8(256);
  std::vector<float> tableF(256);
  for (int i = 0; i < 256; ++i) {
    table8[i] = uint8_t((i * 37 + 11) & 0xFF);
    tableF[i] = float(i) * 0.25f - 7.0f;
  }
  const void *table = t.out == RqOut::Q8Table || t.out == RqOut::DequantTable
                          ? (const void *)table8.data()
                      : t.out == RqOut::F32Table ? (const void *)tableF.data()
                                                 : nullptr;
  const int64_t bytes = f32 ? 4 : 1, cSm = t.N * t.cSn;
  std::vector<uint8_t> c(t.M * cSm * bytes, 0xA5);
  // The residual r[m][n] at res[m * resSm + n * resSn]; ReLU after the add.
  std::vector<float> ownRes(t.M * (t.N + 3));
  for (float &x : ownRes)
    x = 3.0f * real(gen);
  const float *res = nullptr;
  int64_t resSm = 0, resSn = 0;
  if (t.residual == RqCase::OwnResidual) {
    res = ownRes.data(), resSm = t.N + 3, resSn = 1;
  } else if (t.residual == RqCase::InPlaceResidual) {
    for (int64_t m = 0; m < t.M; ++m)
      for (int64_t n = 0; n < t.N; ++n)
        std::memcpy(&c[(m * cSm + n * t.cSn) * 4], &ownRes[m * (t.N + 3) + n],
                    4);
    res = reinterpret_cast<const float *>(c.data()), resSm = cSm,
    resSn = t.cSn;
  }
  const float resLo = 0.0f;
  setThreads(t.threads);
  tessel_kernel_matmul_u8s8_requant(
      1, t.M, t.N, t.K, a.data(), 0, t.K, aZp, packed.data(), 0, nullptr, 0,
      c.data(), 0, cSm, t.cSn, res, 0, resSm, resSn, resLo, inf, scale.data(),
      t.bias ? bias.data() : nullptr,
      t.lo, t.hi, outScale, outZp, t.qmin, t.qmax, table, dqScale, dqZp, dqLo, dqHi,
      (quantize ? TESSEL_KERNEL_QUANTIZE : 0) |
          (f32 ? TESSEL_KERNEL_OUT_F32 : 0) |
          (dequant ? TESSEL_KERNEL_DEQUANTIZE : 0) |
          (dqSigned ? TESSEL_KERNEL_DQ_SIGNED : 0));
  setThreads(1);
  for (int64_t m = 0; m < t.M; ++m)
    for (int64_t n = 0; n < t.N; ++n) {
      float y = float(acc[m * t.N + n]);
      y = y * scale[n];
      if (t.bias)
        y = y + bias[n];
      y = clampRef(y, t.lo, t.hi);
      const int64_t at = (m * cSm + n * t.cSn) * bytes;
      // The residual's add and clamp on an f32 result.
      auto withRes = [&](float v) {
        return t.residual == RqCase::NoResidual
                   ? v
                   : clampRef(v + ownRes[m * (t.N + 3) + n], resLo, inf);
      };
      if (!quantize) {
        y = withRes(y);
        float got;
        std::memcpy(&got, &c[at], 4);
        ASSERT_EQ(std::memcmp(&got, &y, 4), 0) << m << "," << n << ": " << got
                                               << " vs " << y;
        continue;
      }
      float q = std::nearbyint(y / outScale);
      q = q + outZp;
      q = clampRef(q, t.qmin, t.qmax);
      uint8_t v = uint8_t(int32_t(q));
      if (dequant) {
        if (t.out == RqOut::DequantTable)
          v = table8[v];
        float f = dqSigned ? float(int8_t(v)) : float(v);
        f = f - dqZp;
        f = f * dqScale;
        f = withRes(clampRef(f, dqLo, dqHi));
        float got;
        std::memcpy(&got, &c[at], 4);
        ASSERT_EQ(std::memcmp(&got, &f, 4), 0) << m << "," << n;
      } else if (t.out == RqOut::F32Table) {
        float got;
        std::memcpy(&got, &c[at], 4);
        ASSERT_EQ(got, withRes(tableF[v])) << m << "," << n;
      } else {
        uint8_t want = t.out == RqOut::Q8Table ? table8[v] : v;
        ASSERT_EQ(int(c[at]), int(want)) << m << "," << n;
      }
    }
  // Elements between strided columns are never written.
  if (t.cSn > 1)
    for (int64_t i = 0; i < t.M * cSm; ++i)
      if (i % t.cSn != 0)
        for (int64_t k = 0; k < bytes; ++k)
          ASSERT_EQ(c[i * bytes + k], 0xA5) << "gap " << i;
}

TEST(MatmulI8RequantKernel, OutputKindsAndTails) {
  const float inf = std::numeric_limits<float>::infinity();
  for (RqOut out : {RqOut::F32, RqOut::Q8, RqOut::Q8Table, RqOut::F32Table,
                    RqOut::Dequant})
    for (int64_t N : {1, 17, 63, 64, 65, 130})
      for (int64_t M : {1, 7, 50})
        checkRequant({M, N, 37, out, true, -inf, inf, 0.0f, 255.0f, 1, 1});
}

TEST(MatmulI8RequantKernel, ClampsRangesBiasStridesThreads) {
  const float inf = std::numeric_limits<float>::infinity();
  checkRequant({20, 100, 64, RqOut::Q8, true, 0.0f, 6.0f, 0.0f, 255.0f, 1, 1});
  checkRequant({20, 100, 64, RqOut::Q8, false, -inf, inf, -128.0f, 127.0f, 1, 1});
  checkRequant({20, 100, 64, RqOut::F32, false, 0.0f, inf, 0, 255.0f, 1, 1});
  checkRequant({13, 70, 9, RqOut::Q8Table, true, -1.0f, 1.0f, 0.0f, 255.0f, 3, 1});
  checkRequant({13, 70, 9, RqOut::F32, true, -inf, inf, 0.0f, 255.0f, 2, 1});
  checkRequant({100, 130, 200, RqOut::Q8Table, true, 0.0f, inf, 0.0f, 255.0f, 1, 2});
  checkRequant({100, 130, 200, RqOut::F32Table, true, 0.0f, inf, -128.0f, 127.0f, 1, 2});
  checkRequant({30, 70, 20, RqOut::DequantSigned, true, -inf, inf, -128.0f, 127.0f, 1, 1});
  checkRequant({30, 70, 20, RqOut::DequantSigned, true, -inf, inf, -128.0f, 127.0f, 2, 1});
  checkRequant({30, 70, 20, RqOut::DequantClamped, true, -inf, inf, 0.0f, 255.0f, 1, 1});
  checkRequant({30, 70, 20, RqOut::DequantClamped, true, -inf, inf, 0.0f, 255.0f, 3, 1});
  checkRequant({30, 70, 20, RqOut::DequantTable, true, 0.0f, 6.0f, 0.0f, 255.0f, 1, 1});
  checkRequant({30, 70, 20, RqOut::DequantTable, true, 0.0f, 6.0f, 0.0f, 255.0f, 2, 1});
  for (RqOut out : {RqOut::DequantExact, RqOut::DequantExactSigned})
    for (int64_t cSn : {1, 2}) {
      const float qmin = out == RqOut::DequantExact ? 0.0f : -128.0f,
                  qmax = out == RqOut::DequantExact ? 255.0f : 127.0f;
      checkRequant({30, 70, 20, out, true, -inf, inf, qmin, qmax, cSn, 1});
      checkRequant({30, 70, 20, out, true, 0.0f, 6.0f, qmin, qmax, cSn, 1});
      checkRequant({100, 130, 200, out, false, -0.5f, inf, qmin, qmax, cSn, 2});
      // A narrowed range: [qmin, qmax] inside the byte's.
      checkRequant({13, 37, 9, out, true, -inf, inf, qmin + 20, qmax - 30, cSn, 1});
    }
}

TEST(MatmulI8RequantKernel, ResidualAddAndClamp) {
  const float inf = std::numeric_limits<float>::infinity();
  for (auto residual : {RqCase::OwnResidual, RqCase::InPlaceResidual})
    for (RqOut out : {RqOut::F32, RqOut::F32Table, RqOut::Dequant,
                      RqOut::DequantTable, RqOut::DequantExact})
      for (int64_t cSn : {1, 2}) {
        checkRequant({13, 70, 37, out, true, -inf, inf, 0.0f, 255.0f, cSn, 1,
                      residual});
        checkRequant({100, 130, 64, out, false, 0.0f, 6.0f, 0.0f, 255.0f, cSn,
                      2, residual});
      }
}

// The division by out_scale replaced by the reciprocal sequences the
// compiler proves (QuantizeDivision.h): columns whose y (= bias, the
// products being 0) sit on and next to every rounding boundary, and the
// special values, give the division's bytes with the plan's flags and
// clamp. Forcing the plain reciprocal where it was not proven gives some
// other byte, so these y do tell the sequences apart.
std::vector<uint8_t> requantBiasOnly(const std::vector<float> &ys, float s,
                                     float zp, float lo, float hi,
                                     int32_t flags, float qmin = 0.0f,
                                     float qmax = 255.0f,
                                     const uint8_t *table = nullptr) {
  const int64_t M = 7, N = int64_t(ys.size()), K = 5;
  const int32_t aZp = 9;
  std::vector<uint8_t> a(M * K, uint8_t(aZp)); // every product is 0
  std::vector<int8_t> b(K * N);
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = int8_t(i * 29 % 251 - 125);
  std::vector<int8_t> packed = packI8(b, K, N);
  std::vector<float> scale(N, 0.75f);
  std::vector<uint8_t> c(M * N);
  tessel_kernel_matmul_u8s8_requant(
      1, M, N, K, a.data(), 0, K, aZp, packed.data(), 0, nullptr, 0, c.data(),
      0, N, 1, nullptr, 0, 0, 0, -kInf, kInf, scale.data(), ys.data(), lo, hi,
      s, zp, qmin, qmax, table,
      1.0f, 0.0f, -kInf, kInf, TESSEL_KERNEL_QUANTIZE | flags);
  for (int64_t m = 1; m < M; ++m) // rows agree: one per column is enough
    EXPECT_EQ(std::memcmp(&c[m * N], &c[0], N), 0);
  c.resize(N);
  return c;
}

// The 8-bit table of a requantization between two scales, as FuseRequantize
// folds Q(s1, zp1) -> DQ -> Clip(0, clipHi) -> Q(s2, zp2) of a QDQ model:
// t[byte of v] = byte of clamp(roundeven(clip((v - zp1) * s1) / s2) + zp2).
std::vector<uint8_t> requantTable(float qmin, float qmax, float zp1, float s1,
                                  float clipHi, float s2, float zp2,
                                  float q2min, float q2max) {
  std::vector<uint8_t> t(256, 0);
  for (int v = int(qmin); v <= int(qmax); ++v) {
    const float y = std::min(std::max((float(v) - zp1) * s1, 0.0f), clipHi);
    const float q =
        clampRef(std::nearbyint(y / s2) + zp2, q2min, q2max);
    t[uint8_t(v)] = uint8_t(int32_t(q));
  }
  return t;
}

// The kernel flags of the division sequence the compiler's plan chose.
int32_t divisionFlags(const mlir::tessel::QuantizeDivisionPlan &plan) {
  using mlir::tessel::QuantizeDivision;
  return plan.division == QuantizeDivision::Reciprocal
             ? TESSEL_KERNEL_RECIPROCAL
         : plan.division == QuantizeDivision::CorrectedReciprocal
             ? TESSEL_KERNEL_RECIPROCAL_FMA
             : 0;
}

TEST(MatmulI8RequantKernel, ProvenReciprocalMatchesDivision) {
  using namespace mlir::tessel;
  std::mt19937 gen(5);
  std::uniform_real_distribution<float> logScale(-12.0f, 3.0f);
  int planned = 0, divergent = 0;
  for (int i = 0; i < 40; ++i) {
    const float s = std::exp2(logScale(gen)), zp = float(gen() % 256);
    const float lo = i % 3 == 0 ? 0.0f : -kInf, hi = i % 3 == 0 ? 6.0f : kInf;
    SCOPED_TRACE(testing::Message() << "s " << s << " zp " << zp);
    std::vector<float> ys = {-kInf, kInf, NAN, 0.0f, -0.0f, 1e30f, -1e30f,
                             std::numeric_limits<float>::max()};
    for (int k = -300; k < 300; ++k) {
      float y = (float(k) + 0.5f) * s;
      for (int j = 0; j < 4; ++j)
        y = std::nextafter(y, -kInf);
      for (int j = 0; j < 9; ++j, y = std::nextafter(y, kInf))
        ys.push_back(y);
    }
    const QuantizeDivisionPlan plan =
        planQuantizeDivision(s, zp, 0.0f, 255.0f, lo, hi);
    const int32_t flags = divisionFlags(plan);
    planned += flags != 0;
    const std::vector<uint8_t> want = requantBiasOnly(ys, s, zp, lo, hi, 0);
    ASSERT_EQ(requantBiasOnly(ys, s, zp, plan.lo, plan.hi, flags), want);
    // The reference itself: the bytes of the division, computed here.
    for (size_t n = 0; n < ys.size(); ++n) {
      float y = clampRef(ys[n], lo, hi);
      float q = clampRef(std::nearbyint(y / s) + zp, 0.0f, 255.0f);
      ASSERT_EQ(int(want[n]), q == q ? int(int32_t(q)) : 0) << ys[n];
    }
    divergent += requantBiasOnly(ys, s, zp, plan.lo, plan.hi,
                                 TESSEL_KERNEL_RECIPROCAL) != want;
  }
  EXPECT_EQ(planned, 40);
  EXPECT_GT(divergent, 10);
}

// The 8-bit output's integer path (vcvtps2dq, saturating packs) gives the
// bytes of the float-domain reference for every y, every clamp range of an
// 8-bit output (the packs' own saturation, narrower ones, signed and
// unsigned), each division sequence, with and without a table: y on and
// next to the rounding boundaries, far past saturation, infinite and NaN
// (a NaN is byte 0, the float body's truncation, also where the packs
// would saturate it to qmin).
// Tables that are requantizations (a clamped affine map of the quantized
// value, which the AVX2 epilogue computes in 16/32-bit lanes instead of a
// lookup), ties of a 0.5 ratio, signed and unsigned on either side, and the
// same tables with one entry changed (which must take the lookup): every
// byte is the reference's table entry.
TEST(MatmulI8RequantKernel, Q8AffineTables) {
  struct Range {
    float qmin, qmax, zp;
  };
  const Range ranges[] = {{0, 255, 120}, {0, 255, 0}, {-128, 127, -3},
                          {0, 200, 17}};
  struct Map {
    float ratio, clipHi, zp2, q2min, q2max;
  };
  const Map maps[] = {{2.13f, kInf, -128, -128, 127}, {0.47f, kInf, 0, 0, 255},
                      {1.0f, kInf, -128, -128, 127},  {0.5f, 6.0f, 3, 0, 255},
                      {3.0f, 6.0f, 0, 0, 255},        {17.5f, kInf, 5, -128, 127},
                      {0.0371f, kInf, 100, 0, 255},   {1.9f, 2.0f, -20, -128, 127}};
  for (const Range &r : ranges)
    for (const Map &mp : maps)
      for (int perturb = 0; perturb < 2; ++perturb) {
        const float s = 0.02f, s2 = s * mp.ratio;
        std::vector<uint8_t> table =
            requantTable(r.qmin, r.qmax, r.zp, s, mp.clipHi, s2, mp.zp2,
                         mp.q2min, mp.q2max);
        if (perturb) // a value in the middle, off by one
          table[uint8_t(int((r.qmin + r.qmax) / 2))] ^= 1;
        SCOPED_TRACE(testing::Message()
                     << "q [" << r.qmin << ", " << r.qmax << "] zp " << r.zp
                     << " ratio " << mp.ratio << " zp2 " << mp.zp2
                     << " perturbed " << perturb);
        std::vector<float> ys;
        for (int k = -300; k < 300; ++k)
          for (float d : {-0.5f, -0.25f, 0.0f, 0.25f})
            ys.push_back((float(k) + d) * s);
        ys.push_back(kInf);
        ys.push_back(-kInf);
        ys.push_back(NAN);
        const std::vector<uint8_t> got = requantBiasOnly(
            ys, s, r.zp, -kInf, kInf, 0, r.qmin, r.qmax, table.data());
        for (size_t n = 0; n < ys.size(); ++n) {
          const float q =
              clampRef(std::nearbyint(ys[n] / s) + r.zp, r.qmin, r.qmax);
          const uint8_t v = q == q ? uint8_t(int32_t(q)) : 0;
          ASSERT_EQ(int(got[n]), int(table[v])) << "y " << ys[n];
        }
      }
}

TEST(MatmulI8RequantKernel, Q8EveryRangeAndSpecialValue) {
  using namespace mlir::tessel;
  struct Range {
    float qmin, qmax, zp;
  };
  const Range ranges[] = {{0, 255, 120},    {0, 255, 0},     {0, 200, 17},
                          {10, 255, 128},   {-128, 127, 3},  {-128, 127, -128},
                          {-100, 50, -7},   {0, 127, 127},   {-128, 0, 0}};
  std::vector<uint8_t> table(256);
  for (int i = 0; i < 256; ++i)
    table[i] = uint8_t((i * 73 + 5) & 0xFF);
  std::mt19937 gen(11);
  std::uniform_real_distribution<float> logScale(-10.0f, 2.0f);
  for (const Range &r : ranges)
    for (int i = 0; i < 6; ++i) {
      const float s = std::exp2(logScale(gen));
      const float lo = i % 2 ? 0.0f : -kInf, hi = i % 2 ? 6.0f : kInf;
      SCOPED_TRACE(testing::Message() << "q [" << r.qmin << ", " << r.qmax
                                      << "] zp " << r.zp << " s " << s
                                      << " clamp [" << lo << ", " << hi << "]");
      std::vector<float> ys = {-kInf, kInf, NAN, -NAN, 0.0f, -0.0f, 1e30f,
                               -1e30f, std::numeric_limits<float>::max(),
                               -std::numeric_limits<float>::max(), 3e9f * s,
                               -3e9f * s, 40000.0f * s, -40000.0f * s};
      for (int k = -400; k < 400; k += (k > -300 && k < 300) ? 1 : 37) {
        float y = (float(k) + 0.5f) * s;
        for (int j = 0; j < 2; ++j)
          y = std::nextafter(y, -kInf);
        for (int j = 0; j < 5; ++j, y = std::nextafter(y, kInf))
          ys.push_back(y);
      }
      const QuantizeDivisionPlan plan =
          planQuantizeDivision(s, r.zp, r.qmin, r.qmax, lo, hi);
      const int32_t flags = divisionFlags(plan);
      for (const uint8_t *t : {(const uint8_t *)nullptr, (const uint8_t *)table.data()}) {
        const std::vector<uint8_t> divided =
            requantBiasOnly(ys, s, r.zp, lo, hi, 0, r.qmin, r.qmax, t);
        for (size_t n = 0; n < ys.size(); ++n) {
          const float y = clampRef(ys[n], lo, hi);
          const float q =
              clampRef(std::nearbyint(y / s) + r.zp, r.qmin, r.qmax);
          const uint8_t v = q == q ? uint8_t(int32_t(q)) : 0;
          ASSERT_EQ(int(divided[n]), int(t ? t[v] : v))
              << "y " << ys[n] << " table " << (t != nullptr);
        }
        ASSERT_EQ(requantBiasOnly(ys, s, r.zp, plan.lo, plan.hi, flags,
                                  r.qmin, r.qmax, t),
                  divided);
        // Only finite y that quantize far inside int32: the epilogue
        // proves it from the call's bounds and drops the float clamp
        // (Requantize.h, fast), with the clamp applied to q instead.
        std::vector<float> bounded;
        std::vector<uint8_t> want;
        for (size_t n = 0; n < ys.size(); ++n)
          if (std::isfinite(ys[n]) && std::fabs(ys[n]) < 1e7f * s)
            bounded.push_back(ys[n]), want.push_back(divided[n]);
        ASSERT_EQ(requantBiasOnly(bounded, s, r.zp, lo, hi, 0, r.qmin,
                                  r.qmax, t),
                  want);
        ASSERT_EQ(requantBiasOnly(bounded, s, r.zp, plan.lo, plan.hi, flags,
                                  r.qmin, r.qmax, t),
                  want);
      }
    }
  // A scale that is not positive and finite (no QDQ model has one) takes
  // the float body: still the reference's bytes. (No NaN among the y: a
  // row with one is redone by the scalar epilogue anyway.)
  for (float s : {-0.02f, 0.0f, kInf, 1e-40f}) {
    SCOPED_TRACE(testing::Message() << "s " << s);
    const std::vector<float> ys = {-3.0f, -0.01f, 0.0f, 0.013f, 2.5f, 1e30f,
                                   -kInf};
    const std::vector<uint8_t> got =
        requantBiasOnly(ys, s, 7.0f, -kInf, kInf, 0, -100.0f, 50.0f);
    for (size_t n = 0; n < ys.size(); ++n) {
      const float q = clampRef(std::nearbyint(ys[n] / s) + 7.0f, -100.0f, 50.0f);
      ASSERT_EQ(int(got[n]), q == q ? int(uint8_t(int32_t(q))) : 0) << ys[n];
    }
  }
}

//===----------------------------------------------------------------------===//
// int8 convolution (the implicit GEMM): exact int32 sums against an int64
// direct convolution, whichever way the kernel reads the rows (in place,
// one run per filter row or one per tap, or gathered); the requantizing
// form equals the matmul kernel's on the explicit im2col matrix.
//===----------------------------------------------------------------------===//

struct ConvI8Case {
  int64_t N, H, W, C, F, KH, KW, SH, SW, DH, DW;
  int32_t aZp, bZp;
  bool aSigned;
  int64_t pixelPad; // extra bytes per input pixel (not adjacent taps)
  unsigned threads;
};

void checkConvI8(const ConvI8Case &t) {
  SCOPED_TRACE(testing::Message()
               << "N " << t.N << " HxWxC " << t.H << "x" << t.W << "x" << t.C
               << " F " << t.F << " K " << t.KH << "x" << t.KW << " s " << t.SH
               << "," << t.SW << " d " << t.DH << "," << t.DW << " zp "
               << t.aZp << "/" << t.bZp << " signed " << t.aSigned << " pad "
               << t.pixelPad << " threads " << t.threads);
  const int64_t OH = (t.H - (t.KH - 1) * t.DH - 1) / t.SH + 1,
                OW = (t.W - (t.KW - 1) * t.DW - 1) / t.SW + 1,
                K = t.KH * t.KW * t.C, M = OH * OW, sw = t.C + t.pixelPad,
                sh = t.W * sw, sn = t.H * sh;
  std::mt19937 gen(unsigned(t.C * 131 + t.F * 7 + K + t.SH));
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<uint8_t> in(t.N * sn);
  for (uint8_t &x : in)
    x = uint8_t(byte(gen));
  std::vector<int8_t> b(K * t.F); // B[k][f], k = (kh*KW + kw)*C + c
  for (int8_t &x : b)
    x = int8_t(byte(gen) - 128);
  std::vector<int8_t> packed = packI8(b, K, t.F);
  const int32_t flags = t.aSigned ? TESSEL_KERNEL_A_SIGNED : 0;
  std::vector<int32_t> out(t.N * M * t.F, 7);
  setThreads(t.threads);
  tessel_kernel_conv2d_u8s8_i32(t.N, OH, OW, t.F, t.KH, t.KW, t.C, in.data(),
                                sn, sh, sw, t.SH, t.SW, t.DH, t.DW, t.aZp,
                                packed.data(), nullptr, t.bZp, out.data(),
                                M * t.F, t.F, 1, flags);
  // The im2col matrix, for the reference and the requantizing check.
  std::vector<uint8_t> cols(t.N * M * K);
  for (int64_t n = 0; n < t.N; ++n)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t kh = 0; kh < t.KH; ++kh)
        for (int64_t kw = 0; kw < t.KW; ++kw)
          for (int64_t c = 0; c < t.C; ++c)
            cols[(n * M + m) * K + (kh * t.KW + kw) * t.C + c] =
                in[n * sn + ((m / OW) * t.SH + kh * t.DH) * sh +
                   ((m % OW) * t.SW + kw * t.DW) * sw + c];
  for (int64_t n = 0; n < t.N; ++n)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t f = 0; f < t.F; ++f) {
        int64_t ref = 0;
        for (int64_t k = 0; k < K; ++k) {
          uint8_t raw = cols[(n * M + m) * K + k];
          int64_t av = t.aSigned ? int64_t(int8_t(raw)) : int64_t(raw);
          ref += (av - t.aZp) * (int64_t(b[k * t.F + f]) - t.bZp);
        }
        ASSERT_EQ(out[(n * M + m) * t.F + f], ref) << n << "," << m << "," << f;
      }
  // Requantized to u8: the same bytes as the matmul kernel on the columns.
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> scale(t.F, 3e-4f), bias(t.F, 0.25f);
  std::vector<uint8_t> viaConv(t.N * M * t.F), viaCols(t.N * M * t.F);
  const int32_t rq = flags | TESSEL_KERNEL_QUANTIZE;
  tessel_kernel_conv2d_u8s8_requant(
      t.N, OH, OW, t.F, t.KH, t.KW, t.C, in.data(), sn, sh, sw, t.SH, t.SW,
      t.DH, t.DW, t.aZp, packed.data(), nullptr, t.bZp, viaConv.data(),
      M * t.F, t.F, 1, nullptr, 0, 0, 0, -inf, inf, scale.data(), bias.data(),
      0.0f, inf, 0.05f, 3.0f, 0.0f, 255.0f, nullptr, 1.0f, 0.0f, -inf, inf, rq);
  tessel_kernel_matmul_u8s8_requant(
      t.N, M, t.F, K, cols.data(), M * K, K, t.aZp, packed.data(), 0, nullptr,
      t.bZp, viaCols.data(), M * t.F, t.F, 1, nullptr, 0, 0, 0, -inf, inf,
      scale.data(), bias.data(), 0.0f, inf, 0.05f, 3.0f, 0.0f, 255.0f, nullptr,
      1.0f, 0.0f, -inf, inf, rq);
  setThreads(1);
  ASSERT_EQ(viaConv, viaCols);
}

TEST(ConvI8Kernel, ChannelsFiltersStridesDilations) {
  // C = 3 and 13 gather rows; 4, 16 and 64 read them in place.
  for (int64_t C : {3, 4, 13, 16, 64})
    for (auto [KH, KW] : {std::pair<int64_t, int64_t>{1, 1}, {3, 3}, {7, 7}, {1, 3}})
      for (int64_t S : {1, 2})
        checkConvI8({1, 11, 10, C, 70, KH, KW, S, S, 1, 1, 3, 0, false, 0, 1});
  for (int64_t C : {4, 13, 16})
    checkConvI8({1, 12, 12, C, 65, 3, 3, 1, 2, 2, 3, 3, 0, false, 0, 1});
}

TEST(ConvI8Kernel, ZeroPointsPixelStridesBatchThreads) {
  for (bool aSigned : {false, true})
    for (int32_t bZp : {0, -5}) // a weight zero point gathers the rows
      checkConvI8({2, 9, 9, 16, 64, 3, 3, 1, 1, 1, 1, aSigned ? -128 : 131, bZp,
                   aSigned, 0, 1});
  // Pixels wider than their channels: one run per tap (C = 16), gathered
  // rows (C = 6).
  checkConvI8({1, 9, 8, 16, 33, 3, 3, 2, 1, 1, 1, 0, 0, false, 4, 1});
  checkConvI8({1, 9, 8, 6, 33, 3, 3, 1, 1, 1, 1, 0, 0, false, 2, 1});
  checkConvI8({2, 20, 20, 32, 130, 3, 3, 1, 1, 1, 1, 7, 0, true, 0, 2});
}

//===----------------------------------------------------------------------===//
// int8 depthwise convolution: exact int32 sums of (x - zp) * w over the
// taps inside the input (ONNX's zero padding of the dequantized input),
// and the requantizing epilogue on them.
//===----------------------------------------------------------------------===//

struct DwqCase {
  int64_t N, H, W, C, KH, KW, sh, sw, dh, dw, pt, pb, pl, pr;
  bool aSigned;
  int32_t aZp;
  unsigned threads;
};

// wp[g][kw][c][j] = w[4g + j][kw][c], channels padded to 16.
std::vector<int8_t> packDepthwise(const std::vector<int8_t> &w, int64_t KH,
                                  int64_t KW, int64_t C) {
  const int64_t G = (KH + 3) / 4, Cp = (C + 15) / 16 * 16;
  std::vector<int8_t> p(G * KW * Cp * 4, 0);
  for (int64_t kh = 0; kh < KH; ++kh)
    for (int64_t kw = 0; kw < KW; ++kw)
      for (int64_t c = 0; c < C; ++c)
        p[(((kh / 4) * KW + kw) * Cp + c) * 4 + kh % 4] = w[(kh * KW + kw) * C + c];
  return p;
}

void checkDepthwiseI8(const DwqCase &t, bool requant) {
  SCOPED_TRACE(testing::Message()
               << "N " << t.N << " H " << t.H << " W " << t.W << " C " << t.C
               << " k " << t.KH << "x" << t.KW << " s " << t.sh << "," << t.sw
               << " d " << t.dh << "," << t.dw << " pad " << t.pt << "," << t.pb
               << "," << t.pl << "," << t.pr << " signed " << t.aSigned
               << " zp " << t.aZp << " threads " << t.threads << " requant "
               << requant);
  const int64_t OH = (t.H + t.pt + t.pb - t.dh * (t.KH - 1) - 1) / t.sh + 1;
  const int64_t OW = (t.W + t.pl + t.pr - t.dw * (t.KW - 1) - 1) / t.sw + 1;
  std::mt19937 gen(unsigned(t.C * 7 + t.KH * 3 + t.H));
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<uint8_t> in(t.N * t.H * t.W * t.C);
  for (uint8_t &x : in)
    x = uint8_t(byte(gen));
  std::vector<int8_t> w(t.KH * t.KW * t.C);
  for (int8_t &x : w)
    x = int8_t(byte(gen) - 128);
  std::vector<int8_t> wp = packDepthwise(w, t.KH, t.KW, t.C);
  std::vector<int32_t> colsum(t.C, 0);
  for (int64_t k = 0; k < t.KH * t.KW; ++k)
    for (int64_t c = 0; c < t.C; ++c)
      colsum[c] += w[k * t.C + c];
  std::vector<float> scale(t.C), bias(t.C);
  for (int64_t c = 0; c < t.C; ++c) {
    scale[c] = 1e-4f * float(1 + c % 7);
    bias[c] = 0.01f * float(c % 5) - 0.02f;
  }
  const float outScale = 0.0125f, outZp = 100.0f;
  const int64_t bytes = requant ? 1 : 4;
  std::vector<uint8_t> out(t.N * OH * OW * t.C * bytes, 0xA5);
  setThreads(t.threads);
  tessel_kernel_depthwise_conv2d_u8s8(
      t.N, OH, OW, t.C, t.KH, t.KW, t.H, t.W, t.pt, t.pl, in.data(),
      t.H * t.W * t.C, t.W * t.C, t.C, t.aZp, t.sh, t.sw, t.dh, t.dw,
      wp.data(), colsum.data(), out.data(), OH * OW * t.C, OW * t.C, t.C,
      requant ? scale.data() : nullptr, bias.data(), -kInf, kInf, outScale,
      outZp, 0.0f, 255.0f, nullptr, 1.0f, 0.0f, -kInf, kInf,
      (t.aSigned ? TESSEL_KERNEL_A_SIGNED : 0) |
          (requant ? TESSEL_KERNEL_QUANTIZE : 0));
  setThreads(1);
  for (int64_t n = 0; n < t.N; ++n)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow)
        for (int64_t c = 0; c < t.C; ++c) {
          int32_t want = 0;
          for (int64_t kh = 0; kh < t.KH; ++kh)
            for (int64_t kw = 0; kw < t.KW; ++kw) {
              const int64_t ih = oh * t.sh - t.pt + kh * t.dh;
              const int64_t iw = ow * t.sw - t.pl + kw * t.dw;
              if (ih < 0 || ih >= t.H || iw < 0 || iw >= t.W)
                continue;
              const uint8_t raw = in[((n * t.H + ih) * t.W + iw) * t.C + c];
              const int32_t x = t.aSigned ? int32_t(int8_t(raw)) : int32_t(raw);
              want += (x - t.aZp) * w[(kh * t.KW + kw) * t.C + c];
            }
          const int64_t at = ((n * OH + oh) * OW + ow) * t.C + c;
          if (!requant) {
            int32_t got;
            std::memcpy(&got, &out[at * 4], 4);
            ASSERT_EQ(got, want) << n << "," << oh << "," << ow << "," << c;
            continue;
          }
          float y = float(want) * scale[c];
          y = y + bias[c];
          float q = std::nearbyint(y / outScale);
          q = clampRef(q + outZp, 0.0f, 255.0f);
          ASSERT_EQ(int(out[at]), int(int32_t(q)))
              << n << "," << oh << "," << ow << "," << c;
        }
}

TEST(DepthwiseI8Kernel, ShapesPaddingStridesDilations) {
  // N, H, W, C, KH, KW, sh, sw, dh, dw, pads (t, b, l, r), signed, zp, threads
  const DwqCase cases[] = {
      {1, 9, 11, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, false, 3, 1},
      {1, 12, 12, 96, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, false, 128, 1},
      {2, 7, 13, 70, 3, 3, 1, 2, 1, 1, 0, 1, 2, 0, true, -5, 2},
      {1, 10, 9, 1, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, false, 0, 1},
      {1, 11, 14, 130, 5, 3, 2, 1, 2, 2, 3, 1, 2, 2, true, 0, 2},
      {1, 6, 20, 17, 7, 1, 1, 1, 1, 1, 3, 3, 0, 0, false, 255, 1},
      {1, 5, 5, 64, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, true, -128, 1},
      {1, 4, 31, 33, 4, 2, 1, 3, 1, 2, 1, 2, 0, 1, false, 77, 1},
  };
  for (const DwqCase &t : cases) {
    checkDepthwiseI8(t, false);
    checkDepthwiseI8(t, true);
  }
}
} // namespace

//===----------------------------------------------------------------------===//
// tessel_kernel_sparse_matmul_f32 (issue 18): B in blocks of R columns.
//===----------------------------------------------------------------------===//

namespace {

struct SparseB {
  std::vector<int32_t> ptr, kidx;
  std::vector<float> val;
};

/// B (K x N, row-major) in the kernel's layout: per block column of R,
/// each k whose R values are not all zero. `reverse` lists each column's k
/// in decreasing order (the layout allows any order).
SparseB packSparse(const std::vector<float> &b, int64_t K, int64_t N,
                   int64_t R, bool reverse) {
  SparseB s;
  const int64_t nb = (N + R - 1) / R;
  s.ptr.push_back(0);
  for (int64_t blk = 0; blk < nb; ++blk) {
    for (int64_t i = 0; i < K; ++i) {
      int64_t k = reverse ? K - 1 - i : i;
      bool any = false;
      for (int64_t r = 0; r < R && blk * R + r < N; ++r)
        any |= b[k * N + blk * R + r] != 0.0f;
      if (!any)
        continue;
      s.kidx.push_back(int32_t(k));
      for (int64_t r = 0; r < R; ++r)
        s.val.push_back(blk * R + r < N ? b[k * N + blk * R + r] : 0.0f);
    }
    s.ptr.push_back(int32_t(s.kidx.size()));
  }
  return s;
}

struct SparseCase {
  int64_t M, N, K, R;
  double density; // of nonzero blocks
  bool bias, clamp, accumulate, strided;
  uint32_t threads;
  bool colMajor = false; // A and C column-major (channel-major activations)
  int64_t nmN = 0, nmM = 0; // N:M (R = 1): n of every m k's a column
  bool lanes = false;       // N:M in the lane order (LANES)
};

/// B (K x N) N:M in the kernel's chunk-major order (Kernels.td,
/// TESSEL_KERNEL_NM_CHUNK_K): chunks of NM_CHUNK_K k's, in each the
/// columns one after another, each with exactly n entries a group, k
/// ascending (a group with fewer nonzeros stores zeros at its first free
/// k's); block_ptr[b] = b * K / m * n.
SparseB packNOfM(const std::vector<float> &b, int64_t K, int64_t N,
                 int64_t n, int64_t m) {
  SparseB s;
  for (int64_t c = 0; c <= N; ++c)
    s.ptr.push_back(int32_t(c * (K / m * n)));
  const int64_t chunk = TESSEL_KERNEL_NM_CHUNK_K;
  for (int64_t k0 = 0; k0 < K; k0 += chunk)
    for (int64_t c = 0; c < N; ++c)
      for (int64_t g = k0; g < std::min(K, k0 + chunk); g += m) {
        int64_t free = n;
        for (int64_t k = g; k < g + m; ++k)
          free -= b[k * N + c] != 0.0f;
        for (int64_t k = g; k < g + m; ++k) {
          if (b[k * N + c] == 0.0f) {
            if (free == 0)
              continue;
            --free;
          }
          s.kidx.push_back(int32_t(k));
          s.val.push_back(b[k * N + c]);
        }
      }
  return s;
}

/// B (K x N) in the lane order (Kernels.td, TESSEL_KERNEL_LANES): per
/// column vector v and quad q (16 k's), as many slots as its 16 columns'
/// most entries there, entry 16 s + l column 16 v + l's s-th (k
/// ascending; a column with fewer stores zeros at the quad's first k).
/// With n (N:M), each column's entries are the chunk-major packing's: n
/// a group, zeros stored at a group's first free k's.
SparseB packLanes(const std::vector<float> &b, int64_t K, int64_t N, int64_t n,
                  int64_t m) {
  const int64_t L = TESSEL_KERNEL_LANE_COLUMNS, Q = (K + L - 1) / L;
  SparseB s;
  s.ptr.push_back(0);
  for (int64_t v = 0; v < N / L; ++v)
    for (int64_t q = 0; q < Q; ++q) {
      const int64_t k0 = q * L, k1 = std::min(K, k0 + L);
      std::vector<std::vector<std::pair<int32_t, float>>> cols{size_t(L)};
      size_t slots = 0;
      for (int64_t l = 0; l < L; ++l) {
        const int64_t c = v * L + l;
        auto &e = cols[size_t(l)];
        for (int64_t g = k0; g < k1; g += n ? m : L) {
          const int64_t g1 = n ? g + m : k1;
          int64_t free = n;
          for (int64_t k = g; k < g1; ++k)
            free -= b[k * N + c] != 0.0f;
          for (int64_t k = g; k < g1; ++k) {
            if (b[k * N + c] == 0.0f) {
              if (free <= 0)
                continue;
              --free;
            }
            e.push_back({int32_t(k), b[k * N + c]});
          }
        }
        slots = std::max(slots, e.size());
      }
      for (size_t sl = 0; sl < slots; ++sl)
        for (int64_t l = 0; l < L; ++l) {
          const auto &e = cols[size_t(l)];
          s.kidx.push_back(sl < e.size() ? e[sl].first : int32_t(k0));
          s.val.push_back(sl < e.size() ? e[sl].second : 0.0f);
        }
      s.ptr.push_back(int32_t(s.kidx.size() / size_t(L)));
    }
  return s;
}

/// Zeros B (K x N) to N:M: n random k's of each group of m of every column
/// kept, each then with probability `density` (below 1: groups that store
/// zeros, whole zero columns).
void zeroToNOfM(std::vector<float> &b, int64_t K, int64_t N, int64_t n,
                int64_t m, double density, std::mt19937 &gen) {
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (int64_t c = 0; c < N; ++c)
    for (int64_t g = 0; g < K; g += m) {
      std::vector<int64_t> ks(static_cast<size_t>(m));
      for (int64_t i = 0; i < m; ++i)
        ks[size_t(i)] = g + i;
      std::shuffle(ks.begin(), ks.end(), gen);
      for (int64_t i = 0; i < m; ++i)
        if (i >= n || u(gen) >= density)
          b[ks[size_t(i)] * N + c] = 0.0f;
    }
}

void checkSparse(const SparseCase &c) {
  SCOPED_TRACE(::testing::Message()
               << "M=" << c.M << " N=" << c.N << " K=" << c.K << " R=" << c.R
               << " density=" << c.density << " threads=" << c.threads
               << " n:m=" << c.nmN << ":" << c.nmM);
  std::mt19937 gen(unsigned(c.M * 131 + c.N * 7 + c.K + c.R));
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<float> b = randomVec(size_t(c.K * c.N), unsigned(c.K + c.N));
  if (c.nmN) {
    zeroToNOfM(b, c.K, c.N, c.nmN, c.nmM, c.density, gen);
  } else {
    // Zero blocks of R columns at one k, so that the block structure is
    // real.
    for (int64_t k = 0; k < c.K; ++k)
      for (int64_t n0 = 0; n0 < c.N; n0 += c.R)
        if (u(gen) >= c.density)
          for (int64_t n = n0; n < n0 + c.R && n < c.N; ++n)
            b[k * c.N + n] = 0.0f;
  }
  // A: M x K, in a wider buffer (row stride K + 3) when strided, and
  // column stride 2 then.
  int64_t a_sk = c.strided ? 2 : 1, a_sm = c.strided ? 2 * c.K + 3 : c.K;
  int64_t c_sn = c.strided ? 2 : 1, c_sm = c.strided ? 2 * c.N + 1 : c.N;
  if (c.colMajor)
    a_sm = 1, a_sk = c.M, c_sm = 1, c_sn = c.M;
  std::vector<float> a =
      randomVec(size_t(std::max(c.M * a_sm, c.K * a_sk) + 1), unsigned(c.M));
  std::vector<float> out =
      randomVec(size_t(std::max(c.M * c_sm, c.N * c_sn) + 1), 7);
  std::vector<float> bias = randomVec(size_t(c.N), 9);
  const float lo = c.clamp ? -0.5f : -kInf, hi = c.clamp ? 0.75f : kInf;
  std::vector<double> ref(size_t(c.M * c.N));
  for (int64_t m = 0; m < c.M; ++m)
    for (int64_t n = 0; n < c.N; ++n) {
      double s = 0;
      for (int64_t k = 0; k < c.K; ++k)
        s += double(a[m * a_sm + k * a_sk]) * b[k * c.N + n];
      if (c.accumulate)
        s += out[m * c_sm + n * c_sn];
      if (c.bias)
        s += bias[n];
      ref[m * c.N + n] = std::min<double>(std::max<double>(s, lo), hi);
    }
  // Odd M: each column's k descending (the kernel checks the order);
  // even M: ascending, and said so with TESSEL_KERNEL_K_ASCENDING, as the
  // compiler does.
  const bool reverse = c.M % 2 == 1 && !c.nmN;
  SparseB sp = c.lanes ? packLanes(b, c.K, c.N, c.nmN, c.nmM)
               : c.nmN ? packNOfM(b, c.K, c.N, c.nmN, c.nmM)
                       : packSparse(b, c.K, c.N, c.R, reverse);
  const int32_t nm =
      (c.nmN ? int32_t((c.nmN | c.nmM << 8) << TESSEL_KERNEL_NM_SHIFT) : 0) |
      (c.lanes ? TESSEL_KERNEL_LANES : 0);
  setThreads(c.threads);
  tessel_kernel_sparse_matmul_f32(
      c.M, c.N, c.K, a.data(), a_sm, a_sk, c.R, sp.ptr.data(),
      sp.kidx.empty() ? nullptr : sp.kidx.data(),
      sp.val.empty() ? nullptr : sp.val.data(), out.data(), c_sm, c_sn,
      c.bias ? bias.data() : nullptr, lo, hi,
      (c.accumulate ? TESSEL_KERNEL_ACCUMULATE : 0) |
          (reverse ? 0 : TESSEL_KERNEL_K_ASCENDING) | nm);
  setThreads(1);
  for (int64_t m = 0; m < c.M; ++m)
    for (int64_t n = 0; n < c.N; ++n)
      ASSERT_NEAR(out[m * c_sm + n * c_sn], ref[m * c.N + n],
                  1e-4 * (1 + std::fabs(ref[m * c.N + n])))
          << "at m=" << m << " n=" << n;
}

} // namespace

TEST(SparseMatmulKernel, EveryBlockSizeDensityAndRemainder) {
  for (int64_t R : {1, 2, 4, 8, 16})
    for (double d : {0.0, 0.1, 0.5, 1.0})
      for (auto [M, N, K] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1},
                             {17, 33, 40}, {32, 16, 7}, {5, 70, 129}})
        checkSparse({M, N, K, R, d, true, false, false, false, 1});
}

TEST(SparseMatmulKernel, EpiloguesStridesThreads) {
  checkSparse({37, 50, 64, 4, 0.2, true, true, true, true, 1});
  checkSparse({64, 96, 128, 1, 0.1, false, true, true, false, 2});
  checkSparse({128, 200, 96, 16, 0.3, true, true, false, true, 3});
  checkSparse({3, 1000, 20, 8, 0.05, true, false, true, false, 2});
}

// More rows than one chunk of the transposed activations (about 64K
// floats: 96 rows here with K = 700), so each task makes several passes
// over its columns; a partial last chunk and last tile.
TEST(SparseMatmulKernel, RowChunks) {
  checkSparse({300, 37, 700, 1, 0.05, true, true, false, false, 1});
  checkSparse({300, 40, 700, 4, 0.1, false, false, true, true, 2});
  checkSparse({205, 48, 1000, 16, 0.2, true, false, false, false, 1});
}
struct SparseConvCase {
  int64_t N, H, W, C, F, KH, KW, sh, sw, dh, dw;
  int64_t pt, pb, pl, pr; // zero padding
  int64_t R;
  double density;
  bool epilogue; // bias, clamp and accumulate
  uint32_t threads;
  bool channelMajor = false; // NCHW input and output
  int64_t nmN = 0, nmM = 0;  // N:M along B's k (R = 1)
};

void checkSparseConv(const SparseConvCase &t) {
  SCOPED_TRACE(::testing::Message()
               << "N=" << t.N << " H=" << t.H << " W=" << t.W << " C=" << t.C
               << " F=" << t.F << " K=" << t.KH << "x" << t.KW << " s="
               << t.sh << "," << t.sw << " d=" << t.dh << "," << t.dw
               << " R=" << t.R << " density=" << t.density
               << " threads=" << t.threads);
  const int64_t OH = (t.H + t.pt + t.pb - (t.KH - 1) * t.dh - 1) / t.sh + 1;
  const int64_t OW = (t.W + t.pl + t.pr - (t.KW - 1) * t.dw - 1) / t.sw + 1;
  const int64_t K = t.KH * t.KW * t.C;
  std::mt19937 gen(unsigned(t.H * 131 + t.C * 7 + t.F + t.R));
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  // B[(kh*KW + kw)*C + c][f], zero in blocks of R output channels.
  std::vector<float> b = randomVec(size_t(K * t.F), unsigned(K + t.F));
  if (t.nmN)
    zeroToNOfM(b, K, t.F, t.nmN, t.nmM, t.density, gen);
  else
    for (int64_t k = 0; k < K; ++k)
      for (int64_t f0 = 0; f0 < t.F; f0 += t.R)
        if (u(gen) >= t.density)
          for (int64_t f = f0; f < f0 + t.R && f < t.F; ++f)
            b[k * t.F + f] = 0.0f;
  // The input with a channel stride of 1 and a pixel stride of C + 1; the
  // output with a channel stride of 2 when there is an epilogue.
  int64_t in_sc = 1, in_sw = t.C + 1, in_sh = t.W * in_sw,
          in_sn = t.H * in_sh;
  int64_t o_sf = t.epilogue ? 2 : 1, o_sw = t.F * o_sf, o_sh = OW * o_sw,
          o_sn = OH * o_sh;
  if (t.channelMajor) // NCHW, planes of whole images
    in_sw = 1, in_sh = t.W, in_sc = t.H * t.W, in_sn = t.C * in_sc,
    o_sw = 1, o_sh = OW, o_sf = OH * OW, o_sn = t.F * o_sf;
  std::vector<float> in = randomVec(size_t(t.N * in_sn), unsigned(t.W));
  std::vector<float> out = randomVec(size_t(t.N * o_sn), 5);
  std::vector<float> bias = randomVec(size_t(t.F), 9);
  const float lo = t.epilogue ? -0.5f : -kInf, hi = t.epilogue ? 0.75f : kInf;
  std::vector<double> ref(size_t(t.N * OH * OW * t.F));
  for (int64_t n = 0; n < t.N; ++n)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow)
        for (int64_t f = 0; f < t.F; ++f) {
          double s = 0;
          for (int64_t kh = 0; kh < t.KH; ++kh)
            for (int64_t kw = 0; kw < t.KW; ++kw) {
              int64_t h = oh * t.sh + kh * t.dh - t.pt;
              int64_t w = ow * t.sw + kw * t.dw - t.pl;
              if (h < 0 || h >= t.H || w < 0 || w >= t.W)
                continue;
              for (int64_t c = 0; c < t.C; ++c)
                s += double(in[n * in_sn + h * in_sh + w * in_sw + c * in_sc]) *
                     b[((kh * t.KW + kw) * t.C + c) * t.F + f];
            }
          float *o = &out[n * o_sn + oh * o_sh + ow * o_sw + f * o_sf];
          if (t.epilogue)
            s = std::min<double>(std::max<double>(s + *o + bias[f], lo), hi);
          ref[((n * OH + oh) * OW + ow) * t.F + f] = s;
        }
  SparseB sp = t.nmN ? packNOfM(b, K, t.F, t.nmN, t.nmM)
                     : packSparse(b, K, t.F, t.R, /*reverse=*/t.H % 2 == 1);
  const int32_t nm =
      t.nmN ? int32_t((t.nmN | t.nmM << 8) << TESSEL_KERNEL_NM_SHIFT) |
                  TESSEL_KERNEL_K_ASCENDING
            : 0;
  setThreads(t.threads);
  tessel_kernel_sparse_conv2d_f32(
      t.N, OH, OW, t.F, t.KH, t.KW, t.C, t.H, t.W, t.pt, t.pl, in.data(),
      in_sn, in_sh, in_sw, in_sc, t.sh, t.sw, t.dh, t.dw, t.R, sp.ptr.data(),
      sp.kidx.empty() ? nullptr : sp.kidx.data(),
      sp.val.empty() ? nullptr : sp.val.data(), out.data(), o_sn, o_sh, o_sw,
      o_sf, t.epilogue ? bias.data() : nullptr, lo, hi,
      (t.epilogue ? TESSEL_KERNEL_ACCUMULATE : 0) | nm);
  setThreads(1);
  for (int64_t n = 0; n < t.N; ++n)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow)
        for (int64_t f = 0; f < t.F; ++f) {
          double r = ref[((n * OH + oh) * OW + ow) * t.F + f];
          ASSERT_NEAR(out[n * o_sn + oh * o_sh + ow * o_sw + f * o_sf], r,
                      1e-4 * (1 + std::fabs(r)))
              << "at n=" << n << " oh=" << oh << " ow=" << ow << " f=" << f;
        }
}

TEST(SparseConvKernel, NOfM) {
  // N:M along B's k ((kh*KW + kw)*C + c): 2:4 over 3x3 with 16 channels
  // (K = 144: two chunks of 64 and a partial one), strided and padded; 1:8
  // over a 1x1 with 64 channels; channel-major; 1 and 2 threads.
  SparseConvCase c{1, 9, 9, 16, 19, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1.0,
                   false, 1};
  c.nmN = 2, c.nmM = 4;
  checkSparseConv(c);
  c = {2, 14, 14, 16, 33, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 0.8, true, 2};
  c.nmN = 2, c.nmM = 4;
  checkSparseConv(c);
  c = {1, 20, 20, 64, 40, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1.0, true, 1};
  c.nmN = 1, c.nmM = 8;
  checkSparseConv(c);
  c = {1, 12, 12, 8, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1.0, true, 2, true};
  c.nmN = 1, c.nmM = 4;
  checkSparseConv(c);
}

TEST(SparseConvKernel, ShapesStridesDilationsPadding) {
  // N, H, W, C, F, KH, KW, sh, sw, dh, dw, pads (t, b, l, r), R, density,
  // epilogue, threads.
  for (int64_t R : {1, 4, 16})
    for (double d : {0.0, 0.2, 1.0}) {
      checkSparseConv({1, 9, 9, 5, 19, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, R, d,
                       false, 1});
      checkSparseConv({2, 14, 14, 16, 33, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, R, d,
                       true, 1});
    }
  // 1x1 stride 2 (a ResNet downsample); 5x3 with uneven padding; dilation
  // 2; stride 3 with dilation 2; 7 columns (rows not whole vectors); no
  // padding at all; a kernel as large as the padded input.
  checkSparseConv({1, 15, 15, 24, 40, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1, 0.3,
                   true, 1});
  checkSparseConv({1, 11, 13, 7, 17, 5, 3, 1, 1, 1, 1, 2, 1, 0, 3, 2, 0.3,
                   false, 1});
  checkSparseConv({1, 12, 12, 8, 16, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1, 0.4,
                   true, 1});
  checkSparseConv({1, 17, 16, 6, 20, 3, 3, 3, 2, 2, 1, 1, 0, 2, 1, 4, 0.4,
                   false, 1});
  checkSparseConv({1, 7, 7, 40, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0.2,
                   true, 1});
  checkSparseConv({1, 6, 20, 3, 5, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0.5,
                   false, 1});
  checkSparseConv({1, 3, 4, 2, 3, 5, 6, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0.7,
                   true, 1});
  // Plane rows laid out as whole blocks with their padding columns (rows
  // of 16 for 14 columns, of 32 for 28): a 1x1 and a padded 3x3 whose
  // channel counts end in a partial block.
  checkSparseConv(
      {1, 14, 14, 70, 24, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0.3, true, 1});
  checkSparseConv(
      {1, 28, 28, 37, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0.3, false, 1});
}

TEST(SparseConvKernel, BandsAndThreads) {
  // 64 channels of 40 x 40: bands of 15 output rows at 3x3 (their planes
  // 7680 floats a row), the last one short; on 2 threads two images' bands
  // are shared out, while one image's 2 bands at stride 2 and one small
  // image are laid out whole, the threads splitting the output channels.
  checkSparseConv({1, 40, 40, 64, 48, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0.1,
                   true, 1});
  checkSparseConv({2, 40, 40, 64, 48, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 4, 0.1,
                   false, 2});
  checkSparseConv({1, 40, 40, 64, 36, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 0.1,
                   true, 2});
  checkSparseConv({1, 7, 7, 64, 70, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, 0.2,
                   true, 2});
}

TEST(SparseConvKernel, ChannelMajor) {
  // NCHW in and out (consecutive sparse layers keep this layout): plane
  // rows copied, not transposed; output rows stored from the sums'
  // columns, whole vectors where 16 rows stay in one output row (56 -> 64
  // columns a row), else one by one (7 columns: rows run on across output
  // rows); 1x1 and 3x3, strides, epilogues, bands and 2 threads.
  checkSparseConv({1, 56, 56, 16, 24, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0.2,
                   true, 1, true});
  checkSparseConv({1, 20, 20, 16, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0.3,
                   true, 2, true});
  checkSparseConv({2, 14, 14, 8, 33, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 4, 0.3,
                   false, 1, true});
  checkSparseConv({1, 7, 7, 40, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0.2,
                   true, 2, true});
  checkSparseConv({1, 40, 40, 64, 48, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, 0.1,
                   true, 1, true});
}

TEST(SparseMatmulKernel, ColumnMajor) {
  // A and C column-major (a 1x1 convolution's channel-major pixels): A's
  // rows copied, C's columns stored as vectors of rows; chunked k (even M:
  // k ascending) and not (odd M: descending), 1 and 2 threads.
  checkSparse({200, 37, 300, 1, 0.2, true, true, true, false, 1, true});
  checkSparse({1001, 40, 64, 1, 0.3, true, false, true, false, 2, true});
  checkSparse({64, 70, 129, 4, 0.5, false, true, false, false, 1, true});
  checkSparse({37, 16, 40, 2, 0.5, true, true, true, false, 2, true});
}

TEST(SparseMatmulKernel, NOfM) {
  // 2:4, 1:4, 2:8, 4:8 and 1:2 in the chunk-major order: one chunk, one
  // and a partial one (K = 40 at 2:4: chunks of 32 k's), tiles of rows
  // and a last short one, an odd last column, groups that store zeros
  // (density < 1) and all-zero weights; epilogues, strides and column-major
  // operands; bands at 1 and 2 threads.
  for (auto [n, m] : {std::pair<int64_t, int64_t>{2, 4}, {1, 4}, {2, 8},
                      {4, 8}, {1, 2}})
    for (double d : {0.0, 0.7, 1.0}) {
      SparseCase base{1, 1, 8, 1, d, false, false, false, false, 1};
      base.nmN = n, base.nmM = m;
      for (auto [M, N, K] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 8},
                             {17, 33, 40}, {130, 7, 200}, {16, 48, 64}}) {
        SparseCase c = base;
        c.M = M, c.N = N, c.K = K;
        checkSparse(c);
      }
    }
  SparseCase c{37, 50, 64, 1, 0.9, true, true, true, true, 2};
  c.nmN = 2, c.nmM = 4;
  checkSparse(c);
  c = {200, 37, 96, 1, 1.0, true, false, true, false, 1, true};
  c.nmN = 2, c.nmM = 4;
  checkSparse(c);
  c = {1000, 40, 320, 1, 0.8, false, true, false, false, 2};
  c.nmN = 1, c.nmM = 4;
  checkSparse(c);
  c = {3000, 21, 64, 1, 1.0, true, false, true, true, 2};
  c.nmN = 2, c.nmM = 4;
  checkSparse(c);
}

TEST(SparseMatmulKernel, NOfMLanes) {
  // The lane order (vectorized over 16 output columns, A and C in place):
  // 2:4, 1:4, 1:8, 2:8, 4:8, 1:2 and 3:4 (a rank count with no constant
  // tile); K a multiple of 16, one and several quads, and a last partial
  // quad (K = 40, 8); one and several column vectors, an odd count (the
  // last panel one vector); rows in a tile and a short last tile, several
  // bands (K = 3000 / M = 300: bands of 32 rows); groups that store
  // zeros and all-zero weights; epilogues, strided A and C (A copied into
  // rows), 1 to 3 threads.
  for (auto [n, m] : {std::pair<int64_t, int64_t>{2, 4},
                      {1, 4},
                      {1, 8},
                      {2, 8},
                      {4, 8},
                      {1, 2},
                      {3, 4}})
    for (double d : {0.0, 0.7, 1.0})
      for (auto [M, N, K] : {std::tuple<int64_t, int64_t, int64_t>{1, 16, 8},
                             {17, 48, 40},
                             {9, 32, 64},
                             {33, 80, 128}}) {
        SparseCase c{M, N, K, 1, d, false, false, false, false, 1};
        c.nmN = n, c.nmM = m, c.lanes = true;
        checkSparse(c);
      }
  SparseCase c{37, 64, 64, 1, 0.9, true, true, true, true, 2};
  c.nmN = 2, c.nmM = 4, c.lanes = true;
  checkSparse(c);
  c = {300, 48, 3000, 1, 1.0, true, false, true, false, 3};
  c.nmN = 1, c.nmM = 4, c.lanes = true;
  checkSparse(c);
  c = {128, 96, 768, 1, 1.0, true, true, false, false, 2};
  c.nmN = 2, c.nmM = 4, c.lanes = true;
  checkSparse(c);
}

TEST(SparseMatmulKernel, UnstructuredLanes) {
  // The lane order with each unit's own slot count (no N:M): random
  // zeros at several densities (0: no slots; 1: every k), K with one and
  // several quads and a short last one, column vectors one to five (an
  // odd last panel), short row tiles; several chunks of quads (K = 3000
  // at density 1: about 6 quads a chunk) with the sums through C, with
  // and without accumulate, bias, clamp, strided A and C, 1 to 3 threads.
  for (double d : {0.0, 0.05, 0.2, 0.5, 1.0})
    for (auto [M, N, K] : {std::tuple<int64_t, int64_t, int64_t>{1, 16, 1},
                           {17, 48, 40},
                           {9, 32, 64},
                           {33, 80, 129}}) {
      SparseCase c{M, N, K, 1, d, true, false, false, false, 1};
      c.lanes = true;
      checkSparse(c);
    }
  SparseCase c{37, 64, 3000, 1, 1.0, true, true, true, true, 2};
  c.lanes = true;
  checkSparse(c);
  c = {300, 48, 3000, 1, 0.2, false, false, true, false, 3};
  c.lanes = true;
  checkSparse(c);
  c = {130, 96, 768, 1, 0.1, true, true, false, false, 2};
  c.lanes = true;
  checkSparse(c);
}

TEST(SparseMatmulKernel, Bands) {
  // Rows in bands of 192 (256 KiB of the transposed A at K = 300), the
  // last one short: each band transposed by the thread that multiplies
  // it, at 1 and 2 threads; 3 bands on 2 threads share one transposed A.
  checkSparse({1000, 37, 300, 1, 0.1, true, true, false, false, 1});
  checkSparse({1000, 40, 300, 4, 0.2, false, false, true, true, 2});
  checkSparse({1001, 21, 300, 2, 0.3, true, false, true, false, 2});
  checkSparse({500, 33, 300, 1, 0.2, true, true, false, true, 2});
}

//===----------------------------------------------------------------------===//
// tessel_kernel_sparse_{matmul,conv2d}_u8s8_requant (issue 18): B in quad
// blocks (4 k x R columns). Their sums are exact, so each output must be
// the dense int8 kernel's, byte for byte, on the same B.
//===----------------------------------------------------------------------===//

namespace {

struct QuadBlocks {
  std::vector<int32_t> ptr, k;
  std::vector<int8_t> bytes;
};

QuadBlocks packQuads(const std::vector<int8_t> &b, int64_t K, int64_t N,
                     int64_t R) {
  QuadBlocks q;
  q.ptr.push_back(0);
  for (int64_t c0 = 0; c0 < N; c0 += R) {
    for (int64_t g = 0; g < (K + 3) / 4; ++g) {
      bool any = false;
      for (int64_t k = 4 * g; k < std::min(K, 4 * g + 4); ++k)
        for (int64_t c = c0; c < std::min(N, c0 + R); ++c)
          any |= b[k * N + c] != 0;
      if (!any)
        continue;
      q.k.push_back(int32_t(g));
      for (int64_t c = c0; c < c0 + R; ++c)
        for (int64_t k = 4 * g; k < 4 * g + 4; ++k)
          q.bytes.push_back(k < K && c < N ? b[k * N + c] : 0);
    }
    q.ptr.push_back(int32_t(q.k.size()));
  }
  return q;
}

/// Random B (K x N): each quad of R columns kept with probability density,
/// its bytes random (zeros among them too).
std::vector<int8_t> quadSparseB(std::mt19937 &gen, int64_t K, int64_t N,
                                int64_t R, double density) {
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<int8_t> b(K * N, 0);
  for (int64_t g = 0; g < (K + 3) / 4; ++g)
    for (int64_t c0 = 0; c0 < N; c0 += R) {
      if (u(gen) >= density)
        continue;
      for (int64_t k = 4 * g; k < std::min(K, 4 * g + 4); ++k)
        for (int64_t c = c0; c < std::min(N, c0 + R); ++c)
          b[k * N + c] = int8_t(byte(gen) - 128);
    }
  return b;
}

struct SpI8Case {
  int64_t batch, M, N, K, R;
  double density;
  bool aSigned;
  int32_t aZp, bZp;
  bool f32Out, residual;
  int threads;
};

/// A case's random activations and quad-sparse B, packed for the dense
/// kernel and as quad blocks; `seed` varies the draws.
struct SpI8Operands {
  std::vector<uint8_t> a;
  std::vector<int8_t> packed;
  QuadBlocks q;
};

SpI8Operands sparseI8Operands(const SpI8Case &t, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> byte(0, 255);
  SpI8Operands o;
  o.a.resize(t.batch * t.M * t.K);
  for (uint8_t &x : o.a)
    x = uint8_t(byte(gen));
  std::vector<int8_t> b = quadSparseB(gen, t.K, t.N, t.R, t.density);
  o.packed = packI8(b, t.K, t.N);
  o.q = packQuads(b, t.K, t.N, t.R);
  return o;
}

void checkSparseMatmulI8(const SpI8Case &t) {
  SCOPED_TRACE(testing::Message()
               << "batch " << t.batch << " M " << t.M << " N " << t.N << " K "
               << t.K << " R " << t.R << " density " << t.density << " signed "
               << t.aSigned << " zp " << t.aZp << "/" << t.bZp << " f32 "
               << t.f32Out << " residual " << t.residual << " threads "
               << t.threads);
  const float inf = std::numeric_limits<float>::infinity();
  auto [a, packed, q] =
      sparseI8Operands(t, unsigned(t.M * 7 + t.N * 13 + t.K + t.R));
  std::vector<float> scale(t.N), bias(t.N), res(t.batch * t.M * t.N);
  for (int64_t n = 0; n < t.N; ++n)
    scale[n] = 1e-4f * float(1 + n % 5), bias[n] = float(n % 3) - 1.0f;
  for (size_t i = 0; i < res.size(); ++i)
    res[i] = float(int64_t(i % 11) - 5) * 0.5f;
  const int64_t bytes = t.f32Out ? 4 : 1;
  std::vector<uint8_t> dense(t.batch * t.M * t.N * bytes, 0xA5),
      sparse(dense.size(), 0x5A);
  const int32_t flags = (t.aSigned ? TESSEL_KERNEL_A_SIGNED : 0) |
                        (t.f32Out ? TESSEL_KERNEL_OUT_F32 |
                                        TESSEL_KERNEL_DEQUANTIZE
                                  : 0) |
                        TESSEL_KERNEL_QUANTIZE;
  const float *r = t.residual ? res.data() : nullptr;
  const int64_t rs = t.residual ? 1 : 0;
  setThreads(t.threads);
  tessel_kernel_matmul_u8s8_requant(
      t.batch, t.M, t.N, t.K, a.data(), t.M * t.K, t.K, t.aZp, packed.data(),
      0, nullptr, t.bZp, dense.data(), t.M * t.N, t.N, 1, r, t.M * t.N * rs,
      t.N * rs, rs, 0.0f, inf, scale.data(), bias.data(), -inf, inf, 0.05f,
      7.0f, 0.0f, 255.0f, nullptr, 0.05f, 7.0f, -inf, inf, flags);
  tessel_kernel_sparse_matmul_u8s8_requant(
      t.batch, t.M, t.N, t.K, a.data(), t.M * t.K, t.K, t.aZp, t.R,
      q.ptr.data(), q.k.data(), q.bytes.data(), nullptr, t.bZp,
      sparse.data(), t.M * t.N, t.N, 1, r, t.M * t.N * rs, t.N * rs, rs, 0.0f,
      inf, scale.data(), bias.data(), -inf, inf, 0.05f, 7.0f, 0.0f, 255.0f,
      nullptr, 0.05f, 7.0f, -inf, inf, flags);
  setThreads(1);
  ASSERT_EQ(dense, sparse);
}

/// The int32 form (tessel_kernel_sparse_matmul_u8s8_i32): the dense int32
/// kernel's sums, to the bit, stored or added to c (accumulate), into an
/// output whose rows are wider than N (c_sm > N) or columns strided.
void checkSparseMatmulI32(const SpI8Case &t, bool accumulate, int64_t cSn) {
  SCOPED_TRACE(testing::Message()
               << "i32: batch " << t.batch << " M " << t.M << " N " << t.N
               << " K " << t.K << " R " << t.R << " density " << t.density
               << " signed " << t.aSigned << " zp " << t.aZp << "/" << t.bZp
               << " accumulate " << accumulate << " c_sn " << cSn
               << " threads " << t.threads);
  auto [a, packed, q] =
      sparseI8Operands(t, unsigned(t.M * 5 + t.N * 11 + t.K + t.R));
  // Rows of N * cSn + 3 elements: the 3 past the last column never written.
  const int64_t cSm = t.N * cSn + 3;
  std::vector<int32_t> dense(t.batch * t.M * cSm);
  for (size_t i = 0; i < dense.size(); ++i)
    dense[i] = int32_t(i % 1000) - 500;
  std::vector<int32_t> sparse = dense;
  const int32_t flags = (t.aSigned ? TESSEL_KERNEL_A_SIGNED : 0) |
                        (accumulate ? TESSEL_KERNEL_ACCUMULATE : 0);
  setThreads(t.threads);
  tessel_kernel_matmul_u8s8_i32(t.batch, t.M, t.N, t.K, a.data(), t.M * t.K,
                                t.K, t.aZp, packed.data(), 0, nullptr, t.bZp,
                                dense.data(), t.M * cSm, cSm, cSn, flags);
  tessel_kernel_sparse_matmul_u8s8_i32(
      t.batch, t.M, t.N, t.K, a.data(), t.M * t.K, t.K, t.aZp, t.R,
      q.ptr.data(), q.k.data(), q.bytes.data(), nullptr, t.bZp, sparse.data(),
      t.M * cSm, cSm, cSn, flags);
  setThreads(1);
  ASSERT_EQ(dense, sparse);
}

} // namespace

TEST(SparseMatmulI32Kernel, BlockSizesZeroPointsAccumulateThreads) {
  for (int64_t R : {1, 4})
    for (double d : {0.0, 0.2, 1.0})
      for (auto [M, N, K] : {std::tuple<int64_t, int64_t, int64_t>{17, 33, 70},
                             {130, 80, 129}, {5, 7, 3}, {20, 9, 0}})
        checkSparseMatmulI32({1, M, N, K, R, d, false, 3, 0, false, false, 1},
                             /*accumulate=*/false, 1);
  for (bool aSigned : {false, true})
    for (int32_t bZp : {0, -5})
      for (bool accumulate : {false, true})
        checkSparseMatmulI32({2, 40, 70, 96, 1, 0.3, aSigned,
                              aSigned ? -7 : 131, bZp, false, false, 1},
                             accumulate, accumulate ? 2 : 1);
  checkSparseMatmulI32({1, 64, 300, 256, 1, 0.2, false, 3, 0, false, false, 2},
                       true, 1);
  checkSparseMatmulI32({3, 200, 40, 200, 4, 0.2, true, 0, 4, false, false, 2},
                       false, 1);
}

TEST(SparseMatmulI8Kernel, BlockSizesDensitiesAndRemainders) {
  // M across tiles of 16-row vectors (17, 130, 300: bands and even
  // tiles), N past groups of 16 and blocks of 4, K with a partial quad.
  for (int64_t R : {1, 4})
    for (double d : {0.0, 0.1, 0.5, 1.0})
      for (auto [M, N, K] : {std::tuple<int64_t, int64_t, int64_t>{17, 33, 70},
                             {130, 16, 64}, {300, 50, 129}, {5, 7, 3}})
        checkSparseMatmulI8({1, M, N, K, R, d, false, 3, 0, false, false, 1});
  // No k at all: the sums are the zero points' corrections alone.
  checkSparseMatmulI8({1, 20, 9, 0, 1, 0.5, false, 3, 0, false, false, 1});
}

TEST(SparseMatmulI8Kernel, ZeroPointsSignsOutputsThreads) {
  for (bool aSigned : {false, true})
    for (int32_t bZp : {0, -5})
      for (bool f32Out : {false, true})
        checkSparseMatmulI8({2, 40, 70, 96, 1, 0.3, aSigned,
                             aSigned ? -7 : 131, bZp, f32Out, f32Out, 1});
  // Two threads: bands of rows and column ranges (one band of 64 rows).
  checkSparseMatmulI8({1, 64, 300, 256, 1, 0.2, false, 3, 0, false, false, 2});
  checkSparseMatmulI8({3, 200, 40, 200, 4, 0.2, true, 0, 0, true, true, 2});
}

TEST(SparseConvI8Kernel, TapsStridesDilationsPadding) {
  const float inf = std::numeric_limits<float>::infinity();
  struct C {
    int64_t N, H, W, C, F, KH, KW, S, D, pixelPad, R;
    bool aSigned;
    int threads;
  };
  for (const C &t : {C{1, 9, 9, 16, 40, 3, 3, 1, 1, 0, 1, false, 1},
                     C{2, 11, 10, 6, 33, 3, 3, 2, 1, 2, 4, false, 1},
                     C{1, 12, 12, 8, 20, 3, 3, 1, 2, 0, 1, true, 2},
                     C{1, 8, 8, 32, 64, 1, 1, 2, 1, 0, 4, false, 2}}) {
    SCOPED_TRACE(testing::Message() << "C " << t.C << " F " << t.F << " K "
                                    << t.KH << " S " << t.S << " D " << t.D);
    const int64_t OH = (t.H - (t.KH - 1) * t.D - 1) / t.S + 1,
                  OW = (t.W - (t.KW - 1) * t.D - 1) / t.S + 1,
                  K = t.KH * t.KW * t.C, M = OH * OW, sw = t.C + t.pixelPad,
                  sh = t.W * sw, sn = t.H * sh;
    std::mt19937 gen(unsigned(t.C * 17 + t.F));
    std::uniform_int_distribution<int> byte(0, 255);
    std::vector<uint8_t> in(t.N * sn);
    for (uint8_t &x : in)
      x = uint8_t(byte(gen));
    std::vector<int8_t> b = quadSparseB(gen, K, t.F, t.R, 0.3);
    std::vector<int8_t> packed = packI8(b, K, t.F);
    QuadBlocks q = packQuads(b, K, t.F, t.R);
    std::vector<float> scale(t.F, 3e-4f), bias(t.F, 0.25f);
    std::vector<uint8_t> dense(t.N * M * t.F), sparse(t.N * M * t.F, 1);
    const int32_t flags =
        (t.aSigned ? TESSEL_KERNEL_A_SIGNED : 0) | TESSEL_KERNEL_QUANTIZE;
    setThreads(t.threads);
    tessel_kernel_conv2d_u8s8_requant(
        t.N, OH, OW, t.F, t.KH, t.KW, t.C, in.data(), sn, sh, sw, t.S, t.S,
        t.D, t.D, 5, packed.data(), nullptr, 0, dense.data(), M * t.F, t.F, 1,
        nullptr, 0, 0, 0, -inf, inf, scale.data(), bias.data(), 0.0f, inf,
        0.05f, 3.0f, 0.0f, 255.0f, nullptr, 1.0f, 0.0f, -inf, inf, flags);
    tessel_kernel_sparse_conv2d_u8s8_requant(
        t.N, OH, OW, t.F, t.KH, t.KW, t.C, in.data(), sn, sh, sw, t.S, t.S,
        t.D, t.D, 5, t.R, q.ptr.data(), q.k.data(), q.bytes.data(), nullptr,
        0, sparse.data(), M * t.F, t.F, 1, nullptr, 0, 0, 0, -inf, inf,
        scale.data(), bias.data(), 0.0f, inf, 0.05f, 3.0f, 0.0f, 255.0f,
        nullptr, 1.0f, 0.0f, -inf, inf, flags);
    // The int32 form, accumulating into the same starting values.
    std::vector<int32_t> denseI32(t.N * M * t.F), sparseI32;
    for (size_t i = 0; i < denseI32.size(); ++i)
      denseI32[i] = int32_t(i % 77) - 30;
    sparseI32 = denseI32;
    const int32_t i32Flags = flags & ~TESSEL_KERNEL_QUANTIZE |
                             (t.R == 4 ? TESSEL_KERNEL_ACCUMULATE : 0);
    tessel_kernel_conv2d_u8s8_i32(
        t.N, OH, OW, t.F, t.KH, t.KW, t.C, in.data(), sn, sh, sw, t.S, t.S,
        t.D, t.D, 5, packed.data(), nullptr, 0, denseI32.data(), M * t.F, t.F,
        1, i32Flags);
    tessel_kernel_sparse_conv2d_u8s8_i32(
        t.N, OH, OW, t.F, t.KH, t.KW, t.C, in.data(), sn, sh, sw, t.S, t.S,
        t.D, t.D, 5, t.R, q.ptr.data(), q.k.data(), q.bytes.data(), nullptr,
        0, sparseI32.data(), M * t.F, t.F, 1, i32Flags);
    setThreads(1);
    ASSERT_EQ(dense, sparse);
    ASSERT_EQ(denseI32, sparseI32);
  }
}
