//===- ConvertToKernels.cpp - conv/matmul -> tessel.packed_conv2d ----------===//
//
// Data tiling for the kernel library: the weights operand is packed into
// NR-column panels (linalg.pack, folded for constants), activations stay in
// place, and producer/consumer epilogues (bias, residual add, clamp) move
// into the op so that the output is written once. Ops on bf16 inputs with
// an f32 init (tessel-compute-in-bf16) get the bf16 kernel: weights packed
// in pairs of k, the activations' rounding left to the kernel.
//
//===----------------------------------------------------------------------===//
#include "tessel/Dialect/Tessel/IR/TesselDialect.h"
#include "tessel/Dialect/Tessel/Transforms/Passes.h"
#include "FloatCast.h"
#include "GroupedConvToKernel.h"
#include "KernelInit.h"
#include "QuantizedToKernels.h"
#include "WinogradFilter.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cstring>

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELCONVERTTOKERNELS
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

std::optional<SmallVector<int64_t>>
mlir::tessel::staticSpatialPad(tensor::PadOp pad) {
  // Amounts given as constant values count too (tosa.pad's lowering
  // passes arith.constant indices).
  std::optional<SmallVector<int64_t>> lo =
      getConstantIntValues(pad.getMixedLowPad());
  std::optional<SmallVector<int64_t>> hi =
      getConstantIntValues(pad.getMixedHighPad());
  if (!lo || !hi || lo->size() != 4 || (*lo)[0] || (*hi)[0] || (*lo)[3] ||
      (*hi)[3])
    return std::nullopt;
  return SmallVector<int64_t>{(*lo)[1], (*hi)[1], (*lo)[2], (*hi)[2]};
}

std::optional<SmallVector<int64_t>>
mlir::tessel::absorbZeroPad(Value &input) {
  auto pad = input.getDefiningOp<tensor::PadOp>();
  if (!pad)
    return std::nullopt;
  Value pv = pad.getConstantPaddingValue();
  if (!pv || !matchPattern(pv, m_AnyZeroFloat()))
    return std::nullopt;
  std::optional<SmallVector<int64_t>> amounts = staticSpatialPad(pad);
  if (amounts)
    input = pad.getSource();
  return amounts;
}

InitEpilogue mlir::tessel::analyzeInit(Value init) {
  if (auto fill = init.getDefiningOp<linalg::FillOp>())
    if (matchPattern(fill.getInputs()[0], m_AnyZeroFloat()))
      return {fill.getOutputs()[0], nullptr, false};
  if (auto gen = init.getDefiningOp<linalg::GenericOp>()) {
    unsigned rank = gen.getNumLoops();
    if (gen.getNumDpsInputs() == 1 && gen.getNumDpsInits() == 1 &&
        gen.getNumParallelLoops() == rank) {
      auto inTy = dyn_cast<RankedTensorType>(gen.getInputs()[0].getType());
      SmallVector<AffineMap> maps = gen.getIndexingMapsArray();
      Block &body = gen.getRegion().front();
      AffineMap lastDim = AffineMap::get(
          rank, 0, getAffineDimExpr(rank - 1, gen.getContext()));
      if (inTy && inTy.getRank() == 1 && inTy.getElementType().isF32() &&
          maps[0] == lastDim && maps[1].isIdentity() &&
          body.getOperations().size() == 1 &&
          body.getTerminator()->getOperand(0) == body.getArgument(0))
        return {gen.getOutputs()[0], gen.getInputs()[0], false};
    }
  }
  return {init, nullptr, true};
}


namespace {

bool isStaticF32(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.hasStaticShape() && t.getElementType().isF32();
}

/// A tensor of f32 (or of bf16 where `bf16`) whose sizes are static, except
/// perhaps dimension `dim` (-1: none).
bool isStaticExcept(Value v, int64_t dim, bool bf16 = false) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  if (!t || !(bf16 ? t.getElementType().isBF16() : t.getElementType().isF32()))
    return false;
  for (auto [i, d] : llvm::enumerate(t.getShape()))
    if (ShapedType::isDynamic(d) && int64_t(i) != dim)
      return false;
  return true;
}

/// Whether a contraction's inputs `a` (activations) and `b` (weights) are
/// bf16 with its f32 `init` (what tessel-compute-in-bf16 makes), or f32 like
/// the init: the kernel op it becomes takes bf16 weights, or f32 ones.
std::optional<bool> contractionIsBF16(Value a, Value b, Value init,
                                      int64_t dynamicDim) {
  if (!isStaticExcept(init, dynamicDim))
    return std::nullopt;
  for (bool bf16 : {false, true})
    if (isStaticExcept(a, dynamicDim, bf16) && isStaticExcept(b, -1, bf16))
      return bf16;
  return std::nullopt;
}

