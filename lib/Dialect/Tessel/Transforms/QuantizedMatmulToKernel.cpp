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
#include "QuantizedToKernels.h"

#include "tessel/Dialect/Tessel/IR/TesselDialect.h"
#include "tessel/Dialect/Tessel/Utils/ConstantData.h"
#include "tessel/Kernels/tessel_kernels.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::tessel;

namespace {

constexpr int64_t kGroup = TESSEL_KERNEL_KGROUP_I8;

} // namespace

/// Whether `v` is a statically shaped tensor of `width`-bit integers.
static bool isStaticInt(Value v, unsigned width) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.hasStaticShape() && t.getElementType().isInteger(width);
}

/// tosa-to-linalg's bias init of an integer convolution with a zero bias
/// is such a broadcast of zeros.
Value mlir::tessel::kernelInit(Value init, bool &accumulate) {
  accumulate = false;
  if (auto fill = init.getDefiningOp<linalg::FillOp>())
    if (matchPattern(fill.getInputs()[0], m_Zero()))
      return fill.getOutputs()[0];
  if (auto gen = init.getDefiningOp<linalg::GenericOp>())
    if (gen.getNumDpsInputs() == 1 && gen.getNumDpsInits() == 1 &&
        gen.getNumParallelLoops() == gen.getNumLoops() &&
        matchPattern(gen.getInputs()[0], m_Zero()) &&
        gen.getRegion().front().getOperations().size() == 1 &&
        gen.getRegion().front().getTerminator()->getOperand(0) ==
            gen.getRegion().front().getArgument(0))
      return gen.getOutputs()[0];
  accumulate = true;
  return init;
}

