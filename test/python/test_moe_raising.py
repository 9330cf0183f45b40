"""Mixtures of experts from ONNX, torch and MLIR are raised to compose.route by
the tessel-raise-moe pass (docs/dialects/compose.md), compile
through the route lowering and match their references. Look-alikes that
are not top-k routes stay dense and still compute the right thing."""
import io
import os
import sys

import numpy as np
import pytest
import torch

import tessel
import torch_models as tm

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Importers",
                                "ONNX", "Inputs"))
import make_moe_model  # noqa: E402


def assert_close(got, ref, rtol):
    ref = np.asarray(ref)
    scale = max(np.abs(ref).max(), 1e-6)
    err = np.abs(np.asarray(got, dtype=np.float64) - ref).max()
    assert err <= rtol * scale, f"max error {err} > {rtol} * {scale}"


def is_raised(source, *example):
    text = str(tessel.compiler.to_module(source, example or None))
    return "compose.route" in text


@pytest.mark.parametrize("kind", make_moe_model.KINDS)
def test_onnx_forms_against_numpy(kind):
    model, reference, raisable = make_moe_model.build(kind)
    assert is_raised(model) == raisable
    x = np.random.default_rng(11).normal(size=(make_moe_model.T,
                                                make_moe_model.D)).astype(np.float32)
    modes = ["grouped", "dense"] if raisable else ["grouped"]
    for mode in modes:
        compiled = tessel.compile(model, route_lowering=mode)
        assert_close(compiled(x), reference(x), 1e-5)


def test_raise_moe_off_keeps_the_dense_graph():
    model, reference, _ = make_moe_model.build("scatter")
    assert "compose." not in str(tessel.compiler.to_module(model, raise_moe=False))
    x = np.random.default_rng(2).normal(size=(6, 4)).astype(np.float32)
    assert_close(tessel.compile(model, raise_moe=False)(x), reference(x), 1e-5)


def _issue_moe(seed=0):
    """The issue's MoE: 8 experts, top-2, d 256, hidden 512."""
    torch.manual_seed(seed)
    return tm.TopKMoE(d=256, hidden=512, experts=8, k=2).eval()


def _check_against_torch(compiled, model, x):
    with torch.no_grad():
        refs = model(x)
    outs = compiled(x.numpy())
    for out, ref in zip(outs, refs):
        assert_close(out, ref.numpy(), 1e-3)


@pytest.mark.parametrize("tokens", [64, 1024])
def test_torch_moe_is_routed_and_matches_pytorch(tokens):
    model = _issue_moe()
    x = torch.randn(1, tokens, 256)
    assert is_raised(model, x)
    _check_against_torch(tessel.compile(model, (x,)), model, x)


def test_onnx_exported_moe_is_routed_and_matches_pytorch():
    """torch.onnx.export's graph (Gather/OneHot/Where spelled differently
    from Tessel's own torch importer) raises too."""
    model = _issue_moe(seed=1)
    x = torch.randn(1, 64, 256)
    f = io.BytesIO()
    torch.onnx.export(model, (x,), f, opset_version=13, input_names=["x"])
    proto = f.getvalue()
    assert is_raised(proto)
    for mode in ["grouped", "dense"]:
        _check_against_torch(tessel.compile(proto, route_lowering=mode),
                             model, x)


# --------------------------------------------------------------------------
# MLIR written densely (test/Dialect/Compose/raise-moe.mlir, whose IR the
# lit test checks) is raised by tessel.compile too and matches numpy.

_RAISE_MOE_MLIR = os.path.join(os.path.dirname(__file__), "..", "Dialect",
                               "Compose", "raise-moe.mlir")


def _mlir_forms():
    """{name: MLIR text with that function renamed @main}."""
    forms = {}
    with open(_RAISE_MOE_MLIR) as f:
        chunks = f.read().split("// -----")
    for chunk in chunks:
        body = "\n".join(l for l in chunk.splitlines()
                         if not l.strip().startswith("//"))
        start = body.find("func.func @")
        if start < 0:
            continue
        name = body[start + len("func.func @"):].split("(", 1)[0]
        forms[name] = body.replace(f"func.func @{name}(", "func.func @main(")
    return forms


def _expert(x, e, mixing=False):
    """The file's experts: clamp(x * [e + 1, 1 - (e + 1) / 2]) >= 0."""
    y = np.maximum(x * np.array([e + 1.0, 1.0 - (e + 1.0) / 2]), 0)
    return y - y.sum(0, keepdims=True) if mixing else y


