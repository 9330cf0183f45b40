"""Mixtures of experts from ONNX and torch are raised to compose.route by
the importer (docs/importers/onnx.md, "Mixture of experts"), compile
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
