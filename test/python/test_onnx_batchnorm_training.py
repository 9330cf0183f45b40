"""ONNX BatchNormalization with training_mode = 1 (opset 15): Y against
PyTorch's batch_norm in training mode, and the running statistics against
ONNX's definition (input * momentum + batch * (1 - momentum), the batch
variance biased, where PyTorch's running variance is unbiased)."""
import numpy as np
import pytest
import torch
from onnx import TensorProto, helper

import tessel


def model(shape, momentum, eps, stats_type=TensorProto.FLOAT, outputs=3):
    c = shape[1]
    vi = helper.make_tensor_value_info
    names = ["y", "running_mean", "running_var"][:outputs]
    node = helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], names,
                            name="bn0", training_mode=1, momentum=momentum, epsilon=eps)
    outs = [vi("y", TensorProto.FLOAT, shape)] + [vi(n, stats_type, [c]) for n in names[1:]]
    g = helper.make_graph([node], "bn", [vi("x", TensorProto.FLOAT, shape),
                                         vi("s", TensorProto.FLOAT, [c]),
                                         vi("b", TensorProto.FLOAT, [c]),
                                         vi("m", stats_type, [c]), vi("v", stats_type, [c])],
                          outs)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 15)])


@pytest.mark.parametrize("shape", [[4, 3], [2, 3, 5], [2, 4, 3, 5]])
def test_batchnorm_training_matches_torch(shape):
    rng = np.random.default_rng(len(shape))
    x = (rng.standard_normal(shape) * 2 + 1).astype(np.float32)
    c = shape[1]
    s, b = rng.standard_normal(c).astype(np.float32), rng.standard_normal(c).astype(np.float32)
    m, v = rng.standard_normal(c).astype(np.float32), rng.random(c).astype(np.float32) + 0.5
    momentum, eps = 0.8, 1e-3
    f = tessel.compile(model(shape, momentum, eps).SerializeToString())
    y, rm, rv = f(x, s, b, m, v)
    ref = torch.nn.functional.batch_norm(torch.from_numpy(x), None, None, torch.from_numpy(s),
                                         torch.from_numpy(b), training=True, eps=eps)
    np.testing.assert_allclose(y, ref.numpy(), rtol=1e-4, atol=1e-5)
    axes = tuple(d for d in range(len(shape)) if d != 1)
    np.testing.assert_allclose(rm, m * momentum + x.mean(axis=axes) * (1 - momentum),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rv, v * momentum + x.var(axis=axes) * (1 - momentum),
                               rtol=1e-5, atol=1e-6)


def test_batchnorm_training_y_only_and_bad_mode():
    x = np.random.default_rng(0).standard_normal([3, 2, 4]).astype(np.float32)
    one, zero = np.ones(2, np.float32), np.zeros(2, np.float32)
    f = tessel.compile(model([3, 2, 4], 0.9, 1e-5, outputs=1).SerializeToString())
    ref = torch.nn.functional.batch_norm(torch.from_numpy(x), None, None, training=True)
    np.testing.assert_allclose(f(x, one, zero, zero, one), ref.numpy(), rtol=1e-4, atol=1e-5)
    bad = model([3, 2, 4], 0.9, 1e-5)
    next(a for a in bad.graph.node[0].attribute if a.name == "training_mode").i = 2
    with pytest.raises(tessel.CompileError, match="attribute 'training_mode' = 2"):
        tessel.compile(bad.SerializeToString())