def _route(x, s, k, weights="plain", experts=None, scale0=1.0, mask=False,
           mixing=None):
    """sum_e g_e * expert_e(x) with g_e the top-k weight of expert e."""
    e_count = s.shape[1]
    idx = np.argsort(-s, axis=1, kind="stable")[:, :k]
    v = np.take_along_axis(s, idx, axis=1)
    if weights == "renormalized":
        v = v / v.sum(1, keepdims=True)
    elif weights == "softmax":
        v = np.exp(v - v.max(1, keepdims=True))
        v = v / v.sum(1, keepdims=True)
    out = 0
    for e in (range(e_count) if experts is None else experts):
        g = (v * (idx == e)).sum(1, keepdims=True) * (scale0 if e == 0 else 1)
        term = g * _expert(x, e, mixing == e)
        out = out + (np.where(g > 0, term, 0) if mask else term)
    return out


def _softmax(a):
    a = np.exp(a - a.max(1, keepdims=True))
    return a / a.sum(1, keepdims=True)


_CONTRACTED = [np.array([1.0, 0.5]), np.array([2.0, 0.0])]


def _top1_matrix(s):
    """The T x E matrix holding each row's top-1 value at its expert."""
    g = np.zeros_like(s)
    top = s.argmax(1)
    g[np.arange(len(s)), top] = s[np.arange(len(s)), top]
    return g


def _contract(g, ys):
    return sum(g[:, e:e + 1] * y for e, y in enumerate(ys))


_MLIR_REFERENCES = {
    # name: (raised, experts E, reference(x, s))
    "top1_plain": (True, 2, lambda x, s: _route(x, s, 1)),
    "top2_renormalized": (True, 3, lambda x, s: _route(x, s, 2, "renormalized")),
    "top2_softmax_of_logits": (True, 3, lambda x, s: _route(x, s, 2, "softmax")),
    "masked_with_shared_expert": (
        True, 2, lambda x, s: _route(x, _softmax(s), 1, mask=True) + _expert(x, 4)),
    "two_layers": (True, 2, lambda x, s: _route(_route(x, s, 1), s, 1)),
    "scaled_gate": (False, 2, lambda x, s: _route(x, s, 1, scale0=2.0)),
    "missing_expert": (False, 3, lambda x, s: _route(x, s, 1, experts=[0, 1])),
    "token_mixing": (False, 2, lambda x, s: _route(x, s, 1, mixing=1)),
    # The contraction forms: experts y_e = [clamp](x * w_e).
    "einsum_combine": (True, 2, lambda x, s: _contract(
        _top1_matrix(s), [np.maximum(x * w, 0) for w in _CONTRACTED])),
    "weighted_sum_combine": (True, 2, lambda x, s: _contract(
        _top1_matrix(s), [x * w for w in _CONTRACTED])),
    "contraction_without_top_k": (False, 2, lambda x, g: _contract(
        g, [x * w for w in _CONTRACTED])),
}


@pytest.mark.parametrize("name", sorted(_MLIR_REFERENCES))
def test_mlir_forms_against_numpy(name):
    text = _mlir_forms()[name]
    raised, experts, reference = _MLIR_REFERENCES[name]
    assert ("compose.route" in str(tessel.compiler.to_module(text))) == raised
    assert "compose.route" not in str(
        tessel.compiler.to_module(text, raise_moe=False))
    rng = np.random.default_rng(5)
    x = rng.normal(size=(4, 2)).astype(np.float32)
    s = rng.normal(size=(4, experts)).astype(np.float32)
    for mode in ["grouped", "dense"]:
        got = tessel.compile(text, route_lowering=mode)(x, s)
        assert_close(got, reference(x.astype(np.float64), s.astype(np.float64)),
                     1e-5)


# --------------------------------------------------------------------------
# Combines written as one contraction over the experts (einsum, bmm, a
# weighted sum over a stacked axis) are raised too, from torch through both
# exporters.

class _SmallMoE(torch.nn.Module):
    """A linear gate over `experts` two-layer ReLU experts; subclasses
    combine them."""

    def __init__(self, d=8, hidden=16, experts=4):
        super().__init__()
        self.gate = torch.nn.Linear(d, experts)
        self.experts = torch.nn.ModuleList(
            torch.nn.Sequential(torch.nn.Linear(d, hidden), torch.nn.ReLU(),
                                torch.nn.Linear(hidden, d))
            for _ in range(experts))


