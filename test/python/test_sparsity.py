"""Static weight sparsity (docs/sparsity.md): matmuls whose constant weights
are mostly zeros run on the sparse kernel where the cost model predicts a
gain, with the same results as the dense path and numpy."""
import os
import subprocess

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import tessel
from conftest import BIN


def linear_relu_model(w, b, m):
    """x [1, m, k] -> relu(x @ w + b): what an exporter writes for a Linear."""
    k, n = w.shape
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"]),
             helper.make_node("Add", ["y", "b"], ["z"]),
             helper.make_node("Relu", ["z"], ["o"])]
    g = helper.make_graph(nodes, "linear",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, m, k])],
                          [helper.make_tensor_value_info("o", TensorProto.FLOAT, [1, m, n])],
                          [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def pruned(rng, k, n, density, block):
    """A k x n weight whose nonzeros come in `block` consecutive columns."""
    w = rng.standard_normal((k, n)).astype(np.float32)
    keep = rng.random((k, -(-n // block))) < density
    return w * np.repeat(keep, block, axis=1)[:, :n]


def compile_cli(tmp_path, model, *flags):
    src = tmp_path / "model.onnx"
    src.write_bytes(model.SerializeToString())
    report = tmp_path / "report.txt"
    lib = tmp_path / "model.so"
    cmd = [os.path.join(BIN, "tessel-compile"), "-O3", str(src), "-o", str(lib)]
    if "--sparsity=off" not in flags:
        cmd.append(f"--sparsity-report={report}")
    subprocess.run(cmd + list(flags), check=True)
    return lib, (report.read_text() if report.exists() else "")


def run_cli(tmp_path, lib, x):
    xin, out = tmp_path / "x.npy", tmp_path / "o.npy"
    np.save(xin, x)
    subprocess.run([os.path.join(BIN, "tessel-run"), str(lib), f"--input=@{xin}",
                    f"--output=@{out}"], check=True, stdout=subprocess.DEVNULL)
    return np.load(out)


# Odd shapes (N not a multiple of any block size, K and M remainders),
# block-structured and unstructured weights, and a dense one that must stay
# on the dense kernel.
@pytest.mark.parametrize("m,k,n,density,block,expect", [
    (7, 37, 50, 0.08, 4, "sparse"),
    (16, 256, 192, 0.10, 4, "sparse"),
    (5, 64, 33, 0.04, 1, "sparse"),
    (9, 48, 40, 0.10, 16, "sparse"),
    (8, 32, 24, 0.9, 1, "dense"),
])
def test_pruned_linear_matches_numpy_and_dense_path(tmp_path, m, k, n, density, block, expect):
    rng = np.random.default_rng(m * 1000 + n)
    w = pruned(rng, k, n, density, block)
    b = rng.standard_normal(n).astype(np.float32)
    model = linear_relu_model(w, b, m)
    x = rng.standard_normal((1, m, k)).astype(np.float32)
    ref = np.maximum(x.astype(np.float64) @ w.astype(np.float64) + b, 0)

    lib, report = compile_cli(tmp_path, model)
    assert f"M={m} K={k} N={n}" in report and report.rstrip().endswith(f"-> {expect}"), report
    got = run_cli(tmp_path, lib, x)
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4)

    dense_lib, _ = compile_cli(tmp_path, model, "--sparsity=off")
    np.testing.assert_allclose(run_cli(tmp_path, dense_lib, x), got, rtol=1e-5, atol=1e-5)

    # The Python API compiles with the same default.
    np.testing.assert_allclose(tessel.compile(model.SerializeToString())(x), got,
                               rtol=1e-6, atol=1e-6)


def test_pruned_torch_linear_stack_matches_torch(tmp_path):
    """A PyTorch MLP whose Linear weights are 90% zeros in 4 x 1 blocks (of
    the [out, in] weight), compiled from the module, against PyTorch."""
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(96, 128), torch.nn.GELU(),
                              torch.nn.Linear(128, 64)).eval()
    with torch.no_grad():
        for layer in (net[0], net[2]):
            out_f, in_f = layer.weight.shape
            keep = torch.rand(out_f // 4, in_f) < 0.1
            layer.weight *= keep.repeat_interleave(4, dim=0)
    x = torch.randn(32, 96)
    report = tmp_path / "sparsity.txt"
    f = tessel.compile(net, (x,), sparsity_report=report)
    np.testing.assert_allclose(f(x.numpy()), net(x).detach().numpy(), rtol=1e-3, atol=1e-4)
    lines = report.read_text().splitlines()
    assert len(lines) == 2 and all(l.endswith("-> sparse") and "best=4x1" in l
                                   for l in lines), lines


def test_sparsity_bad_options(tmp_path):
    model = linear_relu_model(np.eye(4, dtype=np.float32), np.zeros(4, np.float32), 2)
    with pytest.raises(ValueError, match="sparsity must be 'auto' or 'off'"):
        tessel.compile(model.SerializeToString(), sparsity="on")
    with pytest.raises(ValueError, match="sparsity_report applies with sparsity='auto'"):
        tessel.compile(model.SerializeToString(), sparsity="off",
                       sparsity_report=tmp_path / "r.txt")
