//===- BufferPointers.cpp - memrefs handed to C as raw pointers -----------===//
#include "tessel/Conversion/BufferPointers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

bool mlir::tessel::isContiguousRowMajor(MemRefType type) {
  if (type.getLayout().isIdentity())
    return true;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return false;
  int64_t expected = 1;
  for (int64_t k = type.getRank() - 1; k >= 0; --k) {
    if (type.getDimSize(k) == 1)
      continue; // a unit dimension's stride is never used
    if (strides[k] != expected)
      return false;
    if (k > 0) {
      if (type.isDynamicDim(k))
        return false;
      expected *= type.getDimSize(k);
    }
  }
  return true;
}

Value mlir::tessel::allocDenseLike(OpBuilder &b, Location loc, Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  SmallVector<Value> sizes;
  for (int64_t k = 0; k < type.getRank(); ++k)
    if (type.isDynamicDim(k))
      sizes.push_back(memref::DimOp::create(b, loc, memref, k));
  return memref::AllocOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()), sizes);
}

Value mlir::tessel::firstElement(OpBuilder &b, Location loc, Value memref) {
  auto md = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(
      b, loc, md.getBaseBuffer());
  // i1 is stored one byte per element, as in the ABI.
  unsigned bytes =
      (cast<MemRefType>(memref.getType()).getElementTypeBitWidth() + 7) / 8;
  Value byteOff = arith::MulIOp::create(
      b, loc, md.getOffset(), arith::ConstantIndexOp::create(b, loc, bytes));
  Value addr = arith::AddIOp::create(b, loc, base, byteOff);
  Value addr64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), addr);
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext()), addr64);
}