class _ContractedMoE(_SmallMoE):
    """Softmax gate, top-2, renormalized, a dense T x E gate matrix by
    scatter, every expert's output stacked and contracted with it."""

    def __init__(self, combine):
        super().__init__()
        self.combine = combine

    def forward(self, x):
        p = torch.softmax(self.gate(x), -1)
        w, i = torch.topk(p, 2, -1)
        g = torch.zeros_like(p).scatter(1, i, w / w.sum(-1, keepdim=True))
        if self.combine == "einsum te,etd":
            y = torch.stack([e(x) for e in self.experts], 0)
            return torch.einsum("te,etd->td", g, y)
        if self.combine == "einsum etd,te":
            y = torch.stack([e(x) for e in self.experts], 0)
            return torch.einsum("etd,te->td", y, g)
        y = torch.stack([e(x) for e in self.experts], 1)
        if self.combine == "einsum te,ted":
            return torch.einsum("te,ted->td", g, y)
        if self.combine == "bmm":
            return torch.bmm(g.unsqueeze(1), y).squeeze(1)
        return (g.unsqueeze(-1) * y).sum(1)


@pytest.mark.parametrize("exporter", ["fx", "torch.onnx"])
@pytest.mark.parametrize("combine", ["einsum te,etd", "einsum etd,te",
                                     "einsum te,ted", "bmm", "weighted sum"])
def test_contracted_combines_are_routed_and_match_pytorch(combine, exporter):
    torch.manual_seed(4)
    model = _ContractedMoE(combine).eval()
    x = torch.randn(16, 8)
    module = tessel.compiler.to_module(model, (x,), torch_exporter=exporter)
    assert "compose.route" in str(module)
    with torch.no_grad():
        ref = model(x).numpy()
    got = tessel.compile(model, (x,), torch_exporter=exporter)(x.numpy())
    assert_close(got, ref, 1e-5)


class _IndexedMoE(_SmallMoE):
    """Each expert on just its tokens, found with torch.where and gathered
    with index_select, the results summed back with index_add: sizes that
    follow from the data (NonZero). tessel-raise-moe densifies each expert
    term and raises the mixture to compose.route. With `mixing`, each
    expert's rows are centred over its own tokens, which is not token-wise:
    that look-alike must keep its sparse form (densified, the mean would
    run over every token)."""

    def __init__(self, k=2, mixing=False):
        super().__init__()
        self.k = k
        self.mixing = mixing

    def forward(self, x):
        p = torch.softmax(self.gate(x), -1)
        w, i = torch.topk(p, self.k, -1)
        w = w / w.sum(-1, keepdim=True)
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            tok, slot = torch.where(i == e)
            y = expert(x.index_select(0, tok))
            if self.mixing:
                y = y - y.mean(0, keepdim=True)
            y = y * w[tok, slot].unsqueeze(-1)
            out = out.index_add(0, tok, y)
        return out


@pytest.mark.parametrize("tokens,k,mixing", [(1, 2, False), (16, 2, False),
                                             (40, 2, False), (16, 1, False),
                                             (16, 2, True)])
def test_index_select_index_add_moe_matches_pytorch(tokens, k, mixing):
    torch.manual_seed(6)
    model = _IndexedMoE(k, mixing).eval()
    x = torch.randn(tokens, 8)
    # The FX importer cannot trace torch.where(cond); the ONNX export can.
    with pytest.warns(tessel.TorchImportWarning, match="torch.onnx.export"):
        compiled = tessel.compile(model, (x,))
    with torch.no_grad():
        assert_close(compiled(x.numpy()), model(x).numpy(), 1e-5)
    # Other inputs route other tokens (an expert may get none): one artifact.
    x2 = torch.randn(tokens, 8) * 3
    with torch.no_grad():
        assert_close(compiled(x2.numpy()), model(x2).numpy(), 1e-5)


@pytest.mark.parametrize("k,mixing", [(2, False), (1, False), (2, True)])
def test_index_select_index_add_moe_is_raised(tmp_path, k, mixing):
    """Token-wise experts: each term densified (the gather, expert and
    scatter of its tokens become gate x expert(x)), then raised to one
    compose.route with no positions left to compute. The mixing look-alike
    keeps its positions (tessel.nonzero), gathers and scatters."""
    torch.manual_seed(6)
    model = _IndexedMoE(k, mixing).eval()
    path = str(tmp_path / "moe.onnx")
    torch.onnx.export(model, (torch.randn(16, 8),), path)
    text = str(tessel.compiler.to_module(path))
    experts = len(model.experts)
    if mixing:
        assert "compose.route" not in text
        assert text.count("tessel.nonzero") == experts
        assert text.count("tessel.scatter_elements") == experts
        return
    names = ", ".join(f"@moe0_expert{e}" for e in range(experts))
    assert f"experts = [{names}], k = {k} : i64" in text
    # From the module too (the torch door hands torch.where to the export).
    with pytest.warns(tessel.TorchImportWarning, match="torch.onnx.export"):
        assert is_raised(model, torch.randn(16, 8))
    for op in ("tessel.nonzero", "tessel.gather", "tessel.scatter_elements",
               "tessel.require"):
        assert op not in text