/// The f32 tensor a bf16 kernel takes for the bf16 operand `v` (it rounds
/// its f32 input itself): the source of an elementwise truncf, else `v`
/// extended to f32, which the rounding gives back exactly.
Value f32Activations(OpBuilder &b, Location loc, Value v) {
  if (auto gen = v.getDefiningOp<linalg::GenericOp>()) {
    Block &body = gen.getRegion().front();
    auto trunc = dyn_cast<arith::TruncFOp>(&body.front());
    if (gen.getNumDpsInputs() == 1 && gen.getNumDpsInits() == 1 &&
        gen.getNumParallelLoops() == gen.getNumLoops() &&
        llvm::all_of(gen.getIndexingMapsArray(),
                     [](AffineMap m) { return m.isIdentity(); }) &&
        body.getOperations().size() == 2 && trunc &&
        trunc.getIn() == body.getArgument(0) &&
        body.getTerminator()->getOperand(0) == trunc.getResult() &&
        cast<ShapedType>(gen.getInputs()[0].getType()).getElementType().isF32())
      return gen.getInputs()[0];
  }
  return castFloatElements(b, loc, v, b.getF32Type());
}

/// Packs dimension `dim` of `src` into panels of `nr` (zero-padded), outer
/// dimensions ordered by `outerPerm`. With `pairDim` (bf16 weights), that
/// dimension (the reduction's) is also tiled by 2, pairs of k innermost,
/// and the two tile dimensions are collapsed into one of 2*nr (a constant's
/// innermost dimension becomes the size of an LLVM array: 2 would make one
/// LLVM constant per pair).
Value packPanels(OpBuilder &b, Location loc, Value src, int64_t dim,
                 int64_t nr, ArrayRef<int64_t> outerPerm,
                 std::optional<int64_t> pairDim = std::nullopt) {
  Type elem = cast<ShapedType>(src.getType()).getElementType();
  Value zero =
      arith::ConstantOp::create(b, loc, b.getFloatAttr(elem, 0.0));
  SmallVector<OpFoldResult> tiles = {b.getIndexAttr(nr)};
  SmallVector<int64_t> dims = {dim};
  if (pairDim) {
    tiles.push_back(b.getIndexAttr(2));
    dims.push_back(*pairDim);
  }
  Value dest = linalg::PackOp::createDestinationTensor(b, loc, src, tiles,
                                                       dims, outerPerm);
  Value packed = linalg::PackOp::create(b, loc, src, dest, dims, tiles, zero,
                                        outerPerm)
                     .getResult();
  if (!pairDim)
    return packed;
  int64_t rank = cast<ShapedType>(packed.getType()).getRank();
  SmallVector<ReassociationIndices> collapse;
  for (int64_t d = 0; d < rank - 2; ++d)
    collapse.push_back({d});
  collapse.push_back({rank - 2, rank - 1});
  return tensor::CollapseShapeOp::create(b, loc, packed, collapse);
}

PackedConv2DOp createPackedConv(PatternRewriter &rewriter, Location loc,
                                Value input, Value packed,
                                const InitEpilogue &epi,
                                ArrayRef<int64_t> kernel,
                                ArrayRef<int64_t> strides,
                                ArrayRef<int64_t> dilations,
                                ArrayRef<int64_t> pad = {}) {
  return PackedConv2DOp::create(
      rewriter, loc, TypeRange{epi.init.getType()}, input, packed, epi.bias,
      epi.init, rewriter.getDenseI64ArrayAttr(kernel),
      rewriter.getDenseI64ArrayAttr(strides),
      rewriter.getDenseI64ArrayAttr(dilations),
      pad.empty() ? DenseI64ArrayAttr() : rewriter.getDenseI64ArrayAttr(pad),
      epi.accumulate ? rewriter.getUnitAttr() : nullptr, FloatAttr(),
      FloatAttr());
}


