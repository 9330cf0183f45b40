"""Inputs and numpy references for route-experts.test: a top-2 route of
three experts (exp, tanh, x @ W) with renormalized gate weights, and the
same with expert 1 retrained to a sigmoid."""
import sys

import numpy as np

out = sys.argv[1]
rng = np.random.default_rng(7)
x = rng.standard_normal((16, 4)).astype(np.float32)
p = rng.random((16, 3)).astype(np.float32)
W = np.array([[1.0, 0.5, 0.0, -1.0], [0.0, 1.0, 0.5, 0.0],
              [2.0, 0.0, 1.0, 0.5], [0.0, -0.5, 0.0, 1.0]], np.float32)


def route(experts):
    y = np.zeros_like(x)
    for t in range(16):
        top = np.argsort(-p[t], kind="stable")[:2]
        w = p[t, top] / p[t, top].sum()
        for e, we in zip(top, w):
            y[t] += we * experts[e](x[t:t + 1])[0]
    return y


sigmoid = lambda v: 1 / (1 + np.exp(-v))
np.save(f"{out}/x.npy", x)
np.save(f"{out}/p.npy", p)
np.save(f"{out}/x3.npy", x[:3])
np.save(f"{out}/x5.npy", x[:5])
np.save(f"{out}/exp5.npy", np.exp(x[:5]))
np.save(f"{out}/expected.npy", route([np.exp, np.tanh, lambda v: v @ W]))
np.save(f"{out}/expected_retrained.npy",
        route([np.exp, sigmoid, lambda v: v @ W]))
