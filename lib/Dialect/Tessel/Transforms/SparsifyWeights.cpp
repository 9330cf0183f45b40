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
#include "tessel/Dialect/Tessel/IR/TesselDialect.h"
#include "tessel/Dialect/Tessel/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
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

/// The sparse kernel's rate on the elements it stores (blocks x R
/// multiply-adds per row) over the dense kernel's rate, per block size R:
/// bench/sparse_gemm.c on BERT-base projection shapes at 10-50% density,
/// one thread (docs/sparsity.md; R = 2 and 8 between their neighbours),
/// the lower end of what was measured so that a layer goes sparse only
/// where it pays. Measured on an Intel Sapphire Rapids with the AVX-512
/// and the AVX2 builds of the kernels (R = 1: 0.28-0.38 and 0.30-0.48;
/// R = 4: 0.47-0.78 and 0.48-0.90): one table, the lower of the two.
double rateRatio(int64_t r) {
  switch (r) {
  case 1:
    return 0.28;
  case 2:
    return 0.34;
  default:
    return 0.45;
  }
}

/// The kernel transposes the activations (M x K) before its products; when
/// they outgrow the L2 (about 1 MiB: a CNN's pixels), that pass streams
/// from memory and costs, per output column, about this many dense
/// multiply-adds per activation (bench/sparse_gemm.c on ResNet-50's
/// pointwise and im2col shapes, M = 3136 x K = 64...576, Sapphire Rapids:
/// 110-165). Within the L2 it is lost in the products.
constexpr double kStreamedTransposeCost = 128.0;
constexpr int64_t kL2Floats = 256 * 1024;

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

/// What the analysis found for one matmul.
struct Choice {
  int64_t r = 0;        // best block size
  double density = 1.0; // stored fraction of B at that size
  double speedup = 0.0; // predicted, over the dense kernel
  double zeros = 0.0;   // zero fraction of B
};

/// `lanesUsed`: the fraction of the kernel's vector lanes the rows fill;
/// `overhead`: the transposition's share of the dense kernel's time.
Choice analyze(ArrayRef<float> b, int64_t k, int64_t n, double lanesUsed,
               double overhead) {
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
    // the lanes the rows fill, plus the transposition.
    double speedup =
        1.0 / (density / (rateRatio(r) * lanesUsed) + overhead);
    if (speedup > best.speedup)
      best = {r, density, speedup, best.zeros};
  }
  return best;
}