struct ConvToKernel : OpRewritePattern<linalg::Conv2DNhwcFhwcOp> {
  /// `winogradMin`: fewest input and output channels for which a 3x3
  /// convolution runs as Winograd (0: never). With fewer, the
  /// 16 or 36 GEMMs are too thin to win back the input and output transforms
  /// (ResNet-50's layers: 1.35x faster at 64 channels, 1.9x at 256).
  ConvToKernel(MLIRContext *ctx, int64_t nr, int64_t winogradMin)
      : OpRewritePattern(ctx), nr(nr), winogradMin(winogradMin) {}
  LogicalResult matchAndRewrite(linalg::Conv2DNhwcFhwcOp op,
                                PatternRewriter &rewriter) const override {
    Value input = op.getInputs()[0], filter = op.getInputs()[1];
    Value init = op.getOutputs()[0];
    // The batch may be dynamic (a model exported with a symbolic batch):
    // the kernel takes the image count at run time.
    std::optional<bool> bf16 = contractionIsBF16(input, filter, init, 0);
    if (!bf16)
      return rewriter.notifyMatchFailure(
          op, "needs static shapes but the batch, f32 or bf16 inputs and an "
              "f32 init");
    ArrayRef<int64_t> fShape =
        cast<RankedTensorType>(filter.getType()).getShape();
    SmallVector<int64_t> strides(op.getStrides().getValues<int64_t>());
    SmallVector<int64_t> dilations(op.getDilations().getValues<int64_t>());
    Location loc = op.getLoc();
    InitEpilogue epi = analyzeInit(init);
    if (*bf16)
      input = f32Activations(rewriter, loc, input);
    // Zero padding is done by the kernel: no padded copy of the input.
    SmallVector<int64_t> pad = absorbZeroPad(input).value_or(
        SmallVector<int64_t>{});
    // A 3x3, stride-1 convolution with constant weights: Winograd F(2x2,
    // 3x3) or F(4x4, 3x3), its filter transformed and packed here (dilated
    // ones too: winogradConvTile).
    DenseElementsAttr fw;
    auto outShape = cast<RankedTensorType>(init.getType()).getShape();
    int64_t tile =
        *bf16 ? 0
              : winogradConvTile(fShape[1], fShape[2], strides, dilations,
                                 fShape[3], fShape[0], outShape[1], outShape[2],
                                 winogradMin, outShape[0]);
    if (tile && matchPattern(filter, m_Constant(&fw))) {
      DenseElementsAttr u = winogradPackedFilter(fw, nr, tile);
      Value packed = arith::ConstantOp::create(rewriter, loc, u.getType(), u);
      PackedConv2DOp conv = createPackedConv(rewriter, loc, input, packed, epi,
                                             {3, 3}, strides, dilations, pad);
      conv.setWinograd(true);
      rewriter.replaceOp(op, conv.getResult());
      return success();
    }
    // F x KH x KW x C -> F x (KH*KW*C) -> P x K x NR (bf16: P x K/2 x NR x 2)
    Value flat = tensor::CollapseShapeOp::create(
        rewriter, loc, filter,
        ArrayRef<ReassociationIndices>{{0}, {1, 2, 3}});
    Value packed = packPanels(rewriter, loc, flat, 0, nr, {},
                              *bf16 ? std::optional<int64_t>(1)
                                    : std::nullopt);
    rewriter.replaceOp(op, createPackedConv(rewriter, loc, input, packed, epi,
                                            {fShape[1], fShape[2]}, strides,
                                            dilations, pad)
                               .getResult());
    return success();
  }
  int64_t nr;
  int64_t winogradMin;
};

/// matmul M x K . K x N and batch_matmul B x M x K . B x K x N: the 1x1
/// convolution over B (or 1) images of 1 x M pixels with K channels.
template <typename OpT>
struct MatmulToKernel : OpRewritePattern<OpT> {
  MatmulToKernel(MLIRContext *ctx, int64_t nr)
      : OpRewritePattern<OpT>(ctx), nr(nr) {}
  LogicalResult matchAndRewrite(OpT op,
                                PatternRewriter &rewriter) const override {
    constexpr bool batched = std::is_same_v<OpT, linalg::BatchMatmulOp>;
    Value a = op.getInputs()[0], b = op.getInputs()[1];
    Value init = op.getOutputs()[0];
    if (op.hasUserDefinedMaps())
      return rewriter.notifyMatchFailure(op, "transposed/broadcast maps");
    // The row count M may be dynamic (an expert's share of the tokens):
    // the kernel takes it at run time, and the packed weights need only K
    // and N.
    unsigned mDim = batched ? 1 : 0;
    std::optional<bool> bf16 = contractionIsBF16(a, b, init, mDim);
    if (!bf16)
      return rewriter.notifyMatchFailure(
          op, "needs static shapes, f32 or bf16 inputs and an f32 init");
    Location loc = op.getLoc();
    InitEpilogue epi = analyzeInit(init);
    if (*bf16)
      a = f32Activations(rewriter, loc, a);
    // Rank 2 -> 1 x 1 x M x X; rank 3 -> B x 1 x M x X.
    SmallVector<ReassociationIndices> toImage =
        batched ? SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}}
                : SmallVector<ReassociationIndices>{{0, 1, 2}, {3}};
    auto image = [&](Value v) -> Value {
      auto t = cast<RankedTensorType>(v.getType());
      SmallVector<int64_t> shape =
          batched ? SmallVector<int64_t>{t.getDimSize(0), 1, t.getDimSize(1),
                                         t.getDimSize(2)}
                  : SmallVector<int64_t>{1, 1, t.getDimSize(0),
                                         t.getDimSize(1)};
      return tensor::ExpandShapeOp::create(
          rewriter, loc, RankedTensorType::get(shape, t.getElementType()), v,
          toImage);
    };
    auto pairs = [&](int64_t kDim) {
      return *bf16 ? std::optional<int64_t>(kDim) : std::nullopt;
    };
    Value packed =
        batched ? packPanels(rewriter, loc, b, 2, nr, {0, 2, 1}, pairs(1))
                : packPanels(rewriter, loc, b, 1, nr, {1, 0}, pairs(0));
    InitEpilogue epi4 = {image(epi.init), epi.bias, epi.accumulate};
    auto conv = createPackedConv(rewriter, loc, image(a), packed, epi4,
                                 {1, 1}, {1, 1}, {1, 1});
    rewriter.replaceOpWithNewOp<tensor::CollapseShapeOp>(
        op, init.getType(), conv.getResult()[0], toImage);
    return success();
  }
  int64_t nr;
};

