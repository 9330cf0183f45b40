//===- ComputeInBF16.cpp - f32 convolutions and matmuls on bf16 operands --===//
//
// `--precision=bf16`: the operands of f32 convolutions and matmuls are
// rounded to bf16 while their results and sums stay f32, the arithmetic of
// AVX512_BF16's `vdpbf16ps` (and of oneDNN's and PyTorch's bf16 matmuls with
// f32 accumulation). The rounding is explicit in the IR: each operand goes
// through `arith.truncf` (folded into constants, whose bf16 weights then
// take half the space), and the linalg op's own semantics (extend its
// inputs to the f32 of its init, multiply, add) finish the job, so every
// later pass and every lowering computes the same thing;
// tessel-convert-to-kernels turns the result into the bf16 kernel.
//
//===----------------------------------------------------------------------===//
#include "tessel/Dialect/Tessel/Transforms/Passes.h"
#include "FloatCast.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cstring>

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELCOMPUTEINBF16
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;

namespace {

bool isF32Tensor(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.getElementType().isF32();
}

/// An f32 constant rounded to bf16 (nearest even, as arith.truncf), from
/// the raw data: large weights would be slow element by element.
DenseElementsAttr truncConstant(DenseElementsAttr attr) {
  auto type = cast<RankedTensorType>(attr.getType());
  auto bf16Type = type.clone(BFloat16Type::get(type.getContext()));
  auto round = [](float x) -> uint16_t {
    uint32_t u;
    std::memcpy(&u, &x, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u) // NaN: quiet, sign and payload top
      return uint16_t((u >> 16) | 0x0040u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return uint16_t(u >> 16);
  };
  if (attr.isSplat())
    return DenseElementsAttr::get(
        bf16Type, APFloat(APFloat::BFloat(),
                          APInt(16, round(attr.getSplatValue<float>()))));
  auto values = attr.getValues<float>();
  std::vector<uint16_t> out;
  out.reserve(type.getNumElements());
  for (float x : values)
    out.push_back(round(x));
  return DenseElementsAttr::getFromRawBuffer(
      bf16Type, ArrayRef<char>(reinterpret_cast<const char *>(out.data()),
                               out.size() * sizeof(uint16_t)));
}

/// `v` rounded to bf16: a constant folded, else an elementwise truncf.
Value truncToBF16(OpBuilder &b, Location loc, Value v) {
  DenseElementsAttr attr;
  if (matchPattern(v, m_Constant(&attr))) {
    DenseElementsAttr bf = truncConstant(attr);
    return arith::ConstantOp::create(b, loc, bf.getType(), bf);
  }
  return tessel::castFloatElements(b, loc, v, b.getBF16Type());
}

/// conv_2d_nhwc_fhwc, matmul and batch_matmul with f32 inputs and init ->
/// the same op on bf16-rounded inputs (same init, same attributes).
template <typename OpT>
struct ComputeInBF16 : OpRewritePattern<OpT> {
  using OpRewritePattern<OpT>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpT op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() ||
        !llvm::all_of(op->getOperands(), isF32Tensor))
      return rewriter.notifyMatchFailure(op, "not an f32 op on tensors");
    Location loc = op.getLoc();
    SmallVector<Value> inputs;
    for (Value v : op.getDpsInputs())
      inputs.push_back(truncToBF16(rewriter, loc, v));
    SmallVector<NamedAttribute> attrs;
    for (NamedAttribute a : op->getAttrs())
      if (a.getName() != linalg::LinalgDialect::kMemoizedIndexingMapsAttrName)
        attrs.push_back(a);
    rewriter.replaceOp(op, OpT::create(rewriter, loc, op->getResultTypes(),
                                       inputs, op.getDpsInits(), attrs)
                               ->getResults());
    return success();
  }
};

struct ComputeInBF16Pass
    : tessel::impl::TesselComputeInBF16Base<ComputeInBF16Pass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    patterns.add<ComputeInBF16<linalg::Conv2DNhwcFhwcOp>,
                 ComputeInBF16<linalg::MatmulOp>,
                 ComputeInBF16<linalg::BatchMatmulOp>>(ctx);
    // Each op is rewritten once (its new inputs are bf16): a walk suffices.
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingOps);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns),
                                     config)))
      return signalPassFailure();
  }
};

} // namespace

Value mlir::tessel::castFloatElements(OpBuilder &b, Location loc, Value v,
                                      FloatType to) {
  auto type = cast<RankedTensorType>(v.getType());
  bool narrower = to.getWidth() <
                  cast<FloatType>(type.getElementType()).getWidth();
  Value init = tensor::EmptyOp::create(b, loc, tensor::getMixedSizes(b, loc, v),
                                       to);
  AffineMap id = b.getMultiDimIdentityMap(type.getRank());
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{v},
             ValueRange{init}, ArrayRef<AffineMap>{id, id}, iterators,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value c = narrower ? arith::TruncFOp::create(nb, nl, to, args[0])
                                        .getResult()
                                  : arith::ExtFOp::create(nb, nl, to, args[0])
                                        .getResult();
               linalg::YieldOp::create(nb, nl, c);
             })
      .getResult(0);
}
