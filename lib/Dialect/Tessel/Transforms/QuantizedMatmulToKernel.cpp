//===- QuantizedMatmulToKernel.cpp - int8 matmuls -> packed_matmul_i8 -----===//
//
// tessel-fold-qdq turns the product of two dequantized operands into an
// i8 x i8 -> i32 tosa.matmul, which tosa-to-linalg makes a
// linalg.quantized_batch_matmul (zero points) or an integer
// linalg.batch_matmul (none). With constant weights, those become
// tessel.packed_matmul_i8: the weights packed here, at compile time, in the
// VNNI layout of the kernel (Kernels.td: matmul_u8s8_i32), with their
// column sums for the zero-point correction. docs/quantization.md.
//
//===----------------------------------------------------------------------===//
#include "QuantizedMatmulToKernel.h"

#include "tessel/Dialect/Tessel/IR/TesselDialect.h"
#include "tessel/Kernels/tessel_kernels.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::tessel;

namespace {

constexpr int64_t kGroup = TESSEL_KERNEL_KGROUP_I8;

bool isStaticInt(Value v, unsigned width) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.hasStaticShape() && t.getElementType().isInteger(width);
}

template <typename OpT>
struct QuantizedMatmulToKernel : OpRewritePattern<OpT> {
  QuantizedMatmulToKernel(MLIRContext *ctx, int64_t nr)
      : OpRewritePattern<OpT>(ctx), nr(nr) {}

  LogicalResult matchAndRewrite(OpT op,
                                PatternRewriter &rewriter) const override {
    constexpr bool hasZeroPoints =
        std::is_same_v<OpT, linalg::QuantizedBatchMatmulOp>;
    Value a = op.getInputs()[0], b = op.getInputs()[1];
    Value init = op.getOutputs()[0];
    if (!isStaticInt(a, 8) || !isStaticInt(b, 8) || !isStaticInt(init, 32))
      return rewriter.notifyMatchFailure(op, "not a static i8 x i8 -> i32");
    if constexpr (!hasZeroPoints) {
      if (op.hasUserDefinedMaps() || op.getCast() != linalg::TypeFn::cast_signed)
        return rewriter.notifyMatchFailure(op, "maps or unsigned cast");
    }
    int64_t za = 0, zb = 0;
    if constexpr (hasZeroPoints) {
      APInt zaV, zbV;
      if (!matchPattern(op.getInputs()[2], m_ConstantInt(&zaV)) ||
          !matchPattern(op.getInputs()[3], m_ConstantInt(&zbV)))
        return rewriter.notifyMatchFailure(op, "run-time zero points");
      za = zaV.getSExtValue();
      zb = zbV.getSExtValue();
    }
    // A zero fill as init: the kernel overwrites; else it accumulates.
    bool accumulate = true;
    if (auto fill = init.getDefiningOp<linalg::FillOp>())
      if (matchPattern(fill.getInputs()[0], m_Zero())) {
        init = fill.getOutputs()[0];
        accumulate = false;
      }
    auto create = [&](Value packed, Value sums) {
      rewriter.replaceOpWithNewOp<PackedMatmulI8Op>(
          op, TypeRange{init.getType()}, a, packed, sums, init,
          rewriter.getI32IntegerAttr(int32_t(za)),
          rewriter.getI32IntegerAttr(int32_t(zb)),
          /*a_signed=*/rewriter.getUnitAttr(),
          accumulate ? rewriter.getUnitAttr() : nullptr);
    };

    DenseIntElementsAttr weights;
    if (!matchPattern(b, m_Constant(&weights))) {
      // A run-time B (attention's K^T and V in a QDQ model) is packed at
      // run time by the same layout as a linalg.pack (P x G x NR x 4 per
      // batch entry, zero-padded); the kernel sums its columns.
      Location loc = op.getLoc();
      Value zero =
          arith::ConstantOp::create(rewriter, loc, rewriter.getI8IntegerAttr(0));
      SmallVector<OpFoldResult> tiles = {rewriter.getIndexAttr(nr),
                                         rewriter.getIndexAttr(kGroup)};
      SmallVector<int64_t> innerDims = {2, 1}, outerPerm = {0, 2, 1};
      Value dest = linalg::PackOp::createDestinationTensor(
          rewriter, loc, b, tiles, innerDims, outerPerm);
      Value packed = linalg::PackOp::create(rewriter, loc, b, dest, innerDims,
                                            tiles, zero, outerPerm)
                         .getResult();
      create(packed, Value());
      return success();
    }

    auto bTy = cast<RankedTensorType>(b.getType());
    const int64_t batches = bTy.getDimSize(0), k = bTy.getDimSize(1),
                  n = bTy.getDimSize(2);
    const int64_t panels = (n + nr - 1) / nr, groups = (k + kGroup - 1) / kGroup;
    // packed[b][p][g][j][t] = B[b][g*4 + t][p*nr + j]; column sums per b.
    std::vector<int8_t> packed(batches * panels * groups * nr * kGroup, 0);
    std::vector<int32_t> sums(batches * n, 0);
    SmallVector<int8_t> values;
    values.reserve(weights.getNumElements());
    for (const APInt &v : weights.getValues<APInt>())
      values.push_back(int8_t(v.getSExtValue()));
    for (int64_t bi = 0; bi < batches; ++bi)
      for (int64_t kk = 0; kk < k; ++kk)
        for (int64_t nn = 0; nn < n; ++nn) {
          int8_t w = values[(bi * k + kk) * n + nn];
          int64_t at =
              (((bi * panels + nn / nr) * groups + kk / kGroup) * nr + nn % nr) *
                  kGroup +
              kk % kGroup;
          packed[at] = w;
          sums[bi * n + nn] += w;
        }
    Location loc = op.getLoc();
    // One batch of weights for every entry: the shared (rank-4) form.
    const bool shared = batches == 1;
    SmallVector<int64_t> packedShape = {panels, groups, nr, kGroup};
    SmallVector<int64_t> sumsShape = {n};
    if (!shared) {
      packedShape.insert(packedShape.begin(), batches);
      sumsShape.insert(sumsShape.begin(), batches);
    }
    auto packedTy = RankedTensorType::get(packedShape, rewriter.getI8Type());
    auto sumsTy = RankedTensorType::get(sumsShape, rewriter.getI32Type());
    Value packedV = arith::ConstantOp::create(
        rewriter, loc, packedTy,
        DenseElementsAttr::get(packedTy, ArrayRef<int8_t>(packed)));
    Value sumsV = arith::ConstantOp::create(
        rewriter, loc, sumsTy,
        DenseElementsAttr::get(sumsTy, ArrayRef<int32_t>(sums)));

    create(packedV, sumsV);
    return success();
  }

  int64_t nr;
};

} // namespace

void mlir::tessel::populateQuantizedMatmulToKernelPatterns(
    RewritePatternSet &patterns, int64_t nr) {
  patterns.add<QuantizedMatmulToKernel<linalg::QuantizedBatchMatmulOp>,
               QuantizedMatmulToKernel<linalg::BatchMatmulOp>>(
      patterns.getContext(), nr);
}
