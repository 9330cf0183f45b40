//===- SparsifyWeights.cpp - mostly-zero weights -> tessel.sparse_matmul ---===//
//
// Static weight sparsity (docs/sparsity.md): a matmul whose constant
// weights are mostly zeros becomes tessel.sparse_matmul, its nonzero
// blocks stored at compile time, when the cost model predicts that the
// sparse kernel beats the dense one. Runs before tessel-convert-to-kernels,
// which fuses the bias/residual/clamp epilogues into either op alike.
//
//===----------------------------------------------------------------------===//
#include "KernelInit.h"
#include "SparsityReport.h"
#include "WinogradFilter.h"
#include "tessel/Dialect/Tessel/IR/TesselDialect.h"
#include "tessel/Dialect/Tessel/Transforms/Passes.h"
#include "tessel/Kernels/tessel_kernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELSPARSIFYWEIGHTS
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {

/// The block sizes the kernel takes, best-structured first.
constexpr int64_t kBlockSizes[] = {16, 8, 4, 2, 1};

/// Which measured rates apply: the kernels' speed against the dense ones
/// depends on how wide the target's FMAs run against its loads.
enum class RateTable {
  /// AVX-512 at full width (Intel's servers): the dense kernel runs two
  /// 512-bit FMAs a cycle, more than the sparse ones' loads feed.
  Avx512,
  /// AVX-512 at full width whose 512-bit permutes run beside the FMAs
  /// (AMD Zen 5, lane-order): as Avx512, but its blocks' loads keep closer
  /// pace and its moves cost less.
  Avx512Zen5,
  /// AVX-512 on 256-bit FMA units (AMD Zen 4): one 512-bit FMA a cycle,
  /// which one 512-bit load a cycle keeps up with.
  Avx512HalfWidthFma,
  /// AVX2 and narrower.
  Avx2,
};

RateTable rateTable(unsigned vectorBits, unsigned fmaBits,
                    bool permutesBesideFma) {
  if (vectorBits < 512)
    return RateTable::Avx2;
  if (fmaBits != 0 && fmaBits < vectorBits)
    return RateTable::Avx512HalfWidthFma;
  return permutesBesideFma ? RateTable::Avx512Zen5 : RateTable::Avx512;
}

/// What the sparse kernels cost on one kind of CPU, relative to the dense
/// kernel, from bench/sparse_ratios.py (bench/sparse_gemm.c on BERT-base's
/// projections and ResNet-50's pointwise shapes, one thread; the formula
/// and its calibration: docs/sparsity.md, "The cost model").
struct KernelRates {
  /// The rate on the elements the blocks store (blocks x R multiply-adds
  /// per row) over the dense kernel's, for R = 1, 2 and 4 and up: the
  /// lower quartile of what each run implies, so that a layer goes sparse
  /// only where it pays (R = 2: 1.25x R = 1, as the chunked kernel
  /// measured).
  double r1, r2, r4;
  /// R = 1's rate with at least kManyRows rows (a static M): each
  /// nonzero's index and broadcast then serve several tiles' worth of
  /// rows from the same chunk. Where not measured apart, r1.
  double r1ManyRows;
  /// The N:M kernel's rate at 1:8, 1:4 and 2:4 (nmRateRatio).
  double nm[3];
  /// Dense multiply-adds per element moved into and out of the kernels'
  /// layout: the runs without nonzeros, their time over the dense
  /// kernel's per 1 / K + 1 / N, the median.
  double movedElementCost;
};

/// Avx512 and Avx2: an Intel Sapphire Rapids (2026-11-27) with the AVX-512
/// and the AVX2 builds of the kernels (the AVX2 build's dense kernel has
/// fewer registers to tile with, so the sparse one fares better against
/// it); their N:M rates predate the N:M tiles' multiplying k by the row
/// step rather than loading each row's offset (1.08-1.17x on Zen 4), and
/// their moves were measured at 0-5% density (21-25). Avx512HalfWidthFma:
/// an AMD Zen 4 (2026-11-29, git f39340d): its dense kernel makes one
/// 512-bit FMA a cycle, so moves cost about half as many of its
/// multiply-adds (12.4, 27 runs 9.7-23.1). Avx512Zen5: an AMD Zen 5
/// (family 26, 2026-12-01, git af68c9c, two runs): R = 1 0.28-0.29 (36
/// runs), R = 4 0.70-0.74, R = 16 0.75-0.77, N:M 0.43-0.45 / 0.54 /
/// 0.61-0.62, moves 18.8-19.0 (27 runs 15.6-52.2); R = 2 at 1.25x R = 1,
/// as the others. R = 1 with 512 rows and more, 15 runs at 10% and 20%
/// (M x N x K: 3136 x 256 x 64, 3136 x 64 x 256, 3136 x 128 x 128, 1568
/// x 384 x 384, 1024 x 256 x 256, 784 x 512 x 128, 784 x 128 x 512, 784
/// x 256 x 256, 512 x 768 x 768): 0.35-0.53, lower quartile 0.38; with
/// fewer (256, 196, 128 and 49 rows) 0.22-0.38.
const KernelRates &kernelRates(RateTable t) {
  static constexpr KernelRates kAvx512 = {
      0.30, 0.38, 0.60, 0.30, {0.52, 0.58, 0.62}, 24.0};
  static constexpr KernelRates kZen5 = {
      0.28, 0.35, 0.70, 0.38, {0.43, 0.54, 0.61}, 19.0};
  static constexpr KernelRates kHalfWidth = {
      0.45, 0.56, 0.91, 0.45, {0.53, 0.66, 0.70}, 12.0};
  static constexpr KernelRates kAvx2 = {
      0.43, 0.54, 0.90, 0.43, {0.71, 0.73, 0.71}, 24.0};
  switch (t) {
  case RateTable::Avx512:
    return kAvx512;
  case RateTable::Avx512Zen5:
    return kZen5;
  case RateTable::Avx512HalfWidthFma:
    return kHalfWidth;
  case RateTable::Avx2:
    return kAvx2;
  }
  llvm_unreachable("every rate table is covered");
}

/// Rows from which KernelRates::r1ManyRows applies: 32 vectors of 16, at
/// least 4 of R = 1's tiles of 8.
constexpr int64_t kManyRows = 512;

/// The rate of blocks of `r` for `m` rows (dynamic: ShapedType::kDynamic,
/// taken as few).
double rateRatio(int64_t r, RateTable t, int64_t m) {
  const KernelRates &k = kernelRates(t);
  if (r == 1)
    return !ShapedType::isDynamic(m) && m >= kManyRows ? k.r1ManyRows : k.r1;
  return r == 2 ? k.r2 : k.r4;
}

/// Rates measured at 1:8, 1:4 and 2:4, linear in the density between
/// them and held at the ends.
double interpolateNOfM(const double rates[3], double density) {
  static constexpr double kDensities[] = {0.125, 0.25, 0.5};
  if (density <= kDensities[0])
    return rates[0];
  for (int i = 1; i < 3; ++i)
    if (density <= kDensities[i]) {
      double f =
          (density - kDensities[i - 1]) / (kDensities[i] - kDensities[i - 1]);
      return rates[i - 1] + f * (rates[i] - rates[i - 1]);
    }
  return rates[2];
}

/// The N:M kernel's rate on the elements it stores over the dense
/// kernel's, as rateRatio, at density n / m: every column runs the same
/// count of nonzeros per chunk, in the order it reads them
/// (docs/sparsity.md). Sparser weights run fewer products per pass over a
/// chunk, so the rate is measured per pattern, at 1:8, 1:4 and 2:4, and
/// interpolated in the density between them (held at the ends). So on
/// BERT-base's shapes 2:4 goes sparse on Zen 4 (measured 1.32-1.40x) and
/// with AVX2 (1.32-1.41x), and stays dense on Sapphire Rapids (measured
/// 1.13-1.29x there); 1:4 and sparser pay everywhere.
double nmRateRatio(RateTable t, double density) {
  return interpolateNOfM(kernelRates(t).nm, density);
}

/// The lane-order N:M kernel's rate (TESSEL_KERNEL_LANES: vectorized
/// over 16 output columns, a permute per FMA picking each column's input)
/// on its stored elements over the dense kernel's, at 1:8, 1:4 and 2:4,
/// interpolated as nmRateRatio. Measured on an AMD Zen 5 (2026-12-01,
/// bench/sparse_gemm.c on BERT-base's projections, one thread: 2:4
/// 1.27-1.35x, 1:4 2.52-2.65x, 1:8 4.20-4.36x), the lower ends; the
/// lane-order option applies them only to such CPUs.
double laneOrderRateRatio(double density) {
  static constexpr double kRates[] = {0.525, 0.63, 0.635};
  return interpolateNOfM(kRates, density);
}

/// The lane-order kernel's rows go in tiles of 8 (SparseLanesF32.c): M
/// rows fill M / roundup(M, 8) of them (a dynamic M is taken as large).
double laneTileRowsUsed(int64_t m) {
  if (ShapedType::isDynamic(m) || m <= 0)
    return 1.0;
  return double(m) / double((m + 7) / 8 * 8);
}

/// The kernels' tiles hold up to 8 row vectors (`lanes` rows each); each
/// nonzero loads its index and broadcasts its value once for the tile's
/// vectors, about 3 FMAs' worth, so a tile of `tm` vectors runs at
/// tm / (tm + 3) of the FMAs' pace. The rates were measured with 4 and more
/// (M of 49 rows and up): fewer, from an M under 4 vectors, scale them by
/// that over 4 / 7. Zen 4 (bench/sparse_gemm.c, M x 768 x 768, git
/// f39340d), speed-up at M = 16 / 32 / 48 over that at 64 and 128: 2:4
/// 0.55 / 0.77 / 0.88, 1:4 0.50 / 0.73 / 0.85, 1x1 blocks at 10% 0.45 /
/// 0.70 / 0.80 (this model: 0.44 / 0.70 / 0.88). A dynamic M is taken as
/// large.
double tileRowsFactor(int64_t m, int64_t lanes) {
  if (ShapedType::isDynamic(m) || m <= 0)
    return 1.0;
  double tm = double(std::min<int64_t>((m + lanes - 1) / lanes, 4));
  return tm / (tm + 3.0) / (4.0 / 7.0);
}

/// A convolution's plane rows that are not whole vectors make loads that
/// straddle cache lines: the kernel's rate on them (bench/sparse_conv.c,
/// 7x7 images: 0.16 against 0.24 at 56 columns padded to 64).
constexpr double kUnalignedRate = 0.65;

/// Dense Winograd over the implicit GEMM on ResNet-50's 3x3 layers, by
/// output tile: the upper end, so that a layer leaves Winograd only where
/// sparse beats it. F(2x2, 3x3): bench/sparse_conv.c, Sapphire Rapids
/// 1.18-2.03x; F(4x4, 3x3): bench/winograd_conv.c, AMD Zen 5, 64-256
/// channels at 28x28 and 56x56, 2.8-3.4x.
static double winogradGain(int64_t tile) {
  return tile == 4 ? 3.3 : tile == 2 ? 2.0 : 1.0;
}

/// Whether the block of `r` columns from `c0` at row `kk` of the row-major
/// `K x N` matrix `b` holds a nonzero (-0.0 counts as zero: the product
/// adds nothing either way); columns past N are the kernel's zero pad.
bool blockHasNonzero(ArrayRef<float> b, int64_t n, int64_t kk, int64_t c0,
                     int64_t r) {
  for (int64_t c = c0; c < c0 + r && c < n; ++c)
    if (b[kk * n + c] != 0.0f)
      return true;
  return false;
}

/// Blocks of `r` consecutive columns at one k that hold a nonzero.
int64_t countBlocks(ArrayRef<float> b, int64_t k, int64_t n, int64_t r) {
  int64_t count = 0;
  for (int64_t kk = 0; kk < k; ++kk)
    for (int64_t c0 = 0; c0 < n; c0 += r)
      count += blockHasNonzero(b, n, kk, c0, r);
  return count;
}

/// The kernel's arrays (tessel.sparse_matmul's block_ptr, block_k,
/// values) for `b` in `r x 1` blocks.
struct Blocks {
  std::vector<int32_t> ptr, k;
  std::vector<float> values;
};

Blocks packBlocks(ArrayRef<float> b, int64_t k, int64_t n, int64_t r) {
  Blocks out;
  out.ptr.push_back(0);
  for (int64_t c0 = 0; c0 < n; c0 += r) {
    for (int64_t kk = 0; kk < k; ++kk) {
      if (!blockHasNonzero(b, n, kk, c0, r))
        continue;
      out.k.push_back(int32_t(kk));
      for (int64_t c = c0; c < c0 + r; ++c)
        out.values.push_back(c < n ? b[kk * n + c] : 0.0f);
    }
    out.ptr.push_back(int32_t(out.k.size()));
  }
  return out;
}

/// The most nonzeros of one column in one aligned group of `m` k's.
int64_t maxPerGroup(ArrayRef<float> b, int64_t k, int64_t n, int64_t m) {
  int64_t most = 0;
  for (int64_t g = 0; g < k; g += m)
    for (int64_t c = 0; c < n; ++c) {
      int64_t count = 0;
      for (int64_t kk = g; kk < g + m; ++kk)
        count += b[kk * n + c] != 0.0f;
      most = std::max(most, count);
    }
  return most;
}

/// `b` as N:M (`nn` of every `mm` k's a column; m divides K, no group
/// holds more than n nonzeros) in the N:M kernel's chunk-major order
/// (tessel.sparse_matmul's n_of_m): a group with fewer nonzeros stores
/// zeros at its first free k's, so that every column has the same count.
Blocks packNOfM(ArrayRef<float> b, int64_t k, int64_t n, int64_t nn,
                int64_t mm) {
  Blocks out;
  for (int64_t c = 0; c <= n; ++c)
    out.ptr.push_back(int32_t(c * (k / mm * nn)));
  const int64_t chunkK = TESSEL_KERNEL_NM_CHUNK_K;
  for (int64_t k0 = 0; k0 < k; k0 += chunkK)
    for (int64_t c = 0; c < n; ++c)
      for (int64_t g = k0; g < std::min(k, k0 + chunkK); g += mm) {
        int64_t zeros = nn;
        for (int64_t kk = g; kk < g + mm; ++kk)
          zeros -= b[kk * n + c] != 0.0f;
        for (int64_t kk = g; kk < g + mm; ++kk) {
          float v = b[kk * n + c];
          if (v == 0.0f) {
            if (zeros == 0)
              continue;
            --zeros;
          }
          out.k.push_back(int32_t(kk));
          out.values.push_back(v);
        }
      }
  return out;
}

/// `b` in the lane order (tessel.sparse_matmul's `lanes`; N a multiple of
/// 16): per column vector v and quad q of 16 k's, unit v * Q + q holds as
/// many slots as its 16 columns' most entries there, entry 16 s + l of
/// slot s column 16 v + l's s-th (k ascending; a column with fewer stores
/// zeros at the quad's first k). With nn > 0 (N:M), each column's
/// entries are packNOfM's: nn a group, zeros at a group's first free k's.
Blocks packLanes(ArrayRef<float> b, int64_t k, int64_t n, int64_t nn,
                 int64_t mm) {
  const int64_t lanes = TESSEL_KERNEL_LANE_COLUMNS;
  const int64_t quads = (k + lanes - 1) / lanes;
  Blocks out;
  out.ptr.push_back(0);
  std::vector<std::vector<std::pair<int32_t, float>>> cols(
      static_cast<size_t>(lanes));
  for (int64_t v = 0; v < n / lanes; ++v)
    for (int64_t q = 0; q < quads; ++q) {
      const int64_t k0 = q * lanes, k1 = std::min(k, k0 + lanes);
      size_t slots = 0;
      for (int64_t l = 0; l < lanes; ++l) {
        const int64_t c = v * lanes + l;
        auto &e = cols[size_t(l)];
        e.clear();
        for (int64_t g = k0; g < k1; g += nn ? mm : lanes) {
          const int64_t g1 = nn ? g + mm : k1;
          int64_t free = nn;
          for (int64_t kk = g; kk < g1; ++kk)
            free -= b[kk * n + c] != 0.0f;
          for (int64_t kk = g; kk < g1; ++kk) {
            if (b[kk * n + c] == 0.0f) {
              if (free <= 0)
                continue;
              --free;
            }
            e.push_back({int32_t(kk), b[kk * n + c]});
          }
        }
        slots = std::max(slots, e.size());
      }
      for (size_t sl = 0; sl < slots; ++sl)
        for (int64_t l = 0; l < lanes; ++l) {
          const auto &e = cols[size_t(l)];
          out.k.push_back(sl < e.size() ? e[sl].first : int32_t(k0));
          out.values.push_back(sl < e.size() ? e[sl].second : 0.0f);
        }
      out.ptr.push_back(int32_t(out.k.size() / size_t(lanes)));
    }
  return out;
}

/// Slots of `b` in the lane order without N:M (packLanes' count): per
/// column vector and quad, its 16 columns' most nonzeros there.
int64_t countLaneSlots(ArrayRef<float> b, int64_t k, int64_t n) {
  const int64_t lanes = TESSEL_KERNEL_LANE_COLUMNS;
  int64_t slots = 0;
  for (int64_t v = 0; v < n / lanes; ++v)
    for (int64_t k0 = 0; k0 < k; k0 += lanes) {
      int64_t most = 0;
      for (int64_t c = v * lanes; c < v * lanes + lanes; ++c) {
        int64_t count = 0;
        for (int64_t kk = k0; kk < std::min(k, k0 + lanes); ++kk)
          count += b[kk * n + c] != 0.0f;
        most = std::max(most, count);
      }
      slots += most;
    }
  return slots;
}

/// The lane-order kernel's rate on the entries it stores for unstructured
/// weights (zeros padding each quad included) over the dense kernel's:
/// the lower end measured on an AMD Zen 5 (2026-12-01, bench/sparse_gemm.c,
/// one thread: at 20% 3136 x 256 x 64 0.49, 784 x 128 x 512 0.58, 128 x
/// 768 x 768 0.60; at 10% 32 x 128 x 96 and 32 x 64 x 128 0.40: few rows
/// and quads leave the tiles' overhead a larger share).
constexpr double kUnstructuredLaneRate = 0.40;

/// What the analysis found for one matmul.
struct Choice {
  int64_t r = 0;        // best block size (1 with N:M)
  int64_t nmN = 0;      // N:M when nmN > 0: nmN of every nmM k's
  int64_t nmM = 0;
  bool lanes = false;   // N:M in the lane order (TESSEL_KERNEL_LANES)
  double density = 1.0; // stored fraction of B at that size
  double speedup = 0.0; // predicted, over the dense kernel
  double zeros = 0.0;   // zero fraction of B
};

/// `lanesUsed`: the fraction of the kernel's vector lanes the rows fill;
/// `overhead`: the moved elements' share of the dense kernel's time;
/// `denseGain`: the dense path's speed over the dense kernel's;
/// `laneRows`: where the lane order may be weighed (lane-order, a matmul),
/// the fraction of its row tiles the rows fill, else 0; `m`: the rows
/// (ShapedType::kDynamic when not static).
Choice analyze(ArrayRef<float> b, int64_t k, int64_t n, int64_t m,
               double lanesUsed, double overhead, double denseGain,
               RateTable table, double laneRows) {
  Choice best;
  int64_t zeros = 0;
  for (float v : b)
    zeros += v == 0.0f;
  best.zeros = double(zeros) / double(k * n);
  for (int64_t r : kBlockSizes) {
    int64_t blocks = countBlocks(b, k, n, r);
    if (blocks == 0)
      continue; // all zeros: left to the dense path (no empty arrays)
    double density = double(blocks * r) / double(k * n);
    // Sparse time over dense time: the products at the kernel's rate on
    // the lanes the rows fill, plus the moves.
    double speedup =
        1.0 / (density / (rateRatio(r, table, m) * lanesUsed) + overhead) /
        denseGain;
    if (speedup > best.speedup)
      best = {r, 0, 0, false, density, speedup, best.zeros};
  }
  // Unstructured in the lane order: each column vector's quads padded to
  // their columns' most nonzeros (no moves).
  if (laneRows > 0.0 && n % TESSEL_KERNEL_LANE_COLUMNS == 0) {
    int64_t slots = countLaneSlots(b, k, n);
    if (slots > 0) {
      double stored = double(slots * TESSEL_KERNEL_LANE_COLUMNS) /
                      double(k * n);
      double speedup =
          1.0 / (stored / (kUnstructuredLaneRate * laneRows)) / denseGain;
      if (speedup > best.speedup)
        best = {1, 0, 0, true, stored, speedup, best.zeros};
    }
  }
  // N:M: the fewest n for m = 4 and 8 that hold every group (weights
  // pruned 2:4, 1:4, 4:8 ...), when the kernel takes that n.
  for (int64_t m : {4, 8}) {
    if (k % m != 0)
      continue;
    int64_t most = maxPerGroup(b, k, n, m);
    if (most == 0 || most >= m)
      continue;
    double density = double(most) / double(m);
    double speedup =
        1.0 / (density / (nmRateRatio(table, density) * lanesUsed) + overhead) /
        denseGain;
    if (speedup > best.speedup)
      best = {1, most, m, false, density, speedup, best.zeros};
    // The lane order reads A and writes C in place: no moves.
    if (laneRows > 0.0 && n % TESSEL_KERNEL_LANE_COLUMNS == 0 &&
        TESSEL_KERNEL_LANE_COLUMNS % m == 0) {
      double lanesSpeedup =
          1.0 / (density / (laneOrderRateRatio(density) * laneRows)) /
          denseGain;
      if (lanesSpeedup > best.speedup)
        best = {1, most, m, true, density, lanesSpeedup, best.zeros};
    }
  }
  return best;
}

/// The ops' n_of_m for a choice (null: blocks of r).
DenseI64ArrayAttr nOfMAttr(OpBuilder &b, const Choice &c) {
  return c.nmN ? b.getDenseI64ArrayAttr({c.nmN, c.nmM}) : DenseI64ArrayAttr();
}

struct SparsifyWeightsPass
    : tessel::impl::TesselSparsifyWeightsBase<SparsifyWeightsPass> {
  using Base::Base;

  /// moved-element-cost, or where it is negative (the default) the
  /// target's measured value.
  double movedCost() const {
    return movedElementCost >= 0.0
               ? double(movedElementCost)
               : kernelRates(rateTable(vectorBits, fmaBits, laneOrder))
                     .movedElementCost;
  }

  void runOnOperation() override {
    if (vectorBits < 32) {
      getOperation()->emitError() << "vector-bits must be at least 32";
      return signalPassFailure();
    }
    if (std::isnan(movedElementCost)) {
      getOperation()->emitError() << "moved-element-cost must be a number";
      return signalPassFailure();
    }
    if (!(minSpeedup > 0.0)) {
      getOperation()->emitError() << "min-speedup must be positive";
      return signalPassFailure();
    }
    FailureOr<std::unique_ptr<llvm::raw_fd_ostream>> opened =
        openSparsityReport(report, getOperation());
    if (failed(opened))
      return signalPassFailure();
    std::unique_ptr<llvm::raw_fd_ostream> out = std::move(*opened);
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (isa<linalg::MatmulOp, linalg::BatchMatmulOp,
              linalg::Conv2DNhwcFhwcOp>(op))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (Operation *op : ops)
      if (auto conv = dyn_cast<linalg::Conv2DNhwcFhwcOp>(op))
        rewriteConv(rewriter, conv, out.get());
      else
        rewrite(rewriter, cast<linalg::LinalgOp>(op), out.get());
  }

  /// A convolution with a constant f32 filter and static channel counts
  /// and output size, its filter as `B`, the `(KH*KW*C) x F` matrix
  /// `B[(kh*KW + kw)*C + c][f] = filter[f][kh][kw][c]`. A 1x1, stride-1 one
  /// is the matmul of its pixels (N*H*W x C) by `B`: the matmul's analysis
  /// and op, on the reshaped operands. Any other becomes
  /// tessel.sparse_conv2d, a zero tensor.pad of its input absorbed.
  void rewriteConv(IRRewriter &rewriter, linalg::Conv2DNhwcFhwcOp op,
                   llvm::raw_ostream *out) const {
    Value input = op.getInputs()[0], filter = op.getInputs()[1];
    DenseElementsAttr weights;
    if (!matchPattern(filter, m_Constant(&weights)))
      return;
    auto inTy = dyn_cast<RankedTensorType>(input.getType());
    auto fTy = cast<RankedTensorType>(weights.getType());
    auto cTy = dyn_cast<RankedTensorType>(op.getOutputs()[0].getType());
    if (!inTy || !cTy || !inTy.getElementType().isF32() ||
        !fTy.getElementType().isF32() || !cTy.getElementType().isF32() ||
        !fTy.hasStaticShape() || ShapedType::isDynamic(cTy.getDimSize(1)) ||
        ShapedType::isDynamic(cTy.getDimSize(2)) ||
        ShapedType::isDynamic(inTy.getDimSize(3)))
      return;
    int64_t f = fTy.getDimSize(0), kh = fTy.getDimSize(1),
            kw = fTy.getDimSize(2), c = fTy.getDimSize(3);
    int64_t oh = cTy.getDimSize(1), ow = cTy.getDimSize(2);
    int64_t k = kh * kw * c;
    if (k == 0 || f == 0 || oh == 0 || ow == 0 || inTy.getDimSize(3) != c)
      return;
    SmallVector<int64_t> strides(op.getStrides().getValues<int64_t>());
    SmallVector<int64_t> dilations(op.getDilations().getValues<int64_t>());
    // The filter is F rows of K: B is its transpose.
    std::vector<float> b(size_t(k * f));
    {
      auto values = weights.getValues<float>();
      auto it = values.begin();
      for (int64_t ff = 0; ff < f; ++ff)
        for (int64_t kk = 0; kk < k; ++kk, ++it)
          b[size_t(kk * f + ff)] = *it;
    }
    int64_t batch = inTy.getDimSize(0);
    int64_t pixels = ShapedType::isDynamic(batch) ? ShapedType::kDynamic
                                                  : batch * oh * ow;
    // 1x1, stride 1: the same pixels on both sides.
    if (kh == 1 && kw == 1 && strides == ArrayRef<int64_t>{1, 1} &&
        inTy.getDimSize(1) == oh && inTy.getDimSize(2) == ow) {
      SmallVector<ReassociationIndices> flat = {{0, 1, 2}, {3}};
      emit(rewriter, op, b, k, f, pixels, out,
           [&](Value v) -> Value {
             return tensor::CollapseShapeOp::create(rewriter, op.getLoc(), v,
                                                    flat);
           },
           [&](Value v) -> Value {
             return tensor::ExpandShapeOp::create(rewriter, op.getLoc(), cTy,
                                                  v, flat);
           });
      return;
    }
    // The kernel's plane rows (SparseConvF32.c): OW rounded up to whole
    // vectors when that wastes at most a sixth, else OW, unaligned.
    int64_t lanes = std::max<int64_t>(1, vectorBits / 32);
    int64_t wv = (ow + lanes - 1) / lanes * lanes;
    int64_t wq = (wv - ow) * 6 <= ow ? wv : ow;
    double lanesUsed = double(ow) / double(wq) *
                       (wq % lanes == 0 ? 1.0 : kUnalignedRate);
    // Moved: KW planes of the input rows each output row reads (phases of
    // the rows its filter rows read), and the output.
    int64_t rowsRead = 0;
    for (int64_t ph = 0; ph < strides[0]; ++ph)
      for (int64_t r = 0; r < kh; ++r)
        if (r * dilations[0] % strides[0] == ph) {
          ++rowsRead;
          break;
        }
    double moved = double(kw * rowsRead * c * wq + ow * f) * double(oh);
    double overhead = movedCost() * moved / double(oh * ow * k * f);
    int64_t tile = winogradConvTile(kh, kw, strides, dilations, c, f, oh, ow,
                                    winogradMinChannels, batch);
    std::optional<Choice> choice =
        choose(op, b, k, f, pixels, lanesUsed, overhead, winogradGain(tile),
               tile ? " dense=winograd" : "", out);
    if (!choice)
      return;
    Location loc = op.getLoc();
    rewriter.setInsertionPoint(op);
    SmallVector<int64_t> pad =
        absorbZeroPad(input).value_or(SmallVector<int64_t>{});
    auto [ptr, ks, vals] = blockConstants(rewriter, loc, b, k, f, *choice);
    InitEpilogue epi = analyzeInit(op.getOutputs()[0]);
    auto sp = SparseConv2DOp::create(
        rewriter, loc, TypeRange{epi.init.getType()}, input, ptr, ks, vals,
        epi.bias, epi.init, rewriter.getDenseI64ArrayAttr({kh, kw}),
        rewriter.getDenseI64ArrayAttr(strides),
        rewriter.getDenseI64ArrayAttr(dilations),
        pad.empty() ? DenseI64ArrayAttr() : rewriter.getDenseI64ArrayAttr(pad),
        rewriter.getI64IntegerAttr(choice->r),
        rewriter.getUnitAttr(), // each column's k ascend, either packing
        nOfMAttr(rewriter, *choice), epi.accumulate ? rewriter.getUnitAttr() : nullptr, FloatAttr(),
        FloatAttr());
    rewriter.replaceOp(op, sp.getResult()[0]);
  }

  /// The matmul as sparse_matmul when the weights are constant, the shapes
  /// fit and the cost model says so; a report line either way.
  void rewrite(IRRewriter &rewriter, linalg::LinalgOp op,
               llvm::raw_ostream *out) const {
    bool batched = isa<linalg::BatchMatmulOp>(op);
    if (auto mm = dyn_cast<linalg::MatmulOp>(op.getOperation());
        mm && mm.hasUserDefinedMaps())
      return;
    if (auto bm = dyn_cast<linalg::BatchMatmulOp>(op.getOperation());
        bm && bm.hasUserDefinedMaps())
      return;
    Value a = op.getDpsInputs()[0], bv = op.getDpsInputs()[1];
    Value init = op.getDpsInits()[0];
    DenseElementsAttr weights;
    if (!matchPattern(bv, m_Constant(&weights)))
      return;
    auto aTy = dyn_cast<RankedTensorType>(a.getType());
    auto bTy = dyn_cast<RankedTensorType>(weights.getType());
    auto cTy = dyn_cast<RankedTensorType>(init.getType());
    if (!aTy || !cTy || !bTy.hasStaticShape() ||
        !aTy.getElementType().isF32() || !bTy.getElementType().isF32() ||
        !cTy.getElementType().isF32())
      return;
    // One batch entry: the 2-D problem (tosa.matmul makes batch 1).
    int64_t lead = batched ? 1 : 0;
    if (batched && (aTy.getDimSize(0) != 1 || bTy.getDimSize(0) != 1 ||
                    cTy.getDimSize(0) != 1))
      return;
    int64_t k = bTy.getDimSize(lead), n = bTy.getDimSize(lead + 1);
    if (ShapedType::isDynamic(aTy.getDimSize(lead + 1)) ||
        ShapedType::isDynamic(cTy.getDimSize(lead + 1)) || k == 0 || n == 0)
      return;
    std::vector<float> b(weights.getValues<float>().begin(),
                         weights.getValues<float>().end());
    SmallVector<ReassociationIndices> drop = {{0, 1}, {2}};
    emit(rewriter, op, b, k, n, aTy.getDimSize(lead), out,
         [&](Value v) -> Value {
           if (!batched)
             return v;
           return tensor::CollapseShapeOp::create(rewriter, op.getLoc(), v,
                                                  drop);
         },
         [&](Value v) -> Value {
           if (!batched)
             return v;
           return tensor::ExpandShapeOp::create(rewriter, op.getLoc(), cTy, v,
                                                drop);
         });
  }

  /// The analysis of `b` (K x N, row-major) for `op` (M rows; dynamic:
  /// ShapedType::kDynamic) and its report line (`note` appended): the
  /// choice when it pays.
  std::optional<Choice> choose(Operation *op, const std::vector<float> &b,
                               int64_t k, int64_t n, int64_t m,
                               double lanesUsed, double overhead,
                               double denseGain, StringRef note,
                               llvm::raw_ostream *out,
                               bool laneOrderFits = false) const {
    int64_t lanes = std::max<int64_t>(1, vectorBits / 32);
    double laneRows = laneOrder && laneOrderFits && vectorBits == 512
                          ? laneTileRowsUsed(m)
                          : 0.0;
    Choice c =
        analyze(b, k, n, m, lanesUsed * tileRowsFactor(m, lanes), overhead,
                denseGain, rateTable(vectorBits, fmaBits, laneOrder), laneRows);
    bool sparse = c.r && c.speedup >= minSpeedup;
    if (out) {
      *out << op->getLoc() << ": " << op->getName().getStringRef() << " M="
           << (ShapedType::isDynamic(m) ? std::string("?")
                                        : std::to_string(m))
           << " K=" << k << " N=" << n << note
           << llvm::format(" zeros=%.3f", c.zeros);
      if (c.nmN || c.lanes)
        *out << " best="
             << (c.nmN ? std::to_string(c.nmN) + ":" + std::to_string(c.nmM)
                       : std::string("1x1"))
             << (c.lanes ? " lanes" : "")
             << llvm::format(" density=%.3f predicted=%.2fx", c.density,
                             c.speedup);
      else if (c.r)
        *out << " best=" << c.r << "x1"
             << llvm::format(" density=%.3f predicted=%.2fx", c.density,
                             c.speedup);
      *out << " -> " << (sparse ? "sparse" : "dense") << "\n";
    }
    if (!sparse)
      return std::nullopt;
    return c;
  }

  /// `b`'s nonzero blocks as the choice stores them (blocks of `r`, or
  /// N:M), as the kernels' constants: block_ptr, block_k, values.
  std::tuple<Value, Value, Value>
  blockConstants(IRRewriter &rewriter, Location loc,
                 const std::vector<float> &b, int64_t k, int64_t n,
                 const Choice &choice) const {
    Blocks blocks = choice.lanes ? packLanes(b, k, n, choice.nmN, choice.nmM)
                    : choice.nmN ? packNOfM(b, k, n, choice.nmN, choice.nmM)
                                 : packBlocks(b, k, n, choice.r);
    auto i32Vec = [&](ArrayRef<int32_t> v) -> Value {
      auto ty = RankedTensorType::get({int64_t(v.size())},
                                      rewriter.getI32Type());
      return arith::ConstantOp::create(rewriter, loc, ty,
                                       DenseElementsAttr::get(ty, v));
    };
    auto valTy = RankedTensorType::get({int64_t(blocks.values.size())},
                                       rewriter.getF32Type());
    Value vals = arith::ConstantOp::create(
        rewriter, loc, valTy,
        DenseElementsAttr::get(valTy, ArrayRef<float>(blocks.values)));
    return {i32Vec(blocks.ptr), i32Vec(blocks.k), vals};
  }

  /// The analysis of a matmul's `b`, and when it pays the sparse_matmul
  /// that replaces it: `to2d` makes the 2-D input and init from the op's,
  /// `from2d` the op's result from the 2-D one.
  void emit(IRRewriter &rewriter, linalg::LinalgOp op,
            const std::vector<float> &b, int64_t k, int64_t n, int64_t m,
            llvm::raw_ostream *out, function_ref<Value(Value)> to2d,
            function_ref<Value(Value)> from2d) const {
    // The kernel vectorizes over rows: M rows fill M / roundup(M, lanes)
    // of its vectors (a dynamic M is taken as large). It moves M x K
    // elements in and M x N out.
    int64_t lanes = std::max<int64_t>(1, vectorBits / 32);
    double lanesUsed =
        ShapedType::isDynamic(m) || m <= 0
            ? 1.0
            : double(m) / double((m + lanes - 1) / lanes * lanes);
    double overhead = movedCost() * (1.0 / double(k) + 1.0 / double(n));
    std::optional<Choice> c = choose(op, b, k, n, m, lanesUsed, overhead, 1.0,
                                     "", out, /*laneOrderFits=*/true);
    if (!c)
      return;
    Location loc = op.getLoc();
    rewriter.setInsertionPoint(op);
    auto [ptr, ks, vals] = blockConstants(rewriter, loc, b, k, n, *c);
    InitEpilogue epi = analyzeInit(op.getDpsInits()[0]);
    Value init2 = to2d(epi.init);
    auto sp = SparseMatmulOp::create(
        rewriter, loc, TypeRange{init2.getType()}, to2d(op.getDpsInputs()[0]),
        ptr, ks, vals, epi.bias, init2, rewriter.getI64IntegerAttr(c->r),
        rewriter.getUnitAttr(), // each column's k ascend, either packing
        nOfMAttr(rewriter, *c), c->lanes ? rewriter.getUnitAttr() : nullptr,
        epi.accumulate ? rewriter.getUnitAttr() : nullptr, FloatAttr(),
        FloatAttr());
    rewriter.replaceOp(op, from2d(sp.getResult()[0]));
  }
};

} // namespace
