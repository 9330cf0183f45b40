"""ONNX GridSample (lib/Importers/ONNX/Ops/GridSample.cpp) against PyTorch's
grid_sample, which ONNX Runtime matches: every mode, padding mode and
align_corners, grids reaching far outside the image (several reflections),
one-pixel axes, f64 and f16 operands; and the bad inputs, each a
CompileError naming the node, the op and what is wrong."""
import itertools
import zlib

import numpy as np
import pytest
import torch
from onnx import TensorProto, helper

import tessel

ONNX_TYPE = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE,
             np.float16: TensorProto.FLOAT16}


def grid_sample_model(x_shape, g_shape, dtype=np.float32, opset=16, **attrs):
    t = ONNX_TYPE[dtype]
    out = [x_shape[0], x_shape[1], *g_shape[1:-1]]
    node = helper.make_node("GridSample", ["x", "g"], ["y"], name="gs0", **attrs)
    g = helper.make_graph([node], "gs",
                          [helper.make_tensor_value_info("x", t, x_shape),
                           helper.make_tensor_value_info("g", t, g_shape)],
                          [helper.make_tensor_value_info("y", t, out)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def torch_ref(x, g, mode, padding, align):
    return torch.nn.functional.grid_sample(
        torch.from_numpy(x.astype(np.float64)), torch.from_numpy(g.astype(np.float64)),
        mode=mode, padding_mode=padding, align_corners=bool(align)).numpy()


@pytest.mark.parametrize("mode,padding,align", list(itertools.product(
    ["bilinear", "nearest", "bicubic"], ["zeros", "border", "reflection"], [0, 1])))
def test_gridsample_matches_torch(mode, padding, align):
    rng = np.random.default_rng(zlib.crc32(f"{mode} {padding} {align}".encode()))
    x = rng.standard_normal((2, 3, 5, 7)).astype(np.float32)
    # Inside, just outside, and far outside (reflections bounce several
    # times); some points exactly on pixel centres and edges.
    g = rng.uniform(-3.5, 3.5, (2, 4, 6, 2)).astype(np.float32)
    g[0, 0, :, 0] = np.linspace(-1, 1, 6)
    g[0, 1, :, 1] = [-1.0, 1.0, 0.0, -1.25, 1.25, 0.5]
    f = tessel.compile(grid_sample_model(x.shape, g.shape, mode=mode,
                                         padding_mode=padding,
                                         align_corners=align).SerializeToString())
    np.testing.assert_allclose(f(x, g), torch_ref(x, g, mode, padding, align),
                               rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("mode,padding", [("bilinear", "reflection"),
                                          ("bicubic", "border"), ("nearest", "zeros")])
def test_gridsample_one_pixel_axes(mode, padding):
    # A one-pixel axis: with aligned corners its bounds are one point.
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 2, 1, 4)).astype(np.float32)
    g = rng.uniform(-2, 2, (1, 3, 5, 2)).astype(np.float32)
    for align in (0, 1):
        f = tessel.compile(grid_sample_model(x.shape, g.shape, mode=mode,
                                             padding_mode=padding,
                                             align_corners=align).SerializeToString())
        np.testing.assert_allclose(f(x, g), torch_ref(x, g, mode, padding, align),
                                   rtol=1e-4, atol=1e-5)


def test_gridsample_f64_f16_and_opset20_names():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((1, 2, 6, 5))
    g = rng.uniform(-1.3, 1.3, (1, 4, 3, 2))
    f = tessel.compile(grid_sample_model(x.shape, g.shape, np.float64,
                                         mode="bicubic").SerializeToString())
    got = f(x, g)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, torch_ref(x, g, "bicubic", "zeros", 0), rtol=1e-9)
    x16, g16 = x.astype(np.float16), g.astype(np.float16)
    f = tessel.compile(grid_sample_model(x.shape, g.shape, np.float16).SerializeToString())
    got = f(x16, g16)
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float64),
                               torch_ref(x16, g16, "bilinear", "zeros", 0),
                               rtol=2e-3, atol=2e-3)
    # Opset 20 spells the modes "linear" and "cubic".
    f = tessel.compile(grid_sample_model(x.shape, g.shape, np.float64, opset=20,
                                         mode="cubic").SerializeToString())
    np.testing.assert_allclose(f(x, g), torch_ref(x, g, "bicubic", "zeros", 0), rtol=1e-9)


@pytest.mark.parametrize("x_shape,g_shape,attrs,message", [
    ((1, 1, 2, 3, 4), (1, 2, 3, 4, 3), {}, "GridSample on a rank-5 input"),
    ((1, 1, 4, 4), (1, 3, 3, 2), {"mode": "area"}, "attribute 'mode' = 'area'"),
    ((1, 1, 4, 4), (1, 3, 3, 2), {"padding_mode": "wrap"},
     "attribute 'padding_mode' = 'wrap'"),
    ((1, 1, 4, 4), (1, 3, 3, 2), {"align_corners": 2},
     "attribute 'align_corners' = 2 must be 0 or 1"),
    ((1, 1, 4, 4), (1, 3, 3, 3), {}, "grid must be N x H_out x W_out x 2"),
    ((2, 1, 4, 4), (1, 3, 3, 2), {}, "grid must be N x H_out x W_out x 2"),
])
def test_gridsample_bad_input(x_shape, g_shape, attrs, message):
    model = grid_sample_model(x_shape, g_shape, opset=20 if len(x_shape) == 5 else 16,
                              **attrs)
    with pytest.raises(tessel.CompileError) as e:
        tessel.compile(model.SerializeToString())
    assert "gs0" in str(e.value) and "GridSample" in str(e.value), str(e.value)
    assert message in str(e.value), str(e.value)
