"""Writes small ONNX models for the importer's error tests (generated at test
time so no binary is committed).

  make_model.py KIND OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model(nodes, inputs, outputs, inits=(), opset=13):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def vi(name, shape, t=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, t, shape)


def build(kind):
    if kind == "add":
        return model([helper.make_node("Add", ["x", "y"], ["z"], name="add0")],
                     [vi("x", [2, 3]), vi("y", [2, 3])], [vi("z", [2, 3])])
    if kind == "qdq-per-tensor":
        # QuantizeLinear -> DequantizeLinear with constant uint8 parameters.
        inits = [numpy_helper.from_array(np.array(0.5, np.float32), "s"),
                 numpy_helper.from_array(np.array(10, np.uint8), "z")]
        return model([helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
                      helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"])],
                     [vi("x", [6])], [vi("q", [6], TensorProto.UINT8), vi("y", [6])],
                     inits)
    if kind == "dq-per-axis-matmul":
        # int8 weights dequantized per output column, then a MatMul.
        w = np.array([[1, -2], [3, 4], [-128, 127]], np.int8)
        inits = [numpy_helper.from_array(w, "w"),
                 numpy_helper.from_array(np.array([0.5, 0.25], np.float32), "s"),
                 numpy_helper.from_array(np.array([0, -1], np.int8), "z")]
        return model([helper.make_node("DequantizeLinear", ["w", "s", "z"], ["wf"], axis=1),
                      helper.make_node("MatMul", ["x", "wf"], ["y"])],
                     [vi("x", [1, 3])], [vi("y", [1, 2])], inits)
    if kind == "qdq-dynamic-scale":
        # The scale is a graph input: no quantized type, expanded arithmetic.
        return model([helper.make_node("QuantizeLinear", ["x", "s"], ["q"]),
                      helper.make_node("DequantizeLinear", ["q", "s"], ["y"])],
                     [vi("x", [3]), vi("s", [])], [vi("y", [3])])
    if kind == "future-opset":
        return model([helper.make_node("Add", ["x", "x"], ["y"])],
                     [vi("x", [6])], [vi("y", [6])], opset=9999)
    if kind == "symbolic":
        return model([helper.make_node("Relu", ["x"], ["y"], name="relu0")],
                     [vi("x", ["N", 4])], [vi("y", ["N", 4])])
    if kind == "symbolic-conv":
        # Conv takes a run-time batch, not run-time image sizes yet: the
        # error suggests --shape.
        w = helper.make_tensor("w", TensorProto.FLOAT, [2, 3, 1, 1], [0.5] * 6)
        return model([helper.make_node("Conv", ["x", "w"], ["y"], name="conv0")],
                     [vi("x", ["N", 3, "H", 4])], [vi("y", ["N", 2, "H", 4])],
                     inits=[w])
    if kind == "unsupported-op":
        # MaxRoiPool (Fast R-CNN's pooling; RoiAlign is supported) is not.
        return model([helper.make_node("MaxRoiPool", ["x", "rois"], ["y"], name="roi0",
                                       pooled_shape=[2, 2])],
                     [vi("x", [1, 3, 8, 8]), vi("rois", [2, 5])],
                     [vi("y", [2, 3, 2, 2])], opset=15)
    if kind == "unsupported-attr":
        # Cast to STRING: an attribute value Tessel cannot honour.
        return model([helper.make_node("Cast", ["x"], ["y"], name="cast0",
                                       to=TensorProto.STRING)],
                     [vi("x", [2])], [vi("y", [2], TensorProto.STRING)])
    if kind == "nonzero-scalar":
        # ONNX's shape inference types the result 0 x n, its reference 1 x n.
        return model([helper.make_node("NonZero", ["x"], ["y"], name="nz0")],
                     [vi("x", [])], [vi("y", [0, "n"], TensorProto.INT64)])
    if kind == "custom-domain":
        m = model([helper.make_node("Foo", ["x"], ["y"], name="foo0",
                                    domain="com.example")],
                  [vi("x", [2])], [vi("y", [2])])
        m.opset_import.append(helper.make_opsetid("com.example", 1))
        return m
    if kind == "reshape-input":
        # The target shape is a graph input, as in ONNX's backend tests.
        return model([helper.make_node("Reshape", ["x", "shape"], ["y"],
                                       name="reshape0")],
                     [vi("x", [2, 3]), vi("shape", [2], TensorProto.INT64)],
                     [vi("y", [3, 2])])
    if kind == "external-data":
        w = numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3), "w")
        m = model([helper.make_node("Add", ["x", "w"], ["z"], name="add0")],
                  [vi("x", [2, 3])], [vi("z", [2, 3])], inits=[w])
        return m
    raise SystemExit(f"unknown kind {kind}")


def main():
    kind, out = sys.argv[1], sys.argv[2]
    m = build(kind)
    if kind == "external-data":
        onnx.save_model(m, out, save_as_external_data=True,
                        all_tensors_to_one_file=True, location="weights.bin",
                        size_threshold=0)
    else:
        onnx.save_model(m, out)


if __name__ == "__main__":
    main()
