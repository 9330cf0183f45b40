"""ONNX models over a symbolic batch whose other sizes the importer must
keep static (generated at test time so no binary is committed).

  make_run_time_model.py KIND OUT.onnx

  matmul   x[batch, t, 16] . w[16, 8] (a constant weight)
  shuffle  x[batch, 8, 3]: view(b, 2, c // 2, 3) with c // 2 computed from
           Shape(x), then view(b, -1, 3) (a channel shuffle's two reshapes)
  other    x[b, 8, 3] reshaped to (Shape(y)[0], 2, 4, 3), y[c, 2]: the size
           comes from another input, so only the run can check it
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

I64 = TensorProto.INT64


def const(name, values):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(
        np.array(values, dtype=np.int64), name))


def build(kind):
    if kind == "matmul":
        w = numpy_helper.from_array(
            np.arange(128, dtype=np.float32).reshape(16, 8) / 128, "w")
        nodes = [helper.make_node("MatMul", ["x", "w"], ["y"])]
        return (nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "t", 16])],
                helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "t", 8]), [w])
    if kind == "shuffle":
        nodes = [
            helper.make_node("Shape", ["x"], ["s"]),
            const("i0", 0), const("i1", 1), const("two", 2), const("three", [3]),
            const("minus1", [-1]), const("two1", [2]), const("ax0", [0]),
            helper.make_node("Gather", ["s", "i0"], ["b"], axis=0),
            helper.make_node("Gather", ["s", "i1"], ["c"], axis=0),
            helper.make_node("Div", ["c", "two"], ["half"]),
            helper.make_node("Unsqueeze", ["b", "ax0"], ["b1"]),
            helper.make_node("Unsqueeze", ["half", "ax0"], ["half1"]),
            helper.make_node("Concat", ["b1", "two1", "half1", "three"], ["shape1"], axis=0),
            helper.make_node("Reshape", ["x", "shape1"], ["r1"]),
            helper.make_node("Transpose", ["r1"], ["t1"], perm=[0, 2, 1, 3]),
            helper.make_node("Concat", ["b1", "minus1", "three"], ["shape2"], axis=0),
            helper.make_node("Reshape", ["t1", "shape2"], ["y"]),
        ]
        return (nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 8, 3])],
                helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 8, 3]), [])
    if kind == "other":
        nodes = [
            helper.make_node("Shape", ["y"], ["s"]),
            const("i0", [0]), const("rest", [2, 4, 3]),
            helper.make_node("Gather", ["s", "i0"], ["c"], axis=0),
            helper.make_node("Concat", ["c", "rest"], ["shape"], axis=0),
            helper.make_node("Reshape", ["x", "shape"], ["z"]),
        ]
        return (nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["b", 8, 3]),
                        helper.make_tensor_value_info("y", TensorProto.FLOAT, ["c", 2])],
                helper.make_tensor_value_info("z", TensorProto.FLOAT, ["c", 2, 4, 3]), [])
    raise SystemExit(f"unknown kind {kind}")


def main():
    nodes, inputs, output, inits = build(sys.argv[1])
    graph = helper.make_graph(nodes, sys.argv[1], inputs, [output], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, sys.argv[2])


if __name__ == "__main__":
    main()
