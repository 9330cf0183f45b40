//===- Signal.cpp - ONNX DFT, STFT and MelWeightMatrix ---------------------===//
//
// The signal ops of opset 17 as their definitions. DFT and STFT: each
// output frequency sums the signal (a frame of it, windowed, for STFT)
// against cos/sin of 2 pi k t / N (dftSum, the one formula), accumulated in
// f64 (exact enough for the lengths models use; O(N^2) per transformed
// line, no FFT yet). MelWeightMatrix: one tensor.generate of the triangular
// filters.
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

/// sum_{t < count} sample(t) * e^{-+ i 2 pi k t / n} (the sign + for
/// `inverse`), accumulated in f64: the one formula DFT and STFT share.
/// `sample` gives (re, im) of sample t in f64.
std::pair<Value, Value>
dftSum(OpBuilder &b, Location loc, Value k, Value n, Value count, bool inverse,
       function_ref<std::pair<Value, Value>(OpBuilder &, Location, Value)> sample) {
  auto f64 = b.getF64Type();
  auto c = [&](OpBuilder &nb, Location l, double v) -> Value {
    return arith::ConstantOp::create(nb, l, f64, nb.getF64FloatAttr(v));
  };
  auto sum = scf::ForOp::create(
      b, loc, arith::ConstantIndexOp::create(b, loc, 0), count,
      arith::ConstantIndexOp::create(b, loc, 1),
      ValueRange{c(b, loc, 0), c(b, loc, 0)},
      [&](OpBuilder &lb, Location ll, Value t, ValueRange acc) {
        auto [re, im] = sample(lb, ll, t);
        auto mul = [&](Value p, Value q) { return arith::MulFOp::create(lb, ll, p, q); };
        Value tf = indexToF64(lb, ll, t);
        Value theta = arith::DivFOp::create(
            lb, ll, mul(c(lb, ll, 2 * M_PI), mul(k, tf)), n);
        Value cs = math::CosOp::create(lb, ll, theta);
        Value sn = math::SinOp::create(lb, ll, theta);
        // Forward: (re + i im) e^{-i theta}; inverse: e^{+i theta}.
        Value s = c(lb, ll, inverse ? -1.0 : 1.0);
        Value yre = arith::AddFOp::create(lb, ll, mul(re, cs), mul(s, mul(im, sn)));
        Value yim = arith::SubFOp::create(lb, ll, mul(im, cs), mul(s, mul(re, sn)));
        scf::YieldOp::create(lb, ll,
                             ValueRange{arith::AddFOp::create(lb, ll, acc[0], yre),
                                        arith::AddFOp::create(lb, ll, acc[1], yim)});
      });
  return {sum.getResult(0), sum.getResult(1)};
}

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
    FailureOr<Value> l = constantOrRunTimeSize(ctx, 1, "dft_length", 1,
                                               int64_t(1) << 24, staticLength);
    if (failed(l))
      return failure();
    length = *l;
  } else {
    length = arith::ConstantIndexOp::create(b, loc, staticLength);
  }
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
          return indexToF64(nb, l, index);
        };
        Value k = toF64(iv[axis]);
        Value n = toF64(length);
        // The signal's samples past its end are zeros.
        Value end = arith::MinSIOp::create(nb, l, length, idx(in));
        auto [sumRe, sumIm] = dftSum(
            nb, l, k, n, end, *inverse, [&](OpBuilder &lb, Location ll, Value t) {
              auto read = [&](int64_t part) -> Value {
                SmallVector<Value> at(iv);
                at[axis] = t;
                at[rank - 1] = arith::ConstantIndexOp::create(lb, ll, part);
                Value v = tensor::ExtractOp::create(lb, ll, x, at);
                return arith::ExtFOp::create(lb, ll, f64, v);
              };
              Value zero = arith::ConstantOp::create(lb, ll, f64, lb.getF64FloatAttr(0));
              return std::make_pair(read(0), complex ? read(1) : zero);
            });
        Value isImag = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::eq,
                                             iv[rank - 1], idx(1));
        Value v = arith::SelectOp::create(nb, l, isImag, sumIm, sumRe);
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

