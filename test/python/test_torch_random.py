"""Random ops through the torch door: torch.rand/randn (constant sizes
too: traced as calls, not folded into one draw), rand_like/randn_like,
bernoulli, multinomial with replacement, F.dropout in training mode. The
artifact draws from Tessel's generator on every call, so the checks are
the distributions and that calls differ (PyTorch's own values are not
reproduced); what does not convert is an error naming the op."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

import tessel


class Draws(nn.Module):
    def forward(self, x):
        n = torch.randn(64, 1000) * 2.0 + 1.0
        u = torch.rand_like(x)
        v = torch.rand(3, 5, dtype=torch.float64)
        b = torch.bernoulli(torch.full_like(x, 0.3) + 0 * x)
        c = torch.bernoulli(x, 0.8)
        d = F.dropout(x, 0.25, training=True)
        e = F.dropout(x, 0.25, training=False)
        g = torch.dropout(x, 0.5, train=True)
        return n, u, v, b, c, d, e, g


def test_draws_and_their_distributions():
    x = torch.ones(200, 500)
    f = tessel.compile(Draws().eval(), (x,))
    n, u, v, b, c, d, e, g = f(x.numpy())
    assert n.shape == (64, 1000) and n.dtype == np.float32
    assert abs(n.mean() - 1.0) < 0.03 and abs(n.std() - 2.0) < 0.03
    assert u.shape == (200, 500) and 0 <= u.min() and u.max() < 1
    assert abs(u.mean() - 0.5) < 0.01
    assert v.dtype == np.float64 and v.shape == (3, 5)
    assert set(np.unique(b)) <= {0.0, 1.0} and abs(b.mean() - 0.3) < 0.01
    assert abs(c.mean() - 0.8) < 0.01
    # Dropout keeps 3/4 of the elements, scaled by 4/3; in eval, the identity.
    assert set(np.unique(d)).issubset({0.0, np.float32(4 / 3)})
    assert abs((d != 0).mean() - 0.75) < 0.01
    np.testing.assert_array_equal(e, x.numpy())
    assert set(np.unique(g)).issubset({0.0, 2.0}) and abs((g != 0).mean() - 0.5) < 0.01
    # Every call draws anew (the sizes were constants: not one draw baked in).
    n2, u2 = f(x.numpy())[:2]
    assert np.mean(n2 != n) > 0.99 and np.mean(u2 != u) > 0.99


class Sampler(nn.Module):
    def forward(self, w):
        return torch.multinomial(w, 20000, replacement=True), torch.multinomial(w[0], 1)


def test_multinomial_frequencies():
    w = torch.tensor([[1.0, 0.0, 3.0], [2.0, 2.0, 0.0]])
    f = tessel.compile(Sampler().eval(), (w,))
    many, one = f(w.numpy())
    assert many.dtype == np.int64 and many.shape == (2, 20000)
    assert one.shape == (1,) and one[0] in (0, 2)
    freq = np.stack([np.bincount(r, minlength=3) / 20000 for r in many])
    np.testing.assert_allclose(freq, [[0.25, 0.0, 0.75], [0.5, 0.5, 0.0]], atol=0.015)


@pytest.mark.parametrize("forward,match", [
    (lambda x: torch.multinomial(x, 4), "without replacement"),
    (lambda x: x + torch.randint_like(x, 3), "this random op is not supported"),
    (lambda x: F.alpha_dropout(x, 0.5, training=True), "alpha and feature"),
])
def test_what_does_not_convert(forward, match):
    class M(nn.Module):
        def forward(self, x):
            return forward(x)

    with pytest.raises(tessel.TorchImportError, match=match):
        tessel.compile(M().eval(), (torch.ones(2, 5),))
