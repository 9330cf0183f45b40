"""ONNX RoiAlign (lib/Importers/ONNX/Ops/RoiAlign.cpp) against
torchvision.ops.roi_align, which defines the same average of bilinear
samples: both coordinate modes, fixed and adaptive sampling, a spatial
scale, several images; a bad batch index fails the call; max mode is a
clear error."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import tessel

F, I64 = TensorProto.FLOAT, TensorProto.INT64
RNG = np.random.default_rng(11)


def compile_roialign(**attrs):
    g = helper.make_graph(
        [helper.make_node("RoiAlign", ["x", "r", "i"], ["y"], **attrs)], "roi",
        [helper.make_tensor_value_info("x", F, [2, 3, 12, 10]),
         helper.make_tensor_value_info("r", F, [5, 4]),
         helper.make_tensor_value_info("i", I64, [5])],
        [helper.make_tensor_value_info("y", F, [5, 3, attrs.get("output_height", 1),
                                                attrs.get("output_width", 1)])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 16)])
    return tessel.compile(m.SerializeToString())


@pytest.mark.parametrize("mode", ["half_pixel", "output_half_pixel"])
@pytest.mark.parametrize("ratio", [0, 2])
def test_roi_align_matches_torchvision(mode, ratio):
    torch = pytest.importorskip("torch")
    ops = pytest.importorskip("torchvision.ops")
    f = compile_roialign(coordinate_transformation_mode=mode, output_height=3,
                         output_width=4, sampling_ratio=ratio, spatial_scale=0.5)
    x = RNG.standard_normal((2, 3, 12, 10)).astype(np.float32)
    xy = RNG.uniform(-4, 20, (5, 2)).astype(np.float32)
    wh = RNG.uniform(0.5, 12, (5, 2)).astype(np.float32)
    rois = np.concatenate([xy, xy + wh], axis=1)
    batch = np.array([0, 1, 1, 0, 1], np.int64)
    want = ops.roi_align(torch.from_numpy(x),
                         torch.from_numpy(np.concatenate([batch[:, None], rois], 1).astype(np.float32)),
                         output_size=(3, 4), spatial_scale=0.5, sampling_ratio=ratio,
                         aligned=mode == "half_pixel").numpy()
    np.testing.assert_allclose(f(x, rois, batch), want, rtol=1e-4, atol=1e-5)
    with pytest.raises(tessel.InvocationError, match="returned -4"):
        f(x, rois, np.array([0, 2, 0, 0, 0], np.int64))


def test_max_mode_is_an_error():
    with pytest.raises(tessel.CompileError, match="mode"):
        compile_roialign(mode="max")


def test_huge_output_is_an_error():
    with pytest.raises(tessel.CompileError, match="output"):
        compile_roialign(output_height=1 << 40, output_width=4)