/// Whether the kernel already ends in an activation that later epilogue
/// steps (bias, residual, clamp) would have to precede.
bool hasActivation(PackedConv2DOp) { return false; }
bool hasActivation(DepthwiseConv2DOp op) { return op.getSilu(); }
bool hasActivation(SparseMatmulOp) { return false; }
bool hasActivation(SparseConv2DOp) { return false; }
bool hasActivation(GroupedConv2DOp) { return false; }

/// The kernel op behind `v`, looking through one reshape (what the matmul
/// and depthwise rewrites leave between the kernel and its users); the
/// kernel result and the reshape must each have a single use, so folding an
/// epilogue into the kernel changes no other user.
template <typename OpT>
OpT kernelBehind(Value v, Operation **reshape) {
  *reshape = nullptr;
  if (Operation *r = v.getDefiningOp();
      r && isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(r)) {
    if (!v.hasOneUse())
      return nullptr;
    *reshape = r;
    v = r->getOperand(0);
  }
  auto op = v.getDefiningOp<OpT>();
  if (!op || !v.hasOneUse())
    return nullptr;
  return op;
}

/// An all-parallel generic with one init whose result has the type of its
/// first input.
bool isElementwise(linalg::GenericOp gen, unsigned numInputs) {
  return gen.getNumDpsInputs() == numInputs && gen.getNumDpsInits() == 1 &&
         gen.getNumParallelLoops() == gen.getNumLoops() &&
         gen.getIndexingMapsArray().back().isIdentity();
}

/// The body is `yield OpTy(arg_i, arg_j)` (i != j, both inputs): returns
/// {i, j}.
template <typename OpTy>
std::optional<std::pair<unsigned, unsigned>>
binaryOfArgs(linalg::GenericOp gen) {
  Block &body = gen.getRegion().front();
  if (body.getOperations().size() != 2)
    return std::nullopt;
  auto op = dyn_cast<OpTy>(&body.front());
  if (!op || body.getTerminator()->getOperand(0) != op.getResult())
    return std::nullopt;
  auto lhs = dyn_cast<BlockArgument>(op.getLhs());
  auto rhs = dyn_cast<BlockArgument>(op.getRhs());
  if (!lhs || !rhs || lhs == rhs ||
      lhs.getArgNumber() >= gen.getNumDpsInputs() ||
      rhs.getArgNumber() >= gen.getNumDpsInputs())
    return std::nullopt;
  return std::make_pair(lhs.getArgNumber(), rhs.getArgNumber());
}

/// Whether `v` can become an operand of `op`: a block argument, or defined
/// earlier in `op`'s block.
bool availableBefore(Value v, Operation *op) {
  Operation *def = v.getDefiningOp();
  return !def || (def->getBlock() == op->getBlock() && def->isBeforeInBlock(op));
}

/// `other` reshaped the way the kernel's init is shaped (the inverse of the
/// reshape between the kernel and its user), built before `kernel`.
Value reshapeToInit(PatternRewriter &rewriter, Operation *kernel,
                    Operation *reshape, Value other, Type initType) {
  if (!reshape)
    return other;
  OpBuilder::InsertionGuard g(rewriter);
  rewriter.setInsertionPoint(kernel);
  if (auto e = dyn_cast<tensor::ExpandShapeOp>(reshape))
    return tensor::CollapseShapeOp::create(rewriter, kernel->getLoc(),
                                           initType, other,
                                           e.getReassociationIndices());
  auto c = cast<tensor::CollapseShapeOp>(reshape);
  return tensor::ExpandShapeOp::create(rewriter, kernel->getLoc(), initType,
                                       other, c.getReassociationIndices());
}

/// generic { addf(kernel, x) } with x of the same shape (a residual
/// connection) -> kernel with init = x, accumulate.
template <typename OpT>
struct FuseResidualAdd : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp gen,
                                PatternRewriter &rewriter) const override {
    auto args = binaryOfArgs<arith::AddFOp>(gen);
    if (!isElementwise(gen, 2) || !args ||
        !llvm::all_of(gen.getIndexingMapsArray(),
                      [](AffineMap m) { return m.isIdentity(); }))
      return failure();
    for (auto [k, o] : {*args, std::make_pair(args->second, args->first)}) {
      Value kernelVal = gen.getInputs()[k], other = gen.getInputs()[o];
      Operation *reshape;
      OpT kernel = kernelBehind<OpT>(kernelVal, &reshape);
      if (!kernel || kernel.getAccumulate() || kernel.getClampMin() ||
          kernel.getClampMax() || hasActivation(kernel) ||
          other.getType() != kernelVal.getType())
        continue;
      // The residual must exist before the kernel to become its init.
      if (!availableBefore(other, kernel))
        continue;
      Value init = reshapeToInit(rewriter, kernel, reshape, other,
                                 kernel.getInit().getType());
      rewriter.modifyOpInPlace(kernel, [&] {
        kernel.getInitMutable().assign(init);
        kernel.setAccumulate(true);
      });
      rewriter.replaceOp(gen, kernelVal);
      return success();
    }
    return failure();
  }
};

