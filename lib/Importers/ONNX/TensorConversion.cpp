//===- TensorConversion.cpp - ONNX TensorProto -> MLIR attribute -----------===//
#include "NodeContext.h"

#include "llvm/Support/Endian.h"

#include <cstring>

using namespace mlir;
using namespace mlir::tessel::onnx_import;

Type mlir::tessel::onnx_import::convertElementType(int32_t onnxType,
                                                   MLIRContext *ctx) {
  Builder b(ctx);
  switch (onnxType) {
  case onnx::TensorProto::FLOAT: return b.getF32Type();
  case onnx::TensorProto::DOUBLE: return b.getF64Type();
  case onnx::TensorProto::FLOAT16: return b.getF16Type();
  case onnx::TensorProto::BFLOAT16: return b.getBF16Type();
  case onnx::TensorProto::INT64: return b.getI64Type();
  case onnx::TensorProto::INT32: return b.getI32Type();
  case onnx::TensorProto::INT16: return b.getI16Type();
  case onnx::TensorProto::INT8: return b.getI8Type();
  case onnx::TensorProto::UINT8:
    return IntegerType::get(ctx, 8, IntegerType::Unsigned);
  case onnx::TensorProto::UINT16:
    return IntegerType::get(ctx, 16, IntegerType::Unsigned);
  case onnx::TensorProto::UINT32:
    return IntegerType::get(ctx, 32, IntegerType::Unsigned);
  case onnx::TensorProto::UINT64:
    return IntegerType::get(ctx, 64, IntegerType::Unsigned);
  case onnx::TensorProto::BOOL: return b.getI1Type();
  default: return Type();
  }
}

namespace {

/// Bytes per element in raw_data (bool is one byte).
size_t rawElementSize(Type t) {
  return t.isInteger(1) ? 1 : t.getIntOrFloatBitWidth() / 8;
}

template <typename T, typename Field>
void appendTyped(const Field &field, std::vector<char> &bytes) {
  for (auto v : field) {
    T x = static_cast<T>(v);
    const char *p = reinterpret_cast<const char *>(&x);
    bytes.insert(bytes.end(), p, p + sizeof(T));
  }
}

} // namespace

FailureOr<RankedTensorType>
mlir::tessel::onnx_import::convertTensorProtoType(const onnx::TensorProto &t,
                                                  MLIRContext *ctx,
                                                  std::string &error) {
  Type elem = convertElementType(t.data_type(), ctx);
  if (!elem) {
    error = "tensor '" + t.name() + "' has unsupported ONNX data type " +
            std::to_string(t.data_type());
    return failure();
  }
  SmallVector<int64_t> dims(t.dims().begin(), t.dims().end());
  if (llvm::any_of(dims, [](int64_t d) { return d < 0; })) {
    error = "tensor '" + t.name() + "' has a negative dimension";
    return failure();
  }
  return RankedTensorType::get(dims, elem);
}

FailureOr<DenseElementsAttr> mlir::tessel::onnx_import::convertTensorProto(
    const onnx::TensorProto &t, MLIRContext *ctx, std::string &error) {
  FailureOr<RankedTensorType> converted = convertTensorProtoType(t, ctx, error);
  if (failed(converted))
    return failure();
  RankedTensorType type = *converted;
  Type elem = type.getElementType();
  int64_t count = type.getNumElements();
  size_t elemSize = rawElementSize(elem);
  std::vector<char> bytes;
  if (t.has_raw_data()) {
    const std::string &raw = t.raw_data();
    bytes.assign(raw.begin(), raw.end());
  } else {
    switch (t.data_type()) {
    case onnx::TensorProto::FLOAT: appendTyped<float>(t.float_data(), bytes); break;
    case onnx::TensorProto::DOUBLE: appendTyped<double>(t.double_data(), bytes); break;
    case onnx::TensorProto::INT64: appendTyped<int64_t>(t.int64_data(), bytes); break;
    case onnx::TensorProto::INT32: appendTyped<int32_t>(t.int32_data(), bytes); break;
    case onnx::TensorProto::INT16: appendTyped<int16_t>(t.int32_data(), bytes); break;
    case onnx::TensorProto::INT8: appendTyped<int8_t>(t.int32_data(), bytes); break;
    case onnx::TensorProto::UINT8: appendTyped<uint8_t>(t.int32_data(), bytes); break;
    case onnx::TensorProto::UINT16: appendTyped<uint16_t>(t.int32_data(), bytes); break;
    case onnx::TensorProto::UINT32: appendTyped<uint32_t>(t.uint64_data(), bytes); break;
    case onnx::TensorProto::UINT64: appendTyped<uint64_t>(t.uint64_data(), bytes); break;
    case onnx::TensorProto::BOOL: appendTyped<uint8_t>(t.int32_data(), bytes); break;
    // f16/bf16 values are stored as their bit patterns in int32_data.
    case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::BFLOAT16: appendTyped<uint16_t>(t.int32_data(), bytes); break;
    }
  }
  if (bytes.size() != static_cast<size_t>(count) * elemSize) {
    error = "tensor '" + t.name() + "' holds " + std::to_string(bytes.size()) +
            " bytes of data but its shape needs " +
            std::to_string(count * elemSize);
    return failure();
  }
  if (elem.isInteger(1)) {
    // DenseElementsAttr packs i1 as bits; build it from bools instead.
    SmallVector<bool> values;
    for (char c : bytes)
      values.push_back(c != 0);
    return DenseElementsAttr::get(type, ArrayRef<bool>(values));
  }
  if (count == 0)
    return DenseElementsAttr::get(type, ArrayRef<Attribute>{});
  bool isSplat = false;
  if (!DenseElementsAttr::isValidRawBuffer(type, bytes, isSplat)) {
    error = "tensor '" + t.name() + "' has malformed data";
    return failure();
  }
  return DenseElementsAttr::getFromRawBuffer(type, bytes);
}
