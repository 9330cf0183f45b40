"""ONNX's unsigned integer types (uint16, uint32, uint64) through the
importer, the ABI ("u16", "u32", "u64") and the Python API, against numpy:
values past the signed range of the same width (2^15, 2^31, 2^63) in
arithmetic that wraps, comparisons, max/min, reductions, argmax, clip,
shifts and casts; and division and remainder, u64 included (unsigned
64-bit division, constants past 2^63 too)."""
import os
import subprocess

import numpy as np
import pytest
from onnx import TensorProto, helper

import tessel
from conftest import BIN

ONNX = {np.uint16: TensorProto.UINT16, np.uint32: TensorProto.UINT32,
        np.uint64: TensorProto.UINT64, np.float32: TensorProto.FLOAT,
        np.int64: TensorProto.INT64, np.bool_: TensorProto.BOOL}


def model(nodes, inputs, outputs, opset=18):
    vi = helper.make_tensor_value_info
    g = helper.make_graph(nodes, "u", [vi(n, ONNX[t], s) for n, t, s in inputs],
                          [vi(n, ONNX[t], s) for n, t, s in outputs])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def big_values(dtype, rng, shape):
    """Values spread over the whole unsigned range, the top half (negative
    if read signed) included, and the extremes."""
    info = np.iinfo(dtype)
    v = rng.integers(0, info.max, size=shape, dtype=dtype, endpoint=True)
    v.flat[0], v.flat[1] = info.max, 0
    v.flat[2] = dtype(info.max // 2 + 1)  # 2^(w-1)
    return v


@pytest.mark.parametrize("dtype", [np.uint16, np.uint32, np.uint64])
def test_unsigned_ops_match_numpy(dtype):
    rng = np.random.default_rng(np.dtype(dtype).itemsize)
    shape = [4, 5]
    a, b = big_values(dtype, rng, shape), big_values(dtype, rng, shape)[::-1].copy()
    lo, hi = np.array(dtype(1000)), np.array(np.iinfo(dtype).max // 3 * 2, dtype)
    shift = (np.arange(20, dtype=dtype) % np.dtype(dtype).itemsize * 8).reshape(shape)
    nodes = [helper.make_node("Add", ["a", "b"], ["add"]),
             helper.make_node("Sub", ["a", "b"], ["sub"]),
             helper.make_node("Mul", ["a", "b"], ["mul"]),
             helper.make_node("Max", ["a", "b"], ["max"]),
             helper.make_node("Min", ["a", "b"], ["min"]),
             helper.make_node("Greater", ["a", "b"], ["gt"]),
             helper.make_node("LessOrEqual", ["a", "b"], ["le"]),
             helper.make_node("ArgMax", ["a"], ["amax"], axis=1),
             helper.make_node("Clip", ["a", "lo", "hi"], ["clip"]),
             helper.make_node("BitShift", ["a", "s"], ["shr"], direction="RIGHT"),
             helper.make_node("BitShift", ["a", "s"], ["shl"], direction="LEFT"),
             helper.make_node("Cast", ["a"], ["f"], to=TensorProto.FLOAT)]
    outs = [(n, dtype, shape) for n in ("add", "sub", "mul", "max", "min")]
    outs += [("gt", np.bool_, shape), ("le", np.bool_, shape), ("amax", np.int64, [4, 1]),
             ("clip", dtype, shape), ("shr", dtype, shape), ("shl", dtype, shape),
             ("f", np.float32, shape)]
    m = model(nodes, [("a", dtype, shape), ("b", dtype, shape), ("lo", dtype, []),
                      ("hi", dtype, []), ("s", dtype, shape)], outs)
    f = tessel.compile(m.SerializeToString())
    got = f(a, b, lo, hi, shift)
    with np.errstate(over="ignore"):
        ref = [a + b, a - b, a * b, np.maximum(a, b), np.minimum(a, b), a > b, a <= b,
               np.argmax(a, axis=1).reshape(4, 1), np.clip(a, lo, hi), a >> shift,
               a << shift, a.astype(np.float32)]
    for name, g, r in zip([o[0] for o in outs], got, ref):
        assert g.dtype == r.dtype, name
        np.testing.assert_array_equal(g, r, err_msg=name)


@pytest.mark.parametrize("dtype", [np.uint16, np.uint32])
def test_unsigned_division_and_pow(dtype):
    rng = np.random.default_rng(3)
    a = big_values(dtype, rng, [6])
    b = rng.integers(1, np.iinfo(dtype).max, size=[6], dtype=dtype)
    e = np.array([0, 1, 2, 3, 1, 2], dtype)
    x = np.linspace(0.5, 2.0, 6).astype(np.float32)
    nodes = [helper.make_node("Div", ["a", "b"], ["q"]),
             helper.make_node("Mod", ["a", "b"], ["r"]),
             helper.make_node("Pow", ["x", "e"], ["p"])]
    f = tessel.compile(model(nodes, [("a", dtype, [6]), ("b", dtype, [6]),
                                     ("x", np.float32, [6]), ("e", dtype, [6])],
                             [("q", dtype, [6]), ("r", dtype, [6]),
                              ("p", np.float32, [6])]).SerializeToString())
    q, r, p = f(a, b, x, e)
    np.testing.assert_array_equal(q, a // b)
    np.testing.assert_array_equal(r, a % b)
    np.testing.assert_allclose(p, x ** e.astype(np.float32), rtol=1e-6)


def test_u64_division_and_remainder_match_numpy():
    # Values past 2^63 (negative if read signed), divided at run time and by
    # a constant divisor that is itself past 2^63.
    rng = np.random.default_rng(64)
    a = big_values(np.uint64, rng, [8])
    b = rng.integers(1, np.iinfo(np.uint64).max, size=[8], dtype=np.uint64)
    b[:3] = [1, 3, 2**63 + 5]
    c = np.array([2**63 + 7, 10], np.uint64)
    const = helper.make_node("Constant", [], ["c"], value=helper.make_tensor(
        "c", TensorProto.UINT64, [2], c.tolist()))
    nodes = [helper.make_node("Div", ["a", "b"], ["q"]),
             helper.make_node("Mod", ["a", "b"], ["r"]), const,
             helper.make_node("Div", ["c", "c2"], ["qc"]),
             helper.make_node("Mod", ["c", "c2"], ["rc"]),
             helper.make_node("Constant", [], ["c2"], value=helper.make_tensor(
                 "c2", TensorProto.UINT64, [2], [3, 2**63 + 1]))]
    nodes = [nodes[2], nodes[5], nodes[0], nodes[1], nodes[3], nodes[4]]
    m = model(nodes, [("a", np.uint64, [8]), ("b", np.uint64, [8])],
              [("q", np.uint64, [8]), ("r", np.uint64, [8]),
               ("qc", np.uint64, [2]), ("rc", np.uint64, [2])])
    f = tessel.compile(m.SerializeToString())
    q, r, qc, rc = f(a, b)
    c2 = np.array([3, 2**63 + 1], np.uint64)
    np.testing.assert_array_equal(q, a // b)
    np.testing.assert_array_equal(r, a % b)
    np.testing.assert_array_equal(qc, c // c2)
    np.testing.assert_array_equal(rc, c % c2)
    b[5] = 0
    with pytest.raises(tessel.InvocationError, match="division or remainder by zero"):
        f(a, b)


def test_tessel_run_reads_and_prints_unsigned(tmp_path):
    # .npy files of u2/u4/u8 and inline u64 text, through tessel-run.
    m = model([helper.make_node("Max", ["a", "b"], ["y"])],
              [("a", np.uint64, [3]), ("b", np.uint64, [3])], [("y", np.uint64, [3])])
    src, lib = tmp_path / "m.onnx", tmp_path / "m.so"
    src.write_bytes(m.SerializeToString())
    subprocess.run([os.path.join(BIN, "tessel-compile"), str(src), "-o", str(lib)],
                   check=True)
    a = np.array([2**64 - 1, 5, 2**63], np.uint64)
    np.save(tmp_path / "a.npy", a)
    out = subprocess.run([os.path.join(BIN, "tessel-run"), str(lib),
                          f"--input=@{tmp_path / 'a.npy'}",
                          "--input=3xu64=18446744073709551614 7 9223372036854775807",
                          "--output=-"], check=True, capture_output=True, text=True)
    assert "18446744073709551615" in out.stdout and "9223372036854775808" in out.stdout
    bad = subprocess.run([os.path.join(BIN, "tessel-run"), str(lib),
                          f"--input=@{tmp_path / 'a.npy'}", "--input=3xu64=-1 0 0"],
                         capture_output=True, text=True)
    assert bad.returncode != 0 and "non-negative" in bad.stderr
