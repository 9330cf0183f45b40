//===- Signal.cpp - ONNX DFT ------------------------------------------------===//
//
// DFT (opset 17) as its definition: each output frequency sums the signal
// against cos/sin of 2 pi k t / N, accumulated in f64 (exact enough for
// the lengths models use; O(N^2) per transformed line, no FFT yet).
//
//===----------------------------------------------------------------------===//
#include "Common.h"
#include "RunTimeShapes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tessel::onnx_import;

namespace {

LogicalResult convertDFT(NodeContext &ctx) {
  RankedTensorType type = ctx.inputType(0);
  int64_t rank = type.getRank();
  if (rank < 3 || (type.getDimSize(rank - 1) != 1 && type.getDimSize(rank - 1) != 2))
    return ctx.emitError() << "input must be [batch, ..., 1 or 2] (real or "
                              "complex), got rank "
                           << rank;
  Type elem = type.getElementType();
  if (!isa<FloatType>(elem))
    return ctx.emitError() << "input must be floating-point";
  FailureOr<int64_t> axisAttr = ctx.intAttr("axis", 1);
  FailureOr<int64_t> inverse = ctx.intAttr("inverse", 0);
  FailureOr<int64_t> onesided = ctx.intAttr("onesided", 0);
  if (failed(axisAttr) || failed(inverse) || failed(onesided))
    return failure();
  // The signal axes exclude the batch (0) and the real/imaginary one.
  int64_t axis = *axisAttr < 0 ? *axisAttr + rank : *axisAttr;
  if (axis < 1 || axis > rank - 2)
    return ctx.attrError("axis", "= " + std::to_string(*axisAttr) +
                                     " is not a signal axis of a rank-" +
                                     std::to_string(rank) + " input");
  if (*onesided && *inverse)
    return ctx.attrError("onesided", "= 1 with inverse = 1 is not supported");
  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  int64_t in = type.getDimSize(axis);
  // The transform length: dft_length (padded with zeros or truncated),
  // else the axis' size.
  Value length;
  int64_t staticLength = in;
  if (ctx.hasInput(1)) {
    if (DenseElementsAttr c = ctx.constantInput(1)) {
      staticLength = toInts(c).front();
      if (staticLength < 1 || staticLength > (int64_t(1) << 24))
        return ctx.emitError() << "dft_length " << staticLength
                               << " is out of range";
    } else {
      staticLength = ShapedType::kDynamic;
      length = checkedRunTimeSize(ctx, 1, 1, int64_t(1) << 24);
    }
  }
  if (!length)
    length = arith::ConstantIndexOp::create(b, loc, staticLength);
  Value outLength = length;
  int64_t staticOut = staticLength;
  if (*onesided) {
    outLength = arith::AddIOp::create(
        b, loc,
        arith::DivUIOp::create(b, loc, length,
                               arith::ConstantIndexOp::create(b, loc, 2)),
        arith::ConstantIndexOp::create(b, loc, 1));
    if (!ShapedType::isDynamic(staticLength))
      staticOut = staticLength / 2 + 1;
  }
  SmallVector<int64_t> shape(type.getShape());
  shape[axis] = staticOut;
  shape[rank - 1] = 2;
  SmallVector<Value> sizes;
  if (ShapedType::isDynamic(staticOut))
    sizes.push_back(outLength);
  bool complex = type.getDimSize(rank - 1) == 2;
  Value x = ctx.input(0);
  auto f64 = b.getF64Type();
  auto out = tensor::GenerateOp::create(
      b, loc, RankedTensorType::get(shape, elem), sizes,
      [&](OpBuilder &nb, Location l, ValueRange iv) {
        auto c = [&](double v) {
          return arith::ConstantOp::create(nb, l, f64, nb.getF64FloatAttr(v));
        };
        auto idx = [&](int64_t v) { return arith::ConstantIndexOp::create(nb, l, v); };
        auto toF64 = [&](Value index) -> Value {
          return arith::SIToFPOp::create(
              nb, l, f64, arith::IndexCastOp::create(nb, l, nb.getI64Type(), index));
        };
        Value k = toF64(iv[axis]);
        Value n = toF64(length);
        // The signal's samples past its end are zeros.
        Value end = arith::MinSIOp::create(nb, l, length, idx(in));
        auto sum = scf::ForOp::create(
            nb, l, idx(0), end, idx(1), ValueRange{c(0), c(0)},
            [&](OpBuilder &lb, Location ll, Value t, ValueRange acc) {
              auto read = [&](int64_t part) -> Value {
                SmallVector<Value> at(iv);
                at[axis] = t;
                at[rank - 1] = arith::ConstantIndexOp::create(lb, ll, part);
                Value v = tensor::ExtractOp::create(lb, ll, x, at);
                return arith::ExtFOp::create(lb, ll, f64, v);
              };
              Value re = read(0);
              Value im = complex ? read(1) : c(0);
              Value theta = arith::DivFOp::create(
                  lb, ll,
                  arith::MulFOp::create(
                      lb, ll, c(2 * M_PI),
                      arith::MulFOp::create(
                          lb, ll, k,
                          arith::SIToFPOp::create(
                              lb, ll, f64,
                              arith::IndexCastOp::create(lb, ll, lb.getI64Type(), t)))),
                  n);
              Value cs = math::CosOp::create(lb, ll, theta);
              Value sn = math::SinOp::create(lb, ll, theta);
              // Forward: (re + i im) e^{-i theta}; inverse: e^{+i theta}.
              double s = *inverse ? -1.0 : 1.0;
              auto mul = [&](Value p, Value q) { return arith::MulFOp::create(lb, ll, p, q); };
              Value yre = arith::AddFOp::create(lb, ll, mul(re, cs), mul(c(s), mul(im, sn)));
              Value yim = arith::SubFOp::create(lb, ll, mul(im, cs), mul(c(s), mul(re, sn)));
              scf::YieldOp::create(
                  lb, ll,
                  ValueRange{arith::AddFOp::create(lb, ll, acc[0], yre),
                             arith::AddFOp::create(lb, ll, acc[1], yim)});
            });
        Value isImag = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::eq,
                                             iv[rank - 1], idx(1));
        Value v = arith::SelectOp::create(nb, l, isImag, sum.getResult(1),
                                          sum.getResult(0));
        if (*inverse)
          v = arith::DivFOp::create(nb, l, v, n);
        tensor::YieldOp::create(nb, l,
                                elem == f64 ? v
                                            : arith::TruncFOp::create(nb, l, elem, v)
                                                  .getResult());
      });
  ctx.setOutput(0, out);
  return success();
}

} // namespace

void mlir::tessel::onnx_import::registerSignalConverters(ConverterMap &m) {
  m["DFT"] = convertDFT;
}
