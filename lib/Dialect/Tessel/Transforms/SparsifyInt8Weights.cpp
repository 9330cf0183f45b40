//===- SparsifyInt8Weights.cpp - mostly-zero int8 weights -> quad blocks ---===//
//
// Static weight sparsity for int8 (docs/sparsity.md, "int8"): a
// tessel.packed_matmul_i8 or tessel.packed_matmul_i8_requant (matmul or
// convolution) whose constant VNNI-packed weights are mostly zeros gets
// them as quad blocks (4 consecutive k x 1 or 4 columns that hold a
// nonzero), which the sparse
// int8 kernels multiply, when the cost model predicts that they beat the
// dense kernel. Runs after tessel-fuse-requantize, so that the epilogue is
// already the op's: the kernels finish the sums exactly as the dense one.
//
//===----------------------------------------------------------------------===//
#include "SparsityReport.h"
#include "tessel/Dialect/Tessel/IR/TesselDialect.h"
#include "tessel/Dialect/Tessel/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <vector>

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELSPARSIFYINT8WEIGHTS
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {

/// The sparse kernel's rate on the quads its blocks store (blocks x R
/// vpdpbusd per 16 rows) over the dense kernel's on all of them, and the
/// cost of the moves (the rows into the kernel's quad-major layout, the
/// sums transposed back for the epilogue), in dense vpdpbusd per output
/// (kPerK / K of the dense time) and per input element (kPerN / N):
/// bench/sparse_gemm_i8.c on AMD Zen 4 (2026-11-29), BERT-base's and
/// ResNet-50's shapes, quad densities 0.1-0.6. A least-squares fit gives
/// rates 0.47 and 0.93, 9-34 per output and 0-6 per input (within 10% at
/// the median, 40% at worst, over-predicting small-K shapes): these are
/// rounded towards dense.
constexpr double kRateR1 = 0.45;
constexpr double kRateR4 = 0.80;
constexpr double kPerK = 30.0;
constexpr double kPerN = 6.0;

/// The dense kernel's packed weights `P x G x NR x 4` as B (K x N,
/// row-major).
std::vector<int8_t> unpack(DenseElementsAttr packed, int64_t k, int64_t n) {
  ArrayRef<int64_t> s = cast<ShapedType>(packed.getType()).getShape();
  int64_t groups = s[1], nr = s[2];
  std::vector<int8_t> b(size_t(k * n), 0);
  auto values = packed.getValues<int8_t>();
  auto it = values.begin();
  for (int64_t p = 0; p < s[0]; ++p)
    for (int64_t g = 0; g < groups; ++g)
      for (int64_t j = 0; j < nr; ++j)
        for (int64_t t = 0; t < 4; ++t, ++it) {
          int64_t kk = g * 4 + t, c = p * nr + j;
          if (kk < k && c < n)
            b[size_t(kk * n + c)] = *it;
        }
  return b;
}

/// Whether the quad at `g` of columns [c0, c0 + r) holds a nonzero.
bool quadHasNonzero(const std::vector<int8_t> &b, int64_t k, int64_t n,
                    int64_t g, int64_t c0, int64_t r) {
  for (int64_t kk = 4 * g; kk < std::min(k, 4 * g + 4); ++kk)
    for (int64_t c = c0; c < std::min(n, c0 + r); ++c)
      if (b[size_t(kk * n + c)] != 0)
        return true;
  return false;
}

/// B's quad blocks of `r` columns: the kernel's block_ptr, block_k and
/// bytes (nnz x r x 4).
struct QuadBlocks {
  std::vector<int32_t> ptr, k;
  std::vector<int8_t> bytes;
};

QuadBlocks packQuads(const std::vector<int8_t> &b, int64_t k, int64_t n,
                     int64_t r) {
  QuadBlocks out;
  int64_t groups = (k + 3) / 4;
  out.ptr.push_back(0);
  for (int64_t c0 = 0; c0 < n; c0 += r) {
    for (int64_t g = 0; g < groups; ++g) {
      if (!quadHasNonzero(b, k, n, g, c0, r))
        continue;
      out.k.push_back(int32_t(g));
      for (int64_t c = c0; c < c0 + r; ++c)
        for (int64_t kk = 4 * g; kk < 4 * g + 4; ++kk)
          out.bytes.push_back(kk < k && c < n ? b[size_t(kk * n + c)] : 0);
    }
    out.ptr.push_back(int32_t(out.k.size()));
  }
  return out;
}

struct SparsifyInt8WeightsPass
    : tessel::impl::TesselSparsifyInt8WeightsBase<SparsifyInt8WeightsPass> {
  using Base::Base;

  void runOnOperation() override {
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
      if (auto mm = dyn_cast<PackedMatmulI8Op>(op); mm && !mm.isSparse())
        ops.push_back(op);
      if (auto rq = dyn_cast<PackedMatmulI8RequantOp>(op); rq && !rq.isSparse())
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      if (auto mm = dyn_cast<PackedMatmulI8Op>(op))
        rewrite(mm, out.get());
      else
        rewrite(cast<PackedMatmulI8RequantOp>(op), out.get());
    }
  }

  /// Either op: the int32 one (a QDQ model's MatMul whose float chain did
  /// not fuse) or the requantizing one; their sparse forms are the same.
  template <typename OpT>
  void rewrite(OpT op, llvm::raw_ostream *out) const {
    DenseElementsAttr packed;
    auto aTy = dyn_cast<RankedTensorType>(op.getInput().getType());
    auto cTy = dyn_cast<RankedTensorType>(op.getInit().getType());
    if (!aTy || !cTy || !matchPattern(op.getPackedB(), m_Constant(&packed)) ||
        cast<ShapedType>(packed.getType()).getRank() != 4)
      return; // batched weights, or not constant: the dense kernel
    int64_t n = cTy.getShape().back();
    int64_t k = op.isConvolution()
                    ? (*op.getKernelSize())[0] * (*op.getKernelSize())[1] *
                          aTy.getDimSize(3)
                    : aTy.getDimSize(2);
    if (ShapedType::isDynamic(n) || ShapedType::isDynamic(k) || k <= 0 ||
        n <= 0)
      return;
    int64_t m = 1;
    for (int64_t d : cTy.getShape().drop_back())
      m = ShapedType::isDynamic(d) || ShapedType::isDynamic(m)
              ? ShapedType::kDynamic
              : m * d;
    std::vector<int8_t> b = unpack(packed, k, n);
    int64_t zeros = 0;
    for (int8_t v : b)
      zeros += v == 0;
    // The best block size: the kernel's rate on the quads it stores (on
    // the lanes the rows fill: rows go 16 to a vector), plus the moves.
    double lanesUsed = ShapedType::isDynamic(m)
                           ? 1.0
                           : double(m) / double((m + 15) / 16 * 16);
    double overhead = kPerK / double(k) + kPerN / double(n);
    int64_t groups = (k + 3) / 4, bestR = 0;
    double bestSpeedup = 0.0, bestDensity = 1.0;
    for (int64_t r : {4, 1}) {
      int64_t blocks = 0;
      for (int64_t c0 = 0; c0 < n; c0 += r)
        for (int64_t g = 0; g < groups; ++g)
          blocks += quadHasNonzero(b, k, n, g, c0, r);
      if (blocks == 0 || blocks * r >= groups * n)
        continue; // all zeros (no empty arrays), or no quad to skip
      double density = double(blocks * r) / double(groups * n);
      double rate = r == 1 ? kRateR1 : kRateR4;
      double speedup = 1.0 / (density / (rate * lanesUsed) + overhead);
      if (speedup > bestSpeedup)
        bestR = r, bestSpeedup = speedup, bestDensity = density;
    }
    // The kernels are VNNI's: on narrower targets the dense one stays.
    bool sparse = bestR && bestSpeedup >= minSpeedup && vectorBits >= 512;
    if (out) {
      *out << op.getLoc() << ": " << op->getName().getStringRef() << " M="
           << (ShapedType::isDynamic(m) ? std::string("?")
                                        : std::to_string(m))
           << " K=" << k << " N=" << n
           << llvm::format(" zeros=%.3f", double(zeros) / double(k * n));
      if (bestR)
        *out << " best=quad x" << bestR
             << llvm::format(" density=%.3f predicted=%.2fx", bestDensity,
                             bestSpeedup);
      if (vectorBits < 512)
        *out << " (no VNNI kernels below 512-bit vectors)";
      *out << " -> " << (sparse ? "sparse" : "dense") << "\n";
    }
    if (!sparse)
      return;
    QuadBlocks q = packQuads(b, k, n, bestR);
    OpBuilder builder(op);
    Location loc = op.getLoc();
    auto i32Vec = [&](ArrayRef<int32_t> v) -> Value {
      auto ty = RankedTensorType::get({int64_t(v.size())},
                                      builder.getI32Type());
      return arith::ConstantOp::create(builder, loc, ty,
                                       DenseElementsAttr::get(ty, v));
    };
    auto bytesTy = RankedTensorType::get({int64_t(q.k.size()), bestR, 4},
                                         builder.getIntegerType(8));
    Value bytes = arith::ConstantOp::create(
        builder, loc, bytesTy,
        DenseElementsAttr::get(bytesTy, ArrayRef<int8_t>(q.bytes)));
    op.getPackedBMutable().assign(bytes);
    op.getBlockPtrMutable().assign(i32Vec(q.ptr));
    op.getBlockKMutable().assign(i32Vec(q.k));
    op.setBlockSize(bestR);
  }
};

} // namespace