namespace {

/// Constant weights B[b][k][n] (`at(b, k, n)`) packed now in the kernel's
/// layout, packed[b][p][g][j][t] = B[b][g*4 + t][p*nr + j] (zero-padded;
/// rank 4 when one B serves every batch entry), with their column sums.
std::pair<Value, Value>
packConstantWeights(PatternRewriter &rewriter, Location loc, int64_t batches,
                    int64_t k, int64_t n, int64_t nr,
                    llvm::function_ref<int8_t(int64_t, int64_t, int64_t)> at) {
  const int64_t panels = (n + nr - 1) / nr, groups = (k + kGroup - 1) / kGroup;
  std::vector<int8_t> packed(batches * panels * groups * nr * kGroup, 0);
  std::vector<int32_t> sums(batches * n, 0);
  for (int64_t bi = 0; bi < batches; ++bi)
    for (int64_t kk = 0; kk < k; ++kk)
      for (int64_t nn = 0; nn < n; ++nn) {
        int8_t w = at(bi, kk, nn);
        packed[(((bi * panels + nn / nr) * groups + kk / kGroup) * nr +
                nn % nr) *
                   kGroup +
               kk % kGroup] = w;
        sums[bi * n + nn] += w;
      }
  SmallVector<int64_t> packedShape = {panels, groups, nr, kGroup};
  SmallVector<int64_t> sumsShape = {n};
  if (batches != 1) {
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
  return {packedV, sumsV};
}

} // namespace

/// A dense resource is how the ONNX importer keeps initializers; the
/// reshapes and transposes are tosa-to-linalg's form of a 1x1
/// convolution's weights as a matmul operand, which canonicalization folds
/// only after the kernel patterns have run.
std::optional<std::vector<int8_t>>
mlir::tessel::constantInt8Values(Value v) {
  if (auto e = v.getDefiningOp<tensor::ExpandShapeOp>())
    return constantInt8Values(e.getSrc());
  if (auto c = v.getDefiningOp<tensor::CollapseShapeOp>())
    return constantInt8Values(c.getSrc());
  if (auto t = v.getDefiningOp<linalg::TransposeOp>()) {
    auto inTy = dyn_cast<RankedTensorType>(t.getInput().getType());
    std::optional<std::vector<int8_t>> in = constantInt8Values(t.getInput());
    if (!in || !inTy || !inTy.hasStaticShape())
      return std::nullopt;
    return transposeRowMajor<int8_t>(*in, inTy.getShape(),
                                     t.getPermutation());
  }
  Attribute attr;
  if (!matchPattern(v, m_Constant(&attr)))
    return std::nullopt;
  if (auto dense = dyn_cast<DenseIntElementsAttr>(attr)) {
    if (!dense.getElementType().isInteger(8))
      return std::nullopt;
    std::vector<int8_t> values;
    values.reserve(dense.getNumElements());
    for (const APInt &x : dense.getValues<APInt>())
      values.push_back(int8_t(x.getSExtValue()));
    return values;
  }
  if (auto res = dyn_cast<DenseI8ResourceElementsAttr>(attr))
    if (std::optional<ArrayRef<int8_t>> data = res.tryGetAsArrayRef())
      return std::vector<int8_t>(data->begin(), data->end());
  return std::nullopt;
}

/// The constant zero points of a quantized linalg op (inputs 2 and 3 of
/// linalg.quantized_batch_matmul, ..._q convolutions), or 0 and 0 for the
/// unquantized form (two inputs); failure if they are not constants.
static LogicalResult constantZeroPoints(ValueRange inputs, int64_t &za,
                                        int64_t &zb) {
  za = zb = 0;
  if (inputs.size() < 4)
    return success();
  APInt zaV, zbV;
  if (!matchPattern(inputs[2], m_ConstantInt(&zaV)) ||
      !matchPattern(inputs[3], m_ConstantInt(&zbV)))
    return failure();
  za = zaV.getSExtValue();
  zb = zbV.getSExtValue();
  return success();
}

LogicalResult mlir::tessel::matchInt8Product(linalg::LinalgOp op,
                                             PatternRewriter &rewriter,
                                             int64_t &za, int64_t &zb) {
  SmallVector<Value> inputs = op.getDpsInputs();
  if (inputs.size() < 2 || op.getNumDpsInits() != 1 ||
      !isStaticInt(inputs[0], 8) || !isStaticInt(inputs[1], 8) ||
      !isStaticInt(op.getDpsInits()[0], 32))
    return rewriter.notifyMatchFailure(op, "not a static i8 x i8 -> i32");
  if (failed(constantZeroPoints(inputs, za, zb)))
    return rewriter.notifyMatchFailure(op, "run-time zero points");
  return success();
}

namespace {

/// The convolution form's window (null attributes: a matmul).
struct Window {
  DenseI64ArrayAttr kernelSize, strides, dilations;
};

PackedMatmulI8Op createKernel(PatternRewriter &rewriter, Location loc, Value a,
                              Value packed, Value sums, Value init,
                              bool accumulate, int64_t za, int64_t zb,
                              Window window = {}) {
  return PackedMatmulI8Op::create(
      rewriter, loc, TypeRange{init.getType()}, a, packed, sums, init,
      rewriter.getI32IntegerAttr(int32_t(za)),
      rewriter.getI32IntegerAttr(int32_t(zb)),
      /*a_signed=*/rewriter.getUnitAttr(),
      accumulate ? rewriter.getUnitAttr() : nullptr, window.kernelSize,
      window.strides, window.dilations, /*block_ptr=*/Value(),
      /*block_k=*/Value(), /*block_size=*/IntegerAttr());
}

template <typename OpT>
struct QuantizedMatmulToKernel : OpRewritePattern<OpT> {
  QuantizedMatmulToKernel(MLIRContext *ctx, int64_t nr)
      : OpRewritePattern<OpT>(ctx), nr(nr) {}

  LogicalResult matchAndRewrite(OpT op,
                                PatternRewriter &rewriter) const override {
    Value a = op.getInputs()[0], b = op.getInputs()[1];
    Value init = op.getOutputs()[0];
    int64_t za, zb;
    if (failed(matchInt8Product(op, rewriter, za, zb)))
      return failure();
    if constexpr (std::is_same_v<OpT, linalg::BatchMatmulOp>) {
      if (op.hasUserDefinedMaps() || op.getCast() != linalg::TypeFn::cast_signed)
        return rewriter.notifyMatchFailure(op, "maps or unsigned cast");
    }
    Location loc = op.getLoc();
    bool accumulate;
    init = kernelInit(init, accumulate);

    std::optional<std::vector<int8_t>> weights = constantInt8Values(b);
    if (!weights) {
      // A run-time B (attention's K^T and V in a QDQ model) is packed at
      // run time by the same layout as a linalg.pack (P x G x NR x 4 per
      // batch entry, zero-padded); the kernel sums its columns.
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
      rewriter.replaceOp(op, createKernel(rewriter, loc, a, packed, Value(),
                                          init, accumulate, za, zb));
      return success();
    }
    auto bTy = cast<RankedTensorType>(b.getType());
    const int64_t k = bTy.getDimSize(1), n = bTy.getDimSize(2);
    const std::vector<int8_t> &w = *weights;
    auto [packed, sums] = packConstantWeights(
        rewriter, loc, bTy.getDimSize(0), k, n, nr,
        [&](int64_t bi, int64_t kk, int64_t nn) {
          return w[(bi * k + kk) * n + nn];
        });
    rewriter.replaceOp(op, createKernel(rewriter, loc, a, packed, sums, init,
                                        accumulate, za, zb));
    return success();
  }

