"""Composable models written as model-level MLIR (compose + tosa + tessel),
with numpy references. Used by test_compose.py and bench/moe_route.py.

The weights are embedded as hex dense literals (exact float32 bits).
"""
import numpy as np


def dense(a):
    """An MLIR dense literal holding `a`'s float32/int32 bits exactly."""
    return 'dense<"0x' + np.ascontiguousarray(a).tobytes().hex().upper() + '">'


def _ty(shape, elem="f32"):
    return "tensor<" + "x".join("?" if s is None else str(s) for s in shape) + f"x{elem}>"


class MoE:
    """Top-k gated mixture of FFN experts:
    probs = softmax(x Wg); out = sum over the top k of w * expert(x), each
    expert relu(x W1 + b1) W2 + b2."""

    def __init__(self, tokens=64, d=64, hidden=128, experts=8, k=2,
                 renormalize=True, capacity=None, seed=0):
        rng = np.random.default_rng(seed)
        self.T, self.d, self.h, self.E, self.k = tokens, d, hidden, experts, k
        self.renormalize, self.capacity = renormalize, capacity
        s1, s2 = 1 / np.sqrt(d), 1 / np.sqrt(hidden)
        f32 = np.float32
        self.wg = rng.normal(0, 1, (d, experts)).astype(f32)
        self.w1 = rng.uniform(-s1, s1, (experts, d, hidden)).astype(f32)
        self.b1 = rng.uniform(-s1, s1, (experts, hidden)).astype(f32)
        self.w2 = rng.uniform(-s2, s2, (experts, hidden, d)).astype(f32)
        self.b2 = rng.uniform(-s2, s2, (experts, d)).astype(f32)

    def expert_mlir(self, e, name=None):
        d, h = self.d, self.h
        name = name or f"expert{e}"
        return f"""
compose.component @{name}(%x: {_ty((None, d))}) -> {_ty((None, d))}
    attributes {{state = #compose.state<frozen>, precision = f32}} {{
  %zp = "tosa.const"() <{{values = dense<0.0> : tensor<1xf32>}}> : () -> tensor<1xf32>
  %s3 = tosa.const_shape {{values = dense<[1, -1, {d}]> : tensor<3xindex>}} : () -> !tosa.shape<3>
  %s2 = tosa.const_shape {{values = dense<[-1, {d}]> : tensor<2xindex>}} : () -> !tosa.shape<2>
  %w1 = "tosa.const"() <{{values = {dense(self.w1[e])} : {_ty((1, d, h))}}}> : () -> {_ty((1, d, h))}
  %b1 = "tosa.const"() <{{values = {dense(self.b1[e])} : {_ty((1, 1, h))}}}> : () -> {_ty((1, 1, h))}
  %w2 = "tosa.const"() <{{values = {dense(self.w2[e])} : {_ty((1, h, d))}}}> : () -> {_ty((1, h, d))}
  %b2 = "tosa.const"() <{{values = {dense(self.b2[e])} : {_ty((1, 1, d))}}}> : () -> {_ty((1, 1, d))}
  %x3 = tosa.reshape %x, %s3 : ({_ty((None, d))}, !tosa.shape<3>) -> {_ty((1, None, d))}
  %m1 = tosa.matmul %x3, %w1, %zp, %zp : ({_ty((1, None, d))}, {_ty((1, d, h))}, tensor<1xf32>, tensor<1xf32>) -> {_ty((1, None, h))}
  %a1 = tosa.add %m1, %b1 : ({_ty((1, None, h))}, {_ty((1, 1, h))}) -> {_ty((1, None, h))}
  %r1 = tosa.clamp %a1 {{min_val = 0.0 : f32, max_val = 3.40282347e+38 : f32}} : ({_ty((1, None, h))}) -> {_ty((1, None, h))}
  %m2 = tosa.matmul %r1, %w2, %zp, %zp : ({_ty((1, None, h))}, {_ty((1, h, d))}, tensor<1xf32>, tensor<1xf32>) -> {_ty((1, None, d))}
  %a2 = tosa.add %m2, %b2 : ({_ty((1, None, d))}, {_ty((1, 1, d))}) -> {_ty((1, None, d))}
  %y = tosa.reshape %a2, %s2 : ({_ty((1, None, d))}, !tosa.shape<2>) -> {_ty((None, d))}
  compose.return %y : {_ty((None, d))}
}}
"""

    def mlir(self):
        T, d, E = self.T, self.d, self.E
        experts = ", ".join(f"@expert{e}" for e in range(E))
        attrs = f"experts = [{experts}], k = {self.k} : i64"
        if self.renormalize:
            attrs += ", renormalize"
        if self.capacity:
            attrs += f", capacity = {self.capacity} : i64"
        body = "".join(self.expert_mlir(e) for e in range(E))
        return body + f"""
func.func @main(%x: {_ty((T, d))}) -> {_ty((T, d))} {{
  %zp = "tosa.const"() <{{values = dense<0.0> : tensor<1xf32>}}> : () -> tensor<1xf32>
  %wg = "tosa.const"() <{{values = {dense(self.wg)} : {_ty((1, d, E))}}}> : () -> {_ty((1, d, E))}
  %s3 = tosa.const_shape {{values = dense<[1, {T}, {d}]> : tensor<3xindex>}} : () -> !tosa.shape<3>
  %s2 = tosa.const_shape {{values = dense<[{T}, {E}]> : tensor<2xindex>}} : () -> !tosa.shape<2>
  %x3 = tosa.reshape %x, %s3 : ({_ty((T, d))}, !tosa.shape<3>) -> {_ty((1, T, d))}
  %l3 = tosa.matmul %x3, %wg, %zp, %zp : ({_ty((1, T, d))}, {_ty((1, d, E))}, tensor<1xf32>, tensor<1xf32>) -> {_ty((1, T, E))}
  %l = tosa.reshape %l3, %s2 : ({_ty((1, T, E))}, !tosa.shape<2>) -> {_ty((T, E))}
  %p = tessel.softmax %l {{axis = -1 : i64}} : {_ty((T, E))}
  %y = compose.route %x, %p {{{attrs}}} : ({_ty((T, d))}, {_ty((T, E))}) -> {_ty((T, d))}
  return %y : {_ty((T, d))}
}}
"""

    def expert_ref(self, e, x):
        h = np.maximum(x @ self.w1[e].astype(np.float64) + self.b1[e], 0)
        return h @ self.w2[e].astype(np.float64) + self.b2[e]

    def reference(self, x):
        """float64 numpy: softmax gate, top-k (lowest index on ties),
        optional renormalization and capacity (token order)."""
        x = x.astype(np.float64)
        logits = x @ self.wg.astype(np.float64)
        p = np.exp(logits - logits.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        # stable argsort of -p: ties keep the lower index first
        idx = np.argsort(-p, axis=-1, kind="stable")[:, :self.k]
        w = np.take_along_axis(p, idx, -1)
        if self.renormalize:
            w = w / w.sum(-1, keepdims=True)
        keep = np.ones_like(idx, dtype=bool)
        if self.capacity:
            taken = np.zeros(self.E, dtype=int)
            for t in range(self.T):
                for j in range(self.k):
                    e = idx[t, j]
                    keep[t, j] = taken[e] < self.capacity
                    taken[e] += keep[t, j]
        out = np.zeros((self.T, self.d))
        for e in range(self.E):
            y = self.expert_ref(e, x)
            for j in range(self.k):
                sel = (idx[:, j] == e) & keep[:, j]
                out[sel] += w[sel, j:j + 1] * y[sel]
        return out
