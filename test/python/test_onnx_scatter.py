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


def run_time_sized(op, t, data_shape, index_shape, with_updates, **attrs):
    """`op` on inputs whose sizes are names (known at run time)."""
    names = ["d", "i", "u"] if with_updates else ["d", "i"]
    node = helper.make_node(op, names, ["y"], name="op0", **attrs)
    inputs = [helper.make_tensor_value_info("d", t, data_shape),
              helper.make_tensor_value_info("i", TensorProto.INT64, index_shape)]
    if with_updates:
        inputs.append(helper.make_tensor_value_info("u", t, index_shape))
    out_shape = (data_shape if op == "ScatterElements"
                  else index_shape + data_shape[1:])
    g = helper.make_graph([node], "rt", inputs,
                          [helper.make_tensor_value_info("y", t, out_shape)])
    return tessel.compile(helper.make_model(
        g, opset_imports=[helper.make_opsetid("", 18)]).SerializeToString())


def test_run_time_sizes_stay_in_bounds():
    """With sizes known only at run time, positions the input does not
    have fail the call and touch nothing: indices wider than the data
    along another dim, an empty axis (the sanitizer build would see an
    access out of bounds)."""
    f = run_time_sized("ScatterElements", TensorProto.FLOAT, ["a", "b"],
                       ["c", "e"], True, axis=0, reduction="add")
    rng = np.random.default_rng(3)
    data = rng.standard_normal((4, 6)).astype(np.float32)
    indices = rng.integers(-4, 4, (3, 6)).astype(np.int64)
    updates = rng.standard_normal((3, 6)).astype(np.float32)
    ref = data.copy()
    for pos in np.ndindex(*indices.shape):
        np.add.at(ref, (indices[pos] % 4, pos[1]), updates[pos])
    np.testing.assert_allclose(f(data, indices, updates), ref, rtol=1e-6)
    wide = np.zeros((2, 8), np.int64)
    with pytest.raises(tessel.InvocationError, match="out of range"):
        f(data, wide, np.ones((2, 8), np.float32))
    with pytest.raises(tessel.InvocationError, match="out of range"):
        f(np.zeros((0, 6), np.float32), np.zeros((1, 6), np.int64),
          np.ones((1, 6), np.float32))
    # The artifact stays usable.
    np.testing.assert_allclose(f(data, indices, updates), ref, rtol=1e-6)

    g = run_time_sized("Gather", TensorProto.FLOAT, ["a", 8], ["n"], False, axis=0)
    x = rng.standard_normal((5, 8)).astype(np.float32)
    np.testing.assert_array_equal(g(x, np.array([4, -5, 2], np.int64)), x[[4, 0, 2]])
    with pytest.raises(tessel.InvocationError, match="out of range"):
        g(np.zeros((0, 8), np.float32), np.array([0], np.int64))


def test_indices_wider_than_data_are_compile_errors():
    """Static sizes: indices larger than the data along a dim other than
    the axis would address other rows' elements; the node is rejected."""
    data = np.zeros((4, 6), np.float32)
    wide = np.zeros((2, 8), np.int64)
    model = scatter_model("ScatterElements", data, wide, np.ones((2, 8), np.float32),
                          18, axis=0)
    with pytest.raises(tessel.CompileError,
                       match="sc0.*indices have 8 along dim 1, more than the data's 6"):
        tessel.compile(model.SerializeToString())
    node = helper.make_node("GatherElements", ["d", "i"], ["y"], name="ge0", axis=0)
    g = helper.make_graph([node], "ge",
                          [helper.make_tensor_value_info("d", TensorProto.FLOAT, [4, 6]),
                           helper.make_tensor_value_info("i", TensorProto.INT64, [3, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 8])])
    with pytest.raises(tessel.CompileError,
                       match="ge0.*indices have 8 along dim 1, more than the data's 6"):
        tessel.compile(helper.make_model(
            g, opset_imports=[helper.make_opsetid("", 18)]).SerializeToString())
