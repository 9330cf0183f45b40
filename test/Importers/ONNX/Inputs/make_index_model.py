"""One-node ONNX models whose indices (or axis) are graph inputs, for the
run-time index checks (generated at test time so no binary is committed).

  make_index_model.py KIND OUT.onnx
"""
import sys

import onnx
from onnx import TensorProto, helper


def vi(name, shape, t=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, t, shape)


I64 = TensorProto.INT64


def build(kind):
    """(node, inputs, output)."""
    if kind == "gather":
        return (helper.make_node("Gather", ["x", "i"], ["y"], axis=0),
                [vi("x", [4, 3]), vi("i", [2], I64)], vi("y", [2, 3]))
    if kind == "gather-elements":
        return (helper.make_node("GatherElements", ["x", "i"], ["y"], axis=1),
                [vi("x", [2, 3]), vi("i", [2, 2], I64)], vi("y", [2, 2]))
    if kind == "gather-nd":
        return (helper.make_node("GatherND", ["x", "i"], ["y"]),
                [vi("x", [2, 3]), vi("i", [2, 2], I64)], vi("y", [2]))
    if kind == "scatter-elements":
        return (helper.make_node("ScatterElements", ["x", "i", "u"], ["y"],
                                 axis=1),
                [vi("x", [2, 3]), vi("i", [2, 1], I64), vi("u", [2, 1])],
                vi("y", [2, 3]))
    if kind == "scatter-nd":
        return (helper.make_node("ScatterND", ["x", "i", "u"], ["y"]),
                [vi("x", [2, 3]), vi("i", [1, 2], I64), vi("u", [1])],
                vi("y", [2, 3]))
    if kind == "cumsum":
        # The axis is an input: any of [-2, 2) at run time.
        return (helper.make_node("CumSum", ["x", "axis"], ["y"]),
                [vi("x", [2, 3]), vi("axis", [], I64)], vi("y", [2, 3]))
    raise SystemExit("unknown kind " + kind)


def main():
    kind, out = sys.argv[1], sys.argv[2]
    node, inputs, output = build(kind)
    g = helper.make_graph([node], "g", inputs, [output])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 16)]),
              out)


if __name__ == "__main__":
    main()
