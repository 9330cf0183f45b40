"""ONNX models with If for the importer's control-flow tests (generated at
test time so no binary is committed).

  make_control_flow_model.py KIND OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def vi(name, shape, t=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, t, shape)


def branch(name, nodes, outputs, inits=()):
    return helper.make_graph(nodes, name, [], outputs, list(inits))


def if_node(cond, out, then_g, else_g, name):
    return helper.make_node("If", [cond], [out], name=name,
                            then_branch=then_g, else_branch=else_g)


def build(kind):
    x, c, c2 = vi("x", [2, 3]), vi("c", [1], TensorProto.BOOL), \
        vi("c2", [], TensorProto.BOOL)
    if kind == "if-nested":
        # then: x * w (w a branch initializer); else: If(c2) of x + x and -x.
        w = numpy_helper.from_array(
            np.array([[1, 2, 3], [4, 5, 6]], np.float32), "w")
        then_g = branch("then", [helper.make_node("Mul", ["x", "w"], ["t"])],
                        [vi("t", [2, 3])], [w])
        inner = if_node(
            "c2", "e",
            branch("inner_then", [helper.make_node("Add", ["x", "x"], ["it"])],
                   [vi("it", [2, 3])]),
            branch("inner_else", [helper.make_node("Neg", ["x"], ["ie"])],
                   [vi("ie", [2, 3])]),
            "inner_if")
        else_g = branch("else", [inner], [vi("e", [2, 3])])
        nodes = [if_node("c", "y", then_g, else_g, "outer_if"),
                 helper.make_node("Relu", ["y"], ["z"])]
        return nodes, [x, c, c2], [vi("z", [2, 3])], []
    if kind == "if-constant":
        # The condition is an initializer: only the else branch is imported.
        cst = numpy_helper.from_array(np.array(False), "k")
        then_g = branch("then", [helper.make_node("Neg", ["x"], ["t"])],
                        [vi("t", [2, 3])])
        else_g = branch("else", [helper.make_node("Abs", ["x"], ["e"])],
                        [vi("e", [2, 3])])
        return [if_node("k", "y", then_g, else_g, "const_if")], [x], \
            [vi("y", [2, 3])], [cst]
    if kind == "if-shapes-differ":
        # then: [3] (a max over rows), else: [2] (over columns).
        then_g = branch("then", [helper.make_node("ReduceMax", ["x"], ["t"],
                                                  axes=[0], keepdims=0)],
                        [vi("t", [3])])
        else_g = branch("else", [helper.make_node("ReduceMax", ["x"], ["e"],
                                                  axes=[1], keepdims=0)],
                        [vi("e", [2])])
        return [if_node("c", "y", then_g, else_g, "ragged_if")], [x, c], \
            [vi("y", ["n"])], []
    if kind == "if-float-cond":
        then_g = branch("then", [helper.make_node("Neg", ["x"], ["t"])],
                        [vi("t", [2, 3])])
        else_g = branch("else", [helper.make_node("Abs", ["x"], ["e"])],
                        [vi("e", [2, 3])])
        f = vi("f", [1])
        m = [if_node("f", "y", then_g, else_g, "float_if")]
        return m, [x, f], [vi("y", [2, 3])], []
    raise SystemExit("unknown kind " + kind)


def main():
    kind, out = sys.argv[1], sys.argv[2]
    nodes, inputs, outputs, inits = build(kind)
    g = helper.make_graph(nodes, "g", inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(m, out)


if __name__ == "__main__":
    main()
