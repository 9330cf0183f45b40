"""Issue-level acceptance: real models built as torch.nn.Modules compile
through both doors of the package — the torch.fx importer
(tessel.compile(module, (x,))) and the module's ONNX export
(tessel.compile(path)) — and match the module's own output (rtol 1e-3).

The models are test/models/export_models.py's (seeded random weights,
randomized batch-norm statistics), so the lit model tests and these
check the same networks."""
import os
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tessel
from conftest import BIN, ROOT

sys.path.insert(0, os.path.join(ROOT, "test", "models"))
import export_models  # noqa: E402

MODELS = ["resnet18", "mobilenet_v2", "bert", "moe"]


def build(name):
    torch.manual_seed(export_models.SEED)
    if name == "moe":  # the top-2 MoE: 8 experts
        model, x = export_models.MoE(d=64, hidden=128, experts=8, k=2), torch.randn(64, 64)
    else:
        model, x = export_models.build(name)
    model.eval()
    export_models.randomize_batchnorm(model)
    # torch 1.13's fused transformer fast path runs only without grad; the
    # reference takes the regular path (same math), as the export does.
    with torch.enable_grad():
        ref = model(x).detach().numpy()
    return model, x, ref


def check(out, ref):
    np.testing.assert_allclose(out, ref, rtol=1e-3,
                               atol=1e-4 * max(1.0, float(np.abs(ref).max())))


@pytest.mark.parametrize("name", MODELS)
def test_torch_module_door(name):
    model, x, ref = build(name)
    compiled = tessel.compile(model, (x,))
    check(compiled(x), ref)


@pytest.mark.parametrize("name", MODELS)
def test_onnx_export_door(name, tmp_path):
    model, x, ref = build(name)
    path = tmp_path / f"{name}.onnx"
    with torch.enable_grad():
        torch.onnx.export(model, (x,), str(path), opset_version=17,
                          input_names=["input"], output_names=["output"])
    compiled = tessel.compile(path)
    check(compiled(x.numpy()), ref)


def test_saved_torch_model_runs_under_tessel_run(tmp_path):
    model, x, ref = build("resnet18")
    compiled = tessel.compile(model, (x,))
    path = compiled.save(tmp_path / "resnet18.so")
    np.save(tmp_path / "x.npy", x.numpy())
    subprocess.run([os.path.join(BIN, "tessel-run"), str(path),
                    f"--input=@{tmp_path / 'x.npy'}",
                    f"--output=@{tmp_path / 'y.npy'}"],
                   check=True, capture_output=True)
    y = np.load(tmp_path / "y.npy")
    np.testing.assert_array_equal(y, compiled(x))
    check(y, ref)