  int64_t nr;
};

/// An integer NHWC convolution (linalg.conv_2d_nhwc_fhwc[_q]: tosa-to-linalg
/// has padded the input with its zero point) with a constant filter runs
/// as the int8 matmul of its im2col matrix, N x (OH*OW) x (KH*KW*C): the
/// convolution form of tessel.packed_matmul_i8, whose kernel reads the
/// matrix's rows in place in the input (no im2col copy), with the filter
/// as a K x F matrix packed now. A 1x1, stride-1 convolution is a plain
/// matmul of the input's pixels.
template <typename OpT>
struct QuantizedConvToKernel : OpRewritePattern<OpT> {
  QuantizedConvToKernel(MLIRContext *ctx, int64_t nr)
      : OpRewritePattern<OpT>(ctx), nr(nr) {}

  LogicalResult matchAndRewrite(OpT op,
                                PatternRewriter &rewriter) const override {
    Value x = op.getInputs()[0], f = op.getInputs()[1];
    Value init = op.getOutputs()[0];
    int64_t za, zb;
    if (failed(matchInt8Product(op, rewriter, za, zb)))
      return failure();
    std::optional<std::vector<int8_t>> filter = constantInt8Values(f);
    if (!filter)
      return rewriter.notifyMatchFailure(op, "run-time filter");
    SmallVector<int64_t> strides(op.getStrides().template getValues<int64_t>());
    SmallVector<int64_t> dilations(
        op.getDilations().template getValues<int64_t>());
    ArrayRef<int64_t> xs = cast<RankedTensorType>(x.getType()).getShape();
    ArrayRef<int64_t> fs = cast<RankedTensorType>(f.getType()).getShape();
    ArrayRef<int64_t> os = cast<RankedTensorType>(init.getType()).getShape();
    const int64_t n = xs[0], c = xs[3], fo = fs[0], kh = fs[1], kw = fs[2],
                  oh = os[1], ow = os[2], k = kh * kw * c;
    Location loc = op.getLoc();
    // B[k][f] = filter[f][k], k = (kh*KW + kw)*C + c: the im2col row order.
    const std::vector<int8_t> &w = *filter;
    auto [packed, sums] = packConstantWeights(
        rewriter, loc, 1, k, fo, nr,
        [&](int64_t, int64_t kk, int64_t ff) { return w[ff * k + kk]; });
    bool accumulate;
    init = kernelInit(init, accumulate);
    if (!(kh == 1 && kw == 1 && strides[0] == 1 && strides[1] == 1 &&
          xs[1] == oh && xs[2] == ow)) {
      Window window{rewriter.getDenseI64ArrayAttr({kh, kw}),
                    rewriter.getDenseI64ArrayAttr(strides),
                    rewriter.getDenseI64ArrayAttr(dilations)};
      rewriter.replaceOp(op, createKernel(rewriter, loc, x, packed, sums, init,
                                          accumulate, za, zb, window));
      return success();
    }
    Type i8 = rewriter.getI8Type(), i32 = rewriter.getI32Type();
    SmallVector<ReassociationIndices> pixels = {{0}, {1, 2}, {3}};
    Value rows = tensor::CollapseShapeOp::create(
        rewriter, loc, RankedTensorType::get({n, oh * ow, c}, i8), x, pixels);
    Value init3 = tensor::CollapseShapeOp::create(
        rewriter, loc, RankedTensorType::get({n, oh * ow, fo}, i32), init,
        pixels);
    Value y = createKernel(rewriter, loc, rows, packed, sums, init3,
                           accumulate, za, zb)
                  .getResult()[0];
    rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(op, init.getType(), y,
                                                       pixels);
    return success();
  }

  int64_t nr;
};

} // namespace

void mlir::tessel::populateQuantizedMatmulToKernelPatterns(
    RewritePatternSet &patterns, int64_t nr) {
  patterns.add<QuantizedMatmulToKernel<linalg::QuantizedBatchMatmulOp>,
               QuantizedMatmulToKernel<linalg::BatchMatmulOp>,
               QuantizedConvToKernel<linalg::Conv2DNhwcFhwcQOp>,
               QuantizedConvToKernel<linalg::Conv2DNhwcFhwcOp>>(
      patterns.getContext(), nr);
}
