"""ONNX ScatterElements and ScatterND with a reduction (add, mul; max, min
from opset 18): duplicate indices accumulate in order, against numpy's
unbuffered ufunc.at; and the reductions an opset does not define, or on
bool, are CompileErrors naming the attribute."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import tessel

UFUNC = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}
ONNX_TYPE = {np.float32: TensorProto.FLOAT, np.int32: TensorProto.INT32,
             np.int64: TensorProto.INT64, np.bool_: TensorProto.BOOL}


def scatter_model(op, data, indices, updates, opset, **attrs):
    t = ONNX_TYPE[data.dtype.type]
    node = helper.make_node(op, ["d", "i", "u"], ["y"], name="sc0", **attrs)
    g = helper.make_graph([node], "sc",
                          [helper.make_tensor_value_info("d", t, data.shape),
                           helper.make_tensor_value_info("i", TensorProto.INT64, indices.shape),
                           helper.make_tensor_value_info("u", t, updates.shape)],
                          [helper.make_tensor_value_info("y", t, data.shape)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


@pytest.mark.parametrize("reduction", ["add", "mul", "max", "min"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_scatter_elements_reductions(reduction, dtype, axis):
    rng = np.random.default_rng(7)
    data = rng.integers(-5, 6, (4, 6)).astype(dtype)
    dim = data.shape[axis]
    # Many duplicates, negative indices too.
    indices = rng.integers(-dim, dim, (3, 6) if axis == 0 else (4, 5)).astype(np.int64)
    updates = rng.integers(-3, 4, indices.shape).astype(dtype)
    ref = data.copy()
    ax = axis % 2
    for pos in np.ndindex(*indices.shape):
        target = list(pos)
        target[ax] = indices[pos] % dim
        UFUNC[reduction].at(ref, tuple(target), updates[pos])
    f = tessel.compile(scatter_model("ScatterElements", data, indices, updates, 18,
                                     axis=axis, reduction=reduction).SerializeToString())
    np.testing.assert_array_equal(f(data, indices, updates), ref)


@pytest.mark.parametrize("reduction", ["add", "mul", "max", "min"])
def test_scatter_nd_reductions(reduction):
    rng = np.random.default_rng(11)
    data = rng.standard_normal((4, 3, 5)).astype(np.float32)
    # Rows (2 index components) and whole planes (1), with duplicates.
    for indices in (np.array([[[1, 2], [1, 2]], [[0, 0], [-1, 2]]], np.int64),
                    np.array([[0], [3], [0], [-4]], np.int64)):
        m = indices.shape[-1]
        updates = rng.standard_normal(indices.shape[:-1] + data.shape[m:]).astype(np.float32)
        ref = data.copy()
        for pos in np.ndindex(*indices.shape[:-1]):
            target = tuple(int(v) % data.shape[k] for k, v in enumerate(indices[pos]))
            UFUNC[reduction].at(ref, target, updates[pos])
        f = tessel.compile(scatter_model("ScatterND", data, indices, updates, 18,
                                         reduction=reduction).SerializeToString())
        np.testing.assert_allclose(f(data, indices, updates), ref, rtol=1e-6)


def test_scatter_reduction_errors():
    data = np.zeros((3,), np.float32)
    idx, upd = np.zeros((2,), np.int64), np.ones((2,), np.float32)
    for op, opset, reduction, message in [
            ("ScatterElements", 16, "max", "attribute 'reduction' = 'max' is not a "
                                           "reduction of opset 16"),
            ("ScatterElements", 18, "sum", "attribute 'reduction' = 'sum'"),
            ("ScatterND", 16, "min", "attribute 'reduction' = 'min' is not a "
                                     "reduction of opset 16")]:
        i = idx if op == "ScatterElements" else idx.reshape(2, 1)
        with pytest.raises(tessel.CompileError) as e:
            tessel.compile(scatter_model(op, data, i, upd, opset,
                                         reduction=reduction).SerializeToString())
        assert f"node 'sc0' ({op}, opset {opset})" in str(e.value), str(e.value)
        assert message in str(e.value), str(e.value)
    b = np.zeros((3,), np.bool_)
    with pytest.raises(tessel.CompileError, match="on a bool tensor is not supported"):
        tessel.compile(scatter_model("ScatterElements", b, idx, b[:2], 16,
                                     reduction="add").SerializeToString())