LogicalResult convertSTFT(NodeContext &ctx) {
  RankedTensorType type = ctx.inputType(0);
  if (!type || type.getRank() != 3 ||
      (type.getDimSize(2) != 1 && type.getDimSize(2) != 2) ||
      !isa<FloatType>(type.getElementType()))
    return ctx.emitError() << "signal must be float [batch, length, 1 or 2]";
  FailureOr<int64_t> onesided = ctx.intAttr("onesided", 1);
  if (failed(onesided))
    return failure();
  bool complex = type.getDimSize(2) == 2;
  if (complex && *onesided)
    return ctx.attrError("onesided", "= 1 needs a real signal");
  int64_t signal = type.getDimSize(1);
  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  int64_t staticStep, staticLength = ShapedType::kDynamic;
  FailureOr<Value> step = constantOrRunTimeSize(ctx, 1, "frame_step", 1, int64_t(1) << 24,
                                     staticStep);
  if (failed(step))
    return failure();
  bool hasWindow = ctx.hasInput(2);
  RankedTensorType windowType = hasWindow ? ctx.inputType(2) : nullptr;
  if (hasWindow && (!windowType || windowType.getRank() != 1 ||
                    windowType.getElementType() != type.getElementType()))
    return ctx.emitError() << "window must be 1-D of the signal's type";
  Value length;
  if (ctx.hasInput(3)) {
    FailureOr<Value> l = constantOrRunTimeSize(ctx, 3, "frame_length", 1, signal, staticLength);
    if (failed(l))
      return failure();
    length = *l;
    if (hasWindow && !ShapedType::isDynamic(staticLength) &&
        staticLength != windowType.getDimSize(0))
      return ctx.emitError() << "frame_length " << staticLength
                             << " differs from the window's length "
                             << windowType.getDimSize(0);
  } else if (hasWindow) {
    staticLength = windowType.getDimSize(0);
    if (staticLength < 1 || staticLength > signal)
      return ctx.emitError() << "the window's length " << staticLength
                             << " is outside [1, " << signal << "]";
    length = arith::ConstantIndexOp::create(b, loc, staticLength);
  } else {
    return ctx.emitError() << "needs a window or a frame_length";
  }
  // A run-time frame_length must match the window's.
  if (hasWindow && ShapedType::isDynamic(staticLength)) {
    Value same = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq, length,
        arith::ConstantIndexOp::create(b, loc, windowType.getDimSize(0)));
    length = checkedRunTimeSizes(ctx, same, {length}).front();
  }
  auto idx = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  // frames = (signal - length) / step + 1; bins = length / 2 + 1 one-sided.
  Value frames = arith::AddIOp::create(
      b, loc,
      arith::DivUIOp::create(b, loc, arith::SubIOp::create(b, loc, idx(signal), length),
                             *step),
      idx(1));
  Value bins = *onesided ? arith::AddIOp::create(
                               b, loc, arith::DivUIOp::create(b, loc, length, idx(2)),
                               idx(1))
                               .getResult()
                         : length;
  int64_t staticFrames = ShapedType::kDynamic, staticBins = ShapedType::kDynamic;
  if (!ShapedType::isDynamic(staticLength)) {
    staticBins = *onesided ? staticLength / 2 + 1 : staticLength;
    if (!ShapedType::isDynamic(staticStep))
      staticFrames = (signal - staticLength) / staticStep + 1;
  }
  SmallVector<Value> sizes;
  if (ShapedType::isDynamic(staticFrames))
    sizes.push_back(frames);
  if (ShapedType::isDynamic(staticBins))
    sizes.push_back(bins);
  Type elem = type.getElementType();
  auto f64 = b.getF64Type();
  Value x = ctx.input(0), window = hasWindow ? ctx.input(2) : Value();
  auto outType = RankedTensorType::get(
      {type.getDimSize(0), staticFrames, staticBins, 2}, elem);
  auto out = tensor::GenerateOp::create(
      b, loc, outType, sizes, [&](OpBuilder &nb, Location l, ValueRange iv) {
        auto toF64 = [&](Value index) -> Value {
          return indexToF64(nb, l, index);
        };
        Value start = arith::MulIOp::create(nb, l, iv[1], *step);
        auto [re, im] = dftSum(
            nb, l, toF64(iv[2]), toF64(length), length, /*inverse=*/false,
            [&](OpBuilder &lb, Location ll, Value t) -> std::pair<Value, Value> {
              Value at = arith::AddIOp::create(lb, ll, start, t);
              auto read = [&](int64_t part) -> Value {
                Value v = tensor::ExtractOp::create(
                    lb, ll, x,
                    ValueRange{iv[0], at, arith::ConstantIndexOp::create(lb, ll, part)});
                return arith::ExtFOp::create(lb, ll, f64, v);
              };
              Value w;
              if (window) {
                Value e = tensor::ExtractOp::create(lb, ll, window, ValueRange{t});
                w = arith::ExtFOp::create(lb, ll, f64, e);
              } else {
                w = arith::ConstantOp::create(lb, ll, f64, lb.getF64FloatAttr(1));
              }
              Value zero = arith::ConstantOp::create(lb, ll, f64, lb.getF64FloatAttr(0));
              return std::make_pair(
                  arith::MulFOp::create(lb, ll, read(0), w).getResult(),
                  complex ? arith::MulFOp::create(lb, ll, read(1), w).getResult() : zero);
            });
        Value isImag = arith::CmpIOp::create(
            nb, l, arith::CmpIPredicate::eq, iv[3], arith::ConstantIndexOp::create(nb, l, 1));
        Value v = arith::SelectOp::create(nb, l, isImag, im, re);
        tensor::YieldOp::create(
            nb, l, elem == f64 ? v : arith::TruncFOp::create(nb, l, elem, v).getResult());
      });
  ctx.setOutput(0, out);
  return success();
}

