//===- WinogradFilter.cpp - compile-time Winograd F(2x2,3x3) filters ------===//
//
// U = G g G^T for every (output channel, input channel) pair, computed in
// double and rounded once, then packed the way the kernel library's GEMM
// reads weights (NR-column panels), one packed matrix per transform
// position. Doing this at compile time keeps it off the inference path,
// like the panel packing of the direct convolution's weights.
//
//===----------------------------------------------------------------------===//
#include "WinogradFilter.h"

#include "mlir/IR/BuiltinTypes.h"

#include <vector>

using namespace mlir;

DenseElementsAttr mlir::tessel::winogradPackedFilter(DenseElementsAttr filter,
                                                     int64_t nr) {
  auto ty = cast<RankedTensorType>(filter.getType());
  ArrayRef<int64_t> s = ty.getShape();
  const int64_t f = s[0], c = s[3], panels = (f + nr - 1) / nr;
  // Rows of G for F(2, 3) with interpolation points 0, 1, -1, infinity.
  static const double g[4][3] = {
      {1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  std::vector<float> w;
  w.reserve(ty.getNumElements());
  if (filter.isSplat())
    w.assign(ty.getNumElements(), filter.getSplatValue<float>());
  else
    for (float v : filter.getValues<float>())
      w.push_back(v);
  std::vector<float> out(16 * panels * c * nr, 0.0f);
  for (int64_t fo = 0; fo < f; ++fo) {
    const int64_t p = fo / nr, j = fo % nr;
    for (int64_t ci = 0; ci < c; ++ci) {
      double k[3][3];
      for (int kh = 0; kh < 3; ++kh)
        for (int kw = 0; kw < 3; ++kw)
          k[kh][kw] = w[((fo * 3 + kh) * 3 + kw) * c + ci];
      // t = G k (4 x 3), then U = t G^T (4 x 4).
      double t[4][3];
      for (int i = 0; i < 4; ++i)
        for (int kw = 0; kw < 3; ++kw)
          t[i][kw] = g[i][0] * k[0][kw] + g[i][1] * k[1][kw] +
                     g[i][2] * k[2][kw];
      for (int i = 0; i < 4; ++i)
        for (int jj = 0; jj < 4; ++jj) {
          double u = t[i][0] * g[jj][0] + t[i][1] * g[jj][1] +
                     t[i][2] * g[jj][2];
          out[(((i * 4 + jj) * panels + p) * c + ci) * nr + j] = float(u);
        }
    }
  }
  auto outTy = RankedTensorType::get({16, panels, c, nr}, ty.getElementType());
  return DenseElementsAttr::get(outTy, ArrayRef<float>(out));
}

bool mlir::tessel::prefersWinograd(int64_t c, int64_t f, int64_t oh,
                                   int64_t ow, int64_t minChannels) {
  if (minChannels <= 0 || c < minChannels || f < minChannels)
    return false;
  if (ShapedType::isDynamic(oh) || ShapedType::isDynamic(ow))
    return true;
  // Few channels on a large image: the transforms stream through memory.
  if (oh * ow >= 56 * 56 && c + f <= 96)
    return false;
  // At most 96 input channels and a GEMM output (16 x tiles x f floats)
  // past 8 MiB: the GEMMs' few multiply-adds per element of that output
  // do not pay for moving it through memory (Zen 5, 56x56: 32 -> 256
  // 0.82x, 64 -> 256 0.94x; 112x112: 64 -> 64 0.83x, 32 -> 128 0.76x;
  // Inception-v3's 80 -> 192 at 71x71, 16 MiB: the GEMMs ran at 70
  // GFLOP/s in the model against 150 alone).
  const int64_t tiles = ((oh + 1) / 2) * ((ow + 1) / 2);
  return !(c <= 96 && 16 * tiles * f * 4 > (int64_t(8) << 20));
}

bool mlir::tessel::winogradConv(int64_t kh, int64_t kw,
                                ArrayRef<int64_t> strides,
                                ArrayRef<int64_t> dilations, int64_t c,
                                int64_t f, int64_t oh, int64_t ow,
                                int64_t minChannels) {
  if (kh != 3 || kw != 3 || strides != ArrayRef<int64_t>{1, 1} ||
      dilations.size() != 2 || dilations[0] < 1 || dilations[1] < 1)
    return false;
  if (dilations == ArrayRef<int64_t>{1, 1})
    return prefersWinograd(c, f, oh, ow, minChannels);
  if (ShapedType::isDynamic(oh) || ShapedType::isDynamic(ow) ||
      oh < 4 * dilations[0] || ow < 4 * dilations[1])
    return false;
  return prefersWinograd(c, f, oh / dilations[0], ow / dilations[1],
                         minChannels);
}
