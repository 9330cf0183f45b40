//===- GridSample.cpp - ONNX GridSample -------------------------------------===//
//
// GridSample (opset 16; 20's "linear"/"cubic" spellings too) on a 4-D
// input: each output pixel reads X where its grid point says, normalized
// to [-1, 1], interpolated (nearest, bilinear, bicubic) with the padding
// mode's answer (zeros, border, reflection) outside the image. The grid is
// data, so the reads are too: one scalar computation per output element
// (tensor.generate, the coordinates and the reads in it), no TOSA op
// having these semantics. The arithmetic follows PyTorch's grid_sampler,
// which the ONNX reference and ONNX Runtime follow (see the bicubic
// note below for where the reference alone differs).
//
//===----------------------------------------------------------------------===//
#include "Common.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::tessel::onnx_import;

namespace {

enum class Mode { Nearest, Linear, Cubic };
enum class Padding { Zeros, Border, Reflection };

/// Scalar arithmetic in the computation's float type, at one output
/// element: the reads of X[n, c] at integral pixel positions.
struct Sampler {
  OpBuilder &b;
  Location loc;
  FloatType ft;
  Value x;     // the input, N x C x H x W in the computation's type
  Value n, c;  // the output element's image and channel
  int64_t h, w;
  Padding padding;
  bool alignCorners;

  Value cst(double v) { return arith::ConstantOp::create(b, loc, FloatAttr::get(ft, v)); }
  Value add(Value a, Value v) { return arith::AddFOp::create(b, loc, a, v); }
  Value sub(Value a, Value v) { return arith::SubFOp::create(b, loc, a, v); }
  Value mul(Value a, Value v) { return arith::MulFOp::create(b, loc, a, v); }
  Value div(Value a, Value v) { return arith::DivFOp::create(b, loc, a, v); }
  Value floor(Value a) { return math::FloorOp::create(b, loc, a); }
  Value lt(Value a, Value v) {
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, a, v);
  }
  Value gt(Value a, Value v) {
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, a, v);
  }
  Value select(Value cond, Value a, Value v) {
    return arith::SelectOp::create(b, loc, cond, a, v);
  }
  Value orI(Value a, Value v) { return arith::OrIOp::create(b, loc, a, v); }
  Value clamp(Value v, double lo, double hi) {
    return arith::MinimumFOp::create(
        b, loc, arith::MaximumFOp::create(b, loc, v, cst(lo)), cst(hi));
  }

  /// The normalized coordinate g in pixels of an axis of `len`.
  Value denormalize(Value g, int64_t len) {
    if (alignCorners) // (g + 1) / 2 * (len - 1)
      return mul(div(add(g, cst(1.0)), cst(2.0)), cst(double(len - 1)));
    // ((g + 1) * len - 1) / 2
    return div(sub(mul(add(g, cst(1.0)), cst(double(len))), cst(1.0)),
               cst(2.0));
  }

  /// The bounds a coordinate of an axis of `len` lies within.
  std::pair<double, double> bounds(int64_t len) const {
    return alignCorners ? std::make_pair(0.0, double(len - 1))
                        : std::make_pair(-0.5, double(len) - 0.5);
  }

  /// v reflected by the near border until within [lo, hi] (identity
  /// inside): the reference's _gs_reflect.
  Value reflect(Value v, double lo, double hi) {
    double range = hi - lo;
    if (range <= 0.0) // a one-pixel axis with aligned corners
      return cst(lo);
    Value below = lt(v, cst(lo)), above = gt(v, cst(hi));
    Value dist = select(below, sub(cst(lo), v), sub(v, cst(hi)));
    Value k = floor(div(dist, cst(range))); // dist >= 0 where used
    Value r = sub(dist, mul(k, cst(range)));
    Value half = floor(mul(k, cst(0.5)));
    Value even = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                       sub(k, mul(half, cst(2.0))), cst(0.0));
    Value fromLo = add(cst(lo), r), fromHi = sub(cst(hi), r);
    Value belowV = select(even, fromLo, fromHi);
    Value aboveV = select(even, fromHi, fromLo);
    return select(below, belowV, select(above, aboveV, v));
  }

  /// The index of an integral position p on an axis of `len` as the
  /// padding mode reads it, clamped into the axis (zeros: `valid` says
  /// whether it was inside).
  Value index(Value p, int64_t len, Value *valid) {
    Value q = p;
    if (padding == Padding::Zeros) {
      *valid = arith::AndIOp::create(
          b, loc,
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, p, cst(0.0)),
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLE, p,
                                cst(double(len - 1))));
    } else if (padding == Padding::Reflection) {
      auto [lo, hi] = bounds(len);
      // int() of the reflected value (>= lo >= -0.5): truncation.
      q = floor(arith::MaximumFOp::create(b, loc, reflect(p, lo, hi), cst(0.0)));
    }
    q = clamp(q, 0.0, double(len - 1));
    Value i = arith::FPToSIOp::create(b, loc, b.getI64Type(), q);
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), i);
  }

  /// X[n, c, r, col] at integral positions, as the padding mode reads it.
  Value pixel(Value r, Value col) {
    Value vr, vc;
    Value ri = index(r, h, &vr), ci = index(col, w, &vc);
    Value v = tensor::ExtractOp::create(b, loc, x, ValueRange{n, c, ri, ci});
    if (padding != Padding::Zeros)
      return v;
    return select(arith::AndIOp::create(b, loc, vr, vc), v, cst(0.0));
  }

  /// Keys' cubic convolution weights (a = -0.75) of the 4 taps around a
  /// point at fraction t past the second: the reference's
  /// _gs_get_cubic_coeffs.
  void cubicWeights(Value t, Value out[4]) {
    const double a = -0.75;
    auto outer = [&](Value s) { // ((a (s) - 5a) s + 8a) s - 4a, s in [1, 2]
      return sub(mul(add(mul(sub(mul(cst(a), s), cst(5 * a)), s), cst(8 * a)), s),
                 cst(4 * a));
    };
    auto inner = [&](Value s) { // ((a + 2) s - (a + 3)) s s + 1, s in [0, 1]
      return add(mul(mul(sub(mul(cst(a + 2), s), cst(a + 3)), s), s), cst(1.0));
    };
    Value one = cst(1.0);
    out[0] = outer(add(t, one));
    out[1] = inner(t);
    out[2] = inner(sub(one, t));
    out[3] = outer(sub(cst(2.0), t));
  }
};

