"""Writes small ONNX models with bad or edge-case attribute/constant values
(found by fuzzing) for robustness.test: each must give a clear error, or a
correct result, never a crash.

  make_bad_model.py KIND OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def vi(name, shape, t=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, t, shape)


def model(nodes, inputs, outputs, inits=(), opset=13):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def ints(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def build(kind):
    if kind == "tile-huge":
        return model([helper.make_node("Tile", ["x", "r"], ["y"], name="Tile_0")],
                     [vi("x", [2, 2])], [vi("y", [2 ** 41, 2 ** 41])],
                     [numpy_helper.from_array(np.array([2 ** 40, 2 ** 40], np.int64), "r")])
    if kind == "constantofshape-4gib":
        # A 1024^3 splat feeding a reduction: filled at run time, never
        # 4 GiB of constant data in the artifact.
        value = numpy_helper.from_array(np.array([1.0], np.float32))
        return model([helper.make_node("ConstantOfShape", ["s"], ["c"], value=value),
                      helper.make_node("ReduceSum", ["c"], ["r"], keepdims=0),
                      helper.make_node("Add", ["x", "r"], ["y"])],
                     [vi("x", [1])], [vi("y", [1])],
                     [numpy_helper.from_array(np.array([1024] * 3, np.int64), "s")])
    if kind == "constantofshape-negative":
        return model([helper.make_node("ConstantOfShape", ["s"], ["y"])],
                     [], [vi("y", ["n"])], [ints("s", [-100])])
    if kind == "split-negative":
        return model([helper.make_node("Split", ["x", "s"], ["a", "b"])],
                     [vi("x", [4])], [vi("a", ["n"]), vi("b", ["m"])],
                     [ints("s", [-1, 5])])
    if kind == "depthtospace-zero":
        return model([helper.make_node("DepthToSpace", ["x"], ["y"], blocksize=0)],
                     [vi("x", [1, 4, 2, 2])], [vi("y", ["a", "b", "c", "d"])])
    if kind == "onehot-negative":
        return model([helper.make_node("OneHot", ["i", "d", "v"], ["y"])],
                     [vi("i", [3], TensorProto.INT64)], [vi("y", ["a", "b"])],
                     [ints("d", [-3]),
                      numpy_helper.from_array(np.array([0, 1], np.float32), "v")],
                     opset=11)
    if kind == "range-zero-delta":
        f = lambda n, v: numpy_helper.from_array(np.array(v, np.float32), n)
        return model([helper.make_node("Range", ["a", "b", "c"], ["y"])],
                     [], [vi("y", ["n"])], [f("a", 0), f("b", 1), f("c", 0)])
    if kind == "avgpool-zero-stride":
        # Crashes ONNX 1.12's own shape inference (division by zero).
        return model([helper.make_node("AveragePool", ["x"], ["y"],
                                       kernel_shape=[2, 2], strides=[1, 0])],
                     [vi("x", [1, 1, 4, 4])], [vi("y", ["a", "b", "c", "d"])], opset=17)
    if kind == "clip-min-above-max":
        f = lambda n, v: numpy_helper.from_array(np.array(v, np.float32), n)
        return model([helper.make_node("Clip", ["x", "lo", "hi"], ["y"])],
                     [vi("x", [3])], [vi("y", [3])],
                     [f("lo", 0.5), f("hi", -0.5)])
    if kind == "cumsum-exclusive-length-1":
        return model([helper.make_node("CumSum", ["x", "a"], ["y"], exclusive=1)],
                     [vi("x", [3, 1])], [vi("y", [3, 1])], [ints("a", 1)])
    if kind == "constant-division-by-zero":
        return model([helper.make_node("Div", ["a", "b"], ["y"])], [],
                     [vi("y", [2], TensorProto.INT64)],
                     [ints("a", [4, 6]), ints("b", [2, 0])])
    if kind == "bad-external-offset":
        t = numpy_helper.from_array(np.zeros(2, np.float32), "w")
        t.data_location = TensorProto.EXTERNAL
        for k, v in (("location", "w.bin"), ("offset", "abc")):
            e = t.external_data.add()
            e.key, e.value = k, v
        t.ClearField("raw_data")
        return model([helper.make_node("Add", ["x", "w"], ["y"])],
                     [vi("x", [2])], [vi("y", [2])], [t])
    raise SystemExit(f"unknown kind {kind}")


if __name__ == "__main__":
    onnx.save_model(build(sys.argv[1]), sys.argv[2])
