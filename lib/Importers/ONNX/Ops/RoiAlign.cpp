//===- RoiAlign.cpp - ONNX RoiAlign ---------------------------------------===//
//
// RoiAlign (opset 10/16), "avg" mode: each output bin averages a grid of
// bilinear samples of its region of interest, as ONNX (and
// torchvision.ops.roi_align) define it: coordinates scaled by
// spatial_scale, shifted by half a pixel with half_pixel (opset 16's
// default), regions at least 1x1 otherwise; sampling_ratio samples per bin
// side, or ceil(region / bins) when 0 (then read from the data); samples
// more than a pixel outside the image count as 0. The "max" mode is not
// supported (ONNX Runtime's max differs from the definition).
//
//===----------------------------------------------------------------------===//
#include "Common.h"
#include "tessel/Dialect/Tessel/IR/TesselDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::tessel::onnx_import;

namespace {

LogicalResult convertRoiAlign(NodeContext &ctx) {
  RankedTensorType xType = ctx.inputType(0), roiType = ctx.inputType(1),
                   idxType = ctx.inputType(2);
  if (!xType || xType.getRank() != 4 || !roiType || roiType.getRank() != 2 ||
      roiType.getDimSize(1) != 4 || !idxType || idxType.getRank() != 1 ||
      idxType.getDimSize(0) != roiType.getDimSize(0))
    return ctx.emitError() << "X must be [N, C, H, W], rois [R, 4] and "
                              "batch_indices [R]";
  Type elem = xType.getElementType();
  if (!isa<FloatType>(elem) || roiType.getElementType() != elem)
    return ctx.emitError() << "X and rois must be floats of one type";
  FailureOr<std::string> mode = ctx.stringAttr("mode", "avg");
  FailureOr<std::string> coordMode = ctx.stringAttr(
      "coordinate_transformation_mode",
      ctx.opset() >= 16 ? "half_pixel" : "output_half_pixel");
  FailureOr<int64_t> outH = ctx.intAttr("output_height", 1);
  FailureOr<int64_t> outW = ctx.intAttr("output_width", 1);
  FailureOr<int64_t> ratio = ctx.intAttr("sampling_ratio", 0);
  FailureOr<float> scale = ctx.floatAttr("spatial_scale", 1.0f);
  if (failed(mode) || failed(coordMode) || failed(outH) || failed(outW) ||
      failed(ratio) || failed(scale))
    return failure();
  if (*mode != "avg")
    return ctx.attrError("mode", "= '" + *mode + "' is not supported (only avg)");
  if (*coordMode != "half_pixel" && *coordMode != "output_half_pixel")
    return ctx.attrError("coordinate_transformation_mode",
                         "= '" + *coordMode + "' is not supported");
  if (*outH < 1 || *outW < 1 || *ratio < 0)
    return ctx.attrError("output_height", "and output_width must be positive "
                                          "and sampling_ratio not negative");
  if (failed(checkShape(ctx,
                        {roiType.getDimSize(0), xType.getDimSize(1), *outH, *outW},
                        "the output")))
    return failure();
  bool aligned = *coordMode == "half_pixel";
  int64_t rois = roiType.getDimSize(0), channels = xType.getDimSize(1),
          height = xType.getDimSize(2), width = xType.getDimSize(3),
          batches = xType.getDimSize(0);
  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  // A batch index outside [0, N) fails the call (reads stay in bounds).
  Value batchIdx = tessel::CheckIndicesOp::create(b, loc, idxType, ctx.input(2),
                                                  0, std::max<int64_t>(batches, 1));
  Value x = ctx.input(0), boxes = ctx.input(1);
  auto f64 = b.getF64Type();
  auto outType = RankedTensorType::get({rois, channels, *outH, *outW}, elem);
  auto out = tensor::GenerateOp::create(
      b, loc, outType, ValueRange{},
      [&](OpBuilder &nb, Location l, ValueRange iv) {
        auto c = [&](double v) {
          return arith::ConstantOp::create(nb, l, f64, nb.getF64FloatAttr(v));
        };
        auto idx = [&](int64_t v) { return arith::ConstantIndexOp::create(nb, l, v); };
        auto add = [&](Value p, Value q) { return arith::AddFOp::create(nb, l, p, q).getResult(); };
        auto sub = [&](Value p, Value q) { return arith::SubFOp::create(nb, l, p, q).getResult(); };
        auto mul = [&](Value p, Value q) { return arith::MulFOp::create(nb, l, p, q).getResult(); };
        auto div = [&](Value p, Value q) { return arith::DivFOp::create(nb, l, p, q).getResult(); };
        auto toF64 = [&](Value index) -> Value {
          return indexToF64(nb, l, index);
        };
        Value r = iv[0], ch = iv[1];
        Value n = arith::IndexCastOp::create(
            nb, l, nb.getIndexType(),
            tensor::ExtractOp::create(nb, l, batchIdx, ValueRange{r}));
        auto coord = [&](int64_t k) {
          Value v = tensor::ExtractOp::create(nb, l, boxes, ValueRange{r, idx(k)});
          return sub(mul(arith::ExtFOp::create(nb, l, f64, v), c(*scale)),
                     c(aligned ? 0.5 : 0.0));
        };
        Value x1 = coord(0), y1 = coord(1), x2 = coord(2), y2 = coord(3);
        Value roiW = sub(x2, x1), roiH = sub(y2, y1);
        if (!aligned) {
          roiW = arith::MaximumFOp::create(nb, l, roiW, c(1));
          roiH = arith::MaximumFOp::create(nb, l, roiH, c(1));
        }
        Value binH = div(roiH, c(double(*outH))), binW = div(roiW, c(double(*outW)));
        // Samples per bin side: sampling_ratio, else ceil(bin size).
        auto grid = [&](Value bin) -> Value {
          if (*ratio > 0)
            return idx(*ratio);
          Value g = arith::FPToSIOp::create(nb, l, nb.getI64Type(),
                                            math::CeilOp::create(nb, l, bin));
          g = arith::MaxSIOp::create(
              nb, l, g, arith::ConstantIntOp::create(nb, l, nb.getI64Type(), 0));
          return arith::IndexCastOp::create(nb, l, nb.getIndexType(), g);
        };
        Value gridH = grid(binH), gridW = grid(binW);
        Value startY = add(y1, mul(toF64(iv[2]), binH));
        Value startX = add(x1, mul(toF64(iv[3]), binW));
        // One bilinear sample at (y, x), 0 outside [-1, size].
        auto sample = [&](OpBuilder &sb, Location sl, Value y, Value xx) -> Value {
          auto sc = [&](double v) {
            return arith::ConstantOp::create(sb, sl, f64, sb.getF64FloatAttr(v));
          };
          auto lt = [&](Value p, Value q) {
            return arith::CmpFOp::create(sb, sl, arith::CmpFPredicate::OLT, p, q);
          };
          auto gt = [&](Value p, Value q) {
            return arith::CmpFOp::create(sb, sl, arith::CmpFPredicate::OGT, p, q);
          };
          Value outside = arith::OrIOp::create(
              sb, sl,
              arith::OrIOp::create(sb, sl, lt(y, sc(-1)), gt(y, sc(double(height)))),
              arith::OrIOp::create(sb, sl, lt(xx, sc(-1)), gt(xx, sc(double(width)))));
          auto axis = [&](Value v, int64_t size) {
            v = arith::MaximumFOp::create(sb, sl, v, sc(0));
            Value low = math::FloorOp::create(sb, sl, v);
            Value last = sc(double(size - 1));
            Value atEnd = arith::CmpFOp::create(sb, sl, arith::CmpFPredicate::OGE, low, last);
            low = arith::SelectOp::create(sb, sl, atEnd, last, low);
            v = arith::SelectOp::create(sb, sl, atEnd, last, v);
            Value high = arith::SelectOp::create(
                sb, sl, atEnd, last, arith::AddFOp::create(sb, sl, low, sc(1)));
            Value frac = arith::SubFOp::create(sb, sl, v, low);
            auto asIndex = [&](Value f) -> Value {
              return arith::IndexCastOp::create(
                  sb, sl, sb.getIndexType(),
                  arith::FPToSIOp::create(sb, sl, sb.getI64Type(), f));
            };
            return std::make_tuple(asIndex(low), asIndex(high), frac);
          };
          auto [yl, yh, ly] = axis(y, height);
          auto [xl, xh, lx] = axis(xx, width);
          auto read = [&](Value yi, Value xi) -> Value {
            Value v = tensor::ExtractOp::create(sb, sl, x, ValueRange{n, ch, yi, xi});
            return arith::ExtFOp::create(sb, sl, f64, v);
          };
          auto smul = [&](Value p, Value q) { return arith::MulFOp::create(sb, sl, p, q); };
          Value hy = arith::SubFOp::create(sb, sl, sc(1), ly);
          Value hx = arith::SubFOp::create(sb, sl, sc(1), lx);
          Value v = arith::AddFOp::create(
              sb, sl,
              arith::AddFOp::create(sb, sl, smul(smul(hy, hx), read(yl, xl)),
                                    smul(smul(hy, lx), read(yl, xh))),
              arith::AddFOp::create(sb, sl, smul(smul(ly, hx), read(yh, xl)),
                                    smul(smul(ly, lx), read(yh, xh))));
          return arith::SelectOp::create(sb, sl, outside, sc(0), v);
        };
        auto rows = scf::ForOp::create(
            nb, l, idx(0), gridH, idx(1), ValueRange{c(0)},
            [&](OpBuilder &rb, Location rl, Value gy, ValueRange racc) {
              auto rc = [&](double v) {
                return arith::ConstantOp::create(rb, rl, f64, rb.getF64FloatAttr(v));
              };
              auto toF = [&](Value index) -> Value {
                return indexToF64(rb, rl, index);
              };
              // startY + (gy + 0.5) * binH / gridH
              Value y = arith::AddFOp::create(
                  rb, rl, startY,
                  arith::DivFOp::create(
                      rb, rl,
                      arith::MulFOp::create(rb, rl,
                                            arith::AddFOp::create(rb, rl, toF(gy), rc(0.5)),
                                            binH),
                      toF(gridH)));
              auto cols = scf::ForOp::create(
                  rb, rl, arith::ConstantIndexOp::create(rb, rl, 0), gridW,
                  arith::ConstantIndexOp::create(rb, rl, 1), ValueRange{racc[0]},
                  [&](OpBuilder &cb, Location cl, Value gx, ValueRange cacc) {
                    Value fx = indexToF64(cb, cl, gx);
                    Value gw = indexToF64(cb, cl, gridW);
                    Value xx = arith::AddFOp::create(
                        cb, cl, startX,
                        arith::DivFOp::create(
                            cb, cl,
                            arith::MulFOp::create(
                                cb, cl,
                                arith::AddFOp::create(
                                    cb, cl, fx,
                                    arith::ConstantOp::create(cb, cl, f64,
                                                              cb.getF64FloatAttr(0.5))),
                                binW),
                            gw));
                    scf::YieldOp::create(
                        cb, cl,
                        ValueRange{arith::AddFOp::create(cb, cl, cacc[0],
                                                         sample(cb, cl, y, xx))});
                  });
              scf::YieldOp::create(rb, rl, cols.getResults());
            });
        Value count = toF64(arith::MaxSIOp::create(
            nb, l, arith::MulIOp::create(nb, l, gridH, gridW), idx(1)));
        Value avg = div(rows.getResult(0), count);
        tensor::YieldOp::create(
            nb, l, elem == f64 ? avg : arith::TruncFOp::create(nb, l, elem, avg).getResult());
      });
  ctx.setOutput(0, out);
  return success();
}

} // namespace

void mlir::tessel::onnx_import::registerRoiAlignConverters(ConverterMap &m) {
  m["RoiAlign"] = convertRoiAlign;
}