/// generic { addf(kernel, broadcast(b)) } where b varies only along the
/// output channels -> kernel with bias = b (as 1-D).
template <typename OpT>
struct FuseBiasAdd : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp gen,
                                PatternRewriter &rewriter) const override {
    auto args = binaryOfArgs<arith::AddFOp>(gen);
    if (!isElementwise(gen, 2) || !args)
      return failure();
    SmallVector<AffineMap> maps = gen.getIndexingMapsArray();
    for (auto [k, o] : {*args, std::make_pair(args->second, args->first)}) {
      Value kernelVal = gen.getInputs()[k], bias = gen.getInputs()[o];
      Operation *reshape;
      OpT kernel = kernelBehind<OpT>(kernelVal, &reshape);
      if (!kernel || kernel.getBias() || kernel.getClampMin() ||
          kernel.getClampMax() || hasActivation(kernel) ||
          !maps[k].isIdentity() ||
          kernelVal.getType() != gen.getResult(0).getType())
        continue;
      // The channel dim is the innermost non-unit dim of the result.
      ArrayRef<int64_t> shape =
          cast<RankedTensorType>(kernelVal.getType()).getShape();
      // Output channels: the init's last dim (NHWC, or M x N for
      // sparse_matmul).
      auto initTy = cast<ShapedType>(kernel.getInit().getType());
      int64_t f = initTy.getDimSize(initTy.getRank() - 1);
      int64_t cdim = (int64_t)shape.size() - 1;
      while (cdim > 0 && shape[cdim] == 1)
        --cdim;
      auto bTy = dyn_cast<RankedTensorType>(bias.getType());
      if (shape[cdim] != f || !bTy || !bTy.hasStaticShape() ||
          bTy.getNumElements() != f)
        continue;
      // Every dim the bias varies along must be the channel dim; its other
      // dims are unit (indexed by a loop dim or by the constant 0, as
      // tosa-to-linalg writes broadcasts).
      bool channelOnly = true;
      for (auto [i, e] : llvm::enumerate(maps[o].getResults())) {
        auto d = dyn_cast<AffineDimExpr>(e);
        auto c = dyn_cast<AffineConstantExpr>(e);
        if (bTy.getDimSize(i) == 1)
          channelOnly &= d || (c && c.getValue() == 0);
        else
          channelOnly &= d && d.getPosition() == (unsigned)cdim;
      }
      if (!channelOnly)
        continue;
      // The bias must exist before the kernel.
      if (!availableBefore(bias, kernel))
        continue;
      Value bias1d = bias;
      if (bTy.getRank() != 1) {
        OpBuilder::InsertionGuard g(rewriter);
        rewriter.setInsertionPoint(kernel);
        ReassociationIndices all =
            llvm::to_vector(llvm::seq<int64_t>(0, bTy.getRank()));
        bias1d = tensor::CollapseShapeOp::create(
            rewriter, kernel.getLoc(),
            RankedTensorType::get({f}, bTy.getElementType()), bias,
            ArrayRef<ReassociationIndices>{all});
      }
      rewriter.modifyOpInPlace(
          kernel, [&] { kernel.getBiasMutable().assign(bias1d); });
      rewriter.replaceOp(gen, kernelVal);
      return success();
    }
    return failure();
  }
};

/// generic { maximumf/minimumf(kernel, const)... } -> kernel clamp.
template <typename OpT>
struct FuseClamp : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp gen,
                                PatternRewriter &rewriter) const override {
    if (!isElementwise(gen, 1) || !gen.getIndexingMapsArray()[0].isIdentity())
      return failure();
    Value kernelVal = gen.getInputs()[0];
    Operation *reshape;
    OpT kernel = kernelBehind<OpT>(kernelVal, &reshape);
    if (!kernel || hasActivation(kernel) ||
        kernelVal.getType() != gen.getResult(0).getType())
      return failure();
    Block &body = gen.getRegion().front();
    float lo = -std::numeric_limits<float>::infinity();
    float hi = std::numeric_limits<float>::infinity();
    if (kernel.getClampMin())
      lo = kernel.getClampMin()->convertToFloat();
    if (kernel.getClampMax())
      hi = kernel.getClampMax()->convertToFloat();
    Value v = body.getTerminator()->getOperand(0);
    unsigned chain = 0;
    while (v != body.getArgument(0)) {
      Operation *def = v.getDefiningOp();
      if (!def || !isa<arith::MaximumFOp, arith::MinimumFOp>(def))
        return failure();
      FloatAttr c;
      unsigned constIdx = matchPattern(def->getOperand(1), m_Constant(&c)) ? 1
                          : matchPattern(def->getOperand(0), m_Constant(&c))
                              ? 0
                              : 2;
      if (constIdx == 2)
        return failure();
      float cv = c.getValue().convertToFloat();
      if (isa<arith::MaximumFOp>(def))
        lo = std::max(lo, cv);
      else
        hi = std::min(hi, cv);
      v = def->getOperand(1 - constIdx);
      ++chain;
    }
    if (chain == 0 || body.getOperations().size() != chain + 1 || lo > hi)
      return failure();
    rewriter.modifyOpInPlace(kernel, [&] {
      if (!std::isinf(lo))
        kernel.setClampMinAttr(rewriter.getF32FloatAttr(lo));
      if (!std::isinf(hi))
        kernel.setClampMaxAttr(rewriter.getF32FloatAttr(hi));
    });
    rewriter.replaceOp(gen, kernelVal);
    return success();
  }
};

