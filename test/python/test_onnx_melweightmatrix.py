"""ONNX MelWeightMatrix against a numpy transcription of the ONNX
definition, with its operands as constants (a static matrix) or graph
inputs read at run time (one artifact, several sizes), float and double
outputs; and a bad operand rejected."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import tessel


def reference(num_mel_bins, dft_length, sample_rate, lower, upper):
    spectrogram_bins = dft_length // 2 + 1
    points = np.arange(0, num_mel_bins + 2)
    low_mel = 2595 * np.log10(1 + lower / 700)
    high_mel = 2595 * np.log10(1 + upper / 700)
    step = (high_mel - low_mel) / points.shape[0]
    hz = 700 * (np.power(10, (points * step + low_mel) / 2595) - 1)
    bins = (((dft_length + 1) * hz) // sample_rate).astype(int)
    out = np.zeros((spectrogram_bins, num_mel_bins))
    for i in range(num_mel_bins):
        lo, mid, hi = bins[i], bins[i + 1], bins[i + 2]
        if mid == lo:
            out[mid, i] = 1
        else:
            for j in range(lo, mid + 1):
                out[j, i] = (j - lo) / (mid - lo)
        if hi > mid:
            for j in range(mid, hi):
                out[j, i] = (hi - j) / (hi - mid)
    return out


ARGS = [(8, 16, 8192, 0.0, 4096.0), (20, 512, 16000, 30.0, 7600.0),
        (5, 64, 22050, 300.0, 3000.0)]
NAMES = ["num_mel_bins", "dft_length", "sample_rate", "lower_edge_hertz",
         "upper_edge_hertz"]


def model(args, constants, dtype=TensorProto.FLOAT):
    types = [TensorProto.INT64] * 3 + [TensorProto.FLOAT] * 2
    vals = [np.array(a, np.int64 if t == TensorProto.INT64 else np.float32)
            for a, t in zip(args, types)]
    node = helper.make_node("MelWeightMatrix", NAMES, ["y"], output_datatype=dtype)
    vi = helper.make_tensor_value_info
    if constants:
        inputs, inits = [], [numpy_helper.from_array(v, n) for v, n in zip(vals, NAMES)]
        shape = [args[1] // 2 + 1, args[0]]
    else:
        inputs, inits = [vi(n, t, []) for n, t in zip(NAMES, types)], []
        shape = [None, None]
    g = helper.make_graph([node], "m", inputs, [vi("y", dtype, shape)], initializer=inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), vals


@pytest.mark.parametrize("args", ARGS)
def test_constant_operands(args):
    m, _ = model(args, True)
    y = tessel.compile(m.SerializeToString())()
    np.testing.assert_allclose(y, reference(*args), rtol=1e-6, atol=1e-7)


def test_run_time_operands_one_artifact():
    m, _ = model(ARGS[0], False, TensorProto.DOUBLE)
    f = tessel.compile(m.SerializeToString())
    for args in ARGS:
        _, vals = model(args, False)
        y = f(*vals)
        assert y.dtype == np.float64 and y.shape == (args[1] // 2 + 1, args[0])
        np.testing.assert_allclose(y, reference(*[v.item() for v in vals]), rtol=1e-12)


def test_bad_size_fails():
    m, _ = model(ARGS[0], False)
    f = tessel.compile(m.SerializeToString())
    _, vals = model(ARGS[0], False)
    vals[0] = np.array(0, np.int64)
    with pytest.raises(tessel.InvocationError):
        f(*vals)
    m, _ = model((0, 16, 8192, 0.0, 4096.0), True)
    with pytest.raises(tessel.CompileError, match="num_mel_bins 0 is outside"):
        tessel.compile(m.SerializeToString())
