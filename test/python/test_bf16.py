"""--precision=bf16 end to end: convolutions and matmuls (including a
batched matmul of two activations) multiply bf16-rounded operands and sum
in f32, at -O0 (linalg loops) and -O3 (the bf16 kernel), against PyTorch
computing the same thing in float64 from the bf16-rounded operands."""
import numpy as np
import pytest
import torch

import tessel


def bf16(t):
    return t.to(torch.bfloat16).to(torch.float64)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv2d(3, 16, 3, padding=1)
        self.c2 = torch.nn.Conv2d(16, 24, 3, stride=2, padding=1, dilation=1)
        self.fc = torch.nn.Linear(24 * 8, 10)

    def forward(self, x):
        x = torch.relu(self.c1(x))
        x = torch.relu(self.c2(x))                 # N x 24 x 8 x 8
        q = x.flatten(2)                           # N x 24 x 64
        s = torch.bmm(q, q.transpose(1, 2)) / 64   # activations x activations
        y = torch.bmm(s, q)                        # N x 24 x 64
        return self.fc(y[:, :, :8].flatten(1))


def reference(net, x):
    """The bf16 semantics: every conv / matmul operand rounded, f64 sums."""
    d = lambda t: t.to(torch.float64)  # noqa: E731
    with torch.no_grad():
        h = torch.relu(torch.nn.functional.conv2d(
            bf16(x), bf16(net.c1.weight), d(net.c1.bias), padding=1))
        h = torch.relu(torch.nn.functional.conv2d(
            bf16(h), bf16(net.c2.weight), d(net.c2.bias), stride=2, padding=1))
        q = h.flatten(2)
        s = torch.bmm(bf16(q), bf16(q.transpose(1, 2))) / 64
        y = torch.bmm(bf16(s), bf16(q))
        return (bf16(y[:, :, :8].flatten(1)) @ bf16(net.fc.weight).T
                + d(net.fc.bias)).numpy()


@pytest.mark.parametrize("opt_level", [0, 3])
def test_bf16_products_f32_sums(opt_level):
    torch.manual_seed(0)
    net = Net().eval()
    x = torch.randn(2, 3, 16, 16)
    with torch.no_grad():
        f32 = net(x).numpy()
    ref = reference(net, x)
    got = tessel.compile(net, (x,), precision="bf16", opt_level=opt_level)(x.numpy())
    scale = np.abs(ref).max()
    # Within f32 summation error of the bf16 reference ...
    assert np.abs(got - ref).max() < 1e-4 * scale
    # ... and really not the f32 model (bf16 rounds at 2^-9).
    assert np.abs(got - f32).max() > 1e-3 * scale
    assert np.abs(got - f32).max() < 5e-2 * scale


def test_bad_precision():
    with pytest.raises(ValueError, match="precision must be 'f32', 'bf16' or 'f16'"):
        tessel.compile(torch.nn.Linear(2, 2), (torch.randn(1, 2),), precision="fp8")


def test_bf16_bit_patterns_as_uint16(tmp_path):
    """numpy has no bf16: a bf16 input takes uint16 arrays as its bit
    patterns (Python and .npy files), and tessel-run compares a bf16 output
    against uint16 bit patterns (the ONNX test data's convention)."""
    import os
    import subprocess
    from onnx import TensorProto, helper
    from conftest import BIN
    vi = helper.make_tensor_value_info
    nodes = [helper.make_node("Cast", ["x"], ["f"], to=TensorProto.FLOAT),
             helper.make_node("Cast", ["f"], ["b"], to=TensorProto.BFLOAT16)]
    g = helper.make_graph(nodes, "c", [vi("x", TensorProto.BFLOAT16, [4])],
                          [vi("f", TensorProto.FLOAT, [4]), vi("b", TensorProto.BFLOAT16, [4])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    bits = np.array([0x3F80, 0xC040, 0x3EAB, 0x7F80], np.uint16)  # 1, -3, ~0.334, inf
    expect = (bits.astype(np.uint32) << 16).view(np.float32)
    f = tessel.compile(m.SerializeToString())
    got = f(bits)
    np.testing.assert_array_equal(got[0], expect)
    assert got[1].dtype == np.uint16  # a bf16 output: its bit patterns
    np.testing.assert_array_equal(got[1], bits)
    src, lib = tmp_path / "c.onnx", tmp_path / "c.so"
    src.write_bytes(m.SerializeToString())
    subprocess.run([os.path.join(BIN, "tessel-compile"), str(src), "-o", str(lib)], check=True)
    np.save(tmp_path / "x.npy", bits)
    np.save(tmp_path / "f.npy", expect)
    np.save(tmp_path / "b.npy", bits)
    run = [os.path.join(BIN, "tessel-run"), str(lib), f"--input=@{tmp_path / 'x.npy'}",
           f"--expected_output=@{tmp_path / 'f.npy'}"]
    ok = subprocess.run(run + [f"--expected_output=@{tmp_path / 'b.npy'}"],
                        capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    wrong = bits.copy()
    wrong[1] += 1
    np.save(tmp_path / "w.npy", wrong)
    bad = subprocess.run(run + [f"--expected_output=@{tmp_path / 'w.npy'}"],
                         capture_output=True, text=True)
    assert bad.returncode == 1 and "1 of 4 elements differ" in bad.stdout + bad.stderr
