"""What the torch-door tests share: a module's own outputs as the
reference, the comparison against them, and batch-norm statistics that
are not the defaults."""
import numpy as np
import torch
import torch.nn as nn


def reference(model, inputs, grad=False):
    """The module's own outputs (tensors only; tuples, lists and dicts
    flattened). With grad=True torch 1.13's transformer layers take their
    regular path instead of the fused/nested-tensor fast path."""
    with torch.set_grad_enabled(grad):
        out = model(*inputs)
    flat = []

    def walk(x):
        if isinstance(x, (tuple, list)):
            for item in x:
                walk(item)
        elif isinstance(x, dict):
            for item in x.values():
                walk(item)
        elif isinstance(x, torch.Tensor):
            flat.append(x.detach().numpy())
    walk(out)
    return flat


def check(out, ref):
    """Shape, and values: exact for integers, rtol 1e-3 (atol 1e-4 of the
    output's scale) for floats."""
    assert out.shape == ref.shape, (out.shape, ref.shape)
    if ref.dtype.kind in "biu":
        assert out.dtype == ref.dtype, (out.dtype, ref.dtype)
        np.testing.assert_array_equal(out, ref)
    else:
        np.testing.assert_allclose(out, ref, rtol=1e-3,
                                   atol=1e-4 * max(1.0, float(np.abs(ref).max())))


def randomize_batchnorm(model):
    """Fresh statistics (0 and 1) would hide mistakes in how they apply."""
    g = torch.Generator().manual_seed(7)
    for m in model.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm) and m.running_mean is not None:
            m.running_mean.copy_(torch.randn(m.num_features, generator=g) * 0.1)
            m.running_var.copy_(torch.rand(m.num_features, generator=g) + 0.5)
    return model
