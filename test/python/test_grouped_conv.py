"""Grouped convolutions, compiled from PyTorch modules and compared with
PyTorch at every -O level (rtol 1e-4, atol 1e-5).

At -O2 and up every grouped convolution is one tessel.grouped_conv2d:
groups of as many input as output channels, 2, 4 or 8 of them (ResNeXt's
and RegNet's 3x3 layers), on rotated vectors; 16 of them as c-major GEMMs;
any others as the dense kernel's GEMM per group. The cases cover both, with strides, dilations, asymmetric
padding, channel counts that leave a part vector, batches, and the bias,
ReLU and residual epilogues the kernel fuses.
"""
import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import tessel  # noqa: E402


class GroupedBlock(nn.Module):
    """conv (grouped) -> ReLU, plus the input where the shapes allow (a
    residual add the kernel takes as its accumulated init)."""

    def __init__(self, c, f, groups, kernel, stride, dilation, padding, bias):
        super().__init__()
        self.conv = nn.Conv2d(c, f, kernel, stride=stride, dilation=dilation,
                              padding=padding, groups=groups, bias=bias)
        self.residual = False  # set once the output shape is known

    def forward(self, x):
        y = self.conv(x)
        if self.residual:
            y = y + x
        return F.relu(y)


# C, F, groups, kernel, stride, dilation, padding, bias, N, H, W
CASES = [
    (32, 32, 8, 3, 1, 1, 1, True, 1, 9, 11),          # 4 a group
    (64, 64, 8, 3, 2, 1, 1, True, 2, 12, 12),         # 8, stride 2
    (12, 12, 6, 3, 1, 2, 2, False, 1, 7, 9),          # 2, dilation 2
    (24, 24, 3, 3, 1, 1, (1, 0), True, 1, 8, 8),      # 8, a part vector
    (48, 48, 12, 5, 1, 1, 2, True, 1, 6, 6),          # 4, 5x5
    (20, 20, 5, (3, 1), (2, 1), 1, (1, 0), True, 2, 9, 5),  # 4, 3x1
    (64, 64, 4, 3, 1, 1, 1, True, 1, 7, 7),           # 16: a GEMM a group
    (48, 48, 3, 3, 2, 1, 1, True, 2, 11, 9),          # 16, stride 2
    (64, 64, 2, 3, 1, 1, 1, True, 1, 6, 6),           # 32: panels
    (16, 32, 4, 3, 1, 1, 1, True, 1, 6, 6),           # 4 in, 8 out
    (12, 18, 6, 3, 2, 1, (2, 1), True, 2, 9, 8),      # 2 in, 3 out
    (96, 48, 4, 1, 1, 1, 0, False, 1, 5, 5),          # 24 in, 12 out
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "c%d_f%d_g%d" % c[:3])
@pytest.mark.parametrize("opt_level", [0, 3])
def test_grouped_conv_matches_pytorch(case, opt_level):
    c, f, groups, kernel, stride, dilation, padding, bias, n, h, w = case
    torch.manual_seed(0)
    m = GroupedBlock(c, f, groups, kernel, stride, dilation, padding,
                     bias).eval()
    x = torch.randn(n, c, h, w)
    m.residual = m.conv(x).shape == x.shape
    got = tessel.compile(m, (x,), opt_level=opt_level)(x)
    ref = m(x).detach().numpy()
    assert got.shape == ref.shape
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5)


def test_resnext_style_stack_two_threads():
    # Two grouped bottleneck-style layers of 4-channel groups back to
    # back, batch 2, at -O3 on the default thread pool (the kernel splits
    # output rows between threads).
    torch.manual_seed(1)
    m = nn.Sequential(
        nn.Conv2d(16, 64, 1), nn.ReLU(),
        nn.Conv2d(64, 64, 3, padding=1, groups=16), nn.ReLU(),
        nn.Conv2d(64, 64, 3, stride=2, padding=1, groups=16), nn.ReLU(),
        nn.Conv2d(64, 16, 1)).eval()
    x = torch.randn(2, 16, 14, 14)
    got = tessel.compile(m, (x,), opt_level=3)(x)
    np.testing.assert_allclose(got, m(x).detach().numpy(), rtol=1e-4,
                               atol=1e-5)


@pytest.mark.parametrize("groups,packing",
                         [(16, "rotated"), (4, "cmajor"), (2, "panels")])
def test_every_grouped_convolution_is_one_kernel_op(tmp_path, groups, packing):
    # 4-channel groups take the rotated vectors at -O3, 16-channel ones
    # the c-major GEMMs, 32-channel ones the dense kernel's panels: one
    # tessel.grouped_conv2d each, whatever the group count, no per-group
    # convolutions.
    import subprocess

    from conftest import BIN
    from tessel.torch_importer import export_onnx

    m = nn.Conv2d(64, 64, 3, padding=1, groups=groups).eval()
    x = torch.randn(1, 64, 8, 8)
    path = tmp_path / "g.onnx"
    path.write_bytes(export_onnx(m, (x,)).SerializeToString())
    ir = subprocess.run(
        [os.path.join(BIN, "tessel-compile"), str(path), "-O3",
         "--compile-to=linalg", "-o", "-"],
        check=True, capture_output=True, text=True).stdout
    assert ir.count("tessel.grouped_conv2d") == 1
    assert f'packing = "{packing}"' in ir
    assert "tessel.packed_conv2d" not in ir
