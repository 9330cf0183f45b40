"""ONNX Resize with coordinate_transformation_mode = tf_crop_and_resize
(TensorFlow's crop_and_resize): linear and nearest, the region and sizes
as constants (a static result) or graph inputs read at run time, against a
numpy transcription of the ONNX reference (the first axis interpolated
last; sources outside the input take extrapolation_value)."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import tessel


def interp_1d(data, x_out, out_size, roi, mode, extrap):
    n = len(data)
    if out_size == 1:
        x = (roi[1] - roi[0]) * (n - 1) / 2
    else:
        x = x_out * (roi[1] - roi[0]) * (n - 1) / (out_size - 1)
    x += roi[0] * (n - 1)
    if x < 0 or x > n - 1:
        return extrap
    if mode == "nearest":  # round_prefer_floor
        f = np.floor(x)
        i = int(f if x - f == 0.5 else np.round(x))
        return data[min(max(i, 0), n - 1)]
    f = int(np.floor(x))
    t = x - f
    lo, hi = min(max(f, 0), n - 1), min(max(f + 1, 0), n - 1)
    return data[lo] * (1 - t) + data[hi] * t


def interp_nd(data, idx, sizes, roi, mode, extrap):
    r = data.ndim
    if r == 1:
        return interp_1d(data, idx[0], sizes[0], (roi[0], roi[r]), mode, extrap)
    inner_roi = list(roi[1:r]) + list(roi[r + 1:])
    col = [interp_nd(data[i], idx[1:], sizes[1:], inner_roi, mode, extrap)
           for i in range(data.shape[0])]
    return interp_1d(np.array(col), idx[0], sizes[0], (roi[0], roi[r]), mode, extrap)


def reference(x, roi, sizes, mode, extrap):
    y = np.zeros(sizes, np.float64)
    for idx in np.ndindex(*sizes):
        y[idx] = interp_nd(x.astype(np.float64), idx, sizes, roi, mode, extrap)
    return y.astype(np.float32)


def model(x_shape, roi, sizes, mode, extrap, constants):
    vi = helper.make_tensor_value_info
    inits, inputs = [], [vi("x", TensorProto.FLOAT, x_shape)]
    if constants:
        inits = [numpy_helper.from_array(np.array(roi, np.float32), "roi"),
                 numpy_helper.from_array(np.array(sizes, np.int64), "sizes")]
    else:
        inputs += [vi("roi", TensorProto.FLOAT, [len(roi)]),
                   vi("sizes", TensorProto.INT64, [len(sizes)])]
    node = helper.make_node("Resize", ["x", "roi", "", "sizes"], ["y"], mode=mode,
                            coordinate_transformation_mode="tf_crop_and_resize",
                            extrapolation_value=extrap)
    out = vi("y", TensorProto.FLOAT, sizes if constants else [None] * len(sizes))
    g = helper.make_graph([node], "r", inputs, [out], initializer=inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


CASES = [
    ([1, 1, 4, 4], [0, 0, 0.4, 0.6, 1, 1, 1.2, 1.7], [1, 1, 3, 3]),
    ([1, 2, 5, 6], [0, 0, 0.1, 0.2, 1, 1, 0.9, 0.7], [1, 2, 4, 7]),
    ([2, 1, 4, 5], [0, 0, -0.25, 0.3, 1, 1, 0.85, 1.0], [2, 1, 6, 1]),
]


@pytest.mark.parametrize("mode", ["linear", "nearest"])
@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("constants", [True, False])
def test_tf_crop_and_resize(mode, case, constants):
    shape, roi, sizes = CASES[case]
    x = np.random.default_rng(case).standard_normal(shape).astype(np.float32)
    ref = reference(x, roi, sizes, mode, 10.0)
    assert (ref == 10.0).any() or case == 1  # some cases extrapolate
    f = tessel.compile(model(shape, roi, sizes, mode, 10.0, constants).SerializeToString())
    y = f(x) if constants else f(x, np.array(roi, np.float32), np.array(sizes, np.int64))
    assert y.shape == tuple(sizes)
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-5)


def test_tf_crop_and_resize_needs_a_roi():
    m = model([1, 1, 4, 4], [0, 0, 0, 0, 1, 1, 1, 1], [1, 1, 2, 2], "linear", 0.0, True)
    m.graph.node[0].input[1] = ""
    m.graph.initializer.pop(0)
    m.graph.node[0].name = "resize0"
    with pytest.raises(tessel.CompileError) as e:
        tessel.compile(m.SerializeToString())
    assert "resize0" in str(e.value) and "roi" in str(e.value), str(e.value)
