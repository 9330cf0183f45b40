"""Upsampling and resizing (F.interpolate: bilinear with and without
align_corners, nearest, bicubic) compiled from PyTorch and compared with
PyTorch at -O0 and -O3, on one and two threads.

At -O3 the gathers of a resize are computed where their weighted sum
reads them (tessel-fuse-elementwise) and vectorized over the output's
innermost axis (tessel-vectorize-linalg): rows of at most 32 floats are
picked from two registers by AVX-512 permutes, longer rows gathered,
outputs whose width is not a multiple of 16 take narrower vectors. The
shapes cover each: a DeepLab head's 28 -> 224 and 14 -> 224, rows of 40
and 200, odd sizes, downsampling, and batches.
"""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import tessel  # noqa: E402


class Resize(nn.Module):
    def __init__(self, size, mode, align_corners):
        super().__init__()
        self.size, self.mode, self.align_corners = size, mode, align_corners

    def forward(self, x):
        # A multiply before and after, so that the resize sits between
        # other loops as it does in a model.
        return F.interpolate(x * 1.5, size=self.size, mode=self.mode,
                             align_corners=self.align_corners) - 0.25


# input shape, output size, mode, align_corners
CASES = [
    ((1, 21, 28, 28), (224, 224), "bilinear", False),  # permutes, 2 registers
    ((1, 21, 14, 14), (224, 224), "bilinear", False),  # permutes, 1 register
    ((2, 3, 7, 9), (50, 61), "bilinear", True),        # narrow vectors
    ((1, 4, 10, 40), (20, 96), "bilinear", False),     # a row of 40: gathers
    ((1, 2, 6, 200), (9, 416), "bilinear", True),      # a row of 200
    ((1, 8, 33, 31), (17, 16), "bilinear", False),     # downsampling
    ((1, 5, 12, 12), (48, 48), "nearest", None),       # nearest, 4x
    ((2, 3, 9, 30), (18, 64), "nearest", None),
    ((1, 3, 8, 24), (32, 96), "bicubic", False),       # 4 taps an axis
]


@pytest.mark.parametrize("case", CASES,
                         ids=lambda c: "%s_%dx%d_to_%dx%d" % (
                             c[2], c[0][2], c[0][3], c[1][0], c[1][1]))
@pytest.mark.parametrize("opt_level", [0, 3])
def test_resize_matches_pytorch(case, opt_level):
    shape, size, mode, align = case
    torch.manual_seed(0)
    m = Resize(size, mode, align).eval()
    x = torch.randn(*shape)
    ref = m(x).numpy()
    compiled = tessel.compile(m, (x,), opt_level=opt_level)
    for threads in (1, 2):
        got = compiled(x, threads=threads)
        assert got.shape == ref.shape
        # (The interpolation weights are rounded to f32 once, at compile
        # time; PyTorch computes them in float per element.)
        np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4)