/// The body is `yield 1 / (1 + exp(-arg0))` (tosa.sigmoid lowered).
bool isSigmoidBody(linalg::GenericOp gen) {
  Block &body = gen.getRegion().front();
  if (body.getOperations().size() != 5)
    return false;
  auto div = body.getTerminator()->getOperand(0).getDefiningOp<arith::DivFOp>();
  if (!div || !matchPattern(div.getLhs(), m_OneFloat()))
    return false;
  auto add = div.getRhs().getDefiningOp<arith::AddFOp>();
  if (!add)
    return false;
  Value e = matchPattern(add.getRhs(), m_OneFloat())   ? add.getLhs()
            : matchPattern(add.getLhs(), m_OneFloat()) ? add.getRhs()
                                                       : Value();
  auto exp = e ? e.getDefiningOp<math::ExpOp>() : nullptr;
  auto neg = exp ? exp.getOperand().getDefiningOp<arith::NegFOp>() : nullptr;
  return neg && neg.getOperand() == body.getArgument(0);
}

/// generic { mulf(k, sigmoid(k)) } with k the kernel's result (SiLU, as
/// ONNX exports it: Sigmoid then Mul) -> kernel with `silu`: the
/// activation is computed in registers instead of in two more passes over
/// the output.
struct FuseSiLU : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp gen,
                                PatternRewriter &rewriter) const override {
    if (!isElementwise(gen, 2) ||
        !llvm::all_of(gen.getIndexingMapsArray(),
                      [](AffineMap m) { return m.isIdentity(); }))
      return failure();
    if (!binaryOfArgs<arith::MulFOp>(gen))
      return failure();
    for (unsigned si : {0u, 1u}) {
      Value sig = gen.getInputs()[si], k = gen.getInputs()[1 - si];
      auto sg = sig.getDefiningOp<linalg::GenericOp>();
      auto kernel = k.getDefiningOp<DepthwiseConv2DOp>();
      if (!sg || !kernel || !sig.hasOneUse() || !isElementwise(sg, 1) ||
          sg.getInputs()[0] != k || !isSigmoidBody(sg) ||
          !sg.getIndexingMapsArray()[0].isIdentity() || kernel.getSilu() ||
          kernel.getClampMin() || kernel.getClampMax() ||
          k.getType() != gen.getResult(0).getType())
        continue;
      if (llvm::any_of(k.getUsers(), [&](Operation *u) {
            return u != sg.getOperation() && u != gen.getOperation();
          }))
        continue;
      rewriter.modifyOpInPlace(kernel, [&] { kernel.setSilu(true); });
      rewriter.replaceOp(gen, k);
      rewriter.eraseOp(sg);
      return success();
    }
    return failure();
  }
};

