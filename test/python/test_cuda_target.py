"""target="cuda" from Python: the options reach the compiler (the PTX it
writes), and an artifact for the GPU fails to load with a clear error where
this machine has no CUDA driver (the results on a GPU are checked by
test/gpu/run_device_check.sh)."""
import ctypes
import os

import numpy as np
import pytest
import torch

import tessel
from tessel.compiler import to_module


def _has_driver():
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


HAS_DRIVER = _has_driver()


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(32, 64)
        self.fc2 = torch.nn.Linear(64, 8)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def test_ptx_for_the_requested_architecture(tmp_path):
    torch.manual_seed(0)
    module = to_module(MLP().eval(), (torch.randn(4, 32),))
    out = tmp_path / "mlp.ptx"
    module._native.compile(str(out), emit="ptx", target="cuda",
                           cuda_arch="sm_90")
    ptx = out.read_text()
    assert ".target sm_90" in ptx
    # fc1 and fc2 are tiled matmul kernels: shared-memory slices.
    assert ptx.count(".shared .align 4 .b8") >= 2


@pytest.mark.skipif(HAS_DRIVER, reason="this machine has a CUDA driver")
def test_no_driver_is_a_clear_error():
    torch.manual_seed(0)
    with pytest.raises(tessel.Error, match="no CUDA driver: libcuda.so.1"):
        tessel.compile(MLP().eval(), (torch.randn(4, 32),), target="cuda")


def test_bad_options():
    net = MLP().eval()
    x = (torch.randn(4, 32),)
    with pytest.raises(ValueError, match="target must be 'cpu' or 'cuda'"):
        tessel.compile(net, x, target="tpu")
    with pytest.raises(tessel.CompileError, match="unknown cuda_arch 'sm_99'"):
        tessel.compile(net, x, target="cuda", cuda_arch="sm_99")
    module = to_module(net, x)
    with pytest.raises(tessel.CompileError, match="emit='ptx' needs target='cuda'"):
        module._native.compile(os.devnull, emit="ptx")
    with pytest.raises(tessel.CompileError,
                       match="cuda_binary must be 'auto', 'ptx' or 'fatbin', got 'cubin'"):
        module._native.compile(os.devnull, target="cuda", cuda_binary="cubin")
    with pytest.raises(tessel.CompileError, match="cuda_binary needs target='cuda'"):
        module._native.compile(os.devnull, cuda_binary="ptx")


# The fatbin's magic number (little-endian 0xBA55ED50) and PTX's text.
FATBIN_MAGIC = bytes.fromhex("50ed55ba")


@pytest.mark.skipif(not os.path.exists(
    os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "ptxas")),
    reason="no CUDA toolkit (ptxas): artifacts hold PTX alone")
def test_cuda_binary_kinds(tmp_path):
    torch.manual_seed(0)
    net, x = MLP().eval(), (torch.randn(4, 32),)
    fat, ptx = tmp_path / "fat.so", tmp_path / "ptx.so"
    # (A compile lowers the module in place: one module per artifact.)
    to_module(net, x)._native.compile(str(fat), target="cuda")  # auto: toolkit here
    to_module(net, x)._native.compile(str(ptx), target="cuda", cuda_binary="ptx")
    fat_bytes, ptx_bytes = fat.read_bytes(), ptx.read_bytes()
    assert FATBIN_MAGIC in fat_bytes and b".target sm_80" not in fat_bytes
    assert FATBIN_MAGIC not in ptx_bytes and b".target sm_80" in ptx_bytes


def test_cpu_target_unchanged():
    torch.manual_seed(0)
    net = MLP().eval()
    x = torch.randn(4, 32)
    got = tessel.compile(net, (x,), target="cpu")(x.numpy())
    np.testing.assert_allclose(got, net(x).detach().numpy(), rtol=1e-5, atol=1e-5)


def test_f16_needs_the_gpu():
    with pytest.raises(tessel.CompileError, match="--precision=f16 needs --target=cuda"):
        tessel.compile(MLP().eval(), (torch.randn(4, 32),), precision="f16")


def test_cpu_module_reports_its_device():
    torch.manual_seed(0)
    net = MLP().eval()
    x = torch.randn(4, 32)
    m = tessel.compile(net, (x,))
    assert m.device == "cpu"
    stats = m.benchmark(3, x.numpy())
    # Kernel time and device name are reported for GPU artifacts only.
    assert "kernel_median_ms" not in stats and "device" not in stats
    assert stats["iterations"] == 3


def test_device_choice(tmp_path):
    """tessel.load(device=...): an artifact runs where it was compiled for;
    asking for another device says what it was compiled for, before the
    GPU (or its absence) matters."""
    torch.manual_seed(0)
    net = MLP().eval()
    x = torch.randn(4, 32)
    cpu, cuda = tmp_path / "cpu.so", tmp_path / "cuda.so"
    to_module(net, (x,))._native.compile(str(cpu))
    to_module(net, (x,))._native.compile(str(cuda), target="cuda",
                                         cuda_arch="sm_90")
    got = tessel.load(cpu, device="cpu")(x.numpy())
    np.testing.assert_allclose(got, net(x).detach().numpy(), rtol=1e-5, atol=1e-5)
    with pytest.raises(tessel.InvocationError,
                       match="compiled for the CPU .* cannot run on device "
                             "'cuda': recompile it with --target=cuda"):
        tessel.load(cpu, device="cuda:0")
    with pytest.raises(tessel.InvocationError,
                       match="compiled for cuda sm_90 .* cannot run on device "
                             "'cpu': recompile it with --target=cpu"):
        tessel.load(cuda, device="cpu")
    with pytest.raises(tessel.InvocationError,
                       match=r"unknown device 'gpu' \(expected cpu, cuda or cuda:N\)"):
        tessel.load(cpu, device="gpu")
    if not HAS_DRIVER:
        with pytest.raises(tessel.Error, match="no CUDA driver"):
            tessel.load(cuda, device="cuda:1")
