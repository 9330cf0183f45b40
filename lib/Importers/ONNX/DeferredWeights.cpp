//===- DeferredWeights.cpp - Large initializers copied once ---------------===//
#include "DeferredWeights.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/STLExtras.h"

#include <cstring>

using namespace mlir;
using namespace mlir::tessel::onnx_import;

namespace {

size_t elementBytes(Type t) { return t.getIntOrFloatBitWidth() / 8; }

DenseElementsAttr fromBytes(RankedTensorType type, ArrayRef<char> bytes) {
  return DenseElementsAttr::getFromRawBuffer(type, bytes);
}

/// `in` (of shape `shape`, `size`-byte elements) permuted by `perms` (output
/// dim i is input dim perms[i]), written in order into `out`.
void permute(ArrayRef<char> in, ArrayRef<int64_t> shape,
             ArrayRef<int32_t> perms, size_t size, std::vector<char> &out) {
  int64_t rank = shape.size();
  SmallVector<int64_t> inStrides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    inStrides[d] = inStrides[d + 1] * shape[d + 1];
  SmallVector<int64_t> outShape, strides;
  for (int32_t p : perms) {
    outShape.push_back(shape[p]);
    strides.push_back(inStrides[p]);
  }
  out.resize(in.size());
  if (in.empty())
    return;
  // An odometer over the output; `offset` is the input element it reads.
  SmallVector<int64_t> index(rank, 0);
  int64_t offset = 0;
  char *dst = out.data();
  int64_t inner = rank ? outShape.back() : 1;
  int64_t innerStride = rank ? strides.back() : 1;
  int64_t rows = static_cast<int64_t>(in.size() / size) / std::max<int64_t>(inner, 1);
  for (int64_t r = 0; r < rows; ++r) {
    const char *src = in.data() + offset * size;
    for (int64_t i = 0; i < inner; ++i, dst += size)
      std::memcpy(dst, src + i * innerStride * size, size);
    for (int64_t d = rank - 2; d >= 0; --d) {
      offset += strides[d];
      if (++index[d] < outShape[d])
        break;
      offset -= strides[d] * outShape[d];
      index[d] = 0;
    }
  }
}

} // namespace

Value DeferredWeights::create(OpBuilder &b, Location loc,
                              const onnx::TensorProto &t,
                              RankedTensorType type) {
  Type elem = type.getElementType();
  if (!t.has_raw_data() || t.raw_data().size() < minBytes ||
      !elem.isIntOrFloat() || elem.getIntOrFloatBitWidth() % 8 != 0 ||
      elem.isInteger(1) || !type.hasStaticShape())
    return {};
  const std::string &raw = t.raw_data();
  size_t size = elementBytes(elem);
  if (raw.size() != static_cast<size_t>(type.getNumElements()) * size ||
      reinterpret_cast<uintptr_t>(raw.data()) % size != 0)
    return {};
  AsmResourceBlob blob = UnmanagedAsmResourceBlob::allocateWithAlign(
      ArrayRef<char>(raw.data(), raw.size()), size);
  auto alias = DenseResourceElementsAttr::get(type, "onnx_initializer",
                                              std::move(blob));
  auto op = tosa::ConstOp::create(b, loc, type, alias);
  placeholders[op] = Entry{&t, alias};
  return op.getResult();
}

bool DeferredWeights::isDeferred(Value v) const {
  Operation *def = v ? v.getDefiningOp() : nullptr;
  return def && placeholders.count(def);
}

DenseElementsAttr DeferredWeights::materialize(Value v) {
  if (!isDeferred(v))
    return {};
  auto it = placeholders.find(v.getDefiningOp());
  auto op = cast<tosa::ConstOp>(it->first);
  const std::string &raw = it->second.tensor->raw_data();
  DenseElementsAttr attr =
      fromBytes(cast<RankedTensorType>(op.getType()),
                ArrayRef<char>(raw.data(), raw.size()));
  op.setValuesAttr(attr);
  release(it->second);
  placeholders.erase(it);
  return attr;
}

void DeferredWeights::finalize() {
  for (auto &[op, entry] : placeholders) {
    if (op->use_empty()) {
      // An initializer no node reads.
      op->erase();
      release(entry);
      continue;
    }
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    const std::string &raw = entry.tensor->raw_data();
    ArrayRef<char> data(raw.data(), raw.size());
    std::vector<char> permuted;
    // The single-use chain of layout ops the converters put on the weight.
    SmallVector<Operation *> chain;
    Value current = op->getResult(0);
    while (current.hasOneUse()) {
      Operation *user = *current.user_begin();
      if (!isa<tosa::ReshapeOp, tosa::TransposeOp>(user))
        break;
      auto resultType =
          dyn_cast<RankedTensorType>(user->getResult(0).getType());
      if (!resultType || !resultType.hasStaticShape() ||
          resultType.getElementType() != type.getElementType() ||
          user->getOperand(0) != current)
        break;
      if (auto transpose = dyn_cast<tosa::TransposeOp>(user)) {
        std::vector<char> next;
        permute(data, cast<RankedTensorType>(current.getType()).getShape(),
                transpose.getPerms(), elementBytes(type.getElementType()),
                next);
        permuted = std::move(next);
        data = permuted;
      }
      chain.push_back(user);
      current = user->getResult(0);
    }
    auto finalType = cast<RankedTensorType>(current.getType());
    DenseElementsAttr attr = fromBytes(finalType, data);
    if (chain.empty()) {
      cast<tosa::ConstOp>(op).setValuesAttr(attr);
    } else {
      OpBuilder b(chain.back());
      auto folded =
          tosa::ConstOp::create(b, chain.back()->getLoc(), finalType, attr);
      current.replaceAllUsesWith(folded.getResult());
      for (Operation *o : llvm::reverse(chain))
        o->erase();
      op->erase();
    }
    release(entry);
  }
  placeholders.clear();
}

void DeferredWeights::release(Entry &e) {
  if (!e.alias)
    return;
  e.alias.getRawHandle().getResource()->setBlob(AsmResourceBlob());
  e.alias = {};
}

void DeferredWeights::releaseAll() {
  for (auto &[op, entry] : placeholders)
    release(entry);
}
