//===- SizeNames.cpp - symbolic names of run-time sizes -------------------===//
#include "tessel/Dialect/Tessel/Utils/SizeNames.h"
#include "tessel/Dialect/Tessel/IR/TesselDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace mlir::tessel;

static std::string sizeNameAt(Value v, int64_t d, int depth);

static std::string scalarNameAt(Value size, int depth) {
  while (auto cast = size.getDefiningOp<arith::IndexCastOp>())
    size = cast.getIn();
  auto dim = size.getDefiningOp<tensor::DimOp>();
  std::optional<int64_t> d = dim ? dim.getConstantIndex() : std::nullopt;
  if (!d)
    return {};
  return sizeNameAt(dim.getSource(), *d, depth + 1);
}

static std::string sizeNameAt(Value v, int64_t d, int depth) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || d < 0 || d >= type.getRank() || !type.isDynamicDim(d) ||
      depth > 64)
    return {};
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    auto fn = dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp());
    auto names = fn ? fn.getArgAttrOfType<ArrayAttr>(arg.getArgNumber(),
                                                     "tessel.dim_names")
                    : ArrayAttr();
    auto name = names && d < int64_t(names.size())
                    ? dyn_cast<StringAttr>(names[d])
                    : StringAttr();
    return name ? name.str() : std::string();
  }
  Operation *op = v.getDefiningOp();
  auto same = [&](Value in, int64_t k) { return sizeNameAt(in, k, depth + 1); };
  auto size = [&](OpFoldResult s) {
    auto value = dyn_cast<Value>(s);
    return value ? scalarNameAt(value, depth) : std::string();
  };
  if (isa<tensor::ReshapeOp, tosa::ReshapeOp>(op)) {
    auto names = op->getAttrOfType<ArrayAttr>(kSizeNamesAttr);
    auto name = names && d < int64_t(names.size())
                    ? dyn_cast<StringAttr>(names[d])
                    : StringAttr();
    return name ? name.str() : std::string();
  }
  if (auto e = dyn_cast<tensor::ExpandShapeOp>(op))
    return size(e.getMixedOutputShape()[d]);
  if (auto s = dyn_cast<tensor::ExtractSliceOp>(op)) {
    if (s.getSourceType().getRank() != type.getRank())
      return {};
    return size(s.getMixedSizes()[d]);
  }
  if (auto e = dyn_cast<tensor::EmptyOp>(op))
    return size(e.getMixedSizes()[d]);
  if (isa<tensor::CastOp>(op))
    return same(op->getOperand(0), d);
  if (auto r = dyn_cast<tessel::RequireOp>(op))
    return same(r.getValue(), d);
  if (auto dps = dyn_cast<DestinationStyleOpInterface>(op))
    return same(dps.getDpsInits()[cast<OpResult>(v).getResultNumber()], d);
  if (auto t = dyn_cast<tosa::TransposeOp>(op))
    return same(t.getInput1(), t.getPerms()[d]);
  if (auto c = dyn_cast<tosa::ConcatOp>(op))
    return d == c.getAxis() ? std::string() : same(op->getOperand(0), d);
  if (isa<tosa::ReduceSumOp, tosa::ReduceMaxOp, tosa::ReduceMinOp,
          tosa::ReduceProductOp, tosa::ArgMaxOp>(op)) {
    auto axis = op->getAttrOfType<IntegerAttr>("axis");
    if (!axis || axis.getInt() == d || isa<tosa::ArgMaxOp>(op))
      return {};
    return same(op->getOperand(0), d);
  }
  // The batch of convolutions and pooling (NHWC) is their input's.
  if (isa<tosa::Conv2DOp, tosa::DepthwiseConv2DOp, tosa::AvgPool2dOp,
          tosa::MaxPool2dOp, tosa::TransposeConv2DOp, tessel::Conv2DOp>(op))
    return d == 0 ? same(op->getOperand(0), 0) : std::string();
  if (auto mm = dyn_cast<tosa::MatMulOp>(op))
    return d == 2 ? same(mm.getB(), 2) : same(mm.getA(), d);
  // Elementwise: the operands that are dynamic there must all have one
  // name (one of size 1 would broadcast to the other's).
  if (op->hasTrait<OpTrait::tosa::TosaElementwiseOperator>() ||
      isa<tosa::MulOp>(op) ||
      (op->hasTrait<OpTrait::Elementwise>() && op->getNumResults() == 1)) {
    std::string name;
    for (Value in : op->getOperands()) {
      auto t = dyn_cast<RankedTensorType>(in.getType());
      if (!t || t.getRank() != type.getRank() || !t.isDynamicDim(d))
        continue;
      std::string n = same(in, d);
      if (n.empty() || (!name.empty() && n != name))
        return {};
      name = n;
    }
    return name;
  }
  return {};
}

std::string mlir::tessel::sizeNameOf(Value v, int64_t d) {
  return sizeNameAt(v, d, 0);
}

std::string mlir::tessel::sizeNameOf(Value size) {
  return scalarNameAt(size, 0);
}

