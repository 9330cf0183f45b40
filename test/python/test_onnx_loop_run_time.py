"""ONNX Loop with scan outputs whose trip count (and initial condition)
arrive at run time: one artifact, several counts, the scan outputs as long
as the run (zero rows included), against numpy; and a loop-carried value
whose next value has sizes known only at run time, checked against the
sizes it entered with (a mismatch fails the call)."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import tessel

vi = helper.make_tensor_value_info


def counting_loop():
    """acc += i * step each iteration; scan outputs acc and i * 2."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Cast", ["i"], ["fi"], to=TensorProto.FLOAT),
         helper.make_node("Mul", ["fi", "step"], ["inc"]),
         helper.make_node("Add", ["acc_in", "inc"], ["acc_out"]),
         helper.make_node("Identity", ["acc_out"], ["scan_acc"]),
         helper.make_node("Add", ["i", "i"], ["scan_twice"])],
        "body",
        [vi("i", TensorProto.INT64, []), vi("cond_in", TensorProto.BOOL, []),
         vi("acc_in", TensorProto.FLOAT, [2])],
        [vi("cond_out", TensorProto.BOOL, []), vi("acc_out", TensorProto.FLOAT, [2]),
         vi("scan_acc", TensorProto.FLOAT, [2]), vi("scan_twice", TensorProto.INT64, [])])
    loop = helper.make_node("Loop", ["m", "cond", "acc"], ["acc_final", "accs", "twice"],
                            body=body)
    g = helper.make_graph([loop], "l", [vi("m", TensorProto.INT64, []),
                                        vi("cond", TensorProto.BOOL, []),
                                        vi("acc", TensorProto.FLOAT, [2]),
                                        vi("step", TensorProto.FLOAT, [2])],
                          [vi("acc_final", TensorProto.FLOAT, [2]),
                           vi("accs", TensorProto.FLOAT, [None, 2]),
                           vi("twice", TensorProto.INT64, [None])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 16)])


def reference(m, cond, acc, step):
    n = max(m, 0) if cond else 0
    accs, twice = [], []
    for i in range(n):
        acc = acc + np.float32(i) * step
        accs.append(acc)
        twice.append(2 * i)
    return acc, np.array(accs, np.float32).reshape(n, 2), np.array(twice, np.int64)


def test_run_time_trip_count_sizes_the_scan_outputs():
    f = tessel.compile(counting_loop().SerializeToString())
    acc0 = np.array([1.0, -2.0], np.float32)
    step = np.array([0.5, 3.0], np.float32)
    for m, cond in [(5, True), (1, True), (3, False), (0, True), (-4, True), (40, True)]:
        got = f(np.array(m, np.int64), np.array(cond), acc0, step)
        ref = reference(m, cond, acc0, step)
        for g, r in zip(got, ref):
            assert g.shape == r.shape, (m, cond)
            np.testing.assert_allclose(g, r, rtol=1e-6)


def carried_slice_loop():
    """y += x[i : i + w] each iteration (w a run-time input): the next y has
    a run-time size, which must stay 1."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Add", ["i", "w"], ["end"]),
         helper.make_node("Unsqueeze", ["i", "zero"], ["start1"]),
         helper.make_node("Unsqueeze", ["end", "zero"], ["end1"]),
         helper.make_node("Slice", ["x", "start1", "end1"], ["piece"]),
         helper.make_node("Add", ["y_in", "piece"], ["y_out"]),
         helper.make_node("Identity", ["y_out"], ["scan_y"])],
        "body",
        [vi("i", TensorProto.INT64, []), vi("cond_in", TensorProto.BOOL, []),
         vi("y_in", TensorProto.FLOAT, [1])],
        [vi("cond_out", TensorProto.BOOL, []), vi("y_out", TensorProto.FLOAT, [1]),
         vi("scan_y", TensorProto.FLOAT, [1])])
    zero = helper.make_node("Constant", [], ["zero"], value=helper.make_tensor(
        "zero", TensorProto.INT64, [1], [0]))
    loop = helper.make_node("Loop", ["m", "", "y"], ["y_final", "ys"], body=body)
    g = helper.make_graph([zero, loop], "l", [vi("m", TensorProto.INT64, []),
                                              vi("y", TensorProto.FLOAT, [1]),
                                              vi("x", TensorProto.FLOAT, [6]),
                                              vi("w", TensorProto.INT64, [])],
                          [vi("y_final", TensorProto.FLOAT, [1]),
                           vi("ys", TensorProto.FLOAT, [None, 1])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 16)])


def test_carried_value_with_run_time_sizes_is_checked():
    f = tessel.compile(carried_slice_loop().SerializeToString())
    x = np.arange(1, 7, dtype=np.float32)
    y0 = np.array([-2.0], np.float32)
    y, ys = f(np.array(4, np.int64), y0, x, np.array(1, np.int64))
    np.testing.assert_allclose(ys[:, 0], -2 + np.cumsum(x[:4]))
    np.testing.assert_allclose(y, [-2 + x[:4].sum()])
    # A slice of 2 elements would change the carried value's size.
    with pytest.raises(tessel.InvocationError, match="shape"):
        f(np.array(3, np.int64), y0, x, np.array(2, np.int64))