struct SparsifyWeightsPass
    : tessel::impl::TesselSparsifyWeightsBase<SparsifyWeightsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (vectorBits < 32) {
      getOperation()->emitError() << "vector-bits must be at least 32";
      return signalPassFailure();
    }
    if (!(minSpeedup > 0.0)) {
      getOperation()->emitError() << "min-speedup must be positive";
      return signalPassFailure();
    }
    std::unique_ptr<llvm::raw_fd_ostream> out;
    if (!report.empty()) {
      std::error_code ec;
      // Appended: one file for every module a driver compiles (and every
      // split of a test input); the driver starts it empty.
      out = std::make_unique<llvm::raw_fd_ostream>(
          report, ec, llvm::sys::fs::OF_Text | llvm::sys::fs::OF_Append);
      if (ec) {
        getOperation()->emitError()
            << "cannot write the sparsity report '" << report
            << "': " << ec.message();
        return signalPassFailure();
      }
    }
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (isa<linalg::MatmulOp, linalg::BatchMatmulOp,
              linalg::Conv2DNhwcFhwcOp>(op))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (Operation *op : ops)
      if (auto conv = dyn_cast<linalg::Conv2DNhwcFhwcOp>(op))
        rewriteConv1x1(rewriter, conv, out.get());
      else
        rewrite(rewriter, cast<linalg::LinalgOp>(op), out.get());
  }

  /// A 1x1, stride-1 NHWC convolution with a constant filter is the matmul
  /// of its pixels (N*H*W x C) by the filter's transpose (C x F): the same
  /// analysis and op, on the reshaped operands.
  void rewriteConv1x1(IRRewriter &rewriter, linalg::Conv2DNhwcFhwcOp op,
                      llvm::raw_ostream *out) const {
    Value input = op.getInputs()[0], filter = op.getInputs()[1];
    Value init = op.getOutputs()[0];
    DenseElementsAttr weights;
    if (!matchPattern(filter, m_Constant(&weights)))
      return;
    auto inTy = dyn_cast<RankedTensorType>(input.getType());
    auto fTy = cast<RankedTensorType>(weights.getType());
    auto cTy = dyn_cast<RankedTensorType>(init.getType());
    if (!inTy || !cTy || !inTy.getElementType().isF32() ||
        !fTy.getElementType().isF32() || !cTy.getElementType().isF32() ||
        !fTy.hasStaticShape() || fTy.getDimSize(1) != 1 ||
        fTy.getDimSize(2) != 1 ||
        !llvm::all_of(op.getStrides().getValues<int64_t>(),
                      [](int64_t s) { return s == 1; }))
      return;
    // The pixels must be the same on both sides (1x1, stride 1: H and W
    // of the output are the input's) and C, F static.
    for (int d = 1; d < 3; ++d)
      if (inTy.getDimSize(d) != cTy.getDimSize(d) ||
          ShapedType::isDynamic(inTy.getDimSize(d)))
        return;
    int64_t f = fTy.getDimSize(0), k = fTy.getDimSize(3);
    if (inTy.getDimSize(3) != k || cTy.getDimSize(3) != f || k == 0 || f == 0)
      return;
    // B[c][f] = filter[f][0][0][c].
    std::vector<float> b(size_t(k * f));
    {
      auto values = weights.getValues<float>();
      auto it = values.begin();
      for (int64_t ff = 0; ff < f; ++ff)
        for (int64_t c = 0; c < k; ++c, ++it)
          b[size_t(c * f + ff)] = *it;
    }
    SmallVector<ReassociationIndices> pixels = {{0, 1, 2}, {3}};
    emit(rewriter, op, b, k, f, inTy.getDimSize(0) == ShapedType::kDynamic
                                    ? ShapedType::kDynamic
                                    : inTy.getDimSize(0) * inTy.getDimSize(1) *
                                          inTy.getDimSize(2),
         out, [&](Value v) -> Value {
           return tensor::CollapseShapeOp::create(rewriter, op.getLoc(), v,
                                                  pixels);
         },
         [&](Value v) -> Value {
           return tensor::ExpandShapeOp::create(rewriter, op.getLoc(), cTy, v,
                                                pixels);
         });
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
  /// ShapedType::kDynamic), its report line, and when it pays the
  /// sparse_matmul that replaces it: `to2d` makes the 2-D input and init
  /// from the op's, `from2d` the op's result from the 2-D one.
  void emit(IRRewriter &rewriter, linalg::LinalgOp op,
            const std::vector<float> &b, int64_t k, int64_t n, int64_t m,
            llvm::raw_ostream *out, function_ref<Value(Value)> to2d,
            function_ref<Value(Value)> from2d) const {
    // The kernel vectorizes over rows: M rows fill M / roundup(M, lanes)
    // of its vectors (a dynamic M is taken as large).
    int64_t lanes = std::max<int64_t>(1, vectorBits / 32);
    double lanesUsed =
        ShapedType::isDynamic(m) || m <= 0
            ? 1.0
            : double(m) / double((m + lanes - 1) / lanes * lanes);
    double overhead = !ShapedType::isDynamic(m) && m * k > kL2Floats
                          ? kStreamedTransposeCost / double(n)
                          : 0.0;
    Choice c = analyze(b, k, n, lanesUsed, overhead);
    bool sparse = c.r && c.speedup >= minSpeedup;
    if (out) {
      *out << op.getLoc() << ": " << op->getName().getStringRef() << " M="
           << (ShapedType::isDynamic(m) ? std::string("?")
                                        : std::to_string(m))
           << " K=" << k << " N=" << n
           << llvm::format(" zeros=%.3f", c.zeros);
      if (c.r)
        *out << " best=" << c.r << "x1"
             << llvm::format(" density=%.3f predicted=%.2fx", c.density,
                             c.speedup);
      *out << " -> " << (sparse ? "sparse" : "dense") << "\n";
    }
    if (!sparse)
      return;

    Location loc = op.getLoc();
    rewriter.setInsertionPoint(op);
    Blocks blocks = packBlocks(b, k, n, c.r);
    auto i32Vec = [&](ArrayRef<int32_t> v) -> Value {
      auto ty = RankedTensorType::get({int64_t(v.size())},
                                      rewriter.getI32Type());
      return arith::ConstantOp::create(rewriter, loc, ty,
                                       DenseElementsAttr::get(ty, v));
    };
    auto valTy = RankedTensorType::get({int64_t(blocks.values.size())},
                                       rewriter.getF32Type());
    Value ptr = i32Vec(blocks.ptr), ks = i32Vec(blocks.k);
    Value vals = arith::ConstantOp::create(
        rewriter, loc, valTy,
        DenseElementsAttr::get(valTy, ArrayRef<float>(blocks.values)));
    InitEpilogue epi = analyzeInit(op.getDpsInits()[0]);
    Value init2 = to2d(epi.init);
    auto sp = SparseMatmulOp::create(
        rewriter, loc, TypeRange{init2.getType()}, to2d(op.getDpsInputs()[0]),
        ptr, ks, vals, epi.bias, init2, rewriter.getI64IntegerAttr(c.r),
        epi.accumulate ? rewriter.getUnitAttr() : nullptr, FloatAttr(),
        FloatAttr());
    rewriter.replaceOp(op, from2d(sp.getResult()[0]));
  }
};

} // namespace
