"""ONNX 3-D ConvTranspose against torch.nn.functional.conv_transpose3d:
strides, pads (cropping), output_padding, dilations, groups and
output_shape, from one ONNX node each."""
import numpy as np
import pytest
import torch
from onnx import TensorProto, helper

import tessel

CASES = [
    # x shape, w shape, attrs (ONNX), torch kwargs
    ([1, 2, 3, 4, 5], [2, 3, 2, 3, 2], {}, {}),
    ([2, 2, 3, 3, 4], [2, 2, 3, 2, 3], dict(strides=[2, 1, 3]), dict(stride=(2, 1, 3))),
    ([1, 4, 3, 4, 3], [4, 2, 3, 3, 2], dict(strides=[2, 2, 1], pads=[1, 0, 1, 1, 1, 1],
                                            group=2),
     dict(stride=(2, 2, 1), padding=None, groups=2)),
    ([1, 2, 2, 3, 3], [2, 3, 2, 2, 3], dict(strides=[3, 2, 2], output_padding=[2, 1, 0],
                                            dilations=[1, 2, 1]),
     dict(stride=(3, 2, 2), output_padding=(2, 1, 0), dilation=(1, 2, 1))),
]


@pytest.mark.parametrize("xs,ws,attrs,kw", CASES)
def test_convtranspose3d_matches_torch(xs, ws, attrs, kw):
    rng = np.random.default_rng(len(attrs))
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal(ws).astype(np.float32)
    b = rng.standard_normal(ws[1] * attrs.get("group", 1)).astype(np.float32)
    pads = attrs.get("pads")
    if pads is not None:
        # torch pads symmetrically: crop the ONNX end pads after.
        kw = dict(kw, padding=tuple(pads[:3]))
    ref = torch.nn.functional.conv_transpose3d(torch.from_numpy(x), torch.from_numpy(w),
                                               torch.from_numpy(b), **kw).numpy()
    if pads is not None:
        extra = [pads[3 + i] - pads[i] for i in range(3)]
        ref = ref[:, :, :ref.shape[2] - extra[0] or None, :ref.shape[3] - extra[1] or None,
                  :ref.shape[4] - extra[2] or None]
    vi = helper.make_tensor_value_info
    node = helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], **attrs)
    g = helper.make_graph([node], "ct", [vi("x", TensorProto.FLOAT, xs),
                                         vi("w", TensorProto.FLOAT, ws),
                                         vi("b", TensorProto.FLOAT, [len(b)])],
                          [vi("y", TensorProto.FLOAT, list(ref.shape))])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    y = tessel.compile(m.SerializeToString())(x, w, b)
    assert y.shape == ref.shape
    np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-4)


def test_convtranspose3d_output_shape():
    rng = np.random.default_rng(7)
    x = rng.standard_normal([1, 1, 2, 3, 2]).astype(np.float32)
    w = rng.standard_normal([1, 2, 3, 3, 3]).astype(np.float32)
    vi = helper.make_tensor_value_info
    node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[2, 2, 2],
                            output_shape=[6, 8, 5])
    g = helper.make_graph([node], "ct", [vi("x", TensorProto.FLOAT, x.shape),
                                         vi("w", TensorProto.FLOAT, w.shape)],
                          [vi("y", TensorProto.FLOAT, [1, 2, 6, 8, 5])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    y = tessel.compile(m.SerializeToString())(x, w)
    # Natural size 5x7x5 plus the padding the output shape asks for
    # (ONNX: the total padding split with the odd unit at the start, here
    # negative, so the output extends at the end): output_padding (1, 1, 0).
    ref = torch.nn.functional.conv_transpose3d(torch.from_numpy(x), torch.from_numpy(w),
                                               stride=2, output_padding=(1, 1, 0)).numpy()
    np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-4)
