//===- SymTosaUtils.cpp - TOSA building blocks for sym rewrites ------------===//
#include "SymTosaUtils.h"

#include "tessel/Dialect/Tessel/Utils/TosaBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;
using namespace mlir::tessel;

SmallVector<OpFoldResult> sym::mixedSizes(OpBuilder &b, Location loc,
                                          Value v) {
  return tensor::getMixedSizes(b, loc, v);
}

OpFoldResult sym::product(OpBuilder &b, Location loc,
                          ArrayRef<OpFoldResult> sizes) {
  int64_t constant = 1;
  Value dynamic;
  for (OpFoldResult s : sizes) {
    if (std::optional<int64_t> c = getConstantIntValue(s)) {
      constant *= *c;
      continue;
    }
    Value v = cast<Value>(s);
    dynamic = dynamic ? arith::MulIOp::create(b, loc, dynamic, v) : v;
  }
  if (!dynamic)
    return b.getIndexAttr(constant);
  if (constant != 1)
    dynamic = arith::MulIOp::create(
        b, loc, dynamic, arith::ConstantIndexOp::create(b, loc, constant));
  return dynamic;
}

Value sym::reshape(OpBuilder &b, Location loc, Value v,
                   ArrayRef<OpFoldResult> sizes) {
  auto srcTy = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> staticSizes;
  SmallVector<Value> dynamicSizes;
  dispatchIndexOpFoldResults(sizes, dynamicSizes, staticSizes);
  auto dstTy = RankedTensorType::get(staticSizes, srcTy.getElementType());
  if (dstTy == srcTy)
    return v;
  if (srcTy.hasStaticShape() && dstTy.hasStaticShape()) {
    TosaBuilder tb(b, loc);
    return tb.reshape(v, staticSizes);
  }
  // Through 1-D: collapse everything, then expand to the target sizes.
  Value flat = v;
  if (srcTy.getRank() == 0)
    flat = tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get({1}, srcTy.getElementType()), v,
        ArrayRef<ReassociationIndices>{}, ArrayRef<OpFoldResult>{
                                              b.getIndexAttr(1)});
  else if (srcTy.getRank() > 1)
    flat = tensor::CollapseShapeOp::create(
        b, loc, v,
        ArrayRef<ReassociationIndices>{
            llvm::to_vector(llvm::seq<int64_t>(0, srcTy.getRank()))});
  if (dstTy.getRank() == 1)
    return castTo(b, loc, flat, dstTy);
  // A static target from a dynamic source: its element count is known.
  if (dstTy.hasStaticShape())
    flat = castTo(b, loc, flat,
                  RankedTensorType::get({dstTy.getNumElements()},
                                        srcTy.getElementType()));
  // A dynamic target has rank >= 1; rank 0 is static and handled above.
  return tensor::ExpandShapeOp::create(
      b, loc, dstTy, flat,
      ArrayRef<ReassociationIndices>{
          llvm::to_vector(llvm::seq<int64_t>(0, dstTy.getRank()))},
      sizes);
}

Value sym::nearestCodewordScores(OpBuilder &b, Location loc, Value input,
                                 Value codebookT, Value halfNorms) {
  TosaBuilder tb(b, loc);
  // f16/bf16 inputs are compared in f32: the dot products accumulate.
  Value x = tb.widen(input);
  SmallVector<OpFoldResult> sizes = mixedSizes(b, loc, x);
  OpFoldResult d = sizes.back();
  OpFoldResult m = product(b, loc, ArrayRef(sizes).drop_back());
  Value x3 = reshape(b, loc, x, {b.getIndexAttr(1), m, d});
  auto x3Ty = cast<RankedTensorType>(x3.getType());
  auto cTy = cast<RankedTensorType>(codebookT.getType());
  auto mmTy = RankedTensorType::get(
      {1, x3Ty.getDimSize(1), cTy.getDimSize(2)}, b.getF32Type());
  Value dots = tosa::MatMulOp::create(b, loc, mmTy, x3, codebookT,
                                      tb.zeroPoint(b.getF32Type()),
                                      tb.zeroPoint(b.getF32Type()));
  return tb.sub(dots, halfNorms);
}
