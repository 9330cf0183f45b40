"""ONNX MaxPool's Indices output against PyTorch's max_pool with
return_indices (whose indices count within one image's channel plane; ONNX's
count over the whole input), in 1-D, 2-D and 3-D, with strides, padding,
dilations and ceil_mode, row-major and column-major (storage_order)."""
import numpy as np
import pytest
import torch
from onnx import TensorProto, helper

import tessel


def pool_model(x_shape, y_shape, **attrs):
    node = helper.make_node("MaxPool", ["x"], ["y", "i"], **attrs)
    g = helper.make_graph([node], "mp",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape),
                           helper.make_tensor_value_info("i", TensorProto.INT64, y_shape)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 12)])


@pytest.mark.parametrize("spatial,kernel,stride,pad,dilation,ceil,order", [
    ((9,), (3,), 2, 1, 1, 0, 0),
    ((7, 8), (3, 3), 1, 1, 1, 0, 0),
    ((7, 8), (2, 3), 2, 0, 1, 1, 0),
    ((7, 8), (3, 2), (2, 1), 1, 2, 0, 1),
    ((9, 6), (2, 2), 2, 0, 1, 1, 1),
    ((5, 6, 4), (2, 3, 2), 1, (1, 1, 0), 1, 0, 0),
])
def test_maxpool_indices_match_torch(spatial, kernel, stride, pad, dilation, ceil, order):
    n, c, d = 2, 3, len(spatial)
    rng = np.random.default_rng(sum(spatial) + d)
    x = rng.standard_normal((n, c, *spatial)).astype(np.float32)
    fn = {1: torch.nn.functional.max_pool1d, 2: torch.nn.functional.max_pool2d,
          3: torch.nn.functional.max_pool3d}[d]
    y_ref, i_ref = fn(torch.from_numpy(x), kernel, stride=stride, padding=pad,
                      dilation=dilation, ceil_mode=bool(ceil), return_indices=True)
    y_ref, i_ref = y_ref.numpy(), i_ref.numpy().astype(np.int64)
    if order:  # column-major: the spatial offset with the dims reversed
        coords = np.unravel_index(i_ref, spatial)
        flat = np.zeros_like(i_ref)
        for k in reversed(range(d)):
            flat = flat * spatial[k] + coords[k]
        i_ref = flat
    plane = np.prod(spatial)
    base = (np.arange(n)[:, None] * c + np.arange(c)[None, :]) * plane
    i_ref = i_ref + base.reshape(n, c, *([1] * d))

    def per_axis(v):
        return list(v) if isinstance(v, tuple) else [v] * d
    pads = per_axis(pad)
    attrs = dict(kernel_shape=list(kernel), strides=per_axis(stride),
                 pads=pads + pads, dilations=per_axis(dilation), ceil_mode=ceil,
                 storage_order=order)
    f = tessel.compile(pool_model(x.shape, y_ref.shape, **attrs).SerializeToString())
    y, i = f(x)
    np.testing.assert_array_equal(y, y_ref)
    np.testing.assert_array_equal(i, i_ref)