/// MelWeightMatrix (opset 17): [dft_length / 2 + 1, num_mel_bins] triangular
/// filters, as the ONNX definition computes them: num_mel_bins + 2 points
/// equally spaced on the mel scale (mel = 2595 log10(1 + hz / 700)) from
/// lower_edge_hertz, by a step of the mel range over num_mel_bins + 2,
/// mapped to spectrogram bins floor((dft_length + 1) hz / sample_rate);
/// filter i rises from bin(i) to bin(i + 1) and falls to bin(i + 2). Any
/// operand may arrive at run time.
LogicalResult convertMelWeightMatrix(NodeContext &ctx) {
  FailureOr<int64_t> dtype = ctx.intAttr("output_datatype", onnx::TensorProto::FLOAT);
  if (failed(dtype))
    return failure();
  Type elem = convertElementType(static_cast<int32_t>(*dtype), ctx.context());
  if (!elem || elem.isInteger(1))
    return ctx.attrError("output_datatype",
                         "= " + std::to_string(*dtype) +
                             " names a data type Tessel does not support here");
  int64_t staticBins, staticDft;
  FailureOr<Value> bins = constantOrRunTimeSize(ctx, 0, "num_mel_bins", 1,
                                                int64_t(1) << 20, staticBins);
  FailureOr<Value> dft = constantOrRunTimeSize(ctx, 1, "dft_length", 1,
                                               int64_t(1) << 24, staticDft);
  if (failed(bins) || failed(dft))
    return failure();
  for (unsigned i = 2; i < 5; ++i) {
    RankedTensorType t = ctx.inputType(i);
    bool wantFloat = i > 2;
    if (!t || t.getNumElements() != 1 ||
        (wantFloat ? !isa<FloatType>(t.getElementType())
                   : !isa<IntegerType>(t.getElementType())))
      return ctx.emitError() << "input " << i << " must be one "
                             << (wantFloat ? "float" : "integer");
  }
  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  Type f64 = b.getF64Type();
  auto c = [&](double v) -> Value {
    return arith::ConstantOp::create(b, loc, f64, b.getF64FloatAttr(v));
  };
  auto scalar = [&](unsigned i) -> Value {
    RankedTensorType t = ctx.inputType(i);
    SmallVector<Value> at(t.getRank(), arith::ConstantIndexOp::create(b, loc, 0));
    Value v = tensor::ExtractOp::create(b, loc, ctx.input(i), at);
    return castScalar(b, loc, v, v.getType(), f64);
  };
  auto mel = [&](Value hz) -> Value {
    return arith::MulFOp::create(
        b, loc, c(2595),
        math::Log10Op::create(b, loc,
                              arith::AddFOp::create(b, loc, c(1),
                                                    arith::DivFOp::create(b, loc, hz, c(700)))));
  };
  Value sampleRate = scalar(2);
  Value lowMel = mel(scalar(3)), highMel = mel(scalar(4));
  Value dftF = indexToF64(b, loc, *dft);
  Value step = arith::DivFOp::create(
      b, loc, arith::SubFOp::create(b, loc, highMel, lowMel),
      arith::AddFOp::create(b, loc, indexToF64(b, loc, *bins), c(2)));
  Value rows = arith::AddIOp::create(
      b, loc,
      arith::DivUIOp::create(b, loc, *dft, arith::ConstantIndexOp::create(b, loc, 2)),
      arith::ConstantIndexOp::create(b, loc, 1));
  int64_t staticRows = ShapedType::isDynamic(staticDft) ? staticDft : staticDft / 2 + 1;
  SmallVector<Value> sizes{rows, *bins};
  if (ShapedType::isDynamic(staticRows) || ShapedType::isDynamic(staticBins))
    sizes = checkedRunTimeSizes(ctx, arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1),
                                sizes);
  else if (staticRows * staticBins > (int64_t(1) << 31))
    return ctx.emitError() << "the matrix would have " << staticRows * staticBins
                           << " elements";
  SmallVector<Value> dynamicSizes;
  if (ShapedType::isDynamic(staticRows))
    dynamicSizes.push_back(sizes[0]);
  if (ShapedType::isDynamic(staticBins))
    dynamicSizes.push_back(sizes[1]);
  auto type = RankedTensorType::get({staticRows, staticBins}, elem);
  Value out = tensor::GenerateOp::create(
      b, loc, type, dynamicSizes, [&](OpBuilder &nb, Location l, ValueRange iv) {
        auto k = [&](double v) -> Value {
          return arith::ConstantOp::create(nb, l, f64, nb.getF64FloatAttr(v));
        };
        auto add = [&](Value x, Value y) { return arith::AddFOp::create(nb, l, x, y); };
        auto sub = [&](Value x, Value y) { return arith::SubFOp::create(nb, l, x, y); };
        auto mul = [&](Value x, Value y) { return arith::MulFOp::create(nb, l, x, y); };
        auto div = [&](Value x, Value y) { return arith::DivFOp::create(nb, l, x, y); };
        auto cmp = [&](arith::CmpFPredicate p, Value x, Value y) {
          return arith::CmpFOp::create(nb, l, p, x, y);
        };
        auto both = [&](Value x, Value y) { return arith::AndIOp::create(nb, l, x, y); };
        // The spectrogram bin of mel point p.
        auto bin = [&](Value p) -> Value {
          Value m = add(mul(p, step), lowMel);
          Value hz = mul(k(700), sub(math::PowFOp::create(nb, l, k(10), div(m, k(2595))), k(1)));
          return math::FloorOp::create(nb, l, div(mul(add(dftF, k(1)), hz), sampleRate));
        };
        Value j = indexToF64(nb, l, iv[0]), i = indexToF64(nb, l, iv[1]);
        Value lo = bin(i), mid = bin(add(i, k(1))), hi = bin(add(i, k(2)));
        using P = arith::CmpFPredicate;
        // Rising edge [lo, mid] (a single 1 at mid when lo == mid), then
        // the falling edge [mid, hi) over it.
        Value rising = arith::SelectOp::create(
            nb, l, cmp(P::OEQ, lo, mid),
            arith::SelectOp::create(nb, l, cmp(P::OEQ, j, mid), k(1), k(0)),
            arith::SelectOp::create(
                nb, l, both(cmp(P::OLE, lo, j), cmp(P::OLE, j, mid)),
                div(sub(j, lo), sub(mid, lo)), k(0)));
        Value falling = both(cmp(P::OGT, hi, mid),
                             both(cmp(P::OLE, mid, j), cmp(P::OLT, j, hi)));
        Value v = arith::SelectOp::create(nb, l, falling,
                                          div(sub(hi, j), sub(hi, mid)), rising);
        tensor::YieldOp::create(nb, l, castScalar(nb, l, v, f64, elem));
      });
  ctx.setOutput(0, out);
  return success();
}

} // namespace

void mlir::tessel::onnx_import::registerSignalConverters(ConverterMap &m) {
  m["DFT"] = convertDFT;
  m["STFT"] = convertSTFT;
  m["MelWeightMatrix"] = convertMelWeightMatrix;
}
