//===- WinogradFilter.cpp - compile-time Winograd filters -----------------===//
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
                                                     int64_t nr, int64_t tile) {
  auto ty = cast<RankedTensorType>(filter.getType());
  ArrayRef<int64_t> s = ty.getShape();
  const int64_t f = s[0], c = s[3], panels = (f + nr - 1) / nr;
  // Rows of G (Lavin and Gray): F(2, 3) with interpolation points 0, 1, -1
  // and infinity; F(4, 3) with 0, 1, -1, 2, -2 and infinity.
  static const double g2[4][3] = {
      {1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  static const double g4[6][3] = {{1.0 / 4, 0, 0},
                                  {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                  {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                  {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                  {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                  {0, 0, 1}};
  const int64_t l = tile + 2; // the patch side: G is l x 3
  const double(*g)[3] = tile == 4 ? g4 : g2;
  std::vector<float> w;
  w.reserve(ty.getNumElements());
  if (filter.isSplat())
    w.assign(ty.getNumElements(), filter.getSplatValue<float>());
  else
    for (float v : filter.getValues<float>())
      w.push_back(v);
  std::vector<float> out(l * l * panels * c * nr, 0.0f);
  for (int64_t fo = 0; fo < f; ++fo) {
    const int64_t p = fo / nr, j = fo % nr;
    for (int64_t ci = 0; ci < c; ++ci) {
      double k[3][3];
      for (int kh = 0; kh < 3; ++kh)
        for (int kw = 0; kw < 3; ++kw)
          k[kh][kw] = w[((fo * 3 + kh) * 3 + kw) * c + ci];
      // t = G k (l x 3), then U = t G^T (l x l).
      double t[6][3];
      for (int64_t i = 0; i < l; ++i)
        for (int kw = 0; kw < 3; ++kw)
          t[i][kw] = g[i][0] * k[0][kw] + g[i][1] * k[1][kw] +
                     g[i][2] * k[2][kw];
      for (int64_t i = 0; i < l; ++i)
        for (int64_t jj = 0; jj < l; ++jj) {
          double u = t[i][0] * g[jj][0] + t[i][1] * g[jj][1] +
                     t[i][2] * g[jj][2];
          out[(((i * l + jj) * panels + p) * c + ci) * nr + j] = float(u);
        }
    }
  }
  auto outTy =
      RankedTensorType::get({l * l, panels, c, nr}, ty.getElementType());
  return DenseElementsAttr::get(outTy, ArrayRef<float>(out));
}

/// F(4x4, 3x3)'s GEMMs over F(2x2, 3x3)'s on an `oh` x `ow` image: 36
/// products per 4x4 tile against 16 per 2x2 tile, 0.5625 where the image
/// divides into both, more where the 4x4 tiles hang over its edge (14x14:
/// 0.73).
static double tile4Work(int64_t oh, int64_t ow) {
  return (36.0 * ((oh + 3) / 4) * ((ow + 3) / 4)) /
         (16.0 * ((oh + 1) / 2) * ((ow + 1) / 2));
}

int64_t mlir::tessel::preferredWinogradTile(int64_t c, int64_t f, int64_t oh,
                                            int64_t ow, int64_t minChannels,
                                            int64_t grids) {
  if (minChannels <= 0 || c < minChannels || f < minChannels)
    return 0;
  if (ShapedType::isDynamic(oh) || ShapedType::isDynamic(ow))
    return 2;
  // F(4x4, 3x3) (bench/winograd_conv.c, one thread, AMD Zen 5): 1.5-1.8x
  // F(2x2, 3x3)'s speed from 28x28 up, 2-2.8x the direct kernel's, also
  // with few channels on large images (32 -> 32 at 112x112 and 224x224:
  // 1.95x), where F(2x2, 3x3)'s bigger transforms streamed through memory
  // and lost to the direct kernel in models (Inception-v3, the U-Net: 1.13x
  // and 1.49x faster models than with F(2x2, 3x3) or the direct kernel
  // there). On smaller images its GEMMs have few rows (14x14: 16 tiles) for
  // a filter 4x the direct one's, which the model streams from memory
  // (ResNet-34 with F(4x4, 3x3) at 14x14 and 7x7 too: 1.00x, with
  // F(2x2, 3x3) there: 1.11x); F(2x2, 3x3) there and where the size is
  // unknown, its rounding also closer to the direct convolution's. With
  // rows enough, 14x14's overhang (0.73 of F(2x2, 3x3)'s products, not
  // 0.56) still pays: FCN-ResNet50's dilation-2 layers (4 sub-grids of
  // 14x14, 64 tiles) 6% faster a model with F(4x4, 3x3); so are the
  // images of a batch (alone, 256 -> 256 at 14x14, batch 4 and 8: 1.20x and
  // 1.29x F(2x2, 3x3)'s speed; 512 -> 512 at 7x7, batch 16: 1.71x).
  const int64_t tiles4 = grids * ((oh + 3) / 4) * ((ow + 3) / 4);
  return tiles4 >= 36 && tile4Work(oh, ow) < 0.75 ? 4 : 2;
}

int64_t mlir::tessel::winogradConvTile(int64_t kh, int64_t kw,
                                       ArrayRef<int64_t> strides,
                                       ArrayRef<int64_t> dilations, int64_t c,
                                       int64_t f, int64_t oh, int64_t ow,
                                       int64_t minChannels, int64_t batch) {
  // The images of a static batch share the GEMMs like sub-grids do.
  const int64_t images = ShapedType::isDynamic(batch) || batch < 1 ? 1 : batch;
  if (kh != 3 || kw != 3 || strides != ArrayRef<int64_t>{1, 1} ||
      dilations.size() != 2 || dilations[0] < 1 || dilations[1] < 1)
    return 0;
  if (dilations == ArrayRef<int64_t>{1, 1})
    return preferredWinogradTile(c, f, oh, ow, minChannels, images);
  if (ShapedType::isDynamic(oh) || ShapedType::isDynamic(ow) ||
      oh < 4 * dilations[0] || ow < 4 * dilations[1])
    return 0;
  // The kernel runs the sub-grids' tiles as one set of GEMMs: their rows
  // add up (DeepLab's dilation 4 at 28x28: 16 sub-grids of 7x7, 64 4x4
  // tiles).
  return preferredWinogradTile(c, f, oh / dilations[0], ow / dilations[1],
                               minChannels,
                               images * dilations[0] * dilations[1]);
}