/// linalg depthwise convolution (channel multiplier 1) ->
/// tessel.depthwise_conv2d, absorbing a zero tensor.pad of its input.
template <typename OpT>
struct DepthwiseToKernel : OpRewritePattern<OpT> {
  using OpRewritePattern<OpT>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpT op,
                                PatternRewriter &rewriter) const override {
    constexpr bool hwcm =
        std::is_same_v<OpT, linalg::DepthwiseConv2DNhwcHwcmOp>;
    Value input = op.getInputs()[0], filter = op.getInputs()[1];
    Value init = op.getOutputs()[0];
    // The batch may be dynamic, as for ConvToKernel.
    if (!isStaticExcept(input, 0) || !isStaticF32(filter) ||
        !isStaticExcept(init, 0))
      return rewriter.notifyMatchFailure(
          op, "needs static f32 shapes but the batch");
    auto fTy = cast<RankedTensorType>(filter.getType());
    if (hwcm && fTy.getDimSize(3) != 1)
      return rewriter.notifyMatchFailure(op, "channel multiplier is not 1");
    Location loc = op.getLoc();
    SmallVector<int64_t> strides(op.getStrides().template getValues<int64_t>());
    SmallVector<int64_t> dilations(
        op.getDilations().template getValues<int64_t>());
    SmallVector<int64_t> pad =
        absorbZeroPad(input).value_or(SmallVector<int64_t>{0, 0, 0, 0});
    SmallVector<ReassociationIndices> dropM = {{0}, {1}, {2, 3}};
    SmallVector<ReassociationIndices> dropOutM = {{0}, {1}, {2}, {3, 4}};
    if (hwcm)
      filter = tensor::CollapseShapeOp::create(rewriter, loc, filter, dropM);
    InitEpilogue epi = analyzeInit(init);
    if (epi.bias) // a broadcast init over the 5-D hwcm output: keep it
      epi = {init, nullptr, true};
    Value init4 = epi.init;
    if (hwcm)
      init4 = tensor::CollapseShapeOp::create(rewriter, loc, init4, dropOutM);
    auto dw = DepthwiseConv2DOp::create(
        rewriter, loc, TypeRange{init4.getType()}, input, filter, Value(),
        init4, rewriter.getDenseI64ArrayAttr(strides),
        rewriter.getDenseI64ArrayAttr(dilations),
        rewriter.getDenseI64ArrayAttr(pad),
        epi.accumulate ? rewriter.getUnitAttr() : nullptr, FloatAttr(),
        FloatAttr());
    Value result = dw.getResult()[0];
    if (hwcm)
      result = tensor::ExpandShapeOp::create(rewriter, loc, init.getType(),
                                             result, dropOutM);
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// linalg.pack of an f32 or bf16 constant: packed at compile time.
struct FoldPackOfConstant : OpRewritePattern<linalg::PackOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::PackOp pack,
                                PatternRewriter &rewriter) const override {
    DenseElementsAttr src;
    if (!matchPattern(pack.getSource(), m_Constant(&src)))
      return failure();
    auto srcTy = cast<RankedTensorType>(src.getType());
    auto dstTy = cast<RankedTensorType>(pack.getDestType());
    Type elem = srcTy.getElementType();
    if (!(elem.isF32() || elem.isBF16()) || !dstTy.hasStaticShape())
      return failure();
    // Elements are moved as raw bytes (little endian, like the data).
    const size_t bytes = elem.isF32() ? 4 : 2;
    uint32_t pad = 0;
    if (Value p = pack.getPaddingValue()) {
      FloatAttr pv;
      if (!matchPattern(p, m_Constant(&pv)))
        return failure();
      pad = uint32_t(pv.getValue().bitcastToAPInt().getZExtValue());
    }
    SmallVector<int64_t> tiles = pack.getStaticTiles();
    if (llvm::any_of(tiles, ShapedType::isDynamic))
      return failure();
    int64_t rank = srcTy.getRank();
    ArrayRef<int64_t> innerPos = pack.getInnerDimsPos();
    SmallVector<int64_t> outerPerm(pack.getOuterDimsPerm());
    if (outerPerm.empty())
      outerPerm = llvm::to_vector(llvm::seq<int64_t>(0, rank));

    ArrayRef<int64_t> srcShape = srcTy.getShape();
    SmallVector<int64_t> srcStrides(rank, 1);
    for (int64_t d = rank - 2; d >= 0; --d)
      srcStrides[d] = srcStrides[d + 1] * srcShape[d + 1];
    ArrayRef<char> in = src.getRawData();
    ArrayRef<int64_t> dstShape = dstTy.getShape();
    int64_t total = dstTy.getNumElements();
    std::vector<char> out(total * bytes);
    if (total == 0) {
      auto attr = DenseElementsAttr::getFromRawBuffer(dstTy, out);
      rewriter.replaceOpWithNewOp<arith::ConstantOp>(pack, dstTy, attr);
      return success();
    }
    // The destination's last dimension is walked as a run: it moves one
    // source dimension (`runDim`) by `runStep` per element, so a row of
    // the destination is a strided (mostly contiguous) run of the source,
    // then padding. Per element index arithmetic made packing ViT-B/16's
    // 86M weights 1.8 s of compile time.
    const int64_t last = (int64_t)dstShape.size() - 1;
    int64_t runDim, runStep = 1;
    if (last >= rank) {
      runDim = innerPos[last - rank];
    } else {
      runDim = outerPerm[last];
      for (auto [t, d] : llvm::enumerate(innerPos))
        if (d == runDim)
          runStep = tiles[t];
    }
    const int64_t runLen = dstShape[last];
    const int64_t runSrcStride = src.isSplat() ? 0 : runStep * srcStrides[runDim];
    SmallVector<int64_t> idx(dstShape.size(), 0);
    SmallVector<int64_t> sIdx(rank);
    for (int64_t linear = 0; linear < total; linear += runLen) {
      for (int64_t o = 0; o < rank; ++o)
        sIdx[outerPerm[o]] = idx[o];
      for (auto [t, d] : llvm::enumerate(innerPos))
        sIdx[d] = sIdx[d] * tiles[t] + idx[rank + t];
      bool inBounds = true;
      int64_t off = 0;
      for (int64_t d = 0; d < rank; ++d) {
        if (d != runDim)
          inBounds &= sIdx[d] < srcShape[d];
        off += sIdx[d] * srcStrides[d];
      }
      // Elements j < valid of the run are in the source.
      int64_t valid = 0;
      if (inBounds && sIdx[runDim] < srcShape[runDim])
        valid = std::min<int64_t>(
            runLen, (srcShape[runDim] - sIdx[runDim] + runStep - 1) / runStep);
      char *dst = out.data() + linear * bytes;
      if (src.isSplat())
        off = 0;
      if (runSrcStride == 1) {
        std::memcpy(dst, in.data() + off * bytes, size_t(valid) * bytes);
      } else {
        for (int64_t j = 0; j < valid; ++j)
          std::memcpy(dst + j * bytes, in.data() + (off + j * runSrcStride) * bytes,
                      bytes);
      }
      for (int64_t j = valid; j < runLen; ++j)
        std::memcpy(dst + j * bytes, reinterpret_cast<const char *>(&pad),
                    bytes);
      for (int64_t d = last - 1; d >= 0; --d) {
        if (++idx[d] < dstShape[d])
          break;
        idx[d] = 0;
      }
    }
    auto attr = DenseElementsAttr::getFromRawBuffer(dstTy, out);
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(pack, dstTy, attr);
    return success();
  }
};

