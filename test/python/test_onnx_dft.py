"""ONNX DFT (lib/Importers/ONNX/Ops/Signal.cpp) against numpy.fft: real and
complex signals, inverse, one-sided, dft_length (constant and read at run
time: padding and truncation), on a middle axis."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import tessel

F, I64 = TensorProto.FLOAT, TensorProto.INT64
RNG = np.random.default_rng(3)


def compile_dft(in_shape, out_shape, extra_inputs=(), **attrs):
    inputs = [helper.make_tensor_value_info("x", F, in_shape)]
    names = ["x"]
    for name, t, s in extra_inputs:
        inputs.append(helper.make_tensor_value_info(name, t, s))
        names.append(name)
    g = helper.make_graph([helper.make_node("DFT", names, ["y"], **attrs)], "dft", inputs,
                          [helper.make_tensor_value_info("y", F, out_shape)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    return tessel.compile(m.SerializeToString())


def as_pairs(z):
    return np.stack([z.real, z.imag], axis=-1).astype(np.float32)


@pytest.mark.parametrize("axis", [1, 2])
def test_forward_of_real_and_complex_signals(axis):
    real = RNG.standard_normal((2, 6, 5, 1)).astype(np.float32)
    f = compile_dft([2, 6, 5, 1], [2, 6, 5, 2], axis=axis)
    np.testing.assert_allclose(f(real), as_pairs(np.fft.fft(real[..., 0], axis=axis)),
                               rtol=1e-4, atol=1e-4)
    z = RNG.standard_normal((2, 6, 5)) + 1j * RNG.standard_normal((2, 6, 5))
    g = compile_dft([2, 6, 5, 2], [2, 6, 5, 2], axis=axis)
    np.testing.assert_allclose(g(as_pairs(z)), as_pairs(np.fft.fft(z, axis=axis)),
                               rtol=1e-4, atol=1e-4)
    h = compile_dft([2, 6, 5, 2], [2, 6, 5, 2], axis=axis, inverse=1)
    np.testing.assert_allclose(h(as_pairs(z)), as_pairs(np.fft.ifft(z, axis=axis)),
                               rtol=1e-4, atol=1e-5)


def test_onesided_and_lengths():
    x = RNG.standard_normal((1, 8, 1)).astype(np.float32)
    f = compile_dft([1, 8, 1], [1, 5, 2], onesided=1)
    np.testing.assert_allclose(f(x), as_pairs(np.fft.rfft(x[..., 0], axis=1)),
                               rtol=1e-4, atol=1e-4)
    # dft_length read at run time: the output's length follows it.
    g = compile_dft([1, 8, 1], [1, "n", 2], extra_inputs=[("n", I64, [])])
    for n in (3, 8, 12):
        np.testing.assert_allclose(g(x, np.int64(n)), as_pairs(np.fft.fft(x[..., 0], n=n, axis=1)),
                                   rtol=1e-4, atol=1e-4)
    with pytest.raises(tessel.InvocationError, match="returned -3"):
        g(x, np.int64(0))


def test_bad_attributes_are_errors():
    with pytest.raises(tessel.CompileError, match="axis"):
        compile_dft([1, 8, 1], [1, 8, 2], axis=2)
    with pytest.raises(tessel.CompileError, match="onesided"):
        compile_dft([1, 8, 2], [1, 5, 2], onesided=1, inverse=1)


@pytest.mark.parametrize("with_window", [False, True])
def test_stft_matches_torch(with_window):
    torch = pytest.importorskip("torch")
    names = ["x", "step", "window" if with_window else "", "" if with_window else "len"]
    inputs = [helper.make_tensor_value_info("x", F, [2, 40, 1]),
              helper.make_tensor_value_info("step", I64, [])]
    if with_window:
        inputs.append(helper.make_tensor_value_info("window", F, [8]))
    else:
        inputs.append(helper.make_tensor_value_info("len", I64, []))
    g = helper.make_graph([helper.make_node("STFT", names, ["y"])], "stft", inputs,
                          [helper.make_tensor_value_info("y", F, [2, "f", "k", 2])])
    f = tessel.compile(helper.make_model(
        g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString())
    x = RNG.standard_normal((2, 40, 1)).astype(np.float32)
    for step in (3, 8):
        length = 8 if with_window else 10
        window = (np.hanning(length).astype(np.float32) if with_window
                  else np.ones(length, np.float32))
        want = torch.stft(torch.from_numpy(x[..., 0]), n_fft=length, hop_length=step,
                          win_length=length, window=torch.from_numpy(window), center=False,
                          onesided=True, return_complex=True).numpy().transpose(0, 2, 1)
        args = [x, np.int64(step), window if with_window else np.int64(length)]
        np.testing.assert_allclose(f(*args), as_pairs(want), rtol=1e-4, atol=1e-4)
