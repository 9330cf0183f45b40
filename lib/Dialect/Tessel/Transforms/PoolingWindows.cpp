//===- PoolingWindows.cpp - pooling as a reduction over a window view -----===//
//
// The window's input index `oh * stride + kh * dilation` is not a
// projected permutation of the loops, so upstream's vectorizer and
// tessel-vectorize-linalg leave pooling to scalar loops (ShuffleNetV2's
// max pool: 7% of the model at two threads). Viewing the input as
// N x OH x KH x OW x KW x C through overlapping strides makes every index a
// plain loop dimension, and the pooling a reduction over (kh, kw) with the
// channels innermost: vector rows of channels, one dispatch for the op.
//
//===----------------------------------------------------------------------===//
#include "PoolingWindows.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;

FailureOr<linalg::GenericOp>
mlir::tessel::poolingAsWindowReduction(RewriterBase &rewriter,
                                       linalg::LinalgOp op) {
  DenseIntElementsAttr stridesAttr, dilationsAttr;
  if (auto p = dyn_cast<linalg::PoolingNhwcMaxOp>(op.getOperation()))
    stridesAttr = p.getStrides(), dilationsAttr = p.getDilations();
  else if (auto p = dyn_cast<linalg::PoolingNhwcMinOp>(op.getOperation()))
    stridesAttr = p.getStrides(), dilationsAttr = p.getDilations();
  else if (auto p = dyn_cast<linalg::PoolingNhwcSumOp>(op.getOperation()))
    stridesAttr = p.getStrides(), dilationsAttr = p.getDilations();
  else
    return failure();
  if (!op.hasPureBufferSemantics())
    return failure();
  Value input = op.getDpsInputs()[0], window = op.getDpsInputs()[1];
  Value output = op.getDpsInits()[0];
  auto inTy = dyn_cast<MemRefType>(input.getType());
  auto winTy = dyn_cast<MemRefType>(window.getType());
  auto outTy = dyn_cast<MemRefType>(output.getType());
  if (!inTy || !winTy || !outTy || !inTy.hasStaticShape() ||
      !winTy.hasStaticShape() || !outTy.hasStaticShape())
    return failure();
  SmallVector<int64_t> inStrides;
  int64_t offset;
  if (failed(inTy.getStridesAndOffset(inStrides, offset)) ||
      ShapedType::isDynamic(offset) ||
      llvm::any_of(inStrides, ShapedType::isDynamic))
    return failure();
  // The body may use the input and output elements only (the window
  // operand holds no values).
  Block *body = op.getBlock();
  if (!body->getArgument(1).use_empty())
    return failure();
  SmallVector<int64_t> s(stridesAttr.getValues<int64_t>());
  SmallVector<int64_t> d(dilationsAttr.getValues<int64_t>());
  ArrayRef<int64_t> out = outTy.getShape(), win = winTy.getShape();
  Location loc = op.getLoc();
  // N x OH x KH x OW x KW x C over the input's memory.
  SmallVector<int64_t> viewShape = {out[0], out[1], win[0],
                                    out[2], win[1], out[3]};
  SmallVector<int64_t> viewStrides = {inStrides[0],        s[0] * inStrides[1],
                                      d[0] * inStrides[1], s[1] * inStrides[2],
                                      d[1] * inStrides[2], inStrides[3]};
  auto viewTy = MemRefType::get(
      viewShape, inTy.getElementType(),
      StridedLayoutAttr::get(rewriter.getContext(), offset, viewStrides),
      inTy.getMemorySpace());
  rewriter.setInsertionPoint(op);
  Value view = memref::ReinterpretCastOp::create(
      rewriter, loc, viewTy, input, offset, viewShape, viewStrides);
  // Loops (n, oh, ow, kh, kw, c): the view reads (n, oh, kh, ow, kw, c).
  MLIRContext *ctx = rewriter.getContext();
  auto dim = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  AffineMap inMap = AffineMap::get(
      6, 0, {dim(0), dim(1), dim(3), dim(2), dim(4), dim(5)}, ctx);
  AffineMap outMap =
      AffineMap::get(6, 0, {dim(0), dim(1), dim(2), dim(5)}, ctx);
  using utils::IteratorType;
  SmallVector<IteratorType> iters = {
      IteratorType::parallel,  IteratorType::parallel,  IteratorType::parallel,
      IteratorType::reduction, IteratorType::reduction, IteratorType::parallel};
  auto generic = linalg::GenericOp::create(
      rewriter, loc, TypeRange{}, ValueRange{view}, ValueRange{output},
      ArrayRef<AffineMap>{inMap, outMap}, iters,
      [&](OpBuilder &b, Location l, ValueRange args) {
        IRMapping map;
        map.map(body->getArgument(0), args[0]);
        map.map(body->getArgument(2), args[1]);
        for (Operation &inner : body->without_terminator())
          b.clone(inner, map);
        SmallVector<Value> yielded;
        for (Value v : body->getTerminator()->getOperands())
          yielded.push_back(map.lookupOrDefault(v));
        linalg::YieldOp::create(b, l, yielded);
      });
  rewriter.eraseOp(op);
  return generic;
}