struct ConvertToKernelsPass
    : tessel::impl::TesselConvertToKernelsBase<ConvertToKernelsPass> {
  using Base::Base;
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    if (panelWidth < 1) {
      getOperation()->emitError() << "panel-width must be positive";
      return signalPassFailure();
    }
    if (winogradMinChannels < 1) {
      getOperation()->emitError() << "winograd-min-channels must be positive";
      return signalPassFailure();
    }
    // Constant filters sliced per group (grouped convolutions, float and
    // int8: tessel-decompose-graph-ops, tessel-fold-qdq) become one
    // constant per group first, so each group's filter is packed at compile
    // time like any other, not at every run. Only when every user of the
    // constant is such a slice: the whole then dies, so nothing is stored
    // twice.
    {
      RewritePatternSet slices(ctx);
      tensor::populateFoldConstantExtractSlicePatterns(
          slices, [](tensor::ExtractSliceOp op) {
            return llvm::all_of(op.getSource().getUsers(), [](Operation *u) {
              return isa<tensor::ExtractSliceOp>(u);
            });
          });
      if (failed(applyPatternsGreedily(getOperation(), std::move(slices))))
        return signalPassFailure();
    }
    RewritePatternSet patterns(ctx);
    patterns.add<ConvToKernel>(ctx, panelWidth,
                               winograd ? int64_t(winogradMinChannels) : 0);
    patterns.add<MatmulToKernel<linalg::MatmulOp>,
                 MatmulToKernel<linalg::BatchMatmulOp>>(ctx, panelWidth);
    populateQuantizedMatmulToKernelPatterns(patterns, panelWidth);
    populateQuantizedDepthwiseToKernelPatterns(patterns);
    populateGroupedConvToKernelPatterns(patterns, panelWidth,
                                        groupedRotatedMaxWidth);
    patterns.add<DepthwiseToKernel<linalg::DepthwiseConv2DNhwcHwcmOp>,
                 DepthwiseToKernel<linalg::DepthwiseConv2DNhwcHwcOp>,
                 FuseResidualAdd<PackedConv2DOp>, FuseBiasAdd<PackedConv2DOp>,
                 FuseClamp<PackedConv2DOp>, FuseResidualAdd<DepthwiseConv2DOp>,
                 FuseBiasAdd<DepthwiseConv2DOp>, FuseClamp<DepthwiseConv2DOp>,
                 // tessel-sparsify-weights ran before: the same epilogues.
                 FuseResidualAdd<SparseMatmulOp>, FuseBiasAdd<SparseMatmulOp>,
                 FuseClamp<SparseMatmulOp>, FuseResidualAdd<SparseConv2DOp>,
                 FuseBiasAdd<SparseConv2DOp>, FuseClamp<SparseConv2DOp>,
                 FuseResidualAdd<GroupedConv2DOp>, FuseBiasAdd<GroupedConv2DOp>,
                 FuseClamp<GroupedConv2DOp>,
                 FuseSiLU,
                 FoldPackOfConstant>(ctx);
    // A constant filter that tessel-trim-padded-taps cut into per-region
    // taps becomes one constant per region, so that the packing of each
    // folds too instead of running at every call. Only where the filter
    // has no other use: then the slices replace it.
    tensor::populateFoldConstantExtractSlicePatterns(
        patterns, [](tensor::ExtractSliceOp slice) {
          Operation *src = slice.getSource().getDefiningOp();
          return src && llvm::all_of(src->getUsers(), [](Operation *u) {
                   return isa<tensor::ExtractSliceOp>(u);
                 });
        });
    // A transpose feeding a pack (attention's K^T) folds into the pack, so
    // the run-time operand is moved once, not twice.
    linalg::populateFoldIntoPackAndUnpackPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    // Packs of run-time values (e.g. attention's K^T) stay as data movement.
    SmallVector<linalg::PackOp> packs;
    getOperation()->walk([&](linalg::PackOp p) { packs.push_back(p); });
    IRRewriter rewriter(ctx);
    for (linalg::PackOp p : packs) {
      rewriter.setInsertionPoint(p);
      if (failed(linalg::lowerPack(rewriter, p))) {
        p.emitError() << "cannot lower linalg.pack of a run-time value";
        return signalPassFailure();
      }
    }
  }
};

} // namespace
