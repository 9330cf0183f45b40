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

    def mlir(self, external_experts=False):
        """The whole model; with `external_experts`, only the router: each
        expert is an external component, compiled on its own
        (`component="expert<e>"` of the whole model) and linked by name."""
        T, d, E = self.T, self.d, self.E
        experts = ", ".join(f"@expert{e}" for e in range(E))
        attrs = f"experts = [{experts}], k = {self.k} : i64"
        if self.renormalize:
            attrs += ", renormalize"
        if self.capacity:
            attrs += f", capacity = {self.capacity} : i64"
        if external_experts:
            body = "".join(
                f"compose.component private @expert{e}({_ty((None, d))}) -> "
                f"{_ty((None, d))}\n" for e in range(E))
        else:
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


def torch_moe(m):
    """`m` as a PyTorch module (eval mode)."""
    import torch

    class TorchMoE(torch.nn.Module):
        """The same MoE in PyTorch, written the way MoE layers usually are:
        softmax gate, topk, renormalize, each expert on the tokens routed to it
        (index_select / index_add_)."""

        def __init__(self, m):
            super().__init__()
            self.k = m.k
            self.gate = torch.nn.Linear(m.d, m.E, bias=False)
            self.gate.weight.data = torch.from_numpy(m.wg.T.copy())
            self.experts = torch.nn.ModuleList()
            for e in range(m.E):
                l1, l2 = torch.nn.Linear(m.d, m.h), torch.nn.Linear(m.h, m.d)
                l1.weight.data = torch.from_numpy(m.w1[e].T.copy())
                l1.bias.data = torch.from_numpy(m.b1[e].copy())
                l2.weight.data = torch.from_numpy(m.w2[e].T.copy())
                l2.bias.data = torch.from_numpy(m.b2[e].copy())
                self.experts.append(torch.nn.Sequential(l1, torch.nn.ReLU(), l2))

        def forward(self, x):
            probs = torch.softmax(self.gate(x), dim=-1)
            w, idx = torch.topk(probs, self.k, dim=-1)
            w = w / w.sum(-1, keepdim=True)
            out = torch.zeros_like(x)
            for e, expert in enumerate(self.experts):
                tok, slot = torch.nonzero(idx == e, as_tuple=True)
                if tok.numel():
                    y = expert(x.index_select(0, tok)) * w[tok, slot].unsqueeze(-1)
                    out.index_add_(0, tok, y)
            return out

    return TorchMoE(m).eval()


class MemoryModel:
    """A memory-augmented layer: each query row computes a slot address
    (argmax of x Wa), reads that slot, does a cosine content lookup over the
    memory, and writes x Wv back (added) at the addressed slots:

        y = read(mem, loc) + lookup(x Wq, mem, mem); mem' = mem + scatter(x Wv)
    """

    def __init__(self, rows=8, d=16, slots=32, width=24, scale=4.0, seed=0):
        rng = np.random.default_rng(seed)
        self.N, self.d, self.S, self.W, self.scale = rows, d, slots, width, scale
        f32 = np.float32
        self.wa = rng.normal(0, 1, (d, slots)).astype(f32)
        self.wq = rng.normal(0, 0.3, (d, width)).astype(f32)
        self.wv = rng.normal(0, 0.3, (d, width)).astype(f32)

    def mlir(self):
        N, d, S, W = self.N, self.d, self.S, self.W

        def proj(name, w, cols):
            return f"""
  %{name}w = "tosa.const"() <{{values = {dense(w)} : {_ty((1, d, cols))}}}> : () -> {_ty((1, d, cols))}
  %{name}3 = tosa.matmul %x3, %{name}w, %zp, %zp : ({_ty((1, N, d))}, {_ty((1, d, cols))}, tensor<1xf32>, tensor<1xf32>) -> {_ty((1, N, cols))}
  %{name}s = tosa.const_shape {{values = dense<[{N}, {cols}]> : tensor<2xindex>}} : () -> !tosa.shape<2>
  %{name} = tosa.reshape %{name}3, %{name}s : ({_ty((1, N, cols))}, !tosa.shape<2>) -> {_ty((N, cols))}"""

        return f"""
func.func @main(%x: {_ty((N, d))}, %mem: {_ty((S, W))}) -> ({_ty((N, W))}, {_ty((S, W))}) {{
  %zp = "tosa.const"() <{{values = dense<0.0> : tensor<1xf32>}}> : () -> tensor<1xf32>
  %xs = tosa.const_shape {{values = dense<[1, {N}, {d}]> : tensor<3xindex>}} : () -> !tosa.shape<3>
  %x3 = tosa.reshape %x, %xs : ({_ty((N, d))}, !tosa.shape<3>) -> {_ty((1, N, d))}
  {proj("addr", self.wa, S)}
  {proj("q", self.wq, W)}
  {proj("v", self.wv, W)}
  %loc = tosa.argmax %addr {{axis = 1 : i32}} : ({_ty((N, S))}) -> tensor<{N}xi32>
  %r = compose.memory_read %mem[%loc] : {_ty((S, W))}, tensor<{N}xi32> -> {_ty((N, W))}
  %l = compose.memory_lookup %q in %mem, %mem {{similarity = #compose.similarity<cosine>, scale = {self.scale} : f32}}
      : {_ty((N, W))}, {_ty((S, W))}, {_ty((S, W))} -> {_ty((N, W))}
  %y = tosa.add %r, %l : ({_ty((N, W))}, {_ty((N, W))}) -> {_ty((N, W))}
  %m2 = compose.memory_write %v into %mem[%loc] {{mode = #compose.write_mode<add>}}
      : {_ty((N, W))}, tensor<{N}xi32> -> {_ty((S, W))}
  return %y, %m2 : {_ty((N, W))}, {_ty((S, W))}
}}
"""

    def reference(self, x, mem):
        x64, m64 = x.astype(np.float64), mem.astype(np.float64)
        # the address is chosen from float32 scores, as the artifact does
        loc = np.argmax(x @ self.wa, axis=1)
        read = m64[loc]
        q = x64 @ self.wq

        def unit(a):
            return a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-8)

        s = self.scale * unit(q) @ unit(m64).T
        p = np.exp(s - s.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        y = read + p @ m64
        new = m64.copy()
        np.add.at(new, loc, x64 @ self.wv)
        return y, new