LogicalResult convertGridSample(NodeContext &ctx) {
  RankedTensorType xt = ctx.inputType(0), gt = ctx.inputType(1);
  if (!xt || !gt || !xt.hasStaticShape() || !gt.hasStaticShape())
    return ctx.unsupported("GridSample with dynamic shapes");
  if (xt.getRank() != 4)
    return ctx.unsupported("GridSample on a rank-" + Twine(xt.getRank()) +
                           " input (only 4-D, N x C x H x W)");
  ArrayRef<int64_t> xs = xt.getShape(), gs = gt.getShape();
  if (gt.getRank() != 4 || gs[0] != xs[0] || gs[3] != 2) {
    ctx.emitError() << "GridSample: grid must be N x H_out x W_out x 2 for an "
                       "input of "
                    << xs[0] << " images, got " << gt;
    return failure();
  }
  auto xf = dyn_cast<FloatType>(xt.getElementType());
  auto gf = dyn_cast<FloatType>(gt.getElementType());
  if (!xf || !gf)
    return ctx.unsupported("GridSample of a non-float input or grid");
  FailureOr<std::string> modeName = ctx.stringAttr("mode", "bilinear");
  FailureOr<std::string> padName = ctx.stringAttr("padding_mode", "zeros");
  FailureOr<int64_t> align = ctx.intAttr("align_corners", 0);
  if (failed(modeName) || failed(padName) || failed(align))
    return failure();
  Mode mode;
  if (*modeName == "nearest")
    mode = Mode::Nearest;
  else if (*modeName == "bilinear" || *modeName == "linear")
    mode = Mode::Linear;
  else if (*modeName == "bicubic" || *modeName == "cubic")
    mode = Mode::Cubic;
  else
    return ctx.attrError("mode", "= '" + *modeName + "' is not a GridSample mode");
  Padding padding;
  if (*padName == "zeros")
    padding = Padding::Zeros;
  else if (*padName == "border")
    padding = Padding::Border;
  else if (*padName == "reflection")
    padding = Padding::Reflection;
  else
    return ctx.attrError("padding_mode",
                         "= '" + *padName + "' is not a GridSample padding mode");
  if (*align != 0 && *align != 1)
    return ctx.attrError("align_corners", "= " + Twine(*align) + " must be 0 or 1");

  // f64 where either operand is, else f32 (f16 and bf16 computed wider).
  OpBuilder &b = ctx.builder();
  FloatType ft = xf.getWidth() == 64 || gf.getWidth() == 64
                     ? FloatType(b.getF64Type())
                     : FloatType(b.getF32Type());
  Value x = xf == ft ? ctx.input(0) : castValue(ctx, ctx.input(0), ft);
  Value grid = gf == ft ? ctx.input(1) : castValue(ctx, ctx.input(1), ft);
  auto outTy = RankedTensorType::get({xs[0], xs[1], gs[1], gs[2]}, ft);
  if (failed(checkShape(ctx, outTy.getShape(), "GridSample's output")))
    return failure();
  Value y = tensor::GenerateOp::create(
      b, ctx.loc(), outTy, ValueRange{},
      [&](OpBuilder &nb, Location loc, ValueRange iv) {
        Sampler s{nb, loc, ft, x, iv[0], iv[1], xs[2], xs[3], padding,
                  *align != 0};
        Value zero = arith::ConstantIndexOp::create(nb, loc, 0);
        Value one = arith::ConstantIndexOp::create(nb, loc, 1);
        Value gx = tensor::ExtractOp::create(nb, loc, grid,
                                             ValueRange{iv[0], iv[2], iv[3], zero});
        Value gy = tensor::ExtractOp::create(nb, loc, grid,
                                             ValueRange{iv[0], iv[2], iv[3], one});
        Value px = s.denormalize(gx, s.w), py = s.denormalize(gy, s.h);
        if (mode == Mode::Nearest) {
          px = math::RoundEvenOp::create(nb, loc, px);
          py = math::RoundEvenOp::create(nb, loc, py);
        }
        auto [xlo, xhi] = s.bounds(s.w);
        auto [ylo, yhi] = s.bounds(s.h);
        // The point itself padded for nearest and bilinear reads; a
        // bicubic one's 16 taps are each read through the padding mode
        // instead, as PyTorch and ONNX Runtime read them (the ONNX
        // reference clamps a bicubic point outside the image for border
        // padding first, which moves all of its taps; it alone does).
        bool padPoint = mode != Mode::Cubic;
        if (padPoint && padding == Padding::Border) {
          // Both coordinates clamped when either is outside.
          Value out = s.orI(s.orI(s.lt(px, s.cst(xlo)), s.gt(px, s.cst(xhi))),
                            s.orI(s.lt(py, s.cst(ylo)), s.gt(py, s.cst(yhi))));
          px = s.select(out, s.clamp(px, 0.0, double(s.w - 1)), px);
          py = s.select(out, s.clamp(py, 0.0, double(s.h - 1)), py);
        } else if (padPoint && padding == Padding::Reflection) {
          px = s.reflect(px, xlo, xhi);
          py = s.reflect(py, ylo, yhi);
        }
        Value v;
        if (mode == Mode::Nearest) {
          v = s.pixel(py, px);
        } else if (mode == Mode::Linear) {
          Value x1 = s.floor(px), y1 = s.floor(py);
          Value x2 = s.add(x1, s.cst(1.0)), y2 = s.add(y1, s.cst(1.0));
          Value dx2 = s.sub(x2, px), dx1 = s.sub(px, x1);
          Value dy2 = s.sub(y2, py), dy1 = s.sub(py, y1);
          Value top = s.add(s.mul(dx2, s.pixel(y1, x1)), s.mul(dx1, s.pixel(y1, x2)));
          Value bottom =
              s.add(s.mul(dx2, s.pixel(y2, x1)), s.mul(dx1, s.pixel(y2, x2)));
          v = s.add(s.mul(dy2, top), s.mul(dy1, bottom));
        } else {
          Value x0 = s.sub(s.floor(px), s.cst(1.0));
          Value y0 = s.sub(s.floor(py), s.cst(1.0));
          Value wx[4], wy[4];
          s.cubicWeights(s.sub(s.sub(px, x0), s.cst(1.0)), wx);
          s.cubicWeights(s.sub(s.sub(py, y0), s.cst(1.0)), wy);
          for (int i = 0; i < 4; ++i) {
            Value r = s.add(y0, s.cst(double(i))), row;
            for (int j = 0; j < 4; ++j) {
              Value term = s.mul(wx[j], s.pixel(r, s.add(x0, s.cst(double(j)))));
              row = j ? s.add(row, term) : term;
            }
            Value term = s.mul(wy[i], row);
            v = i ? s.add(v, term) : term;
          }
        }
        tensor::YieldOp::create(nb, loc, v);
      });
  ctx.setOutput(0, xf == ft ? y : castValue(ctx, y, xf));
  return success();
}

} // namespace

void mlir::tessel::onnx_import::registerGridSampleConverters(ConverterMap &m) {
  m["GridSample"] = convertGridSample;
}
